"""The `penalty` solver (seed 000): each active row becomes a spring-damper.

    F_pen = −Jᵀ(α G + β Ġ)                                  (eq. 9, seed 000)

Two scalings of α and β, chosen per world:

* ``paper`` — exactly seed 000 §5: α = m_eff α*, β = m_eff β* with
  m_eff = 1/(1/m_i + 1/m_j) (masses only), α* = 5000, β* = 25 for translational
  rows and α* = 10000, β* = 10 for rotational rows, tuned for Δt ≈ 3 ms.
* ``critical`` — stiffness from each row's effective mass *and inertia* and the
  step, so that every mode of the coupled rows stays stable and critically damped:
  α_r = ω²/D_r, β_r = 2ζω/D_r with ω = κ/Δt, where D_r bounds the r-th Gershgorin
  row sum of A = J M⁻¹ Jᵀ (over the rows sharing a body with r). Then every
  eigenvalue λ of diag(α)A is ≤ ω², the damping diag(β)A = (2ζ/ω) diag(α)A acts on
  the same modes, and semi-implicit Euler is stable when κ² + 4ζκ < 4 (κ < 0.83 at
  ζ = 1); κ = 0.7 by default. D_r = Σ_{bodies b of r} Σ_{rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|
  (≥ the row sum, by the triangle inequality), from a static list of the rows on each
  body: O(rows × rows per body) per step.
  Explicit penalty cannot be both stiff and stable where a row's effective mass is
  dominated by a small inertia on a long lever (a small bob on a long arm): there
  the row is soft. Use a smaller Δt, or the impulse solver.
"""
import numpy as np
from numba import njit

from ..integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from ..joint_rows import ROW_FREE, compute_joint_rates, compute_joint_rows, row_velocity
from ..quat import world_inv_inertia_times

PAPER, CRITICAL = 0, 1
PRESETS = {"paper": PAPER, "critical": CRITICAL}
# params layout: [preset, α*_lin, β*_lin, α*_rot, β*_rot, κ, ζ]
PAPER_DEFAULTS = dict(alpha_lin=5000.0, beta_lin=25.0, alpha_rot=10000.0, beta_rot=10.0)
CRITICAL_DEFAULTS = dict(kappa=0.7, zeta=1.0)


@njit(cache=True, error_model="numpy")
def gershgorin_bounds(row_joint, row_kind, row_J, row_active, joint_body, body_quat, body_inv_mass,
                      body_inv_inertia, body_row_ptr, body_row_idx, row_minv_jt, row_bound):
    """row_bound[r] = Σ_{bodies b of r} Σ_{active rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|.
    body_row_ptr/body_row_idx list only equality and limit rows (free rows never push)."""
    # M⁻¹Jᵀ of each side of each active row (zero for inactive rows and static bodies)
    for r in range(row_J.shape[0]):
        on = row_active[r] != 0 and row_kind[r] != ROW_FREE
        for side in range(2):
            i = joint_body[row_joint[r], side]
            o = 6 * side
            if not on:
                for k in range(6):
                    row_minv_jt[r, o + k] = 0.0
                continue
            im = body_inv_mass[i]
            row_minv_jt[r, o] = im * row_J[r, o]
            row_minv_jt[r, o + 1] = im * row_J[r, o + 1]
            row_minv_jt[r, o + 2] = im * row_J[r, o + 2]
            ix, iy, iz = world_inv_inertia_times(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                                 body_inv_inertia[i, 0], body_inv_inertia[i, 1],
                                                 body_inv_inertia[i, 2], row_J[r, o + 3], row_J[r, o + 4],
                                                 row_J[r, o + 5])
            row_minv_jt[r, o + 3] = ix
            row_minv_jt[r, o + 4] = iy
            row_minv_jt[r, o + 5] = iz
        row_bound[r] = 0.0
    # per body: every pair of rows on it adds |J_rb · M⁻¹J_r'bᵀ| to both rows' bounds
    for i in range(body_row_ptr.shape[0] - 1):
        if body_inv_mass[i] == 0.0 and body_inv_inertia[i, 0] == 0.0:
            continue
        for p in range(body_row_ptr[i], body_row_ptr[i + 1]):
            r = body_row_idx[p, 0]
            if row_active[r] == 0:
                continue
            o = 6 * body_row_idx[p, 1]
            for p2 in range(p, body_row_ptr[i + 1]):
                r2 = body_row_idx[p2, 0]
                if row_active[r2] == 0:
                    continue
                o2 = 6 * body_row_idx[p2, 1]
                dot = 0.0
                for k in range(6):
                    dot += row_J[r, o + k] * row_minv_jt[r2, o2 + k]
                dot = abs(dot)
                row_bound[r] += dot
                if p2 != p:
                    row_bound[r2] += dot


