"""Joint friction and motors under the penalty family: the free rows of joint_rows.py
(write_drive_rows says what each does) as rows of the implicit system with a bound.

* friction — the regularized Coulomb law f = −F_max ġ/max(|ġ|, v_ε) on the vector ġ of
  the joint's free-row rates (the ball ‖f‖ ≤ F_max of seed 001 eq. 8, 16), implicit in
  ġ⁺: a damper c = S m_b/Δt (S = STICK, m_b = n/Σ_rows 1/m the block's mass) whose
  force is clamped to the ball. The two are the same law with v_ε = F_max/c =
  F_max Δt/(S m_b): a sticking joint creeps at most at v_ε, a sliding one feels exactly
  F_max against its motion, and a joint stops within the step where the exact solution
  stops. The bound makes it an active set (damper, or constant force F_max along the last
  solve's force) of at most PASSES solves per step, started from the last step's forces.
* motors — a servo on a 1-DOF joint's free row with the impulse motors' targets, modes
  and limits: position mode a spring-damper on q − target, k = m ω², c = 2ζ m ω
  (ω = 2π·frequency, ζ = damping: Box2D's soft constraint, which is this spring under the
  same backward Euler), velocity mode a damper c = S m/Δt on q̇ − target; the force is
  clamped to ±max_force by the same active set. The servo's m is the inertia it drives:
  1/(J A₀⁻¹ Jᵀ) with A₀ the step's matrix without the drives (the other joints hold, the
  other drives are free; one solve per servo), so that ω is the servo's frequency on the
  arm it moves (the row's own J M⁻¹ Jᵀ, the two bodies about their centres, lets a
  shoulder sag under the arm it carries).

Under the paper and critical presets the same rows act with M (the bodies' own inertia)
and the joint springs pass them on.

* dampers — a joint's viscous damping (../damping.py) as a plain row of the system,
  w = Δt c on each free row, unbounded (add_dampers).
"""
import numpy as np
from ...jit import helper

from ...joint_rows import FREE_FRICTION, FREE_MOTOR, FREE_OFF, MOTOR_POSITION, row_velocity, write_drive_rows
from ...joint_types import N_FREE
from ..row_ops import copy2d, fill2d
from .assemble import add_angular_row, add_force, add_row, row_inv_mass
from .block_ldl import factor, solve

STICK = 1.0e6           # friction and velocity-motor dampers: c = S·m/Δt (v_ε = F_max Δt/(S m))
PASSES = 4              # most solves per step of the friction / motor-limit active set

@helper(cache=True, error_model="numpy")
def servo_row(h, m, freq, damping, err):
    """(w, g) of a position servo on effective mass m: k = m ω², c = 2ζ m ω, ω = 2π·freq,
    on the error err (rad or m) linearized at the step's start."""
    om = 2.0 * np.pi * freq
    k_spring = m * om * om
    return h * h * k_spring + h * 2.0 * damping * m * om, -h * k_spring * err


@helper(cache=True, error_model="numpy", _nrt=False)
def servo_masses(h, joints, drives, rows, plan):
    """The position servos' stiffness from the inertia they drive: m = 1/(J A₀⁻¹ Jᵀ) with A₀
    the step's matrix without the drives (bodies and stiff joint rows: the other joints
    hold, the other drives are free), one solve per servo with the factor of A₀; then
    k = m ω², c = 2ζ m ω as in servo_row."""
    joint_type, joint_row_start, joint_row_count, joint_q = joints.type, joints.row_start, joints.row_count, joints.q
    joint_body = joints.body
    motor_target, motor_freq, motor_damping = drives.motor_target, drives.motor_freq, drives.motor_damping
    row_J = rows.J
    body_node, up_ptr, up_node = plan.body_node, plan.up_ptr, plan.up_node
    pair_ptr, pair_lo, pair_hi, pair_target = plan.pair_ptr, plan.pair_lo, plan.pair_hi, plan.pair_target
    diag0, offd0, diag, offd, x = plan.diag0, plan.offd0, plan.diag, plan.offd, plan.rhs
    row_w, row_g, drive_kind, vel_k, omega_k = plan.row_w, plan.row_g, plan.drive_kind, plan.vel_k, plan.omega_k
    motor_mode = drives.motor_mode
    copy2d(diag, diag0)
    copy2d(offd, offd0)
    factor(diag, offd, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)
    for j in range(joint_type.shape[0]):
        if drive_kind[j] != FREE_MOTOR or motor_mode[j] != MOTOR_POSITION:
            continue
        r = joint_row_start[j] + joint_row_count[j] - 1
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        na, nb = body_node[a], body_node[b]
        fill2d(x, 0.0)
        for c in range(6):
            if na >= 0:
                x[na, c] = row_J[r, c]
            if nb >= 0:
                x[nb, c] = row_J[r, 6 + c]
        solve(diag, offd, up_ptr, up_node, x)
        kk = 0.0
        for c in range(6):
            if na >= 0:
                kk += row_J[r, c] * x[na, c]
            if nb >= 0:
                kk += row_J[r, 6 + c] * x[nb, c]
        if kk <= 0.0:
            continue
        err = joint_q[j, 0] - motor_target[j] - h * row_velocity(row_J, r, a, b, vel_k, omega_k)
        row_w[r], row_g[r] = servo_row(h, 1.0 / kk, motor_freq[j], motor_damping[j], err)


