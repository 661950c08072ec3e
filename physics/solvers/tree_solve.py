"""Direct O(N) solve of the joint rows of a tree of bodies (Baraff's method).

Baraff, "Linear-time dynamics using Lagrange multipliers" (SIGGRAPH 96): the bodies and
the joints of a tree-structured mechanism are the nodes of one tree. The sparse
symmetric system

    [ M   −Jᵀ ] [ v ]   [ 0  ]
    [ −J   0  ] [ λ ] = [ −b ]          ⇔   J M⁻¹ Jᵀ λ = b,  v = M⁻¹ Jᵀ λ

has the sparsity of that tree (a body node is a 6×6 block M_i, a joint node the m×m
zero block of its m rows, a joint–body edge the m×6 block −J_ki), so eliminating the
nodes leaves first creates no fill-in: O(N) work with small dense blocks. With body
nodes D_i (6×6) and joint nodes S_k = −D_k (m×m), both kept positive definite and
Cholesky-factored (tree_factor, tree_solve — any rows, e.g. random ones in tests):

    factor (leaves first; joint k joins its child body c to its parent body p):
        D_c = M_c + Σ_{child joints k' of c} J_k'cᵀ S_k'⁻¹ J_k'c
        S_k = J_kc D_c⁻¹ J_kcᵀ
    solve:
        forward   y_c = −Σ J_k'cᵀ w_k',  u_c = D_c⁻¹ y_c
                  w_k = S_k⁻¹ (J_kc u_c − b_k)
        backward  λ_k = −w_k − S_k⁻¹ J_kp v_p      (λ_k = −w_k at a root joint)
                  v_c = u_c + D_c⁻¹ J_kcᵀ λ_k

Along a chain each of these pivots (a 6×6 and an m×m Cholesky per joint) waits for the
previous one. The impulse solver runs the same elimination in its articulated form
(articulated_factor, articulated_solve — rows as joint_rows.py writes them, see the
block comment there): it eliminates each joint through the l = 6 − m motions its rows
allow, so the chain of dependent pivots is l×l (1×1 for a hinge), about 4× faster.

A joint to a static body (the world) has no parent body and roots its subtree; a tree
with no such joint (a free-floating mechanism) is rooted at one of its bodies. A
graph with a loop — two paths between two bodies, or two joints from one mechanism
to the static world — is not a tree: `build_tree_plan` keeps a spanning tree and names
the joints that close the loops.

Storage: every matrix is a row of a float64 (n, 36) array, 6×6 row-major; a Cholesky
factor keeps L below the diagonal and 1/L_ii on it.
"""
import math
from collections import deque, namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..joint_types import BY_CODE, N_FREE, N_LIMIT, PRISMATIC
from ..quat import cross, rotated_diagonal, store_symmetric, sym_add_outer

_FAST = {"contract", "reassoc", "nsz", "arcp"}   # no nnan/ninf: NaNs must still show up


@dataclass
class TreePlan:
    """The tree of one joint graph, built once per topology (`build_tree_plan`).

    order:        tree joints, leaves first (the elimination order)
    joint_child:  (nj,) the child body of each tree joint (−1: joint not in the tree)
    joint_side:   (nj,) which side (0 = a, 1 = b) of the joint the child body is
    joint_parent: (nj,) the parent body (−1: the joint hangs from a static body)
    joint_m:      (nj,) equality rows per joint (joint_types.py)
    joint_direct: (nj,) 1 if the joint is in the tree
    roots:        bodies rooting a free-floating tree
    loop_joints:  joints that close a loop (not in the tree)
    depth:        longest chain of joints from a root
    """
    order: np.ndarray
    joint_child: np.ndarray
    joint_side: np.ndarray
    joint_parent: np.ndarray
    joint_m: np.ndarray
    joint_direct: np.ndarray
    roots: np.ndarray
    loop_joints: np.ndarray
    depth: int
    n_bodies: int

    @property
    def is_tree(self):
        return len(self.loop_joints) == 0


def static_bodies(body_inv_mass, body_inv_inertia):
    """Bodies that never move (zero inverse mass and inertia), as in integrate.is_static."""
    return (np.asarray(body_inv_mass) == 0.0) & np.all(np.asarray(body_inv_inertia) == 0.0, axis=1)


def build_tree_plan(joint_body, joint_type, static):
    """Root the joint graph: dynamic bodies are nodes, all static bodies one ground node.

    Joints are taken in index order; one that would close a cycle (union-find) is a
    loop joint and stays out of the tree. Joints between two static bodies carry no
    rows and are left out altogether.
    """
    joint_body = np.asarray(joint_body, np.int64).reshape(-1, 2)
    nj = len(joint_body)
    nb = len(static)
    ground = nb                                   # the merged static node
    parent_uf = list(range(nb + 1))

    def find(x):
        while parent_uf[x] != x:
            parent_uf[x] = parent_uf[parent_uf[x]]
            x = parent_uf[x]
        return x

    def node(i):
        return ground if static[i] else int(i)

    in_tree = np.zeros(nj, np.int64)
    loops = []
    adjacency = [[] for _ in range(nb + 1)]
    for j in range(nj):
        a, b = node(joint_body[j, 0]), node(joint_body[j, 1])
        if a == ground and b == ground:
            continue
        ra, rb = find(a), find(b)
        if ra == rb:
            loops.append(j)
            continue
        parent_uf[ra] = rb
        in_tree[j] = 1
        adjacency[a].append(j)
        adjacency[b].append(j)

    joint_child = np.full(nj, -1, np.int64)
    joint_side = np.zeros(nj, np.int64)
    joint_parent = np.full(nj, -1, np.int64)
    joint_depth = np.zeros(nj, np.int64)
    bfs = []
    roots = []
    seen = np.zeros(nb + 1, bool)

    def grow(start, start_depth):
        queue = deque([(start, start_depth)])
        seen[start] = True
        while queue:
            n, d = queue.popleft()
            for j in adjacency[n]:
                if joint_child[j] >= 0:
                    continue
                a, b = node(joint_body[j, 0]), node(joint_body[j, 1])
                other, side = (b, 1) if a == n else (a, 0)
                if seen[other]:
                    continue
                joint_child[j] = other
                joint_side[j] = side
                joint_parent[j] = -1 if n == ground else n
                joint_depth[j] = d + 1
                bfs.append(j)
                seen[other] = True
                queue.append((other, d + 1))

    grow(ground, 0)
    for i in range(nb):
        if not static[i] and not seen[i] and adjacency[i]:
            roots.append(i)
            grow(i, 0)
    joint_m = np.array([BY_CODE[int(t)].n_eq for t in joint_type], np.int64).reshape(nj)
    return TreePlan(order=np.array(bfs[::-1], np.int64), joint_child=joint_child, joint_side=joint_side,
                    joint_parent=joint_parent, joint_m=joint_m, joint_direct=in_tree,
                    roots=np.array(roots, np.int64), loop_joints=np.array(loops, np.int64),
                    depth=int(joint_depth.max()) if nj else 0, n_bodies=nb)


Tree = namedtuple("Tree", "order roots joint_child joint_side joint_parent joint_m loop_joints row_direct "
                         "joint_rows joint_mdir joint_nldir body_v0 body_w0 body_I body_K body_D body_z body_z2 "
                         "joint_N joint_U joint_P joint_d joint_Gl joint_Ga joint_t joint_nz root_L scratch row_target")
