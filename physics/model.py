"""Model, state, control and the row table: the World's arrays, by who changes them.

    Model    what the user edits: bodies' mass properties, joints (type, frames, limits,
             friction, motor strength), the row layout, the couplings between joints
             (a URDF's mimic joints), Δt, gravity. An edit that changes the layout (a
             body, joint, row or coupling added) bumps `version`; the World then tells
             every solver (`model_changed`).
    State    what time changes: poses, velocities, joint readouts, the rows' and couplings'
             accumulated impulses, time. `World.save_state()` / `restore_state()` copy it whole.
    Control  what drives the model from outside: body forces, scripted loads, motor
             modes and targets (the motor program and the mouse spring live on World).
    Rows     the row table (joint_rows.py writes it from the state each step): per row
             its two bodies, Jacobian, value and activity, with its kind and owner in
             the model and its impulse in the state. Solvers read rows.
    Work     scratch arrays of the step (force accumulators, M⁻¹Jᵀ, effective masses).

Every array is one entry per body (index 0 is the static world), per joint, per row or per coupling,
in SI units; vectors (n, 3) float64, quaternions (n, 4) as (x, y, z, w), Jacobians
(n, 12) as [linear a, angular a, linear b, angular b]. The numba kernels receive them as
the named tuples below (Env, Bodies, Loads, Joints, Drives, Rows, Scratch), built per call from the tables.
"""
from collections import namedtuple

import numpy as np

from .arrays import ArrayTable

F, I = np.float64, np.int64

# ---------------------------------------------------------------- kernel bundles
Env = namedtuple("Env", "gravity gyroscopic max_speed max_spin")
"""gravity (3,) m/s²; gyroscopic: add ω×Iω; max_speed (m/s), max_spin (rad/s): runaway bounds."""
Bodies = namedtuple("Bodies", "pos quat vel omega inv_mass inertia inv_inertia")
"""pos (n,3) m, quat (n,4), vel (n,3) m/s, omega (n,3) rad/s world frame, inv_mass (n,) 1/kg,
inertia / inv_inertia (n,3) principal moments kg·m² and their inverses (0 for static)."""
Joints = namedtuple("Joints", "type body anchor_a anchor_b frame_a frame_b limit_lo limit_hi limit_on "
                              "row_start row_count q qd err free_used")
"""type (m,) joint_types code; body (m,2) parent a, child b; anchor_a/b (m,3) body-local anchor (m);
frame_a/b (m,4) body-local joint frame; limit_lo/hi (m,3) per free DOF (rad or m), limit_on (m,3);
row_start/row_count (m,) the joint's rows; q, qd (m,3) readouts of the free DOFs (rad or m, /s);
err (m,) largest violation (m or rad); free_used (m,) 1 if the solver uses the free rows."""
Couplings = namedtuple("Couplings", "joint ratio offset body J minv mass C impulse impulse_pos W L S order vec")
"""Coupling rows q_f = ratio·q_l + offset between two 1-DOF joints (solvers/couplings.py; a
kernel gets None for a world without any), per coupling: joint (k,2) follower, leader;
ratio, offset (k,); the row as two halves in the row format: body (k,2,2) each half's two
bodies, J (k,2,12), minv (k,2,12) M⁻¹Jᵀ; mass (k,) 1/(J M⁻¹ Jᵀ); C (k,) value (rad or m);
impulse (k,) accumulated (state); impulse_pos (k,) split impulses. Their solve with a
joint tree's: W (k,n,6) the tree's velocity response to a unit impulse of each, L (k,r)
the tree rows' impulses in it, S (k,k) J W and its factor, order (k+1,) the factor's row
order then its rank, vec (3,k) right-hand side, multipliers, scratch (a family that makes
each coupling a spring: its C_lin, w, g)."""
Drives = namedtuple("Drives", "friction motor_mode motor_target motor_max motor_freq motor_damping damping")
"""friction (m,) N·m or N; motor_mode (m,) 0 off / 1 velocity / 2 position; motor_target (m,) rad(/s) or
m(/s); motor_max (m,) N·m or N; motor_freq (m,) Hz; motor_damping (m,) damping ratio; damping (m,)
viscous damping of the free DOFs, N·m·s/rad or N·s/m (solvers/damping.py)."""
Loads = namedtuple("Loads", "body_force body_torque body force torque point at_point window")
"""body_force/body_torque (n,3) N, N·m constant on each body; scripted loads (k entries): body (k,),
force (k,3) N, torque (k,3) N·m, point (k,3) body-local, at_point (k,), window (k,2) [start, end) s."""
Rows = namedtuple("Rows", "joint kind rot body J C active lo hi bias mass_scale impulse_scale impulse "
                          "block_start block_count")
