"""Direct O(N) solve of tree-structured joints (solvers/tree, Baraff SIGGRAPH 96) and the
impulse solver's direct path: agreement with dense solves, chain physics, loops."""
import math

import numpy as np
import pytest

from physics import Box, World
from physics.solvers import impulse
from physics.bench import max_gap
from physics.builders import make_chain
from physics.joint_types import BY_CODE, FIXED, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from physics.reference import inverse_mass_matrix, jacobian_matrix, world_inertia
from physics.solvers.tree import build_tree_plan, solve_joint_rows, solve_tree_system, static_bodies

from energy_helpers import kept_energy

TYPES = ("revolute", "spherical", "universal", "prismatic", "fixed")


def _dense(joint_body, joint_m, joint_row_start, row_J, body_inv_mass, body_I):
    """M⁻¹ and J (equality rows only) as dense matrices, with the list of those rows."""
    rows = [joint_row_start[k] + i for k in range(len(joint_m)) for i in range(joint_m[k])]
    row_body = np.zeros((len(row_J), 2), np.int64)
    for k in range(len(joint_m)):
        row_body[joint_row_start[k]:joint_row_start[k] + joint_m[k]] = joint_body[k]
    return (inverse_mass_matrix(body_inv_mass, body_I),
            jacobian_matrix(row_J, row_body, rows, len(body_inv_mass)), rows)


def _check_against_dense(lam, dv, minv, J, rows, b):
    A = J @ minv @ J.T
    ref = np.linalg.solve(A, b[rows])
    assert np.max(np.abs(lam[rows] - ref)) <= 1e-9 * np.max(np.abs(ref))
    ref_dv = minv @ J.T @ ref
    assert np.max(np.abs(dv.ravel() - ref_dv)) <= 1e-9 * np.max(np.abs(ref_dv))


# ---------------------------------------------------------------------------- Baraff's form, any rows
def _random_rows_case(rng, joint_body, types, nb, static):
    joint_body = np.array(joint_body)
    types = np.array(types)
    counts = [BY_CODE[t].n_rows for t in types]
    joint_row_start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    row_J = rng.normal(size=(sum(counts), 12))
    body_inv_mass = np.where(static, 0.0, 1.0 / rng.uniform(0.1, 3.0, nb))
    body_I = np.zeros((nb, 9))
    for i in range(nb):
        g = rng.normal(size=(3, 3))
        body_I[i] = (g @ g.T + 3.0 * np.eye(3)).ravel()
    b = rng.normal(size=sum(counts))
    lam, dv = solve_tree_system(joint_body, types, static, joint_row_start, row_J, body_inv_mass, body_I, b)
    joint_m = [BY_CODE[t].n_eq for t in types]
    minv, J, rows = _dense(joint_body, joint_m, joint_row_start, row_J, body_inv_mass, body_I)
    _check_against_dense(lam, dv, minv, J, rows, b)


@pytest.mark.parametrize("shape", ["chain", "branching", "floating"])
def test_baraff_solve_equals_dense_solve_for_arbitrary_rows(shape):
    rng = np.random.default_rng(7)
    if shape == "chain":
        joint_body, types, nb = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], [REVOLUTE] * 5, 6
    elif shape == "branching":        # a body with three joints, joints pointing either way, all row counts
        joint_body = [(0, 1), (2, 1), (1, 3), (3, 4), (3, 5), (6, 5), (5, 7)]
        types, nb = [REVOLUTE, SPHERICAL, FIXED, UNIVERSAL, PRISMATIC, REVOLUTE, SPHERICAL], 8
    else:                             # no joint to the world: rooted at a body
        joint_body, types, nb = [(1, 2), (2, 3), (1, 4), (4, 5)], [SPHERICAL, REVOLUTE, UNIVERSAL, FIXED], 6
    static = np.array([True] + [False] * (nb - 1))
    for _ in range(3):
        _random_rows_case(rng, joint_body, types, nb, static)