"""Everything the direct path reads and writes, for one joint graph: the plan (order …
loop_joints, see TreePlan), row_direct (rows,) 1 for rows in the direct solve, joint_rows
(nj,6) those rows per joint, joint_mdir / joint_nldir (nj,) how many (and how many with a
linear part); body_v0, body_w0 (nb,3) velocities before the solve, body_I (nb,9) inertia
with geometric stiffness, body_K (nb,6) that stiffness; body_D (nb,36) D_i (6×6, both
triangles), body_z, body_z2 (nb,6) momenta in / forward-pass accumulators of two right-hand
sides, joint_N (nj,18) null-space columns (6 × l), joint_U (nj,18) D_c N, joint_P (nj,9)
(Nᵀ D_c N)⁻¹, joint_d (nj,3) shift parent → child, joint_Gl / joint_Ga (nj,9) Gram⁻¹ of the
rows' linear / angular-only parts, joint_t (nj,15) targets −C, joint_nz (nj,6) Nᵀ z_c,
root_L (max(roots,1),36) factors of free-floating roots, scratch (36,); row_target (rows,) a
row value the caller's targets are built from (the impulse step's C plus its predicted drift)."""


def make_tree(plan, n_rows):
    """A Tree bundle with zeroed arrays for `plan` (TreePlan) and n_rows rows."""
    nb, nj = plan.n_bodies, len(plan.joint_child)
    return Tree(plan.order, plan.roots, plan.joint_child, plan.joint_side, plan.joint_parent, plan.joint_m,
                plan.loop_joints, np.zeros(n_rows, np.int64), np.zeros((nj, 6), np.int64), np.zeros(nj, np.int64),
                np.zeros(nj, np.int64), np.zeros((nb, 3)), np.zeros((nb, 3)), np.zeros((nb, 9)), np.zeros((nb, 6)),
                np.zeros((nb, 36)), np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nj, 18)), np.zeros((nj, 18)),
                np.zeros((nj, 9)), np.zeros((nj, 3)), np.zeros((nj, 9)), np.zeros((nj, 9)), np.zeros((nj, 15)),
                np.zeros((nj, 6)), np.zeros((max(len(plan.roots), 1), 36)), np.zeros(36), np.zeros(n_rows))


BlockFactor = namedtuple("BlockFactor", "body_L joint_L body_y body_u joint_w")
"""Work of the generic block factor (tree_factor/tree_solve): body_L (nb,36) D_i then its
factor, joint_L (nj,36) S_k then its factor, body_y, body_u (nb,6), joint_w (nj,6)."""


# ---------------------------------------------------------------------------- kernels
@njit(cache=True, fastmath=_FAST, inline="always")
def _cholesky(A, k, n):
    """In-place Cholesky of the n×n SPD matrix in row k of A (lower part read), with
    1/L_ii stored on the diagonal. A pivot below 1e-13 of the largest diagonal entry
    (redundant rows) is lifted to it, so the solve stays finite."""
    big = 0.0
    for i in range(n):
        big = max(big, A[k, 7 * i])
    floor = 1e-13 * big if big > 0.0 else 1e-300
    for j in range(n):
        d = A[k, 7 * j]
        for q in range(j):
            d -= A[k, 6 * j + q] * A[k, 6 * j + q]
        if not d > floor:
            d = floor
        inv = 1.0 / math.sqrt(d)
        A[k, 7 * j] = inv
        for i in range(j + 1, n):
            s = A[k, 6 * i + j]
            for q in range(j):
                s -= A[k, 6 * i + q] * A[k, 6 * j + q]
            A[k, 6 * i + j] = s * inv


@njit(cache=True, fastmath=_FAST, inline="always")
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


@njit(cache=True, fastmath=_FAST, inline="always")
def _tree_joint(order, joint_child, joint_side, joint_parent, joint_row_start, joint_m, t):
    """Joint k = order[t] of the elimination: (k, its child body c, the child's column
    offset oc in the rows (0 = side a, 6 = b), its parent body p (−1: none), its first row
    r0, its number of rows m)."""
    k = order[t]
    return k, joint_child[k], 6 * joint_side[k], joint_parent[k], joint_row_start[k], joint_m[k]


@njit(cache=True, fastmath=_FAST)
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


@njit(cache=True, fastmath=_FAST, inline="always")
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


@njit(cache=True, fastmath=_FAST)
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


@njit(cache=True, fastmath=_FAST, inline="always")
def _add_velocity(i, dv, vel, omega):
    vel[i, 0] += dv[i, 0]
    vel[i, 1] += dv[i, 1]
    vel[i, 2] += dv[i, 2]
    omega[i, 0] += dv[i, 3]
    omega[i, 1] += dv[i, 4]
    omega[i, 2] += dv[i, 5]


# ---------------------------------------------------------------------------- articulated form
# The same elimination, with each joint node eliminated through the null space of its
# rows on the child body instead of through S_k. For joint k (child c, parent p) let
#     N (6×l)  span the motions of c that its rows allow (J_kc N = 0, l = 6 − m),
#     X        the rigid shift with J_kp = −J_kc X:  X (v, ω) = (v + ω × d, ω), d = r_p − r_c
#              (r: the lever arms of the joint's anchors; for a slider d = x_c − x_p).
# Then J_kcᵀ S_k⁻¹ J_kc = D_c − D_c N (Nᵀ D_c N)⁻¹ Nᵀ D_c, so Baraff's update of the parent
# is D_p += Xᵀ (D_c − U P⁻¹ Uᵀ) X with U = D_c N, P = Nᵀ U (l×l): Featherstone's
# articulated-body recursion, in maximal coordinates. The pivots on the chain from the
# leaves to the root are l×l (1×1 for a hinge) instead of 6×6 and m×m.
# The solve works on total velocities: body momenta z = M V⁻ (+ other impulses) in,
# velocities with J V = t (t = −rate·C) out. A particular solution J_kc s_k = t_k comes
# from the rows' block-triangular shape (articulated_factor, pass 1):
#     forward   β_k = P⁻¹ (Nᵀ z_c − Uᵀ s_k),  z_p += Xᵀ (z_c − D_c s_k − U β_k)
#     backward  w = X V_p + s_k,  V_c = w + N P⁻¹ (Nᵀ z_c − Uᵀ w)
#               J_kcᵀ λ_k = D_c V_c − z_c                  (the impulse of joint k on c)
# The rows must have the shapes joint_rows.py writes: first the rows with a linear part
# (three point rows along x, y, z; a slider's two slide rows), then angular-only rows.


@njit(cache=True, fastmath=_FAST, inline="always")
def arm(row_J, r0, o):
    """World lever arm r of the side at column offset o (0 = a, 6 = b) of three point rows
    along x, y, z, whose angular parts are ±(r × e)."""
    if o == 6:
        return row_J[r0 + 1, 11], row_J[r0 + 2, 9], row_J[r0, 10]
    return -row_J[r0 + 1, 5], -row_J[r0 + 2, 3], -row_J[r0, 4]


