"""The exact solve of the stiff step's implicit system: block LDLᵀ (Cholesky without
square roots) over 6×6 blocks, one per dynamic body and one per pair of jointed bodies,
in an elimination order found once per layout.

Why not Gauss–Seidel or Jacobi sweeps over the joint blocks: on a long stiff chain they
need ~depth² sweeps, and an unconverged sweep is an explicit step again (it is how the
explicit presets fail). So the block-sparse system is solved exactly, in a minimum-degree
order (elimination_plan: leaves first on a tree, so a tree — every scene, every chain —
has no fill and costs O(N); a loop of joints adds fill blocks, still exact).

Stages: the 6×6 block algebra (a block's LDLᵀ, its triangular solves, the downdate of a
later block), one node's factor and substitutions, the whole factor and solve, and the
plan (plan_layout: a minimum-degree order and its fill; elimination_plan once per layout,
contact_graph.py again when the contacts between moving bodies change).
"""
import numpy as np
from ...jit import kernel, helper

BIG = np.int64(1) << 62     # past every node index (minimum_degree's merge)
FMA = {"contract", "reassoc"}   # fused multiply-adds and reordered sums (round-off only; no NaN assumptions)


# ---------------------------------------------------------------------------- 6×6 block algebra
# Blocks are 6×6 row-major (36 numbers). The system is factored as A = L D Lᵀ, block by block
# (no square root on the chain of pivots each node waits for: a quarter of the factor's time
# on a 100-link chain). A factored diagonal block holds its unit lower triangle L below the
# diagonal and the reciprocals 1/d_j of its pivots on it; a factored off-diagonal block
# A_nk holds N_nk = A_nk L_kk⁻ᵀ D_k⁻¹, so that A_nn − N_nk D_k N_nkᵀ is the next Schur
# complement and no solve divides.
# The five helpers the plain kernels (factor, solve) call too are inlined, so that each
# kernel rounds them with its own flags. Of those only the FMA kernels call, the ones on
# the factor's and the substitutions' per-node path (factored6, upper_solve6, dot6, row6,
# downdate6, forward_node6, back_rhs6) are inlined as well, where it pays: a stiff
# chain's step is measurably faster with them inlined, not with the others. lower_solve6, pivots6
# and solved_row6 are compiled once with those flags (numba's IR inlining types a helper
# again at every call site, and there it does not pay).
@helper(cache=True, error_model="numpy", inline="always")
def inv_pivot(d):
    """1/d of an LDLᵀ pivot (not positive definite — a NaN state: 1e300, blown_up catches
    it)."""
    if not d > 0.0:
        d = 1e-300
    return 1.0 / d


