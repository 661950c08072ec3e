"""The generic block factor and solve (Baraff's D_i and S_k, Cholesky-factored; any rows,
e.g. random ones in tests) and its Python entries: the reference the articulated form is
checked against."""
from collections import namedtuple

import numpy as np
from ...jit import kernel, helper

from .factor import FAST as _FAST, _cholesky, articulated_factor
from .plan import build_tree_plan, make_tree
from .solve import articulated_lambda, articulated_solve, select_rows

BlockFactor = namedtuple("BlockFactor", "body_L joint_L body_y body_u joint_w")
"""Work of the generic block factor (tree_factor/tree_solve): body_L (nb,36) D_i then its
factor, joint_L (nj,36) S_k then its factor, body_y, body_u (nb,6), joint_w (nj,6)."""



@helper(cache=True, fastmath=_FAST)
def _chol_solve(A, k, n, x, xk):
    """x[xk, :n] ← (L Lᵀ)⁻¹ x[xk, :n] with the factor in row k of A."""
    for i in range(n):
        s = x[xk, i]
        for q in range(i):
            s -= A[k, 6 * i + q] * x[xk, q]
        x[xk, i] = s * A[k, 7 * i]
    for i in range(n - 1, -1, -1):
        s = x[xk, i]
        for q in range(i + 1, n):
            s -= A[k, 6 * q + i] * x[xk, q]
        x[xk, i] = s * A[k, 7 * i]


@helper(cache=True, fastmath=_FAST)
def _tree_joint(order, joint_child, joint_side, joint_parent, joint_row_start, joint_m, t):
    """Joint k = order[t] of the elimination: (k, its child body c, the child's column
    offset oc in the rows (0 = side a, 6 = b), its parent body p (−1: none), its first row
    r0, its number of rows m)."""
    k = order[t]
    return k, joint_child[k], 6 * joint_side[k], joint_parent[k], joint_row_start[k], joint_m[k]


@kernel(cache=True, fastmath=_FAST)
def tree_factor(order, roots, joint_child, joint_side, joint_parent, joint_m, joint_row_start,
                row_J, body_inv_mass, body_I, body_L, joint_L, scratch):
    """Factor the tree (Baraff, SIGGRAPH 96) for the mass matrices M_i = diag(m_i E, I_i),
    I_i = body_I[i] (3×3 world inertia, row-major), and the equality rows in row_J."""
    # D_i = M_i on every body of the tree
    for t in range(order.shape[0]):
        c = joint_child[order[t]]
        _init_body(c, body_inv_mass, body_I, body_L)
    for t in range(roots.shape[0]):
        _init_body(roots[t], body_inv_mass, body_I, body_L)
    W = scratch
    for t in range(order.shape[0]):
        k, c, oc, p, r0, m = _tree_joint(order, joint_child, joint_side, joint_parent, joint_row_start, joint_m, t)
        # c has all its children in D_c now
        _cholesky(body_L, c, 6)
        # W = L_c⁻¹ J_kcᵀ, one row of W per constraint row
        for i in range(m):
            for q in range(6):
                s = row_J[r0 + i, oc + q]
                for z in range(q):
                    s -= body_L[c, 6 * q + z] * W[6 * i + z]
                W[6 * i + q] = s * body_L[c, 7 * q]
        # S_k = J_kc D_c⁻¹ J_kcᵀ = W Wᵀ
        for i in range(m):
            for j in range(i + 1):
                s = 0.0
                for q in range(6):
                    s += W[6 * i + q] * W[6 * j + q]
                joint_L[k, 6 * i + j] = s
        _cholesky(joint_L, k, m)
        if p < 0:
            continue
        # D_p += J_kpᵀ S_k⁻¹ J_kp = Zᵀ Z, Z = L_S⁻¹ J_kp (m×6, column by column)
        op = 6 - oc
        for q in range(6):
            for i in range(m):
                s = row_J[r0 + i, op + q]
                for z in range(i):
                    s -= joint_L[k, 6 * i + z] * W[6 * z + q]
                W[6 * i + q] = s * joint_L[k, 7 * i]
        for a in range(6):
            for b in range(a + 1):
                s = 0.0
                for i in range(m):
                    s += W[6 * i + a] * W[6 * i + b]
                body_L[p, 6 * a + b] += s
    for t in range(roots.shape[0]):
        _cholesky(body_L, roots[t], 6)


