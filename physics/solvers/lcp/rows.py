"""The rows of a phase of the step: the loop joints' equality rows (L) and the one-sided
and bounded rows (U: limits, joint friction and motors, contacts with their friction),
with the contacts' tangent pairs turned along their sliding direction."""
import math

from ...jit import helper

from ...joint_rows import FREE_CONTACT, FREE_FRICTION, FREE_MOTOR, free_rows, row_velocity
from ...joint_types import N_EQ, N_FREE, N_LIMIT
from ..row_ops import plain_k


# phases of a step
IMPACT_PHASE, VELOCITY_PHASE = 0, 1
# position roles of a U row in the split pass
POS_NONE, POS_BOUNDED, POS_FREE_ROW = 0, 1, 2


# ---------------------------------------------------------------------------- capacity and loops
@helper(cache=True)
def count_rows(joints, rows, crows, body_inv_mass):
    """At least as many as the U rows the velocity phase can have (the impact phase has
    fewer)."""
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_active, c_active = rows.active, crows.active
    n = 0
    for k in range(joint_type.shape[0]):
        if body_inv_mass[joint_body[k, 0]] == 0.0 and body_inv_mass[joint_body[k, 1]] == 0.0:
            continue
        t = joint_type[k]
        start = joint_row_start[k] + N_EQ[t]
        for r in range(start, start + N_LIMIT[t] + N_FREE[t]):
            if row_active[r] != 0:
                n += 1
    return n + c_active.shape[0]        # every contact row (classify_contacts may switch some on)


@helper(cache=True)
def collect_loops(joints, rows, tree, body_inv_mass, lw, couplings):
    """The equality rows of the joints that close loops (not in the tree), then the
    couplings between joints (../couplings.py: their two halves, as written at the step's
    poses; None: none): returns their count (written while it fits the capacity)."""
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_C, loop_joints = rows.J, rows.C, tree.loop_joints
    l_row, l_body, l_J, l_C = lw.l_row, lw.l_body, lw.l_J, lw.l_C
    cap = l_row.shape[0]                        # a coupling's second half at cap + n
    n = 0
    for t in range(loop_joints.shape[0]):
        k = loop_joints[t]
        a, b = joint_body[k, 0], joint_body[k, 1]
        if body_inv_mass[a] == 0.0 and body_inv_mass[b] == 0.0:
            continue
        for r in range(joint_row_start[k], joint_row_start[k] + N_EQ[joint_type[k]]):
            if n < cap:
                l_row[n] = r
                l_body[n, 0] = a
                l_body[n, 1] = b
                for q in range(12):
                    l_J[n, q] = row_J[r, q]
                l_C[n] = row_C[r]
                l_body[cap + n, 0] = -1
            n += 1
    if couplings is not None:
        cb, cJ = couplings.body, couplings.J
        for c in range(cb.shape[0]):
            moves = False
            for half in range(2):
                for side in range(2):
                    moves = moves or body_inv_mass[cb[c, half, side]] != 0.0
            if not moves:
                continue
            if n < cap:
                l_row[n] = -1 - c
                for side in range(2):
                    l_body[n, side] = cb[c, 0, side]
                    l_body[cap + n, side] = cb[c, 1, side]
                for q in range(12):
                    l_J[n, q] = cJ[c, 0, q]
                    l_J[cap + n, q] = cJ[c, 1, q]
                l_C[n] = couplings.C[c]
            n += 1
    return n


# ---------------------------------------------------------------------------- U rows
@helper(cache=True)
def add_row(lw_arrays, n, tab, r, a, b, J, lo, hi, bias, C, warm):
    """Append row r of table `tab` (0 joints, 1 contacts) to U at index n; returns n + 1."""
    u_tab, u_row, u_body, u_J, u_lo, u_hi, u_mu, u_bias, u_C, u_eps, u_pos, x = lw_arrays
    u_tab[n] = tab
    u_row[n] = r
    u_body[n, 0] = a
    u_body[n, 1] = b
    for q in range(12):
        u_J[n, q] = J[r, q]
    u_lo[n] = lo
    u_hi[n] = hi
    u_mu[n] = 0.0
    u_bias[n] = bias
    u_C[n] = C
    u_eps[n] = 0.0
    u_pos[n] = POS_BOUNDED
    x[n] = warm
    return n + 1


