"""The `penalty` solver (seed 000): each active row becomes a spring-damper.

    F_pen = −Jᵀ(α G + β Ġ)                                  (eq. 9, seed 000)

Two scalings of α and β, chosen per world:

* ``paper`` — exactly seed 000 §5: α = m_eff α*, β = m_eff β* with
  m_eff = 1/(1/m_i + 1/m_j) (masses only), α* = 5000, β* = 25 for translational
  rows and α* = 10000, β* = 10 for rotational rows, tuned for Δt ≈ 3 ms.
* ``critical`` — the row's own effective mass including inertia,
  m_row = 1/(J M⁻¹ Jᵀ), and the step: α = m_row ω²/n, β = 2 ζ m_row ω/n with
  ω = κ/Δt, where n is the number of rows acting on the row's most constrained body.
  The n rows that can push one mode of a body then add up to one critically damped
  (ζ = 1) oscillator whose period is 2π/κ steps, inside the symplectic-Euler
  stability bounds (ωΔt < 2(√2 − 1) and the summed damping hc < 2), whatever the
  masses, inertias and Δt. Without the 1/n the explicit damping of rows sharing a
  body adds up past hc = 2 and the step diverges.
"""
import numpy as np
from numba import njit

from .integrate import blown_up, integrate_positions, integrate_velocities
from .joint_rows import ROW_FREE, compute_joint_rates, compute_joint_rows, row_velocity
from .quat import world_inv_inertia_times

PAPER, CRITICAL = 0, 1
PRESETS = {"paper": PAPER, "critical": CRITICAL}
# params layout: [preset, α*_lin, β*_lin, α*_rot, β*_rot, κ, ζ]
PAPER_DEFAULTS = dict(alpha_lin=5000.0, beta_lin=25.0, alpha_rot=10000.0, beta_rot=10.0)
CRITICAL_DEFAULTS = dict(kappa=0.5, zeta=1.0)


@njit(cache=True, inline="always")
def row_inverse_mass(row_J, r, a, b, body_quat, body_inv_mass, body_inv_inertia):
    """J M⁻¹ Jᵀ of one row (1/kg or 1/(kg·m²))."""
    k = body_inv_mass[a] * (row_J[r, 0] ** 2 + row_J[r, 1] ** 2 + row_J[r, 2] ** 2)
    k += body_inv_mass[b] * (row_J[r, 6] ** 2 + row_J[r, 7] ** 2 + row_J[r, 8] ** 2)
    ix, iy, iz = world_inv_inertia_times(body_quat[a, 0], body_quat[a, 1], body_quat[a, 2], body_quat[a, 3],
                                         body_inv_inertia[a, 0], body_inv_inertia[a, 1], body_inv_inertia[a, 2],
                                         row_J[r, 3], row_J[r, 4], row_J[r, 5])
    k += ix * row_J[r, 3] + iy * row_J[r, 4] + iz * row_J[r, 5]
    ix, iy, iz = world_inv_inertia_times(body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3],
                                         body_inv_inertia[b, 0], body_inv_inertia[b, 1], body_inv_inertia[b, 2],
                                         row_J[r, 9], row_J[r, 10], row_J[r, 11])
    k += ix * row_J[r, 9] + iy * row_J[r, 10] + iz * row_J[r, 11]
    return k


@njit(cache=True)
def penalty_forces(params, h, row_joint, row_kind, row_rot, row_share, row_J, row_C, row_active, joint_body,
                   body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia,
                   force_acc, torque_acc):
    """Add −Jᵀ(αC + βĊ) of every active equality and limit row to the body forces."""
    preset = params[0]
    for r in range(row_C.shape[0]):
        if row_active[r] == 0 or row_kind[r] == ROW_FREE:
            continue
        j = row_joint[r]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        if preset == PAPER:
            s = body_inv_mass[a] + body_inv_mass[b]
            if s == 0.0:
                continue
            m_eff = 1.0 / s
            if row_rot[r]:
                alpha, beta = m_eff * params[3], m_eff * params[4]
            else:
                alpha, beta = m_eff * params[1], m_eff * params[2]
        else:
            k = row_inverse_mass(row_J, r, a, b, body_quat, body_inv_mass, body_inv_inertia)
            if k <= 0.0:
                continue
            w = params[5] / h
            n = row_share[r]
            alpha = w * w / (k * n)
            beta = 2.0 * params[6] * w / (k * n)
        lam = -(alpha * row_C[r] + beta * row_velocity(row_J, r, a, b, body_vel, body_omega))
        force_acc[a, 0] += row_J[r, 0] * lam
        force_acc[a, 1] += row_J[r, 1] * lam
        force_acc[a, 2] += row_J[r, 2] * lam
        torque_acc[a, 0] += row_J[r, 3] * lam
        torque_acc[a, 1] += row_J[r, 4] * lam
        torque_acc[a, 2] += row_J[r, 5] * lam
        force_acc[b, 0] += row_J[r, 6] * lam
        force_acc[b, 1] += row_J[r, 7] * lam
        force_acc[b, 2] += row_J[r, 8] * lam
        torque_acc[b, 0] += row_J[r, 9] * lam
        torque_acc[b, 1] += row_J[r, 10] * lam
        torque_acc[b, 2] += row_J[r, 11] * lam


@njit(cache=True)
def penalty_run(n_steps, h, params, gravity, gyroscopic, max_speed, max_spin,
                body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inertia, body_inv_inertia,
                body_force, body_torque, force_acc, torque_acc,
                joint_type, joint_body, joint_anchor_a, joint_anchor_b, joint_frame_a, joint_frame_b,
                joint_limit_lo, joint_limit_hi, joint_limit_on, joint_row_start, joint_row_count,
                joint_q, joint_qd, joint_err,
                row_joint, row_kind, row_rot, row_share, row_J, row_C, row_active):
    """Advance n_steps fixed steps. Rows must hold the current poses on entry; they hold
    the final poses on return. Returns the number of steps done before a blow-up
    (n_steps when none)."""
    for step in range(n_steps):
        force_acc[:, :] = body_force
        torque_acc[:, :] = body_torque
        penalty_forces(params, h, row_joint, row_kind, row_rot, row_share, row_J, row_C, row_active, joint_body,
                       body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, force_acc, torque_acc)
        integrate_velocities(body_quat, body_vel, body_omega, body_inv_mass, body_inertia, body_inv_inertia,
                             force_acc, torque_acc, gravity, gyroscopic, h)
        integrate_positions(body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, h)
        compute_joint_rows(body_pos, body_quat, joint_type, joint_body, joint_anchor_a, joint_anchor_b,
                           joint_frame_a, joint_frame_b, joint_limit_lo, joint_limit_hi, joint_limit_on,
                           joint_row_start, joint_q, joint_err, row_J, row_C, row_active)
        if blown_up(body_vel, body_omega, max_speed, max_spin):
            return step
    compute_joint_rates(joint_type, joint_body, joint_row_start, joint_row_count, row_J,
                        body_vel, body_omega, joint_qd)
    return n_steps
