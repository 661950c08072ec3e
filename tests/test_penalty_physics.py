"""Penalty solver (seed 000) against analytic solutions and conservation laws."""
import math
from pathlib import Path

import numpy as np
import pytest

import physics
from physics import Box, Sphere, World
from physics.builders import make_chain

G = 9.81


def _period_from_crossings(ts, xs):
    """Mean period from the upward zero crossings of a signal (linear interpolation)."""
    up = [ts[i] - xs[i] * (ts[i + 1] - ts[i]) / (xs[i + 1] - xs[i])
          for i in range(len(xs) - 1) if xs[i] < 0.0 <= xs[i + 1]]
    return float(np.mean(np.diff(up)))


def _swing(world, body, steps):
    ts, xs = np.empty(steps), np.empty(steps)
    for i in range(steps):
        world.step()
        ts[i], xs[i] = world.time, world.body(body).position[0]
    return ts, xs


def test_point_bob_pendulum_period_matches_small_angle_formula():
    # A bob of radius L/10 on a 4 m arm: T = 2π√((L² + 2/5 r²)/(gL))(1 + θ0²/16).
    # Smaller bobs are out of reach of explicit penalty at 3 ms: the rows that hold the
    # bob act on its small inertia through a long lever and must stay soft (penalty.py).
    L, th, r = 4.0, 0.05, 0.4
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    w.add_body("bob", Sphere(r), mass=1.0, position=(L * math.sin(th), 0, -L * math.cos(th)))
    w.add_joint("hinge", "revolute", "world", "bob", anchor=(0, 0, 0), axis=(0, 1, 0))
    ts, xs = _swing(w, "bob", 5000)
    expected = 2 * math.pi * math.sqrt((L * L + 0.4 * r * r) / (G * L)) * (1 + th * th / 16)
    assert _period_from_crossings(ts, xs) == pytest.approx(expected, rel=0.01)


def test_compound_box_pendulum_period_with_paper_coefficients():
    # chunky box hinged at its top edge, seed 000's own α*, β* at Δt = 3 ms:
    # T = 2π√(I_pivot / (m g d)), I_pivot = m(a² + c²)/12 + m d²
    a, c = 0.6, 1.0                      # extent across the swing and along the arm (m)
    d, th = c / 2, 0.05
    w = World(dt=0.003, settings={"penalty_preset": "paper"})
    w.add_body("box", Box((a / 2, 0.3, c / 2)), mass=2.0,
               position=(d * math.sin(th), 0, -d * math.cos(th)),
               orientation=(0, math.sin(th / 2), 0, math.cos(th / 2)))
    w.add_joint("hinge", "revolute", "world", "box", anchor=(0, 0, 0), axis=(0, 1, 0))
    ts, xs = _swing(w, "box", 3000)
    i_pivot = (a * a + c * c) / 12 + d * d
    expected = 2 * math.pi * math.sqrt(i_pivot / (G * d)) * (1 + th * th / 16)
    assert _period_from_crossings(ts, xs) == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("joint", ["revolute", "spherical"])
def test_chain_released_horizontal_keeps_bounded_violation(joint):
    # 10 links of 0.1 m, 0.1 kg, critical preset: measured largest gap 3.4 cm (during
    # the first fall), bound 4 cm, and the last 5 s no worse than the first 5 s.
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    make_chain(w, links=10, joint=joint)
    first = last = 0.0
    for i in range(1000):
        w.advance_steps(3)
        e = w.max_constraint_error()
        if w.time <= 5.0:
            first = max(first, e)
        else:
            last = max(last, e)
    assert first < 0.04 and last < 0.04
    assert last <= first * 1.05


def test_frictionless_chain_energy_does_not_grow():
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    make_chain(w, links=10)
    w.step()
    e0 = w.energy()
    worst = -math.inf
    for _ in range(1000):
        w.advance_steps(3)
        worst = max(worst, w.energy() - e0)
    # the penalty dampers only take energy out; allow the spring energy stored in the gaps
    assert worst < 0.01 * abs(e0) + 0.01


