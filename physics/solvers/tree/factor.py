"""The articulated factor (Baraff's elimination through each joint's allowed motions), its
targets, and the geometric stiffness added to the bodies' inertia.

The same elimination, with each joint node eliminated through the null space of its
rows on the child body instead of through S_k. For joint k (child c, parent p) let
    N (6×l)  span the motions of c that its rows allow (J_kc N = 0, l = 6 − m),
    X        the rigid shift with J_kp = −J_kc X:  X (v, ω) = (v + ω × d, ω), d = r_p − r_c
             (r: the lever arms of the joint's anchors; for a slider d = x_c − x_p).
Then J_kcᵀ S_k⁻¹ J_kc = D_c − D_c N (Nᵀ D_c N)⁻¹ Nᵀ D_c, so Baraff's update of the parent
is D_p += Xᵀ (D_c − U P⁻¹ Uᵀ) X with U = D_c N, P = Nᵀ U (l×l): Featherstone's
articulated-body recursion, in maximal coordinates. The pivots on the chain from the
leaves to the root are l×l (1×1 for a hinge) instead of 6×6 and m×m.
The solve works on total velocities: body momenta z = M V⁻ (+ other impulses) in,
velocities with J V = t (t = −rate·C) out. A particular solution J_kc s_k = t_k comes
from the rows' block-triangular shape (articulated_factor, pass 1):
    forward   β_k = P⁻¹ (Nᵀ z_c − Uᵀ s_k),  z_p += Xᵀ (z_c − D_c s_k − U β_k)
    backward  w = X V_p + s_k,  V_c = w + N P⁻¹ (Nᵀ z_c − Uᵀ w)
              J_kcᵀ λ_k = D_c V_c − z_c                  (the impulse of joint k on c)
The rows must have the shapes joint_rows.py writes: first the rows with a linear part
(three point rows along x, y, z; a slider's two slide rows), then angular-only rows.
"""
import math

from ...jit import kernel, helper

from ...joint_types import PRISMATIC
from ...quat import cross, rotated_diagonal, store_symmetric, sym_add_outer
from ..row_ops import FAST, loaded_point_rows, point_arm, point_stiffness, stiffness_bound

_FAST = FAST


@helper(cache=True, fastmath=_FAST)
def _dot6(A, k, o, x0, x1, x2, x3, x4, x5):
    return (A[k, o] * x0 + A[k, o + 1] * x1 + A[k, o + 2] * x2 + A[k, o + 3] * x3 + A[k, o + 4] * x4
            + A[k, o + 5] * x5)


@helper(cache=True, fastmath=_FAST)
def _axpy6(A, k, o, a, x0, x1, x2, x3, x4, x5):
    """x + a·A[k, o:o + 6]."""
    return (x0 + a * A[k, o], x1 + a * A[k, o + 1], x2 + a * A[k, o + 2], x3 + a * A[k, o + 3],
            x4 + a * A[k, o + 4], x5 + a * A[k, o + 5])


@helper(cache=True, fastmath=_FAST, _nrt=False)
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


@helper(cache=True, fastmath=_FAST)
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


@helper(cache=True, fastmath=_FAST)
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


@helper(cache=True, fastmath=_FAST)
def _shift_column(body_D, p, o, x0, x1, x2, y0, y1, y2, z0, z1, z2, s, u):
    """_hinge_factor's column j of T (the bottom left block's transpose of Xᵀ A X):
    T e_j = A11 e + A12 e_j with e = e_j × d = −s e_α + u e_γ, i.e. −s x + u y + z for x, y
    A11's columns α, γ and z A12's column j; added to D_p's lower triangle at o…o+2 (row
    3 + j, columns 0-2) and returned."""
    t0 = -x0 * s + y0 * u + z0
    t1 = -x1 * s + y1 * u + z1
    t2 = -x2 * s + y2 * u + z2
    body_D[p, o] += t0
    body_D[p, o + 1] += t1
    body_D[p, o + 2] += t2
    return t0, t1, t2


@helper(cache=True, fastmath=_FAST)
def _hinge_factor(k, c, p, body_D, joint_N, joint_U, joint_P, joint_d, soft):
    """Pass 2 of articulated_factor at a joint whose child keeps n = 1 free direction (a
    hinge, a slider): U = D_c N, P⁻¹ = 1/(Nᵀ U + soft), A = D_c − U Uᵀ/P (a rank-1
    downdate) and D_p += Xᵀ A X on the lower triangles, written out; D_c's upper triangle is
    mirrored. `soft`: a soft motor's a²/γ (_motor_axes), else 0."""
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
    pp = n0 * u0 + n1 * u1 + n2 * u2 + n3 * u3 + n4 * u4 + n5 * u5 + soft
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
    # column 0: e = (0, −dz, dy)
    t0, t1, t2 = _shift_column(body_D, p, 18, a10, a11, a21, a20, a21, a22, a30, a31, a32, dz, dy)
    bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
    body_D[p, 21] += bx + -a31 * dz + a32 * dy + a33
    body_D[p, 27] += by + -a41 * dz + a42 * dy + a43
    body_D[p, 33] += bz + -a51 * dz + a52 * dy + a53
    # column 1: e = (dz, 0, −dx)
    t0, t1, t2 = _shift_column(body_D, p, 24, a20, a21, a22, a00, a10, a20, a40, a41, a42, dx, dz)
    bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
    body_D[p, 28] += by + a40 * dz - a42 * dx + a44
    body_D[p, 34] += bz + a50 * dz - a52 * dx + a54
    # column 2: e = (−dy, dx, 0)
    t0, t1, t2 = _shift_column(body_D, p, 30, a00, a10, a20, a10, a11, a21, a50, a51, a52, dy, dx)
    bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
    body_D[p, 35] += bz + -a50 * dy + a51 * dx + a55


