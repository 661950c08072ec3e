"""The tree kernels compiled on their own, for the first launch's warm-up (the impulse
and lcp families' warm_up_kernels): another process fills numba's cache with them while
the family's step compiles the rest."""
import numpy as np
from ...jit import kernel

from .block import solve_joint_rows
from .plan import build_tree_plan, make_tree, static_bodies
from .solve import articulated_solve


@kernel(cache=True)
def _positions_solve(tree, joint_body, rate, body_z, vel, omega, body_z2):
    articulated_solve(tree, joint_body, rate, body_z, vel, omega, False, 0.0, body_z2, vel, omega, 0.0)


def compile_tree_kernels():
    """The equality rows of a 3-link chain solved by the articulated form
    (solve_joint_rows: select_rows, articulated_factor, articulated_solve,
    articulated_lambda with the argument types the impulse and lcp steps pass), then
    articulated_solve as the split-impulse solve calls it, with the constant
    `two = False` (a specialization of its own). The rows are made up (random, full
    rank): writing them would compile the joint-row kernels, which the family's own step
    compiles meanwhile anyway."""
    from ...builders import make_chain
    from ...world import World
    world = World()
    make_chain(world, links=3)
    m, nb = world.model, world.model.bodies.count
    row_J = np.random.default_rng(0).normal(size=(m.rows.count, 12))
    body_I = np.zeros((nb, 9))
    body_I[:, [0, 4, 8]] = m.bodies.inertia
    body_I[0] = 0.0
    static = static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia)
    solve_joint_rows(m.joints.type, m.joints.body, m.joints.row_start, row_J, world.state.bodies.pos,
                     m.bodies.inv_mass, body_I, static, np.ones(m.rows.count))
    tree = make_tree(build_tree_plan(m.joints.body, m.joints.type, static), m.rows.count)
    vel, omega = np.zeros((nb, 3)), np.zeros((nb, 3))
    _positions_solve(tree, np.ascontiguousarray(m.joints.body), 0.0, tree.body_z, vel, omega, tree.body_z2)