# ---------------------------------------------------------------------------- articulated form, joint rows
def _random_tree_world(rng, n, types, floating=False):
    """n boxes in random poses joined into a random tree; joints pointing either way;
    bodies then displaced so every joint has an error (rows with C ≠ 0)."""
    w = World(dt=0.01, solver="impulse")
    for i in range(n):
        q = rng.normal(size=4)
        w.add_body(f"b{i}", Box(tuple(rng.uniform(0.05, 0.3, 3))), mass=rng.uniform(0.1, 5.0),
                   position=rng.normal(size=3), orientation=q / np.linalg.norm(q))
    for i in range(0 if not floating else 1, n):
        parent = "world" if i == 0 else f"b{rng.integers(0, i)}"
        kind = types[rng.integers(len(types))]
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        extra = {}
        if kind == "universal":
            axis2 = np.cross(axis, rng.normal(size=3))
            extra["axis2"] = axis2 / np.linalg.norm(axis2)
        a, b = (parent, f"b{i}") if parent == "world" or rng.random() < 0.5 else (f"b{i}", parent)
        w.add_joint(f"j{i}", kind, a, b, anchor=rng.normal(size=3), axis=axis, **extra)
    w.state.bodies.pos[1:] += rng.normal(scale=0.05, size=(n, 3))
    q = w.state.bodies.quat[1:] + rng.normal(scale=0.05, size=(n, 4))
    w.state.bodies.quat[1:] = q / np.linalg.norm(q, axis=1)[:, None]
    w._refresh_rows()
    return w


def _check_joint_rows(w, rng):
    w._ensure_rows()                        # rows are written on first use after building
    static = static_bodies(w.model.bodies.inv_mass, w.model.bodies.inv_inertia)
    body_I = world_inertia(w)
    joint_m = [BY_CODE[int(t)].n_eq for t in w.model.joints.type]
    minv, J, rows = _dense(w.model.joints.body, joint_m, w.model.joints.row_start, w.work.rows.J, w.model.bodies.inv_mass, body_I)
    b = np.zeros(len(w.work.rows.C))
    b[rows] = rng.normal(size=len(rows))
    lam, dv = solve_joint_rows(w.model.joints.type, w.model.joints.body, w.model.joints.row_start, w.work.rows.J, w.state.bodies.pos,
                               w.model.bodies.inv_mass, body_I, static, b)
    _check_against_dense(lam, dv, minv, J, rows, b)
    lam2, dv2 = solve_tree_system(w.model.joints.body, w.model.joints.type, static, w.model.joints.row_start, w.work.rows.J,
                                  w.model.bodies.inv_mass, body_I, b)
    _check_against_dense(lam2, dv2, minv, J, rows, b)


@pytest.mark.parametrize("kind", TYPES)
def test_articulated_solve_equals_dense_solve_for_each_joint_type(kind):
    rng = np.random.default_rng(11)
    _check_joint_rows(_random_tree_world(rng, 6, (kind,)), rng)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_articulated_solve_equals_dense_solve_on_mixed_branching_trees(seed):
    rng = np.random.default_rng(seed)
    _check_joint_rows(_random_tree_world(rng, 12, TYPES), rng)
    _check_joint_rows(_random_tree_world(rng, 8, TYPES, floating=True), rng)


def test_articulated_solve_with_joints_at_their_stops_equals_dense_solve():
    # limits tight enough that the random poses put most joints at a stop: the active
    # limit rows join their joint's rows (a hinge at its stop is locked)
    rng = np.random.default_rng(9)
    for kind in ("revolute", "spherical", "universal", "prismatic"):
        w = _random_tree_world(rng, 8, (kind,))
        for j in range(len(w.joint_info)):
            if kind == "spherical":
                w.joint(f"j{j}").set_limit(0.0, 0.01, dof=0)
                w.joint(f"j{j}").set_limit(-0.01, 0.01, dof=1)
            else:
                w.joint(f"j{j}").set_limit(-0.01, 0.01)
                if kind == "universal":
                    w.joint(f"j{j}").set_limit(-0.01, 0.01, dof=1)
        w.state.bodies.pos[1:] += rng.normal(scale=0.05, size=(8, 3))
        q = w.state.bodies.quat[1:] + rng.normal(scale=0.2, size=(8, 4))
        w.state.bodies.quat[1:] = q / np.linalg.norm(q, axis=1)[:, None]
        w._refresh_rows()
        limits = np.flatnonzero((w.model.rows.kind == 1) & (w.work.rows.active != 0))
        assert len(limits) >= 4
        static = static_bodies(w.model.bodies.inv_mass, w.model.bodies.inv_inertia)
        body_I = world_inertia(w)
        joint_m = [BY_CODE[int(t)].n_eq for t in w.model.joints.type]
        minv, J, rows = _dense(w.model.joints.body, joint_m, w.model.joints.row_start, w.work.rows.J, w.model.bodies.inv_mass, body_I)
        J_lim = jacobian_matrix(w.work.rows.J, w.model.rows.body, limits, w.model.bodies.count)
        J, rows = np.vstack([J, J_lim]), rows + list(limits)
        b = np.zeros(len(w.work.rows.C))
        b[rows] = rng.normal(size=len(rows))
        lam, dv = solve_joint_rows(w.model.joints.type, w.model.joints.body, w.model.joints.row_start, w.work.rows.J, w.state.bodies.pos,
                                   w.model.bodies.inv_mass, body_I, static, b, row_active=w.work.rows.active)
        _check_against_dense(lam, dv, minv, J, rows, b)


