"""A robot arm's Cartesian target (physics/arm_control.py): the Jacobian against finite
differences of the kinematics, targets reached or stretched for, the door pushed open by
the KUKA through contact (seed 001's door), the xArm6's pick and place held by friction."""
import math
from pathlib import Path

import numpy as np
import pytest

import physics
from physics import World
from physics.arm_control import Arm, attach_arm
from physics.io.scene import SceneError
from physics.io.urdf import add_robot, read_urdf

ROOT = Path(__file__).resolve().parent.parent
KUKA = ROOT / "assets" / "robots" / "kuka_iiwa" / "model.urdf"
XARM = ROOT / "assets" / "robots" / "xarm6" / "xarm6_with_gripper.urdf"
DOOR = ROOT / "scenes" / "door_robot.toml"
PICK = ROOT / "scenes" / "xarm_pick.toml"
BENT = {"lbr_iiwa_joint_2": 0.6, "lbr_iiwa_joint_4": -1.2, "lbr_iiwa_joint_6": 0.8}
KUKA_TIP = ("lbr_iiwa_link_7", (0.0, 0.0, 0.045))
XARM_READY = {"joint2": math.radians(-20), "joint3": math.radians(-60), "joint5": math.radians(80)}
XARM_TIP = ("xarm_gripper_base_link", (0.0, 0.0, 0.145))
DOWN = np.diag([1.0, -1.0, -1.0])            # the xArm's tip frame pointing down


def _kuka(q=BENT, solver=None, frequency=200.0):
    w = World(dt=0.002, **({"solver": solver} if solver else {}))
    robot = add_robot(w, read_urdf(KUKA), "arm", joint_positions=q, servo={"frequency": frequency})
    return w, robot


def test_jacobian_columns_are_the_tips_finite_differences_on_both_robots():
    # a world built at q and at q ± ε for each joint (no step taken): the tip's motion and
    # the tip frame's rotation against the geometric Jacobian's columns, to O(ε²)
    for path, q0, (tip, off) in ((KUKA, BENT, KUKA_TIP), (XARM, XARM_READY, XARM_TIP)):
        model = read_urdf(path)

        def pose(q):
            w = World()
            arm = Arm(w, add_robot(w, model, "r", joint_positions=q), tip, off)
            return arm, arm.tip_pose()

        arm, _ = pose(q0)
        J = arm.jacobian()
        eps = 1e-6
        for k, name in enumerate(arm.names):
            (_, (xp, Rp)), (_, (xm, Rm)) = (pose({**q0, name: q0.get(name, 0.0) + s * eps}) for s in (1, -1))
            assert np.allclose((xp - xm) / (2 * eps), J[:3, k], atol=1e-7), name
            dR = (Rp - Rm) / (2 * eps) @ Rp.T           # the skew matrix of the angular column
            assert np.allclose([dR[2, 1], dR[0, 2], dR[1, 0]], J[3:, k], atol=1e-6), name


