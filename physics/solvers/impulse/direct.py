"""The direct path (impulse_kernel on a joint tree deeper than the iteration budget
converges on: uses_direct_solve), per substep: the velocity solve (direct_velocities), then
split impulses (direct_positions).

The rows of the spanning tree — every tree joint's equality rows, its active limit rows
and its position servo (a soft row, choose_direct_rows) — are solved exactly in O(N) by
the tree elimination of Baraff ("Linear-time dynamics using Lagrange multipliers",
SIGGRAPH 96) in its articulated form (solvers/tree), from the bodies' momenta M̃ V⁻ plus
the impulses of every other row. Those other rows — velocity motors, servos at their
torque bound, friction (eq. 15-16, unchanged), limits outside the direct set, joints
closing loops, contacts — stay sequential impulses around it (block Gauss–Seidel): one
iteration = the direct solve given the others' impulses, then one sweep of the others;
after the last sweep the direct solve runs once more, so its rows hold exactly on exit.
The sweeps stop when the iterating joint rows change by less than ε (eq. 17) and the
contacts by at most contact ε; the direct rows' own change counts only while their
factor changes (the geometric stiffness's fixed point, below): after that it follows
from the others' changes — a gripper's squeeze passes the contacts' last shifts to every
joint of the arm — and the closing solve holds them exactly. A limit in the direct set
whose impulse comes out pulling (the joint leaves its stop) is handed back to the
one-sided sweeps for the rest of the substep and the direct solve is redone
(release_pulling_limits); so is a servo whose impulse comes out beyond its bound
(release_saturated_servos). The couplings between joints (a URDF's mimic joints) are
not iterated: each tree solve closes them exactly by their Schur complement on its factor
(../couplings.py). A joint whose friction impulse ends the sweeps inside its
Coulomb ball (it sticks) is locked in that closing solve — its free rows join the direct
set — so it is held exactly, not to ε (lock_sticking_friction); should the locked
impulse come out beyond the ball, the joint slides: unlocked, its impulse on the ball,
solved once more (release_slipping_friction).

Geometric stiffness. With exact joint rows a long hanging chain still goes unstable at
large steps: its tension T turns the rows' directions, a stiffness ~T/L that
semi-implicit Euler treats explicitly. The step therefore uses the inertia
    Ĩ_i = I_i + h² K̃_i,   K_i = Σ_joints (f·r) E − ½ (f rᵀ + r fᵀ)
(f: the force of a joint's point rows on body i, r: its lever arm): the rotational
geometric stiffness of constraint forces (Tournier et al., "Stable Constrained
Dynamics", SIGGRAPH 2015), here bounded by its positive diagonal K̃ (Gershgorin row
sums) so that Ĩ stays positive definite where K is not (Andrews, Teichmann & Kry,
"Geometric Stiffness for Real-time Constrained Multibody Dynamics", Eurographics 2017,
discuss that indefiniteness and the damping it costs). f comes from the impulses
being solved for: the first iteration uses the warm start (last substep's); when other
rows iterate around the direct solve, each further iteration up to the
K_ITERATIONS-th uses the newest (a fixed-point iteration, stopping on ‖Δp‖ < ε as in
eq. 17, the iteration limit or the cap; after that the factor is kept: K has settled
while the sweeps still converge on contacts and bounds, and a factor costs as much as a
sweep and a solve together). A tree with nothing else to iterate takes one exact solve per substep (with warm
starting off, the fixed point is iterated so that K is not zero). Stabilization "none"
leaves the inertia alone. It matters only for modes with h·ω ≳ 1, which it damps
instead of amplifying.
"""
from ...jit import helper

from ...clock import past_cap, ticks
from ...joint_rows import ROW_LIMIT
from ...joint_types import PRISMATIC
from ..couplings import add_coupling_impulses, close_couplings, coupling_response
from ..row_ops import copy2d, fill2d, point_arm, world_inverse_inertia
from ..tree import (FAST as _FAST, articulated_factor, articulated_lambda, articulated_solve, augmented_inertia,
                    invert_tree_inertia, tree_momentum, zero_tree)
from .contact_sweeps import contact_sweep, prepare_contact_blocks
from .direct_sets import (choose_direct_rows, lock_sticking_friction, release_pulling_limits, release_saturated_servos,
                          release_slipping_friction)
from .iterative import record_solve
from .rows import block_iterates, prepare_rows, warm_start
from .settings import BAUMGARTE, METHODS, NO_STABILIZATION, SHAKE, SPLIT
from .sweeps import sweep_positions, sweep_velocities

K_ITERATIONS = 8        # iterations that refresh the geometric stiffness (module docstring)


