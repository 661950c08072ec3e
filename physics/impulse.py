"""The `impulse` solver (seed 001): sequential impulses with Coulomb joint friction.

One step of Δt (or each of its substeps h = Δt/substeps), in the paper's order:

    external impulses   V += M⁻¹ p_e                               (eq. 10)
    prepare rows        M⁻¹Jᵀ and effective mass 1/(J M⁻¹ Jᵀ) of every row
    warm start          apply last step's accumulated impulses: P⁽⁰⁾(t+Δt) = P(t)
    iterate             for each joint: constraint rows (equality, limits as
                        one-sided rows, λ ≥ 0 or λ ≤ 0 accumulated), then its free
                        rows: a motor, or friction —
                          (B M⁻¹ Bᵀ) Δp = −B V                      (eq. 15)
                          ‖P + Δp‖ > p_max ⇒ Δp = p_max (P+Δp)/‖P+Δp‖ − P  (eq. 16)
                        until every ‖Δp‖ < ε (eq. 17), the iteration limit, or the
                        wall-clock cap — whichever comes first
    relax drift         split impulses: the same rows on pseudo-velocities V* with
                        J V* = −ERP·C/h, which move positions, not momentum
                        (or Baumgarte: the bias ERP·C/h inside the velocity solve)
    integrate           X += h H (V + V*)                          (eq. 11)

Impulses are N·s (N·m·s for angular rows); friction limits F_max are N·m for
rotational free DOFs and N for a prismatic slide, p_max = F_max·h (eq. 12).
Motors (1-DOF joints): a velocity target, or a position servo solved as a soft
constraint (frequency, damping ratio — Box2D's soft step), with a force/torque limit;
with the motor off, the free row is the friction clamp (as in Jolt).
"""
import math

import numpy as np
from numba import njit

from .clock import ticks
from .integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from .joint_rows import (PRISMATIC, REVOLUTE, ROW_FREE, ROW_LIMIT, SPHERICAL, UNIVERSAL,
                         compute_joint_rates, compute_joint_rows)

# impulse_params layout
P_ITERATIONS, P_EPSILON, P_TIME_CAP_MS, P_WARM_START, P_STABILIZATION, P_ERP, P_SUBSTEPS, \
    P_TICKS_PER_MS, P_POSITION_ITERATIONS = range(9)
SPLIT, BAUMGARTE, NO_STABILIZATION = 0, 1, 2
STABILIZATIONS = {"split": SPLIT, "baumgarte": BAUMGARTE, "none": NO_STABILIZATION}
# impulse_stats layout (last step, plus counts over the run)
S_ITERATIONS, S_RESIDUAL, S_SOLVE_TICKS, S_CAPPED, S_CAPPED_STEPS, S_TOTAL_ITERATIONS = range(6)
MOTOR_OFF, MOTOR_VELOCITY, MOTOR_POSITION = 0, 1, 2
MOTOR_MODES = {"off": MOTOR_OFF, "velocity": MOTOR_VELOCITY, "position": MOTOR_POSITION}


@njit(cache=True, inline="always")
def free_dofs(t):
    if t == SPHERICAL:
        return 3
    if t == UNIVERSAL:
        return 2
    if t == REVOLUTE or t == PRISMATIC:
        return 1
    return 0


@njit(cache=True, inline="always")
def row_jv(row_J, r, a, b, vel, omega):
    return (row_J[r, 0] * vel[a, 0] + row_J[r, 1] * vel[a, 1] + row_J[r, 2] * vel[a, 2]
            + row_J[r, 3] * omega[a, 0] + row_J[r, 4] * omega[a, 1] + row_J[r, 5] * omega[a, 2]
            + row_J[r, 6] * vel[b, 0] + row_J[r, 7] * vel[b, 1] + row_J[r, 8] * vel[b, 2]
            + row_J[r, 9] * omega[b, 0] + row_J[r, 10] * omega[b, 1] + row_J[r, 11] * omega[b, 2])