def _hinged_plate(preset, limits, torque, start_angle):
    """A 2 kg cube on a vertical hinge at its edge, turned to `start_angle`, pushed by `torque`."""
    w = World(dt=0.003, settings={"penalty_preset": preset}, gravity=(0, 0, 0))
    w.add_body("plate", Box((0.3, 0.3, 0.3)), mass=2.0, position=(0.3, 0, 0))
    w.add_joint("hinge", "revolute", "world", "plate", anchor=(0, 0, 0), axis=(0, 0, 1), limits=limits)
    c, s = math.cos(start_angle), math.sin(start_angle)
    w.body("plate").position = (0.3 * c, 0.3 * s, 0.0)
    w.body("plate").orientation = (0, 0, math.sin(start_angle / 2), math.cos(start_angle / 2))
    w.body("plate").torque = (0, 0, torque)
    return w


@pytest.mark.parametrize("preset", ["paper", "critical"])
@pytest.mark.parametrize("limits_deg", [(-30.0, 120.0), (-150.0, 20.0), (-170.0, 170.0)])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_revolute_limit_holds_when_driven_hard(preset, limits_deg, sign):
    lo, hi = np.radians(limits_deg)
    start = hi - math.radians(5) if sign > 0 else lo + math.radians(5)
    w = _hinged_plate(preset, (lo, hi), sign * 20.0, start)     # 20 N·m against the stop
    peak = -math.inf
    for _ in range(1000):
        w.advance_steps(3)
        q = w.joint("hinge").angle
        peak = max(peak, (q - hi) if sign > 0 else (lo - q))
    # the stop is reached and passed by at most 2° (stated tolerance)
    assert 0.0 < peak + math.radians(0.5)
    assert peak < math.radians(2.0)


def test_prismatic_slider_on_30_degree_incline_accelerates_at_g_sin30():
    th = math.radians(30)
    axis = (math.cos(th), 0.0, -math.sin(th))
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    w.add_body("slider", Box((0.2, 0.1, 0.05)), mass=1.0, position=(0, 0, 0))
    w.add_joint("rail", "prismatic", "world", "slider", anchor=(0, 0, 0), axis=axis)
    t = 1.0
    w.advance(t)
    s = w.joint("rail").angle
    assert 2 * s / t ** 2 == pytest.approx(G * math.sin(th), rel=0.01)


def test_prismatic_limit_stops_slider():
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    w.add_body("slider", Box((0.2, 0.1, 0.05)), mass=1.0, position=(0, 0, 0))
    w.add_joint("rail", "prismatic", "world", "slider", anchor=(0, 0, 0), axis=(0, 0, -1), limits=(-0.1, 0.25))
    w.advance(2.0)
    assert w.joint("rail").angle == pytest.approx(0.25, abs=0.005)


def test_universal_joint_axes_stay_perpendicular():
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    w.add_body("link", Box((0.05, 0.05, 0.3)), mass=1.0, position=(0, 0, -0.3))
    w.add_joint("cross", "universal", "world", "link", anchor=(0, 0, 0), axis=(1, 0, 0), axis2=(0, 1, 0))
    w.body("link").velocity = (1.0, 0.7, 0.0)
    w.body("link").angular_velocity = (0.0, 0.0, 3.0)   # spin about the link: the joint must carry it
    worst = 0.0
    for _ in range(1000):
        w.advance_steps(3)
        worst = max(worst, abs(w.work.rows.C[w.model.joints.row_start[0] + 3]))
    assert worst < math.radians(1.0)        # cos of the angle between the axes