@helper(cache=True, fastmath=_FAST)
def _init_body(i, body_inv_mass, body_I, body_L):
    for q in range(36):
        body_L[i, q] = 0.0
    m = 1.0 / body_inv_mass[i]
    body_L[i, 0] = m
    body_L[i, 7] = m
    body_L[i, 14] = m
    for a in range(3):
        for b in range(a + 1):
            body_L[i, 6 * (a + 3) + b + 3] = body_I[i, 3 * a + b]


@kernel(cache=True, fastmath=_FAST)
def tree_solve(tree, joint_row_start, joint_body, row_J, row_C, rate, factor, vel, omega, lam, assign):
    """Solve J M⁻¹ Jᵀ Δλ = b for the equality rows, b_r = −rate·C_r − J_r V, with the factor
    of `tree_factor`; then V += M⁻¹ Jᵀ Δλ (vel, omega) and lam += Δλ (or lam = Δλ when
    `assign`). Returns the largest |Δλ| (or |new − old| when assigning)."""
    order, roots, joint_child, joint_side = tree.order, tree.roots, tree.joint_child, tree.joint_side
    joint_parent, joint_m = tree.joint_parent, tree.joint_m
    body_L, joint_L, body_y, body_u, joint_w = factor
    # forward: leaves to roots
    for t in range(order.shape[0]):
        c = joint_child[order[t]]
        for q in range(6):
            body_y[c, q] = 0.0
    for t in range(roots.shape[0]):
        for q in range(6):
            body_y[roots[t], q] = 0.0
    for t in range(order.shape[0]):
        k, c, oc, p, r0, m = _tree_joint(order, joint_child, joint_side, joint_parent, joint_row_start, joint_m, t)
        for q in range(6):
            body_u[c, q] = body_y[c, q]
        _chol_solve(body_L, c, 6, body_u, c)
        a = joint_body[k, 0]
        b = joint_body[k, 1]
        for i in range(m):
            r = r0 + i
            # J V − target + J_kc u_c
            s = rate * row_C[r]
            s += (row_J[r, 0] * vel[a, 0] + row_J[r, 1] * vel[a, 1] + row_J[r, 2] * vel[a, 2]
                  + row_J[r, 3] * omega[a, 0] + row_J[r, 4] * omega[a, 1] + row_J[r, 5] * omega[a, 2]
                  + row_J[r, 6] * vel[b, 0] + row_J[r, 7] * vel[b, 1] + row_J[r, 8] * vel[b, 2]
                  + row_J[r, 9] * omega[b, 0] + row_J[r, 10] * omega[b, 1] + row_J[r, 11] * omega[b, 2])
            for q in range(6):
                s += row_J[r, oc + q] * body_u[c, q]
            joint_w[k, i] = s
        _chol_solve(joint_L, k, m, joint_w, k)
        if p >= 0:
            op = 6 - oc
            for q in range(6):
                s = 0.0
                for i in range(m):
                    s += row_J[r0 + i, op + q] * joint_w[k, i]
                body_y[p, q] -= s
    # a free-floating root: v = D⁻¹ y
    for t in range(roots.shape[0]):
        i = roots[t]
        for q in range(6):
            body_u[i, q] = body_y[i, q]
        _chol_solve(body_L, i, 6, body_u, i)
        _add_velocity(i, body_u, vel, omega)
    # backward: roots to leaves; body_u[c] becomes Δv_c; joint_w[k] becomes Δλ_k
    worst = 0.0
    for t in range(order.shape[0] - 1, -1, -1):
        k, c, oc, p, r0, m = _tree_joint(order, joint_child, joint_side, joint_parent, joint_row_start, joint_m, t)
        if p >= 0:
            op = 6 - oc
            # t = S⁻¹ J_kp Δv_p, kept in body_y[c] (free now)
            for i in range(m):
                s = 0.0
                for q in range(6):
                    s += row_J[r0 + i, op + q] * body_u[p, q]
                body_y[c, i] = s
            _chol_solve(joint_L, k, m, body_y, c)
            for i in range(m):
                joint_w[k, i] = -joint_w[k, i] - body_y[c, i]
        else:
            for i in range(m):
                joint_w[k, i] = -joint_w[k, i]
        # Δv_c = u_c + D_c⁻¹ J_kcᵀ Δλ_k
        for q in range(6):
            s = 0.0
            for i in range(m):
                s += row_J[r0 + i, oc + q] * joint_w[k, i]
            body_y[c, q] = s
        _chol_solve(body_L, c, 6, body_y, c)
        for q in range(6):
            body_u[c, q] += body_y[c, q]
        _add_velocity(c, body_u, vel, omega)
        for i in range(m):
            d = joint_w[k, i]
            if assign:
                worst = max(worst, abs(d - lam[r0 + i]))
                lam[r0 + i] = d
            else:
                worst = max(worst, abs(d))
                lam[r0 + i] += d
    return worst