@njit(cache=True, inline="always")
def apply_impulse(row_minv_jt, r, a, b, dl, vel, omega):
    """V += M⁻¹Jᵀ Δλ on both bodies of row r."""
    vel[a, 0] += row_minv_jt[r, 0] * dl
    vel[a, 1] += row_minv_jt[r, 1] * dl
    vel[a, 2] += row_minv_jt[r, 2] * dl
    omega[a, 0] += row_minv_jt[r, 3] * dl
    omega[a, 1] += row_minv_jt[r, 4] * dl
    omega[a, 2] += row_minv_jt[r, 5] * dl
    vel[b, 0] += row_minv_jt[r, 6] * dl
    vel[b, 1] += row_minv_jt[r, 7] * dl
    vel[b, 2] += row_minv_jt[r, 8] * dl
    omega[b, 0] += row_minv_jt[r, 9] * dl
    omega[b, 1] += row_minv_jt[r, 10] * dl
    omega[b, 2] += row_minv_jt[r, 11] * dl


@njit(cache=True, inline="always")
def jv12(row_J, r, v):
    """J·V of row r with the two bodies' velocities held in a local 12-tuple."""
    return (row_J[r, 0] * v[0] + row_J[r, 1] * v[1] + row_J[r, 2] * v[2] + row_J[r, 3] * v[3]
            + row_J[r, 4] * v[4] + row_J[r, 5] * v[5] + row_J[r, 6] * v[6] + row_J[r, 7] * v[7]
            + row_J[r, 8] * v[8] + row_J[r, 9] * v[9] + row_J[r, 10] * v[10] + row_J[r, 11] * v[11])


@njit(cache=True, inline="always")
def add12(row_minv_jt, r, dl, v):
    """The 12-tuple V + M⁻¹Jᵀ Δλ."""
    m = row_minv_jt
    return (v[0] + m[r, 0] * dl, v[1] + m[r, 1] * dl, v[2] + m[r, 2] * dl, v[3] + m[r, 3] * dl,
            v[4] + m[r, 4] * dl, v[5] + m[r, 5] * dl, v[6] + m[r, 6] * dl, v[7] + m[r, 7] * dl,
            v[8] + m[r, 8] * dl, v[9] + m[r, 9] * dl, v[10] + m[r, 10] * dl, v[11] + m[r, 11] * dl)


@njit(cache=True, inline="always")
def load12(a, b, vel, omega):
    return (vel[a, 0], vel[a, 1], vel[a, 2], omega[a, 0], omega[a, 1], omega[a, 2],
            vel[b, 0], vel[b, 1], vel[b, 2], omega[b, 0], omega[b, 1], omega[b, 2])


@njit(cache=True, inline="always")
def store12(a, b, v, vel, omega):
    vel[a, 0], vel[a, 1], vel[a, 2] = v[0], v[1], v[2]
    omega[a, 0], omega[a, 1], omega[a, 2] = v[3], v[4], v[5]
    vel[b, 0], vel[b, 1], vel[b, 2] = v[6], v[7], v[8]
    omega[b, 0], omega[b, 1], omega[b, 2] = v[9], v[10], v[11]


@njit(cache=True, inline="always")
def coupling(row_J, row_minv_jt, r, s):
    """(J M⁻¹ Jᵀ)_rs for two rows of the same joint (same bodies)."""
    k = 0.0
    for i in range(12):
        k += row_J[r, i] * row_minv_jt[s, i]
    return k


@njit(cache=True)
def world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world):
    """I⁻¹ in world axes, R diag(1/I) Rᵀ, for every body (9 numbers, row-major)."""
    for i in range(body_quat.shape[0]):
        x, y, z, w = body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3]
        r00, r01, r02 = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)
        r10, r11, r12 = 2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)
        r20, r21, r22 = 2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)
        a, b, c = body_inv_inertia[i, 0], body_inv_inertia[i, 1], body_inv_inertia[i, 2]
        body_inv_inertia_world[i, 0] = a * r00 * r00 + b * r01 * r01 + c * r02 * r02
        body_inv_inertia_world[i, 1] = a * r00 * r10 + b * r01 * r11 + c * r02 * r12
        body_inv_inertia_world[i, 2] = a * r00 * r20 + b * r01 * r21 + c * r02 * r22
        body_inv_inertia_world[i, 4] = a * r10 * r10 + b * r11 * r11 + c * r12 * r12
        body_inv_inertia_world[i, 5] = a * r10 * r20 + b * r11 * r21 + c * r12 * r22
        body_inv_inertia_world[i, 8] = a * r20 * r20 + b * r21 * r21 + c * r22 * r22
        body_inv_inertia_world[i, 3] = body_inv_inertia_world[i, 1]
        body_inv_inertia_world[i, 6] = body_inv_inertia_world[i, 2]
        body_inv_inertia_world[i, 7] = body_inv_inertia_world[i, 5]