@pytest.mark.parametrize("dof", [0, 1])
def test_universal_limits_hold(dof):
    w = World(dt=0.003, settings={"penalty_preset": "critical"}, gravity=(0, 0, 0))
    w.add_body("link", Box((0.1, 0.1, 0.3)), mass=1.0, position=(0, 0, -0.3))
    w.add_joint("cross", "universal", "world", "link", anchor=(0, 0, 0), axis=(1, 0, 0), axis2=(0, 1, 0),
                limits=(-0.3, 0.5), limits2=(-0.4, 0.2))
    axis = (1.0, 0, 0) if dof == 0 else (0, 1.0, 0)
    w.body("link").torque = tuple(5.0 * a for a in axis)
    w.advance(3.0)
    hi = 0.5 if dof == 0 else 0.2
    assert w.joint("cross").q[dof] == pytest.approx(hi, abs=math.radians(2))


def test_spherical_swing_cone_and_twist_limits_hold():
    w = World(dt=0.003, settings={"penalty_preset": "critical"}, gravity=(0, 0, 0))
    w.add_body("link", Box((0.1, 0.1, 0.3)), mass=1.0, position=(0, 0, -0.3))
    w.add_joint("ball", "spherical", "world", "link", anchor=(0, 0, 0), axis=(0, 0, -1),
                swing=math.radians(40), twist=(math.radians(-20), math.radians(30)))
    w.body("link").torque = (3.0, 0.0, -2.0)            # swing about x and twist about -z
    w.advance(3.0)
    swing, twist, _ = w.joint("ball").q
    assert swing == pytest.approx(math.radians(40), abs=math.radians(2))
    assert twist == pytest.approx(math.radians(30), abs=math.radians(2))


def test_fixed_joint_holds_cantilever():
    w = World(dt=0.003, settings={"penalty_preset": "critical"})
    w.add_body("beam", Box((0.3, 0.05, 0.05)), mass=1.0, position=(0.3, 0, 0))
    w.add_joint("weld", "fixed", "world", "beam", anchor=(0, 0, 0))
    w.advance(2.0)
    assert w.max_constraint_error() < 0.01
    assert np.linalg.norm(w.body("beam").velocity) < 1e-3


def test_same_scene_same_steps_same_state():
    states = []
    for _ in range(2):
        w = World(dt=0.003, settings={"penalty_preset": "critical"})
        make_chain(w, links=5, joint="spherical")
        w.advance(0.5)
        states.append(w.state.bodies.pos.copy())
    assert np.array_equal(states[0], states[1])


# ---------------------------------------------------------------- the stiff preset (implicit)
SCENES = sorted((Path(__file__).resolve().parent.parent / "scenes").glob("*.toml"))


def _door(friction=20.0):
    """Seed 001's door (scenes/door.toml) on its friction hinge, no gravity torque about z."""
    w = World(dt=0.01)                               # penalty, its default (stiff) preset
    w.add_body("door", Box((0.45, 0.02, 1.0)), mass=26.4, position=(0.45, 0, 1.01))
    w.add_joint("hinge", "revolute", "world", "door", anchor=(0, 0, 1.01), axis=(0, 0, 1), friction=friction)
    return w


def test_the_stiff_preset_is_the_default():
    assert World().solver == "penalty" and World().solver_settings("penalty")["penalty_preset"] == "stiff"


def test_door_coasting_from_2_rad_s_stops_at_the_exact_coulomb_time_and_stays():
    # I about the hinge = m(w² + t²)/12 + m(w/2)²; 20 N·m of Coulomb friction stop
    # ω0 = 2 rad/s at t = I ω0/τ = 0.7132 s. Measured: |ω| < 1e-3 from 0.72 s (the end of
    # the step in which the exact solution stops), then 1e-13 rad/s.
    w = _door()
    m, width, thick = 26.4, 0.9, 0.04
    inertia = m * (width ** 2 + thick ** 2) / 12 + m * (width / 2) ** 2
    t_exact = inertia * 2.0 / 20.0
    w.body("door").angular_velocity = (0, 0, 2.0)
    w.body("door").velocity = (0, 2.0 * width / 2, 0)
    hinge = w.joint("hinge")
    t_stop, rates = None, []
    while w.time < 1.5:
        w.step()
        if t_stop is None and abs(hinge.rate) <= 1e-3:
            t_stop = w.time
        if t_stop is not None:
            rates.append(abs(hinge.rate))
    assert t_stop == pytest.approx(t_exact, rel=0.02)
    assert max(rates) <= 1e-3 and not hinge.sliding
    # while it coasts the friction torque is exactly the bound, against the motion
    w = _door()
    w.body("door").angular_velocity = (0, 0, 2.0)
    w.body("door").velocity = (0, 0.9, 0)
    w.advance(0.3)
    assert hinge.sliding or w.joint("hinge").sliding
    assert w.joint("hinge").friction_torque == pytest.approx(20.0, rel=1e-9)
    assert w.joint("hinge").rate == pytest.approx(2.0 - 20.0 / inertia * 0.3, rel=2e-3)


