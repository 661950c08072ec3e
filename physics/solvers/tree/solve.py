"""The articulated solve (velocities from momenta with J V = t on the tree's rows), the
joints' impulses from it, the momenta of a tree, and which rows take part in the solve."""
from ...jit import kernel, helper

from ...joint_types import N_FREE, N_LIMIT, PRISMATIC
from ...quat import cross
from .factor import FAST as _FAST, _axpy6, _dot6

# Compiled twice: with `two` a bool (the velocity solve) and the constant False (the split
# impulses' solve: numba folds the one right-hand side away). The
# first-launch warm-up compiles both beside the impulse solver (tree/warm_up.py).
@kernel(cache=True, fastmath=_FAST, _nrt=False)
def articulated_solve(tree, joint_body, rate, body_z, vel, omega, two, rate2, body_z2, vel2, omega2, motor_bias):
    """Velocities of the tree's bodies from their momenta, with J V = −rate·C on the
    equality rows (factor of articulated_factor, with `targets` if a rate is not 0), and
    J_m V + motor_bias·bias + γλ = 0 on a soft motor solved with its joint (factor.
    _motor_axes; motor_bias 1 in a velocity solve, 0 for pseudo-velocities; its impulse of
    the first right-hand side is kept in joint_soft[k, 11]).

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
    joint_motor, joint_soft = tree.joint_motor, tree.joint_soft
    motors = tree.motors[0] > 0
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
            # g = Nᵀ z_c − a e/γ − Uᵀ s (s = rate·s_C; the middle term: a soft motor's);
            # the first two are kept for the backward pass
            g0 = g1 = g2 = 0.0
            if n >= 1:
                g0 = _dot6(joint_N, k, 0, z0, z1, z2, z3, z4, z5)
            if n >= 2:
                g1 = _dot6(joint_N, k, 6, z0, z1, z2, z3, z4, z5)
            if n == 3:
                g2 = _dot6(joint_N, k, 12, z0, z1, z2, z3, z4, z5)
            if motors and joint_motor[k] >= 0:
                em = joint_soft[k, 6] * _motor_error(joint_soft, joint_t, k, motor_bias if e == 0 else 0.0, rt)
                g0 -= joint_soft[k, 8] * em
                g1 -= joint_soft[k, 9] * em
                g2 -= joint_soft[k, 10] * em
            joint_nz[k, o] = g0
            joint_nz[k, o + 1] = g1
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
            # V_c = w + N P⁻¹ (Nᵀ z_c − a e/γ − Uᵀ w)
            q0 = q1 = q2 = 0.0
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
            if e == 0 and motors and joint_motor[k] >= 0:
                # the soft motor's impulse λ = −(a q̇ + e)/γ
                aq = joint_soft[k, 8] * q0
                if n >= 2:
                    aq += joint_soft[k, 9] * q1
                if n == 3:
                    aq += joint_soft[k, 10] * q2
                joint_soft[k, 11] = -joint_soft[k, 6] * (aq + _motor_error(joint_soft, joint_t, k, motor_bias, rt))
            v[c, 0], v[c, 1], v[c, 2] = w0, w1, w2
            w[c, 0], w[c, 1], w[c, 2] = w3, w4, w5


@helper(cache=True, fastmath=_FAST)
def _motor_error(joint_soft, joint_t, k, motor_bias, rt):
    """e = motor_bias·bias + J_mc s of joint k's soft motor (s = rt·s_C: the rows'
    particular solution, articulated_targets)."""
    e = motor_bias * joint_soft[k, 7]
    if rt != 0.0:
        e += rt * _dot6(joint_t, k, 0, joint_soft[k, 0], joint_soft[k, 1], joint_soft[k, 2], joint_soft[k, 3],
                        joint_soft[k, 4], joint_soft[k, 5])
    return e


@helper(cache=True, fastmath=_FAST)
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


@kernel(cache=True, fastmath=_FAST, _nrt=False)
def articulated_lambda(tree, row_J, body_z, vel, omega, lam):
    """The impulses of the rows solved directly, after articulated_solve, from
    J_kcᵀ λ_k = F = D_c V_c − z_c less a soft motor's J_mcᵀ λ_m (its λ_m written too):
    the rows with a linear part from F_v, then the angular-only rows from what is left of
    F_ω. Writes lam, returns the largest change |λ − old λ|."""
    order, joint_child, joint_side, joint_rows = tree.order, tree.joint_child, tree.joint_side, tree.joint_rows
    joint_mdir, joint_nldir, body_D, joint_Gl = tree.joint_mdir, tree.joint_nldir, tree.body_D, tree.joint_Gl
    joint_Ga, joint_motor, joint_soft = tree.joint_Ga, tree.joint_motor, tree.joint_soft
    motors = tree.motors[0] > 0
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
        rm = joint_motor[k] if motors else -1
        if rm >= 0:
            # F less the soft motor's impulse J_mcᵀ λ_m (articulated_solve)
            lm = joint_soft[k, 11]
            fx -= joint_soft[k, 0] * lm
            fy -= joint_soft[k, 1] * lm
            fz -= joint_soft[k, 2] * lm
            tx -= joint_soft[k, 3] * lm
            ty -= joint_soft[k, 4] * lm
            tz -= joint_soft[k, 5] * lm
            worst = max(worst, abs(lm - lam[rm]))
            lam[rm] = lm
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


@kernel(cache=True)
def select_rows(tree, joint_type, joint_row_start, row_active, with_limits, row_direct):
    """_select_rows with `with_limits` as a plain bool (one compile, not one per constant)."""
    _select_rows(tree, joint_type, joint_row_start, row_active, bool(with_limits), row_direct)


@helper(cache=True)
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


@helper(cache=True, fastmath=_FAST, _nrt=False)
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


@helper(cache=True, _nrt=False)
def zero_tree(order, roots, joint_child, body_z):
    """body_z = 0 on every body of the tree (its joints' children and its roots)."""
    n_order = order.shape[0]
    for t in range(n_order + roots.shape[0]):
        i = joint_child[order[t]] if t < n_order else roots[t - n_order]
        for q in range(6):
            body_z[i, q] = 0.0
