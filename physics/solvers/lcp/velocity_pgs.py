"""Projected Gauss–Seidel in velocity form: the many-contact path of the LCP when no U row
touches a body of the joint tree and no loop rows are eliminated (M̂ = M⁻¹ on every row's
bodies). A = J M⁻¹ Jᵀ is never formed: each row keeps M⁻¹J_uᵀ (12 numbers, from the
bodies' inverse masses and world inverse inertias) and its diagonal J_u M⁻¹ J_uᵀ, and a
sweep reads and writes the impulses' velocity change D = M⁻¹ J_Uᵀ λ on the row's two
bodies — (A λ + b)_u = b_u + J_u D + ε_u λ_u. The same rows and clamps as PGS on the
assembled A (dense.pgs; with the patch passes below, in another order), in O(rows) per
sweep instead of O(nonzeros of A), and nothing to build (the
sequential impulses of Catto, "Iterative dynamics with temporal coherence", 2005 — the
impulse family's sweeps — on the LCP's rows and box friction). The rows of one
body pair are consecutive (a contact's normals, then its friction rows): their two bodies'
velocities are loaded once per pair and sweep (row_ops' 12-tuples, as the impulse
family's contact sweeps).

A patch's rows (more than 3: its normal rows, then friction) are swept up to PATCH_PASSES
times in a row while one of them changes by more than the larger of tol and momentum_tol
(the contact tolerance: a change the stop rule below would not see), as the impulse
family's patch passes: four normal rows have a system of rank 3, the slow part of Gauss–Seidel on a stack.
The rows of a body pair (a contact's patch), RUN_MAX at most at a time, are swept on
their couplings K = J M⁻¹ Jᵀ, computed once per solve (prepare_rows, the impulse family's
contact blocks): the rows' speeds are read from the bodies once per sweep, each change of
λ updates the run's speeds through K (a few multiplications per row instead of 24) and
goes onto the bodies once at the end of the run — the same iterates as sweeping the rows
one by one. (A pair with more rows — several patches — is swept RUN_MAX rows at a time.)

Stop rule: the largest |Δλ| of a sweep below tol, or the largest momentum change of a body
over the sweep below momentum_tol — |Σ J_uᵀ Δλ_u| over the body's rows, its linear and its
angular part: |m Δv| and |I Δω|, the impulse family's measure (the normal impulses of a
statically indeterminate pile are not unique and keep shifting among the supports sweep
after sweep without moving anything) — or the sweep budget, or the time cap."""
import math

from ...jit import helper

from ...clock import past_cap, ticks
from ...joint_rows import row_velocity
from ..dense import DIAG_FLOOR, _bounds, _row_residual
from ..row_ops import add12, fill2d, jv12, load12, pair_run_end, scatter_row, store12

PATCH_PASSES = 4
RUN_MAX = 8                 # rows of a run swept on its couplings (a patch: 4 normals, 3 friction rows)
# lw.u_k per U row u of such a run starting at row s: K_uj = J_u M⁻¹ J_(s+j)ᵀ in columns j < RUN_MAX,
# then scratch for the sweep: the row's speed b + J V (K_W) and its λ change over the sweep (K_D)
K_W, K_D = RUN_MAX, RUN_MAX + 1


@helper(cache=True)
def off_tree(nu, lw):
    """Whether no U row has a body of the joint tree (its M̂ is then M⁻¹ on them)."""
    u_body, in_tree = lw.u_body, lw.in_tree
    for u in range(nu):
        if in_tree[u_body[u, 0]] == 1 or in_tree[u_body[u, 1]] == 1:
            return False
    return True


@helper(cache=True)
def prepare_rows(nu, body_inv_mass, inv_I, lw):
    """u_mj = M⁻¹J_uᵀ of every U row (0 on a body without mass), the diagonal of A,
    J_u M⁻¹ J_uᵀ + ε_u, in a_diag, and the couplings K of each run (run_end) in u_k;
    moving[i] of the rows' bodies."""
    u_J, u_body, u_eps, u_mj, a_diag, moving = lw.u_J, lw.u_body, lw.u_eps, lw.u_mj, lw.a_diag, lw.moving
    for u in range(nu):
        d = u_eps[u]
        for side in range(2):
            i = u_body[u, side]
            o = 6 * side
            moving[i] = 1 if body_inv_mass[i] != 0.0 else 0
            if body_inv_mass[i] == 0.0:
                for q in range(6):
                    u_mj[u, o + q] = 0.0
                continue
            im = body_inv_mass[i]
            for q in range(3):
                u_mj[u, o + q] = im * u_J[u, o + q]
                u_mj[u, o + 3 + q] = (inv_I[i, 3 * q] * u_J[u, o + 3] + inv_I[i, 3 * q + 1] * u_J[u, o + 4]
                                      + inv_I[i, 3 * q + 2] * u_J[u, o + 5])
            for q in range(6):
                d += u_J[u, o + q] * u_mj[u, o + q]
        a_diag[u] = d
    u_k = lw.u_k
    s = 0
    while s < nu:
        e = run_end(u_body, s, nu)
        for i in range(s, e):
            for j in range(i, e):
                kij = 0.0
                for q in range(12):
                    kij += u_J[i, q] * u_mj[j, q]
                u_k[i, j - s] = kij
                u_k[j, i - s] = kij
        s = e