def test_articulated_solve_equals_dense_solve_on_a_long_hinge_chain():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=60, joint="revolute")
    _check_joint_rows(w, np.random.default_rng(5))


# ---------------------------------------------------------------------------- tree plans
def test_plan_roots_at_the_world_and_finds_the_joint_closing_a_loop():
    static = np.array([True, False, False, False])
    chain = build_tree_plan(np.array([(0, 1), (1, 2), (2, 3)]), np.array([REVOLUTE] * 3), static)
    assert chain.is_tree and chain.depth == 3 and list(chain.order) == [2, 1, 0]
    assert list(chain.joint_parent) == [-1, 1, 2] and list(chain.joint_child) == [1, 2, 3]
    four_bar = build_tree_plan(np.array([(0, 1), (1, 2), (2, 3), (3, 0)]), np.array([REVOLUTE] * 4), static)
    assert list(four_bar.loop_joints) == [3]
    floating = build_tree_plan(np.array([(1, 2), (2, 3)]), np.array([SPHERICAL] * 2), static)
    assert list(floating.roots) == [1] and floating.is_tree


# ---------------------------------------------------------------------------- the impulse solver's direct path
def _dense_step(w):
    """Velocities after one step whose equality rows are solved exactly (V⁻ after gravity)."""
    body_I = world_inertia(w)
    joint_m = [BY_CODE[int(t)].n_eq for t in w.model.joints.type]
    minv, J, rows = _dense(w.model.joints.body, joint_m, w.model.joints.row_start, w.work.rows.J, w.model.bodies.inv_mass, body_I)
    V = np.hstack([w.state.bodies.vel, w.state.bodies.omega]).ravel()
    for i in range(1, len(w.state.bodies.pos)):
        V[6 * i:6 * i + 3] += w.gravity * w.dt
    lam = np.linalg.solve(J @ minv @ J.T, -J @ V)
    return (V + minv @ J.T @ lam).reshape(-1, 6)


def test_direct_step_of_a_mixed_chain_equals_the_dense_solve():
    rng = np.random.default_rng(4)
    w = World(dt=0.01, solver="impulse")
    prev = "world"
    for i, kind in enumerate(["revolute", "spherical", "universal", "prismatic", "fixed", "revolute"] * 2):
        w.add_body(f"b{i}", Box((0.1, 0.04, 0.04)), mass=0.5, position=(0.2 * i + 0.1, 0, 0))
        extra = {"axis2": (0, 0, 1)} if kind == "universal" else {}
        w.add_joint(f"j{i}", kind, prev, f"b{i}", anchor=(0.2 * i, 0, 0), axis=(0, 1, 0), **extra)
        prev = f"b{i}"
    w._ensure_rows()                        # rows are written on first use after building
    w.state.bodies.omega[1:] = rng.normal(size=(12, 3))
    w.state.bodies.vel[1:] = rng.normal(size=(12, 3))
    # the velocity solve alone: no position projection or energy projection after it
    w.configure("impulse", iterations=1, warm_start=False, stabilization="none", projection_above=0.0,
                           keep_energy=False)
    assert impulse.uses_direct_solve(w.solvers["impulse"].tree(w)[0], 1)
    expected = _dense_step(w)
    w.step()
    got = np.hstack([w.state.bodies.vel, w.state.bodies.omega])
    assert np.max(np.abs(got[1:] - expected[1:])) < 1e-9 * np.max(np.abs(expected[1:]))
    assert w.stats.iterations == 1 and w.stats.residual == 0.0     # one exact solve