@njit(cache=True, fastmath=_FAST, inline="always")
def _sym_inverse(p00, p01, p02, p11, p12, p22, n):
    """(i00, i01, i02, i11, i12, i22): inverse of the leading n×n block (n ≤ 3) of the
    symmetric [[p00 p01 p02] [p01 p11 p12] [p02 p12 p22]], zero outside it; a singular
    block gives 0."""
    if n == 1:
        return (1.0 / p00 if p00 > 0.0 else 0.0), 0.0, 0.0, 0.0, 0.0, 0.0
    if n == 2:
        det = p00 * p11 - p01 * p01
        inv = 1.0 / det if det > 0.0 else 0.0
        return p11 * inv, -p01 * inv, 0.0, p00 * inv, 0.0, 0.0
    if n == 3:
        c00 = p11 * p22 - p12 * p12
        c01 = p02 * p12 - p01 * p22
        c02 = p01 * p12 - p02 * p11
        det = p00 * c00 + p01 * c01 + p02 * c02
        inv = 1.0 / det if det > 0.0 else 0.0
        return (c00 * inv, c01 * inv, c02 * inv, (p00 * p22 - p02 * p02) * inv, (p01 * p02 - p00 * p12) * inv,
                (p00 * p11 - p01 * p01) * inv)
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@njit(cache=True, fastmath=_FAST, inline="always")
def _gram(row_J, rows, k, first, n, col):
    """Gram matrix (p00, p01, p02, p11, p12, p22) of the 3-vectors row_J[r, col:col + 3] of
    the n rows rows[k, first:first + n]."""
    p00 = p01 = p02 = p11 = p12 = p22 = 0.0
    r0 = rows[k, first]
    r1 = rows[k, first + 1] if n > 1 else r0
    r2 = rows[k, first + 2] if n > 2 else r0
    for q in range(3):
        x0 = row_J[r0, col + q] if n > 0 else 0.0
        x1 = row_J[r1, col + q] if n > 1 else 0.0
        x2 = row_J[r2, col + q] if n > 2 else 0.0
        p00, p01, p02, p11, p12, p22 = sym_add_outer(p00, p01, p02, p11, p12, p22, x0, x1, x2, x0, x1, x2)
    return p00, p01, p02, p11, p12, p22


@njit(cache=True, fastmath=_FAST)
def _hinge_factor(k, c, p, body_D, joint_N, joint_U, joint_P, joint_d):
    """Pass 2 of articulated_factor at a joint whose child keeps n = 1 free direction (a
    hinge, a slider): U = D_c N, P⁻¹ = 1/(Nᵀ U), A = D_c − U Uᵀ/P (a rank-1 downdate) and
    D_p += Xᵀ A X on the lower triangles, written out; D_c's upper triangle is mirrored."""
    d00 = body_D[c, 0]
    d10, d11 = body_D[c, 6], body_D[c, 7]
    d20, d21, d22 = body_D[c, 12], body_D[c, 13], body_D[c, 14]
    d30, d31, d32, d33 = body_D[c, 18], body_D[c, 19], body_D[c, 20], body_D[c, 21]
    d40, d41, d42, d43, d44 = body_D[c, 24], body_D[c, 25], body_D[c, 26], body_D[c, 27], body_D[c, 28]
    d50, d51, d52, d53, d54, d55 = body_D[c, 30], body_D[c, 31], body_D[c, 32], body_D[c, 33], body_D[c, 34], body_D[c, 35]
    body_D[c, 1], body_D[c, 2], body_D[c, 3], body_D[c, 4], body_D[c, 5], body_D[c, 8], body_D[c, 9], body_D[c, 10], body_D[c, 11], body_D[c, 15], body_D[c, 16], body_D[c, 17], body_D[c, 22], body_D[c, 23], body_D[c, 29] = d10, d20, d30, d40, d50, d21, d31, d41, d51, d32, d42, d52, d43, d53, d54
    n0, n1, n2, n3, n4, n5 = joint_N[k, 0], joint_N[k, 1], joint_N[k, 2], joint_N[k, 3], joint_N[k, 4], joint_N[k, 5]
    u0 = d00 * n0 + d10 * n1 + d20 * n2 + d30 * n3 + d40 * n4 + d50 * n5
    u1 = d10 * n0 + d11 * n1 + d21 * n2 + d31 * n3 + d41 * n4 + d51 * n5
    u2 = d20 * n0 + d21 * n1 + d22 * n2 + d32 * n3 + d42 * n4 + d52 * n5
    u3 = d30 * n0 + d31 * n1 + d32 * n2 + d33 * n3 + d43 * n4 + d53 * n5
    u4 = d40 * n0 + d41 * n1 + d42 * n2 + d43 * n3 + d44 * n4 + d54 * n5
    u5 = d50 * n0 + d51 * n1 + d52 * n2 + d53 * n3 + d54 * n4 + d55 * n5
    joint_U[k, 0], joint_U[k, 1], joint_U[k, 2] = u0, u1, u2
    joint_U[k, 3], joint_U[k, 4], joint_U[k, 5] = u3, u4, u5
    pp = n0 * u0 + n1 * u1 + n2 * u2 + n3 * u3 + n4 * u4 + n5 * u5
    i00 = 1.0 / pp if pp > 0.0 else 0.0
    store_symmetric(joint_P, k, (i00, 0.0, 0.0, 0.0, 0.0, 0.0))
    if p < 0:
        return
    # A = D_c − U P⁻¹ Uᵀ, lower triangle
    w0 = i00 * u0
    w1 = i00 * u1
    w2 = i00 * u2
    w3 = i00 * u3
    w4 = i00 * u4
    w5 = i00 * u5
    a00 = d00 - u0 * w0
    a10, a11 = d10 - u0 * w1, d11 - u1 * w1
    a20, a21, a22 = d20 - u0 * w2, d21 - u1 * w2, d22 - u2 * w2
    a30, a31, a32, a33 = d30 - u0 * w3, d31 - u1 * w3, d32 - u2 * w3, d33 - u3 * w3
    a40, a41, a42, a43, a44 = d40 - u0 * w4, d41 - u1 * w4, d42 - u2 * w4, d43 - u3 * w4, d44 - u4 * w4
    a50, a51, a52, a53, a54, a55 = d50 - u0 * w5, d51 - u1 * w5, d52 - u2 * w5, d53 - u3 * w5, d54 - u4 * w5, d55 - u5 * w5
    # D_p += Xᵀ A X, X = [[E, B], [0, E]], B y = y × d: top left A11; column j of the
    # bottom left block's transpose T = A11 e + A12 e_j (e = e_j × d); bottom right, column j:
    # d × T e_j + A21 e + A22 e_j, its rows i ≥ j
    dx, dy, dz = joint_d[k, 0], joint_d[k, 1], joint_d[k, 2]
    body_D[p, 0] += a00
    body_D[p, 6] += a10
    body_D[p, 7] += a11
    body_D[p, 12] += a20
    body_D[p, 13] += a21
    body_D[p, 14] += a22
    # column 0
    t0 = -a10 * dz + a20 * dy + a30
    t1 = -a11 * dz + a21 * dy + a31
    t2 = -a21 * dz + a22 * dy + a32
    body_D[p, 18] += t0
    body_D[p, 19] += t1
    body_D[p, 20] += t2
    bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
    body_D[p, 21] += bx + -a31 * dz + a32 * dy + a33
    body_D[p, 27] += by + -a41 * dz + a42 * dy + a43
    body_D[p, 33] += bz + -a51 * dz + a52 * dy + a53
    # column 1
    t0 = a00 * dz - a20 * dx + a40
    t1 = a10 * dz - a21 * dx + a41
    t2 = a20 * dz - a22 * dx + a42
    body_D[p, 24] += t0
    body_D[p, 25] += t1
    body_D[p, 26] += t2
    bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
    body_D[p, 28] += by + a40 * dz - a42 * dx + a44
    body_D[p, 34] += bz + a50 * dz - a52 * dx + a54
    # column 2
    t0 = -a00 * dy + a10 * dx + a50
    t1 = -a10 * dy + a11 * dx + a51
    t2 = -a20 * dy + a21 * dx + a52
    body_D[p, 30] += t0
    body_D[p, 31] += t1
    body_D[p, 32] += t2
    bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
    body_D[p, 35] += bz + -a50 * dy + a51 * dx + a55


