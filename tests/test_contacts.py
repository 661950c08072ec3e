"""Rigid contact (physics/contacts.py) under the impulse solver, against closed forms:
Newton restitution, resting contact, Coulomb friction on an incline, stacking."""
import math

import numpy as np
import pytest

from physics.quat import q_mul
from physics.shapes import Box, Cylinder, Plane, Sphere
from physics.world import World

G = 9.81


def ground_world(dt, solver="impulse", **contacts):
    w = World(dt=dt, solver=solver)
    w.add_body("ground", Plane(), static=True)
    if contacts:
        w.configure_contacts(**contacts)
    return w


@pytest.mark.parametrize("dt, tolerance", [(0.001, 0.02), (0.01, 0.15)])
def test_sphere_rebounds_to_e_squared_times_drop_height(dt, tolerance):
    """Dropped from H = 1 m with e = 0.5, a sphere comes back up to e²·H (Newton's law
    ġ⁺ = −e·ġ⁻ at the impact; gravity alone before and after)."""
    w = ground_world(dt)
    r = 0.1
    ball = w.add_body("ball", Sphere(r), mass=1.0, position=(0, 0, 1.0 + r), restitution=0.5)
    heights = []
    for _ in range(int(1.2 / dt)):
        w.step()
        heights.append(ball.position[2] - r)
    heights = np.array(heights)
    impact = int(np.argmin(heights[:int(0.7 / dt)]))
    assert abs(impact * dt - math.sqrt(2.0 / G)) < 2 * dt + 0.01     # it fell freely
    apex = heights[impact:].max()
    assert apex == pytest.approx(0.25, rel=tolerance)


def test_slow_impact_comes_to_rest_instead_of_bouncing():
    """Below the restitution threshold a contact rests: a sphere dropped from 1 mm stays down."""
    w = ground_world(0.005)
    ball = w.add_body("ball", Sphere(0.1), mass=1.0, position=(0, 0, 0.101), restitution=0.9)
    w.advance(0.2)
    assert abs(ball.velocity[2]) < 1e-6
    assert ball.position[2] < 0.1 + 1e-6


def test_resting_box_carries_its_weight_exactly():
    """A box at rest on the ground: it stops (|v| < 1e-3 m/s after 1 s), sinks no deeper
    than the slop, and the ground's normal impulses per step sum to m·g·Δt (1e-6)."""
    dt, m = 0.01, 2.0
    w = ground_world(dt)
    box = w.add_body("box", Box((0.2, 0.15, 0.1)), mass=m, position=(0, 0, 0.11), angular_velocity=(0.3, -0.2, 0))
    w.advance(1.0)
    assert np.linalg.norm(box.velocity) < 1e-3
    assert np.linalg.norm(box.angular_velocity) < 1e-3
    c = w.contacts()
    assert len(c["depth"]) == 4
    assert c["depth"].max() <= w.contact_settings["slop"] + 1e-9
    assert c["normal_impulse"].sum() == pytest.approx(m * G * dt, abs=1e-6)


@pytest.mark.parametrize("solver", ["impulse"])
@pytest.mark.parametrize("yaw_deg", [0.0, 45.0])
@pytest.mark.parametrize("mu", [0.7, 0.3])
def test_box_on_incline_sticks_or_slides_at_coulomb_acceleration(solver, mu, yaw_deg):
    """A box on a 30° incline: with μ = 0.7 > tan 30° it sticks; with μ = 0.3 it slides down
    at g(sin 30° − μ cos 30°) (2 %), whatever its yaw on the slope (no spin)."""
    theta = math.radians(30.0)
    w = World(dt=0.01, solver=solver)
    tilt = np.array([0.0, math.sin(theta / 2), 0.0, math.cos(theta / 2)])
    w.add_body("ramp", Box((2.0, 2.0, 0.1)), static=True, orientation=tilt, friction=mu)
    normal = np.array([math.sin(theta), 0.0, math.cos(theta)])
    yaw = math.radians(yaw_deg)
    q = q_mul(tilt, np.array([0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)]))
    box = w.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0, position=tuple(0.2 * normal), orientation=q, friction=mu)
    w.advance(0.3)
    v0 = box.velocity
    w.advance(0.5)
    a = (box.velocity - v0) / 0.5
    expected = max(0.0, G * (math.sin(theta) - mu * math.cos(theta)))
    if expected == 0.0:
        assert np.linalg.norm(box.velocity) < 1e-6
    else:
        assert np.linalg.norm(a) == pytest.approx(expected, rel=0.02)
        down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
        assert a @ down == pytest.approx(np.linalg.norm(a), rel=1e-6)      # straight down the slope
        assert np.linalg.norm(box.angular_velocity) < 1e-6


