"""Dense solvers of the `lcp` family's small problems (scalar numba code, plain arrays).

The bounded mixed LCP (BLCP) of one step, over n rows with a symmetric positive
semi-definite A (n × n, physics/solvers/lcp.py builds it as J_u M̂ J_uᵀ):

    w = A λ + b,   for each row i one of
        lo_i < λ_i < hi_i  and  w_i = 0
        λ_i = lo_i         and  w_i ≥ 0
        λ_i = hi_i         and  w_i ≤ 0

where a friction row (mu_i > 0) has the bounds ±mu_i·Σ λ_k over the normal rows
k ∈ [g0_i, g1_i) of its contact (a box — per row — around the friction cone: the
pyramid approximation; physics/solvers/lcp.py states how it is aligned).

Two methods:

  lemke    complementary pivoting (Lemke's method with the covering vector 1 and a
           lexicographic ratio test, so degenerate problems — four coplanar contact
           points, two contacts on one constraint direction — cannot cycle) on the
           standard LCP  W = M z + q ≥ 0, z ≥ 0, zᵀW = 0  that the BLCP becomes:
             a one-sided row:        λ = lo + z  (or hi − z),  W = ±w
             a bounded row:          λ = m + z⁺ − z⁻ (m the middle of the bounds),
                                     W± = ±w + γ,  and a slack row c − z⁺ − z⁻ ≥ 0 ⊥ γ
                                     (c the half-width; for friction c = mu Σ λ_n)
           (Stewart & Trinkle's form of friction, one pyramid face pair per row); the
           tableau is n_lcp × (2 n_lcp + 2), O(n_lcp²) per pivot, a few n_lcp pivots.
           It either finishes exactly or fails (ray, pivot budget, a non-finite pivot,
           or a basic variable driven negative by round-off — heavily redundant rows,
           e.g. a tall stack of four-point faces, make the basis ill-conditioned): it
           cannot be cut midway and return something usable. The variables are scaled
           to a unit diagonal first (a small patch's twist row is ~10⁴ times a normal
           row), so one pivot tolerance fits every row.
  pgs      projected Gauss–Seidel on the BLCP itself, from a warm start: O(nnz) per
           sweep, stopped by a tolerance on the largest |Δλ|, a sweep budget or a
           wall-clock cap — any sweep leaves a feasible λ.

Also: a pivoted Cholesky that drops dependent rows (the loop-closing joints' rows
that repeat the tree's, e.g. a four-bar of revolutes in 3-D: 20 rows of rank 17) and
solves the consistent subsystem.
"""
from collections import namedtuple
import math

import numpy as np
from ..jit import kernel, helper

from ..clock import past_cap, ticks

LEMKE_OK, LEMKE_RAY, LEMKE_BUDGET, LEMKE_NONFINITE, LEMKE_LOST = range(5)
LemkeWork = namedtuple("LemkeWork", "M q T basis z var_row var_sign var_off first slack scale")
"""Work of Lemke's method on a BLCP of up to n rows (m = 3n LCP variables): M (m,m), q (m,),
T (m, 2m+2) tableau, basis (m,) int, z (m,), var_row (m,) int, var_sign (m,), and per BLCP
row var_off (n,), first (n,) int, slack (n,) int; scale (m,) of each LCP variable
(blcp_to_lcp)."""
PIVOT_TOL = 1e-9            # entries of the (scaled) entering column below this cannot pivot
TIE_TOL = 1e-11             # ratios this close (relative) are ties, broken lexicographically
RHS_TOL = 1e-7              # a basic variable below −this (× max(1, |q|)) means round-off took over


