"""Velocities of a phase: the free motion V_f = M̂ M V (seed 004 eq. 12-13), the LCP's
right-hand side b = J_U V_f + bias, the impulses Jᵀλ applied (V = M̂ (M V + P) on the
tree, V += M⁻¹ P elsewhere) and stored in the row tables."""
from ...jit import helper

from ...joint_types import N_EQ, N_FREE, N_LIMIT
from ..dense import pivoted_solve
from ..tree import articulated_lambda, articulated_solve, tree_momentum, zero_tree
from ...joint_rows import row_velocity
from .system import add_impulse, add_loop_impulse, inverse_mass_times, loop_velocity


# ---------------------------------------------------------------------------- free motion and right-hand side
@helper(cache=True)
def free_velocity(rate, bodies, joint_body, tree, body_I, lw):
    """The free motion of a phase: (fv, fw) = M̂ M V (+ the tree rows' targets −rate·C):
    the velocities with the tree's joints held and nothing else acting (eq. 12-13). Loop
    rows are added by the phase's right-hand side (G_L)."""
    fv, fw, zc = lw.fv, lw.fw, lw.zc
    fv[:, :] = bodies.vel
    fw[:, :] = bodies.omega
    if tree.order.shape[0] + tree.roots.shape[0] == 0:
        return
    tree_momentum(tree.order, tree.roots, tree.joint_child, bodies.inv_mass, body_I, bodies.vel, bodies.omega, zc)
    articulated_solve(tree, joint_body, rate, zc, fv, fw, False, 0.0, zc, fv, fw, 0.0)


@helper(cache=True)
def phase_rhs(nu, nl, rank, rate, lw):
    """λ_L0 = G_L⁺(−J_L V_f − rate·C_L) (the loops' impulses in the free motion) and the
    LCP's right-hand side b = J_U V_f + bias + B λ_L0."""
    fv, fw, u_J, u_body, u_bias, b, B = lw.fv, lw.fw, lw.u_J, lw.u_body, lw.u_bias, lw.b, lw.B
    l_J, l_body, l_C = lw.l_J, lw.l_body, lw.l_C
    G, l_perm, lam_l, tmp_l, work_l = lw.G, lw.l_perm, lw.lam_l, lw.tmp_l, lw.work_l
    for l in range(nl):
        tmp_l[l] = -loop_velocity(l_J, l_body, l, fv, fw) - rate * l_C[l]
    pivoted_solve(G, l_perm, rank, nl, tmp_l, lam_l, work_l)
    for u in range(nu):
        s = row_velocity(u_J, u, u_body[u, 0], u_body[u, 1], fv, fw) + u_bias[u]
        for l in range(nl):
            s += B[u, l] * lam_l[l]
        b[u] = s


# ---------------------------------------------------------------------------- impulses applied
@helper(cache=True)
def gather_impulses(nu, nl, x, lw):
    """The loops' final impulses λ_L = λ_L0 − W x and P = J_Uᵀ x + J_Lᵀ λ_L (lw.P)."""
    u_J, u_body, W, lam_l, P = lw.u_J, lw.u_body, lw.W, lw.lam_l, lw.P
    l_J, l_body = lw.l_J, lw.l_body
    for u in range(nu):
        if x[u] != 0.0:
            add_impulse(u_J, u, u_body[u, 0], u_body[u, 1], x[u], P)
            for l in range(nl):
                lam_l[l] -= W[u, l] * x[u]
    for l in range(nl):
        if lam_l[l] != 0.0:
            add_loop_impulse(l_J, l_body, l, lam_l[l], P)


@helper(cache=True)
def apply_impulses(rate, two, rate2, bodies, joint_body, tree, body_I, row_J, row_lambda, vel2, omega2, lw):
    """V = M̂ (M V + P) (+ targets −rate·C on the tree rows) on the tree's bodies, V += M⁻¹P
    on the others; the tree rows' impulses (articulated_lambda); P is zeroed. `two`: the
    position pass's first right-hand side in the same sweeps — momenta 0, targets
    −rate2·C — into (vel2, omega2) (zero on bodies of no tree)."""
    vel, omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    P = lw.P
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    body_z, body_z2 = tree.body_z, tree.body_z2
    if order.shape[0] + roots.shape[0] > 0:
        tree_momentum(order, roots, joint_child, body_inv_mass, body_I, vel, omega, body_z)
        n_order = order.shape[0]
        for t in range(n_order + roots.shape[0]):
            i = joint_child[order[t]] if t < n_order else roots[t - n_order]
            for q in range(6):
                body_z[i, q] += P[i, q]
        if two:
            zero_tree(order, roots, joint_child, body_z2)
        articulated_solve(tree, joint_body, rate, body_z, vel, omega, two, rate2, body_z2, vel2, omega2, 0.0)
        articulated_lambda(tree, row_J, body_z, vel, omega, row_lambda)


@helper(cache=True)
def dynamic(body_inv_mass, body_inv_inertia, i):
    return body_inv_mass[i] != 0.0 or body_inv_inertia[i, 0] != 0.0 or body_inv_inertia[i, 1] != 0.0 \
        or body_inv_inertia[i, 2] != 0.0


@helper(cache=True)
def apply_free_bodies(bodies, inv_I, vel, omega, lw):
    """V += M⁻¹ P on the dynamic bodies of no tree; P zeroed everywhere."""
    body_inv_mass, body_inv_inertia = bodies.inv_mass, bodies.inv_inertia
    P, in_tree = lw.P, lw.in_tree
    for i in range(P.shape[0]):
        if in_tree[i] == 0 and dynamic(body_inv_mass, body_inv_inertia, i):
            v0, v1, v2, w0, w1, w2 = inverse_mass_times(i, P[i, 0], P[i, 1], P[i, 2], P[i, 3], P[i, 4], P[i, 5],
                                                        body_inv_mass, inv_I)
            vel[i, 0] += v0
            vel[i, 1] += v1
            vel[i, 2] += v2
            omega[i, 0] += w0
            omega[i, 1] += w1
            omega[i, 2] += w2
        for q in range(6):
            P[i, q] = 0.0


# ---------------------------------------------------------------------------- impulses stored
@helper(cache=True)
def store_impulses(nu, nl, x, extra, rows, crows, lw, couplings):
    """Write the U rows' λ (contact rows: plus their impact impulse `extra`, c_S) and the
    loop rows' into the row tables (a coupling's into `couplings`); the joints' limit and
    free rows not in U get 0."""
    u_tab, u_row, l_row, lam_l = lw.u_tab, lw.u_row, lw.l_row, lw.lam_l
    row_lambda, c_lambda = rows.impulse, crows.impulse
    for r in range(c_lambda.shape[0]):
        c_lambda[r] = 0.0
    for u in range(nu):
        r = u_row[u]
        if u_tab[u] == 0:
            row_lambda[r] = x[u]
        else:
            c_lambda[r] = x[u] + extra[r]
    for l in range(nl):
        if l_row[l] >= 0:
            row_lambda[l_row[l]] = lam_l[l]
        elif couplings is not None:
            couplings.impulse[-1 - l_row[l]] = lam_l[l]


@helper(cache=True)
def clear_joint_drive_impulses(joints, rows):
    """λ = 0 on every joint's limit and free rows (the step writes the ones in use)."""
    joint_type, joint_row_start = joints.type, joints.row_start
    row_lambda = rows.impulse
    for k in range(joint_type.shape[0]):
        t = joint_type[k]
        start = joint_row_start[k] + N_EQ[t]
        for r in range(start, start + N_LIMIT[t] + N_FREE[t]):
            row_lambda[r] = 0.0