def test_stack_of_five_boxes_stands_ten_seconds():
    """Five 20 cm boxes stacked on the ground at the default settings: after 10 s no box
    has moved by more than 1 mm."""
    w = ground_world(0.01)
    for i in range(5):
        w.add_body(f"b{i}", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.0, 0.0, 0.1 + 0.2 * i))
    p0 = w.state.bodies.pos.copy()
    w.advance(10.0)
    assert np.abs(w.state.bodies.pos - p0).max() < 1e-3


def test_a_settled_heap_stops_iterating_and_moves_as_the_converged_solve_does():
    """100 boxes piled in a heap (physics.bench.contacts), 1.5 s after the drop: the
    solves end by contact ε, not the iteration limit — their normal impulses are not unique
    and Gauss–Seidel shifts them among the supports for ever (~1e-7 N·s a sweep), so contact
    ε bounds the bodies' momentum change over a sweep — and over the next 30 steps every
    body moves as with a solve iterated 500 times with both ε = 0: positions within 1 µm,
    speeds within 1e-4 m/s and rad/s (contact ε 2e-7 N·s on 1 kg boxes, a change per sweep
    that Gauss–Seidel's slow rate on a pile multiplies)."""
    from physics.bench.contacts import heap_world
    w = heap_world("impulse", 100)
    w.advance_steps(500)
    saved = w.save_state()
    iterations = []
    for _ in range(30):
        w.step()
        iterations.append(w.stats.iterations)
    v, p = np.hstack([w.state.bodies.vel, w.state.bodies.omega]), w.state.bodies.pos.copy()
    w.restore_state(saved)
    w.configure("impulse", epsilon=0.0, contact_epsilon=0.0, iterations=500)
    w.advance_steps(30)
    v_converged = np.hstack([w.state.bodies.vel, w.state.bodies.omega])
    assert np.mean(iterations) < 10
    assert np.abs(w.state.bodies.pos - p).max() <= 1e-6
    assert np.abs(v - v_converged).max() <= 1e-4


def pyramid_sweeps(solver, sweeps_of):
    """The sweeps of 100 steps of the 55-box pyramid (physics.bench.contacts, Δt = 10 ms)
    from 0.5 s on (sweeps_of(world) after each step), and how far a box moved (m)."""
    from physics.bench.contacts import pyramid_world
    w = pyramid_world(solver, rows=10, dt=0.01)
    p0 = w.state.bodies.pos.copy()
    w.advance(0.5)
    sweeps = []
    for _ in range(100):
        w.advance_steps(1)
        sweeps.append(sweeps_of(w))
    return sweeps, np.abs(w.state.bodies.pos - p0).max()


def test_a_standing_pyramid_is_solved_in_a_few_sweeps_from_its_warm_start():
    """A pyramid of 55 boxes (10 rows, faces flush; physics.bench.contacts) at Δt = 10 ms,
    from 0.5 s on: each step starts from last step's impulses, found by the points' keys or,
    where a key is new, by place (a point named by other features: contacts.nearest_in_pair),
    so nine steps in ten take at most 3 sweeps (a contact that truly changes costs a step
    more). A point that started from nothing would send the weight above it down through
    the pyramid again: the iteration limit, every step."""
    sweeps, moved = pyramid_sweeps("impulse", lambda w: w.stats.iterations)
    assert np.percentile(sweeps, 90) <= 3 and np.mean(sweeps) <= 5, sweeps
    assert moved < 1e-3