# ---------------------------------------------------------------------------- when it runs
# False: seed 001's iterative solver on every joint graph (comparisons, benchmarks).
DIRECT_SOLVE = True
# A bound on the time of one direct solve (factor, solve, impulses) per joint of the
# tree, µs: kept wide so that slower machines stay inside it.
DIRECT_US_PER_JOINT = 0.5


def uses_direct_solve(plan, iterations, time_cap_ms=0.0, substeps=1, method=0):
    """Whether the direct path runs for this joint graph and these settings.

    It runs when sequential impulses could not converge within the iteration budget:
    they need on the order of depth² sweeps on a chain `depth` joints long (depth of the
    spanning tree); a budget that large keeps seed 001's iterative solver, whose warm
    start then behaves as the paper describes. With a wall-clock cap, one direct solve
    (which cannot be cut part-way) must fit in the cap of a substep, or the iterative
    solver, which can stop after any sweep, keeps the real-time guarantee. Joints that
    close loops are iterated around the direct solve of the spanning tree.
    method: METHODS["auto"] as above, "direct" whenever there is a tree (the time cap
    still applies), "iterative" never."""
    if not DIRECT_SOLVE or len(plan.order) == 0 or method == METHODS["iterative"]:
        return False
    if method != METHODS["direct"] and iterations >= plan.depth ** 2:
        return False
    cap = time_cap_ms / max(substeps, 1)
    return cap <= 0.0 or DIRECT_US_PER_JOINT * 1e-3 * len(plan.order) <= cap


# ---------------------------------------------------------------------------- the split pass's targets
@helper(cache=True, fastmath=_FAST, _nrt=False)
def predict_drift(h, erp, tree, joint_type, joint_body, row_J, row_C, body_inv_mass, body_omega):
    """tree.row_target = the rows' values C the direct solve's targets come from: with
    erp > 0 (split impulses) a point row's C + d/erp, d the drift the position update will
    add to it beyond its rate J·V: the anchors turn by the integrator's rotation δq (the
    quaternion (w, 1)/|(w, 1)|, w = ½hω: quat.integrate_quat), not by h ω×r, so
    d = e·(δ_b − δ_a), δ = δq r − r − h ω×r = 2/(1 + |w|²) (w×(w×r) − |w|² w×r)
    ≈ ½h² ω×(ω×r) (a swinging link's centripetal term). The split pass,
    J V* = −(erp·C + d)/h, takes it off before it happens. ω: the velocities the solve
    starts from (its outcome is not known yet; the last substep's impulses are no guide:
    the torques of a link's two joints nearly cancel, and turned by a step they do not)."""
    order, joint_rows, row_target = tree.order, tree.joint_rows, tree.row_target
    for r in range(row_C.shape[0]):
        row_target[r] = row_C[r]
    if erp <= 0.0:
        return
    g = 1.0 / erp
    hh = 0.5 * h
    for t in range(order.shape[0]):
        k = order[t]
        if joint_type[k] == PRISMATIC:
            continue
        r0 = joint_rows[k, 0]
        dx = dy = dz = 0.0
        for side in range(2):
            i = joint_body[k, side]
            if body_inv_mass[i] == 0.0:
                continue
            rx, ry, rz = point_arm(row_J, r0, side)
            wx, wy, wz = hh * body_omega[i, 0], hh * body_omega[i, 1], hh * body_omega[i, 2]
            w2 = wx * wx + wy * wy + wz * wz
            ax, ay, az = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx       # w × r
            bx, by, bz = wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax       # w × (w × r)
            f = (2.0 if side == 1 else -2.0) / (1.0 + w2)
            dx += f * (bx - w2 * ax)
            dy += f * (by - w2 * ay)
            dz += f * (bz - w2 * az)
        row_target[r0] += dx * g
        row_target[r0 + 1] += dy * g
        row_target[r0 + 2] += dz * g



# ---------------------------------------------------------------------------- the rows around the direct solve
@helper(cache=True, _nrt=False)
def add_iterative_impulses(rows, work, lam, row_direct, body_z):
    """body_z += Jᵀ λ over every row solved by sequential impulses (all rows but those in
    the direct solve), in use (row_mass > 0)."""
    row_J, row_body, row_mass = rows.J, rows.body, work.mass
    for r in range(row_J.shape[0]):
        p = lam[r]
        if p == 0.0 or row_mass[r] == 0.0 or row_direct[r] == 1:
            continue
        a = row_body[r, 0]
        b = row_body[r, 1]
        for q in range(6):
            body_z[a, q] += row_J[r, q] * p
            body_z[b, q] += row_J[r, 6 + q] * p