@helper(cache=True, fastmath=_FAST)
def _axis_cross(j, dx, dy, dz):
    """e_j × d (e_j the j-th world axis) as three scalars."""
    if j == 0:
        return 0.0, -dz, dy
    if j == 1:
        return dz, 0.0, -dx
    return -dy, dx, 0.0


@helper(cache=True, fastmath=_FAST)
def _ball_downdate(k, c, p, body_D, joint_U, i00, i01, i02, i11, i12, i22, dx, dy, dz):
    """Pass 2's D_p += Xᵀ A X at a joint whose child turns freely about the anchor (a ball
    joint's three point rows, n = 3, N = [r × e_j; e_j]). About the anchor A has only its
    linear block, S = D_vv − U_v P⁻¹ U_vᵀ (U_v: U's linear rows; the angular ones are
    what N frees), so D_p += Yᵀ S Y with Y = [E, B], B ω = ω × d the anchor's velocity from
    the parent's, d the anchor from the parent's centre. Lower triangles, written out."""
    ua0, ua1, ua2 = joint_U[k, 0], joint_U[k, 6], joint_U[k, 12]
    ub0, ub1, ub2 = joint_U[k, 1], joint_U[k, 7], joint_U[k, 13]
    uc0, uc1, uc2 = joint_U[k, 2], joint_U[k, 8], joint_U[k, 14]
    wa0, wa1, wa2 = i00 * ua0 + i01 * ua1 + i02 * ua2, i01 * ua0 + i11 * ua1 + i12 * ua2, \
        i02 * ua0 + i12 * ua1 + i22 * ua2
    wb0, wb1, wb2 = i00 * ub0 + i01 * ub1 + i02 * ub2, i01 * ub0 + i11 * ub1 + i12 * ub2, \
        i02 * ub0 + i12 * ub1 + i22 * ub2
    wc0, wc1, wc2 = i00 * uc0 + i01 * uc1 + i02 * uc2, i01 * uc0 + i11 * uc1 + i12 * uc2, \
        i02 * uc0 + i12 * uc1 + i22 * uc2
    s00 = body_D[c, 0] - (ua0 * wa0 + ua1 * wa1 + ua2 * wa2)
    s10 = body_D[c, 6] - (ub0 * wa0 + ub1 * wa1 + ub2 * wa2)
    s11 = body_D[c, 7] - (ub0 * wb0 + ub1 * wb1 + ub2 * wb2)
    s20 = body_D[c, 12] - (uc0 * wa0 + uc1 * wa1 + uc2 * wa2)
    s21 = body_D[c, 13] - (uc0 * wb0 + uc1 * wb1 + uc2 * wb2)
    s22 = body_D[c, 14] - (uc0 * wc0 + uc1 * wc1 + uc2 * wc2)
    body_D[p, 0] += s00
    body_D[p, 6] += s10
    body_D[p, 7] += s11
    body_D[p, 12] += s20
    body_D[p, 13] += s21
    body_D[p, 14] += s22
    for j in range(3):
        # column j of S B is t = S e, e = e_j × d (row 3 + j of the lower left block); column
        # j of Bᵀ S B is d × t
        ex, ey, ez = _axis_cross(j, dx, dy, dz)
        t0 = s00 * ex + s10 * ey + s20 * ez
        t1 = s10 * ex + s11 * ey + s21 * ez
        t2 = s20 * ex + s21 * ey + s22 * ez
        o = 6 * (3 + j)
        body_D[p, o] += t0
        body_D[p, o + 1] += t1
        body_D[p, o + 2] += t2
        bx, by, bz = cross(dx, dy, dz, t0, t1, t2)
        if j == 0:
            body_D[p, 21] += bx
        if j <= 1:
            body_D[p, 27 + j] += by
        body_D[p, 33 + j] += bz



@helper(cache=True, fastmath=_FAST)
def _motor_axes(joint_soft, joint_N, k, n):
    """A soft motor row on joint k (joint_soft, see Tree): its rate over the child's free
    motions, a = J_mc N (n numbers, stored at 8-10), and 1/γ. The row J_m V + bias + γλ = 0
    acts on the free coordinates q̇ (V_c − X V_p = s + N q̇, s the rows' particular
    solution) as λ = −(a q̇ + e)/γ, e = bias + J_mc s: an implicit spring-damper whose
    stiffness joins the pivot, P = Nᵀ D_c N + a aᵀ/γ (and the right-hand side the term
    −a e/γ, articulated_solve)."""
    for j in range(3):
        a = 0.0
        if j < n:
            for i in range(6):
                a += joint_soft[k, i] * joint_N[k, 6 * j + i]
        joint_soft[k, 8 + j] = a
    return joint_soft[k, 6]


