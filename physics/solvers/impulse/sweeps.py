"""Sequential impulses on the blocks of rows (seed 001): one sweep over the velocities —
per block its equality and limit rows, then its motor or its friction rows (the coupled
solve of eq. 15 and the Coulomb ball of eq. 16) — and one split-impulse sweep over the
pseudo-velocities."""
import math

from ...jit import helper

from ...joint_rows import FREE_CONTACT, FREE_FRICTION, FREE_MOTOR, FREE_OFF, free_rows
from ..row_ops import add12, jv12, load12, store12
from .rows import block_iterates, coupling, normal_sum

# passes over a contact patch's normal rows per sweep (sweep_velocities)
PATCH_PASSES = 5


# ---------------------------------------------------------------------------- a block's constraint rows
@helper(cache=True)
def constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt, start, end, rate, lam,
                    row_direct, velocities, v):
    """Sequential impulses on the equality and limit rows start…end−1 of one block, the
    block's two bodies' velocities held in the 12-tuple v: Δλ = −m (J·V + rate·C + b), the
    accumulated λ clamped to [lo, hi] (one-sided for limits and contact normals,
    unbounded for equality rows); accumulates into lam. rate·C is the Baumgarte bias
    (velocities) or the split-impulse target (pseudo-velocities), 0 for none; b the row's
    velocity bias (`velocities` only: a contact's restitution or speculative target).
    Returns (v, largest |Δλ|). Rows in the direct solve are skipped."""
    largest = 0.0
    for r in range(start, end):
        if row_active[r] == 0 or row_mass[r] == 0.0 or row_direct[r] == 1:
            continue
        b = rate * row_C[r]
        if velocities:
            b += row_bias[r]
        dl = -row_mass[r] * (jv12(row_J, r, v) + b)
        lo, hi = row_lo[r], row_hi[r]
        if lo != -math.inf or hi != math.inf:
            old = lam[r]
            new = min(max(old + dl, lo), hi)
            dl = new - old
        lam[r] += dl
        v = add12(row_minv_jt, r, dl, v)
        largest = max(largest, abs(dl))
    return v, largest



# ---------------------------------------------------------------------------- the Coulomb ball in a block's metric
@helper(cache=True)
def solve3(a00, a01, a02, a11, a12, a22, b0, b1, b2):
    """x = A⁻¹b for a symmetric positive definite 3×3 A (Cramer)."""
    c00 = a11 * a22 - a12 * a12
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    det = a00 * c00 + a01 * c01 + a02 * c02
    c11 = a00 * a22 - a02 * a02
    c12 = a01 * a02 - a00 * a12
    c22 = a00 * a11 - a01 * a01
    return ((c00 * b0 + c01 * b1 + c02 * b2) / det, (c01 * b0 + c11 * b1 + c12 * b2) / det,
            (c02 * b0 + c12 * b1 + c22 * b2) / det)


@helper(cache=True)
def ball_metric_clamp(k00, k01, k02, k11, k12, k22, p0, p1, p2, pmax):
    """A contact's friction impulse p* outside its Coulomb ball ‖p‖ ≤ pmax brought onto it
    in the metric of its block K = J M⁻¹ Jᵀ: p = (K + μI)⁻¹ K p*, μ > 0 with ‖p‖ = pmax
    (Newton on 1/‖p(μ)‖ − 1/pmax, monotone from μ = 0). At the sweep's fixed point the
    sliding velocity J V = −μ p opposes the impulse (maximal dissipation), in the twist row
    too; scaling p* instead leaves J V ∝ K p, which for a narrow patch (K's twist entry
    ∝ r̄²) makes a turning wheel slip along its track. Unused rows: k = 1 off the block, p = 0."""
    q0 = k00 * p0 + k01 * p1 + k02 * p2
    q1 = k01 * p0 + k11 * p1 + k12 * p2
    q2 = k02 * p0 + k12 * p1 + k22 * p2
    mu = 0.0
    x0, x1, x2 = p0, p1, p2
    for _ in range(30):
        n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        if n <= pmax * (1.0 + 1e-10):
            break
        y0, y1, y2 = solve3(k00 + mu, k01, k02, k11 + mu, k12, k22 + mu, x0, x1, x2)
        slope = (x0 * y0 + x1 * y1 + x2 * y2) / (n * n * n)       # d(1/‖p‖)/dμ > 0
        if not slope > 0.0:
            break
        mu += (1.0 / pmax - 1.0 / n) / slope
        x0, x1, x2 = solve3(k00 + mu, k01, k02, k11 + mu, k12, k22 + mu, q0, q1, q2)
    n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    if not (n > 0.0 and math.isfinite(n)):
        x0, x1, x2 = p0, p1, p2
        n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    s = pmax / n if n > pmax else 1.0
    return x0 * s, x1 * s, x2 * s


