"""The `impulse` solver (seed 001): sequential impulses with Coulomb joint friction.

One step of Δt (or each of its substeps h = Δt/substeps), in the paper's order:

    external impulses   V += M⁻¹ p_e                               (eq. 10)
    prepare rows        M⁻¹Jᵀ and effective mass 1/(J M⁻¹ Jᵀ) of every row
    warm start          apply last step's accumulated impulses: P⁽⁰⁾(t+Δt) = P(t)
    iterate             for each joint: constraint rows (equality, limits as
                        one-sided rows, λ ≥ 0 or λ ≤ 0 accumulated), then its free
                        rows: a motor, or friction —
                          (B M⁻¹ Bᵀ) Δp = −B V                      (eq. 15)
                          ‖P + Δp‖ > p_max ⇒ Δp = p_max (P+Δp)/‖P+Δp‖ − P  (eq. 16)
                        until every ‖Δp‖ < ε (eq. 17), the iteration limit, or the
                        wall-clock cap — whichever comes first
    relax drift         split impulses: the same rows on pseudo-velocities V* with
                        J V* = −ERP·C/h, which move positions, not momentum
                        (or Baumgarte: the bias ERP·C/h inside the velocity solve)
    integrate           X += h H (V + V*)                          (eq. 11)

Impulses are N·s (N·m·s for angular rows); friction limits F_max are N·m for
rotational free DOFs and N for a prismatic slide, p_max = F_max·h (eq. 12).
Motors (1-DOF joints): a velocity target, or a position servo solved as a soft
constraint (frequency, damping ratio — Box2D's soft step), with a force/torque limit;
with the motor off, the free row is the friction clamp (as in Jolt).

Direct path. Sequential impulses converge in about depth² sweeps on a chain of `depth`
joints, far too slowly for long chains. When the joint graph has a spanning tree deeper
than the iteration budget allows (uses_direct_solve), the rows of the tree — equality
rows and active limit rows — are solved exactly in O(N) by tree elimination (Baraff,
"Linear-time dynamics using Lagrange multipliers", SIGGRAPH 96; solvers/tree), with the
geometric stiffness of the joint forces in the inertia so that long hanging chains stay
stable at large steps. Motors, friction (eq. 15-16 unchanged), limits that let go and
joints closing loops iterate as sequential impulses around it; the split-impulse pass
uses the same factor and, with nothing to iterate, is solved in the same sweeps. See
"direct path" below.
"""
import math

import numpy as np
from numba import njit

from ..clock import ticks, ticks_per_ms
from ..contacts import (N_BLOCKS, N_PREV, N_ROWS, broad_contacts, contact_views, detection_overflowed,
                        keep_contact_impulses, narrow_contacts, write_contact_rows)
from ..quat import rotate_inv
from ..integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from ..joint_rows import (FREE_CONTACT, FREE_FRICTION, FREE_MOTOR, FREE_OFF, MOTOR_OFF, ROW_EQ, ROW_FREE, ROW_LIMIT,
                          compute_joint_rates, compute_joint_rows, speculative_limits, write_drive_rows)
from ..joint_types import N_FREE, N_LIMIT, PRISMATIC
from ..settings import Setting, checked, defaults
from . import projection
from .row_ops import copy2d, fill2d, scatter_row, world_inverse_inertia
from .base import SolverBase
from .stats import SolverStats
from .tree import (FAST as _FAST, invert_tree_inertia, arm, articulated_factor, articulated_lambda, articulated_solve, augmented_inertia,
                         build_tree_plan, make_tree, select_rows, static_bodies, tree_momentum, zero_tree)

# the kernel's params vector (ImpulseSolver._pack)
P_ITERATIONS, P_EPSILON, P_TIME_CAP_MS, P_WARM_START, P_STABILIZATION, P_ERP, P_SUBSTEPS, \
    P_TICKS_PER_MS, P_POSITION_ITERATIONS, P_METHOD, P_DIRECT, P_MAY_ITERATE, P_PROJECTION, \
    P_PROJECTION_ABOVE, P_KEEP_ENERGY = range(15)
N_PARAMS = 15
# passes over a contact patch's normal rows per sweep (sweep_velocities)
PATCH_PASSES = 5
SPLIT, BAUMGARTE, NO_STABILIZATION, SHAKE = 0, 1, 2, 3
STABILIZATIONS = {"split": SPLIT, "baumgarte": BAUMGARTE, "none": NO_STABILIZATION, "shake": SHAKE}
# SHAKE's quasi-Newton iterations stop once every joint's drift is below this (m or rad):
# far below any visible gap (the split impulses take what is left next substep). Each
# iteration shrinks the drift by about ωh (ω: the fastest link's rate) or hands over to
# Newton steps (projection.shake_correction), so 20 take a centimetre below it at ωh = ½
SHAKE_TOLERANCE = 1e-9
SHAKE_ITERATIONS = 20
METHODS = {"auto": 0, "direct": 1, "iterative": 2}
# a limit binds speculatively when its joint could reach it within this many substeps at its
# rate after the external impulses (joint_rows.speculative_limits): the solve may speed it up
LIMIT_REACH = 4.0
# impulse_stats layout (last step, plus counts over the run)
S_ITERATIONS, S_RESIDUAL, S_SOLVE_TICKS, S_CAPPED, S_CAPPED_STEPS, S_TOTAL_ITERATIONS, S_VIOLATION = range(7)
N_STATS = S_VIOLATION + 4          # the last post-projection's Violation (4 numbers) from S_VIOLATION on

SETTINGS = (
    Setting("iterations", "int", 50, 1, 100000, label="iterations",
            help="Impulse solver: most velocity iterations per substep."),
    Setting("epsilon", "float", 1e-8, 0.0, 1e3, unit="N·s", label="ε",
            help="Impulse solver: stop iterating when every impulse change |Δp| is below ε (N·s): a joint row's, "
                 "and every body's momentum change over the contacts' sweep (a 1 kg body's speed to 1e-8 m/s)."),
    Setting("time_cap_ms", "float", 0.0, 0.0, 1000.0, unit="ms", label="time cap",
            help="Impulse solver: wall-clock budget of one solve (ms); 0 = no cap. The solve stops there "
                 "with what it has."),
    Setting("warm_start", "bool", True, label="warm start", help="Start each solve from the last step's impulses."),
    Setting("stabilization", "choice", "split", choices=tuple(STABILIZATIONS), label="drift",
            help="How joint drift is removed: split impulses (a separate position pass), Baumgarte (a velocity "
                 "bias), none, or shake: split impulses, then after each substep the joints are moved back onto "
                 "their constraints by an impulse that also acts on the velocities (SHAKE/RATTLE), so a spinning "
                 "joint keeps its energy."),
    Setting("erp", "float", 0.2, 0.0, 1.0, label="ERP",
            help="Error reduction per step (0-1): the share of joint drift corrected each step by split impulses "
                 "or Baumgarte."),
    Setting("substeps", "int", 1, 1, 1000, label="substeps",
            help="Impulse solver: substeps per Δt (each of Δt/substeps); more substeps make joints stiffer."),
    Setting("position_iterations", "int", 4, 0, 100000, label="position iterations",
            help="Split impulses: iterations of the position (pseudo-velocity) pass."),
    Setting("method", "choice", "auto", choices=tuple(METHODS), label="trees",
            help="Equality rows of joint trees: direct O(N) solve (Baraff), seed 001's iterations, or auto "
                 "(direct when the iteration budget is below the tree depth squared)."),
    Setting("post_projection", "bool", False, label="projection",
            help="Seed 004's position projection onto the joints' constraint manifold after every step, in the "
                 "step's own mass metric (physics/solvers/projection.py): post-stabilization; the velocities are "
                 "the next step's solve. Off, the impulse solver still projects a step whose joints drifted beyond "
                 "`projection_above`. (lcp's own is `projection`, on by default.)"),
    Setting("projection_above", "float", 9e-4, 0.0, 1.0, unit="m", label="project above",
            help="Impulse: the position projection runs (without post_projection) on a step whose joints drifted "
                 "beyond this (m or rad; 0: only with post_projection): a whipping chain's drift, not the "
                 "round-off of a resting one. Not when a joint has limits (the projection would push a joint "
                 "resting on its stop through it)."),
    Setting("projection_iterations", "int", 2, 1, 10, label="projection iter.",
            help="Newton iterations of the position projection."),
    Setting("keep_energy", "bool", True, label="keep energy",
            help="Energy projection after a step with ideal joints only (no limit, friction or motor on any "
                 "joint; no rope or mouse spring): the velocities of each group of bodies jointed to the ground and "
                 "touching nothing in the step are scaled (by at most 1 % a step) so that its energy is its "
                 "energy when the run started (or was last edited) plus the loads' work, never above it. "
                 "Takes back what the drift correction and the velocity solve at the start pose lose (~(ωh)² a step); "
                 "what a step cannot take back at once is owed and taken back over the next steps."),
)


