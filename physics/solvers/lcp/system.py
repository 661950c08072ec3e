"""Products with the rows and with M̂, and the LCP matrix of a phase (seed 004 eqs.
12-14): J·V of a row, M⁻¹ p of a free body, M̂ J_rᵀ by the tree solve; the loops' G_L
and the matrix A = J_U M̂ J_Uᵀ (dense, or CSR rows of its nonzeros, or — its rows on bodies
of no tree — in velocity form: velocity_pgs.py)."""
from ...jit import kernel, helper

from ...joint_rows import row_velocity
from ..dense import pivoted_cholesky, pivoted_solve, symmetrize
from ..tree import articulated_solve, zero_tree
from .settings import LOOP_RANK_TOL, PGS
from .velocity_pgs import off_tree, prepare_rows


# ---------------------------------------------------------------------------- row products
# a row's J·V: joint_rows.row_velocity
@helper(cache=True, _nrt=False)
def column_dot(J, r, a, b, yv, yw, in_tree, live):
    """J_r · y for the column y in (yv, yw): tree bodies count only if the column's tree
    part is live (solved for this column), other bodies hold zeros unless the column's own."""
    s = 0.0
    if live or in_tree[a] == 0:
        s += (J[r, 0] * yv[a, 0] + J[r, 1] * yv[a, 1] + J[r, 2] * yv[a, 2]
              + J[r, 3] * yw[a, 0] + J[r, 4] * yw[a, 1] + J[r, 5] * yw[a, 2])
    if live or in_tree[b] == 0:
        s += (J[r, 6] * yv[b, 0] + J[r, 7] * yv[b, 1] + J[r, 8] * yv[b, 2]
              + J[r, 9] * yw[b, 0] + J[r, 10] * yw[b, 1] + J[r, 11] * yw[b, 2])
    return s


@helper(cache=True, _nrt=False)
def add_impulse(J, r, a, b, s, P):
    """P += Jᵀ s for row r on its two bodies (6 numbers per body: force, torque)."""
    for q in range(6):
        P[a, q] += J[r, q] * s
        P[b, q] += J[r, 6 + q] * s


@helper(cache=True, _nrt=False)
def inverse_mass_times(i, px, py, pz, tx, ty, tz, body_inv_mass, inv_I):
    """M_i⁻¹ (p, τ) = (p/m, I⁻¹τ) of body i (inv_I: world inverse inertia, row-major)."""
    im = body_inv_mass[i]
    return (im * px, im * py, im * pz,
            inv_I[i, 0] * tx + inv_I[i, 1] * ty + inv_I[i, 2] * tz,
            inv_I[i, 3] * tx + inv_I[i, 4] * ty + inv_I[i, 5] * tz,
            inv_I[i, 6] * tx + inv_I[i, 7] * ty + inv_I[i, 8] * tz)


@helper(cache=True, _nrt=False)
def coupled_span(c, body_inv_mass, body_ptr):
    """The span of body_idx that holds the U rows on body c (body_ptr: build_system), empty
    for a static body: A's nonzeros in a column of no tree body are the rows on its two
    bodies that have mass."""
    if body_inv_mass[c] == 0.0:
        return 0, 0
    return body_ptr[c], body_ptr[c + 1]


@kernel(cache=True)
def mark_tree(tree, in_tree):
    """in_tree[i] = 1 for the bodies the tree solve moves (children of tree joints, roots)."""
    order, joint_child, roots = tree.order, tree.joint_child, tree.roots
    in_tree[:] = 0
    for t in range(order.shape[0]):
        in_tree[joint_child[order[t]]] = 1
    for t in range(roots.shape[0]):
        in_tree[roots[t]] = 1