@helper(cache=True)
def coulomb_block(row_J, row_minv_jt, row_lambda, f0, nf, k00, k01, k02, k11, k12, k22, pmax, ball, v):
    """A block's nf coupled friction rows f0, …: (B M⁻¹ Bᵀ) Δp = −B V (eq. 15, seed 001) with
    B M⁻¹ Bᵀ = (k00 … k22) (unused rows: k = 1 on the diagonal, 0 off it), then the
    Coulomb clamp ‖p‖ ≤ pmax (eq. 16): for a contact's ball (`ball`) in the block's metric
    (ball_metric_clamp), else radially. The change is applied to the pair's velocities v
    (load12's twelve). Returns (v, ‖Δp‖)."""
    r0 = -jv12(row_J, f0, v)
    d0 = d1 = d2 = 0.0
    if nf == 1:
        if k00 > 0.0:
            d0 = r0 / k00
    else:
        r1 = -jv12(row_J, f0 + 1, v)
        if nf == 2:
            det = k00 * k11 - k01 * k01
            if det > 0.0:
                d0 = (r0 * k11 - k01 * r1) / det
                d1 = (k00 * r1 - k01 * r0) / det
        else:
            r2 = -jv12(row_J, f0 + 2, v)
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
    if n > pmax and ball and nf > 1 and pmax > 0.0:
        p0, p1, p2 = ball_metric_clamp(k00, k01, k02, k11, k12, k22, p0, p1, p2, pmax)
    elif n > pmax:
        s = pmax / n if n > 0.0 else 0.0
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
    return v, math.sqrt(dn)