def _dls_reference(arm, target, R_target, lead_s, h, ahead=None):
    """The control tick's joint targets from a dense numpy solve of the formulas in
    physics/arm_control.py's docstring (np.linalg.solve, boolean column masks): the
    reference the kernel (physics/arm_ik.py) is checked against."""
    from physics.arm_control import MAX_LEAD, ROT_WEIGHT, _rotvec
    from physics.quat import q_from_matrix
    w = arm.world
    x, R = arm.tip_pose()
    J = arm.jacobian()
    q, qd = arm.q(), w.state.joints.qd[arm.index, 0]
    lead = qd * lead_s
    e = (target - (x + J[:3] @ lead)) * min(arm.gain * h, 1.0)
    if ahead is not None:
        e = e + ahead - target
    e = e * min(1.0, arm.max_speed * h / np.linalg.norm(e))
    if R_target is not None:
        rv = _rotvec(q_from_matrix(R_target @ R.T)) - J[3:] @ lead
        e = np.concatenate([e, ROT_WEIGHT * rv * min(arm.gain * h, 1.0)])
        J = np.vstack([J[:3], ROT_WEIGHT * J[3:]])
    else:
        J = J[:3]
    base = w.control.joints.motor_target[arm.index].copy()
    n = len(q)
    free, dq = np.ones(n, bool), np.zeros(n)
    for _ in range(n):
        Jf = J[:, free]
        A = Jf @ Jf.T + arm.damping ** 2 * np.eye(len(e))
        dq[:] = 0.0
        dq[free] = Jf.T @ np.linalg.solve(A, e)
        if n > len(e):
            N = np.eye(int(free.sum())) - Jf.T @ np.linalg.solve(A, Jf)
            dq[free] += N @ (0.5 * h * (arm.home_q - base)[free])
        out = free & ((base + dq < arm.lo) | (base + dq > arm.hi))
        if not out.any():
            break
        clamped = np.clip(base + dq, arm.lo, arm.hi)
        e = e - J[:, out] @ (clamped - base)[out]
        base = np.where(out, clamped, base)
        free &= ~out
        if not free.any():
            dq[:] = 0.0
            break
    dq = np.where(free, dq, 0.0)
    dq /= max(1.0, np.max(np.abs(dq) / (arm.vmax * h)))
    return np.clip(np.clip(base + dq, arm.lo, arm.hi), q - MAX_LEAD, q + MAX_LEAD)


@pytest.mark.parametrize("case", ["free", "rotation", "limit"])
def test_the_control_ticks_dls_step_equals_a_dense_solve_of_its_formulas(case):
    # the KUKA (redundant: the null-space drift to home acts) moving, a target 15 cm off
    # (capped by max_speed), with a tip rotation, or behind joint 1's limit (clamping)
    q0 = {**BENT, "lbr_iiwa_joint_1": 2.96} if case == "limit" else BENT
    w, r = _kuka(q=q0)
    arm = attach_arm(w, r, KUKA_TIP[0], tip_offset=KUKA_TIP[1])
    w.advance(0.05)
    x, R = arm.tip_pose()
    if case == "limit":
        angle = math.atan2(x[1], x[0]) + 0.5
        target = np.array([math.hypot(x[0], x[1]) * math.cos(angle), math.hypot(x[0], x[1]) * math.sin(angle), x[2]])
    else:
        target = x + np.array([0.05, 0.1, -0.1])
    R_target = R @ np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]) if case == "rotation" else None
    arm.set_target(target, R_target)
    w.control.joints.motor_target[arm.index] += 0.01 * np.arange(len(arm.index))   # targets off the pose
    expected = _dls_reference(arm, target, R_target, arm.lookahead, arm.period)
    arm.update()
    got = np.array([j.motor["target"] for j in arm.joints])
    assert np.abs(got - expected).max() < 1e-12
    if case == "limit":
        assert got[0] == arm.hi[0]


def _reach(w, arm, target, duration=1.0):
    """The first time (s after the call) from which the tip stays within 2 mm of target
    until `duration`, or None; and the last miss (m)."""
    t0, since, miss = w.time, None, None
    while w.time < t0 + duration - 1e-9:
        w.advance_steps(5)
        miss = float(np.linalg.norm(arm.tip_pose()[0] - target))
        since = (since if since is not None else w.time - t0) if miss <= 2e-3 else None
    return since, miss


