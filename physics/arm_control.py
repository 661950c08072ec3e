"""A Cartesian target for a robot arm: damped least squares on its geometric Jacobian.

    arm = attach_arm(world, world.robots["arm"], tip="lbr_iiwa_link_7", tip_offset=(0, 0, 0.045))
    arm.set_target((0.5, 0.2, 0.8))          # the tip point goes there (and stays)
    arm.gripper(open=False)                  # a robot with a gripper joint closes it
    arm.home()                               # back to the robot's initial joint positions

Each control tick (World.add_controller: between kernel calls, never inside a step) the
arm reads its joints' world anchors and axes and the tip's pose, builds the geometric
Jacobian (a revolute column [a × (x − p); a], a prismatic one [a; 0]) and solves the
damped least-squares step (Wampler 1986; Nakamura & Hanafusa 1986; survey: Buss 2004,
"Introduction to inverse kinematics with Jacobian transpose, pseudoinverse and damped
least squares methods")

    Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e,     e = k·h·(x* − x̂) + (x*(t + h) − x*(t))

(h the tick, k the gain, x̂ the tip predicted below; rows of the orientation error,
weighted by ROT_WEIGHT, when the target has a rotation)

then adds Δq to the joints' position-servo targets (the World's motors: the servos do
the dynamics). Summed on the targets, the steps integrate the measured miss away (the
servos' sag under gravity included); the error is taken from the tip predicted
`lookahead` s ahead, x̂ = x + J q̇ T, a damping term that keeps the servos' lag from
making the loop ring (with gain·lookahead below 1: servos that follow a target within a
tick turn it into −gain·T times the last tick's step, and at 1 it undoes every step, a
ring at half the tick rate); a program's own motion is fed forward. The arm keeps no state of
its own (its command is the motors' targets): a restored World state replays alike. Joint limits:
a joint whose target would pass a limit is clamped there and its column removed, and the
rest solved again (clamping). A redundant arm (more joints than task rows)
drifts towards its home pose in the Jacobian's null space. The task error is capped by
`max_speed`·h, each joint's step by its URDF velocity limit·h, and a target stays within
MAX_LEAD of the measured joint position (no windup against an obstacle).
"""
import bisect
import math

import numpy as np

from .arm_ik import ArmChain, ArmGains, arm_jacobian, dls_command, tip_point
from .io.urdf import MOVABLE, inverse, principal_frame, _fuse
from .joint_rows import MOTOR_POSITION
from .quat import q_conj, q_from_axis_angle, q_from_matrix, q_mul, q_to_matrix

ROT_WEIGHT = 0.2        # m per rad: how orientation errors count against position errors
MAX_LEAD = 0.3          # rad or m: a joint's target at most this far from where the joint is


def _rotvec(q):
    """Rotation vector (axis·angle, rad) of a unit quaternion [x, y, z, w]."""
    v, w = np.asarray(q[:3], float), float(q[3])
    if w < 0.0:
        v, w = -v, -w
    s = float(np.linalg.norm(v))
    if s < 1e-12:
        return 2.0 * v
    return v * (2.0 * math.atan2(s, w) / s)


def link_frames(robot):
    """{URDF link: (body name, 4×4 link frame in the body's frame)} (bodies sit at the
    link's centre of mass on its principal axes; fused links at their carrier's)."""
    model = robot.model
    carrier, offset, _ = _fuse(model)
    out = {}
    for link, car in carrier.items():
        body = robot.bodies[link]
        lk = model.links[car]
        if robot.fixed_base and (car == model.root or car not in _moving(robot)):
            frame = np.eye(4)
        else:
            rot, _ = principal_frame(lk.inertia)
            frame = lk.inertial.copy()
            frame[:3, :3] = lk.inertial[:3, :3] @ rot
        out[link] = (body, inverse(frame) @ offset[link])
    return out


def _moving(robot):
    """Carrier links that move (not welded to a fixed base)."""
    model = robot.model
    carrier, _, kept = _fuse(model)
    static = {model.root} if robot.fixed_base else set()
    for j, _ in kept:
        if j.kind == "fixed" and carrier[j.parent] in static:
            static.add(j.child)
    return {c for c in set(carrier.values()) if c not in static}


def chain_to(robot, link):
    """The robot's movable joints from its root to `link`, root first (URDF names)."""
    by_child = {j.child: j for j in robot.model.joints.values()}
    out = []
    while link in by_child:
        j = by_child[link]
        if j.kind in MOVABLE and j.name in robot.joints:
            out.append(j.name)
        link = j.parent
    return out[::-1]