# ---------------------------------------------------------------------------- M̂ products
@kernel(cache=True)
def mhat_column(J, r, a, b, tree, joint_body, in_tree, body_inv_mass, inv_I, zc, yv, yw):
    """y = M̂ J_rᵀ into (yv, yw): on the tree's bodies by the tree solve (momenta J_rᵀ in,
    velocities with Φ_Eᵀ y = 0 out: seed 004 eq. 13's M̂, corrected), on a body of no tree
    M⁻¹ J_rᵀ (written only for a and b; the caller clears them). Returns whether the tree
    part was solved (`live`; else the tree's entries of y are zero)."""
    live = in_tree[a] == 1 or in_tree[b] == 1
    if live:
        zero_tree(tree.order, tree.roots, tree.joint_child, zc)
        for side in range(2):
            i = a if side == 0 else b
            if in_tree[i] == 1:
                for q in range(6):
                    zc[i, q] += J[r, 6 * side + q]
        articulated_solve(tree, joint_body, 0.0, zc, yv, yw, False, 0.0, zc, yv, yw, 0.0)
    for side in range(2):
        i = a if side == 0 else b
        if in_tree[i] == 0 and body_inv_mass[i] != 0.0:
            o = 6 * side
            v0, v1, v2, w0, w1, w2 = inverse_mass_times(i, J[r, o], J[r, o + 1], J[r, o + 2], J[r, o + 3],
                                                        J[r, o + 4], J[r, o + 5], body_inv_mass, inv_I)
            yv[i, 0], yv[i, 1], yv[i, 2] = v0, v1, v2
            yw[i, 0], yw[i, 1], yw[i, 2] = w0, w1, w2
    return live


# a loop row l: one row on two bodies (l_J, l_body at l), or a coupling between joints: two
# halves, the second at L + l (L = the capacity, half of l_body's rows; l_body[L + l, 0] = −1
# for none); their products summed
@helper(cache=True, _nrt=False)
def second_half(l_body, l):
    """Where loop row l's second half is, −1 for none."""
    s = l_body.shape[0] // 2 + l
    return s if l_body[s, 0] >= 0 else -1


@helper(cache=True, _nrt=False)
def loop_dot(l_J, l_body, l, yv, yw, in_tree, live):
    """J_l · y of loop row l (column_dot over its halves)."""
    s = column_dot(l_J, l, l_body[l, 0], l_body[l, 1], yv, yw, in_tree, live)
    h = second_half(l_body, l)
    if h >= 0:
        s += column_dot(l_J, h, l_body[h, 0], l_body[h, 1], yv, yw, in_tree, live)
    return s


@helper(cache=True, _nrt=False)
def loop_velocity(l_J, l_body, l, vel, omega):
    """J_l · V of loop row l."""
    s = row_velocity(l_J, l, l_body[l, 0], l_body[l, 1], vel, omega)
    h = second_half(l_body, l)
    if h >= 0:
        s += row_velocity(l_J, h, l_body[h, 0], l_body[h, 1], vel, omega)
    return s


@helper(cache=True, _nrt=False)
def add_loop_impulse(l_J, l_body, l, s, P):
    """P += J_lᵀ s of loop row l."""
    add_impulse(l_J, l, l_body[l, 0], l_body[l, 1], s, P)
    h = second_half(l_body, l)
    if h >= 0:
        add_impulse(l_J, h, l_body[h, 0], l_body[h, 1], s, P)


@helper(cache=True, _nrt=False)
def loop_entry(l_body, l, e):
    """(row, side) of entry e (0…3: the halves' bodies a, b) of loop row l; row −1 past its
    halves."""
    if e < 2:
        return l, e
    return second_half(l_body, l), e - 2


@helper(cache=True)
def loop_column(l_J, l_body, l, tree, joint_body, in_tree, body_inv_mass, inv_I, zc, yv, yw):
    """y = M̂ J_lᵀ of loop row l over its halves (mhat_column's; the caller clears the
    bodies of no tree: clear_loop_column). Returns whether the tree part was solved."""
    live = False
    for e in range(4):
        r, side = loop_entry(l_body, l, e)
        live = live or (r >= 0 and in_tree[l_body[r, side]] == 1)
    if live:
        zero_tree(tree.order, tree.roots, tree.joint_child, zc)
        for e in range(4):
            r, side = loop_entry(l_body, l, e)
            if r >= 0 and in_tree[l_body[r, side]] == 1:
                for q in range(6):
                    zc[l_body[r, side], q] += l_J[r, 6 * side + q]
        articulated_solve(tree, joint_body, 0.0, zc, yv, yw, False, 0.0, zc, yv, yw, 0.0)
    for e in range(4):
        r, side = loop_entry(l_body, l, e)
        if r < 0:
            continue
        i = l_body[r, side]
        if in_tree[i] == 0 and body_inv_mass[i] != 0.0:
            first = True                        # the first of the row's parts on body i writes
            for f in range(e):
                rf, sf = loop_entry(l_body, l, f)
                first = first and l_body[rf, sf] != i
            o = 6 * side
            v0, v1, v2, w0, w1, w2 = inverse_mass_times(i, l_J[r, o], l_J[r, o + 1], l_J[r, o + 2], l_J[r, o + 3],
                                                        l_J[r, o + 4], l_J[r, o + 5], body_inv_mass, inv_I)
            if first:
                yv[i, 0], yv[i, 1], yv[i, 2] = v0, v1, v2
                yw[i, 0], yw[i, 1], yw[i, 2] = w0, w1, w2
            else:
                yv[i, 0], yv[i, 1], yv[i, 2] = yv[i, 0] + v0, yv[i, 1] + v1, yv[i, 2] + v2
                yw[i, 0], yw[i, 1], yw[i, 2] = yw[i, 0] + w0, yw[i, 1] + w1, yw[i, 2] + w2
    return live