# ---------------------------------------------------------------------------- velocities
@helper(cache=True, _nrt=False)
def sweep_velocities(baumgarte, erp_rate, rows, work, vel, omega, row_direct):
    """One sweep of sequential impulses over every block of rows; returns the largest |Δp|.
    In each block: its equality and limit rows (limits one-sided), then its motor (a soft
    row) or its friction rows (eq. 15 and the ball clamp of eq. 16). Rows in the direct
    solve (row_direct = 1: equality rows of tree joints, active limits) are skipped.
    `_nrt=False` (both sweeps: they allocate nothing): no reference counting of the arrays
    the helpers inlined per block take, a share of every sweep over a heap's contacts."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    row_lo, row_hi, row_bias, row_joint = rows.lo, rows.hi, rows.bias, rows.joint
    row_mass_scale, row_impulse_scale = rows.mass_scale, rows.impulse_scale
    row_minv_jt, row_mass = work.minv_jt, work.mass
    residual = 0.0
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        if row_direct[start] == 1 and not block_iterates(row_kind, row_active, start, end, row_direct):
            continue            # equality rows solved directly, nothing else in use
        a = row_body[start, 0]
        b = row_body[start, 1]
        f0, nf = free_rows(row_kind, start, end)
        v = load12(a, b, vel, omega)
        # constraint rows: equality, then limits (one-sided)
        v, change = constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt, start,
                                    f0, erp_rate if baumgarte else 0.0, row_lambda, row_direct, True, v)
        if f0 - start > 2 and row_joint[start] < 0:
            # a contact patch: its normal rows once more, together (their system has rank 3
            # for four points — the slowest part of Gauss–Seidel on a stack)
            for _ in range(PATCH_PASSES - 1):
                v, _c = constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt,
                                        start, f0, erp_rate if baumgarte else 0.0, row_lambda, row_direct, True, v)
        residual = max(residual, change)
        if nf == 0 or row_active[f0] == FREE_OFF:
            store12(a, b, v, vel, omega)
            continue
        if row_active[f0] == FREE_MOTOR:
            # motor: velocity target or position servo, one soft row (write_drive_rows)
            jv = jv12(row_J, f0, v)
            dl = -row_mass[f0] * row_mass_scale[f0] * (jv + row_bias[f0]) - row_impulse_scale[f0] * row_lambda[f0]
            old = row_lambda[f0]
            new = min(max(old + dl, row_lo[f0]), row_hi[f0])
            dl = new - old
            row_lambda[f0] = new
            v = add12(row_minv_jt, f0, dl, v)
            residual = max(residual, abs(dl))
            store12(a, b, v, vel, omega)
            continue
        pmax = row_hi[f0]
        if row_active[f0] == FREE_CONTACT:
            pmax *= normal_sum(row_lambda, start, f0)     # a contact's ball: μ Σλ_n
        # friction: eq. 15 on the rows' coupling, then the Coulomb clamp of eq. 16
        k00 = coupling(row_J, row_minv_jt, f0, f0)
        k01 = coupling(row_J, row_minv_jt, f0, f0 + 1) if nf > 1 else 0.0
        k11 = coupling(row_J, row_minv_jt, f0 + 1, f0 + 1) if nf > 1 else 1.0
        k02 = coupling(row_J, row_minv_jt, f0, f0 + 2) if nf > 2 else 0.0
        k12 = coupling(row_J, row_minv_jt, f0 + 1, f0 + 2) if nf > 2 else 0.0
        k22 = coupling(row_J, row_minv_jt, f0 + 2, f0 + 2) if nf > 2 else 1.0
        v, dp = coulomb_block(row_J, row_minv_jt, row_lambda, f0, nf, k00, k01, k02, k11, k12, k22, pmax,
                              row_active[f0] == FREE_CONTACT, v)
        residual = max(residual, dp)
        store12(a, b, v, vel, omega)
    return residual



# ---------------------------------------------------------------------------- positions (split impulses)
@helper(cache=True, _nrt=False)
def sweep_positions(rate, rows, work, pvel, pomega, row_direct):
    """One split-impulse sweep: pseudo-velocities V* with J V* = −rate·C on the constraint
    rows (rate = ERP/h); the free rows of a joint held by static friction (sticking) get
    J V* = 0, so drift correction cannot creep through static friction. Rows in the
    direct solve (row_direct = 1) are skipped."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    row_lo, row_hi, row_bias = rows.lo, rows.hi, rows.bias
    row_minv_jt, row_mass, row_lambda_pos = work.minv_jt, work.mass, work.impulse_pos
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        f0, nf = free_rows(row_kind, start, end)
        sticking = False
        if nf > 0 and (row_active[f0] == FREE_FRICTION or row_active[f0] == FREE_CONTACT):
            n = 0.0
            for r in range(f0, end):
                n += row_lambda[r] * row_lambda[r]
            radius = row_hi[f0]
            if row_active[f0] == FREE_CONTACT:
                radius *= normal_sum(row_lambda, start, f0)
            sticking = math.sqrt(n) < radius * (1.0 - 1e-9) and row_direct[f0] != 1   # (locked: direct)
        if row_direct[start] == 1 and not sticking and not block_iterates(row_kind, row_active, start, f0, row_direct):
            continue
        a = row_body[start, 0]
        b = row_body[start, 1]
        v = load12(a, b, pvel, pomega)
        v, _ = constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt, start, f0,
                               rate, row_lambda_pos, row_direct, False, v)
        if sticking:
            for r in range(f0, end):
                if row_mass[r] > 0.0:
                    dl = -row_mass[r] * jv12(row_J, r, v)
                    row_lambda_pos[r] += dl
                    v = add12(row_minv_jt, r, dl, v)
        store12(a, b, v, pvel, pomega)