def test_door_coasts_at_constant_rate_with_no_torque_once_its_friction_is_switched_off():
    # a run without friction or motors clears the drives once (penalty_run): the last
    # run's clamped 20 N·m must not act or be reported; about the vertical hinge no other
    # torque acts, so the rate stays where friction left it (20 N·m would take 0.84 rad/s
    # off in 0.3 s; backward Euler's damping of the stiff hinge rows takes 5e-6 rad/s)
    w = _door()
    w.body("door").angular_velocity = (0, 0, 2.0)
    w.body("door").velocity = (0, 0.9, 0)
    w.advance(0.3)
    hinge = w.joint("hinge")
    assert hinge.friction_torque == pytest.approx(20.0, rel=1e-9)
    rate = hinge.rate
    hinge.friction = 0.0
    w.advance(0.3)
    assert hinge.friction_torque == 0.0
    assert hinge.rate == pytest.approx(rate, abs=1e-4)

def test_door_scene_under_penalty_stops_when_and_where_seed_001_says():
    world = physics.load_scene(SCENES[[p.stem for p in SCENES].index("door")], {"solver.kind": "penalty"})
    hinge = world.joint("hinge")
    t_stop = None
    while world.time < 1.5:
        world.step()
        if t_stop is None and world.time > 0.4 and abs(hinge.rate) <= 1e-3:
            t_stop = world.time
    assert t_stop == pytest.approx(0.87, abs=0.02)
    assert math.degrees(hinge.angle) == pytest.approx(37.62, abs=0.5)


def test_friction_above_the_load_holds_a_joint_still():
    # a 2 kg plate on a horizontal hinge, gravity torque m g d = 5.9 N·m < 8 N·m friction
    w = World(dt=0.005)
    w.add_body("plate", Box((0.3, 0.02, 0.2)), mass=2.0, position=(0.3, 0, 0))
    w.add_joint("hinge", "revolute", "world", "plate", anchor=(0, 0, 0), axis=(0, 1, 0), friction=8.0)
    w.advance(2.0)
    assert abs(w.joint("hinge").angle) < 1e-4 and abs(w.joint("hinge").rate) < 1e-5
    assert w.joint("hinge").friction_torque == pytest.approx(2.0 * G * 0.3, rel=1e-3)


def test_ball_joint_friction_stops_an_oblique_spin_along_its_axis():
    # a sphere on a spherical joint at its centre: Coulomb ball ‖τ‖ ≤ 1 N·m against the
    # spin about (1, 1, 1)/√3; I = 2/5 m r² = 0.1 kg·m², ω0 = 5 rad/s: stops at 0.5 s
    w = World(dt=0.005, gravity=(0, 0, 0))
    w.add_body("ball", Sphere(0.5), mass=1.0)
    w.add_joint("socket", "spherical", "world", "ball", anchor=(0, 0, 0), friction=1.0)
    axis = np.ones(3) / math.sqrt(3)
    w.body("ball").angular_velocity = 5.0 * axis
    w.advance(0.25)
    omega = w.body("ball").angular_velocity
    assert np.linalg.norm(omega) == pytest.approx(2.5, rel=1e-3)
    assert np.allclose(omega / np.linalg.norm(omega), axis, atol=1e-6)
    w.advance(0.3)
    assert np.linalg.norm(w.body("ball").angular_velocity) < 1e-3