def test_direct_path_agrees_with_converged_sequential_impulses_on_limits_friction_and_motors():
    def build(iterations):
        w = World(dt=0.01, solver="impulse")
        make_chain(w, links=12, joint="revolute")
        for k in range(0, 12, 3):
            w.joint(f"chain_j{k}").set_limit(-0.05, 0.05)
        for k in range(1, 12, 3):
            w.joint(f"chain_j{k}").friction = 0.02
        w.joint("chain_j2").set_motor("velocity", target=1.0, max_force=0.05)
        w.joint("chain_j5").set_motor("position", target=0.3, max_force=0.2)
        w.advance_steps(3)
        w.state.bodies.omega[1:, 1] += np.random.default_rng(0).normal(scale=2.0, size=12)
        w._refresh_rows()
        w.configure("impulse", iterations=iterations, epsilon=1e-14, stabilization="none")
        return w
    iterative, direct = build(100000), build(143)        # depth 12: 12² = 144 sweeps
    plan = direct.solvers["impulse"].tree(direct)[0]
    assert impulse.uses_direct_solve(plan, 143) and not impulse.uses_direct_solve(plan, 100000)
    # the limits reached within the step bind speculatively and iterate around the direct
    # solve (block Gauss–Seidel): 143 sweeps leave a residual of 3e-10 N·s, so the direct
    # path gets the sweeps to converge (method "direct" keeps it at any budget)
    direct.configure("impulse", iterations=1000, method="direct")
    iterative.step()
    direct.step()
    # a limit acted in this step (at its bound or speculatively: joint_rows.speculative_limits)
    assert np.any(direct.state.rows.impulse[direct.model.rows.kind == 1] != 0)
    assert direct.stats.iterations < iterative.stats.iterations
    v_it = np.hstack([iterative.state.bodies.vel, iterative.state.bodies.omega])
    v_di = np.hstack([direct.state.bodies.vel, direct.state.bodies.omega])
    assert np.max(np.abs(v_it - v_di)) < 1e-9 * np.max(np.abs(v_it))


def test_hundred_hinge_chain_keeps_joints_within_a_millimetre_for_a_second_at_10ms():
    # released from horizontal: tension near the root makes the bare scheme unstable at
    # this step; the direct solve with the geometric stiffness keeps every gap < 1 mm
    for iterations in (1, 50):                        # the bench's setting and the default
        w = World(dt=0.01, solver="impulse")
        make_chain(w, links=100, joint="revolute")
        w.configure("impulse", iterations=iterations)
        worst = 0.0
        for _ in range(100):
            w.step()
            worst = max(worst, max_gap(w))
        assert worst < 1e-3
        assert w.body("chain_99").position[2] < -4.0          # it did fall


@pytest.mark.parametrize("joint", ["revolute", "spherical"])
def test_energy_of_a_frictionless_chain_does_not_grow(joint):
    """At the defaults the energy projection pays back what earlier steps lost (the whip's
    losses are owed) but never lifts the chain's energy (the energy the step keeps,
    energy_helpers.kept_energy) above its start."""
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=30, joint=joint)
    w.body("chain_29").velocity = (0.0, 0.5, 1.0)          # some out-of-plane motion too
    e0 = kept_energy(w)
    lowest = e0
    for _ in range(150):
        w.step()
        e = kept_energy(w)
        assert e <= e0 + 1e-9 * abs(e0) + 1e-12
        lowest = min(lowest, e)
    assert lowest < e0                                      # it did lose some on the way


def test_joint_limit_holds_on_the_direct_path():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=40, joint="revolute")
    w.joint("chain_j0").set_limit(-0.3, 0.3)
    w.configure("impulse", iterations=10)
    assert impulse.uses_direct_solve(w.solvers["impulse"].tree(w)[0], 10)
    for _ in range(100):
        w.step()
        assert w.joint("chain_j0").angle < 0.3 + math.radians(1.0)
    assert w.joint("chain_j0").angle > 0.3 - math.radians(1.0)     # resting on the stop
    assert w.max_constraint_error() < 2e-2