@helper(cache=True, error_model="numpy", inline="always")
def ldl6_locals(D, k):
    """D[k] (lower triangle read) := its factor L D Lᵀ (L unit lower below the diagonal, 1/d_j
    on it), which is also returned as the 21 lower entries row by row (L_ij at i(i+1)/2 + j,
    the diagonal as 1/d_j). t_ij = L_ij d_j are the entries before the division."""
    c0 = inv_pivot(D[k, 0])
    t10, t20, t30, t40, t50 = D[k, 6], D[k, 12], D[k, 18], D[k, 24], D[k, 30]
    l10, l20, l30, l40, l50 = t10 * c0, t20 * c0, t30 * c0, t40 * c0, t50 * c0
    c1 = inv_pivot(D[k, 7] - l10 * t10)
    t21 = D[k, 13] - l20 * t10
    t31 = D[k, 19] - l30 * t10
    t41 = D[k, 25] - l40 * t10
    t51 = D[k, 31] - l50 * t10
    l21, l31, l41, l51 = t21 * c1, t31 * c1, t41 * c1, t51 * c1
    c2 = inv_pivot(D[k, 14] - l20 * t20 - l21 * t21)
    t32 = D[k, 20] - l30 * t20 - l31 * t21
    t42 = D[k, 26] - l40 * t20 - l41 * t21
    t52 = D[k, 32] - l50 * t20 - l51 * t21
    l32, l42, l52 = t32 * c2, t42 * c2, t52 * c2
    c3 = inv_pivot(D[k, 21] - l30 * t30 - l31 * t31 - l32 * t32)
    t43 = D[k, 27] - l40 * t30 - l41 * t31 - l42 * t32
    t53 = D[k, 33] - l50 * t30 - l51 * t31 - l52 * t32
    l43, l53 = t43 * c3, t53 * c3
    c4 = inv_pivot(D[k, 28] - l40 * t40 - l41 * t41 - l42 * t42 - l43 * t43)
    t54 = D[k, 34] - l50 * t40 - l51 * t41 - l52 * t42 - l53 * t43
    l54 = t54 * c4
    c5 = inv_pivot(D[k, 35] - l50 * t50 - l51 * t51 - l52 * t52 - l53 * t53 - l54 * t54)
    D[k, 0] = c0
    D[k, 6], D[k, 7] = l10, c1
    D[k, 12], D[k, 13], D[k, 14] = l20, l21, c2
    D[k, 18], D[k, 19], D[k, 20], D[k, 21] = l30, l31, l32, c3
    D[k, 24], D[k, 25], D[k, 26], D[k, 27], D[k, 28] = l40, l41, l42, l43, c4
    D[k, 30], D[k, 31], D[k, 32], D[k, 33], D[k, 34], D[k, 35] = l50, l51, l52, l53, l54, c5
    return (c0, l10, c1, l20, l21, c2, l30, l31, l32, c3, l40, l41, l42, l43, c4, l50, l51, l52, l53, l54, c5)


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def factored6(D, k):
    """A factored diagonal block's 21 lower entries as ldl6_locals returns them."""
    return (D[k, 0], D[k, 6], D[k, 7], D[k, 12], D[k, 13], D[k, 14], D[k, 18], D[k, 19], D[k, 20], D[k, 21],
            D[k, 24], D[k, 25], D[k, 26], D[k, 27], D[k, 28], D[k, 30], D[k, 31], D[k, 32], D[k, 33], D[k, 34],
            D[k, 35])


@helper(cache=True, error_model="numpy", fastmath=FMA)
def lower_solve6(L, x0, x1, x2, x3, x4, x5):
    """L⁻¹x on scalars (L unit lower: ldl6_locals' entries below the diagonal)."""
    y0 = x0
    y1 = x1 - L[1] * y0
    y2 = x2 - L[3] * y0 - L[4] * y1
    y3 = x3 - L[6] * y0 - L[7] * y1 - L[8] * y2
    y4 = x4 - L[10] * y0 - L[11] * y1 - L[12] * y2 - L[13] * y3
    y5 = x5 - L[15] * y0 - L[16] * y1 - L[17] * y2 - L[18] * y3 - L[19] * y4
    return y0, y1, y2, y3, y4, y5


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def upper_solve6(L, y0, y1, y2, y3, y4, y5):
    """L⁻ᵀy on scalars (L unit lower)."""
    x5 = y5
    x4 = y4 - L[19] * x5
    x3 = y3 - L[13] * x4 - L[18] * x5
    x2 = y2 - L[8] * x3 - L[12] * x4 - L[17] * x5
    x1 = y1 - L[4] * x2 - L[7] * x3 - L[11] * x4 - L[16] * x5
    x0 = y0 - L[1] * x1 - L[3] * x2 - L[6] * x3 - L[10] * x4 - L[15] * x5
    return x0, x1, x2, x3, x4, x5


