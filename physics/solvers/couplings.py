"""Coupling rows: one joint's free DOF tied to another's, q_f = m·q_l + o (a URDF <mimic>:
a gripper's fingers and knuckles follow its drive joint). One row over the two joints'
bodies (up to four), solved by sequential impulses with the rows it shares bodies with.

A coupling is two halves in the row format (12 numbers on two bodies, row_ops):
    half 0:  the follower's free row J_f, on the follower's two bodies
    half 1:  −m times the leader's free row J_l, on the leader's two bodies
so that J·V = q̇_f − m q̇_l, and C = q_f − m q_l − o from the joints' readouts. Its
effective mass is 1/(J M⁻¹ Jᵀ) over the distinct bodies: where the joints share a body
(a gripper's base), the halves' cross term counts. The row is an equality: no bound,
and no work done (an ideal constraint, seed 001 eq. 9 with its own Jacobian).

By stage, per substep (after the joints' rows are written at the substep's poses):
write_couplings (the halves and C), then either
  - with sequential impulses: prepare_couplings (M⁻¹Jᵀ and the mass with the bodies'
    inverse inertia), warm_start_couplings (last substep's impulse), sweep_couplings in
    every sweep (velocities, or the split impulses' pseudo-velocities); or
  - with a direct solve of a joint tree (impulse's direct path): the couplings closed
    exactly on each tree solve, by their Schur complement as the projection closes loops
    — coupling_response (on each new factor: the tree's response W to a unit impulse of
    each coupling, the tree rows' impulses L in it, S = J W factored), then
    close_couplings after each solve: S μ = −(J V + rate·C), λ += μ, V += W μ, and the
    tree rows' impulses += L μ, so the solve's velocities and impulses are those of the
    tree and the couplings together; add_coupling_impulses puts the couplings' λ into the
    next solve's momenta (warm start included).
"""
from ..jit import helper

from ..joint_types import N_EQ, N_LIMIT
from .dense import pivoted_cholesky, pivoted_solve
from .tree import articulated_lambda, articulated_solve, zero_tree

# pivots below this fraction of S's largest diagonal: a coupling dependent on the others
RANK_TOL = 1e-10


# ---------------------------------------------------------------------------- the rows
@helper(cache=True, _nrt=False)
def write_couplings(cp, joints, rows):
    """Each coupling's halves from its joints' free rows (as joint_rows.py wrote them at
    the current poses) and its value C = q_f − m q_l − o."""
    joint_type, joint_body, joint_row_start, joint_q = joints.type, joints.body, joints.row_start, joints.q
    row_J = rows.J
    for c in range(cp.joint.shape[0]):
        m = cp.ratio[c]
        for half in range(2):
            j = cp.joint[c, half]
            t = joint_type[j]
            r = joint_row_start[j] + N_EQ[t] + N_LIMIT[t]       # the joint's (one) free row
            s = 1.0 if half == 0 else -m
            cp.body[c, half, 0] = joint_body[j, 0]
            cp.body[c, half, 1] = joint_body[j, 1]
            for i in range(12):
                cp.J[c, half, i] = s * row_J[r, i]
        cp.C[c] = joint_q[cp.joint[c, 0], 0] - m * joint_q[cp.joint[c, 1], 0] - cp.offset[c]


@helper(cache=True, _nrt=False)
def prepare_couplings(cp, body_inv_mass, inv_inertia_world):
    """M⁻¹Jᵀ of each half and the coupling's effective mass 1/(J M⁻¹ Jᵀ), the halves'
    cross term over the bodies they share; inv_inertia_world (n, 9): the inverse inertia
    the solve uses (the bodies' own, or with a direct solve's geometric stiffness)."""
    body, J, minv, mass = cp.body, cp.J, cp.minv, cp.mass
    for c in range(body.shape[0]):
        k = 0.0
        for half in range(2):
            for side in range(2):
                i = body[c, half, side]
                o = 6 * side
                im = body_inv_mass[i]
                jx, jy, jz = J[c, half, o + 3], J[c, half, o + 4], J[c, half, o + 5]
                minv[c, half, o] = im * J[c, half, o]
                minv[c, half, o + 1] = im * J[c, half, o + 1]
                minv[c, half, o + 2] = im * J[c, half, o + 2]
                minv[c, half, o + 3] = (inv_inertia_world[i, 0] * jx + inv_inertia_world[i, 1] * jy
                                        + inv_inertia_world[i, 2] * jz)
                minv[c, half, o + 4] = (inv_inertia_world[i, 3] * jx + inv_inertia_world[i, 4] * jy
                                        + inv_inertia_world[i, 5] * jz)
                minv[c, half, o + 5] = (inv_inertia_world[i, 6] * jx + inv_inertia_world[i, 7] * jy
                                        + inv_inertia_world[i, 8] * jz)
                for q in range(6):
                    k += J[c, half, o + q] * minv[c, half, o + q]
        for s0 in range(2):             # a body in both halves: 2 J₀ M⁻¹ J₁ᵀ on it
            for s1 in range(2):
                if body[c, 0, s0] == body[c, 1, s1]:
                    for q in range(6):
                        k += 2.0 * J[c, 0, 6 * s0 + q] * minv[c, 1, 6 * s1 + q]
        mass[c] = 1.0 / k if k > 1e-300 else 0.0


# ---------------------------------------------------------------------------- one row's velocity and impulse
@helper(cache=True, error_model="numpy", _nrt=False)
def coupling_velocity(cp, c, vel, omega):
    """J·V of coupling c (q̇_f − m q̇_l)."""
    s = 0.0
    for half in range(2):
        for side in range(2):
            i = cp.body[c, half, side]
            o = 6 * side
            for q in range(3):
                s += cp.J[c, half, o + q] * vel[i, q] + cp.J[c, half, o + 3 + q] * omega[i, q]
    return s