@njit(cache=True)
def prepare_rows(row_J, row_joint, row_kind, row_active, joint_body, joint_type, joint_friction,
                 joint_motor_mode, body_inv_mass, body_inv_inertia_world, row_minv_jt, row_mass):
    """M⁻¹Jᵀ of each row in use (12 numbers) and its effective mass 1/(J M⁻¹ Jᵀ); rows
    not in use this step (inactive limits, free rows with no friction or motor) get 0."""
    for r in range(row_J.shape[0]):
        j = row_joint[r]
        used = row_active[r] != 0
        if row_kind[r] == ROW_FREE:
            used = joint_friction[j] > 0.0 or joint_motor_mode[j] != MOTOR_OFF
        if not used:
            row_mass[r] = 0.0
            continue
        k = 0.0
        for side in range(2):
            i = joint_body[j, side]
            o = 6 * side
            im = body_inv_mass[i]
            jx, jy, jz = row_J[r, o + 3], row_J[r, o + 4], row_J[r, o + 5]
            row_minv_jt[r, o] = im * row_J[r, o]
            row_minv_jt[r, o + 1] = im * row_J[r, o + 1]
            row_minv_jt[r, o + 2] = im * row_J[r, o + 2]
            row_minv_jt[r, o + 3] = (body_inv_inertia_world[i, 0] * jx + body_inv_inertia_world[i, 1] * jy
                                     + body_inv_inertia_world[i, 2] * jz)
            row_minv_jt[r, o + 4] = (body_inv_inertia_world[i, 3] * jx + body_inv_inertia_world[i, 4] * jy
                                     + body_inv_inertia_world[i, 5] * jz)
            row_minv_jt[r, o + 5] = (body_inv_inertia_world[i, 6] * jx + body_inv_inertia_world[i, 7] * jy
                                     + body_inv_inertia_world[i, 8] * jz)
            for c in range(6):
                k += row_J[r, o + c] * row_minv_jt[r, o + c]
        row_mass[r] = 1.0 / k if k > 1e-300 else 0.0


@njit(cache=True)
def warm_start(warm, h, joint_type, joint_body, joint_row_start, joint_row_count, joint_friction,
               joint_motor_mode, joint_motor_max, row_kind, row_active, row_lambda, row_minv_jt, row_mass,
               vel, omega):
    """Apply last step's accumulated impulses (or zero them), keeping every one feasible:
    inactive limits drop theirs, friction stays in its ball, motors in their bound."""
    for j in range(joint_type.shape[0]):
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        start = joint_row_start[j]
        end = start + joint_row_count[j]
        nf = free_dofs(joint_type[j])
        if not warm:
            for r in range(start, end):
                row_lambda[r] = 0.0
            continue
        for r in range(start, end - nf):
            if row_kind[r] == ROW_LIMIT:
                if row_active[r] == 0 or row_lambda[r] * row_active[r] < 0.0:
                    row_lambda[r] = 0.0
        if nf > 0:
            if nf == 1 and joint_motor_mode[j] != MOTOR_OFF:
                lim = joint_motor_max[j] * h
            else:
                lim = joint_friction[j] * h
            n = 0.0
            for r in range(end - nf, end):
                n += row_lambda[r] * row_lambda[r]
            n = math.sqrt(n)
            if n > lim:
                s = lim / n if n > 0.0 else 0.0
                for r in range(end - nf, end):
                    row_lambda[r] *= s
        for r in range(start, end):
            if row_mass[r] == 0.0:
                row_lambda[r] = 0.0
            elif row_lambda[r] != 0.0:
                apply_impulse(row_minv_jt, r, a, b, row_lambda[r], vel, omega)