@helper(cache=True, error_model="numpy", fastmath=FMA)
def pivots6(L, y0, y1, y2, y3, y4, y5):
    """D⁻¹y on scalars (the reciprocal pivots on ldl6_locals' diagonal)."""
    return y0 * L[0], y1 * L[2], y2 * L[5], y3 * L[9], y4 * L[14], y5 * L[20]


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def dot6(a, b):
    """a·b of two 6-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@helper(cache=True, error_model="numpy", fastmath=FMA)
def solved_row6(L, B, s, i):
    """Row i of W = B[s] L⁻ᵀ, returned, and of N = W D⁻¹, written back into B[s]."""
    o = 6 * i
    w = lower_solve6(L, B[s, o], B[s, o + 1], B[s, o + 2], B[s, o + 3], B[s, o + 4], B[s, o + 5])
    B[s, o], B[s, o + 1], B[s, o + 2], B[s, o + 3], B[s, o + 4], B[s, o + 5] = pivots6(L, w[0], w[1], w[2], w[3],
                                                                                         w[4], w[5])
    return w


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def row6(B, s, i):
    """Row i of B[s] as a 6-tuple."""
    o = 6 * i
    return B[s, o], B[s, o + 1], B[s, o + 2], B[s, o + 3], B[s, o + 4], B[s, o + 5]


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def downdate6(D, n, B, s, w0, w1, w2, w3, w4, w5):
    """D[n]'s lower triangle −= N Wᵀ = W D⁻¹ Wᵀ (N: B[s] as solved_row6 left it; W's rows
    w0…w5 as 6-tuples), entry by entry as factor's diagonal pair."""
    n0, n1, n2 = row6(B, s, 0), row6(B, s, 1), row6(B, s, 2)
    n3, n4, n5 = row6(B, s, 3), row6(B, s, 4), row6(B, s, 5)
    D[n, 0] -= dot6(n0, w0)
    D[n, 6] -= dot6(n1, w0)
    D[n, 7] -= dot6(n1, w1)
    D[n, 12] -= dot6(n2, w0)
    D[n, 13] -= dot6(n2, w1)
    D[n, 14] -= dot6(n2, w2)
    D[n, 18] -= dot6(n3, w0)
    D[n, 19] -= dot6(n3, w1)
    D[n, 20] -= dot6(n3, w2)
    D[n, 21] -= dot6(n3, w3)
    D[n, 24] -= dot6(n4, w0)
    D[n, 25] -= dot6(n4, w1)
    D[n, 26] -= dot6(n4, w2)
    D[n, 27] -= dot6(n4, w3)
    D[n, 28] -= dot6(n4, w4)
    D[n, 30] -= dot6(n5, w0)
    D[n, 31] -= dot6(n5, w1)
    D[n, 32] -= dot6(n5, w2)
    D[n, 33] -= dot6(n5, w3)
    D[n, 34] -= dot6(n5, w4)
    D[n, 35] -= dot6(n5, w5)


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def forward_node6(L, x, k, n, B, s):
    """solve's forward step of node k on scalars: y_k = L_kk⁻¹x_k, x_n −= N_nk y_k (B[s]),
    then x_k := D_k⁻¹ y_k."""
    y = lower_solve6(L, x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5])
    x[n, 0] -= dot6(row6(B, s, 0), y)
    x[n, 1] -= dot6(row6(B, s, 1), y)
    x[n, 2] -= dot6(row6(B, s, 2), y)
    x[n, 3] -= dot6(row6(B, s, 3), y)
    x[n, 4] -= dot6(row6(B, s, 4), y)
    x[n, 5] -= dot6(row6(B, s, 5), y)
    x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5] = pivots6(L, y[0], y[1], y[2], y[3], y[4], y[5])