@helper(cache=True)
def collect_rows(phase, rate, bodies, joints, rows, crows, lw):
    """The U rows of a phase (package docstring), with their bounds, velocity targets
    (plus the Baumgarte bias rate·C), drift values, position roles and warm start (x).
    Impact phase: active limits, touching contact normals (ġ⁺ + e ġ⁻ ≥ 0 for the
    impacting ones, ġ⁺ ≥ 0 for the others) and their friction. Velocity phase: also
    joint friction and motors, speculative contacts. Returns the row count."""
    body_inv_mass, body_inv_inertia, body_quat = bodies.inv_mass, bodies.inv_inertia, bodies.quat
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_C, row_active, row_lo, row_hi, row_bias = rows.J, rows.C, rows.active, rows.lo, rows.hi, rows.bias
    row_mass_scale, row_impulse_scale, row_lambda = rows.mass_scale, rows.impulse_scale, rows.impulse
    c_J, c_C, c_active, c_bias, c_kind, c_hi = crows.J, crows.C, crows.active, crows.bias, crows.kind, crows.hi
    c_lambda, c_body, block_start, block_count = crows.impulse, crows.body, crows.block_start, crows.block_count
    u_mu, u_g0, u_g1, u_eps, u_pos = lw.u_mu, lw.u_g0, lw.u_g1, lw.u_eps, lw.u_pos
    c_imp = lw.c_imp
    arrays = (lw.u_tab, lw.u_row, lw.u_body, lw.u_J, lw.u_lo, lw.u_hi, lw.u_mu, lw.u_bias, lw.u_C, lw.u_eps,
              lw.u_pos, lw.x)
    n = 0
    for k in range(joint_type.shape[0]):
        a, b = joint_body[k, 0], joint_body[k, 1]
        if body_inv_mass[a] == 0.0 and body_inv_mass[b] == 0.0:
            continue
        t = joint_type[k]
        start = joint_row_start[k] + N_EQ[t]
        for r in range(start, start + N_LIMIT[t]):
            if row_active[r] != 0:
                warm = row_lambda[r] if phase == VELOCITY_PHASE else 0.0
                n = add_row(arrays, n, 0, r, a, b, row_J, row_lo[r], row_hi[r], rate * row_C[r] + row_bias[r],
                            row_C[r], warm)     # bias: a speculative limit's ±d/h
        if phase == IMPACT_PHASE:
            continue
        for r in range(start + N_LIMIT[t], start + N_LIMIT[t] + N_FREE[t]):
            act = row_active[r]
            if act == FREE_FRICTION:
                n = add_row(arrays, n, 0, r, a, b, row_J, row_lo[r], row_hi[r], 0.0, 0.0, row_lambda[r])
                u_pos[n - 1] = POS_FREE_ROW
            elif act == FREE_MOTOR and row_hi[r] > row_lo[r] and row_mass_scale[r] > 0.0:
                n = add_row(arrays, n, 0, r, a, b, row_J, row_lo[r], row_hi[r], row_bias[r], 0.0, row_lambda[r])
                u_pos[n - 1] = POS_NONE
                # soft row (Box2D's soft step, joint_rows.write_drive_rows): its fixed point
                # J·V + bias + ε λ = 0 with ε = impulse_scale / (mass_scale · m_eff)
                u_eps[n - 1] = row_impulse_scale[r] / row_mass_scale[r] * plain_k(row_J, r, a, b, body_inv_mass,
                                                                                    body_inv_inertia, body_quat)
    for blk in range(block_start.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = free_rows(c_kind, start, end)[0]
        a, b = c_body[start, 0], c_body[start, 1]
        g0 = n
        for r in range(start, f0):
            if c_active[r] == 0:
                continue
            if phase == IMPACT_PHASE:
                if c_imp[r] == 0 and c_bias[r] > 0.0:
                    continue                # speculative: not touching yet
                bias = c_bias[r] if c_imp[r] == 1 else 0.0
                n = add_row(arrays, n, 1, r, a, b, c_J, 0.0, math.inf, bias, c_C[r], 0.0)
            else:
                n = add_row(arrays, n, 1, r, a, b, c_J, 0.0, math.inf, c_bias[r] + rate * c_C[r], c_C[r],
                            c_lambda[r])
        g1 = n
        if g1 > g0 and f0 < end and c_active[f0] == FREE_CONTACT:
            for r in range(f0, end):
                n = add_row(arrays, n, 1, r, a, b, c_J, 0.0, 0.0, 0.0, 0.0,
                            c_lambda[r] if phase == VELOCITY_PHASE else 0.0)
                u_mu[n - 1] = c_hi[f0]
                u_g0[n - 1] = g0
                u_g1[n - 1] = g1
                u_pos[n - 1] = POS_FREE_ROW
    return n


# ---------------------------------------------------------------------------- friction directions
@helper(cache=True)
def align_friction(crows, bodies, fv, fw, keep_sticking):
    """Turn each contact's tangent pair so that t1 points along the contact's tangential
    velocity in the free motion (fv, fw), with the warm-start impulses turned alike.
    `keep_sticking` (PGS will solve the step): only the contacts that will slide are
    turned — those whose free tangential speed is more than their warm-start friction
    bound μ Σλ_n can take away (× J M⁻¹ Jᵀ of the tangent rows, the bodies' own inertia).
    One that sticks keeps contacts.py's pair: its free tangential velocity is round-off (two
    touching bodies fall alike), and turning the box along it would move the box's corners,
    and with them the solution, at every step — PGS would start each step away from its
    warm start. Lemke starts from nothing, so it loses nothing to the turn (and on a
    stack's four coplanar corners it meets a degenerate basis more often without it)."""
    c_J, c_active, c_kind, c_body, c_lambda, c_hi = crows.J, crows.active, crows.kind, crows.body, crows.impulse, \
        crows.hi
    body_inv_mass, body_inv_inertia, body_quat = bodies.inv_mass, bodies.inv_inertia, bodies.quat
    block_start, block_count = crows.block_start, crows.block_count
    for blk in range(block_start.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = free_rows(c_kind, start, end)[0]
        if end - f0 < 2 or c_active[f0] != FREE_CONTACT:
            continue
        a, b = c_body[f0, 0], c_body[f0, 1]
        s1 = row_velocity(c_J, f0, a, b, fv, fw)
        s2 = row_velocity(c_J, f0 + 1, a, b, fv, fw)
        s = math.sqrt(s1 * s1 + s2 * s2)
        if not s > 1e-12:
            continue
        if keep_sticking:
            pushed = 0.0
            for r in range(start, f0):
                if c_active[r] != 0:
                    pushed += c_lambda[r]
            k = max(plain_k(c_J, f0, a, b, body_inv_mass, body_inv_inertia, body_quat),
                    plain_k(c_J, f0 + 1, a, b, body_inv_mass, body_inv_inertia, body_quat))
            if s <= c_hi[f0] * pushed * k:
                continue                    # sticks
        c, sn = s1 / s, s2 / s
        for q in range(12):
            j1, j2 = c_J[f0, q], c_J[f0 + 1, q]
            c_J[f0, q] = c * j1 + sn * j2
            c_J[f0 + 1, q] = -sn * j1 + c * j2
        l1, l2 = c_lambda[f0], c_lambda[f0 + 1]
        c_lambda[f0] = c * l1 + sn * l2
        c_lambda[f0 + 1] = -sn * l1 + c * l2