def test_velocity_motor_spins_a_wheel_up_at_its_torque_limit_then_holds_the_speed():
    # I = 2/5 m r² = 0.18 kg·m², 5 N·m: 27.8 rad/s² until 10 rad/s (t = 0.36 s)
    w = World(dt=0.01, gravity=(0, 0, 0))
    w.add_body("wheel", Sphere(0.3), mass=5.0)
    w.add_joint("axle", "revolute", "world", "wheel", anchor=(0, 0, 0), axis=(0, 0, 1))
    w.joint("axle").set_motor("velocity", target=10.0, max_force=5.0)
    w.advance(0.2)
    assert w.joint("axle").rate == pytest.approx(5.0 / 0.18 * 0.2, rel=1e-3)
    assert w.joint("axle").friction_torque == pytest.approx(5.0, rel=1e-9)
    w.advance(0.8)
    assert w.joint("axle").rate == pytest.approx(10.0, abs=1e-3)
    assert w.joint("axle").friction_torque < 1e-6


def test_position_servo_far_from_its_target_turns_at_its_torque_limit():
    # a wheel (I = 0.18 kg·m²) told to go to 2 rad with at most 1 N·m: it turns at the
    # bound, θ = ½ (τ/I) t²; too weak to brake in time, it then swings about the target
    # (bang-bang) without gaining energy
    w = World(dt=0.005, gravity=(0, 0, 0))
    w.add_body("wheel", Sphere(0.3), mass=5.0)
    w.add_joint("axle", "revolute", "world", "wheel", anchor=(0, 0, 0), axis=(0, 0, 1))
    w.joint("axle").set_motor("position", target=2.0, max_force=1.0)
    w.advance(0.3)
    assert w.joint("axle").angle == pytest.approx(0.5 / 0.18 * 0.3 ** 2, rel=2e-2)
    assert w.joint("axle").friction_torque == pytest.approx(1.0, rel=1e-9)
    for _ in range(100):
        w.advance(0.05)
        assert -0.01 < w.joint("axle").angle < 4.01 and w.joint("axle").friction_torque <= 1.0 + 1e-9


def test_a_bent_kuka_s_servos_hold_their_targets_for_ten_seconds():
    # position servos (30 Hz, ζ = 1, the URDF's effort limits) holding the KUKA bent
    # against gravity: within 1° once there, never beyond their torque limits
    kuka = Path(__file__).resolve().parent.parent / "assets" / "robots" / "kuka_iiwa" / "model.urdf"
    world = physics.load_scene(kuka, {"joint.lbr_iiwa/lbr_iiwa_joint_2.q_deg": "50",
                                      "joint.lbr_iiwa/lbr_iiwa_joint_4.q_deg": "-60", "solver.kind": "penalty"})
    servos = [j for j in world.joints if j.motor["mode"] == "position"]
    assert len(servos) == 7
    worst = 0.0
    while world.time < 10.0 - 1e-9:
        world.advance_steps(10)
        if world.time >= 1.0:
            worst = max(worst, max(abs(j.angle - j.motor["target"]) for j in servos))
        for j in servos:
            assert j.friction_torque <= j.motor["max_force"] * (1 + 1e-9)
    assert math.degrees(worst) <= 1.0


def _rope_attachment_gap(world):
    """Largest distance (m) between a rope node attached to a body and its anchor point."""
    from physics.quat import q_rotate
    gap = 0.0
    for rope in world.ropes.values():
        for at in rope.attachments.values():
            if at["body"] >= 0:
                i = at["body"]
                anchor = world.state.bodies.pos[i] + q_rotate(world.state.bodies.quat[i], at["point"])
                gap = max(gap, float(np.linalg.norm(rope.positions[at["node"]] - anchor)))
    return gap


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_every_scene_runs_ten_seconds_under_penalty_with_joints_and_ropes_within_a_centimetre(path):
    # each scene's own Δt, the default (stiff) preset, sampled every step: joint errors
    # (m or rad) and rope attachments. Measured: chain 1.0e-3, door 4e-5, gallery 8e-5,
    # rope_tow 2e-4 (joints) and 4.8e-3
    # (the rope's end on the robot; 4.9e-3 under impulse)
    world = physics.load_scene(path, {"solver.kind": "penalty"})
    worst = 0.0
    for _ in range(int(round(10.0 / world.dt))):
        world.step()
        worst = max(worst, world.max_constraint_error(), _rope_attachment_gap(world))
    assert worst <= 0.01
    assert np.all(np.isfinite(world.state.bodies.pos))


