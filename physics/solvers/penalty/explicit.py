"""The paper and critical presets' explicit penalty forces, −Jᵀ(αC + βĊ) (eq. 9, seed 000).

``critical``: α_r = ω²/D_r, β_r = 2ζω/D_r with ω = κ/Δt, where D_r bounds the r-th
Gershgorin row sum of A = J M⁻¹ Jᵀ (over the rows sharing a body with r). Then every
eigenvalue λ of diag(α)A is ≤ ω², the damping diag(β)A = (2ζ/ω) diag(α)A acts on the same
modes, and semi-implicit Euler is stable when κ² + 4ζκ < 4 (κ < 0.83 at ζ = 1); κ = 0.7 by
default. D_r = Σ_{bodies b of r} Σ_{rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ| (≥ the row sum, by
the triangle inequality), from a static list of the rows on each body. Explicit penalty
cannot be both stiff and stable where a row's effective mass is dominated by a small
inertia on a long lever: there the row is soft.
"""
from ...jit import helper

from ...joint_rows import ROW_FREE, row_velocity
from ...quat import world_inv_inertia_times
from ..row_ops import scatter_row
from .settings import CRITICAL, PAPER

# ωΔt of a contact's spring under the explicit presets (contacts.penalty_contact_forces): a
# body resting at Δt sinks g(Δt/κ)²
CONTACT_KAPPA = 0.5

@helper(cache=True, error_model="numpy", _nrt=False)
def gershgorin_bounds(bodies, rows, work):
    """row_bound[r] = Σ_{bodies b of r} Σ_{active rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|.
    body_row_ptr/body_row_idx list only equality and limit rows (free rows never push)."""
    row_kind, row_J, row_active, row_body = rows.kind, rows.J, rows.active, rows.body
    body_quat, body_inv_mass, body_inv_inertia = bodies.quat, bodies.inv_mass, bodies.inv_inertia
    body_row_ptr, body_row_idx, row_minv_jt, row_bound = work.body_row_ptr, work.body_row_idx, work.minv_jt, work.bound
    # M⁻¹Jᵀ of each side of each active row (zero for inactive rows and static bodies)
    for r in range(row_J.shape[0]):
        on = row_active[r] != 0 and row_kind[r] != ROW_FREE
        for side in range(2):
            i = row_body[r, side]
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


@helper(cache=True, error_model="numpy", _nrt=False)
def penalty_forces(params, h, bodies, rows, work):
    """Add −Jᵀ(αC + βĊ) of every active equality and limit row to the body forces
    (the explicit presets)."""
    preset = params.preset
    if preset == CRITICAL:
        gershgorin_bounds(bodies, rows, work)
    row_kind, row_rot, row_J, row_C, row_active = rows.kind, rows.rot, rows.J, rows.C, rows.active
    row_body = rows.body
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    row_bound, force_acc, torque_acc = work.bound, work.force_acc, work.torque_acc
    for r in range(row_C.shape[0]):
        if row_active[r] == 0 or row_kind[r] == ROW_FREE:
            continue
        a = row_body[r, 0]
        b = row_body[r, 1]
        if preset == PAPER:
            s = body_inv_mass[a] + body_inv_mass[b]
            if s == 0.0:
                continue
            m_eff = 1.0 / s
            if row_rot[r]:
                alpha, beta = m_eff * params.alpha_rot, m_eff * params.beta_rot
            else:
                alpha, beta = m_eff * params.alpha_lin, m_eff * params.beta_lin
        else:
            d = row_bound[r]
            if d <= 0.0:
                continue
            w = params.kappa / h
            alpha = w * w / d
            beta = 2.0 * params.zeta * w / d
        lam = -(alpha * row_C[r] + beta * row_velocity(row_J, r, a, b, body_vel, body_omega))
        scatter_row(row_J, r, a, b, lam, force_acc, torque_acc)