@njit(cache=True, fastmath=_FAST, inline="always")
def _mirror_lower(body_D, c):
    """Copy the lower triangle of the 6×6 body_D[c] onto its upper one."""
    for i in range(1, 6):
        for j in range(i):
            body_D[c, 6 * j + i] = body_D[c, 6 * i + j]


@njit(cache=True, fastmath=_FAST, _nrt=False)
def articulated_factor(tree, joint_type, joint_body, row_J, row_C, body_pos, body_inv_mass, body_I, targets, rows_done):
    """Factor the tree for M_i = diag(m_i E, I_i) (body_I: 3×3 world inertia, row-major)
    and, per joint k, the rows joint_rows[k, :joint_mdir[k]] (select_rows: its equality
    rows and any active limit rows, the joint_nldir[k] rows with a linear part first), in
    the articulated form above. `targets`: also prepare right-hand sides J V = −rate·C
    (joint_t: s for t = −C, D_c s, Uᵀ s). `rows_done`: the rows are those of the last
    call, whose per-joint quantities (pass 1) still hold; only the masses changed.
    (The steps are written out in the loops: numba's inlining of helpers that store
    into arrays made them several times slower.)"""
    order, roots, joint_child, joint_side = tree.order, tree.roots, tree.joint_child, tree.joint_side
    joint_parent, joint_rows, joint_mdir, joint_nldir = tree.joint_parent, tree.joint_rows, tree.joint_mdir, tree.joint_nldir
    body_D, joint_N, joint_U, joint_P = tree.body_D, tree.joint_N, tree.joint_U, tree.joint_P
    joint_d, joint_Gl, joint_Ga, joint_t = tree.joint_d, tree.joint_Gl, tree.joint_Ga, tree.joint_t
    root_L, scratch = tree.root_L, tree.scratch
    # pass 1, joint by joint from its rows alone (nothing flows along the tree): Gram
    # inverses of the linear parts and of the angular-only rows, null space N, shift d
    for t in range(0 if rows_done else order.shape[0]):
        k = order[t]
        c = joint_child[k]
        side = joint_side[k]
        oc = 6 * side
        m = joint_mdir[k]
        nl = joint_nldir[k]
        na = m - nl
        jt = joint_type[k]
        if jt == PRISMATIC:
            g00, g01, g02, g11, g12, g22 = _gram(row_J, joint_rows, k, 0, nl, oc)
            store_symmetric(joint_Gl, k, _sym_inverse(g00, g01, g02, g11, g12, g22, nl))
        else:                                   # point rows: linear parts ±e_x, ±e_y, ±e_z
            store_symmetric(joint_Gl, k, (1.0, 0.0, 0.0, 1.0, 0.0, 1.0))
        g00, g01, g02, g11, g12, g22 = _gram(row_J, joint_rows, k, nl, na, oc + 3)
        store_symmetric(joint_Ga, k, _sym_inverse(g00, g01, g02, g11, g12, g22, na))
        # N: the child's motions the rows allow (6 − m of them)
        n_cols = 6 - m
        if jt == PRISMATIC:
            # three angular rows: ω = 0; v ⟂ the slide directions (both, or all three at a stop)
            if n_cols == 1:
                ra, rb = joint_rows[k, 0], joint_rows[k, 1]
                vx, vy, vz = cross(row_J[ra, oc], row_J[ra, oc + 1], row_J[ra, oc + 2],
                                   row_J[rb, oc], row_J[rb, oc + 1], row_J[rb, oc + 2])
                joint_N[k, 0] = vx
                joint_N[k, 1] = vy
                joint_N[k, 2] = vz
                joint_N[k, 3] = 0.0
                joint_N[k, 4] = 0.0
                joint_N[k, 5] = 0.0
            pb = joint_body[k, 1 - side]
            joint_d[k, 0] = body_pos[c, 0] - body_pos[pb, 0]
            joint_d[k, 1] = body_pos[c, 1] - body_pos[pb, 1]
            joint_d[k, 2] = body_pos[c, 2] - body_pos[pb, 2]
        else:
            # point rows allow v = r × ω; the na angular rows restrict ω to their complement
            r0 = joint_rows[k, 0]
            rx, ry, rz = arm(row_J, r0, oc)
            px, py, pz = arm(row_J, r0, 6 - oc)
            joint_d[k, 0] = px - rx
            joint_d[k, 1] = py - ry
            joint_d[k, 2] = pz - rz
            ux = uy = uz = wx = wy = wz = 0.0
            if na == 2:
                ra, rb = joint_rows[k, 3], joint_rows[k, 4]
                ux, uy, uz = cross(row_J[ra, oc + 3], row_J[ra, oc + 4], row_J[ra, oc + 5],
                                   row_J[rb, oc + 3], row_J[rb, oc + 4], row_J[rb, oc + 5])
            elif na == 1:
                ra = joint_rows[k, 3]
                cx, cy, cz = row_J[ra, oc + 3], row_J[ra, oc + 4], row_J[ra, oc + 5]
                if abs(cx) <= abs(cy) and abs(cx) <= abs(cz):
                    ux, uy, uz = 0.0, cz, -cy          # c × e_x
                elif abs(cy) <= abs(cz):
                    ux, uy, uz = -cz, 0.0, cx          # c × e_y
                else:
                    ux, uy, uz = cy, -cx, 0.0          # c × e_z
                wx, wy, wz = cross(cx, cy, cz, ux, uy, uz)
            for j in range(n_cols):
                if na == 0:
                    ax = 1.0 if j == 0 else 0.0
                    ay = 1.0 if j == 1 else 0.0
                    az = 1.0 if j == 2 else 0.0
                elif j == 0:
                    ax, ay, az = ux, uy, uz
                else:
                    ax, ay, az = wx, wy, wz
                vx, vy, vz = cross(rx, ry, rz, ax, ay, az)
                joint_N[k, 6 * j] = vx
                joint_N[k, 6 * j + 1] = vy
                joint_N[k, 6 * j + 2] = vz
                joint_N[k, 6 * j + 3] = ax
                joint_N[k, 6 * j + 4] = ay
                joint_N[k, 6 * j + 5] = az
    # D_i = M_i on every dynamic body: its lower triangle only (pass 2 accumulates the
    # lower triangles and mirrors D_c once complete, when its parent joint comes)
    n_order = order.shape[0]
    for i in range(body_D.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        m = 1.0 / body_inv_mass[i]
        body_D[i, 0] = m
        body_D[i, 6] = 0.0
        body_D[i, 7] = m
        body_D[i, 12] = 0.0
        body_D[i, 13] = 0.0
        body_D[i, 14] = m
        for a in range(3):
            o = 6 * (a + 3)
            body_D[i, o] = 0.0
            body_D[i, o + 1] = 0.0
            body_D[i, o + 2] = 0.0
            for b in range(a + 1):
                body_D[i, o + 3 + b] = body_I[i, 3 * a + b]
    # pass 2, leaves to roots: D_c is complete when its parent joint comes
    A = scratch
    for t in range(n_order):
        k = order[t]
        c = joint_child[k]
        n = 6 - joint_mdir[k]
        if n == 1:
            _hinge_factor(k, c, joint_parent[k], body_D, joint_N, joint_U, joint_P, joint_d)
            continue
        _mirror_lower(body_D, c)
        # U = D_c N, P⁻¹ = (Nᵀ U)⁻¹
        for j in range(n):
            o = 6 * j
            n0, n1, n2 = joint_N[k, o], joint_N[k, o + 1], joint_N[k, o + 2]
            n3, n4, n5 = joint_N[k, o + 3], joint_N[k, o + 4], joint_N[k, o + 5]
            for i in range(6):
                joint_U[k, o + i] = _dot6(body_D, c, 6 * i, n0, n1, n2, n3, n4, n5)
        p00 = p01 = p02 = p11 = p12 = p22 = 0.0
        for q in range(6):
            p00 += joint_N[k, q] * joint_U[k, q]
            if n > 1:
                p01 += joint_N[k, q] * joint_U[k, 6 + q]
                p11 += joint_N[k, 6 + q] * joint_U[k, 6 + q]
            if n > 2:
                p02 += joint_N[k, q] * joint_U[k, 12 + q]
                p12 += joint_N[k, 6 + q] * joint_U[k, 12 + q]
                p22 += joint_N[k, 12 + q] * joint_U[k, 12 + q]
        i00, i01, i02, i11, i12, i22 = _sym_inverse(p00, p01, p02, p11, p12, p22, n)
        store_symmetric(joint_P, k, (i00, i01, i02, i11, i12, i22))
        p = joint_parent[k]
        if p < 0:
            continue
        # A = D_c − U P⁻¹ Uᵀ (the child as its parent feels it through the joint)
        for i in range(6):
            u0 = joint_U[k, i] if n > 0 else 0.0
            u1 = joint_U[k, 6 + i] if n > 1 else 0.0
            u2 = joint_U[k, 12 + i] if n > 2 else 0.0
            w0 = i00 * u0 + i01 * u1 + i02 * u2
            w1 = i01 * u0 + i11 * u1 + i12 * u2
            w2 = i02 * u0 + i12 * u1 + i22 * u2
            for j in range(i + 1):
                s = body_D[c, 6 * i + j]
                if n > 0:
                    s -= joint_U[k, j] * w0
                if n > 1:
                    s -= joint_U[k, 6 + j] * w1
                if n > 2:
                    s -= joint_U[k, 12 + j] * w2
                A[6 * i + j] = s
                A[6 * j + i] = s
        # D_p += Xᵀ A X, X = [[E, B], [0, E]], B y = y × d, Bᵀ y = d × y
        dx, dy, dz = joint_d[k, 0], joint_d[k, 1], joint_d[k, 2]
        for j in range(3):
            # e = e_j × d; column j of T = A11 e + A12 e_j
            if j == 0:
                ex, ey, ez = 0.0, -dz, dy
            elif j == 1:
                ex, ey, ez = dz, 0.0, -dx
            else:
                ex, ey, ez = -dy, dx, 0.0
            t0 = A[0] * ex + A[1] * ey + A[2] * ez + A[3 + j]
            t1 = A[6] * ex + A[7] * ey + A[8] * ez + A[9 + j]
            t2 = A[12] * ex + A[13] * ey + A[14] * ez + A[15 + j]
            body_D[p, j] += A[j]
            body_D[p, 6 + j] += A[6 + j]
            body_D[p, 12 + j] += A[12 + j]
            body_D[p, 3 + j] += t0
            body_D[p, 9 + j] += t1
            body_D[p, 15 + j] += t2
            body_D[p, 6 * (3 + j)] += t0
            body_D[p, 6 * (3 + j) + 1] += t1
            body_D[p, 6 * (3 + j) + 2] += t2
            # bottom right, column j: d × T e_j + A21 e + A22 e_j
            bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
            body_D[p, 21 + j] += bx + A[18] * ex + A[19] * ey + A[20] * ez + A[21 + j]
            body_D[p, 27 + j] += by + A[24] * ex + A[25] * ey + A[26] * ez + A[27 + j]
            body_D[p, 33 + j] += bz + A[30] * ex + A[31] * ey + A[32] * ez + A[33 + j]
    for t in range(roots.shape[0]):
        _mirror_lower(body_D, roots[t])
        for q in range(36):
            root_L[t, q] = body_D[roots[t], q]
        _cholesky(root_L, t, 6)
    if targets:
        articulated_targets(tree, row_J, row_C)


@njit(cache=True, fastmath=_FAST, _nrt=False)
def articulated_targets(tree, row_J, row_C):
    """Right-hand sides J V = −C of the rows in the factor (articulated_factor), per joint
    k: a particular solution s of J_kc s = −C_k, D_c s and Uᵀ s (joint_t). Called by
    articulated_factor with `targets`; called again with another C (a position correction,
    projection.py) it retargets the same factor."""
    order, joint_child, joint_side = tree.order, tree.joint_child, tree.joint_side
    joint_rows, joint_mdir, joint_nldir = tree.joint_rows, tree.joint_mdir, tree.joint_nldir
    body_D, joint_U, joint_Gl, joint_Ga, joint_t = tree.body_D, tree.joint_U, tree.joint_Gl, tree.joint_Ga, tree.joint_t
    for t in range(order.shape[0]):
        k = order[t]
        c = joint_child[k]
        oc = 6 * joint_side[k]
        m = joint_mdir[k]
        nl = joint_nldir[k]
        na = m - nl
        n = 6 - m
        # a particular solution s of J_kc s = −C: ω-part in the span of the angular-only
        # rows (Gram inverse joint_Ga), v-part in the span of the linear parts (joint_Gl)
        t0 = -row_C[joint_rows[k, nl]] if na > 0 else 0.0
        t1 = -row_C[joint_rows[k, nl + 1]] if na > 1 else 0.0
        t2 = -row_C[joint_rows[k, nl + 2]] if na > 2 else 0.0
        sx = sy = sz = 0.0
        for j in range(na):
            aj = joint_Ga[k, 3 * j] * t0 + joint_Ga[k, 3 * j + 1] * t1 + joint_Ga[k, 3 * j + 2] * t2
            r = joint_rows[k, nl + j]
            sx += aj * row_J[r, oc + 3]
            sy += aj * row_J[r, oc + 4]
            sz += aj * row_J[r, oc + 5]
        r = joint_rows[k, 0]
        u0 = -row_C[r] - (row_J[r, oc + 3] * sx + row_J[r, oc + 4] * sy + row_J[r, oc + 5] * sz)
        r = joint_rows[k, 1]
        u1 = -row_C[r] - (row_J[r, oc + 3] * sx + row_J[r, oc + 4] * sy + row_J[r, oc + 5] * sz)
        u2 = 0.0
        if nl == 3:
            r = joint_rows[k, 2]
            u2 = -row_C[r] - (row_J[r, oc + 3] * sx + row_J[r, oc + 4] * sy + row_J[r, oc + 5] * sz)
        vx = vy = vz = 0.0
        for i in range(nl):
            bi = joint_Gl[k, 3 * i] * u0 + joint_Gl[k, 3 * i + 1] * u1 + joint_Gl[k, 3 * i + 2] * u2
            r = joint_rows[k, i]
            vx += bi * row_J[r, oc]
            vy += bi * row_J[r, oc + 1]
            vz += bi * row_J[r, oc + 2]
        joint_t[k, 0], joint_t[k, 1], joint_t[k, 2] = vx, vy, vz
        joint_t[k, 3], joint_t[k, 4], joint_t[k, 5] = sx, sy, sz
        for i in range(6):
            joint_t[k, 6 + i] = _dot6(body_D, c, 6 * i, vx, vy, vz, sx, sy, sz)
        for j in range(3):
            joint_t[k, 12 + j] = _dot6(joint_U, k, 6 * j, vx, vy, vz, sx, sy, sz) if j < n else 0.0


# Compiled twice: with `two` a bool (the velocity solve) and the constant False (the split
# impulses' solve: numba folds the one right-hand side, ~5 % faster on rope_tow). The
# first-launch warm-up compiles both beside the impulse solver (shell/warmup.exercise_tree).
@njit(cache=True, fastmath=_FAST, _nrt=False)
def articulated_solve(tree, joint_body, rate, body_z, vel, omega, two, rate2, body_z2, vel2, omega2):
    """Velocities of the tree's bodies from their momenta, with J V = −rate·C on the
    equality rows (factor of articulated_factor, with `targets` if a rate is not 0).

    body_z: per tree body its momentum (m v, I ω) before the equality impulses (M V⁻ plus
    any other impulse); the forward pass adds the children's share (it is then the z of
    the block comment, as articulated_lambda needs). vel, omega: the tree bodies' rows
    are replaced; static bodies are read (a joint to a moving static body follows it).
    `two`: a second right-hand side (rate2, body_z2 → vel2, omega2) in the same sweeps.
    (The steps are written out in the loops: numba's inlining of a helper was slower.)"""
    order, roots, joint_child, joint_side = tree.order, tree.roots, tree.joint_child, tree.joint_side
    joint_parent, joint_mdir, joint_N, joint_U = tree.joint_parent, tree.joint_mdir, tree.joint_N, tree.joint_U
    joint_P, joint_d, joint_t, joint_nz = tree.joint_P, tree.joint_d, tree.joint_t, tree.joint_nz
    root_L, scratch = tree.root_L, tree.scratch
    n_rhs = 2 if two else 1
    # forward: leaves to roots
    for t in range(order.shape[0]):
        k = order[t]
        c = joint_child[k]
        p = joint_parent[k]
        n = 6 - joint_mdir[k]
        for e in range(n_rhs):
            z = body_z if e == 0 else body_z2
            rt = rate if e == 0 else rate2
            o = 3 * e
            z0, z1, z2 = z[c, 0], z[c, 1], z[c, 2]
            z3, z4, z5 = z[c, 3], z[c, 4], z[c, 5]
            # g = Nᵀ z_c − Uᵀ s (s = rate·s_C); Nᵀ z_c is kept for the backward pass
            g0 = g1 = g2 = 0.0
            if n >= 1:
                g0 = _dot6(joint_N, k, 0, z0, z1, z2, z3, z4, z5)
                joint_nz[k, o] = g0
            if n >= 2:
                g1 = _dot6(joint_N, k, 6, z0, z1, z2, z3, z4, z5)
                joint_nz[k, o + 1] = g1
            if n == 3:
                g2 = _dot6(joint_N, k, 12, z0, z1, z2, z3, z4, z5)
                joint_nz[k, o + 2] = g2
            if p < 0:
                continue
            if rt != 0.0:
                g0 -= rt * joint_t[k, 12]
                g1 -= rt * joint_t[k, 13]
                g2 -= rt * joint_t[k, 14]
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_t, k, 6, -rt, z0, z1, z2, z3, z4, z5)
            # e = z_c − D_c s − U β, β = P⁻¹ g
            if n == 1:
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_U, k, 0, -joint_P[k, 0] * g0, z0, z1, z2, z3, z4, z5)
            elif n == 2:
                b0 = joint_P[k, 0] * g0 + joint_P[k, 1] * g1
                b1 = joint_P[k, 3] * g0 + joint_P[k, 4] * g1
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_U, k, 0, -b0, z0, z1, z2, z3, z4, z5)
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_U, k, 6, -b1, z0, z1, z2, z3, z4, z5)
            elif n == 3:
                b0 = joint_P[k, 0] * g0 + joint_P[k, 1] * g1 + joint_P[k, 2] * g2
                b1 = joint_P[k, 3] * g0 + joint_P[k, 4] * g1 + joint_P[k, 5] * g2
                b2 = joint_P[k, 6] * g0 + joint_P[k, 7] * g1 + joint_P[k, 8] * g2
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_U, k, 0, -b0, z0, z1, z2, z3, z4, z5)
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_U, k, 6, -b1, z0, z1, z2, z3, z4, z5)
                z0, z1, z2, z3, z4, z5 = _axpy6(joint_U, k, 12, -b2, z0, z1, z2, z3, z4, z5)
            # z_p += Xᵀ e = (e_v, e_ω + d × e_v)
            cx, cy, cz = cross(joint_d[k, 0], joint_d[k, 1], joint_d[k, 2], z0, z1, z2)
            z[p, 0] += z0
            z[p, 1] += z1
            z[p, 2] += z2
            z[p, 3] += z3 + cx
            z[p, 4] += z4 + cy
            z[p, 5] += z5 + cz
    # free-floating roots: D V = z
    for t in range(roots.shape[0]):
        _root_velocity(roots[t], t, root_L, body_z, vel, omega, scratch)
        if two:
            _root_velocity(roots[t], t, root_L, body_z2, vel2, omega2, scratch)
    # backward: roots to leaves
    for t in range(order.shape[0] - 1, -1, -1):
        k = order[t]
        c = joint_child[k]
        pb = joint_body[k, 1 - joint_side[k]]
        n = 6 - joint_mdir[k]
        for e in range(n_rhs):
            v = vel if e == 0 else vel2
            w = omega if e == 0 else omega2
            rt = rate if e == 0 else rate2
            o = 3 * e
            # w = X V_p + s, X (v, ω) = (v + ω × d, ω)
            wx, wy, wz = w[pb, 0], w[pb, 1], w[pb, 2]
            px, py, pz = cross(wx, wy, wz, joint_d[k, 0], joint_d[k, 1], joint_d[k, 2])
            w0 = v[pb, 0] + px
            w1 = v[pb, 1] + py
            w2 = v[pb, 2] + pz
            w3 = wx
            w4 = wy
            w5 = wz
            if rt != 0.0:
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_t, k, 0, rt, w0, w1, w2, w3, w4, w5)
            # V_c = w + N P⁻¹ (Nᵀ z_c − Uᵀ w)
            if n == 1:
                q0 = joint_P[k, 0] * (joint_nz[k, o] - _dot6(joint_U, k, 0, w0, w1, w2, w3, w4, w5))
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_N, k, 0, q0, w0, w1, w2, w3, w4, w5)
            elif n == 2:
                h0 = joint_nz[k, o] - _dot6(joint_U, k, 0, w0, w1, w2, w3, w4, w5)
                h1 = joint_nz[k, o + 1] - _dot6(joint_U, k, 6, w0, w1, w2, w3, w4, w5)
                q0 = joint_P[k, 0] * h0 + joint_P[k, 1] * h1
                q1 = joint_P[k, 3] * h0 + joint_P[k, 4] * h1
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_N, k, 0, q0, w0, w1, w2, w3, w4, w5)
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_N, k, 6, q1, w0, w1, w2, w3, w4, w5)
            elif n == 3:
                h0 = joint_nz[k, o] - _dot6(joint_U, k, 0, w0, w1, w2, w3, w4, w5)
                h1 = joint_nz[k, o + 1] - _dot6(joint_U, k, 6, w0, w1, w2, w3, w4, w5)
                h2 = joint_nz[k, o + 2] - _dot6(joint_U, k, 12, w0, w1, w2, w3, w4, w5)
                q0 = joint_P[k, 0] * h0 + joint_P[k, 1] * h1 + joint_P[k, 2] * h2
                q1 = joint_P[k, 3] * h0 + joint_P[k, 4] * h1 + joint_P[k, 5] * h2
                q2 = joint_P[k, 6] * h0 + joint_P[k, 7] * h1 + joint_P[k, 8] * h2
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_N, k, 0, q0, w0, w1, w2, w3, w4, w5)
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_N, k, 6, q1, w0, w1, w2, w3, w4, w5)
                w0, w1, w2, w3, w4, w5 = _axpy6(joint_N, k, 12, q2, w0, w1, w2, w3, w4, w5)
            v[c, 0], v[c, 1], v[c, 2] = w0, w1, w2
            w[c, 0], w[c, 1], w[c, 2] = w3, w4, w5