@njit(cache=True, inline="always")
def n_limit_rows(t):
    """Limit rows of joint type t (joint_types.py)."""
    return N_LIMIT[t]


@njit(cache=True, inline="always")
def jv12(row_J, r, v):
    """J·V of row r with the two bodies' velocities held in a local 12-tuple."""
    return (row_J[r, 0] * v[0] + row_J[r, 1] * v[1] + row_J[r, 2] * v[2] + row_J[r, 3] * v[3]
            + row_J[r, 4] * v[4] + row_J[r, 5] * v[5] + row_J[r, 6] * v[6] + row_J[r, 7] * v[7]
            + row_J[r, 8] * v[8] + row_J[r, 9] * v[9] + row_J[r, 10] * v[10] + row_J[r, 11] * v[11])


@njit(cache=True, inline="always")
def add12(row_minv_jt, r, dl, v):
    """The 12-tuple V + M⁻¹Jᵀ Δλ."""
    m = row_minv_jt
    return (v[0] + m[r, 0] * dl, v[1] + m[r, 1] * dl, v[2] + m[r, 2] * dl, v[3] + m[r, 3] * dl,
            v[4] + m[r, 4] * dl, v[5] + m[r, 5] * dl, v[6] + m[r, 6] * dl, v[7] + m[r, 7] * dl,
            v[8] + m[r, 8] * dl, v[9] + m[r, 9] * dl, v[10] + m[r, 10] * dl, v[11] + m[r, 11] * dl)


@njit(cache=True, inline="always")
def load12(a, b, vel, omega):
    return (vel[a, 0], vel[a, 1], vel[a, 2], omega[a, 0], omega[a, 1], omega[a, 2],
            vel[b, 0], vel[b, 1], vel[b, 2], omega[b, 0], omega[b, 1], omega[b, 2])


@njit(cache=True, inline="always")
def store12(a, b, v, vel, omega):
    vel[a, 0], vel[a, 1], vel[a, 2] = v[0], v[1], v[2]
    omega[a, 0], omega[a, 1], omega[a, 2] = v[3], v[4], v[5]
    vel[b, 0], vel[b, 1], vel[b, 2] = v[6], v[7], v[8]
    omega[b, 0], omega[b, 1], omega[b, 2] = v[9], v[10], v[11]


@njit(cache=True, inline="always")
def coupling(row_J, row_minv_jt, r, s):
    """(J M⁻¹ Jᵀ)_rs for two rows of the same joint (same bodies)."""
    k = 0.0
    for i in range(12):
        k += row_J[r, i] * row_minv_jt[s, i]
    return k


@njit(cache=True)
def prepare_rows(rows, bodies, work, row_direct):
    """M⁻¹Jᵀ of each row in use (12 numbers) and its effective mass 1/(J M⁻¹ Jᵀ); rows
    not in use this step (inactive limits, free rows off) get 0. Rows in the direct
    solve (row_direct = 1) are left alone."""
    body_inv_mass = bodies.inv_mass
    row_J, row_active, row_body = rows.J, rows.active, rows.body
    body_inv_inertia_world, row_minv_jt, row_mass = work.inv_inertia_world, work.minv_jt, work.mass
    for r in range(row_J.shape[0]):
        if row_direct[r] == 1:
            continue
        if row_active[r] == 0:
            row_mass[r] = 0.0
            continue
        k = 0.0
        for side in range(2):
            i = row_body[r, side]
            o = 6 * side
            im = body_inv_mass[i]
            jx, jy, jz = row_J[r, o + 3], row_J[r, o + 4], row_J[r, o + 5]
            row_minv_jt[r, o] = im * row_J[r, o]
            row_minv_jt[r, o + 1] = im * row_J[r, o + 1]
            row_minv_jt[r, o + 2] = im * row_J[r, o + 2]
            row_minv_jt[r, o + 3] = (body_inv_inertia_world[i, 0] * jx + body_inv_inertia_world[i, 1] * jy
                                     + body_inv_inertia_world[i, 2] * jz)
            row_minv_jt[r, o + 4] = (body_inv_inertia_world[i, 3] * jx + body_inv_inertia_world[i, 4] * jy
                                     + body_inv_inertia_world[i, 5] * jz)
            row_minv_jt[r, o + 5] = (body_inv_inertia_world[i, 6] * jx + body_inv_inertia_world[i, 7] * jy
                                     + body_inv_inertia_world[i, 8] * jz)
            for c in range(6):
                k += row_J[r, o + c] * row_minv_jt[r, o + c]
        row_mass[r] = 1.0 / k if k > 1e-300 else 0.0


@njit(cache=True, inline="always")
def normal_sum(row_lambda, start, f0):
    """Σλ of a contact block's normal rows (they precede its friction rows)."""
    s = 0.0
    for r in range(start, f0):
        s += row_lambda[r]
    return s


@njit(cache=True, inline="always")
def free_rows(row_kind, start, end):
    """(first, count) of the block's free rows (they close the block). Helpers called per
    row or block take the row arrays one by one: taken from a bundle inside a loop, numba
    would count references to them every time."""
    f0 = end
    while f0 > start and row_kind[f0 - 1] == ROW_FREE:
        f0 -= 1
    return f0, end - f0


