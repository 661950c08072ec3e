"""Projection onto the joint manifold (seed 004, eqs. 15-18), on the O(N) tree factor.

After a step the positions q̃ miss the manifold g_E(q) = 0 of the joints' equality rows
by the drift of the linear position update. The least change in the mass metric,

    min ‖q − q̃‖_M   subject to   g_E(q) = 0,

is found by Newton steps on its optimality conditions (eq. 15-16, seed 004, with the
right-hand side −g_E of the errata in the seeds' README):

    [ M   Φᵀ ] [ Δq ]   [  0   ]
    [ Φ   0  ] [ η  ] = [ −g_E ]       ⇔   Δq = −M⁻¹Φᵀη,  Φ M⁻¹ Φᵀ η = g_E,

Φ = ∂g_E/∂q = J (the rows' Jacobian, joint_rows.py; q's rotational part a rotation
vector in world axes), up to `iterations` of them, stopping once every |g_E| ≤ 1e-12;
then the velocities the same way onto ġ_E = J V = 0 (eq. 17-18, right-hand side −ġ_E):

    V ← V − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁻¹ J V,

an M-orthogonal projection, so the kinetic energy ½VᵀMV does not rise in it. A position
step turns each body by Δθ; its angular velocity turns with it (ω_body kept), so the
kinetic energy is the same before and after the position step, and the projection as a
whole never raises it.

The saddle-point system is the one the impulse solver's direct path solves for
velocities, on the same factor (tree.articulated_factor over the spanning tree's
equality rows, with the bodies' own inertia): articulated_targets sets J Δq = −g_E and
articulated_solve from zero momenta gives Δq = M⁻¹Jᵀλ; from the momenta M V it gives the
projected V. Joints that close loops (not in the spanning tree) enter by their Schur
complement: W = the tree's response to a unit impulse along each loop row (one tree
solve per row, J_T W = 0), S = J_L W; the loop impulses μ solve S μ = r (r: what the tree
solution leaves of the loop rows' targets) and Δq += W μ. The sum is M⁻¹Jᵀ of one
multiplier vector over all rows, so it is still the least change. Dependent loop rows (a
3-D four-bar of parallel revolutes: 20 rows of rank 17) make S singular: its pivoted
Cholesky (dense.pivoted_cholesky) stops at the rank and the dropped rows get μ = 0,
which solves the consistent system exactly.

`project_step` is what a solver's kernel calls at the end of a step (lcp's `projection`,
impulse's and penalty's `post_projection` setting); `project(world, iterations)` the
Python entry on a world's current state.
"""
from collections import namedtuple
import math
import weakref

import numpy as np
from ..jit import kernel, helper

from ..joint_rows import MOTOR_OFF, compute_joint_rates, compute_joint_rows, row_velocity
from ..joint_types import N_EQ, N_FREE
from ..quat import integrate_quat, rotate, rotate_inv, rotated_diagonal, store_symmetric
from ..settings import Setting
from .dense import pivoted_cholesky, pivoted_solve
from .row_ops import copy2d
from .tree import (articulated_factor, articulated_solve, articulated_targets, augmented_inertia,
                         build_tree_plan, make_tree, select_rows, static_bodies, tree_momentum, zero_tree)

PROJECTION_ITERATIONS = Setting("projection_iterations", "int", 4, 1, 10, label="projection iter.",
                                help="Newton iterations of the position projection (at most: it stops once "
                                     "the joints hold).")
"""The projection's setting, in every family that projects. Most steps need one or two
iterations (project_positions stops at TOLERANCE, after two at SETTLED); a long chain's whip
needs more."""

# Newton iterations stop once every |g_E| is below this (m or rad): round-off of the
# poses of a body a few metres from the origin.
TOLERANCE = 1e-12
# A third Newton step and later ones are taken only while some |g_E| is above this (m or
# rad): two steps take a step's drift close to TOLERANCE, where a third would cost a
# step's worth of rows and solve for a gap nothing can see; a long chain's whip leaves far
# more after two, and the later steps are there for it.
SETTLED = 1e-10
# A factor stays in use (a chord step: the Jacobian it was made with, J0) while the
# Newton steps since it turned every body by less than this in all (rad; m count the
# same): the rows' directions are then off by ~that angle, and a chord step contracts the
# error by about as much — from a step's drift (~1e-7 m, a Newton step's remainder ~1e-11)
# to round-off in one step, at a fifth of a fresh factor's cost.
CHORD_STEP = 1e-3
# The impulse step's drift projection (project_positions_step) stops once every |g_E| is
# below this share of its threshold: its Newton steps are there to keep the joints' gap
# under the threshold, and one step takes a whip's drift (~1e-3 m) to ~1e-6 m, where a
# second, fresh factor (a third of a step's time) would buy nothing the next step's
# stabilization does not.
DRIFT_REMAINDER = 0.01
# a loop row whose Cholesky pivot is below this share of the largest is dependent on the
# rows before it (the lcp solver's LOOP_RANK_TOL: the four-bar's rank 17 of 20)
LOOP_RANK_TOL = 1e-10