@njit(cache=True, fastmath=_FAST, inline="always")
def _dot6(A, k, o, x0, x1, x2, x3, x4, x5):
    return (A[k, o] * x0 + A[k, o + 1] * x1 + A[k, o + 2] * x2 + A[k, o + 3] * x3 + A[k, o + 4] * x4
            + A[k, o + 5] * x5)


@njit(cache=True, fastmath=_FAST, inline="always")
def _axpy6(A, k, o, a, x0, x1, x2, x3, x4, x5):
    """x + a·A[k, o:o + 6]."""
    return (x0 + a * A[k, o], x1 + a * A[k, o + 1], x2 + a * A[k, o + 2], x3 + a * A[k, o + 3],
            x4 + a * A[k, o + 4], x5 + a * A[k, o + 5])


@njit(cache=True, fastmath=_FAST)
def _root_velocity(i, t, root_L, body_z, vel, omega, scratch):
    """V = D⁻¹ z at a free-floating root (its Cholesky factor in root_L[t])."""
    for q in range(6):
        scratch[q] = body_z[i, q]
    for a in range(6):
        s = scratch[a]
        for q in range(a):
            s -= root_L[t, 6 * a + q] * scratch[q]
        scratch[a] = s * root_L[t, 7 * a]
    for a in range(5, -1, -1):
        s = scratch[a]
        for q in range(a + 1, 6):
            s -= root_L[t, 6 * q + a] * scratch[q]
        scratch[a] = s * root_L[t, 7 * a]
    vel[i, 0], vel[i, 1], vel[i, 2] = scratch[0], scratch[1], scratch[2]
    omega[i, 0], omega[i, 1], omega[i, 2] = scratch[3], scratch[4], scratch[5]