"""The row table (joint_rows.py writes it). Per row: joint (r,) owner (−1: none); kind (r,)
ROW_EQ / ROW_LIMIT / ROW_FREE; rot (r,) 1 rotational; body (r,2) the two bodies; J (r,12);
C (r,) value (m or rad); active (r,) whether and how the row acts this step (joint_rows.py);
lo, hi (r,) bounds of the accumulated impulse (N·s or N·m·s; free rows in friction: hi is
the radius of their Coulomb ball, eq. 16 seed 001); bias (r,) velocity bias (m/s or rad/s),
mass_scale, impulse_scale (r,) of a soft row (Box2D's soft step: Δλ = −m·mass_scale·(J·V +
bias) − impulse_scale·λ); impulse (r,) accumulated impulse (state). Per block of rows that
share their two bodies (a joint today, a contact later): block_start, block_count (k,)."""
Scratch = namedtuple("Scratch", "force_acc torque_acc pvel pomega inv_inertia_world minv_jt mass bound "
                          "impulse_pos body_row_ptr body_row_idx")
"""force_acc/torque_acc (n,3); pvel/pomega (n,3) split-impulse pseudo-velocities; inv_inertia_world
(n,9); minv_jt (r,12) M⁻¹Jᵀ; mass (r,) 1/(J M⁻¹ Jᵀ); bound (r,) penalty Gershgorin bounds;
impulse_pos (r,) split impulses; body_row_ptr (n+1,), body_row_idx (k,2): CSR of the equality and
limit rows on each body, (row, side)."""


class Model:
    """What the user edits. `body_info`/`joint_info` hold names, shapes and colours. Per body
    also its contact properties: friction μ, restitution e, collide (1: it touches others;
    physics/contacts.py)."""

    def __init__(self, dt, gravity, gyroscopic, max_speed, max_spin):
        self.dt, self.gravity, self.gyroscopic = dt, gravity, gyroscopic
        self.max_speed, self.max_spin = max_speed, max_spin
        self.bodies = ArrayTable(inv_mass=((), F, 0.0), inertia=((3,), F, 0.0), inv_inertia=((3,), F, 0.0),
                                 friction=((), F, 0.5), restitution=((), F, 0.0), collide=((), I, 1))
        self.joints = ArrayTable(type=((), I, 0), body=((2,), I, 0), anchor_a=((3,), F, 0.0),
                                 anchor_b=((3,), F, 0.0), frame_a=((4,), F, 0.0), frame_b=((4,), F, 0.0),
                                 limit_lo=((3,), F, 0.0), limit_hi=((3,), F, 0.0), limit_on=((3,), I, 0),
                                 row_start=((), I, 0), row_count=((), I, 0), friction=((), F, 0.0),
                                 damping=((), F, 0.0), motor_max=((), F, 0.0), motor_freq=((), F, 20.0),
                                 motor_damping=((), F, 1.0))
        self.rows = ArrayTable(joint=((), I, -1), kind=((), I, 0), rot=((), I, 0), body=((2,), I, 0))
        self.blocks = ArrayTable(row_start=((), I, 0), row_count=((), I, 0))   # rows sharing two bodies
        self.couplings = ArrayTable(joint=((2,), I, 0), ratio=((), F, 1.0), offset=((), F, 0.0))
        self.body_info, self.joint_info = [], []
        self.version = 0


class State:
    """What time changes; `copy()`/`load()` make and apply a whole snapshot (without ropes,
    which World adds)."""

    def __init__(self):
        self.bodies = ArrayTable(pos=((3,), F, 0.0), quat=((4,), F, 0.0), vel=((3,), F, 0.0),
                                 omega=((3,), F, 0.0))
        self.joints = ArrayTable(q=((3,), F, 0.0), qd=((3,), F, 0.0), err=((), F, 0.0))
        self.rows = ArrayTable(impulse=((), F, 0.0))
        self.couplings = ArrayTable(impulse=((), F, 0.0))
        self.time = 0.0             # s: epoch_time + (step_count − epoch_step)·Δt
        self.step_count = 0
        self.epoch_time = 0.0       # time and step count when Δt last changed
        self.epoch_step = 0

    def copy(self):
        return {"bodies": self.bodies.copy(), "joints": self.joints.copy(("q", "qd")),
                "rows": self.rows.copy(), "couplings": self.couplings.copy(),
                "clock": (self.time, self.step_count, self.epoch_time, self.epoch_step)}

    def load(self, saved):
        self.bodies.load(saved["bodies"])
        self.joints.load(saved["joints"])
        self.rows.load(saved["rows"])
        self.couplings.load(saved["couplings"])
        self.time, self.step_count, self.epoch_time, self.epoch_step = saved["clock"]