@pytest.mark.parametrize("solver", ["impulse", "lcp", "penalty"])
@pytest.mark.parametrize("robot", ["kuka", "xarm"])
def test_a_target_20_cm_away_is_reached_within_2_mm_in_under_a_second(robot, solver):
    # the servos at 200 Hz (the robot scenes' setting)
    if robot == "kuka":
        w, r = _kuka(solver=solver)
        arm = attach_arm(w, r, KUKA_TIP[0], tip_offset=KUKA_TIP[1])
        step = np.array([0.0, 0.2, 0.0])
    else:
        w = World(dt=0.002, solver=solver)
        r = add_robot(w, read_urdf(XARM), "x", position=(0, 0, 0.1), joint_positions=XARM_READY,
                      servo={"frequency": 200.0})
        arm = attach_arm(w, r, XARM_TIP[0], tip_offset=XARM_TIP[1])
        step = np.array([0.0, -0.12, -0.16])
    w.advance(0.3)                                  # the servos settle on their initial pose
    start, rot = arm.tip_pose()
    arm.set_target(start + step, rot)
    since, miss = _reach(w, arm, start + step, 1.0)
    assert since is not None and since <= 1.0, miss
    assert w.max_constraint_error() < 2e-3


@pytest.mark.parametrize("solver", ["impulse", "penalty"])
def test_an_unreachable_target_stretches_the_arm_towards_it_within_its_limits(solver):
    w, r = _kuka(solver=solver)
    arm = attach_arm(w, r, KUKA_TIP[0], tip_offset=KUKA_TIP[1])
    shoulder = w.snapshot()["joint_anchor"][w.joint("arm/lbr_iiwa_joint_2").index]
    target = np.array([2.5, 1.0, 0.4])
    arm.set_target(target)
    worst = 0.0
    for _ in range(300):
        w.advance_steps(5)
        worst = max(worst, w.max_constraint_error())
    tip = arm.tip_pose()[0]
    # stretched: the tip on the line from the shoulder (joint 2's axis) to the target, as
    # far out as the links reach (0.42 + 0.40 + 0.126 + 0.045 = 0.99 m; measured 0.97 m,
    # 2.4 cm off the line, the arm at rest)
    u = (target - shoulder) / np.linalg.norm(target - shoulder)
    off_line = np.linalg.norm((tip - shoulder) - ((tip - shoulder) @ u) * u)
    assert off_line < 0.05 and (tip - shoulder) @ u > 0.93
    q, cmd = arm.q(), np.array([j.motor["target"] for j in arm.joints])
    assert np.all(cmd >= arm.lo) and np.all(cmd <= arm.hi) and np.all(np.isfinite(q))
    assert worst < 2e-3 and max(np.linalg.norm(b.velocity) for b in w.bodies) < 0.05   # at rest, whole


def test_a_target_behind_a_joint_limit_leaves_that_joint_at_its_limit():
    # the KUKA's joint 1 turns ±170°: a tip target straight behind the base, past the
    # limit the short way round, leaves joint 1's command at the limit, no further
    w, r = _kuka(q={**BENT, "lbr_iiwa_joint_1": 2.8})
    arm = attach_arm(w, r, KUKA_TIP[0], tip_offset=KUKA_TIP[1])
    x = arm.tip_pose()[0]
    angle = math.atan2(x[1], x[0]) + math.radians(40)          # 2.8 + 0.7 rad > 2.967
    radius = math.hypot(x[0], x[1])
    arm.set_target((radius * math.cos(angle), radius * math.sin(angle), x[2]))
    w.advance(2.0)
    assert arm.joints[0].motor["target"] == pytest.approx(arm.hi[0], abs=1e-12)
    assert arm.joints[0].angle == pytest.approx(arm.hi[0], abs=0.01)


# ---------------------------------------------------------------------------- the door
def _door_run(solver, switch_every=None):
    w = physics.load_scene(DOOR, {"solver.kind": solver})
    hinge = w.joint("hinge")
    families = list(w.solvers)
    out = {"gap": 0.0, "friction": [], "stop": None}
    while w.time < 3.0 - 1e-9:
        if switch_every and w.step_count % round(switch_every / w.dt) == 0 and w.time > 0:
            w.solver = families[(families.index(w.solver) + 1) % len(families)]
        w.step()
        out["gap"] = max(out["gap"], w.max_constraint_error())
        touching = any("door" in pair and any(n.startswith("arm/") for n in pair) for pair in _pairs(w))
        if w.time > 1.95 and hinge.rate > 0.05 and not touching:      # coasting, arm pulled away
            out["friction"].append(hinge.friction_torque)
        if out["stop"] is None and w.time > 1.5 and abs(hinge.rate) < 1e-9:
            out["stop"] = w.time
    out["angle"] = math.degrees(hinge.angle)
    out["rate"] = hinge.rate
    return out