@njit(cache=True)
def warm_start(warm, rows, work, vel, omega, row_direct, apply):
    """Apply last step's accumulated impulses (or zero them), keeping every one feasible:
    inactive limits drop theirs, free rows stay in their ball (friction) or bound (motor).
    Rows in the direct solve (row_direct = 1) are skipped (they keep last step's impulse
    for the geometric stiffness, see direct_velocities); `apply` False: only clamp."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_active, row_lambda = rows.active, rows.impulse
    row_hi = rows.hi
    row_minv_jt, row_mass = work.minv_jt, work.mass
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        a = row_body[start, 0]
        b = row_body[start, 1]
        f0, nf = free_rows(row_kind, start, end)
        if not warm:
            for r in range(start, end):
                if row_direct[r] != 1:
                    row_lambda[r] = 0.0
            continue
        for r in range(start, f0):
            if row_direct[r] == 1:
                continue
            if row_kind[r] == ROW_LIMIT:
                if row_active[r] == 0 or row_lambda[r] * row_active[r] < 0.0:
                    row_lambda[r] = 0.0
        if nf > 0:
            lim = row_hi[f0] if row_active[f0] != FREE_OFF else 0.0
            if row_active[f0] == FREE_CONTACT:
                lim *= normal_sum(row_lambda, start, f0)
            n = 0.0
            for r in range(f0, end):
                n += row_lambda[r] * row_lambda[r]
            n = math.sqrt(n)
            if n > lim:
                s = lim / n if n > 0.0 else 0.0
                for r in range(f0, end):
                    row_lambda[r] *= s
        for r in range(start, end):
            if row_direct[r] == 1:
                continue
            if row_mass[r] == 0.0:
                row_lambda[r] = 0.0
            elif row_lambda[r] != 0.0 and apply:
                scatter_row(row_minv_jt, r, a, b, row_lambda[r], vel, omega)


@njit(cache=True, inline="always")
def block_iterates(row_kind, row_active, start, end, row_direct):
    """Whether a block has rows for sequential impulses: a limit in force outside the
    direct solve, or a free row in use (friction or motor)."""
    for r in range(start, end):
        if row_active[r] != 0 and row_direct[r] != 1 and row_kind[r] != ROW_EQ:
            return True
    return False


@njit(cache=True, inline="always")
def constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt, start, end, rate, lam,
                    row_direct, velocities, v):
    """Sequential impulses on the equality and limit rows start…end−1 of one block, the
    block's two bodies' velocities held in the 12-tuple v: Δλ = −m (J·V + rate·C + b), the
    accumulated λ clamped to [lo, hi] (one-sided for limits and contact normals,
    unbounded for equality rows); accumulates into lam. rate·C is the Baumgarte bias
    (velocities) or the split-impulse target (pseudo-velocities), 0 for none; b the row's
    velocity bias (`velocities` only: a contact's restitution or speculative target).
    Returns (v, largest |Δλ|). Rows in the direct solve are skipped."""
    largest = 0.0
    for r in range(start, end):
        if row_active[r] == 0 or row_mass[r] == 0.0 or row_direct[r] == 1:
            continue
        b = rate * row_C[r]
        if velocities:
            b += row_bias[r]
        dl = -row_mass[r] * (jv12(row_J, r, v) + b)
        lo, hi = row_lo[r], row_hi[r]
        if lo != -math.inf or hi != math.inf:
            old = lam[r]
            new = min(max(old + dl, lo), hi)
            dl = new - old
        lam[r] += dl
        v = add12(row_minv_jt, r, dl, v)
        largest = max(largest, abs(dl))
    return v, largest


@njit(cache=True, inline="always")
def solve3(a00, a01, a02, a11, a12, a22, b0, b1, b2):
    """x = A⁻¹b for a symmetric positive definite 3×3 A (Cramer)."""
    c00 = a11 * a22 - a12 * a12
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    det = a00 * c00 + a01 * c01 + a02 * c02
    c11 = a00 * a22 - a02 * a02
    c12 = a01 * a02 - a00 * a12
    c22 = a00 * a11 - a01 * a01
    return ((c00 * b0 + c01 * b1 + c02 * b2) / det, (c01 * b0 + c11 * b1 + c12 * b2) / det,
            (c02 * b0 + c12 * b1 + c22 * b2) / det)


@njit(cache=True)
def ball_metric_clamp(k00, k01, k02, k11, k12, k22, p0, p1, p2, pmax):
    """A contact's friction impulse p* outside its Coulomb ball ‖p‖ ≤ pmax brought onto it
    in the metric of its block K = J M⁻¹ Jᵀ: p = (K + μI)⁻¹ K p*, μ > 0 with ‖p‖ = pmax
    (Newton on 1/‖p(μ)‖ − 1/pmax, monotone from μ = 0). At the sweep's fixed point the
    sliding velocity J V = −μ p opposes the impulse (maximal dissipation), in the twist row
    too; scaling p* instead leaves J V ∝ K p, which for a narrow patch (K's twist entry
    ∝ r̄²) makes a turning wheel slip along its track. Unused rows: k = 1 off the block, p = 0."""
    q0 = k00 * p0 + k01 * p1 + k02 * p2
    q1 = k01 * p0 + k11 * p1 + k12 * p2
    q2 = k02 * p0 + k12 * p1 + k22 * p2
    mu = 0.0
    x0, x1, x2 = p0, p1, p2
    for _ in range(30):
        n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        if n <= pmax * (1.0 + 1e-10):
            break
        y0, y1, y2 = solve3(k00 + mu, k01, k02, k11 + mu, k12, k22 + mu, x0, x1, x2)
        slope = (x0 * y0 + x1 * y1 + x2 * y2) / (n * n * n)       # d(1/‖p‖)/dμ > 0
        if not slope > 0.0:
            break
        mu += (1.0 / pmax - 1.0 / n) / slope
        x0, x1, x2 = solve3(k00 + mu, k01, k02, k11 + mu, k12, k22 + mu, q0, q1, q2)
    n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    if not (n > 0.0 and math.isfinite(n)):
        x0, x1, x2 = p0, p1, p2
        n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    s = pmax / n if n > pmax else 1.0
    return x0 * s, x1 * s, x2 * s


@njit(cache=True, _nrt=False)
def sweep_velocities(baumgarte, erp_rate, rows, work, vel, omega, row_direct):
    """One sweep of sequential impulses over every block of rows; returns the largest |Δp|.
    In each block: its equality and limit rows (limits one-sided), then its motor (a soft
    row) or its friction rows (eq. 15 and the ball clamp of eq. 16). Rows in the direct
    solve (row_direct = 1: equality rows of tree joints, active limits) are skipped.
    `_nrt=False` (both sweeps: they allocate nothing): no reference counting of the arrays
    the helpers inlined per block take (~12 % of a sweep over a heap's contacts)."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    row_lo, row_hi, row_bias, row_joint = rows.lo, rows.hi, rows.bias, rows.joint
    row_mass_scale, row_impulse_scale = rows.mass_scale, rows.impulse_scale
    row_minv_jt, row_mass = work.minv_jt, work.mass
    residual = 0.0
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        if row_direct[start] == 1 and not block_iterates(row_kind, row_active, start, end, row_direct):
            continue            # equality rows solved directly, nothing else in use
        a = row_body[start, 0]
        b = row_body[start, 1]
        f0, nf = free_rows(row_kind, start, end)
        v = load12(a, b, vel, omega)
        # constraint rows: equality, then limits (one-sided)
        v, change = constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt, start,
                                    f0, erp_rate if baumgarte else 0.0, row_lambda, row_direct, True, v)
        if f0 - start > 2 and row_joint[start] < 0:
            # a contact patch: its normal rows once more, together (their system has rank 3
            # for four points — the slowest part of Gauss–Seidel on a stack)
            for _ in range(PATCH_PASSES - 1):
                v, _c = constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt,
                                        start, f0, erp_rate if baumgarte else 0.0, row_lambda, row_direct, True, v)
        residual = max(residual, change)
        if nf == 0 or row_active[f0] == FREE_OFF:
            store12(a, b, v, vel, omega)
            continue
        if row_active[f0] == FREE_MOTOR:
            # motor: velocity target or position servo, one soft row (write_drive_rows)
            jv = jv12(row_J, f0, v)
            dl = -row_mass[f0] * row_mass_scale[f0] * (jv + row_bias[f0]) - row_impulse_scale[f0] * row_lambda[f0]
            old = row_lambda[f0]
            new = min(max(old + dl, row_lo[f0]), row_hi[f0])
            dl = new - old
            row_lambda[f0] = new
            v = add12(row_minv_jt, f0, dl, v)
            residual = max(residual, abs(dl))
            store12(a, b, v, vel, omega)
            continue
        pmax = row_hi[f0]
        if row_active[f0] == FREE_CONTACT:
            pmax *= normal_sum(row_lambda, start, f0)     # a contact's ball: μ Σλ_n
        # friction: (B M⁻¹ Bᵀ) Δp = −B V  (eq. 15), then the ball clamp (eq. 16)
        r0 = -jv12(row_J, f0, v)
        k00 = coupling(row_J, row_minv_jt, f0, f0)
        d0 = d1 = d2 = 0.0
        k01 = k02 = k12 = 0.0
        k11 = k22 = 1.0
        if nf == 1:
            if k00 > 0.0:
                d0 = r0 / k00
        else:
            r1 = -jv12(row_J, f0 + 1, v)
            k01 = coupling(row_J, row_minv_jt, f0, f0 + 1)
            k11 = coupling(row_J, row_minv_jt, f0 + 1, f0 + 1)
            if nf == 2:
                det = k00 * k11 - k01 * k01
                if det > 0.0:
                    d0 = (r0 * k11 - k01 * r1) / det
                    d1 = (k00 * r1 - k01 * r0) / det
            else:
                r2 = -jv12(row_J, f0 + 2, v)
                k02 = coupling(row_J, row_minv_jt, f0, f0 + 2)
                k12 = coupling(row_J, row_minv_jt, f0 + 1, f0 + 2)
                k22 = coupling(row_J, row_minv_jt, f0 + 2, f0 + 2)
                c00 = k11 * k22 - k12 * k12
                c01 = k02 * k12 - k01 * k22
                c02 = k01 * k12 - k02 * k11
                det = k00 * c00 + k01 * c01 + k02 * c02
                if det > 0.0:
                    c11 = k00 * k22 - k02 * k02
                    c12 = k01 * k02 - k00 * k12
                    c22 = k00 * k11 - k01 * k01
                    d0 = (c00 * r0 + c01 * r1 + c02 * r2) / det
                    d1 = (c01 * r0 + c11 * r1 + c12 * r2) / det
                    d2 = (c02 * r0 + c12 * r1 + c22 * r2) / det
        p0 = row_lambda[f0] + d0
        p1 = (row_lambda[f0 + 1] + d1) if nf > 1 else 0.0
        p2 = (row_lambda[f0 + 2] + d2) if nf > 2 else 0.0
        n = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
        if n > pmax and row_active[f0] == FREE_CONTACT and nf > 1 and pmax > 0.0:
            p0, p1, p2 = ball_metric_clamp(k00, k01, k02, k11, k12, k22, p0, p1, p2, pmax)
        elif n > pmax:
            s = pmax / n
            p0 *= s
            p1 *= s
            p2 *= s
        d0 = p0 - row_lambda[f0]
        row_lambda[f0] = p0
        v = add12(row_minv_jt, f0, d0, v)
        dn = d0 * d0
        if nf > 1:
            d1 = p1 - row_lambda[f0 + 1]
            row_lambda[f0 + 1] = p1
            v = add12(row_minv_jt, f0 + 1, d1, v)
            dn += d1 * d1
        if nf > 2:
            d2 = p2 - row_lambda[f0 + 2]
            row_lambda[f0 + 2] = p2
            v = add12(row_minv_jt, f0 + 2, d2, v)
            dn += d2 * d2
        residual = max(residual, math.sqrt(dn))
        store12(a, b, v, vel, omega)
    return residual