@helper(cache=True, _nrt=False)
def apply_coupling(cp, c, dl, vel, omega):
    """V += M⁻¹Jᵀ Δλ of coupling c on its bodies."""
    for half in range(2):
        for side in range(2):
            i = cp.body[c, half, side]
            o = 6 * side
            for q in range(3):
                vel[i, q] += cp.minv[c, half, o + q] * dl
                omega[i, q] += cp.minv[c, half, o + 3 + q] * dl


# ---------------------------------------------------------------------------- warm start and sweeps
@helper(cache=True, _nrt=False)
def warm_start_couplings(warm, cp, vel, omega, apply):
    """Last substep's impulses applied (`apply`; a direct solve adds them to its momenta
    itself: add_coupling_impulses), or zeroed (`warm` False)."""
    for c in range(cp.mass.shape[0]):
        if not warm or cp.mass[c] == 0.0:
            cp.impulse[c] = 0.0
        elif apply and cp.impulse[c] != 0.0:
            apply_coupling(cp, c, cp.impulse[c], vel, omega)


@helper(cache=True, _nrt=False)
def sweep_couplings(cp, rate, lam, vel, omega):
    """One Gauss–Seidel sweep of the couplings: Δλ = −m (J·V + rate·C) (rate: Baumgarte's
    ERP/h on velocities, the split impulses' on pseudo-velocities, 0 for none), unbounded;
    accumulates into lam (the impulses, or the split impulses). Returns the largest |Δλ|."""
    largest = 0.0
    for c in range(cp.mass.shape[0]):
        if cp.mass[c] == 0.0:
            continue
        dl = -cp.mass[c] * (coupling_velocity(cp, c, vel, omega) + rate * cp.C[c])
        lam[c] += dl
        apply_coupling(cp, c, dl, vel, omega)
        largest = max(largest, abs(dl))
    return largest


@helper(cache=True, _nrt=False)
def add_coupling_impulses(cp, lam, body_z):
    """body_z (n, 6) += Jᵀλ of every coupling (a direct solve's momenta, given the
    iterated rows' impulses)."""
    for c in range(cp.mass.shape[0]):
        p = lam[c]
        if p == 0.0:
            continue
        for half in range(2):
            for side in range(2):
                i = cp.body[c, half, side]
                for q in range(6):
                    body_z[i, q] += cp.J[c, half, 6 * side + q] * p


# ---------------------------------------------------------------------------- closed on a joint tree's direct solve
@helper(cache=True, _nrt=False)
def coupling_response(tree, joint_body, row_J, body_inv_mass, cp, lin, ang):
    """On the tree's current factor: W[c] = its velocity response to a unit impulse of
    coupling c (one articulated solve each; the tree's rows held, its soft servos
    yielding), L[c] = the tree rows' impulses in it, S = J W (symmetric positive
    semidefinite) and its pivoted Cholesky factor (rank in order[k]). lin, ang (n, 3):
    scratch."""
    order, roots, joint_child, body_z = tree.order, tree.roots, tree.joint_child, tree.body_z
    W, L, S = cp.W, cp.L, cp.S
    k = cp.mass.shape[0]
    for c in range(k):
        zero_tree(order, roots, joint_child, body_z)
        for half in range(2):
            for side in range(2):
                i = cp.body[c, half, side]
                if body_inv_mass[i] > 0.0:
                    for q in range(6):
                        body_z[i, q] += cp.J[c, half, 6 * side + q]
        lin[:, :] = 0.0
        ang[:, :] = 0.0
        articulated_solve(tree, joint_body, 0.0, body_z, lin, ang, False, 0.0, tree.body_z2, lin, ang, 0.0)
        L[c, :] = 0.0
        articulated_lambda(tree, row_J, body_z, lin, ang, L[c])
        for i in range(lin.shape[0]):
            for q in range(3):
                W[c, i, q] = lin[i, q]
                W[c, i, 3 + q] = ang[i, q]
    for a in range(k):
        for b in range(a + 1):
            s = 0.0
            for half in range(2):
                for side in range(2):
                    i = cp.body[a, half, side]
                    for q in range(6):
                        s += cp.J[a, half, 6 * side + q] * W[b, i, q]
            S[a, b] = s
            S[b, a] = s
    cp.order[k] = pivoted_cholesky(S, k, cp.order, RANK_TOL)


@helper(cache=True, _nrt=False)
def close_couplings(cp, rate, vel, omega, lam, row_lambda, rows_too):
    """After a tree solve (velocities vel, omega; the couplings' impulses lam in its
    momenta): μ = S⁻¹ (−J V − rate·C) on the independent couplings, lam += μ, V += W μ, and
    (rows_too) the tree rows' impulses row_lambda += L μ (coupling_response's)."""
    k = cp.mass.shape[0]
    rhs, mu, scratch = cp.vec[0], cp.vec[1], cp.vec[2]
    for c in range(k):
        rhs[c] = -coupling_velocity(cp, c, vel, omega) - rate * cp.C[c]
    pivoted_solve(cp.S, cp.order, cp.order[k], k, rhs, mu, scratch)
    W, L = cp.W, cp.L
    for c in range(k):
        m = mu[c]
        if m == 0.0:
            continue
        lam[c] += m
        for i in range(vel.shape[0]):
            for q in range(3):
                vel[i, q] += m * W[c, i, q]
                omega[i, q] += m * W[c, i, 3 + q]
        if rows_too:
            for r in range(row_lambda.shape[0]):
                row_lambda[r] += m * L[c, r]
