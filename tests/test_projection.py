"""Projection onto the joint manifold (seed 004, eqs. 15-18; physics/solvers/projection.py):
positions onto g_E(q) = 0 by mass-weighted Newton steps, velocities onto ġ_E = J V = 0,
on random trees of every joint type and on a 3-D four-bar (a loop with dependent rows)."""
import math

import numpy as np
import pytest

from physics import Box, World
from physics.joint_types import N_EQ
from physics.reference import inverse_mass_matrix, jacobian_matrix, world_inertia
from physics.joint_rows import compute_joint_rows
from physics.solvers.projection import equality_errors, project, project_positions, projection_for

TYPES = ("revolute", "spherical", "universal", "prismatic", "fixed")


def _random_tree(rng, n, drift=3e-4, solver="impulse"):
    """n boxes joined into a random tree (joints pointing either way, every type), then
    displaced by ~`drift` (m, rad) off their joints and given random velocities."""
    w = World(dt=0.01, solver=solver)
    for i in range(n):
        q = rng.normal(size=4)
        w.add_body(f"b{i}", Box(tuple(rng.uniform(0.05, 0.3, 3))), mass=rng.uniform(0.1, 5.0),
                   position=rng.normal(size=3), orientation=q / np.linalg.norm(q))
    for i in range(n):
        parent = "world" if i == 0 else f"b{rng.integers(0, i)}"
        kind = TYPES[rng.integers(len(TYPES))]
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        extra = {}
        if kind == "universal":
            axis2 = np.cross(axis, rng.normal(size=3))
            extra["axis2"] = axis2 / np.linalg.norm(axis2)
        a, b = (parent, f"b{i}") if parent == "world" or rng.random() < 0.5 else (f"b{i}", parent)
        w.add_joint(f"j{i}", kind, a, b, anchor=rng.normal(size=3), axis=axis, **extra)
    _disturb(w, rng, drift)
    return w


def _disturb(w, rng, drift):
    """Move every dynamic body by ~drift (m, rad) and give it a random velocity."""
    sb = w.state.bodies
    dyn = np.flatnonzero(w.model.bodies.inv_mass > 0)
    sb.pos[dyn] += rng.normal(scale=drift, size=(len(dyn), 3))
    q = sb.quat[dyn] + rng.normal(scale=drift, size=(len(dyn), 4))
    sb.quat[dyn] = q / np.linalg.norm(q, axis=1)[:, None]
    sb.vel[dyn] = rng.normal(size=(len(dyn), 3))
    sb.omega[dyn] = rng.normal(size=(len(dyn), 3))
    w._refresh_rows()


def _four_bar(solver="impulse"):
    """A 3-D four-bar of revolutes (crank, coupler, rocker, ground), every axis along y:
    4 joints, 20 equality rows of rank 17 (three rows of the loop repeat the others)."""
    w = World(dt=0.01, solver=solver)
    down = (0.0, -math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))      # local x along world z
    w.add_body("crank", Box((0.1, 0.01, 0.01)), mass=0.1, position=(0.0, 0, 0.1), orientation=down)
    w.add_body("coupler", Box((0.2, 0.01, 0.01)), mass=0.2, position=(0.2, 0, 0.2))
    w.add_body("rocker", Box((0.1, 0.01, 0.01)), mass=0.1, position=(0.4, 0, 0.1), orientation=down)
    w.add_joint("a", "revolute", "world", "crank", anchor=(0, 0, 0), axis=(0, 1, 0))
    w.add_joint("b", "revolute", "crank", "coupler", anchor=(0, 0, 0.2), axis=(0, 1, 0))
    w.add_joint("c", "revolute", "coupler", "rocker", anchor=(0.4, 0, 0.2), axis=(0, 1, 0))
    w.add_joint("d", "revolute", "rocker", "world", anchor=(0.4, 0, 0), axis=(0, 1, 0))
    return w


def _kinetic(w):
    """½ Vᵀ M V of the dynamic bodies (J)."""
    sb, I, inv_m = w.state.bodies, world_inertia(w), w.model.bodies.inv_mass
    return 0.5 * sum(sb.vel[i] @ sb.vel[i] / inv_m[i] + sb.omega[i] @ I[i].reshape(3, 3) @ sb.omega[i]
                     for i in np.flatnonzero(inv_m > 0))


def _equality_rows(w):
    m = w.model.joints
    return [m.row_start[k] + i for k in range(m.count) for i in range(N_EQ[m.type[k]])]