Projection = namedtuple("Projection", "tree loop_rows loop_W loop_G loop_perm loop_r loop_mu loop_work dq_lin dq_ang "
                                       "J0 rank fresh pose0 grounded energy row_work")
"""The projection's arrays for one joint graph: tree (tree.Tree) its own factor of the
spanning tree's equality rows; loop_rows (nL,) the equality rows of the joints closing
loops; loop_W (nL, nb, 6) the tree's response (v, ω) to a unit impulse along each loop row;
loop_G (nL, nL) S = J_L W, then its pivoted Cholesky factor; loop_perm (nL,) its order;
loop_r, loop_mu, loop_work (nL,) right-hand side, multipliers, scratch; dq_lin, dq_ang
(nb, 3) a displacement (m, rad) or a velocity; J0 (rows, 12) the rows' Jacobian at a step's
start or of the factor's poses, rank (1,) the loop rows' rank there, fresh (1,) 1 while the
factor is that of the current poses (the impulse step's SHAKE correction); pose0 (nb, 10)
the poses (x, quaternion) and ω before a Newton step, restored when it made the error worse;
grounded (nb,) k ≥ 1 for a dynamic body of the k-th group of bodies joined to each other
and (through joints) to a static one, else 0 (the impulse step's energy projection acts on
each such group alone); energy (groups, 9) per group the step's E_n, the work of the loads
and of the joints' friction and damping, that work in the step's last half-substep, two
scratch numbers, 1 while no contact touched the group in the step, the energy still owed
to it (J), its energy after the last step and the part of its energy linear in the
velocities (group_energies; impulse_kernel: energy_projection); row_work (2, rows): the friction
rows' speeds at a substep's start (friction_rates), the joints' dampers' impulses in the
substep (damping.damp_joints). (Every field more in this bundle slows the impulse step.)"""

N_ENERGY = 9        # the columns of Projection.energy
E_OWED, E_AFTER = 6, 7

Violation = namedtuple("Violation", "position_before position_after velocity_before velocity_after")
"""What `project` did: the largest |g_E| of the joints' equality rows before and after the
position projection (m or rad) and the largest |ġ_E| = |J·V| before and after the velocity
projection (m/s or rad/s)."""


def make_projection(world):
    """A Projection bundle for the world's joint graph and row layout."""
    m = world.model
    jt = np.ascontiguousarray(m.joints.type, np.int64)
    start = np.ascontiguousarray(m.joints.row_start, np.int64)
    static = static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia)
    plan = build_tree_plan(m.joints.body, jt, static)
    n_rows, nb = m.rows.count, m.bodies.count
    tree = make_tree(plan, n_rows)
    select_rows(tree, jt, start, np.zeros(n_rows, np.int64), False, tree.row_direct)
    loop_rows = np.array([start[j] + i for j in plan.loop_joints for i in range(int(N_EQ[jt[j]]))], np.int64)
    nl = len(loop_rows)
    L = max(nl, 1)
    coupled = m.joints.body[m.couplings.joint].reshape(-1, 4)        # the four bodies of each coupling
    grounded = grounded_bodies(m.joints.body, static, coupled)
    return Projection(tree, loop_rows, np.zeros((nl, nb, 6)), np.zeros((L, L)), np.zeros(L, np.int64), np.zeros(L),
                      np.zeros(L), np.zeros(L), np.zeros((nb, 3)), np.zeros((nb, 3)), np.zeros((max(n_rows, 1), 12)),
                      np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros((nb, 10)),
                      grounded, np.zeros((max(int(grounded.max(initial=0)), 1), N_ENERGY)),
                      np.zeros((2, max(n_rows, 1))))


def grounded_bodies(joint_body, static, coupled=()):
    """(nb,) int64: k ≥ 1 for a dynamic body of the k-th group of dynamic bodies joined to
    each other that some joint ties to a static body (their momentum is not conserved: the
    energy projection may scale their velocities, group by group, so that no energy passes
    from one group to another), else 0. `coupled`: rows of bodies a coupling between joints
    ties together (energy passes through it: one group)."""
    nb = len(static)
    parent = list(range(nb))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    pairs = np.asarray(joint_body, np.int64).reshape(-1, 2)
    for a, b in pairs:
        if not static[a] and not static[b]:
            parent[find(int(a))] = find(int(b))
    for tied_bodies in coupled:
        moving = [int(i) for i in tied_bodies if not static[i]]
        for i in moving[1:]:
            parent[find(i)] = find(moving[0])
    tied = {find(int(b if static[a] else a)) for a, b in pairs if static[a] != static[b]}
    label = {root: k + 1 for k, root in enumerate(sorted(tied))}
    return np.array([0 if static[i] else label.get(find(i), 0) for i in range(nb)], np.int64)