@njit(cache=True, _nrt=False)
def sweep_positions(rate, rows, work, pvel, pomega, row_direct):
    """One split-impulse sweep: pseudo-velocities V* with J V* = −rate·C on the constraint
    rows (rate = ERP/h); the free rows of a joint held by static friction (sticking) get
    J V* = 0, so drift correction cannot creep through static friction. Rows in the
    direct solve (row_direct = 1) are skipped."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    row_lo, row_hi, row_bias = rows.lo, rows.hi, rows.bias
    row_minv_jt, row_mass, row_lambda_pos = work.minv_jt, work.mass, work.impulse_pos
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        f0, nf = free_rows(row_kind, start, end)
        sticking = False
        if nf > 0 and (row_active[f0] == FREE_FRICTION or row_active[f0] == FREE_CONTACT):
            n = 0.0
            for r in range(f0, end):
                n += row_lambda[r] * row_lambda[r]
            radius = row_hi[f0]
            if row_active[f0] == FREE_CONTACT:
                radius *= normal_sum(row_lambda, start, f0)
            sticking = math.sqrt(n) < radius * (1.0 - 1e-9) and row_direct[f0] != 1   # (locked: direct)
        if row_direct[start] == 1 and not sticking and not block_iterates(row_kind, row_active, start, f0, row_direct):
            continue
        a = row_body[start, 0]
        b = row_body[start, 1]
        v = load12(a, b, pvel, pomega)
        v, _ = constraint_rows(row_J, row_C, row_active, row_lo, row_hi, row_bias, row_mass, row_minv_jt, start, f0,
                               rate, row_lambda_pos, row_direct, False, v)
        if sticking:
            for r in range(f0, end):
                if row_mass[r] > 0.0:
                    dl = -row_mass[r] * jv12(row_J, r, v)
                    row_lambda_pos[r] += dl
                    v = add12(row_minv_jt, r, dl, v)
        store12(a, b, v, pvel, pomega)


# ---------------------------------------------------------------------------- contact blocks
# A contact block (contacts.py: ≤ 4 normal rows, then 2-3 friction rows at the patch centre)
# is swept with its couplings K = J M⁻¹ Jᵀ computed once per substep (prepare_contact_blocks):
# the rows' speeds J·V are read once per sweep, the normal rows' projected Gauss–Seidel runs
# on K (the same iterates as sweeping the rows one by one on the bodies' velocities: a pass
# costs a few multiplications per row instead of 24), and their impulse changes go onto the
# bodies once. ContactWork.block per block:
CB_NN, CB_FF, CB_W, CB_D = 0, 16, 25, 29    # K_nn 4×4, K_ff 3×3, then scratch: J·V + b, Δλ of the normal rows
MAX_PATCH = 4


@njit(cache=True)
def prepare_contact_blocks(rows, work, block):
    """The couplings of every contact block's rows (J M⁻¹ Jᵀ: normal × normal, friction ×
    friction) into block (CB_* layout) from prepare_rows' M⁻¹Jᵀ; rows not
    in use couple by 0. Returns their number if every one has ≤ MAX_PATCH normal rows, else 0
    (the contacts are then swept row by row, sweep_velocities): a count, not a view, so that
    callers compiled without reference counts can take block[:count]."""
    block_start, block_count, row_kind = rows.block_start, rows.block_count, rows.kind
    row_J, row_minv_jt, row_mass = rows.J, work.minv_jt, work.mass
    nb = block_start.shape[0]
    for k in range(nb):
        start = block_start[k]
        end = start + block_count[k]
        f0, nf = free_rows(row_kind, start, end)
        npt = f0 - start
        if npt > MAX_PATCH or nf > 3:
            return 0
        # (only the entries of rows the block has are read)
        for i in range(npt):
            for j in range(i, npt):
                kij = 0.0
                if row_mass[start + i] > 0.0 and row_mass[start + j] > 0.0:
                    kij = coupling(row_J, row_minv_jt, start + i, start + j)
                block[k, CB_NN + 4 * i + j] = kij
                block[k, CB_NN + 4 * j + i] = kij
        for i in range(nf):
            for j in range(i, nf):
                kij = 0.0
                if row_mass[f0 + i] > 0.0 and row_mass[f0 + j] > 0.0:
                    kij = coupling(row_J, row_minv_jt, f0 + i, f0 + j)
                block[k, CB_FF + 3 * i + j] = kij
                block[k, CB_FF + 3 * j + i] = kij
    return nb


@njit(cache=True, _nrt=False)
def sweep_contacts(baumgarte, erp_rate, tol, rows, work, vel, omega, block):
    """One sweep of sequential impulses over the contact blocks on their couplings (block,
    prepare_contact_blocks); the same rows and clamps as sweep_velocities: the normal rows
    (one-sided) by projected Gauss–Seidel on K_nn, up to PATCH_PASSES passes or until a
    pass changes no impulse by more than tol, then the friction rows' coupled solve (eq. 15)
    and Coulomb ball (eq. 16, ball_metric_clamp). Returns the largest change of a row's
    impulse (normal rows) or of a block's friction impulse (its norm) in this sweep."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    row_lo, row_hi, row_bias = rows.lo, rows.hi, rows.bias
    row_minv_jt, row_mass = work.minv_jt, work.mass
    rate = erp_rate if baumgarte else 0.0
    residual = 0.0
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        a = row_body[start, 0]
        b = row_body[start, 1]
        f0, nf = free_rows(row_kind, start, end)
        npt = f0 - start
        v = load12(a, b, vel, omega)
        for i in range(npt):
            r = start + i
            block[k, CB_D + i] = 0.0
            w = 0.0
            if row_active[r] != 0 and row_mass[r] != 0.0:
                w = jv12(row_J, r, v) + rate * row_C[r] + row_bias[r]
            block[k, CB_W + i] = w
        # the normal rows: projected Gauss–Seidel on K_nn (their system has rank 3 for four
        # points — the slowest part of Gauss–Seidel on a stack — hence several passes)
        for _ in range(PATCH_PASSES if npt > 2 else 1):
            largest = 0.0
            for i in range(npt):
                r = start + i
                if row_active[r] == 0 or row_mass[r] == 0.0:
                    continue
                old = row_lambda[r]
                new = min(max(old - row_mass[r] * block[k, CB_W + i], row_lo[r]), row_hi[r])
                dl = new - old
                if dl == 0.0:
                    continue
                row_lambda[r] = new
                block[k, CB_D + i] += dl
                for j in range(npt):
                    block[k, CB_W + j] += block[k, CB_NN + 4 * j + i] * dl
                largest = max(largest, abs(dl))
            if largest <= tol:
                break
        for i in range(npt):
            d = block[k, CB_D + i]
            if d != 0.0:
                v = add12(row_minv_jt, start + i, d, v)
                residual = max(residual, abs(d))
        if nf == 0 or row_active[f0] != FREE_CONTACT:
            store12(a, b, v, vel, omega)
            continue
        pmax = row_hi[f0] * normal_sum(row_lambda, start, f0)     # a contact's ball: μ Σλ_n
        # friction: (B M⁻¹ Bᵀ) Δp = −B V  (eq. 15), then the ball clamp (eq. 16)
        r0 = -jv12(row_J, f0, v)
        k00 = block[k, CB_FF]
        d0 = d1 = d2 = 0.0
        k01 = k02 = k12 = 0.0
        k11 = k22 = 1.0
        if nf == 1:
            if k00 > 0.0:
                d0 = r0 / k00
        else:
            r1 = -jv12(row_J, f0 + 1, v)
            k01 = block[k, CB_FF + 1]
            k11 = block[k, CB_FF + 4]
            if nf == 2:
                det = k00 * k11 - k01 * k01
                if det > 0.0:
                    d0 = (r0 * k11 - k01 * r1) / det
                    d1 = (k00 * r1 - k01 * r0) / det
            else:
                r2 = -jv12(row_J, f0 + 2, v)
                k02 = block[k, CB_FF + 2]
                k12 = block[k, CB_FF + 5]
                k22 = block[k, CB_FF + 8]
                c00 = k11 * k22 - k12 * k12
                c01 = k02 * k12 - k01 * k22
                c02 = k01 * k12 - k02 * k11
                det = k00 * c00 + k01 * c01 + k02 * c02
                if det > 0.0:
                    c11 = k00 * k22 - k02 * k02
                    c12 = k01 * k02 - k00 * k12
                    c22 = k00 * k11 - k01 * k01
                    d0 = (c00 * r0 + c01 * r1 + c02 * r2) / det
                    d1 = (c01 * r0 + c11 * r1 + c12 * r2) / det
                    d2 = (c02 * r0 + c12 * r1 + c22 * r2) / det
        p0 = row_lambda[f0] + d0
        p1 = (row_lambda[f0 + 1] + d1) if nf > 1 else 0.0
        p2 = (row_lambda[f0 + 2] + d2) if nf > 2 else 0.0
        n = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
        if n > pmax and nf > 1 and pmax > 0.0:
            p0, p1, p2 = ball_metric_clamp(k00, k01, k02, k11, k12, k22, p0, p1, p2, pmax)
        elif n > pmax:
            s = pmax / n if n > 0.0 else 0.0
            p0 *= s
            p1 *= s
            p2 *= s
        d0 = p0 - row_lambda[f0]
        row_lambda[f0] = p0
        v = add12(row_minv_jt, f0, d0, v)
        dn = d0 * d0
        if nf > 1:
            d1 = p1 - row_lambda[f0 + 1]
            row_lambda[f0 + 1] = p1
            v = add12(row_minv_jt, f0 + 1, d1, v)
            dn += d1 * d1
        if nf > 2:
            d2 = p2 - row_lambda[f0 + 2]
            row_lambda[f0 + 2] = p2
            v = add12(row_minv_jt, f0 + 2, d2, v)
            dn += d2 * d2
        residual = max(residual, math.sqrt(dn))
        store12(a, b, v, vel, omega)
    return residual


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True, inline="always")
def record_solve(stats, iterations, residual, solve_ticks, capped):
    """Write one solve's iterations, final residual, time (ticks) and cap into stats."""
    stats[S_ITERATIONS] = iterations
    stats[S_RESIDUAL] = residual
    stats[S_SOLVE_TICKS] = solve_ticks
    stats[S_CAPPED] = 1.0 if capped else 0.0
    if capped:
        stats[S_CAPPED_STEPS] += 1.0
    stats[S_TOTAL_ITERATIONS] += iterations