class Control:
    """Forces and drives from outside the model."""

    def __init__(self):
        self.bodies = ArrayTable(force=((3,), F, 0.0), torque=((3,), F, 0.0))
        self.joints = ArrayTable(motor_mode=((), I, 0), motor_target=((), F, 0.0))
        self.loads = ArrayTable(body=((), I, 0), force=((3,), F, 0.0), torque=((3,), F, 0.0),
                                point=((3,), F, 0.0), at_point=((), I, 0), window=((2,), F, 0.0))


class Work:
    """Scratch of the step (no meaning between steps, except what solvers cache)."""

    def __init__(self):
        self.bodies = ArrayTable(force_acc=((3,), F, 0.0), torque_acc=((3,), F, 0.0), pvel=((3,), F, 0.0),
                                 pomega=((3,), F, 0.0), inv_inertia_world=((9,), F, 0.0))
        self.rows = ArrayTable(J=((12,), F, 0.0), C=((), F, 0.0), active=((), I, 0), lo=((), F, -np.inf),
                               hi=((), F, np.inf), bias=((), F, 0.0), mass_scale=((), F, 1.0),
                               impulse_scale=((), F, 0.0), minv_jt=((12,), F, 0.0), mass=((), F, 0.0),
                               bound=((), F, 0.0), impulse_pos=((), F, 0.0))
        self.couplings = ArrayTable(body=((2, 2), I, 0), J=((2, 12), F, 0.0), minv=((2, 12), F, 0.0),
                                    mass=((), F, 0.0), C=((), F, 0.0), impulse_pos=((), F, 0.0))
        self.coupling_solve = ()        # Couplings.W, L, S, order, vec (coupling_bundle)
        self.body_row_ptr = np.zeros(1, I)
        self.body_row_idx = np.zeros((0, 2), I)
        self.zero_force = np.zeros((0, 3))


def bundles(model, state, control, work, free_used, coupled=False):
    """The kernel bundles of the current arrays. `coupled`: the bodies' velocities
    already hold this step's gravity and forces (World._coupled_step), so the solver
    gets none."""
    mb, sb, cb, wb = model.bodies, state.bodies, control.bodies, work.bodies
    mj, sj, cj = model.joints, state.joints, control.joints
    wr = work.rows
    if coupled:
        if work.zero_force.shape != cb.force.shape:
            work.zero_force = np.zeros_like(cb.force)
        z, cl = work.zero_force, _NO_LOADS
        env = Env(_ZERO3, model.gyroscopic, model.max_speed, model.max_spin)
        loads = Loads(z, z, *cl)
    else:
        cl = control.loads
        env = Env(model.gravity, model.gyroscopic, model.max_speed, model.max_spin)
        loads = Loads(cb.force, cb.torque, cl.body, cl.force, cl.torque, cl.point, cl.at_point, cl.window)
    return (env,
            Bodies(sb.pos, sb.quat, sb.vel, sb.omega, mb.inv_mass, mb.inertia, mb.inv_inertia),
            loads,
            Joints(mj.type, mj.body, mj.anchor_a, mj.anchor_b, mj.frame_a, mj.frame_b, mj.limit_lo, mj.limit_hi,
                   mj.limit_on, mj.row_start, mj.row_count, sj.q, sj.qd, sj.err, free_used),
            Drives(mj.friction, cj.motor_mode, cj.motor_target, mj.motor_max, mj.motor_freq, mj.motor_damping,
                   mj.damping),
            Rows(model.rows.joint, model.rows.kind, model.rows.rot, model.rows.body, wr.J, wr.C, wr.active, wr.lo,
                 wr.hi, wr.bias, wr.mass_scale, wr.impulse_scale, state.rows.impulse, model.blocks.row_start,
                 model.blocks.row_count),
            Scratch(wb.force_acc, wb.torque_acc, wb.pvel, wb.pomega, wb.inv_inertia_world, wr.minv_jt, wr.mass,
                 wr.bound, wr.impulse_pos, work.body_row_ptr, work.body_row_idx))


def coupling_bundle(model, state, work):
    """The Couplings bundle of the model's couplings (empty without any). The arrays of
    their solve with a joint tree (W, L, S, order, vec) are sized here for the layout."""
    mc, wc = model.couplings, work.couplings
    k = mc.count
    shapes = ((k, model.bodies.count, 6), (k, model.rows.count), (k, k), (k + 1,), (3, k))
    if tuple(a.shape for a in work.coupling_solve) != shapes:
        work.coupling_solve = tuple(np.zeros(s, I if len(s) == 1 else F) for s in shapes)
    return Couplings(mc.joint, mc.ratio, mc.offset, wc.body, wc.J, wc.minv, wc.mass, wc.C, state.couplings.impulse,
                     wc.impulse_pos, *work.coupling_solve)


_ZERO3 = np.zeros(3)
_NO_LOADS = (np.zeros(0, I), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, I),
             np.zeros((0, 2)))