@njit(cache=True)
def solve_velocities(params, h, joint_type, joint_body, joint_row_start, joint_row_count, joint_q,
                     joint_friction, joint_motor_mode, joint_motor_target, joint_motor_max,
                     joint_motor_freq, joint_motor_damping, row_kind, row_J, row_C, row_active,
                     row_lambda, row_minv_jt, row_mass, vel, omega, stats):
    """Sequential impulses until every |Δp| < ε, the iteration limit or the time cap."""
    max_it = int(params[P_ITERATIONS])
    eps = params[P_EPSILON]
    baumgarte = params[P_STABILIZATION] == BAUMGARTE
    erp_rate = params[P_ERP] / h
    cap = params[P_TIME_CAP_MS] / params[P_SUBSTEPS] * params[P_TICKS_PER_MS]
    t_start = ticks()
    it = 0
    residual = 0.0
    capped = False
    while it < max_it:
        residual = 0.0
        for j in range(joint_type.shape[0]):
            a = joint_body[j, 0]
            b = joint_body[j, 1]
            start = joint_row_start[j]
            end = start + joint_row_count[j]
            nf = free_dofs(joint_type[j])
            v = load12(a, b, vel, omega)
            # constraint rows: equality, then limits (one-sided)
            for r in range(start, end - nf):
                act = row_active[r]
                if act == 0 or row_mass[r] == 0.0:
                    continue
                bias = erp_rate * row_C[r] if baumgarte else 0.0
                dl = -row_mass[r] * (jv12(row_J, r, v) + bias)
                if row_kind[r] == ROW_LIMIT:
                    old = row_lambda[r]
                    new = old + dl
                    if act > 0:
                        new = max(new, 0.0)
                    else:
                        new = min(new, 0.0)
                    dl = new - old
                row_lambda[r] += dl
                v = add12(row_minv_jt, r, dl, v)
                residual = max(residual, abs(dl))
            if nf == 0:
                store12(a, b, v, vel, omega)
                continue
            f0 = end - nf
            if nf == 1 and joint_motor_mode[j] != MOTOR_OFF:
                # motor: velocity target, or position servo as a soft row (Box2D soft step)
                m = row_mass[f0]
                jv = jv12(row_J, f0, v)
                if joint_motor_mode[j] == MOTOR_VELOCITY:
                    dl = -m * (jv - joint_motor_target[j])
                else:
                    w = 2.0 * math.pi * joint_motor_freq[j]
                    z = joint_motor_damping[j]
                    a1 = 2.0 * z + h * w
                    a2 = h * w * a1
                    a3 = 1.0 / (1.0 + a2)
                    c = joint_q[j, 0] - joint_motor_target[j]
                    dl = -m * a2 * a3 * (jv + w / a1 * c) - a3 * row_lambda[f0]
                lim = joint_motor_max[j] * h
                old = row_lambda[f0]
                new = min(max(old + dl, -lim), lim)
                dl = new - old
                row_lambda[f0] = new
                v = add12(row_minv_jt, f0, dl, v)
                residual = max(residual, abs(dl))
                store12(a, b, v, vel, omega)
                continue
            pmax = joint_friction[j] * h
            if pmax <= 0.0:
                store12(a, b, v, vel, omega)
                continue
            # friction: (B M⁻¹ Bᵀ) Δp = −B V  (eq. 15), then the ball clamp (eq. 16)
            r0 = -jv12(row_J, f0, v)
            k00 = coupling(row_J, row_minv_jt, f0, f0)
            d0 = d1 = d2 = 0.0
            if nf == 1:
                if k00 > 0.0:
                    d0 = r0 / k00
            else:
                r1 = -jv12(row_J, f0 + 1, v)
                k01 = coupling(row_J, row_minv_jt, f0, f0 + 1)
                k11 = coupling(row_J, row_minv_jt, f0 + 1, f0 + 1)
                if nf == 2:
                    det = k00 * k11 - k01 * k01
                    if det > 0.0:
                        d0 = (r0 * k11 - k01 * r1) / det
                        d1 = (k00 * r1 - k01 * r0) / det
                else:
                    r2 = -jv12(row_J, f0 + 2, v)
                    k02 = coupling(row_J, row_minv_jt, f0, f0 + 2)
                    k12 = coupling(row_J, row_minv_jt, f0 + 1, f0 + 2)
                    k22 = coupling(row_J, row_minv_jt, f0 + 2, f0 + 2)
                    c00 = k11 * k22 - k12 * k12
                    c01 = k02 * k12 - k01 * k22
                    c02 = k01 * k12 - k02 * k11
                    det = k00 * c00 + k01 * c01 + k02 * c02
                    if det > 0.0:
                        c11 = k00 * k22 - k02 * k02
                        c12 = k01 * k02 - k00 * k12
                        c22 = k00 * k11 - k01 * k01
                        d0 = (c00 * r0 + c01 * r1 + c02 * r2) / det
                        d1 = (c01 * r0 + c11 * r1 + c12 * r2) / det
                        d2 = (c02 * r0 + c12 * r1 + c22 * r2) / det
            p0 = row_lambda[f0] + d0
            p1 = (row_lambda[f0 + 1] + d1) if nf > 1 else 0.0
            p2 = (row_lambda[f0 + 2] + d2) if nf > 2 else 0.0
            n = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
            if n > pmax:
                s = pmax / n
                p0 *= s
                p1 *= s
                p2 *= s
            d0 = p0 - row_lambda[f0]
            row_lambda[f0] = p0
            v = add12(row_minv_jt, f0, d0, v)
            dn = d0 * d0
            if nf > 1:
                d1 = p1 - row_lambda[f0 + 1]
                row_lambda[f0 + 1] = p1
                v = add12(row_minv_jt, f0 + 1, d1, v)
                dn += d1 * d1
            if nf > 2:
                d2 = p2 - row_lambda[f0 + 2]
                row_lambda[f0 + 2] = p2
                v = add12(row_minv_jt, f0 + 2, d2, v)
                dn += d2 * d2
            residual = max(residual, math.sqrt(dn))
            store12(a, b, v, vel, omega)
        it += 1
        if residual < eps:
            break
        if cap > 0.0 and ticks() - t_start > cap:
            capped = True
            break
    stats[S_ITERATIONS] = it
    stats[S_RESIDUAL] = residual
    stats[S_SOLVE_TICKS] = ticks() - t_start
    stats[S_CAPPED] = 1.0 if capped else 0.0
    if capped:
        stats[S_CAPPED_STEPS] += 1.0
    stats[S_TOTAL_ITERATIONS] += it