# ---------------------------------------------------------------------------- Lemke
@helper(cache=True)
def lemke(M, q, n, T, basis, z, max_pivots):
    """Solve W = M z + q ≥ 0, z ≥ 0, zᵀW = 0 (n × n, the leading block of M and q) by
    Lemke's method. T: tableau work (≥ n × (2n + 2)); basis: (≥ n,) int work; z: the
    solution (n,). Returns (status, pivots). Variables: 0…n−1 are W, n…2n−1 are z, 2n
    is the artificial z0; column 2n + 1 of T is the right-hand side."""
    for i in range(n):
        z[i] = 0.0
    qmin = 0.0
    r = -1
    for i in range(n):
        if q[i] < qmin:
            qmin = q[i]
            r = i
    if r < 0:
        return LEMKE_OK, 0                  # q ≥ 0: z = 0
    width = 2 * n + 2
    rhs = 2 * n + 1
    scale = 0.0
    for i in range(n):
        for j in range(width):
            T[i, j] = 0.0
        T[i, i] = 1.0
        for j in range(n):
            T[i, n + j] = -M[i, j]
            scale = max(scale, abs(M[i, j]))
        T[i, 2 * n] = -1.0
        T[i, rhs] = q[i]
        basis[i] = i
    scale = max(scale, 1.0)
    lost = RHS_TOL * max(-qmin, 1.0)
    entering = 2 * n                        # z0 enters, the most negative q leaves
    pivots = 0
    while True:
        if pivots > 0:
            # ratio test on the entering column, ties broken lexicographically on the
            # rows of B⁻¹ (the tableau's first n columns) — no cycling
            r = -1
            best = 0.0
            tol = PIVOT_TOL * scale
            for i in range(n):
                a = T[i, entering]
                if a <= tol:
                    continue
                ratio = T[i, rhs] / a
                if r < 0 or ratio < best - TIE_TOL * (1.0 + abs(best)):
                    r = i
                    best = ratio
                elif ratio <= best + TIE_TOL * (1.0 + abs(best)):
                    if basis[i] == 2 * n:
                        r = i                   # z0 can leave: finish now
                        best = ratio
                    elif basis[r] != 2 * n and _lex_less(T, i, r, entering, n):
                        r = i
                        best = min(best, ratio)
            if r < 0:
                return LEMKE_RAY, pivots
        # pivot on (r, entering)
        p = T[r, entering]
        if not (abs(p) > 0.0 and math.isfinite(p)):
            return LEMKE_NONFINITE, pivots
        inv = 1.0 / p
        for j in range(width):
            T[r, j] *= inv
        for i in range(n):
            if i == r:
                continue
            f = T[i, entering]
            if f != 0.0:
                for j in range(width):
                    T[i, j] -= f * T[r, j]
            if T[i, rhs] < 0.0:
                if T[i, rhs] < -lost:
                    return LEMKE_LOST, pivots + 1   # ill-conditioned basis (many redundant rows)
                T[i, rhs] = 0.0             # round-off: a degenerate basic variable
        leaving = basis[r]
        basis[r] = entering
        pivots += 1
        if leaving == 2 * n:
            break                           # z0 left: a solution
        if pivots >= max_pivots:
            return LEMKE_BUDGET, pivots
        entering = leaving + n if leaving < n else leaving - n    # the complement
    for i in range(n):
        v = basis[i]
        if n <= v < 2 * n:
            val = T[i, rhs]
            if not math.isfinite(val):
                return LEMKE_NONFINITE, pivots
            z[v - n] = max(val, 0.0)
    return LEMKE_OK, pivots


@helper(cache=True, _nrt=False)
def _lex_less(T, i, r, entering, n):
    """Row i's B⁻¹ row divided by its pivot entry precedes row r's, lexicographically."""
    ai = T[i, entering]
    ar = T[r, entering]
    for k in range(n):
        x = T[i, k] / ai
        y = T[r, k] / ar
        d = x - y
        if abs(d) > TIE_TOL * (1.0 + abs(x) + abs(y)):
            return d < 0.0
    return False