@njit(cache=True)
def contact_sweep(baumgarte, erp_rate, eps, crows, cwork, bodies, cdirect, cblock, swept):
    """One sweep of the contact rows: by blocks on their couplings (sweep_contacts) when
    prepare_contact_blocks made them, else row by row (sweep_velocities). Returns the
    largest change of a body's momentum |m Δv| (N·s) or angular momentum |I Δω| (N·m·s)
    over the sweep: how far the contacts still move the bodies. (Not the rows' own |Δλ|:
    the normal impulses of a statically indeterminate pile — a box on four corners, a
    box on four others — are not unique, and Gauss–Seidel keeps shifting them among the
    supports, ~1e-7 N·s a sweep in a settled 100-box heap, without moving anything.)"""
    n = crows.block_start.shape[0]
    if n == 0:
        return 0.0
    vel, omega = bodies.vel, bodies.omega
    for i in range(vel.shape[0]):
        for q in range(3):
            swept[i, q] = vel[i, q]
            swept[i, 3 + q] = omega[i, q]
    if cblock.shape[0] == n:
        sweep_contacts(baumgarte, erp_rate, eps, crows, cwork, vel, omega, cblock)
    else:
        sweep_velocities(baumgarte, erp_rate, crows, cwork, vel, omega, cdirect)
    return momentum_change(bodies, swept)


@njit(cache=True, inline="always")
def momentum_change(bodies, swept):
    """max over moving bodies of |m Δv| and |I Δω| (body frame: |diag(I) Rᵀ Δω|), Δ from swept."""
    vel, omega, quat, inv_mass, inertia = bodies.vel, bodies.omega, bodies.quat, bodies.inv_mass, bodies.inertia
    largest = 0.0
    for i in range(vel.shape[0]):
        if inv_mass[i] == 0.0:
            continue
        dx, dy, dz = vel[i, 0] - swept[i, 0], vel[i, 1] - swept[i, 1], vel[i, 2] - swept[i, 2]
        largest = max(largest, math.sqrt(dx * dx + dy * dy + dz * dz) / inv_mass[i])
        wx, wy, wz = rotate_inv(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3], omega[i, 0] - swept[i, 3],
                                omega[i, 1] - swept[i, 4], omega[i, 2] - swept[i, 5])
        lx, ly, lz = inertia[i, 0] * wx, inertia[i, 1] * wy, inertia[i, 2] * wz
        largest = max(largest, math.sqrt(lx * lx + ly * ly + lz * lz))
    return largest


@njit(cache=True)
def solve_velocities(params, h, rows, work, bodies, stats, row_direct, crows, cwork, cdirect, cblock, swept):
    """Sequential impulses until every |Δp| < ε, the iteration limit or the time cap; each
    sweep the joints' rows, then the contacts' (crows, cwork, cdirect: contact_views; cblock:
    prepare_contact_blocks)."""
    vel, omega = bodies.vel, bodies.omega
    max_it = int(params[P_ITERATIONS])
    eps = params[P_EPSILON]
    baumgarte = params[P_STABILIZATION] == BAUMGARTE
    erp_rate = params[P_ERP] / h
    cap = params[P_TIME_CAP_MS] / params[P_SUBSTEPS] * params[P_TICKS_PER_MS]
    t_start = ticks()
    it = 0
    residual = 0.0
    capped = False
    while it < max_it:
        residual = sweep_velocities(baumgarte, erp_rate, rows, work, vel, omega, row_direct)
        residual = max(residual, contact_sweep(baumgarte, erp_rate, eps, crows, cwork, bodies, cdirect, cblock,
                                                              swept))
        it += 1
        if residual < eps:
            break
        if cap > 0.0 and ticks() - t_start > cap:
            capped = True
            break
    record_solve(stats, it, residual, ticks() - t_start, capped)


@njit(cache=True)
def solve_positions(params, h, rows, work, pvel, pomega, row_direct, crows, cwork, cdirect):
    """Split impulses: `position_iterations` sweeps of sweep_positions from V* = 0, the
    joints' rows then the contacts'."""
    row_lambda_pos = work.impulse_pos
    pvel[:, :] = 0.0
    pomega[:, :] = 0.0
    row_lambda_pos[:] = 0.0
    cwork.impulse_pos[:] = 0.0
    for it in range(int(params[P_POSITION_ITERATIONS])):
        sweep_positions(params[P_ERP] / h, rows, work, pvel, pomega, row_direct)
        if crows.block_start.shape[0] > 0:
            sweep_positions(params[P_ERP] / h, crows, cwork, pvel, pomega, cdirect)


# ---------------------------------------------------------------------------- direct path
# The rows of the spanning tree — every tree joint's equality rows and its active limit
# rows — are solved exactly in O(N) by the tree elimination of Baraff ("Linear-time
# dynamics using Lagrange multipliers", SIGGRAPH 96) in its articulated form
# (solvers/tree), from the bodies' momenta M̃ V⁻ plus the impulses of every other row.
# Those other rows — motors, friction (eq. 15-16, unchanged), limits outside the direct
# set, joints closing loops — stay sequential impulses around it (block Gauss–Seidel):
# one iteration = the direct solve given the others' impulses, then one sweep of the
# others; after the last sweep the direct solve runs once more, so its rows hold
# exactly on exit. A limit in the direct set whose impulse comes out pulling (the joint
# leaves its stop) is handed back to the one-sided sweeps for the rest of the substep
# and the direct solve is redone (release_pulling_limits). A joint whose friction
# impulse ends the sweeps inside its Coulomb ball (it sticks) is locked in that closing
# solve — its free rows join the direct set — so it is held exactly, not to ε
# (lock_sticking_friction); should the locked impulse come out beyond the ball, the
# joint slides: unlocked, its impulse on the ball, solved once more
# (release_slipping_friction).
#
# Geometric stiffness. With exact joint rows a long hanging chain still goes unstable at
# large steps: its tension T turns the rows' directions, a stiffness ~T/L that
# semi-implicit Euler treats explicitly. The step therefore uses the inertia
#     Ĩ_i = I_i + h² K̃_i,   K_i = Σ_joints (f·r) E − ½ (f rᵀ + r fᵀ)
# (f: the force of a joint's point rows on body i, r: its lever arm): the rotational
# geometric stiffness of constraint forces (Tournier et al., "Stable Constrained
# Dynamics", SIGGRAPH 2015), here bounded by its positive diagonal K̃ (Gershgorin row
# sums) so that Ĩ stays positive definite where K is not (Andrews, Teichmann & Kry,
# "Geometric Stiffness for Real-time Constrained Multibody Dynamics", Eurographics 2017,
# discuss that indefiniteness and the damping it costs). f comes from the impulses
# being solved for: the first iteration uses the warm start (last substep's); when other
# rows iterate around the direct solve, each further iteration uses the newest (a
# fixed-point iteration, stopping on ‖Δp‖ < ε as in eq. 17, the iteration limit or the
# cap). A tree with nothing else to iterate takes one exact solve per substep (with warm
# starting off, the fixed point is iterated so that K is not zero). Stabilization "none"
# leaves the inertia alone. It matters only for modes with h·ω ≳ 1, which it damps
# instead of amplifying.