@helper(cache=True, _nrt=False)
def clear_loop_column(l_body, l, in_tree, yv, yw):
    """Zero loop row l's column on its bodies of no tree."""
    clear_column(l_body[l, 0], l_body[l, 1], in_tree, yv, yw)
    h = second_half(l_body, l)
    if h >= 0:
        clear_column(l_body[h, 0], l_body[h, 1], in_tree, yv, yw)


@kernel(cache=True, _nrt=False)
def clear_column(a, b, in_tree, yv, yw):
    """Zero the column's entries on bodies of no tree (a and b)."""
    for side in range(2):
        i = a if side == 0 else b
        if in_tree[i] == 0:
            for q in range(3):
                yv[i, q] = 0.0
                yw[i, q] = 0.0


# ---------------------------------------------------------------------------- the loops' G_L
@helper(cache=True)
def build_loops(nl, tree, joint_body, body_inv_mass, inv_I, lw):
    """G_L = J_L M̂ J_Lᵀ of the loop rows, factored by the pivoted Cholesky that drops
    dependent rows; returns its rank."""
    l_J, l_body, G, l_perm = lw.l_J, lw.l_body, lw.G, lw.l_perm
    in_tree, zc, yv, yw = lw.in_tree, lw.zc, lw.yv, lw.yw
    for col in range(nl):
        live = loop_column(l_J, l_body, col, tree, joint_body, in_tree, body_inv_mass, inv_I, zc, yv, yw)
        for k in range(nl):
            G[k, col] = loop_dot(l_J, l_body, k, yv, yw, in_tree, live)
        clear_loop_column(l_body, col, in_tree, yv, yw)
    symmetrize(G, nl)
    return pivoted_cholesky(G, nl, l_perm, LOOP_RANK_TOL)


# ---------------------------------------------------------------------------- the LCP matrix A
@helper(cache=True)
def build_system(nu, nl, rank, sparse, tree, joint_body, body_inv_mass, inv_I, lw):
    """A = J_U M̂ J_Uᵀ (+ the soft rows' regularization on its diagonal) and B = J_U M̂ J_Lᵀ,
    column by column; then the loops' Schur complement A ← A − B G_L⁺ Bᵀ (W = B G_L⁺).
    `sparse` (no loops; PGS will solve it): A's nonzeros only, as CSR rows (a_ptr, a_idx,
    a_val; the diagonal also in a_diag) — row u of A is column u (A is symmetric), the rows
    sharing a body of no tree with u, or every row if u reaches the tree. O(nonzeros)
    instead of O(|U|²). Sparse, and no row on a body of the tree: A is not formed at all,
    only each row's M⁻¹J_uᵀ and diagonal for the velocity-form PGS (velocity_pgs.py; fast
    set to 1)."""
    u_J, u_body, u_eps, A, B, W = lw.u_J, lw.u_body, lw.u_eps, lw.A, lw.B, lw.W
    l_J, l_body, G, l_perm, tmp_l, work_l = lw.l_J, lw.l_body, lw.G, lw.l_perm, lw.tmp_l, lw.work_l
    body_ptr, body_idx = lw.body_ptr, lw.body_idx
    in_tree, zc, yv, yw = lw.in_tree, lw.zc, lw.yv, lw.yw
    nb = in_tree.shape[0]
    lw.fast[0] = 0
    if sparse and off_tree(nu, lw):
        prepare_rows(nu, body_inv_mass, inv_I, lw)
        lw.fast[0] = 1
        return
    # U rows per body (bodies of no tree: a column there reaches only their rows)
    for i in range(nb + 1):
        body_ptr[i] = 0
    for u in range(nu):
        body_ptr[u_body[u, 0] + 1] += 1
        body_ptr[u_body[u, 1] + 1] += 1
    for i in range(nb):
        body_ptr[i + 1] += body_ptr[i]
    for u in range(nu):
        for side in range(2):
            i = u_body[u, side]
            body_idx[body_ptr[i]] = u
            body_ptr[i] += 1
    for i in range(nb, 0, -1):
        body_ptr[i] = body_ptr[i - 1]
    body_ptr[0] = 0
    if sparse:
        sparse_system(nu, tree, joint_body, body_inv_mass, inv_I, lw)
        return
    for i in range(nu):
        for j in range(nu):
            A[i, j] = 0.0
    for u in range(nu):
        a, b = u_body[u, 0], u_body[u, 1]
        live = mhat_column(u_J, u, a, b, tree, joint_body, in_tree, body_inv_mass, inv_I, zc, yv, yw)
        if live:
            for i in range(nu):
                A[i, u] = column_dot(u_J, i, u_body[i, 0], u_body[i, 1], yv, yw, in_tree, live)
        else:
            for side in range(2):
                lo, hi = coupled_span(a if side == 0 else b, body_inv_mass, body_ptr)
                for k in range(lo, hi):
                    i = body_idx[k]
                    A[i, u] = column_dot(u_J, i, u_body[i, 0], u_body[i, 1], yv, yw, in_tree, live)
        for l in range(nl):
            B[u, l] = loop_dot(l_J, l_body, l, yv, yw, in_tree, live)
        clear_column(a, b, in_tree, yv, yw)
    symmetrize(A, nu)
    for i in range(nu):
        A[i, i] += u_eps[i]
    if nl == 0 or rank == 0:
        for u in range(nu):
            for l in range(nl):
                W[u, l] = 0.0
        return
    for u in range(nu):
        for l in range(nl):
            tmp_l[l] = B[u, l]
        pivoted_solve(G, l_perm, rank, nl, tmp_l, tmp_l, work_l)
        for l in range(nl):
            W[u, l] = tmp_l[l]
    for i in range(nu):
        for j in range(nu):
            s = 0.0
            for l in range(nl):
                s += B[i, l] * W[j, l]
            A[i, j] -= s