def test_a_hundred_link_hinge_chain_at_3_ms_stays_together_for_ten_seconds():
    # the chain the explicit presets cannot hold (paper blows up, critical opens 6-38 cm);
    # measured: largest gap 1.4e-3 m (the tip's whip crack at t = 4.4 s, ω ≈ 290 rad/s)
    w = World(dt=0.003)
    make_chain(w, links=100)
    worst = 0.0
    for _ in range(1000):
        w.advance_steps(3)
        worst = max(worst, w.max_constraint_error())
    assert worst <= 0.01


@pytest.mark.parametrize("scene", ["xarm_pick", "rope_tow"])
def test_a_restored_state_replays_bit_for_bit_with_friction_motors_and_limits(scene):
    # the active set of friction and motor bounds starts from the last step's forces,
    # which are state (rows' impulses): a rewind replays exactly
    world = physics.load_scene(SCENES[[p.stem for p in SCENES].index(scene)], {"solver.kind": "penalty"})
    world.advance(0.5)
    saved = world.save_state()
    world.advance(0.5)
    first = world.state.bodies.pos.copy(), world.state.bodies.vel.copy()
    world.restore_state(saved)
    world.advance(0.5)
    assert np.array_equal(world.state.bodies.pos, first[0]) and np.array_equal(world.state.bodies.vel, first[1])


def test_stiff_preset_swings_a_small_bob_on_a_long_arm_with_the_exact_period_and_energy():
    # r = L/40, out of reach of the explicit presets at 3 ms; 0.5 rad amplitude:
    # T = T0 · 2K(sin(θ0/2))/π, T0 = 2π√((L² + 2/5 r²)/(gL)). Measured: 1e-5 relative,
    # energy +0.03 % over 20 s (the bound: 0.1 %)
    L, th, r = 4.0, 0.5, 0.1
    w = World(dt=0.003)
    w.add_body("bob", Sphere(r), mass=1.0, position=(L * math.sin(th), 0, -L * math.cos(th)))
    w.add_joint("hinge", "revolute", "world", "bob", anchor=(0, 0, 0), axis=(0, 1, 0))
    e0 = w.energy()
    ts, xs = _swing(w, "bob", 6000)
    a, b = 1.0, math.sqrt(1.0 - math.sin(th / 2) ** 2)          # K(k) by the arithmetic-geometric mean
    for _ in range(30):
        a, b = (a + b) / 2, math.sqrt(a * b)
    expected = 2 * math.pi * math.sqrt((L * L + 0.4 * r * r) / (G * L)) / a
    assert _period_from_crossings(ts, xs) == pytest.approx(expected, rel=1e-4)
    assert abs(w.energy() - e0) < 1e-3 * abs(e0)