@helper(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def factor_node1(diag, offd, k, s, n, x):
    """factor_solve's node k with one later neighbour n (slot s) and no other pair — a
    chain's or a leaf's: written out on scalars (no reload through the possibly aliased
    arrays; fused multiply-adds: round-off apart, the generic path). L_kk D_k L_kkᵀ,
    W = A_nk L_kk⁻ᵀ, N_nk = W D_k⁻¹, A_nn −= N_nk Wᵀ (lower triangle), then the forward
    step (forward_node6)."""
    L = ldl6_locals(diag, k)
    w0, w1, w2 = solved_row6(L, offd, s, 0), solved_row6(L, offd, s, 1), solved_row6(L, offd, s, 2)
    w3, w4, w5 = solved_row6(L, offd, s, 3), solved_row6(L, offd, s, 4), solved_row6(L, offd, s, 5)
    downdate6(diag, n, offd, s, w0, w1, w2, w3, w4, w5)
    forward_node6(L, x, k, n, offd, s)


@helper(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def factor_node_pair(diag, offd, k, s, n, s2, n2, x):
    """factor_node1 of nodes k and k + 1 (slots s, s2; later neighbours n, n2 ≠ k + 1), their
    steps interleaved: the two are independent (a chain eliminated from both ends), and
    each is a latency chain (pivot divisions, triangular solves) the processor now
    overlaps. Where n = n2, A_nn and x_n are updated by k first, as in order."""
    L = ldl6_locals(diag, k)
    M = ldl6_locals(diag, k + 1)
    w0, w1, w2 = solved_row6(L, offd, s, 0), solved_row6(L, offd, s, 1), solved_row6(L, offd, s, 2)
    v0, v1, v2 = solved_row6(M, offd, s2, 0), solved_row6(M, offd, s2, 1), solved_row6(M, offd, s2, 2)
    w3, w4, w5 = solved_row6(L, offd, s, 3), solved_row6(L, offd, s, 4), solved_row6(L, offd, s, 5)
    v3, v4, v5 = solved_row6(M, offd, s2, 3), solved_row6(M, offd, s2, 4), solved_row6(M, offd, s2, 5)
    downdate6(diag, n, offd, s, w0, w1, w2, w3, w4, w5)
    downdate6(diag, n2, offd, s2, v0, v1, v2, v3, v4, v5)
    forward_node6(L, x, k, n, offd, s)
    forward_node6(M, x, k + 1, n2, offd, s2)


@helper(cache=True, error_model="numpy", inline="always")
def factor_node(diag, offd, k, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target):
    """The generic step of node k (any number of later neighbours): L_kk D_k L_kkᵀ; per slot
    W = A_nk L_kk⁻ᵀ; every pair of later neighbours n1 ≤ n2 updated by W_n2 D_k⁻¹ W_n1ᵀ (its
    diagonal block, or the fill block pair_target); then each slot's W turned into N."""
    ldl6_locals(diag, k)
    for s in range(up_ptr[k], up_ptr[k + 1]):
        for i in range(6):
            for j in range(6):
                t = offd[s, 6 * i + j]
                for p in range(j):
                    t -= diag[k, 6 * j + p] * offd[s, 6 * i + p]
                offd[s, 6 * i + j] = t
    for p in range(pair_ptr[k], pair_ptr[k + 1]):
        lo, hi, t = pair_lo[p], pair_hi[p], pair_target[p]
        if t < 0:
            n = -1 - t
            for i in range(6):
                for j in range(i + 1):
                    acc = 0.0
                    for q in range(6):
                        acc += offd[lo, 6 * i + q] * diag[k, 7 * q] * offd[lo, 6 * j + q]
                    diag[n, 6 * i + j] -= acc
        else:
            for i in range(6):
                for j in range(6):
                    acc = 0.0
                    for q in range(6):
                        acc += offd[hi, 6 * i + q] * diag[k, 7 * q] * offd[lo, 6 * j + q]
                    offd[t, 6 * i + j] -= acc
    for s in range(up_ptr[k], up_ptr[k + 1]):
        for i in range(6):
            for j in range(6):
                offd[s, 6 * i + j] *= diag[k, 7 * j]


@helper(cache=True, error_model="numpy", inline="always")
def forward_node(diag, offd, k, up_ptr, up_node, x):
    """solve's generic forward step of node k: y_k = L_kk⁻¹x_k, x_n −= N_nk y_k for each
    later neighbour, x_k := D_k⁻¹ y_k."""
    for j in range(6):
        t = x[k, j]
        for p in range(j):
            t -= diag[k, 6 * j + p] * x[k, p]
        x[k, j] = t
    for s in range(up_ptr[k], up_ptr[k + 1]):
        n = up_node[s]
        for i in range(6):
            acc = 0.0
            for q in range(6):
                acc += offd[s, 6 * i + q] * x[k, q]
            x[n, i] -= acc
    for j in range(6):
        x[k, j] *= diag[k, 7 * j]


@helper(cache=True, error_model="numpy", inline="always")
def backward_node(diag, offd, k, up_ptr, up_node, x):
    """solve's generic backward step of node k: x_k := L_kk⁻ᵀ (x_k − Σ N_nkᵀ x_n)."""
    for s in range(up_ptr[k], up_ptr[k + 1]):
        n = up_node[s]
        for q in range(6):
            acc = 0.0
            for i in range(6):
                acc += offd[s, 6 * i + q] * x[n, i]
            x[k, q] -= acc
    for j in range(5, -1, -1):
        t = x[k, j]
        for p in range(j + 1, 6):
            t -= diag[k, 6 * p + j] * x[k, p]
        x[k, j] = t


@helper(cache=True, error_model="numpy")
def factor(diag, offd, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target):
    """Block LDLᵀ A = L D Lᵀ in place, node by node in elimination order (factor_node)."""
    for k in range(diag.shape[0]):
        factor_node(diag, offd, k, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)


@helper(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def factor_solve(diag, offd, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, x):
    """factor, then x := A⁻¹x as solve, with solve's forward substitution done node by node
    right after the node is factored (its blocks are still in cache): factor then solve
    (round-off apart: fused multiply-adds), one pass over the factor fewer. A node with one
    later neighbour and only that neighbour's diagonal to update (a chain's, a leaf's):
    factor_node1; two such consecutive independent nodes: factor_node_pair."""
    nn = diag.shape[0]
    k = np.int64(0)               # not a literal: factor_node1 and factor_node_pair compile once
    while k < nn:
        s0 = up_ptr[k]
        if up_ptr[k + 1] == s0 + 1 and pair_ptr[k + 1] == pair_ptr[k] + 1:
            if (k + 1 < nn and up_node[s0] != k + 1 and up_ptr[k + 2] == s0 + 2
                    and pair_ptr[k + 2] == pair_ptr[k + 1] + 1):
                factor_node_pair(diag, offd, k, s0, up_node[s0], s0 + 1, up_node[s0 + 1], x)
                k += 2
            else:
                factor_node1(diag, offd, k, s0, up_node[s0], x)
                k += 1
            continue
        factor_node(diag, offd, k, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)
        forward_node(diag, offd, k, up_ptr, up_node, x)
        k += 1
    back_substitute(diag, offd, up_ptr, up_node, x)


@helper(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def back_substitute(diag, offd, up_ptr, up_node, x):
    """solve's backward substitution (Lᵀ x = D⁻¹y, the nodes in reverse order); a node with
    one later neighbour on scalars (back_rhs6, then L_kk⁻ᵀ), two such independent
    consecutive ones interleaved (as factor_node_pair)."""
    k = diag.shape[0] - 1
    while k >= 0:
        s0 = up_ptr[k]
        if up_ptr[k + 1] == s0 + 1:
            if k >= 1 and up_ptr[k - 1] == s0 - 1 and up_node[s0 - 1] != k:
                y = back_rhs6(offd, s0, x, up_node[s0], k)
                z = back_rhs6(offd, s0 - 1, x, up_node[s0 - 1], k - 1)
                x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5] = upper_solve6(factored6(diag, k), y[0], y[1],
                                                                                     y[2], y[3], y[4], y[5])
                x[k - 1, 0], x[k - 1, 1], x[k - 1, 2], x[k - 1, 3], x[k - 1, 4], x[k - 1, 5] = upper_solve6(
                    factored6(diag, k - 1), z[0], z[1], z[2], z[3], z[4], z[5])
                k -= 2
            else:
                y = back_rhs6(offd, s0, x, up_node[s0], k)
                x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5] = upper_solve6(factored6(diag, k), y[0], y[1],
                                                                                     y[2], y[3], y[4], y[5])
                k -= 1
            continue
        backward_node(diag, offd, k, up_ptr, up_node, x)
        k -= 1


@helper(cache=True, error_model="numpy", fastmath=FMA, inline="always")
def back_rhs6(offd, s, x, n, k):
    """x_k − L_nkᵀ x_n (B = offd[s]) on scalars."""
    xn = (x[n, 0], x[n, 1], x[n, 2], x[n, 3], x[n, 4], x[n, 5])
    return (x[k, 0] - (offd[s, 0] * xn[0] + offd[s, 6] * xn[1] + offd[s, 12] * xn[2] + offd[s, 18] * xn[3]
                       + offd[s, 24] * xn[4] + offd[s, 30] * xn[5]),
            x[k, 1] - (offd[s, 1] * xn[0] + offd[s, 7] * xn[1] + offd[s, 13] * xn[2] + offd[s, 19] * xn[3]
                       + offd[s, 25] * xn[4] + offd[s, 31] * xn[5]),
            x[k, 2] - (offd[s, 2] * xn[0] + offd[s, 8] * xn[1] + offd[s, 14] * xn[2] + offd[s, 20] * xn[3]
                       + offd[s, 26] * xn[4] + offd[s, 32] * xn[5]),
            x[k, 3] - (offd[s, 3] * xn[0] + offd[s, 9] * xn[1] + offd[s, 15] * xn[2] + offd[s, 21] * xn[3]
                       + offd[s, 27] * xn[4] + offd[s, 33] * xn[5]),
            x[k, 4] - (offd[s, 4] * xn[0] + offd[s, 10] * xn[1] + offd[s, 16] * xn[2] + offd[s, 22] * xn[3]
                       + offd[s, 28] * xn[4] + offd[s, 34] * xn[5]),
            x[k, 5] - (offd[s, 5] * xn[0] + offd[s, 11] * xn[1] + offd[s, 17] * xn[2] + offd[s, 23] * xn[3]
                       + offd[s, 29] * xn[4] + offd[s, 35] * xn[5]))


@helper(cache=True, error_model="numpy")
def solve(diag, offd, up_ptr, up_node, x):
    """x := A⁻¹x with A = L D Lᵀ from factor (x: (k, 6), one row per node)."""
    nn = diag.shape[0]
    for k in range(nn):
        forward_node(diag, offd, k, up_ptr, up_node, x)
    for k in range(nn - 1, -1, -1):
        backward_node(diag, offd, k, up_ptr, up_node, x)


# ---------------------------------------------------------------------------- the plan
@helper(cache=True)
def grow_rows(a):
    """a (n, c) copied into an (n, 2c) array (its first c columns)."""
    b = np.empty((a.shape[0], 2 * a.shape[1]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j]
    return b


@helper(cache=True)
def grow1(a):
    """a (n,) copied into a (2n,) array."""
    b = np.empty(2 * a.shape[0], a.dtype)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@helper(cache=True)
def heap_push(keys, nodes, size, key, node):
    """(key, node) onto the binary min-heap keys[:size] (grown when full); returns the heap."""
    if size == keys.shape[0]:
        keys, nodes = grow1(keys), grow1(nodes)
    i = size
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] <= key:
            break
        keys[i], nodes[i] = keys[p], nodes[p]
        i = p
    keys[i], nodes[i] = key, node
    return keys, nodes, size + 1


@helper(cache=True)
def heap_pop(keys, nodes, size):
    """The smallest (key, node) off the heap keys[:size]; returns it and the new size."""
    key, node = keys[0], nodes[0]
    size -= 1
    k, n = keys[size], nodes[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] < keys[c]:
            c += 1
        if k <= keys[c]:
            break
        keys[i], nodes[i] = keys[c], nodes[c]
        i = c
    if size > 0:
        keys[i], nodes[i] = k, n
    return key, node, size


@helper(cache=True)
def add_neighbour(adj, deg, a, b):
    """b into node a's sorted neighbour list adj[a, :deg[a]] (once); returns adj (grown when full)."""
    d = deg[a]
    p = 0
    while p < d and adj[a, p] < b:
        p += 1
    if p < d and adj[a, p] == b:
        return adj
    if d == adj.shape[1]:
        adj = grow_rows(adj)
    for q in range(d, p, -1):
        adj[a, q] = adj[a, q - 1]
    adj[a, p] = b
    deg[a] = d + 1
    return adj


@helper(cache=True)
def minimum_degree(nn, ea, eb):
    """A minimum-degree elimination order of the graph of nn nodes and edges (ea, eb): the
    node of fewest remaining neighbours first, its neighbours then joined into a clique (the
    fill of its elimination); ties first in, first out (a chain goes from both ends at
    once). Returns the order (nn,) and, in that order, each node's neighbours when it was
    eliminated (its later neighbours: CSR ptr (nn+1,), nodes)."""
    deg = np.zeros(nn, np.int64)
    for e in range(ea.shape[0]):
        if ea[e] != eb[e]:
            deg[ea[e]] += 1
            deg[eb[e]] += 1
    cap = 4
    for i in range(nn):
        cap = max(cap, deg[i])
    adj = np.empty((nn, cap), np.int64)
    for i in range(nn):
        deg[i] = 0
    for e in range(ea.shape[0]):
        if ea[e] != eb[e]:
            adj = add_neighbour(adj, deg, ea[e], eb[e])
            adj = add_neighbour(adj, deg, eb[e], ea[e])
    keys, nodes = np.empty(2 * nn + 8, np.int64), np.empty(2 * nn + 8, np.int64)
    size = np.int64(0)            # not a literal: heap_push and heap_pop compile once
    for i in range(nn):
        keys, nodes, size = heap_push(keys, nodes, size, (deg[i] << 32) + i, i)
    seq = nn
    done = np.zeros(nn, np.bool_)
    order = np.empty(nn, np.int64)
    later_ptr = np.zeros(nn + 1, np.int64)
    later = np.empty(max(16, 2 * ea.shape[0]), np.int64)
    merged = np.empty(2 * adj.shape[1], np.int64)
    k = 0
    while size > 0:
        key, i, size = heap_pop(keys, nodes, size)
        d = deg[i]
        if done[i] or (key >> 32) != d:
            continue                                # eliminated, or a stale degree
        done[i] = True
        order[k] = i
        while later_ptr[k] + d > later.shape[0]:
            later = grow1(later)
        for p in range(d):
            later[later_ptr[k] + p] = adj[i, p]
        later_ptr[k + 1] = later_ptr[k] + d
        k += 1
        for p in range(d):                           # each neighbour: i out, the others in
            n = adj[i, p]
            dn = deg[n]
            if dn + d > merged.shape[0]:
                merged = np.empty(2 * (dn + d), np.int64)
            m = 0
            q, r = 0, 0
            while q < dn or r < d:                   # the two sorted lists merged
                x = adj[n, q] if q < dn else BIG
                y = adj[i, r] if r < d else BIG
                if x <= y:
                    v = x
                    q += 1
                    if x == y:
                        r += 1
                else:
                    v = y
                    r += 1
                if v != i and v != n:
                    merged[m] = v
                    m += 1
            while m > adj.shape[1]:
                adj = grow_rows(adj)
            for q in range(m):
                adj[n, q] = merged[q]
            deg[n] = m
            keys, nodes, size = heap_push(keys, nodes, size, (m << 32) + seq, n)
            seq += 1
    return order, later_ptr, later[:later_ptr[nn]]


@helper(cache=True, error_model="numpy", _nrt=False)
def find_slot(up_ptr, up_node, k, n):
    """The slot of block A[n, k] (n a later neighbour of node k; −1: none), by bisection."""
    lo, hi = up_ptr[k], up_ptr[k + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if up_node[mid] < n:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < up_ptr[k + 1] and up_node[lo] == n else -1


@kernel(cache=True)
def plan_layout(dynamic, pair_a, pair_b):
    """The block layout of the implicit system (Plan's body_node … pair_target, then per
    pair its slot, −1 when a body is static, and whether b is the later node) for the
    dynamic bodies (`dynamic` (n,) bool) joined by the pairs (pair_a, pair_b): a minimum-
    degree order (minimum_degree) and its fill."""
    n_bodies = dynamic.shape[0]
    compact = np.full(n_bodies, -1, np.int64)
    nn = np.int64(0)              # not a literal: minimum_degree compiles once
    for i in range(n_bodies):
        if dynamic[i]:
            compact[i] = nn
            nn += 1
    nodes = np.empty(nn, np.int64)
    for i in range(n_bodies):
        if dynamic[i]:
            nodes[compact[i]] = i
    ne = 0
    for e in range(pair_a.shape[0]):
        if compact[pair_a[e]] >= 0 and compact[pair_b[e]] >= 0 and pair_a[e] != pair_b[e]:
            ne += 1
    ea, eb = np.empty(ne, np.int64), np.empty(ne, np.int64)
    ne = 0
    for e in range(pair_a.shape[0]):
        if compact[pair_a[e]] >= 0 and compact[pair_b[e]] >= 0 and pair_a[e] != pair_b[e]:
            ea[ne], eb[ne] = compact[pair_a[e]], compact[pair_b[e]]
            ne += 1
    order, up_ptr, later = minimum_degree(nn, ea, eb)
    position = np.empty(nn, np.int64)
    node_body = np.empty(nn, np.int64)
    body_node = np.full(n_bodies, -1, np.int64)
    for k in range(nn):
        position[order[k]] = k
        node_body[k] = nodes[order[k]]
        body_node[nodes[order[k]]] = k
    up_node = np.empty(later.shape[0], np.int64)
    for s in range(later.shape[0]):
        up_node[s] = position[later[s]]
    for k in range(nn):                              # each node's later neighbours ascending
        for s in range(up_ptr[k] + 1, up_ptr[k + 1]):
            v = up_node[s]
            t = s
            while t > up_ptr[k] and up_node[t - 1] > v:
                up_node[t] = up_node[t - 1]
                t -= 1
            up_node[t] = v
    pair_ptr = np.zeros(nn + 1, np.int64)
    for k in range(nn):
        d = up_ptr[k + 1] - up_ptr[k]
        pair_ptr[k + 1] = pair_ptr[k] + d * (d + 1) // 2
    n_pairs = pair_ptr[nn]
    pair_lo, pair_hi, pair_target = np.empty(n_pairs, np.int64), np.empty(n_pairs, np.int64), np.empty(n_pairs,
                                                                                                        np.int64)
    p = 0
    for k in range(nn):
        for s1 in range(up_ptr[k], up_ptr[k + 1]):
            for s2 in range(s1, up_ptr[k + 1]):
                n1, n2 = up_node[s1], up_node[s2]
                pair_lo[p], pair_hi[p] = s1, s2
                pair_target[p] = -1 - n1 if n1 == n2 else find_slot(up_ptr, up_node, n1, n2)
                p += 1
    slot = np.full(pair_a.shape[0], -1, np.int64)
    b_late = np.zeros(pair_a.shape[0], np.int64)
    for e in range(pair_a.shape[0]):
        na, nb = body_node[pair_a[e]], body_node[pair_b[e]]
        if na >= 0 and nb >= 0 and na != nb:
            slot[e] = find_slot(up_ptr, up_node, min(na, nb), max(na, nb))
            b_late[e] = 1 if nb > na else 0
    return body_node, node_body, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, slot, b_late


def elimination_plan(n_bodies, dynamic, pairs):
    """The block layout of the implicit system: `dynamic` (n,) bool, `pairs` the (a, b) body
    pairs of the joints. Orders the dynamic bodies by minimum degree (greedy, with the fill
    of each elimination: plan_layout), so a tree is eliminated leaves first with no fill;
    ties go first in, first out, so a chain is eliminated from both ends at once
    (consecutive nodes are independent: the substitutions of solve run as two chains the
    processor overlaps). Returns the layout arrays of Plan (body_node … joint_b_late)."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    return plan_layout(np.ascontiguousarray(dynamic, np.bool_), pairs[:, 0].copy(), pairs[:, 1].copy())