@helper(cache=True, fastmath=_FAST)
def _mirror_lower(body_D, c):
    """Copy the lower triangle of the 6×6 body_D[c] onto its upper one."""
    for i in range(1, 6):
        for j in range(i):
            body_D[c, 6 * j + i] = body_D[c, 6 * i + j]


@kernel(cache=True, fastmath=_FAST, _nrt=False)
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
    joint_motor, joint_soft = tree.joint_motor, tree.joint_soft
    motors = tree.motors[0] > 0
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
            rx, ry, rz = point_arm(row_J, r0, side)
            px, py, pz = point_arm(row_J, r0, 1 - side)
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
        mi = _motor_axes(joint_soft, joint_N, k, n) if motors and joint_motor[k] >= 0 else 0.0
        if n == 1:
            _hinge_factor(k, c, joint_parent[k], body_D, joint_N, joint_U, joint_P, joint_d,
                          mi * joint_soft[k, 8] * joint_soft[k, 8] if mi != 0.0 else 0.0)
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
        if mi != 0.0:
            a0, a1, a2 = joint_soft[k, 8], joint_soft[k, 9], joint_soft[k, 10]
            p00 += mi * a0 * a0
            p01 += mi * a0 * a1
            p02 += mi * a0 * a2
            p11 += mi * a1 * a1
            p12 += mi * a1 * a2
            p22 += mi * a2 * a2
        i00, i01, i02, i11, i12, i22 = _sym_inverse(p00, p01, p02, p11, p12, p22, n)
        store_symmetric(joint_P, k, (i00, i01, i02, i11, i12, i22))
        p = joint_parent[k]
        if p < 0:
            continue
        if n == 3 and mi == 0.0 and joint_type[k] != PRISMATIC:
            dx, dy, dz = point_arm(row_J, joint_rows[k, 0], 1 - joint_side[k])
            _ball_downdate(k, c, p, body_D, joint_U, i00, i01, i02, i11, i12, i22, dx, dy, dz)
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
            ex, ey, ez = _axis_cross(j, dx, dy, dz)
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


@helper(cache=True, fastmath=_FAST, _nrt=False)
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


@helper(cache=True, _nrt=False)
def augmented_inertia(h, use_k, tree, joints, rows, bodies):
    """body_I = R diag(I) Rᵀ + h² K̃ (3×3, row-major) for every dynamic body; K from the
    impulses λ (N·s) of the tree joints' point rows: h² K = h Σ geometric_stiffness(λ, r), bounded
    by stiffness_bound once summed."""
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
        r0 = loaded_point_rows(joint_type, joint_row_start, row_lambda, k)
        if r0 < 0:
            continue
        for side in range(2):
            i = joint_body[k, side]
            if body_inv_mass[i] == 0.0:
                continue
            g = point_stiffness(row_J, row_lambda, r0, side)
            for q in range(6):
                body_K[i, q] += g[q]
    for i in range(body_quat.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        b0, b1, b2 = stiffness_bound(body_K[i, 0], body_K[i, 1], body_K[i, 2], body_K[i, 3], body_K[i, 4],
                                     body_K[i, 5])
        body_I[i, 0] += h * b0
        body_I[i, 4] += h * b1
        body_I[i, 8] += h * b2


@helper(cache=True)
def invert_tree_inertia(order, roots, joint_child, body_I, body_inv_inertia_world):
    """body_inv_inertia_world = body_I⁻¹ on the bodies of the tree (symmetric 3×3)."""
    n_order = order.shape[0]
    for t in range(n_order + roots.shape[0]):
        i = joint_child[order[t]] if t < n_order else roots[t - n_order]
        a, b, c = body_I[i, 0], body_I[i, 1], body_I[i, 2]
        d, e, f = body_I[i, 4], body_I[i, 5], body_I[i, 8]
        c00, c01, c02 = d * f - e * e, c * e - b * f, b * e - c * d
        inv = 1.0 / (a * c00 + b * c01 + c * c02)
        body_inv_inertia_world[i, 0] = c00 * inv
        body_inv_inertia_world[i, 1] = c01 * inv
        body_inv_inertia_world[i, 2] = c02 * inv
        body_inv_inertia_world[i, 3] = c01 * inv
        body_inv_inertia_world[i, 4] = (a * f - c * c) * inv
        body_inv_inertia_world[i, 5] = (b * c - a * e) * inv
        body_inv_inertia_world[i, 6] = c02 * inv
        body_inv_inertia_world[i, 7] = (b * c - a * e) * inv
        body_inv_inertia_world[i, 8] = (a * d - b * b) * inv