def test_stiff_preset_holds_a_closed_loop_of_joints():
    # a square of four bars, revolute at the corners, hung from the world: a loop among
    # dynamic bodies, so the block Cholesky fills in (two fill blocks). Its first step
    # removes the push's velocity component the loop forbids (0.8 J, as the impulse
    # solver does); after it, energy stays within 2 % and every joint within 0.1 mm
    w = World(dt=0.005)
    w.add_body("A", Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, 0, 0))
    w.add_body("B", Box((0.02, 0.02, 0.5)), mass=1.0, position=(1, 0, -0.5))
    w.add_body("C", Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, 0, -1))
    w.add_body("D", Box((0.02, 0.02, 0.5)), mass=1.0, position=(0, 0, -0.5))
    w.add_joint("top", "revolute", "world", "A", anchor=(0.5, 0, 0), axis=(0, 1, 0))
    for name, a, b, p in (("ab", "A", "B", (1, 0, 0)), ("bc", "B", "C", (1, 0, -1)), ("cd", "C", "D", (0, 0, -1)),
                          ("da", "D", "A", (0, 0, 0))):
        w.add_joint(name, "revolute", a, b, anchor=p, axis=(0, 1, 0))
    w.body("C").velocity = (2.0, 0, 0)
    w.step()
    assert (w.solvers["penalty"].plan(w).pair_target >= 0).sum() == 2
    e1, worst = w.energy(), 0.0
    for _ in range(1000):
        w.step()
        worst = max(worst, w.max_constraint_error())
        assert abs(w.energy() - e1) < 0.02 * 1.2
    assert worst < 1e-4


# ---------------------------------------------------------------------------- stiff contacts
SCENE_DIR = Path(__file__).resolve().parent.parent / "scenes"


def test_stiff_contact_box_on_the_ground_sinks_m_g_over_k_below_a_millimetre():
    """The stiff preset's contact springs are implicit: a 2 kg box resting on the ground at
    Δt = 10 ms sinks depth = m g / k with k = m ω², ω = κ_c/Δt (κ_c = CONTACT_STIFF_KAPPA
    = 10): g (Δt/κ_c)² = 9.8 µm (1 %), far below 1 mm, and stops."""
    from physics.solvers.penalty import CONTACT_STIFF_KAPPA
    dt, m = 0.01, 2.0
    w = World(dt=dt, solver="penalty")
    w.add_body("ground", physics.Plane(), static=True)
    box = w.add_body("box", Box((0.1, 0.1, 0.1)), mass=m, position=(0, 0, 0.1))
    w.advance(1.0)
    k = m * (CONTACT_STIFF_KAPPA / dt) ** 2
    depth = 0.05 - box.position[2] + 0.05
    assert depth == pytest.approx(m * G / k, rel=0.01)
    assert depth <= 1e-3
    assert np.linalg.norm(box.velocity) < 1e-6


def test_stiff_contact_tower_of_six_boxes_stands_at_its_resting_heights():
    """scenes/stack.toml's tower (six 2 kg boxes of 0.3 m) under penalty for 2 s: each box
    stays within 5 mm of its resting height 0.15 + 0.3 i (the bottom pair carries 6 m g:
    6 g (Δt/κ_c)² = 0.06 mm; each box-box pair, m_eff = m/2, closes by 2 n g (Δt/κ_c)²),
    within 5 mm of its place and upright (its z axis within 1° of vertical)."""
    w = physics.load_scene(SCENE_DIR / "stack.toml")
    w.solver = "penalty"
    w.advance(2.0)
    for i in range(6):
        b = w.body(f"tower_{i}")
        assert b.position[2] == pytest.approx(0.15 + 0.3 * i, abs=5e-3)
        assert np.hypot(b.position[0] + 0.9, b.position[1] + 1.0) < 5e-3
        x, y, z, s = b.orientation
        up_z = 1.0 - 2.0 * (x * x + y * y)             # the body z axis' vertical component
        assert up_z > math.cos(math.radians(1.0))


def test_stiff_contact_door_push_turns_the_door_as_the_impulse_push():
    """scenes/door_push.toml under penalty: the paddle (0.5 kg, 53.03 N·m) pushes the door
    through a contact for 0.33 s and the door coasts against its 20 N·m friction to rest at
    37.62° (the scene's closed form; impulse and lcp: 37.6°) — here 37.71°: within 5 %."""
    w = physics.load_scene(SCENE_DIR / "door_push.toml")
    w.solver = "penalty"
    w.advance(3.0)
    hinge = w.joint("hinge")
    assert math.degrees(hinge.angle) == pytest.approx(37.62, rel=0.05)
    assert abs(hinge.rate) < 1e-3