@njit(cache=True, fastmath=_FAST, _nrt=False)
def articulated_lambda(tree, row_J, body_z, vel, omega, lam):
    """The impulses of the rows solved directly, after articulated_solve, from
    J_kcᵀ λ_k = F = D_c V_c − z_c: the rows with a linear part from F_v, then the
    angular-only rows from what is left of F_ω. Writes lam, returns the largest change
    |λ − old λ|."""
    order, joint_child, joint_side, joint_rows = tree.order, tree.joint_child, tree.joint_side, tree.joint_rows
    joint_mdir, joint_nldir, body_D, joint_Gl = tree.joint_mdir, tree.joint_nldir, tree.body_D, tree.joint_Gl
    joint_Ga = tree.joint_Ga
    worst = 0.0
    for t in range(order.shape[0]):
        k = order[t]
        c = joint_child[k]
        oc = 6 * joint_side[k]
        nl = joint_nldir[k]
        na = joint_mdir[k] - nl
        w0, w1, w2 = vel[c, 0], vel[c, 1], vel[c, 2]
        w3, w4, w5 = omega[c, 0], omega[c, 1], omega[c, 2]
        fx = _dot6(body_D, c, 0, w0, w1, w2, w3, w4, w5) - body_z[c, 0]
        fy = _dot6(body_D, c, 6, w0, w1, w2, w3, w4, w5) - body_z[c, 1]
        fz = _dot6(body_D, c, 12, w0, w1, w2, w3, w4, w5) - body_z[c, 2]
        tx = _dot6(body_D, c, 18, w0, w1, w2, w3, w4, w5) - body_z[c, 3]
        ty = _dot6(body_D, c, 24, w0, w1, w2, w3, w4, w5) - body_z[c, 4]
        tz = _dot6(body_D, c, 30, w0, w1, w2, w3, w4, w5) - body_z[c, 5]
        # rows with a linear part: Σ l_i λ_i = F_v
        ra, rb = joint_rows[k, 0], joint_rows[k, 1]
        u0 = row_J[ra, oc] * fx + row_J[ra, oc + 1] * fy + row_J[ra, oc + 2] * fz
        u1 = row_J[rb, oc] * fx + row_J[rb, oc + 1] * fy + row_J[rb, oc + 2] * fz
        u2 = 0.0
        if nl == 3:
            rc = joint_rows[k, 2]
            u2 = row_J[rc, oc] * fx + row_J[rc, oc + 1] * fy + row_J[rc, oc + 2] * fz
        for i in range(nl):
            r = joint_rows[k, i]
            li = joint_Gl[k, 3 * i] * u0 + joint_Gl[k, 3 * i + 1] * u1 + joint_Gl[k, 3 * i + 2] * u2
            tx -= row_J[r, oc + 3] * li
            ty -= row_J[r, oc + 4] * li
            tz -= row_J[r, oc + 5] * li
            worst = max(worst, abs(li - lam[r]))
            lam[r] = li
        # angular-only rows: Σ g_j λ_j = what is left of F_ω
        if na == 0:
            continue
        ra = joint_rows[k, nl]
        u0 = row_J[ra, oc + 3] * tx + row_J[ra, oc + 4] * ty + row_J[ra, oc + 5] * tz
        u1 = u2 = 0.0
        if na >= 2:
            rb = joint_rows[k, nl + 1]
            u1 = row_J[rb, oc + 3] * tx + row_J[rb, oc + 4] * ty + row_J[rb, oc + 5] * tz
        if na == 3:
            rc = joint_rows[k, nl + 2]
            u2 = row_J[rc, oc + 3] * tx + row_J[rc, oc + 4] * ty + row_J[rc, oc + 5] * tz
        for j in range(na):
            r = joint_rows[k, nl + j]
            lj = joint_Ga[k, 3 * j] * u0 + joint_Ga[k, 3 * j + 1] * u1 + joint_Ga[k, 3 * j + 2] * u2
            worst = max(worst, abs(lj - lam[r]))
            lam[r] = lj
    return worst