# ---------------------------------------------------------------------------- BLCP → LCP
@helper(cache=True)
def blcp_to_lcp(A, b, lo, hi, mu, g0, g1, n, work):
    """The standard LCP (M, q) of the BLCP (module docstring), written into work.M, work.q.
    Per LCP variable j < the returned count: var_row[j] the BLCP row it belongs to (−1 for
    a slack γ), var_sign[j] ±1 (λ = off + Σ sign·z); var_off[row] each row's offset (the
    middle of its bounds, or its finite bound). Returns the LCP size, or −1 when a
    friction row's normals are not one-sided rows with lo = 0 (then use PGS)."""
    M, q, var_row, var_sign, var_off = work.M, work.q, work.var_row, work.var_sign, work.var_off
    first, slack = work.first, work.slack   # each row's first LCP variable, its slack (or −1)
    # pass 1: variables
    nv = 0
    for i in range(n):
        first[i] = nv
        slack[i] = -1
        l, h = lo[i], hi[i]
        if mu[i] > 0.0:
            var_off[i] = 0.0
            var_row[nv], var_sign[nv] = i, 1.0
            var_row[nv + 1], var_sign[nv + 1] = i, -1.0
            var_row[nv + 2], var_sign[nv + 2] = -1, 1.0
            slack[i] = nv + 2
            nv += 3
        elif l == h:
            var_off[i] = l                  # fixed: no variable
        elif l == -math.inf and h == math.inf:
            var_off[i] = 0.0
            var_row[nv], var_sign[nv] = i, 1.0
            var_row[nv + 1], var_sign[nv + 1] = i, -1.0
            nv += 2
        elif h == math.inf:
            var_off[i] = l
            var_row[nv], var_sign[nv] = i, 1.0
            nv += 1
        elif l == -math.inf:
            var_off[i] = h
            var_row[nv], var_sign[nv] = i, -1.0
            nv += 1
        else:
            var_off[i] = 0.5 * (l + h)
            var_row[nv], var_sign[nv] = i, 1.0
            var_row[nv + 1], var_sign[nv + 1] = i, -1.0
            var_row[nv + 2], var_sign[nv + 2] = -1, 1.0
            slack[i] = nv + 2
            nv += 3
    for i in range(n):                      # the normals of a friction group: λ = z, one variable
        if mu[i] > 0.0:
            for k in range(g0[i], g1[i]):
                if not (lo[k] == 0.0 and hi[k] == math.inf and mu[k] == 0.0):
                    return -1
    # pass 2: M and q
    for j in range(nv):
        for k in range(nv):
            M[j, k] = 0.0
        q[j] = 0.0
    for j in range(nv):
        rj = var_row[j]
        if rj < 0:
            continue
        sj = var_sign[j]
        s = b[rj]
        for c in range(n):
            s += A[rj, c] * var_off[c]
        q[j] = sj * s
        for k in range(nv):
            rk = var_row[k]
            if rk >= 0:
                M[j, k] = sj * var_sign[k] * A[rj, rk]
        if slack[rj] >= 0:
            M[j, slack[rj]] = 1.0           # W± = ±w + γ
    for i in range(n):
        g = slack[i]
        if g < 0:
            continue
        M[g, first[i]] = -1.0               # c − z⁺ − z⁻
        M[g, first[i] + 1] = -1.0
        if mu[i] > 0.0:
            q[g] = 0.0
            for k in range(g0[i], g1[i]):
                M[g, first[k]] += mu[i]     # c = mu Σ λ_n
        else:
            q[g] = 0.5 * (hi[i] - lo[i])
    # scale the variables (z = S z̃, W̃ = S W keeps the complementarity) to a unit diagonal,
    # so that one pivot tolerance fits rows of any size (a small patch's twist row is ~10⁴
    # times a normal row); a slack γ takes the inverse of its row's scale
    sc = work.scale
    for j in range(nv):
        rj = var_row[j]
        sc[j] = 1.0 / math.sqrt(M[j, j]) if rj >= 0 and M[j, j] > 0.0 else 1.0
    for i in range(n):
        if slack[i] >= 0:
            sc[slack[i]] = 1.0 / sc[first[i]]
    for j in range(nv):
        q[j] *= sc[j]
        for k in range(nv):
            M[j, k] *= sc[j] * sc[k]
    return nv


@helper(cache=True)
def lcp_to_blcp(z, nv, var_row, var_sign, var_off, n, x):
    """λ (x, n rows) from the LCP solution z (nv variables)."""
    for i in range(n):
        x[i] = var_off[i]
    for j in range(nv):
        r = var_row[j]
        if r >= 0:
            x[r] += var_sign[j] * z[j]


@kernel(cache=True)
def blcp_residual(A, b, lo, hi, mu, g0, g1, n, x):
    """How far λ is from solving the BLCP: the largest bound violation or |w| on a row
    strictly inside its bounds, or wrong-signed w on a row at a bound (units of w)."""
    worst = 0.0
    for i in range(n):
        l, h = _bounds(lo, hi, mu, g0, g1, x, i)
        w = b[i]
        for j in range(n):
            w += A[i, j] * x[j]
        worst = max(worst, _row_residual(l, h, x[i], w))
    return worst


@helper(cache=True)
def _row_residual(l, h, xi, w):
    """blcp_residual's measure of one row with bounds [l, h], λ = xi and w = (Aλ + b)_i."""
    tol = 1e-9 * (1.0 + abs(l) + abs(h) if math.isfinite(l) and math.isfinite(h) else 1.0)
    worst = max(0.0, l - xi, xi - h)
    if xi <= l + tol:
        return max(worst, -w) if xi < h - tol else worst
    if xi >= h - tol:
        return max(worst, w)
    return max(worst, abs(w))