@helper(cache=True)
def count_iterative_blocks(rows, row_direct, loop_joints):
    """Blocks with rows for sequential impulses: the loop-closing joints, and blocks in the
    direct solve that have a limit (outside it), motor or friction row in use."""
    block_start, block_count, row_kind = rows.block_start, rows.block_count, rows.kind
    row_active = rows.active
    n = loop_joints.shape[0]
    for k in range(block_start.shape[0]):
        start = block_start[k]
        if row_direct[start] == 1 and block_iterates(row_kind, row_active, start, start + block_count[k], row_direct):
            n += 1
    return n


# ---------------------------------------------------------------------------- the factor
@helper(cache=True, _nrt=False)
def refactor(h, use_k, targets, n_iter_known, may_iterate, rows_done, bodies, joints, rows, work, tree, crows, cwork,
             cdirect):
    """Inertia with the geometric stiffness of the current impulses, the factor of the
    rows in the direct solve (`rows_done`: the same rows as the last factor), and — when
    some rows iterate — their M̃⁻¹Jᵀ and effective masses with the same inertia (contact
    rows included). Returns how many blocks have rows that iterate (n_iter_known if ≥ 0):
    joints' and contacts'."""
    body_pos, body_quat, body_inv_mass = bodies.pos, bodies.quat, bodies.inv_mass
    body_inv_inertia = bodies.inv_inertia
    joint_type, joint_body = joints.type, joints.body
    row_J = rows.J
    body_inv_inertia_world = work.inv_inertia_world
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    loop_joints, row_direct = tree.loop_joints, tree.row_direct
    body_I = tree.body_I
    augmented_inertia(h, use_k, tree, joints, rows, bodies)
    articulated_factor(tree, joint_type, joint_body, row_J, tree.row_target, body_pos, body_inv_mass, body_I, targets,
                       rows_done)
    n_iter = n_iter_known
    if n_iter < 0:
        n_iter = loop_joints.shape[0]
        if may_iterate:
            n_iter = count_iterative_blocks(rows, row_direct, loop_joints)
        n_iter += crows.block_start.shape[0]
    if n_iter > 0:
        world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world)
        invert_tree_inertia(order, roots, joint_child, body_I, body_inv_inertia_world)
        prepare_rows(rows, bodies, work, row_direct)
        prepare_rows(crows, bodies, cwork, cdirect)
    return n_iter