def _dense(w):
    """(M⁻¹, J over the equality rows, g_E) at the current poses."""
    w._ensure_rows()
    eq = _equality_rows(w)
    minv = inverse_mass_matrix(w.model.bodies.inv_mass, world_inertia(w))
    J = jacobian_matrix(w.work.rows.J, w.model.rows.body, eq, w.model.bodies.count)
    return minv, J, w.work.rows.C[eq].copy()


def _velocity_vector(w):
    sb = w.state.bodies
    return np.hstack([sb.vel, sb.omega]).ravel()


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_are_projected_onto_the_manifold_with_kinetic_energy_not_rising(seed):
    """2 Newton steps from a drift of ~3e-4: every |g_E| ≤ 1e-9 m or rad after, then every
    |J·V| ≤ 1e-9 m/s or rad/s; the kinetic energy does not rise (position step: ω turned
    with the body; velocity step: M-orthogonal)."""
    w = _random_tree(np.random.default_rng(seed), 8)
    ke = _kinetic(w)
    v = project(w, 2)
    assert v.position_before > 1e-4 and v.position_after <= 1e-9
    assert v.velocity_before > 1e-2 and v.velocity_after <= 1e-9
    assert w.max_constraint_error() <= 1e-9
    _, J, _ = _dense(w)
    assert np.abs(J @ _velocity_vector(w)).max() <= 1e-9
    assert _kinetic(w) <= ke * (1 + 1e-12)


def test_velocity_projection_is_the_dense_solution_of_eq_17_18():
    """On the manifold, V⁺ = V − M⁻¹Jᵀ(J M⁻¹ Jᵀ)⁻¹ J V (the M-orthogonal projection onto
    J V = 0), dense, equals the tree solve's to 1e-9 of |V|."""
    rng = np.random.default_rng(5)
    w = _random_tree(rng, 7)
    project(w, 3)                                  # onto the manifold first
    sb = w.state.bodies
    dyn = np.flatnonzero(w.model.bodies.inv_mass > 0)
    sb.vel[dyn] = rng.normal(size=(len(dyn), 3))
    sb.omega[dyn] = rng.normal(size=(len(dyn), 3))
    minv, J, _ = _dense(w)
    v = _velocity_vector(w)
    want = v - minv @ J.T @ np.linalg.solve(J @ minv @ J.T, J @ v)
    project(w, 1)
    got = _velocity_vector(w)
    assert np.abs(got - want).max() <= 1e-9 * np.abs(v).max()


def test_one_newton_step_is_the_mass_weighted_least_change_of_eq_15_16():
    """[M Jᵀ; J 0][Δq; η] = [0; −g_E] solved densely gives the tree solve's Δq (one step)."""
    w = _random_tree(np.random.default_rng(11), 6)
    minv, J, g = _dense(w)
    want = (minv @ J.T @ np.linalg.solve(J @ minv @ J.T, -g)).reshape(-1, 6)
    proj = projection_for(w)
    _, bodies, _, joints, _, rows, _ = w.kernel_bundles(w.active_solver.free_rows_used(w))
    project_positions(1, 0.0, bodies, joints, rows, proj, 0.0)
    got = np.hstack([proj.dq_lin, proj.dq_ang])
    assert np.abs(got - want).max() <= 1e-9 * np.abs(want).max()


def test_four_bar_loop_with_dependent_rows_is_projected_onto_its_manifold():
    """20 equality rows of rank 17 (the loop's Schur complement drops 3): a drift of ~2 mm
    is projected away to 1e-9 in 3 Newton steps, the velocities to 1e-9 of ġ_E, the kinetic
    energy not rising."""
    w = _four_bar()
    _, J, _ = _dense(w)
    assert J.shape[0] == 20 and np.linalg.matrix_rank(J) == 17
    _disturb(w, np.random.default_rng(3), 2e-3)
    assert len(projection_for(w).loop_rows) == 5
    ke = _kinetic(w)
    v = project(w, 3)
    assert v.position_before > 1e-3 and v.position_after <= 1e-9
    assert v.velocity_before > 1e-2 and v.velocity_after <= 1e-9
    assert _kinetic(w) <= ke * (1 + 1e-12)


@pytest.mark.parametrize("solver,method", [("impulse", "direct"), ("impulse", "iterative"), ("penalty", None)])
def test_projection_setting_keeps_a_driven_loop_on_its_manifold_and_reports_it(solver, method):
    """post_projection on (impulse and penalty families): after every step of a driven
    four-bar its equality rows hold to 1e-9; penalty's rates to 1e-9 too (seed 004's
    velocity step), impulse's are left to its next step's solve (positions only, in the
    step's metric); the stats report the violation before and after."""
    w = _four_bar(solver)
    w.add_load("crank", torque=(0, 0.05, 0))
    settings = {"post_projection": True, "projection_iterations": 2}
    if solver == "impulse":
        settings["projection_above"] = 0.0
    if method:
        settings["method"] = method
    w.configure(solver, **settings)
    for _ in range(50):
        w.step()
        st = w.stats
        assert st.violation_after <= 1e-9
        if solver == "penalty":
            assert st.rate_after <= 1e-9
        assert st.violation_before >= st.violation_after
        assert w.max_constraint_error() <= 1e-9
    assert w.joint("a").rate != 0.0