@njit(cache=True)
def solve_positions(params, h, joint_type, joint_body, joint_row_start, joint_row_count, joint_friction,
                    joint_motor_mode, row_kind, row_C, row_J, row_active, row_lambda, row_lambda_pos,
                    row_minv_jt, row_mass, pvel, pomega):
    """Split impulses: pseudo-velocities V* with J V* = −ERP·C/h on the constraint rows.
    The free rows of a joint held by static friction (sticking) get J V* = 0, so drift
    correction cannot creep through static friction."""
    pvel[:, :] = 0.0
    pomega[:, :] = 0.0
    rate = params[P_ERP] / h
    for j in range(joint_type.shape[0]):
        s = joint_row_start[j]
        for r in range(s, s + joint_row_count[j]):
            row_lambda_pos[r] = 0.0
    for it in range(int(params[P_POSITION_ITERATIONS])):
        for j in range(joint_type.shape[0]):
            a = joint_body[j, 0]
            b = joint_body[j, 1]
            start = joint_row_start[j]
            end = start + joint_row_count[j] - free_dofs(joint_type[j])
            v = load12(a, b, pvel, pomega)
            for r in range(start, end):
                act = row_active[r]
                if act == 0 or row_mass[r] == 0.0:
                    continue
                dl = -row_mass[r] * (jv12(row_J, r, v) + rate * row_C[r])
                if row_kind[r] == ROW_LIMIT:
                    old = row_lambda_pos[r]
                    new = max(old + dl, 0.0) if act > 0 else min(old + dl, 0.0)
                    dl = new - old
                row_lambda_pos[r] += dl
                v = add12(row_minv_jt, r, dl, v)
            nf = free_dofs(joint_type[j])
            if nf == 0 or joint_motor_mode[j] != MOTOR_OFF or joint_friction[j] <= 0.0:
                store12(a, b, v, pvel, pomega)
                continue
            n = 0.0
            for r in range(end, end + nf):
                n += row_lambda[r] * row_lambda[r]
            if math.sqrt(n) < joint_friction[j] * h * (1.0 - 1e-9):   # sticking
                for r in range(end, end + nf):
                    if row_mass[r] > 0.0:
                        dl = -row_mass[r] * jv12(row_J, r, v)
                        v = add12(row_minv_jt, r, dl, v)
            store12(a, b, v, pvel, pomega)