def test_stiff_contact_four_bar_comes_to_rest_on_the_wall_without_passing_through():
    """scenes/four_bar.toml under penalty: bar 1 (0.1 kg, driven by 10 N·m) hits the wall and
    rests on it. Its tip (the joint a, 0.2 m from the pivot at x = 0) touches the wall at
    x = −0.06 (the cap's radius added): it never goes more than 5 mm beyond, and after
    2 s it rests there (its angle moves < 10⁻⁶ rad over the third second, the 50 N push
    closing the spring k = m ω² = 10⁵ N/m by 0.5 mm). The scene projects the loop closed
    after each step (post_projection): the joints' springs, deflected by the load, are
    closed again each step, so the rate readout keeps a residual 2.4e-3 rad/s at rest."""
    w = physics.load_scene(SCENE_DIR / "four_bar.toml")
    w.solver = "penalty"
    bar1 = w.body("bar1")
    worst = 0.0
    for _ in range(200):
        w.step()
        tip_x = 2.0 * bar1.position[0]                  # the pivot is at x = 0, the centre halfway
        worst = max(worst, -0.06 - tip_x)
    assert worst < 5e-3
    assert -0.06 - 2.0 * bar1.position[0] > -1e-3      # touching the wall, not bounced off
    angle = w.joint("ground_a").angle
    w.advance_steps(100)
    assert abs(w.joint("ground_a").angle - angle) < 1e-6


@pytest.mark.parametrize("pairs", [
    [(i, i + 1) for i in range(8)],                                       # a chain: the written-out node pairs
    [(i, i + 1) for i in range(6)] + [(6, 7), (7, 8), (8, 6), (2, 7)],    # loops: fill blocks, generic nodes
])
def test_block_ldl_factor_solves_the_implicit_system_exactly(pairs):
    """The implicit step's block LDLᵀ (factor_solve; factor then solve) gives the dense
    solution of a random symmetric positive definite system with the joints' block
    pattern, to round-off."""
    from physics.solvers.penalty import elimination_plan, factor, factor_solve, solve
    rng = np.random.default_rng(7)
    n = 1 + max(max(p) for p in pairs)
    plan = elimination_plan(n, np.ones(n, bool), pairs)
    body_node, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target = (plan[0], plan[2], plan[3], plan[4],
                                                                           plan[5], plan[6], plan[7])
    A = np.zeros((6 * n, 6 * n))
    for i in range(n):
        R = rng.normal(size=(6, 6))
        A[6 * i:6 * i + 6, 6 * i:6 * i + 6] += R @ R.T + 0.5 * np.eye(6)
    for a, b in pairs:
        J = rng.normal(size=(5, 12)) * 3.0
        idx = np.r_[6 * a:6 * a + 6, 6 * b:6 * b + 6]
        A[np.ix_(idx, idx)] += J.T @ J
    perm = np.concatenate([np.arange(6 * i, 6 * i + 6) for i in np.argsort(body_node)])
    An = A[np.ix_(perm, perm)]                               # node order
    diag = np.array([An[6 * k:6 * k + 6, 6 * k:6 * k + 6].ravel() for k in range(n)])
    offd = np.zeros((len(up_node), 36))
    for k in range(n):
        for s in range(up_ptr[k], up_ptr[k + 1]):
            m = up_node[s]
            offd[s] = An[6 * m:6 * m + 6, 6 * k:6 * k + 6].ravel()
    b = rng.normal(size=(n, 6))
    exact = np.linalg.solve(An, b.ravel()).reshape(n, 6)
    scale = np.abs(exact).max()
    x, d, o = b.copy(), diag.copy(), offd.copy()
    factor_solve(d, o, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, x)
    assert np.abs(x - exact).max() <= 1e-10 * scale
    d, o = diag.copy(), offd.copy()
    factor(d, o, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)
    x = b.copy()
    solve(d, o, up_ptr, up_node, x)
    assert np.abs(x - exact).max() <= 1e-10 * scale