@helper(cache=True, error_model="numpy", _nrt=False)
def setup_drives(h, bodies, joints, drives, rows, plan):
    """Per joint: its drive this step as the row table says (joint_rows.write_drive_rows:
    its free rows FREE_FRICTION, FREE_MOTOR — a position servo or a velocity motor by the
    joint's motor mode — or FREE_OFF, with the bound hi = F_max·h), each free row's w, g
    (the damper or servo, linearized as in stiff_rows), the bound F_max, and where the
    active set starts: clamped when the last step's force was on the bound (and, for
    friction, the joint is moving: the clamped force opposes its motion now). Returns the
    number of drives."""
    write_drive_rows(joints, drives, rows, h)
    joint_type, joint_row_start, joint_row_count, joint_q = joints.type, joints.row_start, joints.row_count, joints.q
    joint_body = joints.body
    motor_mode, motor_target, motor_freq, motor_damping = (drives.motor_mode, drives.motor_target, drives.motor_freq,
                                                           drives.motor_damping)
    row_J, row_impulse, row_rot, row_active, row_hi = rows.J, rows.impulse, rows.rot, rows.active, rows.hi
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    inv_inertia_world, row_w, row_g = plan.inv_inertia_world, plan.row_w, plan.row_g
    vel_k, omega_k = plan.vel_k, plan.omega_k
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    count = 0
    for j in range(joint_type.shape[0]):
        nf = N_FREE[joint_type[j]]
        end = joint_row_start[j] + joint_row_count[j]
        f0 = end - nf
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        for r in range(f0, end):
            row_w[r] = 0.0
            row_g[r] = 0.0
        kind = row_active[f0] if nf > 0 else FREE_OFF
        fmax = row_hi[f0] / h if nf > 0 else 0.0
        if fmax <= 0.0:
            kind = FREE_OFF
        drive_kind[j] = kind
        drive_max[j] = fmax
        drive_clamped[j] = 0
        if kind == FREE_OFF:
            for r in range(f0, end):
                row_impulse[r] = 0.0
            continue
        count += 1
        if kind == FREE_FRICTION:
            ksum = 0.0
            for r in range(f0, end):
                ksum += row_inv_mass(row_J, r, a, b, body_inv_mass, inv_inertia_world, row_rot[r])
            if ksum <= 0.0:
                drive_kind[j] = FREE_OFF
                continue
            w = STICK * nf / ksum                    # c Δt, c = S m_b/Δt, m_b = nf / Σ J M⁻¹ Jᵀ
            pn = vn = 0.0
            for r in range(f0, end):
                row_w[r] = w
                v = row_velocity(row_J, r, a, b, body_vel, body_omega)
                pn += row_impulse[r] * row_impulse[r]
                vn += v * v
            if np.sqrt(pn) >= fmax * h * (1.0 - 1e-9) and vn > 0.0:
                drive_clamped[j] = 1
                vn = np.sqrt(vn)
                for c in range(3):
                    drive_dir[j, c] = -row_velocity(row_J, f0 + c, a, b, body_vel, body_omega) / vn if c < nf else 0.0
            continue
        kk = row_inv_mass(row_J, f0, a, b, body_inv_mass, inv_inertia_world, row_rot[f0])
        if kk <= 0.0:
            drive_kind[j] = FREE_OFF
            continue
        m = 1.0 / kk
        if motor_mode[j] == MOTOR_POSITION:
            err = joint_q[j, 0] - motor_target[j] - h * row_velocity(row_J, f0, a, b, vel_k, omega_k)
            row_w[f0], row_g[f0] = servo_row(h, m, motor_freq[j], motor_damping[j], err)
        else:
            row_w[f0] = STICK * m
            row_g[f0] = STICK * m * motor_target[j]
        p = row_impulse[f0]
        if abs(p) >= fmax * h * (1.0 - 1e-9):
            drive_clamped[j] = 1
            drive_dir[j, 0] = 1.0 if p > 0.0 else -1.0
            drive_dir[j, 1] = 0.0
            drive_dir[j, 2] = 0.0
    return count