# ---------------------------------------------------------------------------- kernels
@helper(cache=True, _nrt=False)
def plain_inertia(body_quat, body_inv_mass, body_inertia, body_I):
    """body_I = R diag(I) Rᵀ (3×3 row-major) of every dynamic body."""
    for i in range(body_quat.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        store_symmetric(body_I, i, rotated_diagonal(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                                    body_inertia[i, 0], body_inertia[i, 1], body_inertia[i, 2]))


@helper(cache=True, _nrt=False)
def loop_response(tree, joint_body, row_J, row_body, body_inv_mass, loop_rows, W, G, perm, lin, ang):
    """W[j] = the tree's velocity response (its rows held) to a unit impulse along loop
    row j, one tree solve each on the current factor of `tree`; G = S = J_L W (symmetric
    positive semidefinite), then its pivoted Cholesky factor. Returns its rank.
    lin, ang: scratch (nb, 3)."""
    nl = loop_rows.shape[0]
    if nl == 0:
        return 0
    order, roots, joint_child, body_z = tree.order, tree.roots, tree.joint_child, tree.body_z
    for j in range(nl):
        r = loop_rows[j]
        zero_tree(order, roots, joint_child, body_z)
        for side in range(2):
            i = row_body[r, side]
            if body_inv_mass[i] > 0.0:
                for q in range(6):
                    body_z[i, q] += row_J[r, 6 * side + q]
        lin[:, :] = 0.0
        ang[:, :] = 0.0
        articulated_solve(tree, joint_body, 0.0, body_z, lin, ang, False, 0.0, tree.body_z2, lin, ang, 0.0)
        for i in range(lin.shape[0]):
            for q in range(3):
                W[j, i, q] = lin[i, q]
                W[j, i, 3 + q] = ang[i, q]
    for i in range(nl):
        r = loop_rows[i]
        a = row_body[r, 0]
        b = row_body[r, 1]
        for j in range(i + 1):
            s = 0.0
            for q in range(6):
                s += row_J[r, q] * W[j, a, q] + row_J[r, 6 + q] * W[j, b, q]
            G[i, j] = s
            G[j, i] = s
    return pivoted_cholesky(G, nl, perm, LOOP_RANK_TOL)


@helper(cache=True, _nrt=False)
def close_loops(proj, rank, row_J, row_body, row_C, rate, lin, ang):
    """Add the loop rows' impulses to a tree solution (lin, ang): μ solves S μ = −rate·C_L −
    J_L (lin, ang) on the independent loop rows, then (lin, ang) += W μ (rate 1: a
    displacement with J_L Δq = −C_L; rate 0: a velocity with J_L V = 0)."""
    loop_rows, W, r, mu = proj.loop_rows, proj.loop_W, proj.loop_r, proj.loop_mu
    nl = loop_rows.shape[0]
    if nl == 0:
        return
    for i in range(nl):
        q = loop_rows[i]
        r[i] = -rate * row_C[q] - row_velocity(row_J, q, row_body[q, 0], row_body[q, 1], lin, ang)
    pivoted_solve(proj.loop_G, proj.loop_perm, rank, nl, r, mu, proj.loop_work)
    for j in range(nl):
        m = mu[j]
        if m == 0.0:
            continue
        for i in range(lin.shape[0]):
            for q in range(3):
                lin[i, q] += m * W[j, i, q]
                ang[i, q] += m * W[j, i, 3 + q]


@helper(cache=True, _nrt=False)
def projection_factor(proj, bodies, joints, rows, h):
    """Factor the spanning tree's equality rows at the current poses with the bodies' own
    inertia (h = 0) or the impulse step's, M + h²K̃ with the geometric stiffness of the
    joints' impulses in rows.impulse (h > 0: the substep; tree.augmented_inertia),
    and the loop rows' Schur complement on it; returns the loop rows' rank."""
    tree = proj.tree
    if h > 0.0:
        augmented_inertia(h, True, tree, joints, rows, bodies)
    else:
        plain_inertia(bodies.quat, bodies.inv_mass, bodies.inertia, tree.body_I)
    articulated_factor(tree, joints.type, joints.body, rows.J, rows.C, bodies.pos, bodies.inv_mass, tree.body_I,
                       False, False)
    return loop_response(tree, joints.body, rows.J, rows.body, bodies.inv_mass, proj.loop_rows, proj.loop_W,
                         proj.loop_G, proj.loop_perm, proj.dq_lin, proj.dq_ang)


@helper(cache=True, _nrt=False)
def chord_factor(proj, bodies, joints, rows, h):
    """projection_factor at the current poses, its rank in proj.rank. The Jacobian it was
    made with is rows.J until the poses move; project_positions keeps it in proj.J0 when a
    chord step will need it after that."""
    proj.rank[0] = projection_factor(proj, bodies, joints, rows, h)


@helper(cache=True, _nrt=False)
def largest_step(body_inv_mass, lin, ang):
    """The largest |Δx| or |Δθ| component of a displacement over the dynamic bodies."""
    big = 0.0
    for i in range(lin.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        for q in range(3):
            big = max(big, abs(lin[i, q]), abs(ang[i, q]))
    return big


@helper(cache=True, _nrt=False)
def keep_poses(bodies, pose, restore):
    """pose[i] = (x, quaternion, ω) of every body (restore: the bodies get them back)."""
    body_pos, body_quat, body_omega = bodies.pos, bodies.quat, bodies.omega
    for i in range(body_pos.shape[0]):
        for q in range(3):
            if restore:
                body_pos[i, q] = pose[i, q]
                body_omega[i, q] = pose[i, 7 + q]
            else:
                pose[i, q] = body_pos[i, q]
                pose[i, 7 + q] = body_omega[i, q]
        for q in range(4):
            if restore:
                body_quat[i, q] = pose[i, 3 + q]
            else:
                pose[i, 3 + q] = body_quat[i, q]


@helper(cache=True, _nrt=False)
def chord_step(proj, J0, joints, rows, lin, ang):
    """(lin, ang) = Δq of one Newton step J0 Δq = −g_E on proj's factor and the Jacobian J0
    it was made with (Δq = M⁻¹J0ᵀη; loop rows by their Schur complement)."""
    tree = proj.tree
    articulated_targets(tree, J0, rows.C)
    zero_tree(tree.order, tree.roots, tree.joint_child, tree.body_z)
    lin[:, :] = 0.0
    ang[:, :] = 0.0
    articulated_solve(tree, joints.body, 1.0, tree.body_z, lin, ang, False, 0.0, tree.body_z2, lin, ang, 0.0)
    close_loops(proj, proj.rank[0], J0, rows.body, rows.C, 1.0, lin, ang)


@helper(cache=True, _nrt=False)
def apply_displacement(bodies, lin, ang, kick):
    """q += Δq on every dynamic body: x += Δx, the orientation turned by Δθ (world axes).
    kick = 0: ω turned with the body (its body-frame components kept, so ½ωᵀIω is
    unchanged); kick > 0: V += kick·Δq instead (the SHAKE correction as an impulse)."""
    body_pos, body_quat, body_vel, body_omega = bodies.pos, bodies.quat, bodies.vel, bodies.omega
    body_inv_mass = bodies.inv_mass
    for i in range(body_pos.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        for q in range(3):
            body_pos[i, q] += lin[i, q]
        qx, qy, qz, qw = body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3]
        bx, by, bz = rotate_inv(qx, qy, qz, qw, body_omega[i, 0], body_omega[i, 1], body_omega[i, 2])
        qx, qy, qz, qw = integrate_quat(qx, qy, qz, qw, ang[i, 0], ang[i, 1], ang[i, 2], 1.0)
        body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3] = qx, qy, qz, qw
        if kick > 0.0:
            for q in range(3):
                body_vel[i, q] += kick * lin[i, q]
                body_omega[i, q] += kick * ang[i, q]
        else:
            body_omega[i, 0], body_omega[i, 1], body_omega[i, 2] = rotate(qx, qy, qz, qw, bx, by, bz)


@helper(cache=True)
def apply_velocity(bodies, lin, ang, scale):
    """V += scale·(lin, ang) on every dynamic body."""
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    for i in range(body_vel.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        for q in range(3):
            body_vel[i, q] += scale * lin[i, q]
            body_omega[i, q] += scale * ang[i, q]


@helper(cache=True, _nrt=False)
def equality_errors(bodies, joints, rows):
    """(largest |C|, largest |J·V|) over the equality rows of every joint between bodies
    that are not both static (m or rad; m/s or rad/s)."""
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_C = rows.J, rows.C
    worst_c = 0.0
    worst_v = 0.0
    for k in range(joint_type.shape[0]):
        a = joint_body[k, 0]
        b = joint_body[k, 1]
        if body_inv_mass[a] == 0.0 and body_inv_mass[b] == 0.0:
            continue
        r0 = joint_row_start[k]
        for r in range(r0, r0 + N_EQ[joint_type[k]]):
            worst_c = max(worst_c, abs(row_C[r]))
            worst_v = max(worst_v, abs(row_velocity(row_J, r, a, b, body_vel, body_omega)))
    return worst_c, worst_v


@helper(cache=True, _nrt=False)
def position_errors(bodies, joints, rows):
    """The first of equality_errors alone: the largest |C| (m or rad)."""
    body_inv_mass = bodies.inv_mass
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_C = rows.C
    worst_c = 0.0
    for k in range(joint_type.shape[0]):
        if body_inv_mass[joint_body[k, 0]] == 0.0 and body_inv_mass[joint_body[k, 1]] == 0.0:
            continue
        r0 = joint_row_start[k]
        for r in range(r0, r0 + N_EQ[joint_type[k]]):
            worst_c = max(worst_c, abs(row_C[r]))
    return worst_c


@helper(cache=True, _nrt=False)
def project_positions(iterations, tol, bodies, joints, rows, proj, h):
    """Seed 004's position projection (eq. 15-16): up to `iterations` Newton steps J Δq = −g_E
    with Δq = M⁻¹Jᵀη, q += Δq, rows rewritten; stops once every |g_E| ≤ tol (after two
    steps, ≤ SETTLED). M: the bodies'
    own (h = 0) or the impulse step's metric (h > 0, projection_factor). Each step is
    on a fresh factor at the current poses, except after steps that moved less than
    CHORD_STEP in all since the factor was made: a chord step on that factor (J0). If the
    last step leaves the largest |g_E| above the smallest seen (a drift beyond Newton's
    reach: bodies turned by ≳ 0.1 rad per step), the poses with the smallest are restored.
    Returns the largest |g_E| after."""
    lin, ang = proj.dq_lin, proj.dq_ang
    err = position_errors(bodies, joints, rows)
    since = -1.0
    best = err
    for it in range(iterations):
        if err <= tol or (it >= 2 and err <= SETTLED):
            break
        fresh = since < 0.0 or since > CHORD_STEP
        if fresh:
            chord_factor(proj, bodies, joints, rows, h)
            since = 0.0
        chord_step(proj, rows.J if fresh else proj.J0, joints, rows, lin, ang)
        if it == 0 or err < best:
            best = err
            # bool(…): typed flags, not literals (each literal would compile the callee again)
            keep_poses(bodies, proj.pose0, bool(False))
        apply_displacement(bodies, lin, ang, 0.0)
        since += largest_step(bodies.inv_mass, lin, ang)
        if fresh and since <= CHORD_STEP and it + 1 < iterations:
            copy2d(proj.J0, rows.J)  # the next step is a chord step on this factor
        compute_joint_rows(bodies, joints, rows, bool(False))
        err = position_errors(bodies, joints, rows)
    if err > best:
        keep_poses(bodies, proj.pose0, bool(True))
        compute_joint_rows(bodies, joints, rows, bool(False))
        err = best
    return err


@helper(cache=True)
def project_velocities(bodies, joints, rows, proj):
    """Seed 004's velocity projection (eq. 17-18): V ← V − M⁻¹Jᵀ(J M⁻¹ Jᵀ)⁻¹ J V on the
    equality rows at the current poses (a fresh factor; a chord step on the position
    step's factor contracts by only ~1e-3 on a long chain), so J V = 0; M-orthogonal, the
    kinetic energy does not rise. Returns the largest |J·V| after."""
    tree = proj.tree
    proj.rank[0] = projection_factor(proj, bodies, joints, rows, 0.0)
    tree_momentum(tree.order, tree.roots, tree.joint_child, bodies.inv_mass, tree.body_I, bodies.vel, bodies.omega,
                  tree.body_z)
    articulated_solve(tree, joints.body, 0.0, tree.body_z, bodies.vel, bodies.omega, False, 0.0, tree.body_z2,
                      bodies.vel, bodies.omega, 0.0)
    close_loops(proj, proj.rank[0], rows.J, rows.body, rows.C, 0.0, bodies.vel, bodies.omega)
    _, after = equality_errors(bodies, joints, rows)
    return after


@helper(cache=True)
def project_step(iterations, bodies, joints, rows, proj, out, readout):
    """One step's projection, called by a solver's kernel after the step's position update
    (rows at the new poses): positions onto g_E = 0 (≤ `iterations` Newton steps), then
    velocities onto ġ_E = 0 (proj's factor is then that of the final poses); the rows hold
    the final poses, with the readouts when `readout`. out: (4,) the Violation numbers."""
    out[0], out[2] = equality_errors(bodies, joints, rows)
    out[1] = project_positions(iterations, TOLERANCE, bodies, joints, rows, proj, 0.0)
    out[3] = project_velocities(bodies, joints, rows, proj)
    if readout:
        compute_joint_rows(bodies, joints, rows, bool(True))


@helper(cache=True, _nrt=False)
def project_positions_step(h, iterations, above, bodies, joints, rows, proj, out):
    """The impulse solver's post-stabilization after a step of substep h, when some |g_E|
    exceeds `above` (m or rad): positions onto g_E = 0 (≤ `iterations` Newton steps) in
    the step's own metric M + h²K̃ (with the
    geometric stiffness of the step's joint impulses), velocities left to the next step's
    solve, which is itself the projection onto J V = 0 in that metric. (The velocity
    projection in the plain M before it would undo the step's geometric stiffness: a
    30-link hinge chain whipping at Δt = 10 ms blows up with it.) out: (4,) the Violation
    numbers before and after (the rate after: projection_readout). The same code runs at
    every step, the kernel's last included: a run's bits do not depend on how it is cut
    into calls."""
    out[0] = position_errors(bodies, joints, rows)
    out[1] = out[0]
    out[2] = -1.0                   # the rate before: taken where the step projects, else the rate after
    if out[0] > above:
        _, out[2] = equality_errors(bodies, joints, rows)
        out[1] = project_positions(iterations, max(TOLERANCE, DRIFT_REMAINDER * above), bodies, joints, rows, proj, h)


@helper(cache=True)
def projection_readout(bodies, joints, rows, out):
    """After a kernel's last step: |J·V| at the final poses (out[3]; out[2] too when that
    step did not project: same poses, same velocities) and the rows with the readouts (the
    swing and twist angles)."""
    _, out[3] = equality_errors(bodies, joints, rows)
    if out[2] < 0.0:
        out[2] = out[3]
    compute_joint_rows(bodies, joints, rows, bool(True))


@kernel(cache=True)
def project_kernel(iterations, bodies, joints, rows, proj, out):
    """project_step on the current state, then the rows, readouts and joint rates there."""
    project_step(iterations, bodies, joints, rows, proj, out, True)
    compute_joint_rates(bodies, joints, rows)


# ---------------------------------------------------------------------------- Python entry
_BUNDLES = weakref.WeakKeyDictionary()     # world → (model version, Projection)


def projection_for(world):
    """The world's Projection bundle, rebuilt when its layout changed."""
    version = world.model.version
    cached = _BUNDLES.get(world)
    if cached is None or cached[0] != version:
        cached = (version, make_projection(world))
        _BUNDLES[world] = cached
    return cached[1]


def project(world, iterations=2):
    """Seed 004's projection of the world's current state (eqs. 15-18): positions onto the
    joints' manifold g_E(q) = 0 by up to `iterations` mass-weighted least-change Newton
    steps, then velocities onto ġ_E = 0. Returns a Violation (before / after)."""
    world._ensure_rows()
    proj = projection_for(world)
    _, bodies, _, joints, _, rows, _ = world.kernel_bundles(world.active_solver.free_rows_used(world))
    out = np.zeros(4)
    project_kernel(int(iterations), bodies, joints, rows, proj, out)
    return Violation(*(float(v) for v in out))


# ---------------------------------------------------------------------------- energy projection (impulse step)
@helper(cache=True)
def group_energies(bodies, gravity, h, grounded, energy, col):
    """energy[k−1, col] = the energy (J) of the grounded group k's bodies that the step
    keeps: kinetic + gravitational potential taken at x − ½hv (h the substep), the first
    order of semi-implicit Euler's modified energy (its positions lead its velocities by
    half a substep: under gravity alone it keeps K + U(x − ½hv) exactly, while K + U(x)
    falls by ½m(gh)² a substep); energy[k−1, 4] its potential at x, energy[k−1, 8] the
    part ½h·m g·v, linear in the velocities."""
    body_pos, body_quat, body_vel, body_omega = bodies.pos, bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inertia = bodies.inv_mass, bodies.inertia
    for k in range(energy.shape[0]):
        energy[k, col] = 0.0
        energy[k, 4] = 0.0
        energy[k, 8] = 0.0
    for i in range(body_pos.shape[0]):
        g = grounded[i] - 1
        if g < 0:
            continue
        m = 1.0 / body_inv_mass[i]
        bx, by, bz = rotate_inv(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                body_omega[i, 0], body_omega[i, 1], body_omega[i, 2])
        kinetic = 0.5 * m * (body_vel[i, 0] ** 2 + body_vel[i, 1] ** 2 + body_vel[i, 2] ** 2)
        kinetic += 0.5 * (body_inertia[i, 0] * bx * bx + body_inertia[i, 1] * by * by + body_inertia[i, 2] * bz * bz)
        potential = -m * (body_pos[i, 0] * gravity[0] + body_pos[i, 1] * gravity[1] + body_pos[i, 2] * gravity[2])
        lead = 0.5 * h * m * (body_vel[i, 0] * gravity[0] + body_vel[i, 1] * gravity[1] + body_vel[i, 2] * gravity[2])
        energy[g, col] += kinetic + potential + lead
        energy[g, 4] += potential
        energy[g, 8] += lead


@helper(cache=True, _nrt=False)
def add_load_work(bodies, force, torque, grounded, energy, col, dt):
    """energy[k−1, col] += dt · Σ (F·v + τ·ω) over the grounded group k's bodies: the loads'
    work over dt at the current velocities (J)."""
    body_vel, body_omega = bodies.vel, bodies.omega
    for i in range(body_vel.shape[0]):
        g = grounded[i] - 1
        if g < 0:
            continue
        p = 0.0
        for q in range(3):
            p += force[i, q] * body_vel[i, q] + torque[i, q] * body_omega[i, q]
        energy[g, col] += dt * p


@helper(cache=True, _nrt=False)
def friction_rates(bodies, joints, drives, rows, rate):
    """rate[r] = J_r·V at the current velocities for the free rows of every joint with
    friction and no motor (write_drive_rows makes them FREE_FRICTION), 0 for the other
    free rows: the speeds the friction's work is taken at (add_friction_work)."""
    body_vel, body_omega = bodies.vel, bodies.omega
    joint_type, joint_body, row_start, row_count = joints.type, joints.body, joints.row_start, joints.row_count
    friction, motor_mode = drives.friction, drives.motor_mode
    row_J = rows.J
    for j in range(joint_type.shape[0]):
        nf = N_FREE[joint_type[j]]
        end = row_start[j] + row_count[j]
        rubs = friction[j] > 0.0 and (nf != 1 or motor_mode[j] == MOTOR_OFF)
        for r in range(end - nf, end):
            rate[r] = row_velocity(row_J, r, joint_body[j, 0], joint_body[j, 1], body_vel, body_omega) if rubs else 0.0


@helper(cache=True, _nrt=False)
def add_friction_work(joints, rows, grounded, energy, col, rate):
    """energy[k−1, col] += ½ Σ λ_r·rate[r] over the friction rows of group k's joints: the
    work of the substep's friction impulses λ (a force λ/h) over half the substep at the
    speeds `rate` (friction_rates) — at its start and at its end, the trapezoid of the
    loads' work (add_load_work): exact for a joint sliding against constant friction,
    and for one that friction stops within the substep (λ = the momentum it takes)."""
    joint_type, joint_body, row_start, row_count = joints.type, joints.body, joints.row_start, joints.row_count
    row_lambda = rows.impulse
    for j in range(joint_type.shape[0]):
        g = max(grounded[joint_body[j, 0]], grounded[joint_body[j, 1]]) - 1
        if g < 0:
            continue
        end = row_start[j] + row_count[j]
        for r in range(end - N_FREE[joint_type[j]], end):
            energy[g, col] += 0.5 * row_lambda[r] * rate[r]


# the energy projection scales velocities by at most this per step (a deficit beyond it is
# owed to the group and paid back over the next steps), and acts only on a change above
# round-off
ENERGY_SCALE_MAX = 1.01
ENERGY_ROUNDOFF = 1e-12


@helper(cache=True)
def open_energy_budget(energy):
    """At a call's first step (energy[:, 0] = E_n): a group whose energy is not the one
    the last step left it with (its bodies, loads or gravity were edited in between, or
    the projection was off) starts its budget afresh — nothing owed. One that is (within
    round-off) takes E_n as that step left it, as the kernel's later steps do (impulse_kernel),
    so a run's bits do not depend on how it is cut into calls."""
    for k in range(energy.shape[0]):
        e, after = energy[k, 0], energy[k, E_AFTER]
        if abs(e - after) > 1e-9 * (abs(e) + abs(after) + abs(energy[k, 4])):
            energy[k, E_OWED] = 0.0
        else:
            energy[k, 0] = after


@helper(cache=True, _nrt=False)
def mark_touching(grounded, energy, crows):
    """energy[k−1, 5] = 0 for every grounded group k with a body in a contact block of crows
    (contacts exchange and dissipate energy the projection does not count)."""
    row_body, block_start = crows.body, crows.block_start
    for k in range(block_start.shape[0]):
        for side in range(2):
            g = grounded[row_body[block_start[k], side]] - 1
            if g >= 0:
                energy[g, 5] = 0.0


@helper(cache=True, _nrt=False)
def energy_projection(bodies, gravity, h, grounded, energy):
    """Dinev, Liu & Kavan 2018's energy projection in the velocities alone, per grounded
    group k: the least change of its V in the mass metric that brings its energy to
    E* = target + s·w1 (target = energy[k−1, 0] + energy[k−1, 1] + owed: E_n, the loads'
    work but for the last half-substep's and what earlier steps could not restore;
    w1 = energy[k−1, 2]: that work at the scaled end velocities, the trapezoid's second
    half, h/2 Σ F·V) is V ← s V (the closest point of the ellipsoid ½VᵀMV = K* to V), s
    from s²K − s·(w1 − P) = target − U, the energy being K + U + P (group_energies: U the
    potential at x, P = ½h·Σ m g·V its half-substep lead). s ≤ ENERGY_SCALE_MAX: near a turning point, where every
    body is slow, the step's loss is beyond reach; it stays owed (E* − the energy
    reached) and is paid back as the group speeds up, so the budget is their paper's
    E_0 + the loads' work. A change within round-off of the energy is left alone (a
    resting chain's noise is never amplified). Groups touched by a contact in the step
    (energy[k−1, 5] = 0) are left alone and owed nothing. The scale of group k ends in
    energy[k−1, 3], its energy after in energy[k−1, E_AFTER]."""
    group_energies(bodies, gravity, h, grounded, energy, 3)
    for k in range(energy.shape[0]):
        potential, lead = energy[k, 4], energy[k, 8]
        kinetic = energy[k, 3] - potential - lead
        w1 = energy[k, 2]
        w = w1 - lead                       # both linear in s
        target = energy[k, 0] + energy[k, 1] + energy[k, E_OWED]
        c = target - potential
        s = 1.0
        touched = energy[k, 5] == 0.0
        scale = abs(target) + abs(potential) + kinetic + abs(w1) + abs(lead)
        if not touched and kinetic > 0.0 and abs(c + w - kinetic) > ENERGY_ROUNDOFF * scale:
            disc = w * w + 4.0 * kinetic * c
            s = w / (2.0 * kinetic)           # beyond reach (the positions alone hold more): the least
            if disc > 0.0:
                s += math.sqrt(disc) / (2.0 * kinetic)
            s = min(max(s, 0.0), ENERGY_SCALE_MAX)
        energy[k, 3] = s
        after = potential + s * lead + s * s * kinetic
        energy[k, E_AFTER] = after
        energy[k, E_OWED] = 0.0 if touched else target + s * w1 - after
    body_vel, body_omega = bodies.vel, bodies.omega
    for i in range(body_vel.shape[0]):
        g = grounded[i] - 1
        if g < 0:
            continue
        s = energy[g, 3]
        for q in range(3):
            body_vel[i, q] *= s
            body_omega[i, q] *= s


# ---------------------------------------------------------------------------- SHAKE (impulse step)
@helper(cache=True)
def shake_prepare(proj, bodies, joints, rows):
    """At a substep's start (the rows at its start poses q_n): the factor of the equality
    rows there, in the bodies' own mass metric (kept from the last substep's velocity
    projection when still fresh), and a copy of their Jacobian J(q_n)."""
    if proj.fresh[0] == 0:
        proj.rank[0] = projection_factor(proj, bodies, joints, rows, 0.0)
    proj.fresh[0] = 0
    copy2d(proj.J0, rows.J)


@helper(cache=True)
def shake_correction(h, tol, iterations, bodies, joints, rows, proj, readout):
    """The impulse step's SHAKE/RATTLE correction (Ryckaert, Ciccotti & Berendsen 1977;
    Andersen 1983), after the positions moved to q̃ = q_n + hV. SHAKE: quasi-Newton steps
    of g_E(q̃ + Δq) = 0 along the start-of-step rows, J(q_n) Δq = −g_E (shake_prepare's
    factor), Δq = M⁻¹J(q_n)ᵀη, q += Δq and V += Δq/h (the correction is an impulse), until
    every |g_E| ≤ tol or `iterations` of them; RATTLE: then the velocities onto the new
    tangent, J(q_{n+1}) V = 0 (project_velocities, M-orthogonal; its factor is the next
    substep's start factor).
    Why: the velocity solve holds J(q_n) V = 0, so the linear update drifts off the
    manifold by its curvature, ½h²VᵀHV (a spinning joint's centripetal term); taking that
    drift away and projecting the velocity onto the new tangent loses ~(ωh)² of the energy
    per step. The impulse along J(q_n)ᵀ has, at the new pose, a tangential part that gives
    back what the projection removes (a particle on a circle keeps |v| to O(h⁴) per step).
    Rows and readouts are rewritten at the corrected poses; a drift of at most `tol` is
    left alone (a joint at rest stays exactly at rest). Returns the largest |g_E| before
    and after (m or rad)."""
    before, _ = equality_errors(bodies, joints, rows)
    if before <= tol:
        if readout:
            compute_joint_rows(bodies, joints, rows, bool(True))
        return before, before
    lin, ang = proj.dq_lin, proj.dq_ang
    err = before
    for it in range(iterations):
        chord_step(proj, proj.J0, joints, rows, lin, ang)
        apply_displacement(bodies, lin, ang, 1.0 / h)
        compute_joint_rows(bodies, joints, rows, bool(False))
        last = err
        err, _ = equality_errors(bodies, joints, rows)
        if err <= tol:
            break
        if err > 0.5 * last:
            # converging at less than half per iteration (the rows turned by ωh ≳ ½ in the
            # step: it does not resolve that motion): this iteration's impulse is taken
            # back and Newton steps at the new poses finish the positions alone (seed 004,
            # eq. 15-16) — such a step may lose energy, never gain it
            apply_velocity(bodies, lin, ang, -1.0 / h)
            err = project_positions(iterations, tol, bodies, joints, rows, proj, 0.0)
            break
    project_velocities(bodies, joints, rows, proj)
    proj.fresh[0] = 1
    if readout:
        compute_joint_rows(bodies, joints, rows, bool(True))
    return before, err