@helper(cache=True, _nrt=False)
def _bounds(lo, hi, mu, g0, g1, x, i):
    """Row i's bounds with the current λ (a friction row: ±mu Σ λ_n of its group)."""
    if mu[i] > 0.0:
        s = 0.0
        for k in range(g0[i], g1[i]):
            s += x[k]
        c = mu[i] * max(s, 0.0)
        return -c, c
    return lo[i], hi[i]


@kernel(cache=True)
def solve_blcp_lemke(A, b, lo, hi, mu, g0, g1, n, x, work):
    """The BLCP by Lemke's method: returns (status, pivots, LCP size); x holds λ when the
    status is LEMKE_OK. work: LemkeWork for at least n rows."""
    nv = blcp_to_lcp(A, b, lo, hi, mu, g0, g1, n, work)
    if nv < 0:
        return LEMKE_NONFINITE, 0, 0
    status, pivots = lemke(work.M, work.q, nv, work.T, work.basis, work.z, 50 + 10 * nv)
    if status == LEMKE_OK:
        z, sc = work.z, work.scale
        for j in range(nv):
            z[j] *= sc[j]
        lcp_to_blcp(z, nv, work.var_row, work.var_sign, work.var_off, n, x)
    return status, pivots, nv


# ---------------------------------------------------------------------------- PGS
@kernel(cache=True)
def sparsity(A, n, ptr, idx, val, diag):
    """A's leading n × n block as pgs takes it: CSR rows of its nonzeros (ptr (n+1,), idx,
    val) and its diagonal (diag (n,))."""
    k = 0
    for i in range(n):
        ptr[i] = k
        diag[i] = A[i, i]
        for j in range(n):
            if A[i, j] != 0.0:
                idx[k] = j
                val[k] = A[i, j]
                k += 1
    ptr[n] = k


# PGS leaves a row alone whose diagonal is below this share of the largest (A = J M̂ Jᵀ is
# formed by tree solves to ~1e-16 of its scale: such a row moves nothing)
DIAG_FLOOR = 1e-12


@kernel(cache=True)
def pgs(ptr, idx, val, diag, b, lo, hi, mu, g0, g1, n, x, max_sweeps, tol, cap_ticks):
    """Projected Gauss–Seidel on the BLCP from the λ in x (clamped first), the matrix as CSR
    rows of its nonzeros (ptr, idx, val; the diagonal among them) and its diagonal (diag): sparsity()
    of a dense A, or lcp.sparse_system; O(nonzeros) per sweep. Returns (sweeps, largest
    |Δλ| of the last sweep, capped). A row with a zero diagonal — or below DIAG_FLOOR of
    the largest: round-off of a row the joints already hold, e.g. a contact between two
    bodies turning on one axis — keeps its λ."""
    t0 = ticks()
    dmax = 0.0
    for i in range(n):
        l, h = _bounds(lo, hi, mu, g0, g1, x, i)
        x[i] = min(max(x[i], l), h)
        dmax = max(dmax, diag[i])
    floor = DIAG_FLOOR * dmax
    sweeps = 0
    change = 0.0
    capped = False
    while sweeps < max_sweeps and not capped:
        change = 0.0
        for i in range(n):
            d = diag[i]
            if not d > floor:
                continue
            w = b[i]
            for k in range(ptr[i], ptr[i + 1]):
                w += val[k] * x[idx[k]]
            l, h = _bounds(lo, hi, mu, g0, g1, x, i)
            new = min(max(x[i] - w / d, l), h)
            change = max(change, abs(new - x[i]))
            x[i] = new
        sweeps += 1
        if change < tol:
            break
        capped = past_cap(t0, cap_ticks)
    return sweeps, change, capped


@helper(cache=True)
def blcp_residual_csr(ptr, idx, val, diag, b, lo, hi, mu, g0, g1, n, x):
    """blcp_residual with the matrix as pgs takes it."""
    worst = 0.0
    for i in range(n):
        l, h = _bounds(lo, hi, mu, g0, g1, x, i)
        w = b[i]
        for k in range(ptr[i], ptr[i + 1]):
            w += val[k] * x[idx[k]]
        worst = max(worst, _row_residual(l, h, x[i], w))
    return worst


# ---------------------------------------------------------------------------- dependent rows
@helper(cache=True)
def symmetrize(A, n):
    """A[:n, :n] ← (A + Aᵀ)/2: a matrix formed column by column (round-off apart in its two
    triangles) made exactly symmetric."""
    for i in range(n):
        for j in range(i):
            s = 0.5 * (A[i, j] + A[j, i])
            A[i, j] = s
            A[j, i] = s