@helper(cache=True)
def run_end(u_body, s, nu):
    """The end of the run of rows from s that is swept on its couplings: the rows of s's
    body pair (a contact's normals and friction rows), at most RUN_MAX of them."""
    return min(pair_run_end(u_body, s, nu), s + RUN_MAX)


@helper(cache=True)
def velocity_pgs(nu, b, lo, hi, mu, g0, g1, x, max_sweeps, tol, momentum_tol, cap_ticks, lw):
    """PGS on the BLCP (A λ + b, bounds lo/hi or ±mu Σλ of the group g0:g1) from the λ in x
    (clamped first), A in velocity form (prepare_rows), until the stop rule (module
    docstring). Leaves D = M⁻¹J_Uᵀλ in (dvv, dvw). Returns (sweeps, largest |Δλ| of the
    last sweep, capped)."""
    u_body, u_mj, diag = lw.u_body, lw.u_mj, lw.a_diag
    dvv, dvw, moved, moving = lw.dvv, lw.dvw, lw.moved, lw.moving
    t0 = ticks()
    fill2d(dvv, 0.0)
    fill2d(dvw, 0.0)
    dmax = 0.0
    for i in range(nu):
        l, h = _bounds(lo, hi, mu, g0, g1, x, i)
        x[i] = min(max(x[i], l), h)
        dmax = max(dmax, diag[i])
    for i in range(nu):
        if x[i] != 0.0:
            scatter_row(u_mj, i, u_body[i, 0], u_body[i, 1], x[i], dvv, dvw)
    floor = DIAG_FLOOR * dmax
    pass_tol = max(tol, momentum_tol)
    sweeps = 0
    change = 0.0
    capped = False
    while sweeps < max_sweeps and not capped:
        fill2d(moved, 0.0)
        change = 0.0
        u = 0
        while u < nu:
            e = run_end(u_body, u, nu)
            change = max(change, sweep_run(u, e, b, lo, hi, mu, g0, g1, x, pass_tol, floor, lw))
            u = e
        sweeps += 1
        if change < tol or momentum_change(moved, moving) < momentum_tol:
            break
        capped = past_cap(t0, cap_ticks)
    return sweeps, change, capped


@helper(cache=True)
def sweep_run(s, e, b, lo, hi, mu, g0, g1, x, tol, floor, lw):
    """One sweep of the run of rows s:e (run_end) on its couplings u_k: up to PATCH_PASSES
    passes while a row changes by more than tol; the changes then go onto D (dvv, dvw) and
    the sweep's momentum change (moved). Returns the largest |Δλ| of its passes."""
    u_J, u_body, u_eps, u_mj, u_k, diag = lw.u_J, lw.u_body, lw.u_eps, lw.u_mj, lw.u_k, lw.a_diag
    dvv, dvw, moved = lw.dvv, lw.dvw, lw.moved
    a, c = u_body[s, 0], u_body[s, 1]
    v = load12(a, c, dvv, dvw)
    for i in range(s, e):
        u_k[i, K_W] = b[i] + jv12(u_J, i, v)
        u_k[i, K_D] = 0.0
    most = 0.0
    for _ in range(PATCH_PASSES if e - s > 3 else 1):
        largest = 0.0
        for i in range(s, e):
            d = diag[i]
            if not d > floor:
                continue
            w = u_k[i, K_W] + u_eps[i] * x[i]
            l, h = _bounds(lo, hi, mu, g0, g1, x, i)
            new = min(max(x[i] - w / d, l), h)
            dl = new - x[i]
            if dl != 0.0:
                x[i] = new
                u_k[i, K_D] += dl
                for j in range(s, e):
                    u_k[j, K_W] += u_k[j, i - s] * dl
                largest = max(largest, abs(dl))
        most = max(most, largest)
        if largest <= tol:
            break
    for i in range(s, e):
        dl = u_k[i, K_D]
        if dl != 0.0:
            v = add12(u_mj, i, dl, v)
            for q in range(6):
                moved[a, q] += u_J[i, q] * dl
                moved[c, q] += u_J[i, 6 + q] * dl
    store12(a, c, v, dvv, dvw)
    return most


@helper(cache=True)
def momentum_change(moved, moving):
    """The largest |Σ Jᵀ Δλ| of a sweep (its linear or angular part) on a body with mass
    (moved is 0 on the bodies of no row)."""
    largest = 0.0
    for k in range(moved.shape[0]):
        if moving[k] == 1:
            largest = max(largest, math.sqrt(moved[k, 0] ** 2 + moved[k, 1] ** 2 + moved[k, 2] ** 2),
                          math.sqrt(moved[k, 3] ** 2 + moved[k, 4] ** 2 + moved[k, 5] ** 2))
    return largest


@helper(cache=True)
def velocity_residual(nu, b, lo, hi, mu, g0, g1, x, lw):
    """dense.blcp_residual of λ with A in velocity form (D = M⁻¹J_Uᵀλ in dvv, dvw)."""
    u_J, u_body, u_eps, dvv, dvw = lw.u_J, lw.u_body, lw.u_eps, lw.dvv, lw.dvw
    worst = 0.0
    for i in range(nu):
        l, h = _bounds(lo, hi, mu, g0, g1, x, i)
        w = b[i] + row_velocity(u_J, i, u_body[i, 0], u_body[i, 1], dvv, dvw) + u_eps[i] * x[i]
        worst = max(worst, _row_residual(l, h, x[i], w))
    return worst