@njit(cache=True)
def release_pulling_limits(tree, joint_type, joint_row_start, row_active, row_direct, row_lambda):
    """Active set of the limits in the direct solve: a limit row whose impulse came out
    pulling (λ of the wrong sign: the joint is leaving its stop) leaves the direct solve
    for the rest of the step (row_direct = −1), to the one-sided sequential impulses.
    Returns whether any did."""
    order, joint_m = tree.order, tree.joint_m
    changed = False
    for t in range(order.shape[0]):
        k = order[t]
        start = joint_row_start[k] + joint_m[k]
        for r in range(start, start + n_limit_rows(joint_type[k])):
            if row_direct[r] == 1 and row_lambda[r] * row_active[r] < 0.0:
                row_direct[r] = -1
                row_lambda[r] = 0.0
                changed = True
    return changed


@njit(cache=True, fastmath=_FAST, _nrt=False)
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
            rx, ry, rz = arm(row_J, r0, 6 * side)
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


@njit(cache=True, inline="always")
def impulse_norm(row_lambda, start, end):
    """|λ| over the rows start…end−1 (a joint's free rows: its friction impulse)."""
    n = 0.0
    for r in range(start, end):
        n += row_lambda[r] * row_lambda[r]
    return math.sqrt(n)


@njit(cache=True)
def lock_sticking_friction(tree, joint_type, joint_row_start, row_active, row_hi, row_lambda, row_direct):
    """Static friction on the direct path: the free rows in friction of every tree joint
    whose impulse lies strictly inside its Coulomb ball (eq. 16, seed 001: the joint
    sticks) get row_direct = 1, so that select_rows locks the joint in the closing direct
    solve, which then holds it exactly (the sweeps around the direct solve stop at ε).
    Returns whether any joint was locked."""
    order, joint_m = tree.order, tree.joint_m
    locked = False
    for t in range(order.shape[0]):
        k = order[t]
        jt = joint_type[k]
        nf = N_FREE[jt]
        f0 = joint_row_start[k] + joint_m[k] + N_LIMIT[jt]
        if nf == 0 or row_active[f0] != FREE_FRICTION or row_direct[f0] != 0:
            continue
        if impulse_norm(row_lambda, f0, f0 + nf) < row_hi[f0] * (1.0 - 1e-9):
            for r in range(f0, f0 + nf):
                row_direct[r] = 1
            locked = True
    return locked