def test_friction_coefficients_mix_as_geometric_mean():
    """μ = √(μa μb): a box with μ = 0.9 on a ramp with μ = 0.1 slides as with μ = 0.3."""
    theta = math.radians(30.0)
    w = World(dt=0.01, solver="impulse")
    tilt = np.array([0.0, math.sin(theta / 2), 0.0, math.cos(theta / 2)])
    w.add_body("ramp", Box((2.0, 2.0, 0.1)), static=True, orientation=tilt, friction=0.1)
    normal = np.array([math.sin(theta), 0.0, math.cos(theta)])
    box = w.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0, position=tuple(0.2 * normal), orientation=tilt,
                     friction=0.9)
    w.advance(0.3)
    v0 = box.velocity
    w.advance(0.5)
    assert np.linalg.norm(box.velocity - v0) / 0.5 == pytest.approx(G * (math.sin(theta) - 0.3 * math.cos(theta)),
                                                                     rel=0.02)


@pytest.mark.parametrize("solver", ["impulse", "penalty", "lcp"])
def test_spinning_disk_on_the_floor_slows_at_the_coulomb_torque_of_its_rim(solver):
    """A flat disk (radius R, lying on its face) spinning about the vertical rests on the
    four rim points of its bottom cap (physics/collision plane–cylinder): the twist row
    carries the Coulomb torque μ m g R, so ω falls at α = μ m g R / (m R²/2) = 2 μ g / R
    (2 %) and the disk stays put. A twist row scaled by 1/r̄ instead of r̄ would brake
    1/R² = 25 times harder."""
    R, mu, w0 = 0.2, 0.1, 30.0
    w = ground_world(0.01, solver)
    disk = w.add_body("disk", Cylinder(R, 0.02), mass=2.0, position=(0, 0, 0.02), angular_velocity=(0, 0, w0),
                      friction=mu)
    w.advance(0.2)
    wa, ta = disk.angular_velocity[2], w.time
    w.advance(0.5)
    alpha = (wa - disk.angular_velocity[2]) / (w.time - ta)
    mu_pair = math.sqrt(mu * 0.5)                       # the ground's default μ is 0.5
    assert alpha == pytest.approx(2.0 * mu_pair * G / R, rel=0.02)
    assert np.linalg.norm(disk.position[:2]) < 1e-3


def _differential_drive(solver, left, right):
    """A 20 kg chassis on two motor-driven wheels (cylinders r = 0.1 m, 4 cm wide, on
    revolute joints 0.5 m apart) and a low-friction skid sphere, wheel speeds left, right
    (rad/s) from the start."""
    w = ground_world(0.015, solver)
    w.add_body("chassis", Box((0.5, 0.4, 0.15)), mass=20.0, position=(-0.1, 0, 0.16))
    w.add_body("skid", Sphere(0.05), mass=0.3, position=(-0.33, 0, 0.05), friction=0.0025)
    w.add_joint("skid_mount", "fixed", "chassis", "skid", anchor=(-0.33, 0, 0.085))
    axle = np.array([math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4)])       # local z along −y
    for name, y, speed in (("left", 0.25, left), ("right", -0.25, right)):
        w.add_body(name, Cylinder(0.1, 0.02), mass=1.0, position=(0, y, 0.1), orientation=axle, friction=1.0)
        w.add_joint(name, "revolute", "chassis", name, anchor=(0, y, 0.1), axis=(0, 1, 0)).set_motor(
            "velocity", speed, 6.0)
    return w


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_differential_drive_turns_at_the_rate_its_wheel_speeds_give(solver):
    """Wheels that roll without slipping turn the chassis at ω = r (ω_R − ω_L) / b (2 %;
    measured 0.6 %, lcp 0.1 %) and drive its axle at v = r (ω_R + ω_L) / 2. While
    it turns, each wheel's patch (4 cm wide) pivots, so its twist friction slides; maximal
    dissipation (the ball clamp in the block's metric, impulse.ball_metric_clamp) leaves
    the traction to the tangent rows. Scaling the impulse into the ball instead let the
    twist take it: the wheels slipped and the chassis turned 12 % slower."""
    r, b, v, omega = 0.1, 0.5, 0.3, math.pi / 6
    w = _differential_drive(solver, (v - omega * b / 2) / r, (v + omega * b / 2) / r)
    w.advance(1.0)
    yaw_rates = []
    for _ in range(60):
        w.step()
        yaw_rates.append(w.body("chassis").angular_velocity[2])
    assert np.mean(yaw_rates) == pytest.approx(omega, rel=0.02)
    # the chassis' centre, 0.1 m behind the axle, moves at √(v² + (0.1 ω)²)
    assert np.linalg.norm(w.body("chassis").velocity) == pytest.approx(math.hypot(v, 0.1 * omega), rel=0.01)