def _pairs(w):
    names = [b.name for b in w.body_info]
    return [(names[a], names[b]) for a, b in w.contacts()["bodies"]]


@pytest.mark.parametrize("solver", ["impulse", "lcp", "penalty"])
def test_the_kuka_pushes_the_door_open_through_contact_and_it_coasts_to_rest(solver):
    r = _door_run(solver)
    assert r["angle"] >= 20.0 and r["stop"] is not None and r["stop"] < 2.5 and abs(r["rate"]) < 1e-9
    assert len(r["friction"]) > 20 and np.allclose(r["friction"], 20.0, rtol=1e-6)
    if solver != "penalty":
        assert r["gap"] <= 2e-3


def test_the_door_push_survives_the_solver_switched_live_every_quarter_second():
    r = _door_run("impulse", switch_every=0.25)
    assert r["angle"] >= 20.0 and r["stop"] is not None and r["gap"] < 5e-3


# ---------------------------------------------------------------------------- pick and place
def _pick_world(solver):
    w = physics.load_scene(PICK, {"solver.kind": solver})
    arm = w.robots["xarm"].arm
    A = np.array([0.35, -0.15])
    arm.set_program([(0.0, (*A, 0.30), DOWN, "open"), (1.0, (*A, 0.30), DOWN, None),
                     (1.6, (*A, 0.135), DOWN, None), (1.8, None, None, "closed"), (2.4, (*A, 0.135), DOWN, None),
                     (3.2, (*A, 0.345), DOWN, None)])
    return w, arm


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_the_gripper_closes_on_the_cube_lifts_it_20_cm_and_holds_it_5_s_without_slipping(solver):
    # the drive stalls on the cube (the fingers touch it before their target): friction holds it
    w, arm = _pick_world(solver)
    cube, drive = w.body("cube"), w.joint("xarm/drive_joint")
    w.advance(2.4)
    z0 = cube.position[2]
    assert 0.2 < drive.angle < 0.7                       # stalled on the cube, short of closed (0.85)
    names = {n for pair in _pairs(w) if "cube" in pair for n in pair}
    assert any(n.startswith("xarm/left_") for n in names) and any(n.startswith("xarm/right_") for n in names)
    w.advance(1.3)                                       # up 20.5 cm by 3.2 s, then held there
    assert cube.position[2] - z0 >= 0.2 - 2e-3
    x, R = arm.tip_pose()
    held = R.T @ (cube.position - x)
    worst = 0.0
    for _ in range(50):
        w.advance(0.1)
        x, R = arm.tip_pose()
        worst = max(worst, float(np.linalg.norm(R.T @ (cube.position - x) - held)))
    assert worst <= 1e-3 and w.max_constraint_error() <= 2e-3


def test_the_pick_and_place_loop_runs_a_minute_without_dropping_the_cube():
    # the scene's own 12 s program, impulse: whenever the tip carries the cube (lift to
    # set-down) the cube is between the fingers; it ends each place at A or in the tray
    w = physics.load_scene(PICK)
    arm, cube = w.robots["xarm"].arm, w.body("cube")
    carried, placed, worst_gap = 0, 0, 0.0
    while w.time < 60.0 - 1e-9:
        w.advance_steps(5)
        worst_gap = max(worst_gap, w.max_constraint_error())
        t = round(w.time % 12.0, 6)
        if 3.2 <= t <= 4.8 or 8.4 <= t <= 10.0:
            assert np.linalg.norm(cube.position - arm.tip_pose()[0]) < 0.02, w.time
            carried += 1
        if t in (6.0, 0.0):                 # set down in the tray (its floor 13 × 13 cm inside), or at A
            spot, half = ((0.35, 0.18, 0.135), 0.04) if t == 6.0 else ((0.35, -0.15, 0.125), 0.03)
            assert np.all(np.abs(cube.position - spot) < (half, half, 2e-3)), w.time
            placed += 1
    assert carried > 1500 and placed == 10 and worst_gap <= 2e-3


