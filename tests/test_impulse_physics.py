"""Impulse solver with joint friction (seed 001) against closed-form results."""
import math

import numpy as np
import pytest

from physics import Box, World
from physics.builders import make_chain
from physics.reference import equality_step_velocities

G = 9.81


def _door(dt, friction=20.0, omega0=1.5):
    """A 26.4 kg, 0.9 × 2.0 m door on a vertical hinge at its edge, spinning at omega0."""
    w = World(dt=dt, solver="impulse")
    m, width, thick, height = 26.4, 0.9, 0.04, 2.0
    w.add_body("door", Box((width / 2, thick / 2, height / 2)), mass=m, position=(width / 2, 0, height / 2))
    w.add_joint("hinge", "revolute", "world", "door", anchor=(0, 0, height / 2), axis=(0, 0, 1),
                friction=friction)
    w.body("door").angular_velocity = (0, 0, omega0)
    w.body("door").velocity = (0, omega0 * width / 2, 0)
    inertia = m * (width ** 2 + thick ** 2) / 12 + m * (width / 2) ** 2
    return w, inertia


@pytest.mark.parametrize("dt", [0.01, 0.001])
def test_door_coasting_under_friction_stops_at_omega0_I_over_tau(dt):
    tau, omega0 = 20.0, 1.5
    w, inertia = _door(dt, tau, omega0)
    hinge = w.joint("hinge")
    t_stop = None
    while t_stop is None and w.time < 2.0:
        w.step()
        if hinge.rate <= 1e-12:
            t_stop = w.time
    assert t_stop == pytest.approx(omega0 * inertia / tau, abs=dt)
    assert hinge.angle == pytest.approx(omega0 ** 2 * inertia / (2 * tau), abs=omega0 * dt)
    stopped_angle = hinge.angle
    for _ in range(int(round(10.0 / dt / 100))):
        w.advance_steps(100)
        assert np.linalg.norm(w.body("door").angular_velocity) < 1e-9
    assert abs(hinge.angle - stopped_angle) < 1e-9


def _horizontal_arm(friction, length=1.0, mass=2.0):
    """A bar sticking out horizontally from a horizontal hinge: gravity torque m g L/2."""
    w = World(dt=0.01, solver="impulse")
    w.add_body("arm", Box((length / 2, 0.03, 0.03)), mass=mass, position=(length / 2, 0, 0))
    w.add_joint("hinge", "revolute", "world", "arm", anchor=(0, 0, 0), axis=(0, 1, 0), friction=friction)
    inertia = mass * (length ** 2 + 0.06 ** 2) / 12 + mass * (length / 2) ** 2
    return w, mass * G * length / 2, inertia


def test_static_friction_holds_arm_below_the_limit():
    w, tau_g, _ = _horizontal_arm(friction=12.0)     # τ_g = 9.81 N·m < 12
    w.advance(10.0)
    assert abs(w.joint("hinge").angle) < 1e-6
    assert not w.joint("hinge").sliding


def test_arm_above_friction_limit_accelerates_at_net_torque_over_inertia():
    w, tau_g, inertia = _horizontal_arm(friction=5.0)
    n = 10
    w.advance_steps(n)                                # 0.1 s: small angle, gravity torque ≈ constant
    # semi-implicit Euler under constant α = (τ_g − τ_max)/I: q_n = α Δt² n(n+1)/2
    alpha = 2 * abs(w.joint("hinge").angle) / (w.dt ** 2 * n * (n + 1))
    assert alpha == pytest.approx((tau_g - 5.0) / inertia, rel=0.01)
    assert w.joint("hinge").sliding


def test_spherical_friction_opposes_relative_spin_and_stays_in_the_ball():
    tau_max = 3.0
    w = World(dt=0.005, solver="impulse")
    w.add_body("ball", Box((0.1, 0.1, 0.3)), mass=2.0, position=(0, 0, -0.3))
    w.add_joint("socket", "spherical", "world", "ball", anchor=(0, 0, 0), axis=(0, 0, -1), friction=tau_max)
    w.body("ball").angular_velocity = (4.0, -2.0, 6.0)
    w.body("ball").velocity = np.cross((4.0, -2.0, 6.0), (0, 0, -0.3))
    sliding_steps = 0
    for _ in range(400):
        omega_before = w.body("ball").angular_velocity
        w.step()
        torque = w.joint("socket").friction_torque_vector
        norm = np.linalg.norm(torque)
        assert norm <= tau_max * (1 + 1e-9)
        if w.joint("socket").sliding and np.linalg.norm(omega_before) > 1e-6:
            sliding_steps += 1
            assert np.dot(torque, omega_before) < 0.0
    assert sliding_steps > 10