@njit(cache=True, inline="always")
def select_rows(tree, joint_type, joint_row_start, row_active, with_limits, row_direct):
    """_select_rows with `with_limits` as a plain bool (one compile, not one per constant)."""
    _select_rows(tree, joint_type, joint_row_start, row_active, bool(with_limits), row_direct)


@njit(cache=True)
def _select_rows(tree, joint_type, joint_row_start, row_active, with_limits, row_direct):
    """The rows each tree joint hands to the direct solve: its equality rows and, with
    `with_limits`, its active limit rows unless row_direct marks them −1 (left to the
    iterations this step); the rows with a linear part first (point or slide rows, a
    slider's stop). row_direct[r] = 1 on every row chosen, 0 on the joint's other limit
    rows (−1 marks are kept). Free rows the caller marked 1 (a joint held by static
    friction: impulse.lock_sticking_friction) join too when no limit row of the joint
    did — the joint is then locked — and are set back to 0 otherwise."""
    order, joint_m, joint_rows, joint_mdir = tree.order, tree.joint_m, tree.joint_rows, tree.joint_mdir
    joint_nldir = tree.joint_nldir
    for t in range(order.shape[0]):
        k = order[t]
        jt = joint_type[k]
        r0 = joint_row_start[k]
        m = joint_m[k]
        nl = 2 if jt == PRISMATIC else 3
        n_lim = N_LIMIT[jt]
        f0 = r0 + m + n_lim                      # the free rows
        nf = N_FREE[jt]
        cnt = 0
        for i in range(nl):
            joint_rows[k, cnt] = r0 + i
            row_direct[r0 + i] = 1
            cnt += 1
        limited = False
        for r in range(r0 + m, r0 + m + n_lim):
            if row_direct[r] != -1:
                row_direct[r] = 1 if (with_limits and row_active[r] != 0) else 0
            limited = limited or row_direct[r] == 1
        stuck = nf > 0 and not limited and row_direct[f0] == 1
        if not stuck:
            for r in range(f0, f0 + nf):
                if row_direct[r] == 1:
                    row_direct[r] = 0
        if jt == PRISMATIC and row_direct[r0 + m] == 1:
            joint_rows[k, cnt] = r0 + m          # the slide stop: a linear row
            cnt += 1
        if jt == PRISMATIC and stuck:
            joint_rows[k, cnt] = f0              # the slide held by friction: a linear row
            cnt += 1
        n_lin = cnt
        for i in range(nl, m):
            joint_rows[k, cnt] = r0 + i
            row_direct[r0 + i] = 1
            cnt += 1
        if jt != PRISMATIC:
            for r in range(r0 + m, r0 + m + n_lim):
                if row_direct[r] == 1:
                    joint_rows[k, cnt] = r
                    cnt += 1
            if stuck:
                for r in range(f0, f0 + nf):
                    joint_rows[k, cnt] = r
                    cnt += 1
        joint_mdir[k] = cnt
        joint_nldir[k] = n_lin