@helper(cache=True)
def sparse_system(nu, tree, joint_body, body_inv_mass, inv_I, lw):
    """build_system's sparse form (body_ptr/body_idx built): CSR rows of A's nonzeros in
    a_ptr/a_idx/a_val (each row's diagonal first), the diagonal (with u_eps) also in a_diag."""
    u_J, u_body, u_eps = lw.u_J, lw.u_body, lw.u_eps
    a_ptr, a_idx, a_val, a_diag, mark = lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, lw.mark
    body_ptr, body_idx = lw.body_ptr, lw.body_idx
    in_tree, zc, yv, yw = lw.in_tree, lw.zc, lw.yv, lw.yw
    for i in range(nu):
        mark[i] = -1
    k = 0
    for u in range(nu):
        a_ptr[u] = k
        a, b = u_body[u, 0], u_body[u, 1]
        live = mhat_column(u_J, u, a, b, tree, joint_body, in_tree, body_inv_mass, inv_I, zc, yv, yw)
        a_diag[u] = column_dot(u_J, u, a, b, yv, yw, in_tree, live) + u_eps[u]
        a_idx[k] = u
        a_val[k] = a_diag[u]
        k += 1
        mark[u] = u
        if live:
            for i in range(nu):
                if i != u:
                    v = column_dot(u_J, i, u_body[i, 0], u_body[i, 1], yv, yw, in_tree, live)
                    if v != 0.0:
                        a_idx[k] = i
                        a_val[k] = v
                        k += 1
        else:
            for side in range(2):
                lo, hi = coupled_span(a if side == 0 else b, body_inv_mass, body_ptr)
                for q in range(lo, hi):
                    i = body_idx[q]
                    if mark[i] == u:
                        continue
                    mark[i] = u
                    v = column_dot(u_J, i, u_body[i, 0], u_body[i, 1], yv, yw, in_tree, live)
                    if v != 0.0:
                        a_idx[k] = i
                        a_val[k] = v
                        k += 1
        clear_column(a, b, in_tree, yv, yw)
    a_ptr[nu] = k


@helper(cache=True)
def sparse_lcp(params, nu, nl, lw):
    """Whether this step's LCP is built and solved sparse: no loop rows, and PGS will run
    (method pgs, or more rows than Lemke takes)."""
    if nl > 0:
        return False
    return params.method == PGS or nu > min(params.lemke_max, lw.lemke.slack.shape[0] // 3)