def test_bodies_that_do_not_collide_pass_through():
    """collide = false, contacts disabled, and bodies joined by a joint: no contact."""
    w = ground_world(0.01)
    ghost = w.add_body("ghost", Sphere(0.1), mass=1.0, position=(0, 0, 0.2), collide=False)
    w.advance(0.5)
    assert ghost.position[2] < -0.5
    w = ground_world(0.01, enabled=False)
    ball = w.add_body("ball", Sphere(0.1), mass=1.0, position=(0, 0, 0.2))
    w.advance(0.5)
    assert ball.position[2] < -0.5
    # two overlapping boxes on a hinge: the joint holds them, they do not push apart
    w = ground_world(0.01)
    w.add_body("a", Box((0.1, 0.1, 0.1)), static=True, position=(0, 0, 1))
    b = w.add_body("b", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.15, 0, 1))
    w.add_joint("hinge", "revolute", "a", "b", anchor=(0.05, 0, 1), axis=(0, 1, 0))
    w.step()
    assert len(w.contacts()["depth"]) == 0


def test_speculative_contact_stops_a_fast_body_at_the_surface():
    """A box falling at 4 m/s from 1.5 cm above the ground (within the 2 cm margin) at
    Δt = 10 ms — it would move 4 cm in the step — stops on the surface instead of sinking in."""
    w = ground_world(0.01)
    box = w.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.115), velocity=(0, 0, -4.0))
    for _ in range(20):
        w.step()
        assert box.position[2] > 0.1 - w.contact_settings["slop"] - 1e-9


@pytest.mark.parametrize("preset", ["stiff", "critical"])
def test_penalty_contact_holds_a_box_with_a_sinking_of_g_over_omega_squared(preset):
    """Under penalty a contact point is a critically damped one-sided spring (ω = κ/Δt,
    k = m ω² over the pair's points): a resting box sinks m g/k = g/ω² = g(Δt/κ)² and
    stops — κ = 10 implicit in the stiff preset, κ = 0.5 explicit in the others."""
    from physics.solvers.penalty import CONTACT_KAPPA, CONTACT_STIFF_KAPPA
    kappa = CONTACT_STIFF_KAPPA if preset == "stiff" else CONTACT_KAPPA
    dt = 0.003
    w = World(dt=dt, solver="penalty", settings={"penalty_preset": preset})
    w.add_body("ground", Plane(), static=True)
    box = w.add_body("box", Box((0.1, 0.1, 0.1)), mass=2.0, position=(0, 0, 0.1))
    w.advance(1.0)
    assert np.linalg.norm(box.velocity) < 1e-4
    assert 0.1 - box.position[2] == pytest.approx(G * (dt / kappa) ** 2, rel=0.01)
    assert all(feature != "contacts" for feature, _ in w.unhonoured())


def test_restitution_the_penalty_family_cannot_honour_is_reported_not_dropped():
    """A ball with e = 0.5 on the ground: penalty's critically damped contact springs do not
    bounce, so World.unhonoured names it under penalty (the CLI and panel show it) and not
    under impulse or lcp; with e = 0 nothing is reported."""
    w = ground_world(0.003, solver="penalty")
    ball = w.add_body("ball", Sphere(0.1), mass=1.0, position=(0, 0, 1.0), restitution=0.5)
    assert ("restitution", ["ball"]) in w.unhonoured()
    for solver in ("impulse", "lcp"):
        w.solver = solver
        assert all(feature != "restitution" for feature, _ in w.unhonoured())
    w.solver = "penalty"
    ball.restitution = 0.0
    assert all(feature != "restitution" for feature, _ in w.unhonoured())