# ---------------------------------------------------------------------------- velocities
@helper(cache=True, _nrt=False)
def direct_velocities(params, h, stats, may_iterate, bodies, joints, rows, work, tree, crows, cwork, cdirect, cblocks,
                      swept, couplings):
    """The velocity solve of one substep on the direct path (see the module docstring).
    With nothing to iterate (no limit outside the direct solve, motor, friction, loop or
    contact) and split impulses, the pseudo-velocities (J V* = −ERP·C/h) are solved in the
    same sweeps. Contact rows (crows, cwork, cdirect; cblocks: ContactWork.block) iterate
    like loop joints. The couplings between joints (None: none) are closed exactly on
    every tree solve (../couplings.py). Returns the number of blocks with rows that
    iterate."""
    body_vel, body_omega = bodies.vel, bodies.omega
    body_inv_mass = bodies.inv_mass
    joint_type, joint_body, joint_row_start, joint_row_count = joints.type, joints.body, joints.row_start, joints.row_count
    row_J, row_C, row_kind = rows.J, rows.C, rows.kind
    row_active, row_lambda, row_hi = rows.active, rows.impulse, rows.hi
    body_pvel, body_pomega = work.pvel, work.pomega
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    joint_m, row_direct = tree.joint_m, tree.row_direct
    joint_rows, joint_mdir, body_v0 = tree.joint_rows, tree.joint_mdir, tree.body_v0
    body_w0, body_I = tree.body_w0, tree.body_I
    body_z, body_z2 = tree.body_z, tree.body_z2
    max_it = params.iterations
    eps, contact_eps = params.epsilon, params.contact_epsilon
    stabilization = params.stabilization
    use_k = stabilization != NO_STABILIZATION
    rate = params.erp / h if stabilization == BAUMGARTE else 0.0
    targets = stabilization != NO_STABILIZATION
    cap = params.time_cap_ms / params.substeps * params.ticks_per_ms
    t_start = ticks()
    # the rows of the direct solve: equality rows of the tree, active limits (with no
    # limit, motor or friction anywhere they are the equality rows, chosen once per run)
    if may_iterate:
        for t in range(order.shape[0]):
            k = order[t]
            for r in range(joint_row_start[k] + joint_m[k], joint_row_start[k] + joint_row_count[k]):
                # a speculative limit (joint_rows.speculative_limits: in force, C = 0) iterates
                row_direct[r] = -1 if (row_active[r] != 0 and row_C[r] == 0.0 and row_kind[r] == ROW_LIMIT) else 0
        choose_direct_rows(tree, joint_type, joint_row_start, rows, bodies, row_direct)
    if not params.warm_start:
        # the impulses of the direct rows only seed the geometric stiffness: cold, from 0
        for t in range(order.shape[0]):
            k = order[t]
            for i in range(joint_mdir[k]):
                row_lambda[joint_rows[k, i]] = 0.0
    # not with loop joints (their rows, swept around the direct solve, would pull against it)
    # nor with post_projection on every step (it takes the drift; a smaller one only hands its
    # Newton steps a chord step's precision, which they reach less closely)
    every_step = params.projection > 0 and params.projection_above == 0.0
    predict = stabilization == SPLIT and tree.loop_joints.shape[0] == 0 and not every_step
    predict_drift(h, params.erp if predict else 0.0, tree, joint_type, joint_body, row_J, row_C, body_inv_mass,
                  body_omega)
    copy2d(body_v0, body_vel)
    copy2d(body_w0, body_omega)
    # one call site per kernel (the loop below also runs the first factor and the last
    # solve): numba compiles the whole path into this function
    n_iter = -1
    factor = True           # (re)factor before the next solve
    rows_done = False       # the rows are those of the last factor
    last = False            # the closing direct solve after the sweeps
    it = 0
    residual = 0.0
    contacts = 0.0          # the contacts' last sweep: the largest momentum change of a body
    capped = False
    locked = False          # some joint is locked by its static friction (the closing solve)
    stale = False           # the couplings' response is of an earlier factor (a fixed-point iterate's)
    cblock = cblocks[:0]
    while True:
        refreshed = factor
        if factor:
            known = n_iter if rows_done else -1
            # the couplings' response on a new set of rows, and on the fixed point's last factor
            # (in between, the iterates' closures need not be exact: the closing solve's is)
            respond = not rows_done or n_iter == 0 or it >= K_ITERATIONS - 1
            n_iter = refactor(h, use_k, targets, known, may_iterate, rows_done, bodies, joints, rows, work, tree, crows,
                              cwork, cdirect)
            if couplings is not None:
                if respond:     # (work.pvel, pomega as scratch: the split pass sets them after)
                    coupling_response(tree, joint_body, row_J, body_inv_mass, couplings, body_pvel, body_pomega)
                stale = not respond
            if n_iter > 0 and crows.block_start.shape[0] > 0:
                cblock = cblocks[:prepare_contact_blocks(crows, cwork, cblocks)]
            if it == 0 and not rows_done and n_iter > 0:
                warm_start(params.warm_start, rows, work, body_vel, body_omega, row_direct, False)
                warm_start(params.warm_start, crows, cwork, body_vel, body_omega, cdirect, True)
            if couplings is not None:
                if it == 0 and not rows_done and not params.warm_start:
                    couplings.impulse[:] = 0.0
            factor = False
        positions = n_iter == 0 and (stabilization == SPLIT or stabilization == SHAKE) and \
            params.position_iterations > 0
        # rows of the direct solve, given the others' impulses: momenta M̃ V⁻ + Jᵀλ in, V out
        tree_momentum(order, roots, joint_child, body_inv_mass, body_I, body_v0, body_w0, body_z)
        if n_iter > 0:
            add_iterative_impulses(rows, work, row_lambda, row_direct, body_z)
            add_iterative_impulses(crows, cwork, crows.impulse, cdirect, body_z)
        if couplings is not None:
            add_coupling_impulses(couplings, couplings.impulse, body_z)
        if positions:
            fill2d(body_pvel, 0.0)
            fill2d(body_pomega, 0.0)
            zero_tree(order, roots, joint_child, body_z2)
        articulated_solve(tree, joint_body, rate, body_z, body_vel, body_omega, positions, params.erp / h, body_z2,
                          body_pvel, body_pomega, 1.0)
        change = articulated_lambda(tree, row_J, body_z, body_vel, body_omega, row_lambda)
        if couplings is not None:
            close_couplings(couplings, rate, body_vel, body_omega, couplings.impulse, row_lambda, True)
            if positions:               # the pseudo-velocities' second right-hand side, from V* = 0
                couplings.impulse_pos[:] = 0.0
                close_couplings(couplings, params.erp / h, body_pvel, body_pomega, couplings.impulse_pos, row_lambda,
                                False)
        released = release_pulling_limits(tree, joint_type, joint_row_start, row_active, row_direct, row_lambda)
        released = release_saturated_servos(tree, rows.lo, row_hi, row_direct, row_lambda) or released
        if last and locked:
            released = release_slipping_friction(tree, joint_type, joint_row_start, row_hi, row_direct,
                                                 row_lambda) or released
        if released:
            # a limit is letting go, a servo reached its bound or a locked joint slides: it
            # leaves the direct solve, which is then redone
            choose_direct_rows(tree, joint_type, joint_row_start, rows, bodies, row_direct)
            factor = True
            rows_done = False
            continue
        if last:
            break
        # the direct rows' change counts while their factor still changes (the geometric
        # stiffness's fixed point); after that it only follows the iterating rows' changes
        residual = change if refreshed else 0.0
        if n_iter > 0:
            # limits, motors, friction (eq. 15-16), loop joints: sequential impulses, one sweep
            residual = max(residual, sweep_velocities(stabilization == BAUMGARTE, params.erp / h, rows, work, body_vel, body_omega, row_direct))
            contacts = contact_sweep(stabilization == BAUMGARTE, params.erp / h, contact_eps, crows, cwork,
                                     bodies, cdirect, cblock, swept)
        it += 1
        done = False
        if n_iter == 0 and (not use_k or params.warm_start):
            # one exact solve, nothing left to iterate: the geometric stiffness comes from
            # the last substep's impulses (the warm start), as with any iteration budget
            residual = 0.0
            done = True
        elif (residual < eps and contacts <= contact_eps) or it >= max_it:
            done = True
        elif past_cap(t_start, cap):
            capped = True
            done = True
        if done:
            if n_iter == 0:
                break
            last = True             # end on the direct solve: exact with the others' final impulses
            if may_iterate and lock_sticking_friction(tree, joint_type, joint_row_start, row_active, row_hi,
                                                      row_lambda, row_direct):
                # joints the sweeps left sticking are locked in that solve: held exactly
                locked = True
                choose_direct_rows(tree, joint_type, joint_row_start, rows, bodies, row_direct)
                factor = True
                rows_done = False
            elif stale:             # the closing solve closes the couplings on its own factor
                if couplings is not None:
                    coupling_response(tree, joint_body, row_J, body_inv_mass, couplings, body_pvel, body_pomega)
                stale = False
            continue
        # next fixed-point iterate of the geometric stiffness, from the newest impulses
        factor = use_k and it < K_ITERATIONS
        rows_done = True
    record_solve(stats, it, max(residual, contacts), ticks() - t_start, capped)
    return n_iter