@pytest.mark.parametrize("friction,sticks", [(6.0, True), (3.0, False)])
def test_prismatic_friction_on_incline_sticks_or_slides_at_g_sin_minus_f_over_m(friction, sticks):
    th, m = math.radians(30), 1.0                     # m g sin θ = 4.905 N
    w = World(dt=0.005, solver="impulse")
    w.add_body("slider", Box((0.2, 0.1, 0.05)), mass=m, position=(0, 0, 0))
    w.add_joint("rail", "prismatic", "world", "slider", anchor=(0, 0, 0),
                axis=(math.cos(th), 0, -math.sin(th)), friction=friction)
    w.advance(1.0)
    s = w.joint("rail").angle
    if sticks:
        assert abs(s) < 1e-9
    else:
        assert 2 * s / 1.0 ** 2 == pytest.approx(G * math.sin(th) - friction / m, rel=0.01)


def test_velocity_motor_reaches_its_target_speed():
    w, _, _ = _horizontal_arm(friction=0.0)
    w.gravity = (0, 0, 0)
    w.joint("hinge").set_motor("velocity", target=2.0, max_force=5.0)
    w.advance(2.0)
    assert w.joint("hinge").rate == pytest.approx(2.0, abs=1e-6)


@pytest.mark.parametrize("max_torque,holds", [(50.0, True), (5.0, False)])
def test_position_servo_holds_link_against_gravity_only_within_its_torque(max_torque, holds):
    w, tau_g, _ = _horizontal_arm(friction=0.0)        # τ_g = 9.81 N·m
    w.joint("hinge").set_motor("position", target=0.0, max_force=max_torque, frequency=20.0)
    w.advance(3.0)
    sag = abs(w.joint("hinge").angle)
    if holds:
        assert sag < math.radians(0.5)
    else:
        assert sag > math.radians(10)


def test_impulse_step_equals_dense_direct_solve_at_tight_epsilon():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=4, joint="revolute")
    w.body("chain_2").angular_velocity = (0.3, 1.0, -0.2)
    # the velocity solve alone: no position or energy projection after it
    w.configure("impulse", iterations=20000, epsilon=1e-13, warm_start=False, stabilization="none",
                           projection_above=0.0, keep_energy=False)
    expected = equality_step_velocities(w)
    w.step()
    got = np.hstack([w.state.bodies.vel, w.state.bodies.omega])
    assert np.max(np.abs(got[1:] - expected[1:])) < 1e-6


def _iterations_to_converge(warm):
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=20, joint="revolute")
    # seed 001's method alone: the drift projection and the energy projection move the
    # poses and velocities between steps, away from what the last impulses solved
    w.configure("impulse", iterations=100000, epsilon=1e-6, warm_start=warm, projection_above=0.0, keep_energy=False)
    total = 0
    for _ in range(100):
        w.step()
        total += w.stats.iterations
    return total


def test_warm_starting_cuts_iterations_on_20_link_chain():
    # a chain falling from horizontal for 1 s, ε = 1e-6 N·s: measured 64260 → 41444 (×1.55)
    cold, warm = _iterations_to_converge(False), _iterations_to_converge(True)
    assert warm * 1.4 < cold


def test_time_cap_cuts_the_solve_of_a_1000_link_chain():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=1000, joint="revolute")
    w.configure("impulse", iterations=10000, epsilon=1e-12, time_cap_ms=0.2)
    w.advance_steps(5)
    assert w.stats.time_capped
    assert 0 < w.stats.iterations < 10000
    assert w.stats.capped_steps == 5


def test_switching_solvers_mid_run_keeps_bodies_in_place():
    w = World(dt=0.003, solver="impulse", settings={"penalty_preset": "critical"})
    make_chain(w, links=5, joint="spherical")
    w.advance(0.5)
    pos, vel = w.state.bodies.pos.copy(), w.state.bodies.vel.copy()
    w.solver = "penalty"
    assert np.array_equal(w.state.bodies.pos, pos)
    w.step()
    # one step moves each body by about v·Δt, no jump
    assert np.max(np.abs(w.state.bodies.pos - pos)) < np.max(np.abs(vel)) * w.dt + 0.01
    w.solver = "impulse"
    w.advance(0.5)
    # the impulse solver alone keeps this swinging chain within 1.5 mm (position drift of
    # the linear position update, removed at ERP 0.2 per step)
    assert w.max_constraint_error() < 3e-3


def test_direct_and_iterative_methods_agree_on_a_converged_chain_step():
    """The O(N) direct solve of the joint tree and seed 001's iterations solve the same
    rows: one step of a 5-link chain ends in the same state (iterations run to ε ≈ 0)."""
    from physics.builders import make_chain
    states = []
    for method in ("direct", "iterative"):
        w = World(dt=0.01, solver="impulse")
        make_chain(w, links=5)
        w.configure("impulse", method=method, iterations=20000, epsilon=1e-13, stabilization="none")
        w.step()
        assert w.solver_settings("impulse")["method"] == method
        states.append(np.concatenate([w.state.bodies.vel.ravel(), w.state.bodies.omega.ravel()]))
    assert np.allclose(states[0], states[1], atol=1e-7)