def test_newton_steps_that_widen_the_joints_are_undone():
    """A 30-link hinge chain whipping at Δt = 10 ms under the impulse solver with the
    projection after each step, then a step without: its links zig-zag at ±20 rad/s and the
    step's drift of 1.3 mm is outside Newton's reach in the mass metric (measured: 1.3 mm →
    0.44 mm, then steps that widen it). The projection ends on the poses with the smallest
    error it met: more iterations never end wider than fewer."""
    from physics.builders import make_chain
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=30, joint="revolute")
    w.configure("impulse", post_projection=True, projection_above=0.0)
    w.advance_steps(72)
    # the step without: no split pass either (erp 0), whose drift prediction takes most of it
    w.configure("impulse", post_projection=False, erp=0.0)
    w.advance_steps(1)
    start = w.save_state()
    proj = projection_for(w)
    errors = []
    for iterations in (1, 2, 4):
        w.restore_state(start)
        _, bodies, _, joints, _, rows, _ = w.kernel_bundles(w.active_solver.free_rows_used(w))
        compute_joint_rows(bodies, joints, rows, False)
        if iterations == 1:
            assert equality_errors(bodies, joints, rows)[0] > 1e-3
        errors.append(project_positions(iterations, 0.0, bodies, joints, rows, proj, 0.0))
    assert errors[1] <= errors[0] and errors[2] <= errors[1]


@pytest.mark.parametrize("links", [30, 100])
def test_impulse_post_projection_keeps_a_whipping_hinge_chain_closed_and_stable(links):
    """A hinge chain released from horizontal whips at Δt = 10 ms (links at up to ~40
    rad/s, a drift of centimetres per step without projection). With the impulse solver's
    post_projection (positions in the step's own metric M + h²K̃) it stays finite for 3 s
    with every joint within 1e-5 m after every step, and its energy at 1 s within 1 % of
    the swing's scale m·g·L/2 of the run without projection (the projection takes the
    drift away, not the energy). (In the plain metric, or with seed 004's velocity step
    after it, the 30-link chain blew up within 1.1 s: both undo the step's geometric
    stiffness.)"""
    from physics.builders import make_chain
    runs = []
    for project in (False, True):
        w = World(dt=0.01, solver="impulse")
        make_chain(w, links=links, joint="revolute")
        w.configure("impulse", post_projection=project, projection_above=0.0)
        worst, e1 = 0.0, None
        for step in range(300):
            w.step()
            worst = max(worst, w.max_constraint_error())
            if step == 99:
                e1 = w.energy()
        runs.append((worst, e1))
    scale = 0.1 * links * 9.81 * 0.1 * links / 2
    assert runs[0][0] > 1e-2                       # without: centimetres
    assert runs[1][0] <= 1e-5
    assert abs(runs[1][1] - runs[0][1]) <= 0.01 * scale


@pytest.mark.parametrize("links", [10, 30, 100])
def test_impulse_defaults_keep_a_whipping_hinge_chain_within_a_millimetre(links):
    """At the impulse solver's defaults (the drift projection beyond projection_above =
    0.9 mm) hinge chains released from horizontal at Δt = 10 ms keep every joint within 1 mm
    after every step for 3 s (without the projection: 2.6, 7.6 and 3.1 cm)."""
    from physics.builders import make_chain
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=links, joint="revolute")
    worst = 0.0
    for _ in range(300):
        w.step()
        worst = max(worst, w.max_constraint_error())
    assert worst <= 1e-3


def test_lcp_defaults_keep_a_whipping_100_link_hinge_chain_joined_through_its_whips():
    """The lcp solver projects after every step at its defaults (seed 004). A 100-link
    hinge chain released from horizontal at Δt = 3 ms whips at about 4.3 s, when the
    step's own drift grows to centimetres: the projection's Newton iterations take it back
    and every joint stays within 1e-9 m for 8 s."""
    from physics.builders import make_chain
    w = World(dt=0.003, solver="lcp")
    make_chain(w, links=100, joint="revolute")
    worst = 0.0
    for _ in range(80):
        w.advance(0.1)
        worst = max(worst, w.max_constraint_error())
    assert worst <= 1e-9