def test_penalty_contact_friction_holds_a_box_on_an_incline():
    """Penalty friction at the patch (dampers of the implicit solve, regularized Coulomb): μ = 0.7 holds a box on
    a 30° slope (creep < 1 mm in 1 s); μ = 0.3 lets it slide at g(sin − μ cos) (3 %)."""
    theta = math.radians(30.0)
    for mu, expected in ((0.7, 0.0), (0.3, G * (math.sin(theta) - 0.3 * math.cos(theta)))):
        w = World(dt=0.003, solver="penalty")
        tilt = np.array([0.0, math.sin(theta / 2), 0.0, math.cos(theta / 2)])
        w.add_body("ramp", Box((2.0, 2.0, 0.1)), static=True, orientation=tilt, friction=mu)
        normal = np.array([math.sin(theta), 0.0, math.cos(theta)])
        box = w.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0, position=tuple(0.2 * normal), orientation=tilt,
                         friction=mu)
        w.advance(0.3)
        p0, v0 = box.position, box.velocity
        w.advance(0.5)
        if expected == 0.0:
            assert np.linalg.norm(box.position - p0) < 1e-3
        else:
            assert np.linalg.norm(box.velocity - v0) / 0.5 == pytest.approx(expected, rel=0.03)


def test_contacts_restore_with_the_state_so_a_replay_repeats():
    """save_state/restore_state keep the contacts' warm start: the replay is bit-identical."""
    w = ground_world(0.01)
    for i in range(3):
        w.add_body(f"b{i}", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.02 * i, 0.0, 0.1 + 0.21 * i))
    w.advance(0.5)
    saved = w.save_state()
    w.advance(0.5)
    first = w.state.bodies.pos.copy()
    w.restore_state(saved)
    w.advance(0.5)
    assert np.array_equal(w.state.bodies.pos, first)


@pytest.mark.parametrize("solver", ["impulse", "penalty", "lcp"])
def test_contacts_beyond_the_first_buffers_hold_bodies_up_in_a_long_kernel_call(solver):
    """The stack scene has more candidate pairs and contacts than the buffers first hold:
    one call of 100 steps (as a headless run makes) stops at the overflow, grows them and
    goes on, so every body stays on the ground (its centre at least 5 cm above it: the
    smallest half height is 7.5 cm) instead of falling through for the rest of the call."""
    from pathlib import Path
    import physics
    w = physics.load_scene(Path(__file__).resolve().parent.parent / "scenes" / "stack.toml")
    w.solver = solver
    pairs0, points0 = w.contact_data().buffers.pairs.shape[0], w.contact_data().buffers.ci.shape[0]
    w.advance_steps(100)
    grown = w.contact_data().buffers
    assert grown.pairs.shape[0] > pairs0 or grown.ci.shape[0] > points0       # the case happened
    dynamic = w.model.bodies.inv_mass > 0.0
    assert w.state.bodies.pos[dynamic, 2].min() > 0.05
    assert w.time == pytest.approx(1.0)


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_door_pushed_through_contact_stops_when_and_where_seed_001_says(solver):
    """scenes/door_push.toml: a paddle pushes the door through a contact for 0.33 s (the
    torque of seed 001's script), then the door coasts against its 20 N·m friction hinge:
    it stops at 0.87 ± 0.02 s after 37.62 ± 0.5° (measured: impulse 0.87 s, 37.62°; lcp
    0.87 s, 37.66°)."""
    from pathlib import Path
    import physics
    w = physics.load_scene(Path(__file__).resolve().parent.parent / "scenes" / "door_push.toml")
    w.solver = solver
    hinge = w.joint("hinge")
    t_stop = None
    while w.time < 1.5:
        w.step()
        if t_stop is None and w.time > 0.4 and abs(hinge.rate) <= 1e-3:
            t_stop = w.time
    assert t_stop == pytest.approx(0.87, abs=0.02)
    assert math.degrees(hinge.angle) == pytest.approx(37.62, abs=0.5)