@helper(cache=True, fastmath=_FAST)
def _add_velocity(i, dv, vel, omega):
    vel[i, 0] += dv[i, 0]
    vel[i, 1] += dv[i, 1]
    vel[i, 2] += dv[i, 2]
    omega[i, 0] += dv[i, 3]
    omega[i, 1] += dv[i, 4]
    omega[i, 2] += dv[i, 5]


def solve_tree_system(joint_body, joint_type, static, joint_row_start, row_J, body_inv_mass, body_I, b):
    """λ with J M⁻¹ Jᵀ λ = b over the equality rows of every tree joint, by the O(N)
    factor and solve above (for tests and tools; the solver calls the kernels).

    row_J: (rows, 12) Jacobians (joint_row_start[k] + i is equality row i of joint k);
    body_I: (nb, 9) world inertia matrices; b: (rows,) right-hand side on those rows.
    Returns (λ over the rows, Δv as (nb, 6) = M⁻¹ Jᵀ λ)."""
    plan = build_tree_plan(joint_body, joint_type, static)
    if not plan.is_tree:
        raise ValueError(f"joints {plan.loop_joints.tolist()} close loops: not a tree")
    nb, nj = len(static), len(joint_body)
    body_L, joint_L = np.zeros((nb, 36)), np.zeros((nj, 36))      # D_i, S_k, then their factors
    body_y, body_u, joint_w = np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nj, 6))
    joint_body = np.ascontiguousarray(joint_body, np.int64)
    row_J = np.ascontiguousarray(row_J, float)
    tree_factor(plan.order, plan.roots, plan.joint_child, plan.joint_side, plan.joint_parent, plan.joint_m,
                np.ascontiguousarray(joint_row_start, np.int64), row_J, np.ascontiguousarray(body_inv_mass, float),
                np.ascontiguousarray(body_I, float), body_L, joint_L, np.zeros(36))
    vel, omega = np.zeros((nb, 3)), np.zeros((nb, 3))
    lam = np.zeros(len(row_J))
    # b = −rate·C − J V with V = 0 and rate = −1: C carries b
    tree_solve(make_tree(plan, len(row_J)), np.ascontiguousarray(joint_row_start, np.int64), joint_body, row_J, np.ascontiguousarray(b, float),
               -1.0, BlockFactor(body_L, joint_L, body_y, body_u, joint_w), vel, omega, lam, False)
    return lam, np.hstack([vel, omega])


def solve_joint_rows(joint_type, joint_body, joint_row_start, row_J, body_pos, body_inv_mass, body_I, static, b,
                     row_active=None):
    """λ with J M⁻¹ Jᵀ λ = b over the equality rows of a tree of joints whose rows come
    from joint_rows.py — and, given row_active, the active limit rows too — by the
    articulated form (what the impulse solver runs). Same arguments and result as
    solve_tree_system, plus body_pos (a slider's shift)."""
    plan = build_tree_plan(joint_body, joint_type, static)
    if not plan.is_tree:
        raise ValueError(f"joints {plan.loop_joints.tolist()} close loops: not a tree")
    tree = make_tree(plan, len(row_J))
    nb = len(static)
    joint_type = np.ascontiguousarray(joint_type, np.int64)
    joint_body = np.ascontiguousarray(joint_body, np.int64)
    joint_row_start = np.ascontiguousarray(joint_row_start, np.int64)
    row_J = np.ascontiguousarray(row_J, float)
    body_I = np.ascontiguousarray(body_I, float)
    b = np.ascontiguousarray(b, float)
    with_limits = row_active is not None
    row_active = np.zeros(len(row_J), np.int64) if row_active is None else np.ascontiguousarray(row_active, np.int64)
    select_rows(tree, joint_type, joint_row_start, row_active, with_limits, tree.row_direct)
    articulated_factor(tree, joint_type, joint_body, row_J, b, np.ascontiguousarray(body_pos, float),
                       np.ascontiguousarray(body_inv_mass, float), body_I, True, False)
    vel, omega = np.zeros((nb, 3)), np.zeros((nb, 3))
    lam = np.zeros(len(row_J))
    # from rest (momenta 0) with J V = −rate·C: rate = −1 and C = b
    articulated_solve(tree, joint_body, -1.0, tree.body_z, vel, omega, False, 0.0, tree.body_z2, vel, omega, 0.0)
    articulated_lambda(tree, row_J, tree.body_z, vel, omega, lam)
    return lam, np.hstack([vel, omega])