@njit(cache=True, error_model="numpy")
def penalty_forces(params, h, row_joint, row_kind, row_rot, body_row_ptr, body_row_idx, row_minv_jt, row_bound, row_J, row_C, row_active, joint_body,
                   body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia,
                   force_acc, torque_acc):
    """Add −Jᵀ(αC + βĊ) of every active equality and limit row to the body forces."""
    preset = params[0]
    if preset == CRITICAL:
        gershgorin_bounds(row_joint, row_kind, row_J, row_active, joint_body, body_quat, body_inv_mass,
                          body_inv_inertia, body_row_ptr, body_row_idx, row_minv_jt, row_bound)
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
            d = row_bound[r]
            if d <= 0.0:
                continue
            w = params[5] / h
            alpha = w * w / d
            beta = 2.0 * params[6] * w / d
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


@njit(cache=True, error_model="numpy")
def penalty_run(n_steps, h, t0, params, gravity, gyroscopic, max_speed, max_spin,
                body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inertia, body_inv_inertia,
                body_force, body_torque, force_acc, torque_acc,
                load_body, load_force, load_torque, load_point, load_at_point, load_window,
                joint_type, joint_body, joint_anchor_a, joint_anchor_b, joint_frame_a, joint_frame_b,
                joint_limit_lo, joint_limit_hi, joint_limit_on, joint_row_start, joint_row_count,
                joint_q, joint_qd, joint_err, joint_free_used,
                row_joint, row_kind, row_rot, row_J, row_C, row_active,
                body_row_ptr, body_row_idx, row_minv_jt, row_bound):
    """Advance n_steps fixed steps. Rows must hold the current poses on entry; they hold
    the final poses on return. Returns the number of steps done before a blow-up
    (n_steps when none)."""
    for step in range(n_steps):
        gather_forces(t0 + step * h, body_pos, body_quat, body_force, body_torque, load_body, load_force,
                      load_torque, load_point, load_at_point, load_window, force_acc, torque_acc)
        penalty_forces(params, h, row_joint, row_kind, row_rot, body_row_ptr, body_row_idx, row_minv_jt, row_bound, row_J, row_C, row_active, joint_body,
                       body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, force_acc, torque_acc)
        integrate_velocities(body_quat, body_vel, body_omega, body_inv_mass, body_inertia, body_inv_inertia,
                             force_acc, torque_acc, gravity, gyroscopic, h)
        integrate_positions(body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, h)
        compute_joint_rows(body_pos, body_quat, joint_type, joint_body, joint_anchor_a, joint_anchor_b,
                           joint_frame_a, joint_frame_b, joint_limit_lo, joint_limit_hi, joint_limit_on,
                           joint_row_start, joint_q, joint_err, row_J, row_C, row_active, joint_free_used,
                           step == n_steps - 1)
        if blown_up(body_vel, body_omega, max_speed, max_spin):
            return step
    compute_joint_rates(joint_type, joint_body, joint_row_start, joint_row_count, row_J,
                        body_vel, body_omega, joint_qd)
    return n_steps