@njit(cache=True)
def release_slipping_friction(tree, joint_type, joint_row_start, row_hi, row_direct, row_lambda):
    """A joint locked by static friction whose friction impulse came out of its Coulomb
    ball in the direct solve (it slides) is unlocked for the rest of the substep
    (row_direct = −1), its impulse put on the ball (eq. 16, seed 001). Returns whether
    any was."""
    order, joint_m = tree.order, tree.joint_m
    changed = False
    for t in range(order.shape[0]):
        k = order[t]
        jt = joint_type[k]
        nf = N_FREE[jt]
        f0 = joint_row_start[k] + joint_m[k] + N_LIMIT[jt]
        if nf == 0 or row_direct[f0] != 1:
            continue
        n = impulse_norm(row_lambda, f0, f0 + nf)
        if n > row_hi[f0]:
            s = row_hi[f0] / n
            for r in range(f0, f0 + nf):
                row_direct[r] = -1
                row_lambda[r] *= s
            changed = True
    return changed


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def direct_velocities(params, h, stats, may_iterate, bodies, joints, rows, work, tree, crows, cwork, cdirect, cblocks,
                      swept):
    """The velocity solve of one substep on the direct path (see the block comment above).
    With nothing to iterate (no limit outside the direct solve, motor, friction, loop or
    contact) and split impulses, the pseudo-velocities (J V* = −ERP·C/h) are solved in the
    same sweeps. Contact rows (crows, cwork, cdirect; cblocks: ContactWork.block) iterate
    like loop joints. Returns
    the number of blocks with rows that iterate."""
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
    max_it = int(params[P_ITERATIONS])
    eps = params[P_EPSILON]
    stabilization = params[P_STABILIZATION]
    use_k = stabilization != NO_STABILIZATION
    rate = params[P_ERP] / h if stabilization == BAUMGARTE else 0.0
    targets = stabilization != NO_STABILIZATION
    cap = params[P_TIME_CAP_MS] / params[P_SUBSTEPS] * params[P_TICKS_PER_MS]
    t_start = ticks()
    # the rows of the direct solve: equality rows of the tree, active limits (with no
    # limit, motor or friction anywhere they are the equality rows, chosen once per run)
    if may_iterate:
        for t in range(order.shape[0]):
            k = order[t]
            for r in range(joint_row_start[k] + joint_m[k], joint_row_start[k] + joint_row_count[k]):
                # a speculative limit (joint_rows.speculative_limits: in force, C = 0) iterates
                row_direct[r] = -1 if (row_active[r] != 0 and row_C[r] == 0.0 and row_kind[r] == ROW_LIMIT) else 0
        select_rows(tree, joint_type, joint_row_start, row_active, True, row_direct)
    if params[P_WARM_START] == 0.0:
        # the impulses of the direct rows only seed the geometric stiffness: cold, from 0
        for t in range(order.shape[0]):
            k = order[t]
            for i in range(joint_mdir[k]):
                row_lambda[joint_rows[k, i]] = 0.0
    # not with loop joints (their rows, swept around the direct solve, would pull against it)
    # nor with post_projection on every step (it takes the drift; a smaller one only hands its
    # Newton steps a chord step's precision: 6e-5 m instead of 1e-5 on a whipping 30-link chain)
    every_step = params[P_PROJECTION] > 0.0 and params[P_PROJECTION_ABOVE] == 0.0
    predict = stabilization == SPLIT and tree.loop_joints.shape[0] == 0 and not every_step
    predict_drift(h, params[P_ERP] if predict else 0.0, tree, joint_type, joint_body, row_J, row_C, body_inv_mass,
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
    capped = False
    locked = False          # some joint is locked by its static friction (the closing solve)
    cblock = cblocks[:0]
    while True:
        if factor:
            known = n_iter if rows_done else -1
            n_iter = refactor(h, use_k, targets, known, may_iterate, rows_done, bodies, joints, rows, work, tree, crows,
                              cwork, cdirect)
            if n_iter > 0 and crows.block_start.shape[0] > 0:
                cblock = cblocks[:prepare_contact_blocks(crows, cwork, cblocks)]
            if it == 0 and not rows_done and n_iter > 0:
                warm_start(params[P_WARM_START] != 0.0, rows, work, body_vel, body_omega, row_direct, False)
                warm_start(params[P_WARM_START] != 0.0, crows, cwork, body_vel, body_omega, cdirect, True)
            factor = False
        positions = n_iter == 0 and (stabilization == SPLIT or stabilization == SHAKE) and \
            params[P_POSITION_ITERATIONS] > 0
        # rows of the direct solve, given the others' impulses: momenta M̃ V⁻ + Jᵀλ in, V out
        tree_momentum(order, roots, joint_child, body_inv_mass, body_I, body_v0, body_w0, body_z)
        if n_iter > 0:
            add_iterative_impulses(rows, work, row_lambda, row_direct, body_z)
            add_iterative_impulses(crows, cwork, crows.impulse, cdirect, body_z)
        if positions:
            fill2d(body_pvel, 0.0)
            fill2d(body_pomega, 0.0)
            zero_tree(order, roots, joint_child, body_z2)
        articulated_solve(tree, joint_body, rate, body_z, body_vel, body_omega, positions, params[P_ERP] / h, body_z2, body_pvel, body_pomega)
        change = articulated_lambda(tree, row_J, body_z, body_vel, body_omega, row_lambda)
        released = release_pulling_limits(tree, joint_type, joint_row_start, row_active, row_direct, row_lambda)
        if last and locked:
            released = release_slipping_friction(tree, joint_type, joint_row_start, row_hi, row_direct,
                                                 row_lambda) or released
        if released:
            # a limit is letting go or a locked joint slides: it leaves the direct solve,
            # which is then redone
            select_rows(tree, joint_type, joint_row_start, row_active, True, row_direct)
            factor = True
            rows_done = False
            continue
        if last:
            break
        residual = change
        if n_iter > 0:
            # limits, motors, friction (eq. 15-16), loop joints: sequential impulses, one sweep
            residual = max(residual, sweep_velocities(stabilization == BAUMGARTE, params[P_ERP] / h, rows, work, body_vel, body_omega, row_direct))
            residual = max(residual, contact_sweep(stabilization == BAUMGARTE, params[P_ERP] / h, eps, crows, cwork,
                                                   bodies, cdirect, cblock, swept))
        it += 1
        done = False
        if n_iter == 0 and (not use_k or params[P_WARM_START] != 0.0):
            # one exact solve, nothing left to iterate: the geometric stiffness comes from
            # the last substep's impulses (the warm start), as with any iteration budget
            residual = 0.0
            done = True
        elif residual < eps or it >= max_it:
            done = True
        elif cap > 0.0 and ticks() - t_start > cap:
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
                select_rows(tree, joint_type, joint_row_start, row_active, True, row_direct)
                factor = True
                rows_done = False
            continue
        # next fixed-point iterate of the geometric stiffness, from the newest impulses
        factor = use_k
        rows_done = True
    record_solve(stats, it, residual, ticks() - t_start, capped)
    return n_iter


@njit(cache=True)
def direct_positions(params, h, joints, rows, work, tree, crows, cwork, cdirect):
    """Split impulses on the direct path when some rows iterate (else direct_velocities
    did it): pseudo-velocities V* with J V* = −ERP·C/h, the rows of the direct solve by
    the direct solve on the velocity solve's factor, limits outside it, sticking friction
    rows and loop joints by sweep_positions around it, `position_iterations` times,
    ending on the direct solve."""
    joint_body = joints.body
    row_lambda_pos, pvel, pomega = work.impulse_pos, work.pvel, work.pomega
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    row_direct = tree.row_direct
    body_z, body_z2 = tree.body_z, tree.body_z2
    pvel[:, :] = 0.0
    pomega[:, :] = 0.0
    row_lambda_pos[:] = 0.0
    cwork.impulse_pos[:] = 0.0
    n_pos = int(params[P_POSITION_ITERATIONS])
    if n_pos == 0:
        return
    rate = params[P_ERP] / h
    for it in range(n_pos + 1):
        zero_tree(order, roots, joint_child, body_z)
        add_iterative_impulses(rows, work, row_lambda_pos, row_direct, body_z)
        add_iterative_impulses(crows, cwork, cwork.impulse_pos, cdirect, body_z)
        articulated_solve(tree, joint_body, rate, body_z, pvel, pomega, False, 0.0, body_z2, pvel, pomega)
        if it < n_pos:
            sweep_positions(rate, rows, work, pvel, pomega, row_direct)
            if crows.block_start.shape[0] > 0:
                sweep_positions(rate, crows, cwork, pvel, pomega, cdirect)


@njit(cache=True)
def impulse_kernel(n_steps, dt, t0, params, stats, env, bodies, loads, joints, drives, rows, work, tree, contacts, proj):
    """Advance n_steps steps of dt, each in `substeps` substeps. Rows must hold the current
    poses on entry and hold the final ones on return. params[P_DIRECT]: the equality rows
    of the tree (order, …: tree.TreePlan) are solved directly; params[P_MAY_ITERATE]:
    some joint has a limit, friction or a motor. Contacts (physics/contacts.py ContactData)
    are found at the start of each substep and their rows swept after the joints'. proj
    (projection.Projection): the SHAKE correction's factor (stabilization "shake"). Returns
    the steps done before a blow-up (n_steps when none)."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_inertia = bodies.inv_inertia
    joint_type = joints.type
    joint_row_start = joints.row_start
    row_active = rows.active
    force_acc, torque_acc, body_pvel, body_pomega = work.force_acc, work.torque_acc, work.pvel, work.pomega
    body_inv_inertia_world = work.inv_inertia_world
    row_direct = tree.row_direct
    gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
    substeps = int(params[P_SUBSTEPS])
    h = dt / substeps
    warm = params[P_WARM_START] != 0.0
    shake = params[P_STABILIZATION] == SHAKE
    split = params[P_STABILIZATION] == SPLIT or shake
    direct = params[P_DIRECT] != 0.0
    may_iterate = params[P_MAY_ITERATE] != 0.0
    n_project = int(params[P_PROJECTION])
    # the energy projection: only with ideal joints (a limit's impact, friction and motors
    # dissipate or drive) and the loads' work known (not with ropes or the mouse spring)
    keep_energy = params[P_KEEP_ENERGY] != 0.0 and not may_iterate
    grounded, energy = proj.grounded, proj.energy
    stats[S_CAPPED_STEPS] = 0.0
    stats[S_TOTAL_ITERATIONS] = 0.0
    proj.fresh[0] = 0                   # the poses may have been edited since the last call
    solve_ticks = 0.0
    if direct and not may_iterate:
        select_rows(tree, joint_type, joint_row_start, row_active, False, row_direct)
    # bounds and drives of the limit and free rows; with no limit, friction or motor
    # anywhere once (it switches every free row off), else every substep
    write_drive_rows(joints, drives, rows, h)
    crows0, cwork0, cdirect0 = contact_views(contacts, work, 0)
    for step in range(n_steps):
        solve_ticks = 0.0
        if keep_energy:                     # E_n per grounded group; the loads' work from 0
            if step == 0:
                projection.group_energies(bodies, gravity, grounded, energy, 0)
                projection.open_energy_budget(energy)
            else:                           # as the last step's energy projection left it
                energy[:, 0] = energy[:, projection.E_AFTER]
            energy[:, 1] = 0.0
            energy[:, 5] = 1.0              # no contact on the group yet
        for sub in range(substeps):
            t = t0 + step * dt + sub * h
            if may_iterate and (step > 0 or sub > 0):
                write_drive_rows(joints, drives, rows, h)
            # contacts at the poses of the substep's start, ġ⁻ from its velocities
            # contacts.prepare_contacts written out: no call that counts references to the
            # contact bundles (~1 µs) when nothing is near or nothing was found
            n_pairs = broad_contacts(contacts, bodies)
            m = narrow_contacts(contacts, n_pairs) if n_pairs > 0 else 0
            if m > 0:
                n_contacts = write_contact_rows(contacts, bodies, h, m)     # blocks: touching pairs
            else:
                contacts.buffers.n[N_ROWS] = 0
                contacts.buffers.n[N_BLOCKS] = 0
                n_contacts = 0
            if detection_overflowed(contacts) and sub == 0:
                return step                 # nothing moved yet: redone with grown buffers
            if n_contacts > 0:
                crows, cwork, cdirect = contact_views(contacts, work, n_contacts)
            else:                           # the empty views, made once per call
                crows, cwork, cdirect = crows0, cwork0, cdirect0
            gather_forces(t, bodies, loads, force_acc, torque_acc)
            if keep_energy:                 # the loads' work, by the trapezoid over the substep
                projection.mark_touching(grounded, energy, crows)
                projection.add_load_work(bodies, force_acc, torque_acc, grounded, energy, 1, 0.5 * h)
            integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
            if may_iterate:
                speculative_limits(bodies, joints, rows, h, LIMIT_REACH)   # limits the joint may reach
            if direct:
                n_iter = direct_velocities(params, h, stats, may_iterate, bodies, joints, rows, work, tree, crows, cwork,
                                           cdirect, contacts.work.block, contacts.work.swept)
                solve_ticks += stats[S_SOLVE_TICKS]
                if split and (n_iter > 0 or params[P_POSITION_ITERATIONS] == 0):
                    direct_positions(params, h, joints, rows, work, tree, crows, cwork, cdirect)
            else:
                world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world)
                prepare_rows(rows, bodies, work, row_direct)
                warm_start(warm, rows, work, body_vel, body_omega, row_direct, True)
                cblock = contacts.work.block[:0]
                if n_contacts > 0:
                    prepare_rows(crows, bodies, cwork, cdirect)
                    cblock = contacts.work.block[:prepare_contact_blocks(crows, cwork, contacts.work.block)]
                    warm_start(warm, crows, cwork, body_vel, body_omega, cdirect, True)
                solve_velocities(params, h, rows, work, bodies, stats, row_direct, crows, cwork, cdirect, cblock,
                                 contacts.work.swept)
                solve_ticks += stats[S_SOLVE_TICKS]
                if split:
                    solve_positions(params, h, rows, work, body_pvel, body_pomega, row_direct, crows, cwork, cdirect)
            if shake:
                projection.shake_prepare(proj, bodies, joints, rows)     # the rows at q_n
            if split:
                body_vel += body_pvel
                body_omega += body_pomega
            integrate_positions(bodies, h)
            if split:
                body_vel -= body_pvel
                body_omega -= body_pomega
            readout = step == n_steps - 1 and sub == substeps - 1 and n_project == 0
            compute_joint_rows(bodies, joints, rows, readout and not shake)
            if shake:
                projection.shake_correction(h, SHAKE_TOLERANCE, SHAKE_ITERATIONS, bodies, joints, rows, proj, readout)
            if n_contacts > 0:
                keep_contact_impulses(contacts, n_contacts)
            else:                           # nothing touched: no warm start (its call alone costs ~1 µs)
                contacts.buffers.n[N_PREV] = 0
            if keep_energy:
                energy[:, 2] = 0.0
                projection.add_load_work(bodies, force_acc, torque_acc, grounded, energy, 2, 0.5 * h)
                if sub < substeps - 1:
                    energy[:, 1] += energy[:, 2]
        if n_project > 0:                   # post-stabilization: seed 004 eqs. 15-16
            projection.project_positions_step(h, n_project, params[P_PROJECTION_ABOVE], bodies, joints, rows, proj,
                                              stats[S_VIOLATION:S_VIOLATION + 4], step == n_steps - 1)
            proj.fresh[0] = 0
        if keep_energy:                     # back to E_n + the loads' work (Dinev, Liu & Kavan 2018)
            projection.energy_projection(bodies, gravity, grounded, energy)
        stats[S_SOLVE_TICKS] = solve_ticks
        if blown_up(bodies, max_speed, max_spin):
            return step
        if detection_overflowed(contacts):
            compute_joint_rates(bodies, joints, rows)
            return step + 1                 # a later substep overflowed: grow before the next step
    compute_joint_rates(bodies, joints, rows)
    return n_steps


# ---------------------------------------------------------------------------- the solver object
# False: seed 001's iterative solver on every joint graph (comparisons, benchmarks).
DIRECT_SOLVE = True
# A bound on the time of one direct solve (factor, solve, impulses) per joint of the
# tree, µs: measured 0.17–0.25 µs on a 2.6 GHz Xeon core (1000-link chain); kept wide so
# slower machines stay inside it.
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




class ImpulseSolver(SolverBase):
    """The `impulse` family: settings (SETTINGS), step, stats, and its caches — the tree
    plan and direct-path arrays of the joint graph, rebuilt on `model_changed`."""
    name = "impulse"
    description = "Sequential impulses with joint friction, seed 001."
    HONOURS = frozenset({"limits", "friction", "motors", "contacts", "restitution"})
    SETTINGS = SETTINGS

    def __init__(self):
        self.settings = defaults(SETTINGS)
        self.params = np.zeros(N_PARAMS)    # the settings as the kernel reads them (P_* layout)
        self.kernel_stats = np.zeros(N_STATS)   # S_* layout
        self.stats = SolverStats()
        self._tree = None                   # (plan, Tree bundle, Tree bundle without direct rows)
        self._pack()

    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(SETTINGS, values, "solver"))
        self._pack()

    def _pack(self):
        s, p = self.settings, self.params
        p[P_ITERATIONS], p[P_EPSILON], p[P_TIME_CAP_MS] = s["iterations"], s["epsilon"], s["time_cap_ms"]
        p[P_WARM_START] = 1.0 if s["warm_start"] else 0.0
        p[P_STABILIZATION] = STABILIZATIONS[s["stabilization"]]
        p[P_ERP], p[P_SUBSTEPS] = s["erp"], s["substeps"]
        p[P_POSITION_ITERATIONS] = s["position_iterations"]
        p[P_METHOD] = METHODS[s["method"]]

    def substep(self, dt):
        """The substep h = Δt/substeps (s)."""
        return dt / self.settings["substeps"]

    def model_changed(self, world):
        """The joint graph changed: drop the tree plan (rebuilt on the next step)."""
        self._tree = None

    def tree(self, world):
        """(TreePlan, Tree bundle, the same bundle with no row in the direct solve)."""
        if self._tree is None:
            m = world.model
            plan = build_tree_plan(m.joints.body, m.joints.type, static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia))
            tree = make_tree(plan, m.rows.count)
            self._tree = (plan, tree, tree._replace(row_direct=np.zeros(m.rows.count, np.int64)))
        return self._tree

    def uses_direct(self, world):
        """Whether the direct path runs for this joint graph and these settings."""
        s = self.settings
        return uses_direct_solve(self.tree(world)[0], s["iterations"], s["time_cap_ms"], s["substeps"],
                                 METHODS[s["method"]])

    def save_state(self, world):
        """What the step carries over beyond the world's state: the energy each grounded
        group is owed and its energy after the last step (keep_energy's budget)."""
        return projection.projection_for(world).energy[:, projection.E_OWED:].copy()

    def restore_state(self, world, saved):
        """Back to a saved budget (World.restore_state); a budget of another layout is
        dropped (the next step starts afresh)."""
        energy = projection.projection_for(world).energy
        if saved is not None and saved.shape == energy[:, projection.E_OWED:].shape:
            energy[:, projection.E_OWED:] = saved

    def energy_inactive(self, world):
        """Why keep_energy cannot act in this world (a short reason for the panel), or None:
        a joint with a limit, friction or a motor dissipates or drives, which the energy
        projection does not count."""
        m, c = world.model.joints, world.control.joints
        if m.limit_on.any() or (m.friction > 0.0).any() or (c.motor_mode != MOTOR_OFF).any():
            return "a joint has a limit, friction or a motor"
        return None

    def free_rows_used(self, world):
        """Per joint, 1 if its free rows are in use (friction or a motor)."""
        m, c = world.model.joints, world.control.joints
        return ((m.friction > 0.0) | (c.motor_mode != MOTOR_OFF)).astype(np.int64)

    def step(self, world, n, coupled=False):
        """n steps of Δt (impulse_kernel), on the direct path when uses_direct_solve says
        so; returns the steps done before a blow-up."""
        _, tree, no_direct = self.tree(world)
        direct = self.uses_direct(world)
        m, c = world.model.joints, world.control.joints
        # a joint with a limit, friction or a motor may have rows to iterate on some step
        may_iterate = bool(m.limit_on.any() or (m.friction > 0.0).any() or (c.motor_mode != MOTOR_OFF).any())
        if not direct:
            tree.row_direct[:] = 0
        self.params[P_TICKS_PER_MS] = ticks_per_ms()
        self.params[P_DIRECT] = 1.0 if direct else 0.0
        self.params[P_MAY_ITERATE] = 1.0 if may_iterate else 0.0
        env, bodies, loads, joints, drives, rows, work = world.kernel_bundles(self.free_rows_used(world), coupled)
        # the projection (post-stabilization, seed 004) runs inside the kernel after each step
        # on every step (post_projection) or on those drifting beyond projection_above — not
        # with limits: the projection holds the equality rows only and would push a joint
        # resting on its stop through it
        s = self.settings
        drift = s["projection_above"] > 0 and not m.limit_on.any()
        self.params[P_PROJECTION] = s["projection_iterations"] if s["post_projection"] or drift else 0
        self.params[P_PROJECTION_ABOVE] = 0.0 if s["post_projection"] else s["projection_above"]
        self.params[P_KEEP_ENERGY] = 1.0 if self.settings["keep_energy"] and not coupled else 0.0
        done, capped = 0, 0
        while done < n:
            chunk = n - done
            k = impulse_kernel(chunk, world.dt, world.time + done * world.dt, self.params, self.kernel_stats, env,
                               bodies, loads, joints, drives, rows, work, tree if direct else no_direct,
                               world.contact_data(), projection.projection_for(world))
            grew = world.contacts_stepped()
            done += k
            capped += int(self.kernel_stats[S_CAPPED_STEPS])
            if k < chunk and not grew:
                break                       # blew up
            if k < chunk:
                continue                    # the contact buffers grew: the rest of the chunk
        st, tpm = self.kernel_stats, self.params[P_TICKS_PER_MS]
        self.stats = SolverStats(int(st[S_ITERATIONS]), float(st[S_RESIDUAL]),
                                 float(st[S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0,
                                 bool(st[S_CAPPED]), capped, done)
        if self.params[P_PROJECTION] > 0 and done > 0:
            self.stats.record_projection(projection.Violation(*(float(v) for v in st[S_VIOLATION:S_VIOLATION + 4])))
        return done