def test_the_gripper_opens_at_its_velocity_limit_and_leaves_the_cube_where_it_set_it_down():
    # the program opens over the tray at 5.2 s: the drive joint turns at its URDF velocity
    # limit (2 rad/s, measured over control ticks; a servo let go at full force snaps open
    # several times faster and can fling the cube), and the cube stays where it was set down
    w = physics.load_scene(PICK)
    arm, cube = w.robots["xarm"].arm, w.body("cube")
    drive = w.joint("xarm/drive_joint")
    w.advance(5.2)
    p0, q0 = cube.position.copy(), cube.orientation.copy()
    fastest, last = 0.0, drive.angle
    while w.time < 5.6 - 1e-9:
        w.advance_steps(5)
        fastest, last = max(fastest, (last - drive.angle) / (5 * w.dt)), drive.angle
    assert drive.motor["target"] == arm.gripper_open and drive.angle == pytest.approx(arm.gripper_open, abs=0.005)
    assert 1.8 < fastest < 2.0 * 1.3         # the servo catching up its ramp as the squeeze lets go
    assert np.linalg.norm(cube.position - p0) < 5e-3
    assert abs(q0 @ cube.orientation) > math.cos(math.radians(1.0))     # turned by < 2°


def test_a_restored_state_replays_the_arm_bit_for_bit():
    w = physics.load_scene(PICK)
    w.advance(1.7)
    saved = w.save_state()
    w.advance(1.0)
    first = w.state.bodies.pos.copy()
    w.restore_state(saved)
    w.advance(1.0)
    assert np.array_equal(w.state.bodies.pos, first)


ARM = '[robots.arm]\ntip = "lbr_iiwa_link_7"\n'


@pytest.mark.parametrize("edit, key", [
    ('[robots.arm]\ntip = "nosuch"\n', "robots[0].arm.tip"),
    (ARM + 'gripper = "nosuch"\n', "robots[0].arm.gripper"),
    (ARM + "speed = 1\n", "robots[0].arm.speed"),
    (ARM + "[[robots.program]]\ntime = 1.0\n", "robots[0].program[0].target"),
    (ARM + '[[robots.program]]\ntime = 1.0\ntarget = [0, 0, 1]\ngripper = "open"\n', "robots[0].program[0].gripper"),
    (ARM + "program_period = 0.5\n[[robots.program]]\ntime = 1.0\ntarget = [0, 0, 1]\n",
     "robots[0].arm.program_period"),
])
def test_a_bad_arm_table_is_refused_naming_the_key(edit, key, tmp_path):
    text = DOOR.read_text()
    text = text[:text.index("[robots.arm]")].replace('"robots/kuka_iiwa/model.urdf"', f'"{KUKA}"') + edit
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SceneError) as err:
        physics.load_scene(path)
    assert str(err.value).startswith(f"{path}: {key}: expected")


def test_the_pick_survives_the_solver_switched_live_every_half_second():
    # impulse → lcp → penalty → … while the gripper closes, lifts and carries the cube
    w = physics.load_scene(PICK)
    cube, arm = w.body("cube"), w.robots["xarm"].arm
    families = list(w.solvers)
    gap = 0.0
    while w.time < 4.2 - 1e-9:                 # 4.2 s: carried 20 cm up, over the tray
        w.advance(0.5 if w.time < 4.0 - 1e-9 else 0.2)
        w.solver = families[(families.index(w.solver) + 1) % len(families)]
        gap = max(gap, w.max_constraint_error())
    assert np.linalg.norm(cube.position - arm.tip_pose()[0]) < 0.02      # still held
    assert cube.position[2] > 0.3 and gap < 5e-3