@helper(cache=True, _nrt=False)
def pivoted_cholesky(G, n, perm, rel_tol):
    """In place: the Cholesky factor of P G Pᵀ with the largest remaining pivot first,
    stopping when the largest remaining pivot is below rel_tol × the largest diagonal
    entry (the rows left are dependent on the ones before). The factor L (rank × rank)
    is in the lower triangle of G's leading block, perm the row order; returns the rank."""
    for i in range(n):
        perm[i] = i
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, G[i, i])
    if not dmax > 0.0:
        return 0
    floor = rel_tol * dmax
    for k in range(n):
        p = k
        for j in range(k + 1, n):
            if G[j, j] > G[p, p]:
                p = j
        if not G[p, p] > floor:
            return k
        if p != k:                          # symmetric swap of rows/columns k and p
            for j in range(n):
                G[k, j], G[p, j] = G[p, j], G[k, j]
            for j in range(n):
                G[j, k], G[j, p] = G[j, p], G[j, k]
            perm[k], perm[p] = perm[p], perm[k]
        d = math.sqrt(G[k, k])
        G[k, k] = d
        for j in range(k + 1, n):
            G[j, k] /= d
        for j in range(k + 1, n):
            f = G[j, k]
            for i in range(k + 1, j + 1):
                G[j, i] -= f * G[i, k]
            for i in range(k + 1, j + 1):
                G[i, j] = G[j, i]           # keep the trailing block symmetric for the pivots
    return n


@helper(cache=True, _nrt=False)
def pivoted_solve(L, perm, rank, n, y, out, work):
    """out = G⁺ y on the kept rows: (G_KK)⁻¹ y_K on the first `rank` rows of perm, 0 on
    the dependent rows. work: (≥ n,)."""
    for k in range(rank):
        s = y[perm[k]]
        for j in range(k):
            s -= L[k, j] * work[j]
        work[k] = s / L[k, k]
    for k in range(rank - 1, -1, -1):
        s = work[k]
        for j in range(k + 1, rank):
            s -= L[j, k] * work[j]
        work[k] = s / L[k, k]
    for i in range(n):
        out[i] = 0.0
    for k in range(rank):
        out[perm[k]] = work[k]


# ---------------------------------------------------------------------------- Python entry (tests, tools)
def lemke_work(n):
    """LemkeWork for BLCPs of up to n rows."""
    m = 3 * max(int(n), 1)
    i64 = np.int64
    return LemkeWork(np.zeros((m, m)), np.zeros(m), np.zeros((m, 2 * m + 2)), np.zeros(m, i64), np.zeros(m),
                     np.zeros(m, i64), np.zeros(m), np.zeros(m), np.zeros(m, i64), np.zeros(m, i64), np.zeros(m))


def solve_blcp(A, b, lo, hi, mu=None, groups=None, method="lemke", x0=None, sweeps=10000, tol=1e-14):
    """The BLCP of the module docstring by `method` ("lemke" or "pgs"), for tests and
    tools: A (n, n), b, lo, hi (n,), mu (n,) friction coefficients (0: a plain row) and
    groups (n, 2) the [g0, g1) range of each friction row's normals. Returns (λ, info)."""
    A = np.ascontiguousarray(A, float)
    n = len(b)
    b, lo, hi = (np.ascontiguousarray(v, float) for v in (b, lo, hi))
    mu = np.zeros(n) if mu is None else np.ascontiguousarray(mu, float)
    groups = np.zeros((n, 2), np.int64) if groups is None else np.asarray(groups, np.int64)
    g0, g1 = np.ascontiguousarray(groups[:, 0]), np.ascontiguousarray(groups[:, 1])
    x = np.zeros(n) if x0 is None else np.array(x0, float)
    if method == "lemke":
        status, pivots, nv = solve_blcp_lemke(A, b, lo, hi, mu, g0, g1, n, x, lemke_work(n))
        info = {"status": int(status), "pivots": int(pivots), "size": int(nv)}
    else:
        ptr, idx, val, diag = np.zeros(n + 1, np.int64), np.zeros(n * n, np.int64), np.zeros(n * n), np.zeros(n)
        sparsity(A, n, ptr, idx, val, diag)
        it, change, _ = pgs(ptr, idx, val, diag, b, lo, hi, mu, g0, g1, n, x, sweeps, tol, 0.0)
        info = {"sweeps": int(it), "change": float(change)}
    info["residual"] = float(blcp_residual(A, b, lo, hi, mu, g0, g1, n, x))
    return x, info