class Arm:
    """A Cartesian target for one robot (see the module docstring).

    tip, tip_offset: the controlled point, on a URDF link (m, in the link's frame).
    gripper: a URDF joint that opens/closes (its mimic followers follow: coupling rows), with its
    positions `gripper_open`, `gripper_closed` and the servo force while gripping.
    period: s between control ticks. gain: 1/s (task-space time constant 1/gain).
    damping: λ of the DLS step (m). max_speed: m/s of the tip's commanded motion.
    lookahead: s; the error is taken from the tip predicted this far ahead."""

    def __init__(self, world, robot, tip, tip_offset=(0.0, 0.0, 0.0), gripper=None, gripper_open=None,
                 gripper_closed=None, gripper_force=None, period=0.01, gain=20.0, damping=0.05, max_speed=1.0,
                 lookahead=0.04):
        if tip not in robot.model.links:
            raise ValueError(f"robot {robot.name!r}: no link {tip!r} (tip)")
        self.world, self.robot, self.tip_link = world, robot, tip
        self.names = chain_to(robot, tip)
        if not self.names:
            raise ValueError(f"robot {robot.name!r}: no movable joint between the root and {tip!r}")
        self.joints = [world.joint(robot.joints[j]) for j in self.names]
        body, frame = link_frames(robot)[tip]
        self.tip_body = world.body(body)
        self.tip_local = frame[:3, :3] @ np.asarray(tip_offset, float) + frame[:3, 3]    # body frame
        self.tip_rot = frame[:3, :3]
        lo, hi = [], []
        for j in self.names:
            spec = robot.model.joints[j]
            lo.append(-math.inf if spec.lower is None or spec.kind == "continuous" else spec.lower)
            hi.append(math.inf if spec.upper is None or spec.kind == "continuous" else spec.upper)
        self.lo, self.hi = np.array(lo, float), np.array(hi, float)
        self.vmax = np.array([robot.velocity[j] or math.inf for j in self.names], float)
        self.revolute = np.array([robot.model.joints[j].kind != "prismatic" for j in self.names])
        self.home_q = np.array([robot.initial[j] for j in self.names], float)
        self.command = self.home_q.copy()
        self.period, self.gain, self.damping = float(period), float(gain), float(damping)
        self.max_speed = float(max_speed)
        self.lookahead = float(lookahead)
        self.program, self.program_period = None, None    # set_program's keys and period
        self.target = None                  # world point (m), None: hold the joint targets
        self.target_rotation = None         # 3×3 world rotation of the tip's frame, None: free
        self.gripper_joint = gripper
        if gripper is not None:
            if gripper not in robot.joints or gripper not in robot.initial:
                raise ValueError(f"robot {robot.name!r}: no movable joint {gripper!r} (gripper)")
            spec = robot.model.joints[gripper]
            self.gripper_open = spec.lower if gripper_open is None else float(gripper_open)
            self.gripper_closed = spec.upper if gripper_closed is None else float(gripper_closed)
            self.gripper_force = robot.effort[gripper] if gripper_force is None else float(gripper_force)
            self.gripper_speed = robot.velocity[gripper] or math.inf
            self.gripper_closed_now = False
        self.index = np.array([j.index for j in self.joints])
        self.driven = [j.index for j in self.joints]      # motors it sets (World.restore_state restores them)
        if gripper is not None:
            self.driven.append(world.joint(robot.joints[gripper]).index)
            self._gripper_index = world.joint(robot.joints[gripper]).index
        # the joints' axes and anchors in their child bodies' frames (fixed by the URDF): the
        # Jacobian turns them into the world with the bodies' present orientations
        mj = world.model.joints
        self._chain = ArmChain(self.index, np.ascontiguousarray(mj.body[self.index, 1], np.int64),
                               np.ascontiguousarray(_rotate(mj.frame_b[self.index], _X)),
                               np.ascontiguousarray(mj.anchor_b[self.index]), self.revolute, self.tip_body.index,
                               self.tip_local, q_from_matrix(self.tip_rot), self.lo, self.hi, self.home_q, self.vmax)
        self._target_q = (None, _NAN4)       # (the rotation matrix it was made from, its quaternion)

    # ------------------------------------------------------------------ readouts
    def q(self):
        """The arm's joint positions (rad or m), root first."""
        self.world._ensure_rows()
        return self.world.state.joints.q[self.index, 0].copy()

    def tip_pose(self):
        """(world point, 3×3 world rotation) of the tip."""
        b = self.tip_body
        R = q_to_matrix(b.orientation)
        return b.position + R @ self.tip_local, R @ self.tip_rot

    def jacobian(self):
        """6×n geometric Jacobian of the tip (rows: linear, angular), from the joints' world
        anchors and axes as they are now (arm_ik.arm_jacobian)."""
        sb = self.world.state.bodies
        x = np.array(tip_point(sb.pos, sb.quat, self._chain.tip, self.tip_local))
        J = np.zeros((6, len(self.index)))
        arm_jacobian(sb.pos, sb.quat, self._chain, x, J)
        return J

    def torques(self):
        """{URDF joint: (servo torque or force now, its effort limit)} (N·m or N)."""
        return {n: (j.friction_torque, self.robot.effort[n]) for n, j in zip(self.names, self.joints)}

    # ------------------------------------------------------------------ commands
    def set_target(self, point, rotation=None):
        """Move the tip to world `point` (m); `rotation` a 3×3 world rotation of the tip's
        frame (or "keep": as it is now; None: free). Stops the program."""
        p = np.asarray(point, float)
        if p.shape != (3,) or not np.isfinite(p).all():
            raise ValueError(f"arm target: expected 3 finite numbers, got {point!r}")
        self.target, self.program = p, None
        if isinstance(rotation, str) and rotation == "keep":
            rotation = self.tip_pose()[1]
        self.target_rotation = None if rotation is None else np.asarray(rotation, float)

    def home(self):
        """Back to the home pose (the robot's initial joint positions); drops the target
        and stops the program."""
        self.target, self.program = None, None
        self.command = self.home_q.copy()
        self._write()

    def set_joint_targets(self, q):
        """Joint-space command (rad or m, the chain's order); drops the Cartesian target
        and stops the program."""
        self.target, self.program = None, None
        self.command = np.clip(np.asarray(q, float), self.lo, self.hi)
        self._write()

    def gripper(self, open=True):
        """Open or close the gripper joint (its mimic followers with it). Closing sets its
        servo's target at once (the grip force is the servo's bound); opening moves the
        target there at the joint's URDF velocity limit, a step per control tick
        (_ramp_gripper): a gripper snapping open at its full force flings what it held."""
        if self.gripper_joint is None:
            raise ValueError(f"robot {self.robot.name!r} has no gripper")
        self.gripper_closed_now = not open
        j = self.world.joint(self.robot.joints[self.gripper_joint])
        mo = j.motor
        start = min(mo["target"], j.angle) if mo["mode"] == "position" else j.angle     # from where it stalled
        j.set_motor("position", start if open else self.gripper_closed, max_force=self.gripper_force,
                    frequency=mo["frequency"], damping=mo["damping"])

    def _ramp_gripper(self):
        """The opening gripper servo's target one tick further towards open (at most the
        joint's velocity limit × period)."""
        c = self.world.control.joints
        i = self._gripper_index
        if c.motor_mode[i] != MOTOR_POSITION or self.gripper_closed_now:
            return
        goal = self.gripper_open
        step = self.gripper_speed * self.period
        c.motor_target[i] += min(max(goal - c.motor_target[i], -step), step)

    def set_program(self, keys, period=None):
        """A motion program: keys [(time s, point or None, 3×3 rotation or None, gripper
        "open"/"closed"/None)], sorted by time; the target moves linearly between points
        (the rotation by slerp) and the gripper switches at its keys; `period` (s) repeats
        the program from its first key."""
        keys = sorted(keys, key=lambda k: k[0])
        if not keys:
            raise ValueError("arm program: no keys")
        if period is not None and not period > keys[-1][0]:
            raise ValueError(f"arm program: period must be after the last key ({keys[-1][0]} s), got {period!r}")
        self.program, self.program_period, self._grip_key = keys, period, None
        self._poses = [k for k in keys if k[1] is not None]
        self._pose_times = [k[0] for k in self._poses]
        self._grips = [(i, k) for i, k in enumerate(keys) if k[3] is not None]
        self._grip_times = [k[0] for _, k in self._grips]

    def _run_program(self, t):
        keys, period = self.program, self.program_period
        if period is not None and t >= period:
            t = (t - keys[0][0]) % (period - keys[0][0]) + keys[0][0]
        poses = self._poses
        if poses and t >= poses[0][0]:
            i = bisect.bisect_right(self._pose_times, t) - 1
            a = poses[i]
            b = poses[i + 1] if i + 1 < len(poses) else a
            s = 0.0 if b is a else (t - a[0]) / (b[0] - a[0])
            point = (1 - s) * np.asarray(a[1], float) + s * np.asarray(b[1], float)
            rot = a[2] if b[2] is None or a[2] is None else _slerp(a[2], b[2], s)
            self.target = point
            self.target_rotation = None if rot is None else np.asarray(rot, float)
        g = bisect.bisect_right(self._grip_times, t)
        if g > 0 and self.gripper_joint is not None:
            i, k = self._grips[g - 1]
            if i != self._grip_key:
                self._grip_key = i
                self.gripper(open=k[3] == "open")

    # ------------------------------------------------------------------ control tick
    def update(self, world=None):
        """One control tick: a DLS step of the joint targets towards the tip target."""
        ahead = None
        if self.program is not None:
            self._run_program(self.world.time + self.period)
            ahead = self.target
            self._run_program(self.world.time)
        if self.gripper_joint is not None:
            self._ramp_gripper()
        if self.target is None:
            return
        w = self.world
        w._ensure_rows()
        sb, sj = w.state.bodies, w.state.joints
        gains = ArmGains(self.period, self.lookahead, self.gain, self.max_speed, self.damping, ROT_WEIGHT, MAX_LEAD)
        dls_command(sb.pos, sb.quat, sj.q, sj.qd, w.control.joints.motor_target, self._chain, gains, self.target,
                    self._target_quaternion(), _NAN3 if ahead is None else ahead, self.command)
        self._write()

    def _target_quaternion(self):
        """The target rotation as a unit quaternion (NaN: none), converted once per matrix."""
        R = self.target_rotation
        if R is None:
            return _NAN4
        if self._target_q[0] is not R:
            self._target_q = (R, q_from_matrix(R))
        return self._target_q[1]

    def _write(self):
        """The command as the joints' position-servo targets (their limits and gains kept)."""
        c = self.world.control.joints
        if np.all(c.motor_mode[self.index] == MOTOR_POSITION) and np.isfinite(self.command).all():
            c.motor_target[self.index] = self.command
            return
        for joint, target in zip(self.joints, self.command):
            mo = joint.motor
            joint.set_motor("position", float(target), max_force=mo["max_force"], frequency=mo["frequency"],
                            damping=mo["damping"])