def test_joints_closing_loops_iterate_around_the_direct_solve_of_a_spanning_tree():
    # a 30-link chain held at both ends: its last joint closes a loop through the world
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=30, joint="spherical")
    w.add_joint("end", "spherical", "chain_29", "world", anchor=(3.0, 0, 0))
    w.configure("impulse", iterations=20)
    plan = w.solvers["impulse"].tree(w)[0]
    assert list(plan.loop_joints) == [30] and impulse.uses_direct_solve(plan, 20)
    worst = 0.0
    for _ in range(100):
        w.step()
        worst = max(worst, w.max_constraint_error())
    assert worst < 0.03                     # sequential impulses alone: 0.85 m
    # a four-bar linkage driven by a torque on its crank
    w = World(dt=0.01, solver="impulse")
    down = (0.0, -math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))      # local x along world z
    w.add_body("crank", Box((0.1, 0.01, 0.01)), mass=0.1, position=(0.0, 0, 0.1), orientation=down)
    w.add_body("coupler", Box((0.2, 0.01, 0.01)), mass=0.2, position=(0.2, 0, 0.2))
    w.add_body("rocker", Box((0.1, 0.01, 0.01)), mass=0.1, position=(0.4, 0, 0.1), orientation=down)
    w.add_joint("a", "revolute", "world", "crank", anchor=(0, 0, 0), axis=(0, 1, 0))
    w.add_joint("b", "revolute", "crank", "coupler", anchor=(0, 0, 0.2), axis=(0, 1, 0))
    w.add_joint("c", "revolute", "coupler", "rocker", anchor=(0.4, 0, 0.2), axis=(0, 1, 0))
    w.add_joint("d", "revolute", "rocker", "world", anchor=(0.4, 0, 0), axis=(0, 1, 0))
    w.add_load("crank", torque=(0, 0.05, 0))
    w.configure("impulse", iterations=4)
    plan = w.solvers["impulse"].tree(w)[0]
    assert list(plan.loop_joints) == [3] and impulse.uses_direct_solve(plan, 4)
    worst = 0.0
    for _ in range(200):
        w.step()
        worst = max(worst, w.max_constraint_error())
    assert worst < 0.01
    assert abs(w.joint("a").angle) > 0.2     # the crank turned


def test_direct_path_is_chosen_when_sequential_impulses_could_not_converge_and_a_solve_fits_the_cap():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=20, joint="revolute")
    plan = w.solvers["impulse"].tree(w)[0]
    assert plan.depth == 20
    assert impulse.uses_direct_solve(plan, 50)                    # the default budget
    assert not impulse.uses_direct_solve(plan, 400)               # 20² sweeps: seed 001's solver
    assert impulse.uses_direct_solve(plan, 50, time_cap_ms=1.0)
    assert not impulse.uses_direct_solve(plan, 50, time_cap_ms=1e-4)   # one solve would not fit
    single = World(dt=0.01, solver="impulse")                      # one joint: always iterative
    single.add_body("bob", Box((0.1, 0.1, 0.1)), mass=1.0, position=(1, 0, 0))
    single.add_joint("hinge", "revolute", "world", "bob", anchor=(0, 0, 0), axis=(0, 1, 0))
    plan = single.solvers["impulse"].tree(single)[0]
    assert not impulse.uses_direct_solve(plan, 1)


def test_a_tree_with_nothing_to_iterate_takes_one_exact_solve_per_step():
    """No limit, friction, motor or loop: the direct solve is exact, one pass (the
    geometric stiffness from the last step's impulses), whatever the iteration budget."""
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=200, joint="revolute")
    w.configure("impulse", iterations=10000, epsilon=0.0, time_cap_ms=0.5)
    w.advance_steps(5)
    assert w.stats.iterations == 1 and w.stats.residual == 0.0 and not w.stats.time_capped
    assert max_gap(w) < 1e-3


def test_time_cap_cuts_the_iterations_around_the_direct_path():
    """Joint friction on every hinge iterates around the direct solve (block Gauss–Seidel);
    with ε = 0 only the wall-clock cap stops it, and the step still ends on the exact solve."""
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=200, joint="revolute")
    for j in w.joints:
        j.friction = 0.01
    w.configure("impulse", iterations=10000, epsilon=0.0, time_cap_ms=0.5)
    w.advance_steps(5)
    assert w.stats.time_capped and w.stats.capped_steps == 5
    assert 1 <= w.stats.iterations < 10000
    assert 0.0 < w.stats.solve_ms < 5.0
    assert max_gap(w) < 1e-3