@njit(cache=True)
def impulse_run(n_steps, dt, t0, params, stats, gravity, gyroscopic, max_speed, max_spin,
                body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inertia, body_inv_inertia,
                body_force, body_torque, force_acc, torque_acc, body_pvel, body_pomega, body_inv_inertia_world,
                load_body, load_force, load_torque, load_point, load_at_point, load_window,
                joint_type, joint_body, joint_anchor_a, joint_anchor_b, joint_frame_a, joint_frame_b,
                joint_limit_lo, joint_limit_hi, joint_limit_on, joint_row_start, joint_row_count,
                joint_q, joint_qd, joint_err, joint_friction, joint_motor_mode, joint_motor_target,
                joint_motor_max, joint_motor_freq, joint_motor_damping, joint_free_used,
                row_joint, row_kind, row_J, row_C, row_active, row_lambda, row_lambda_pos,
                row_minv_jt, row_mass):
    """Advance n_steps steps of dt, each in `substeps` substeps. Rows must hold the current
    poses on entry and hold the final ones on return. Returns the steps done before a
    blow-up (n_steps when none)."""
    substeps = int(params[P_SUBSTEPS])
    h = dt / substeps
    warm = params[P_WARM_START] != 0.0
    split = params[P_STABILIZATION] == SPLIT
    stats[S_CAPPED_STEPS] = 0.0
    stats[S_TOTAL_ITERATIONS] = 0.0
    solve_ticks = 0.0
    for step in range(n_steps):
        solve_ticks = 0.0
        for sub in range(substeps):
            t = t0 + step * dt + sub * h
            gather_forces(t, body_pos, body_quat, body_force, body_torque, load_body, load_force, load_torque,
                          load_point, load_at_point, load_window, force_acc, torque_acc)
            integrate_velocities(body_quat, body_vel, body_omega, body_inv_mass, body_inertia, body_inv_inertia,
                                 force_acc, torque_acc, gravity, gyroscopic, h)
            world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world)
            prepare_rows(row_J, row_joint, row_kind, row_active, joint_body, joint_type, joint_friction,
                         joint_motor_mode, body_inv_mass, body_inv_inertia_world, row_minv_jt, row_mass)
            warm_start(warm, h, joint_type, joint_body, joint_row_start, joint_row_count, joint_friction,
                       joint_motor_mode, joint_motor_max, row_kind, row_active, row_lambda, row_minv_jt,
                       row_mass, body_vel, body_omega)
            solve_velocities(params, h, joint_type, joint_body, joint_row_start, joint_row_count, joint_q,
                             joint_friction, joint_motor_mode, joint_motor_target, joint_motor_max,
                             joint_motor_freq, joint_motor_damping, row_kind, row_J, row_C, row_active,
                             row_lambda, row_minv_jt, row_mass, body_vel, body_omega, stats)
            solve_ticks += stats[S_SOLVE_TICKS]
            if split:
                solve_positions(params, h, joint_type, joint_body, joint_row_start, joint_row_count,
                                joint_friction, joint_motor_mode, row_kind, row_C, row_J, row_active,
                                row_lambda, row_lambda_pos, row_minv_jt, row_mass, body_pvel, body_pomega)
                body_vel += body_pvel
                body_omega += body_pomega
            integrate_positions(body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, h)
            if split:
                body_vel -= body_pvel
                body_omega -= body_pomega
            compute_joint_rows(body_pos, body_quat, joint_type, joint_body, joint_anchor_a, joint_anchor_b,
                               joint_frame_a, joint_frame_b, joint_limit_lo, joint_limit_hi, joint_limit_on,
                               joint_row_start, joint_q, joint_err, row_J, row_C, row_active, joint_free_used,
                               step == n_steps - 1 and sub == substeps - 1)
        stats[S_SOLVE_TICKS] = solve_ticks
        if blown_up(body_vel, body_omega, max_speed, max_spin):
            return step
    compute_joint_rates(joint_type, joint_body, joint_row_start, joint_row_count, row_J,
                        body_vel, body_omega, joint_qd)
    return n_steps