_X = np.array([1.0, 0.0, 0.0])
_NAN3, _NAN4 = np.full(3, np.nan), np.full(4, np.nan)     # dls_command's "none"


_YZX, _ZXY = np.array([1, 2, 0]), np.array([2, 0, 1])


def _cross(a, b):
    """Row-wise a × b of (n, 3) arrays (np.cross costs several times more on a few rows)."""
    return a[:, _YZX] * b[:, _ZXY] - a[:, _ZXY] * b[:, _YZX]


def _rotate(q, v):
    """Row-wise rotation of v ((n, 3) or (3,)) by the unit quaternions q (n, 4)."""
    u, w = q[:, :3], q[:, 3:]
    v = np.broadcast_to(v, u.shape)
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def _slerp(Ra, Rb, s):
    """The rotation a fraction s of the way from Ra to Rb (3×3)."""
    if np.array_equal(Ra, Rb):
        return np.asarray(Ra, float)
    qa = q_from_matrix(np.asarray(Ra, float))
    rel = _rotvec(q_mul(q_from_matrix(np.asarray(Rb, float)), q_conj(qa)))
    angle = float(np.linalg.norm(rel))
    if angle < 1e-12:
        return np.asarray(Ra, float)
    return q_to_matrix(q_mul(q_from_axis_angle(rel / angle, s * angle), qa))


def attach_arm(world, robot, tip, program=None, program_period=None, **settings):
    """An Arm on `robot` (Arm's arguments), run by `world` every `period` s
    (World.add_controller); `program` its set_program keys. Returns it (also robot.arm)."""
    arm = Arm(world, robot, tip, **settings)
    arm.settings = dict(tip=tip, **settings)
    arm.program_period = program_period
    arm.program_source = None       # [(time, point, rotation_deg, gripper)] as a scene wrote it
    if program is not None:
        arm.set_program(program, program_period)
    robot.arm = arm
    world.add_controller(arm)
    return arm