@helper(cache=True, error_model="numpy", _nrt=False)
def add_drives(h, joints, rows, plan):
    """The drives into the solve's matrix: free rows in their linear range as rows (w, g),
    clamped ones as a constant force F_max along drive_dir."""
    joint_type, joint_row_start, joint_row_count, joint_body = joints.type, joints.row_start, joints.row_count, joints.body
    row_J, row_rot = rows.J, rows.rot
    body_node, joint_slot, joint_b_late = plan.body_node, plan.joint_slot, plan.joint_b_late
    diag, offd, rhs, row_w, row_g = plan.diag, plan.offd, plan.rhs, plan.row_w, plan.row_g
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    for j in range(joint_type.shape[0]):
        if drive_kind[j] == FREE_OFF:
            continue
        end = joint_row_start[j] + joint_row_count[j]
        f0 = end - N_FREE[joint_type[j]]
        na = body_node[joint_body[j, 0]]
        nb = body_node[joint_body[j, 1]]
        for r in range(f0, end):
            if drive_clamped[j]:
                add_force(row_J, r, na, nb, h * drive_max[j] * drive_dir[j, r - f0], rhs)
            elif row_rot[r]:
                add_angular_row(row_J, r, na, nb, joint_slot[j], joint_b_late[j], row_w[r], row_g[r], diag, offd, rhs)
            else:
                add_row(row_J, r, na, nb, joint_slot[j], joint_b_late[j], row_w[r], row_g[r], diag, offd, rhs)


@helper(cache=True, error_model="numpy", _nrt=False)
def check_drives(h, bodies, joints, rows, plan):
    """The active set after a solve: a linear drive whose force leaves its bound is clamped
    there (in the direction of that force); a clamped friction whose rate turned along its
    force (the joint stopped within the step) or a clamped motor that wants less than its
    bound goes back to linear. Returns whether anything changed."""
    joint_type, joint_row_start, joint_row_count, joint_body = joints.type, joints.row_start, joints.row_count, joints.body
    row_J = rows.J
    body_vel, body_omega = bodies.vel, bodies.omega
    row_w, row_g = plan.row_w, plan.row_g
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    changed = False
    for j in range(joint_type.shape[0]):
        kind = drive_kind[j]
        if kind == FREE_OFF:
            continue
        end = joint_row_start[j] + joint_row_count[j]
        f0 = end - N_FREE[joint_type[j]]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        fn = along = 0.0
        for r in range(f0, end):
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            f = (row_g[r] - row_w[r] * v) / h
            fn += f * f
            along += drive_dir[j, r - f0] * (v if kind == FREE_FRICTION else f)
        fn = np.sqrt(fn)
        if drive_clamped[j] == 0:
            if fn > drive_max[j] * (1.0 + 1e-9):
                drive_clamped[j] = 1
                for r in range(f0, end):
                    v = row_velocity(row_J, r, a, b, body_vel, body_omega)
                    drive_dir[j, r - f0] = (row_g[r] - row_w[r] * v) / h / fn
                changed = True
        elif kind == FREE_FRICTION:
            if along > 0.0:
                drive_clamped[j] = 0
                changed = True
        elif along < drive_max[j]:
            drive_clamped[j] = 0
            changed = True
    return changed


@helper(cache=True, error_model="numpy", _nrt=False)
def add_dampers(h, joints, drives, rows, plan):
    """The joints' viscous damping (../damping.py) into the step's matrix: on each free row
    of a joint with damping c > 0 the force −c J·V⁺, backward Euler in the whole system,
    w = Δt c (no right side)."""
    joint_type, joint_body, joint_row_start, joint_row_count = joints.type, joints.body, joints.row_start, joints.row_count
    row_J, row_rot, damping = rows.J, rows.rot, drives.damping
    body_node, joint_slot, joint_b_late = plan.body_node, plan.joint_slot, plan.joint_b_late
    diag0, offd0, rhs0 = plan.diag0, plan.offd0, plan.rhs0
    for j in range(joint_type.shape[0]):
        c = damping[j]
        if c <= 0.0:
            continue
        na, nb = body_node[joint_body[j, 0]], body_node[joint_body[j, 1]]
        end = joint_row_start[j] + joint_row_count[j]
        for r in range(end - N_FREE[joint_type[j]], end):
            if row_rot[r]:
                add_angular_row(row_J, r, na, nb, joint_slot[j], joint_b_late[j], h * c, 0.0, diag0, offd0, rhs0)
            else:
                add_row(row_J, r, na, nb, joint_slot[j], joint_b_late[j], h * c, 0.0, diag0, offd0, rhs0)


@helper(cache=True, error_model="numpy", _nrt=False)
def any_drive(joints):
    """Whether some joint's free rows are in use (joints.free_used: joint_rows.drive_use)."""
    free_used = joints.free_used
    for j in range(free_used.shape[0]):
        if free_used[j]:
            return True
    return False