@njit(cache=True, fastmath=_FAST)
def tree_momentum(order, roots, joint_child, body_inv_mass, body_I, vel, omega, body_z):
    """body_z = (m v, I ω) of every dynamic body (I: body_I, 3×3 row-major)."""
    for i in range(body_z.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        m = 1.0 / body_inv_mass[i]
        body_z[i, 0] = m * vel[i, 0]
        body_z[i, 1] = m * vel[i, 1]
        body_z[i, 2] = m * vel[i, 2]
        wx, wy, wz = omega[i, 0], omega[i, 1], omega[i, 2]
        body_z[i, 3] = body_I[i, 0] * wx + body_I[i, 1] * wy + body_I[i, 2] * wz
        body_z[i, 4] = body_I[i, 3] * wx + body_I[i, 4] * wy + body_I[i, 5] * wz
        body_z[i, 5] = body_I[i, 6] * wx + body_I[i, 7] * wy + body_I[i, 8] * wz


# ---------------------------------------------------------------------------- Python entry
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
    articulated_solve(tree, joint_body, -1.0, tree.body_z, vel, omega, False, 0.0, tree.body_z2, vel, omega)
    articulated_lambda(tree, row_J, tree.body_z, vel, omega, lam)
    return lam, np.hstack([vel, omega])


@njit(cache=True, _nrt=False)
def augmented_inertia(h, use_k, tree, joints, rows, bodies):
    """body_I = R diag(I) Rᵀ + h² K̃ (3×3, row-major) for every dynamic body; K from the
    impulses λ (N·s) of the tree joints' point rows: h² K = h Σ (p·r) E − ½ (p rᵀ + r pᵀ), p = λ."""
    body_quat, body_inv_mass, body_inertia = bodies.quat, bodies.inv_mass, bodies.inertia
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_lambda = rows.J, rows.impulse
    order, body_I, body_K = tree.order, tree.body_I, tree.body_K
    n_order = order.shape[0]
    for i in range(body_quat.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        store_symmetric(body_I, i, rotated_diagonal(
            body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
            body_inertia[i, 0], body_inertia[i, 1], body_inertia[i, 2]))
        for q in range(6):
            body_K[i, q] = 0.0
    if not use_k:
        return
    for t in range(n_order):
        k = order[t]
        if joint_type[k] == PRISMATIC:
            continue
        r0 = joint_row_start[k]
        fx, fy, fz = row_lambda[r0], row_lambda[r0 + 1], row_lambda[r0 + 2]
        if fx == 0.0 and fy == 0.0 and fz == 0.0:
            continue
        for side in range(2):
            i = joint_body[k, side]
            if body_inv_mass[i] == 0.0:
                continue
            rx, ry, rz = arm(row_J, r0, 6 * side)
            sx, sy, sz = (fx, fy, fz) if side == 1 else (-fx, -fy, -fz)
            d = sx * rx + sy * ry + sz * rz
            body_K[i, 0] += d - sx * rx
            body_K[i, 1] += d - sy * ry
            body_K[i, 2] += d - sz * rz
            body_K[i, 3] -= 0.5 * (sx * ry + rx * sy)
            body_K[i, 4] -= 0.5 * (sx * rz + rx * sz)
            body_K[i, 5] -= 0.5 * (sy * rz + ry * sz)
    for i in range(body_quat.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        k01, k02, k12 = abs(body_K[i, 3]), abs(body_K[i, 4]), abs(body_K[i, 5])
        body_I[i, 0] += h * (abs(body_K[i, 0]) + k01 + k02)
        body_I[i, 4] += h * (abs(body_K[i, 1]) + k01 + k12)
        body_I[i, 8] += h * (abs(body_K[i, 2]) + k02 + k12)


@njit(cache=True)
def zero_tree(order, roots, joint_child, body_z):
    """body_z = 0 on every body of the tree (its joints' children and its roots)."""
    n_order = order.shape[0]
    for t in range(n_order + roots.shape[0]):
        i = joint_child[order[t]] if t < n_order else roots[t - n_order]
        for q in range(6):
            body_z[i, q] = 0.0