# ---------------------------------------------------------------------------- positions (split impulses)
@helper(cache=True)
def direct_positions(params, h, joints, rows, work, tree, crows, cwork, cdirect, couplings):
    """Split impulses on the direct path when some rows iterate (else direct_velocities
    did it): pseudo-velocities V* with J V* = −ERP·C/h, the rows of the direct solve by
    the direct solve on the velocity solve's factor, limits outside it, sticking friction
    rows and loop joints by sweep_positions around it, `position_iterations` times,
    ending on the direct solve; the couplings closed on each solve."""
    joint_body = joints.body
    row_lambda_pos, pvel, pomega = work.impulse_pos, work.pvel, work.pomega
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    row_direct = tree.row_direct
    body_z, body_z2 = tree.body_z, tree.body_z2
    pvel[:, :] = 0.0
    pomega[:, :] = 0.0
    row_lambda_pos[:] = 0.0
    cwork.impulse_pos[:] = 0.0
    if couplings is not None:
        couplings.impulse_pos[:] = 0.0
    n_pos = params.position_iterations
    if n_pos == 0:
        return
    rate = params.erp / h
    for it in range(n_pos + 1):
        zero_tree(order, roots, joint_child, body_z)
        add_iterative_impulses(rows, work, row_lambda_pos, row_direct, body_z)
        add_iterative_impulses(crows, cwork, cwork.impulse_pos, cdirect, body_z)
        if couplings is not None:
            add_coupling_impulses(couplings, couplings.impulse_pos, body_z)
        articulated_solve(tree, joint_body, rate, body_z, pvel, pomega, False, 0.0, body_z2, pvel, pomega, 0.0)
        if couplings is not None:
            close_couplings(couplings, rate, pvel, pomega, couplings.impulse_pos, row_lambda_pos, False)
        if it < n_pos:
            sweep_positions(rate, rows, work, pvel, pomega, row_direct)
            if crows.block_start.shape[0] > 0:
                sweep_positions(rate, crows, cwork, pvel, pomega, cdirect)

