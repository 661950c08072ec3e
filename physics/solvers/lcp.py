"""The `lcp` solver (seeds 003, 004): each step one mixed LCP over the constraint rows.

Velocity-level time stepping (seed 003: Anitescu–Potra / Stewart–Trinkle): the rows of
the step are

    E  equality rows of the joints (bilateral): the spanning tree's, and the rows of the
       joints that close loops
    U  the one-sided and bounded rows: active joint limits (λ ≥ 0 or ≤ 0), joint friction
       (|λ| ≤ F·h) and motors (|λ| ≤ F_max·h, a position servo as a soft row), contact
       normals (λ_n ≥ 0) with their friction (|λ_t| ≤ μ Σλ_n)

and the step solves  V⁺ = V* + M⁻¹(Φ_E λ_E + J_Uᵀ λ_U),  Φ_Eᵀ V⁺ = 0,  with the rows of U
complementary to their bounds (dense.py states the bounded LCP).

Bilateral rows eliminated (seed 004 eqs. 12-14, corrected). With G = Φ_Eᵀ M⁻¹ Φ_E,

    M̂ = M⁻¹ − M⁻¹ Φ_E G⁻¹ Φ_Eᵀ M⁻¹                          (eq. 13: "−", not "+")
    A = J_U M̂ J_Uᵀ,   b = J_U V_f + bias,  V_f = M̂ M V*       (eq. 14, with M̃ᵀ)

M̂ is never formed: a product M̂ f is the O(N) tree solve of the impulse solver's direct
path (tree.articulated_factor / articulated_solve: momenta f in, velocities with
Φᵀ V = 0 out), so A is built column by column (|U| tree solves; bodies in no tree:
M⁻¹). The rows of joints closing loops (L, not in the tree) are eliminated densely in a
second Schur complement on M̂: G_L = J_L M̂ J_Lᵀ, factored by a pivoted Cholesky that
drops dependent rows (a four-bar of revolutes in 3-D: the loop's 5 rows have rank 2 on
top of the tree), A ← A − B G_L⁺ Bᵀ with B = J_U M̂ J_Lᵀ.

The LCP (method `auto`): Lemke's method (dense.lemke, exact, lexicographic so it
cannot cycle) when |U| ≤ lemke_max_rows, else projected Gauss–Seidel from the warm
start. Fallback rule: PGS also runs when Lemke fails (a ray, the pivot budget, a
non-finite pivot, round-off taking over, or a result whose residual is not below
LEMKE_RESIDUAL — PGS then starts from it) and when the time cap (lcp_time_cap_ms) is smaller than Lemke's
predicted time (LEMKE_NS_PER_N3 · n³, n = 2 × rows) — Lemke cannot be cut midway,
PGS can stop after any sweep with a feasible λ. Method `lemke` skips the prediction,
`pgs` always iterates.

Friction: a box (pyramid) per friction row, |λ_t| ≤ μ Σλ_n on each of the patch's
tangent rows t1, t2 and its twist row (physics/contacts.py writes them) — not the
impulse solver's Coulomb ball. Before each solve the tangent pair is turned so that t1
points along the contact's tangential velocity of that solve's free motion, so a
sliding contact gets exactly μ Σλ_n against its motion (the box only differs from the
ball for sticking contacts, where it allows up to √2 μ Σλ_n diagonally). Joint friction
is the same box over a joint's free rows (exact for one free row).

Impacts (seed 004 eqs. 8-14): a contact point impacts when it approaches faster than
the restitution threshold (ġ⁻ < −threshold, ġ⁻ the normal velocity at the start of the
step, before this step's forces act) and touches — or, with restitution, its gap closes
in the first half of the step at that speed (the impact is taken in the step in which
it happens; one reached in the second half touches and bounces in the next step, so the
impact times are not biased either way). The impacting points first take an impact
LCP: no forces, the touching contacts (with friction) and active limits, W = ġ⁺ + e ġ⁻
≥ 0 ⊥ S ≥ 0 (eq. 9) for the impacting ones and ġ⁺ ≥ 0 for the others; then the
contact LCP of the step runs from V⁺ + h M⁻¹ F with them as resting contacts. Every
other point with a gap is a speculative row (ġ ≥ −gap/h), so nothing sinks in. Each
impact's ġ⁻, ġ⁺, e and the kinetic energy before and after are in the stats
(LcpStats.impacts). With impact_lcp off, restitution is the impulse solver's velocity
target inside the one LCP.

Drift (lcp_stabilization): `split` — a second, position-level solve on pseudo-velocities
V^p with J V^p = −erp·C/h on the equality rows (the tree solve's second right-hand side
and the loops' G_L) and J V^p ≥ −erp·C/h on active limits and contact normals (C: a
contact's depth beyond the slop), sticking friction rows held at J V^p = 0, by PGS on the
same A; positions move with V + V^p, momentum with V. `baumgarte`: the bias erp·C/h in
the velocity LCP. `none`. Seed 004's projection (eqs. 15-18: positions onto g_E(q) = 0
by the mass-weighted least-change Newton step, then velocities onto ġ_E = 0) ends each
step inside the kernel (projection.project_step; the `projection` setting, on by default).
"""
from dataclasses import dataclass, field
from collections import namedtuple
import math

import numpy as np
from numba import njit

from ..clock import ticks, ticks_per_ms
from ..contacts import (N_NOW, S_THRESHOLD, contact_views, detection_overflowed, keep_contact_impulses,
                        prepare_contacts)
from ..integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from ..joint_rows import (FREE_CONTACT, FREE_FRICTION, FREE_MOTOR, FREE_OFF, MOTOR_OFF, ROW_FREE,
                          compute_joint_rates, compute_joint_rows, speculative_limits, write_drive_rows)
from ..joint_types import N_EQ, N_FREE, N_LIMIT
from ..quat import rotate_inv
from ..settings import Setting, checked, defaults
from .dense import (LEMKE_OK, LemkeWork, blcp_residual, blcp_residual_csr, lemke_work, pgs,
                        pivoted_cholesky, pivoted_solve,
                        solve_blcp_lemke, sparsity)
from .projection import Violation, project_step, projection_for
from .row_ops import world_inverse_inertia
from .base import SolverBase
from .stats import SolverStats
from .tree import (invert_tree_inertia, articulated_factor, articulated_lambda, articulated_solve, articulated_targets,
                         augmented_inertia, build_tree_plan, make_tree, select_rows, static_bodies, tree_momentum,
                         zero_tree)

# the kernel's params vector (LcpSolver._pack)
P_METHOD, P_LEMKE_MAX, P_PGS_ITERATIONS, P_PGS_TOLERANCE, P_TIME_CAP_MS, P_STABILIZATION, P_ERP, P_IMPACT, \
    P_TICKS_PER_MS, P_MAY_ITERATE, P_GEOMETRIC, P_PROJECTION = range(12)
N_PARAMS = 12
# a limit binds speculatively when its joint could reach it within this many steps at its rate
# at the step's start (joint_rows.speculative_limits; gravity and motors may speed it up)
LIMIT_REACH = 4.0
AUTO, LEMKE, PGS = 0, 1, 2
METHODS = {"auto": AUTO, "lemke": LEMKE, "pgs": PGS}
SPLIT, BAUMGARTE, NO_STABILIZATION = 0, 1, 2
STABILIZATIONS = {"split": SPLIT, "baumgarte": BAUMGARTE, "none": NO_STABILIZATION}
# kernel stats: last solve, counts over the call, capacity requests
S_METHOD, S_ROWS, S_SIZE, S_PIVOTS, S_SWEEPS, S_RESIDUAL, S_SOLVE_TICKS, S_CAPPED, S_CAPPED_STEPS, S_FALLBACKS, \
    S_LOOP_ROWS, S_LOOP_RANK, S_IMPACTS, S_NEED_ROWS, S_NEED_LOOPS, S_VIOLATION = range(16)
N_STATS = S_VIOLATION + 4          # the last projection's Violation (4 numbers) from S_VIOLATION on
# phases of a step
IMPACT_PHASE, VELOCITY_PHASE = 0, 1
# position roles of a U row in the split pass
POS_NONE, POS_BOUNDED, POS_FREE_ROW = 0, 1, 2
# predicted Lemke cost, ns per n³ with n = 2 × rows (about its LCP variables); kept wide
LEMKE_NS_PER_N3 = 2.0        # measured ≈ 1 ns per (2·rows)³ on this machine
IMPACT_COLUMNS = 9          # time, body a, body b, ġ⁻, ġ⁺, e, KE⁻, KE⁺, S (LcpStats.impacts)
IMPACT_CAPACITY = 1024
PGS_POSITION_SWEEPS = 50    # the split pass's PGS (a drift correction needs no exact solve)
LEMKE_RESIDUAL = 1e-8       # Lemke's λ is taken when its BLCP residual is below this × max(1, |b|)
LOOP_RANK_TOL = 1e-10       # loop rows whose pivot is below this × the largest are dependent

SETTINGS = (
    Setting("lcp_method", "choice", "auto", choices=tuple(METHODS), label="LCP method",
            help="LCP solver: auto (Lemke up to lemke_max_rows rows and within the time cap, else projected "
                 "Gauss-Seidel), lemke, or pgs. PGS also takes over when Lemke fails."),
    Setting("lemke_max_rows", "int", 64, 1, 400, label="Lemke rows",
            help="Largest number of one-sided and bounded rows solved by Lemke's method (its cost grows as the "
                 "cube); above it, projected Gauss-Seidel."),
    Setting("pgs_iterations", "int", 100, 1, 100000, label="PGS sweeps",
            help="Projected Gauss-Seidel: most sweeps per solve."),
    Setting("pgs_tolerance", "float", 1e-9, 0.0, 1e3, unit="N·s", label="PGS tol.",
            help="Projected Gauss-Seidel stops when every impulse change is below this (N·s)."),
    Setting("lcp_time_cap_ms", "float", 0.0, 0.0, 1000.0, unit="ms", label="time cap",
            help="Wall-clock budget of one LCP solve (ms); 0 = none. Lemke runs only when its predicted time fits; "
                 "PGS stops there with what it has."),
    Setting("lcp_stabilization", "choice", "split", choices=tuple(STABILIZATIONS), label="drift",
            help="Joint and contact drift: split (a position-level solve on pseudo-velocities), Baumgarte (a "
                 "velocity bias) or none."),
    Setting("lcp_erp", "float", 0.2, 0.0, 1.0, label="ERP",
            help="Share of the drift corrected per step by the split pass or Baumgarte (0-1)."),
    Setting("geometric_stiffness", "bool", False, label="geometric stiffness",
            help="Add h²K of the joint forces to the tree bodies' inertia (as the impulse solver's direct path), "
                 "which steadies long hanging chains at large steps but slows fast mechanisms."),
    Setting("impact_lcp", "bool", True, label="impact LCP",
            help="Impacts as in seed 004: an impact LCP with Newton restitution, then the contact LCP. Off: "
                 "restitution as a velocity target inside the one LCP."),
    Setting("projection", "bool", True, label="projection",
            help="Seed 004's projection onto the joints' constraint manifold after each step (positions, then "
                 "velocities); needs physics/solvers/projection.py."),
    Setting("projection_iterations", "int", 2, 1, 10, label="projection iter.",
            help="Newton iterations of the position projection."),
)

LcpWork = namedtuple("LcpWork", "u_tab u_row u_body u_J u_lo u_hi u_mu u_g0 u_g1 u_bias u_C u_eps u_pos "
                                "A b x bp xp plo phi a_ptr a_idx a_val a_diag mark body_ptr body_idx "
                                "l_row l_body l_J l_C G l_perm B W lam_l tmp_l work_l "
                                "in_tree zc yv yw P fv fw c_vn c_imp c_S c_gap impacts lemke proj")
"""Work of the lcp kernel. U rows (capacity R): u_tab (R,) 0 joint row / 1 contact row, u_row
(R,) its row in that table, u_body (R,2), u_J (R,12), u_lo/u_hi (R,) fixed bounds, u_mu (R,) μ of
a friction row (0 otherwise) and u_g0/u_g1 (R,) the U range of its contact's normals, u_bias (R,)
velocity target, u_C (R,) drift value, u_eps (R,) soft-row regularization, u_pos (R,) role in the
split pass; A (R,R), b, x (R,) the velocity LCP; bp, xp, plo, phi (R,) the position LCP; a_ptr
(R+1,), a_idx (R·R,) A's sparsity, and a_val (R·R,) its off-diagonal values with a_diag (R,)
its diagonal where A is built sparse (build_system); mark (R,) scratch; body_ptr (nb+1,), body_idx (2R,) U rows per body. Loop rows
(capacity L): l_row, l_body, l_J, l_C; G (L,L) G_L then its pivoted factor, l_perm (L,), B (R,L),
W (R,L) = B G_L⁺ per U row, lam_l, tmp_l, work_l (L,). Per body: in_tree (nb,) 1 for bodies of
the joint tree, zc (nb,6) momenta of a column, yv, yw (nb,3) its velocities, P (nb,6) impulses
Σ Jᵀλ, fv, fw (nb,3) free velocities. Per contact row (capacity Rc): c_vn (Rc,) ġ⁻, c_imp (Rc,)
1 if impacting, c_S (Rc,) impact impulse, c_gap (Rc,) gap (m, 0 when touching). impacts (IMPACT_CAPACITY, IMPACT_COLUMNS); lemke:
LemkeWork for lemke_max_rows rows; proj: the world's projection.Projection (seed 004's
projection after each step)."""


# ---------------------------------------------------------------------------- small helpers
@njit(cache=True, inline="always")
def row_speed(J, r, a, b, vel, omega):
    """J·V of row r (12 numbers) between bodies a and b."""
    return (J[r, 0] * vel[a, 0] + J[r, 1] * vel[a, 1] + J[r, 2] * vel[a, 2]
            + J[r, 3] * omega[a, 0] + J[r, 4] * omega[a, 1] + J[r, 5] * omega[a, 2]
            + J[r, 6] * vel[b, 0] + J[r, 7] * vel[b, 1] + J[r, 8] * vel[b, 2]
            + J[r, 9] * omega[b, 0] + J[r, 10] * omega[b, 1] + J[r, 11] * omega[b, 2])


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def add_impulse(J, r, a, b, s, P):
    """P += Jᵀ s for row r on its two bodies (6 numbers per body: force, torque)."""
    for q in range(6):
        P[a, q] += J[r, q] * s
        P[b, q] += J[r, 6 + q] * s


@njit(cache=True, inline="always")
def inverse_mass_times(i, px, py, pz, tx, ty, tz, body_inv_mass, inv_I):
    """M_i⁻¹ (p, τ) = (p/m, I⁻¹τ) of body i (inv_I: world inverse inertia, row-major)."""
    im = body_inv_mass[i]
    return (im * px, im * py, im * pz,
            inv_I[i, 0] * tx + inv_I[i, 1] * ty + inv_I[i, 2] * tz,
            inv_I[i, 3] * tx + inv_I[i, 4] * ty + inv_I[i, 5] * tz,
            inv_I[i, 6] * tx + inv_I[i, 7] * ty + inv_I[i, 8] * tz)


@njit(cache=True, inline="always")
def dynamic(body_inv_mass, body_inv_inertia, i):
    return body_inv_mass[i] != 0.0 or body_inv_inertia[i, 0] != 0.0 or body_inv_inertia[i, 1] != 0.0 \
        or body_inv_inertia[i, 2] != 0.0


@njit(cache=True)
def mark_tree(tree, in_tree):
    """in_tree[i] = 1 for the bodies the tree solve moves (children of tree joints, roots)."""
    order, joint_child, roots = tree.order, tree.joint_child, tree.roots
    in_tree[:] = 0
    for t in range(order.shape[0]):
        in_tree[joint_child[order[t]]] = 1
    for t in range(roots.shape[0]):
        in_tree[roots[t]] = 1


@njit(cache=True)
def kinetic_energy(bodies):
    """½ m v² + ½ ωᵀ I ω over the dynamic bodies (J)."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inertia = bodies.inv_mass, bodies.inertia
    e = 0.0
    for i in range(body_vel.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        bx, by, bz = rotate_inv(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                body_omega[i, 0], body_omega[i, 1], body_omega[i, 2])
        e += 0.5 / body_inv_mass[i] * (body_vel[i, 0] ** 2 + body_vel[i, 1] ** 2 + body_vel[i, 2] ** 2)
        e += 0.5 * (body_inertia[i, 0] * bx * bx + body_inertia[i, 1] * by * by + body_inertia[i, 2] * bz * bz)
    return e


# ---------------------------------------------------------------------------- M̂ products
@njit(cache=True)
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
        articulated_solve(tree, joint_body, 0.0, zc, yv, yw, False, 0.0, zc, yv, yw)
    for side in range(2):
        i = a if side == 0 else b
        if in_tree[i] == 0 and body_inv_mass[i] != 0.0:
            o = 6 * side
            v0, v1, v2, w0, w1, w2 = inverse_mass_times(i, J[r, o], J[r, o + 1], J[r, o + 2], J[r, o + 3],
                                                        J[r, o + 4], J[r, o + 5], body_inv_mass, inv_I)
            yv[i, 0], yv[i, 1], yv[i, 2] = v0, v1, v2
            yw[i, 0], yw[i, 1], yw[i, 2] = w0, w1, w2
    return live


@njit(cache=True, inline="always")
def clear_column(a, b, in_tree, yv, yw):
    """Zero the column's entries on bodies of no tree (a and b)."""
    for side in range(2):
        i = a if side == 0 else b
        if in_tree[i] == 0:
            for q in range(3):
                yv[i, q] = 0.0
                yw[i, q] = 0.0


@njit(cache=True)
def build_loops(nl, tree, joint_body, body_inv_mass, inv_I, lw):
    """G_L = J_L M̂ J_Lᵀ of the loop rows, factored by the pivoted Cholesky that drops
    dependent rows; returns its rank."""
    l_J, l_body, G, l_perm = lw.l_J, lw.l_body, lw.G, lw.l_perm
    in_tree, zc, yv, yw = lw.in_tree, lw.zc, lw.yv, lw.yw
    for col in range(nl):
        a, b = l_body[col, 0], l_body[col, 1]
        live = mhat_column(l_J, col, a, b, tree, joint_body, in_tree, body_inv_mass, inv_I, zc, yv, yw)
        for k in range(nl):
            G[k, col] = column_dot(l_J, k, l_body[k, 0], l_body[k, 1], yv, yw, in_tree, live)
        clear_column(a, b, in_tree, yv, yw)
    for i in range(nl):
        for j in range(i):
            s = 0.5 * (G[i, j] + G[j, i])
            G[i, j] = s
            G[j, i] = s
    return pivoted_cholesky(G, nl, l_perm, LOOP_RANK_TOL)


@njit(cache=True)
def build_system(nu, nl, rank, sparse, tree, joint_body, body_inv_mass, inv_I, lw):
    """A = J_U M̂ J_Uᵀ (+ the soft rows' regularization on its diagonal) and B = J_U M̂ J_Lᵀ,
    column by column; then the loops' Schur complement A ← A − B G_L⁺ Bᵀ (W = B G_L⁺).
    `sparse` (no loops; PGS will solve it): A's nonzeros only, as CSR rows (a_ptr, a_idx,
    a_val; the diagonal also in a_diag) — row u of A is column u (A is symmetric), the rows
    sharing a body of no tree with u, or every row if u reaches the tree. O(nonzeros)
    instead of O(|U|²) (stack.toml under lcp: 2.0 → 0.95 ms per step, python -m
    physics.bench.scenes)."""
    u_J, u_body, u_eps, A, B, W = lw.u_J, lw.u_body, lw.u_eps, lw.A, lw.B, lw.W
    l_J, l_body, G, l_perm, tmp_l, work_l = lw.l_J, lw.l_body, lw.G, lw.l_perm, lw.tmp_l, lw.work_l
    body_ptr, body_idx = lw.body_ptr, lw.body_idx
    in_tree, zc, yv, yw = lw.in_tree, lw.zc, lw.yv, lw.yw
    nb = in_tree.shape[0]
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
                c = a if side == 0 else b
                if body_inv_mass[c] == 0.0:
                    continue
                for k in range(body_ptr[c], body_ptr[c + 1]):
                    i = body_idx[k]
                    A[i, u] = column_dot(u_J, i, u_body[i, 0], u_body[i, 1], yv, yw, in_tree, live)
        for l in range(nl):
            B[u, l] = column_dot(l_J, l, l_body[l, 0], l_body[l, 1], yv, yw, in_tree, live)
        clear_column(a, b, in_tree, yv, yw)
    for i in range(nu):
        for j in range(i):
            s = 0.5 * (A[i, j] + A[j, i])
            A[i, j] = s
            A[j, i] = s
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


@njit(cache=True)
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
                c = a if side == 0 else b
                if body_inv_mass[c] == 0.0:
                    continue
                for q in range(body_ptr[c], body_ptr[c + 1]):
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


@njit(cache=True, inline="always")
def sparse_lcp(params, nu, nl, lw):
    """Whether this step's LCP is built and solved sparse: no loop rows, and PGS will run
    (method pgs, or more rows than Lemke takes)."""
    if nl > 0:
        return False
    method = int(params[P_METHOD])
    return method == PGS or nu > min(int(params[P_LEMKE_MAX]), lw.lemke.slack.shape[0] // 3)


# ---------------------------------------------------------------------------- rows of the step
@njit(cache=True)
def count_rows(joints, rows, crows, body_inv_mass):
    """At least as many as the U rows the velocity phase can have (the impact phase has
    fewer)."""
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_active, c_active = rows.active, crows.active
    n = 0
    for k in range(joint_type.shape[0]):
        if body_inv_mass[joint_body[k, 0]] == 0.0 and body_inv_mass[joint_body[k, 1]] == 0.0:
            continue
        t = joint_type[k]
        start = joint_row_start[k] + N_EQ[t]
        for r in range(start, start + N_LIMIT[t] + N_FREE[t]):
            if row_active[r] != 0:
                n += 1
    return n + c_active.shape[0]        # every contact row (classify_contacts may switch some on)


@njit(cache=True)
def collect_loops(joints, rows, tree, body_inv_mass, lw):
    """The equality rows of the joints that close loops (not in the tree): returns their
    count (written while it fits the capacity)."""
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_C, loop_joints = rows.J, rows.C, tree.loop_joints
    l_row, l_body, l_J, l_C = lw.l_row, lw.l_body, lw.l_J, lw.l_C
    cap = l_row.shape[0]
    n = 0
    for t in range(loop_joints.shape[0]):
        k = loop_joints[t]
        a, b = joint_body[k, 0], joint_body[k, 1]
        if body_inv_mass[a] == 0.0 and body_inv_mass[b] == 0.0:
            continue
        for r in range(joint_row_start[k], joint_row_start[k] + N_EQ[joint_type[k]]):
            if n < cap:
                l_row[n] = r
                l_body[n, 0] = a
                l_body[n, 1] = b
                for q in range(12):
                    l_J[n, q] = row_J[r, q]
                l_C[n] = row_C[r]
            n += 1
    return n


@njit(cache=True, inline="always")
def add_row(lw_arrays, n, tab, r, a, b, J, lo, hi, bias, C, warm):
    """Append row r of table `tab` (0 joints, 1 contacts) to U at index n; returns n + 1."""
    u_tab, u_row, u_body, u_J, u_lo, u_hi, u_mu, u_bias, u_C, u_eps, u_pos, x = lw_arrays
    u_tab[n] = tab
    u_row[n] = r
    u_body[n, 0] = a
    u_body[n, 1] = b
    for q in range(12):
        u_J[n, q] = J[r, q]
    u_lo[n] = lo
    u_hi[n] = hi
    u_mu[n] = 0.0
    u_bias[n] = bias
    u_C[n] = C
    u_eps[n] = 0.0
    u_pos[n] = POS_BOUNDED
    x[n] = warm
    return n + 1


@njit(cache=True)
def collect_rows(phase, rate, bodies, joints, rows, crows, lw):
    """The U rows of a phase (module docstring), with their bounds, velocity targets
    (plus the Baumgarte bias rate·C), drift values, position roles and warm start (x).
    Impact phase: active limits, touching contact normals (ġ⁺ + e ġ⁻ ≥ 0 for the
    impacting ones, ġ⁺ ≥ 0 for the others) and their friction. Velocity phase: also
    joint friction and motors, speculative contacts. Returns the row count."""
    body_inv_mass, body_inv_inertia, body_quat = bodies.inv_mass, bodies.inv_inertia, bodies.quat
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_C, row_active, row_lo, row_hi, row_bias = rows.J, rows.C, rows.active, rows.lo, rows.hi, rows.bias
    row_mass_scale, row_impulse_scale, row_lambda = rows.mass_scale, rows.impulse_scale, rows.impulse
    c_J, c_C, c_active, c_bias, c_kind, c_hi = crows.J, crows.C, crows.active, crows.bias, crows.kind, crows.hi
    c_lambda, c_body, block_start, block_count = crows.impulse, crows.body, crows.block_start, crows.block_count
    u_mu, u_g0, u_g1, u_eps, u_pos = lw.u_mu, lw.u_g0, lw.u_g1, lw.u_eps, lw.u_pos
    c_imp = lw.c_imp
    arrays = (lw.u_tab, lw.u_row, lw.u_body, lw.u_J, lw.u_lo, lw.u_hi, lw.u_mu, lw.u_bias, lw.u_C, lw.u_eps,
              lw.u_pos, lw.x)
    n = 0
    for k in range(joint_type.shape[0]):
        a, b = joint_body[k, 0], joint_body[k, 1]
        if body_inv_mass[a] == 0.0 and body_inv_mass[b] == 0.0:
            continue
        t = joint_type[k]
        start = joint_row_start[k] + N_EQ[t]
        for r in range(start, start + N_LIMIT[t]):
            if row_active[r] != 0:
                warm = row_lambda[r] if phase == VELOCITY_PHASE else 0.0
                n = add_row(arrays, n, 0, r, a, b, row_J, row_lo[r], row_hi[r], rate * row_C[r] + row_bias[r],
                            row_C[r], warm)     # bias: a speculative limit's ±d/h
        if phase == IMPACT_PHASE:
            continue
        for r in range(start + N_LIMIT[t], start + N_LIMIT[t] + N_FREE[t]):
            act = row_active[r]
            if act == FREE_FRICTION:
                n = add_row(arrays, n, 0, r, a, b, row_J, row_lo[r], row_hi[r], 0.0, 0.0, row_lambda[r])
                u_pos[n - 1] = POS_FREE_ROW
            elif act == FREE_MOTOR and row_hi[r] > row_lo[r] and row_mass_scale[r] > 0.0:
                n = add_row(arrays, n, 0, r, a, b, row_J, row_lo[r], row_hi[r], row_bias[r], 0.0, row_lambda[r])
                u_pos[n - 1] = POS_NONE
                # soft row (Box2D's soft step, joint_rows.write_drive_rows): its fixed point
                # J·V + bias + ε λ = 0 with ε = impulse_scale / (mass_scale · m_eff)
                u_eps[n - 1] = row_impulse_scale[r] / row_mass_scale[r] * plain_k(row_J, r, a, b, body_inv_mass,
                                                                                    body_inv_inertia, body_quat)
    for blk in range(block_start.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = end
        while f0 > start and c_kind[f0 - 1] == ROW_FREE:
            f0 -= 1
        a, b = c_body[start, 0], c_body[start, 1]
        g0 = n
        for r in range(start, f0):
            if c_active[r] == 0:
                continue
            if phase == IMPACT_PHASE:
                if c_imp[r] == 0 and c_bias[r] > 0.0:
                    continue                # speculative: not touching yet
                bias = c_bias[r] if c_imp[r] == 1 else 0.0
                n = add_row(arrays, n, 1, r, a, b, c_J, 0.0, math.inf, bias, c_C[r], 0.0)
            else:
                n = add_row(arrays, n, 1, r, a, b, c_J, 0.0, math.inf, c_bias[r] + rate * c_C[r], c_C[r],
                            c_lambda[r])
        g1 = n
        if g1 > g0 and f0 < end and c_active[f0] == FREE_CONTACT:
            for r in range(f0, end):
                n = add_row(arrays, n, 1, r, a, b, c_J, 0.0, 0.0, 0.0, 0.0,
                            c_lambda[r] if phase == VELOCITY_PHASE else 0.0)
                u_mu[n - 1] = c_hi[f0]
                u_g0[n - 1] = g0
                u_g1[n - 1] = g1
                u_pos[n - 1] = POS_FREE_ROW
    return n


@njit(cache=True)
def plain_k(row_J, r, a, b, body_inv_mass, body_inv_inertia, body_quat):
    """J M⁻¹ Jᵀ of one row with the bodies' own inertia (a soft row's effective mass⁻¹)."""
    k = 0.0
    for side in range(2):
        i = a if side == 0 else b
        o = 6 * side
        im = body_inv_mass[i]
        k += im * (row_J[r, o] ** 2 + row_J[r, o + 1] ** 2 + row_J[r, o + 2] ** 2)
        bx, by, bz = rotate_inv(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                row_J[r, o + 3], row_J[r, o + 4], row_J[r, o + 5])
        k += body_inv_inertia[i, 0] * bx * bx + body_inv_inertia[i, 1] * by * by + body_inv_inertia[i, 2] * bz * bz
    return k


@njit(cache=True)
def classify_contacts(threshold, h, contacts, crows, vel, omega, c_vn, c_imp, c_gap):
    """The contacts' rows as the lcp family uses them (module docstring, impacts): ġ⁻ =
    J·V of every point's normal row at the step's start (c_vn) and its gap (c_gap, 0 when
    touching). A point impacts (c_imp = 1, target e·ġ⁻: ġ⁺ + e ġ⁻ ≥ 0) when it approaches
    faster than the threshold and touches or — with restitution — would reach the surface
    in the first half of this step at that speed (gap < −ġ⁻·h/2); reached in the second
    half, its row stays off and it touches and bounces next step. Every other point with
    a gap is a speculative row (ġ ≥ −gap/h), including the bouncing ones physics/
    contacts.py leaves off until they touch; a contact with such a row has its friction
    on. Returns how many points impact."""
    buf, cs = contacts.buffers, contacts.shapes
    ci, cf, row_of, restitution = buf.ci, buf.cf, buf.row_of, cs.restitution
    c_J, c_active, c_bias, c_body, c_kind, c_hi = crows.J, crows.active, crows.bias, crows.body, crows.kind, crows.hi
    block_start, block_count = crows.block_start, crows.block_count
    m = buf.n[N_NOW] if block_start.shape[0] > 0 else 0
    for r in range(c_J.shape[0]):
        c_imp[r] = 0
    n = 0
    for q in range(m):
        r = row_of[q]
        if r < 0:
            continue                        # a gap the pair cannot close: no row (contacts.py)
        vn = row_speed(c_J, r, c_body[r, 0], c_body[r, 1], vel, omega)
        depth = cf[q, 6]
        c_vn[r] = vn
        c_gap[r] = max(-depth, 0.0)
        e = max(restitution[ci[q, 0]], restitution[ci[q, 1]])
        if vn < -threshold and (depth >= 0.0 or (e > 0.0 and -depth < -0.5 * vn * h)):
            c_imp[r] = 1
            c_active[r] = 1
            c_bias[r] = e * vn
            n += 1
        elif vn < -threshold and e > 0.0 and -depth < -vn * h:
            c_active[r] = 0                 # reached in the second half: bounces next step
        elif c_active[r] == 0:
            c_active[r] = 1
            c_bias[r] = -depth / h
    for blk in range(block_start.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = end
        while f0 > start and c_kind[f0 - 1] == ROW_FREE:
            f0 -= 1
        if f0 < end and c_active[f0] == FREE_OFF and c_hi[f0] > 0.0 and f0 > start:
            for r in range(f0, end):
                c_active[r] = FREE_CONTACT
    return n


@njit(cache=True)
def align_friction(crows, fv, fw):
    """Turn each contact's tangent pair so that t1 points along the contact's tangential
    velocity in the free motion (fv, fw), with the warm-start impulses turned alike."""
    c_J, c_active, c_kind, c_body, c_lambda = crows.J, crows.active, crows.kind, crows.body, crows.impulse
    block_start, block_count = crows.block_start, crows.block_count
    for blk in range(block_start.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = end
        while f0 > start and c_kind[f0 - 1] == ROW_FREE:
            f0 -= 1
        if end - f0 < 2 or c_active[f0] != FREE_CONTACT:
            continue
        a, b = c_body[f0, 0], c_body[f0, 1]
        s1 = row_speed(c_J, f0, a, b, fv, fw)
        s2 = row_speed(c_J, f0 + 1, a, b, fv, fw)
        s = math.sqrt(s1 * s1 + s2 * s2)
        if not s > 1e-12:
            continue
        c, sn = s1 / s, s2 / s
        for q in range(12):
            j1, j2 = c_J[f0, q], c_J[f0 + 1, q]
            c_J[f0, q] = c * j1 + sn * j2
            c_J[f0 + 1, q] = -sn * j1 + c * j2
        l1, l2 = c_lambda[f0], c_lambda[f0 + 1]
        c_lambda[f0] = c * l1 + sn * l2
        c_lambda[f0 + 1] = -sn * l1 + c * l2


# ---------------------------------------------------------------------------- velocities
@njit(cache=True)
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
    articulated_solve(tree, joint_body, rate, zc, fv, fw, False, 0.0, zc, fv, fw)


@njit(cache=True)
def phase_rhs(nu, nl, rank, rate, lw):
    """λ_L0 = G_L⁺(−J_L V_f − rate·C_L) (the loops' impulses in the free motion) and the
    LCP's right-hand side b = J_U V_f + bias + B λ_L0."""
    fv, fw, u_J, u_body, u_bias, b, B = lw.fv, lw.fw, lw.u_J, lw.u_body, lw.u_bias, lw.b, lw.B
    l_J, l_body, l_C, G, l_perm, lam_l, tmp_l, work_l = lw.l_J, lw.l_body, lw.l_C, lw.G, lw.l_perm, lw.lam_l, \
        lw.tmp_l, lw.work_l
    for l in range(nl):
        tmp_l[l] = -row_speed(l_J, l, l_body[l, 0], l_body[l, 1], fv, fw) - rate * l_C[l]
    pivoted_solve(G, l_perm, rank, nl, tmp_l, lam_l, work_l)
    for u in range(nu):
        s = row_speed(u_J, u, u_body[u, 0], u_body[u, 1], fv, fw) + u_bias[u]
        for l in range(nl):
            s += B[u, l] * lam_l[l]
        b[u] = s


@njit(cache=True)
def gather_impulses(nu, nl, x, lw):
    """The loops' final impulses λ_L = λ_L0 − W x and P = J_Uᵀ x + J_Lᵀ λ_L (lw.P)."""
    u_J, u_body, W, l_J, l_body, lam_l, P = lw.u_J, lw.u_body, lw.W, lw.l_J, lw.l_body, lw.lam_l, lw.P
    for u in range(nu):
        if x[u] != 0.0:
            add_impulse(u_J, u, u_body[u, 0], u_body[u, 1], x[u], P)
            for l in range(nl):
                lam_l[l] -= W[u, l] * x[u]
    for l in range(nl):
        if lam_l[l] != 0.0:
            add_impulse(l_J, l, l_body[l, 0], l_body[l, 1], lam_l[l], P)


@njit(cache=True)
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
        articulated_solve(tree, joint_body, rate, body_z, vel, omega, two, rate2, body_z2, vel2, omega2)
        articulated_lambda(tree, row_J, body_z, vel, omega, row_lambda)


@njit(cache=True)
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


# ---------------------------------------------------------------------------- the LCP
@njit(cache=True)
def solve_lcp(params, stats, nu, sparse, lw):
    """The velocity (or impact) LCP of nu rows in lw (A, b; warm start in x) by the method
    and fallback rule of the module docstring; x holds λ. Returns the method used.
    `sparse`: A is held as build_system's CSR rows, and PGS solves it."""
    A, b, x, lo, hi, mu, g0, g1 = lw.A, lw.b, lw.x, lw.u_lo, lw.u_hi, lw.u_mu, lw.u_g0, lw.u_g1
    method = int(params[P_METHOD])
    cap = params[P_TIME_CAP_MS] * params[P_TICKS_PER_MS]
    t0 = ticks()
    stats[S_ROWS] = nu
    stats[S_PIVOTS] = 0
    stats[S_SWEEPS] = 0
    stats[S_CAPPED] = 0
    stats[S_SIZE] = 0
    used = PGS
    if nu == 0:
        stats[S_METHOD] = 0
        stats[S_RESIDUAL] = 0.0
        stats[S_SOLVE_TICKS] = 0.0
        return 0
    if not sparse and method != PGS and nu <= min(int(params[P_LEMKE_MAX]), lw.lemke.slack.shape[0] // 3):
        n_est = 2.0 * nu                        # LCP variables, about (friction rows take three)
        predicted_ms = LEMKE_NS_PER_N3 * n_est ** 3 * 1e-6
        if method == LEMKE or params[P_TIME_CAP_MS] <= 0.0 or predicted_ms <= params[P_TIME_CAP_MS]:
            for i in range(nu):
                lw.xp[i] = x[i]             # the warm start, for PGS if Lemke fails
            status, pivots, size = solve_blcp_lemke(A, b, lo, hi, mu, g0, g1, nu, x, lw.lemke)
            stats[S_PIVOTS] = pivots
            stats[S_SIZE] = size
            scale = 1.0
            for i in range(nu):
                scale = max(scale, abs(b[i]))
            if status == LEMKE_OK and blcp_residual(A, b, lo, hi, mu, g0, g1, nu, x) <= LEMKE_RESIDUAL * scale:
                used = LEMKE
            else:
                stats[S_FALLBACKS] += 1
                if status != LEMKE_OK:
                    for i in range(nu):
                        x[i] = lw.xp[i]
    if used == PGS:
        if not sparse:
            sparsity(A, nu, lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag)
        spent = ticks() - t0
        sweeps, change, capped = pgs(lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, b, lo, hi, mu, g0, g1, nu, x,
                                     int(params[P_PGS_ITERATIONS]), params[P_PGS_TOLERANCE],
                                     max(cap - spent, 1.0) if cap > 0.0 else 0.0)
        stats[S_SWEEPS] = sweeps
        if capped:
            stats[S_CAPPED] = 1
            stats[S_CAPPED_STEPS] += 1
        residual = blcp_residual_csr(lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, b, lo, hi, mu, g0, g1, nu, x)
    else:
        residual = blcp_residual(A, b, lo, hi, mu, g0, g1, nu, x)
    stats[S_METHOD] = used
    stats[S_RESIDUAL] = residual
    stats[S_SOLVE_TICKS] = ticks() - t0
    return used


@njit(cache=True)
def position_pass(params, nu, nl, rank, rate, sparse, bodies, joint_body, tree, inv_I, pvel, pomega, lw):
    """Split impulses (pseudo-velocities V^p, J V^p = −rate·C): on entry (pvel, pomega)
    hold the tree rows' part (momenta 0, targets −rate·C); the loops, active limits,
    contact normals (≥) and sticking friction rows (= 0) are added by PGS on the velocity
    LCP's A, and V^p solved again with their impulses."""
    A, bp, xp, plo, phi, x = lw.A, lw.bp, lw.xp, lw.plo, lw.phi, lw.x
    u_J, u_body, u_C, u_lo, u_hi, u_mu, u_g0, u_g1, u_pos = lw.u_J, lw.u_body, lw.u_C, lw.u_lo, lw.u_hi, \
        lw.u_mu, lw.u_g0, lw.u_g1, lw.u_pos
    B, l_J, l_body, l_C, G, l_perm, lam_l, tmp_l, work_l = lw.B, lw.l_J, lw.l_body, lw.l_C, lw.G, lw.l_perm, \
        lw.lam_l, lw.tmp_l, lw.work_l
    P, in_tree, zc = lw.P, lw.in_tree, lw.zc
    any_row = False
    for u in range(nu):
        role = u_pos[u]
        plo[u] = 0.0
        phi[u] = 0.0
        xp[u] = 0.0
        if role == POS_BOUNDED:
            plo[u] = u_lo[u]
            phi[u] = u_hi[u]
            any_row = any_row or u_C[u] != 0.0
        elif role == POS_FREE_ROW:
            bound = u_hi[u]
            if u_mu[u] > 0.0:
                s = 0.0
                for k in range(u_g0[u], u_g1[u]):
                    s += x[k]
                bound = u_mu[u] * s
            if abs(x[u]) < bound * (1.0 - 1e-9):       # sticking: held at J V^p = 0
                plo[u] = -math.inf
                phi[u] = math.inf
    if not any_row and nl == 0:
        return
    for l in range(nl):
        tmp_l[l] = -row_speed(l_J, l, l_body[l, 0], l_body[l, 1], pvel, pomega) - rate * l_C[l]
    pivoted_solve(G, l_perm, rank, nl, tmp_l, lam_l, work_l)
    for u in range(nu):
        s = row_speed(u_J, u, u_body[u, 0], u_body[u, 1], pvel, pomega) + rate * u_C[u]
        for l in range(nl):
            s += B[u, l] * lam_l[l]
        bp[u] = s
    if nu > 0:
        if not sparse:
            sparsity(A, nu, lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag)
        pgs(lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, bp, plo, phi, np.zeros(nu), u_g0, u_g1, nu, xp,
            PGS_POSITION_SWEEPS, params[P_PGS_TOLERANCE], 0.0)
    gather_impulses(nu, nl, xp, lw)
    # V^p again with these impulses: momenta P, targets −rate·C
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    if order.shape[0] + roots.shape[0] > 0:
        zero_tree(order, roots, joint_child, zc)
        n_order = order.shape[0]
        for t in range(n_order + roots.shape[0]):
            i = joint_child[order[t]] if t < n_order else roots[t - n_order]
            for q in range(6):
                zc[i, q] += P[i, q]
        articulated_solve(tree, joint_body, rate, zc, pvel, pomega, False, 0.0, zc, pvel, pomega)
    apply_free_bodies(bodies, inv_I, pvel, pomega, lw)


@njit(cache=True)
def store_impulses(nu, nl, x, extra, rows, crows, lw):
    """Write the U rows' λ (contact rows: plus their impact impulse `extra`, c_S) and the
    loop rows' into the row tables; the joints' limit and free rows not in U get 0."""
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
        row_lambda[l_row[l]] = lam_l[l]


@njit(cache=True)
def clear_joint_drive_impulses(joints, rows):
    """λ = 0 on every joint's limit and free rows (the step writes the ones in use)."""
    joint_type, joint_row_start = joints.type, joints.row_start
    row_lambda = rows.impulse
    for k in range(joint_type.shape[0]):
        t = joint_type[k]
        start = joint_row_start[k] + N_EQ[t]
        for r in range(start, start + N_LIMIT[t] + N_FREE[t]):
            row_lambda[r] = 0.0


@njit(cache=True)
def record_impact(impacts, n, t, r, crows, c_vn, vel, omega, ke0, ke1, S):
    """Impact record n (LcpStats.impacts) of contact row r, if it fits; returns n + 1."""
    if n < impacts.shape[0]:
        a, b = crows.body[r, 0], crows.body[r, 1]
        vn = c_vn[r]
        rec = impacts[n]
        rec[0] = t
        rec[1] = a
        rec[2] = b
        rec[3] = vn
        rec[4] = row_speed(crows.J, r, a, b, vel, omega)
        rec[5] = crows.bias[r] / vn if vn != 0.0 else 0.0
        rec[6] = ke0
        rec[7] = ke1
        rec[8] = S
    return n + 1


# ---------------------------------------------------------------------------- the kernel
@njit(cache=True)
def lcp_kernel(n_steps, dt, t0, params, stats, env, bodies, loads, joints, drives, rows, work, tree, contacts, lw):
    """Advance n_steps steps of dt (module docstring). Rows hold the current poses on entry
    and the final ones on return. Returns the steps done: fewer than n_steps after a
    blow-up, or when a step needs more room than lw has (stats S_NEED_ROWS/LOOPS > 0: the
    caller grows lw and calls again from there)."""
    body_pos, body_quat, body_vel, body_omega = bodies.pos, bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inv_inertia = bodies.inv_mass, bodies.inv_inertia
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    force_acc, torque_acc, pvel, pomega = work.force_acc, work.torque_acc, work.pvel, work.pomega
    inv_I = work.inv_inertia_world
    order, roots, joint_child, row_direct, body_I = tree.order, tree.roots, tree.joint_child, tree.row_direct, \
        tree.body_I
    gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
    c_vn, c_imp, c_S, impacts = lw.c_vn, lw.c_imp, lw.c_S, lw.impacts
    h = dt
    stab = int(params[P_STABILIZATION])
    erp = params[P_ERP]
    rate_v = erp / h if stab == BAUMGARTE else 0.0
    rate_p = erp / h if stab == SPLIT else 0.0
    use_k = params[P_GEOMETRIC] != 0.0
    targets = stab != NO_STABILIZATION
    may_iterate = params[P_MAY_ITERATE] != 0.0
    impact_lcp = params[P_IMPACT] != 0.0
    n_project = int(params[P_PROJECTION])
    proj = lw.proj
    proj.fresh[0] = 0                       # the poses may have been edited since the last call
    threshold = contacts.shapes.settings[S_THRESHOLD]
    has_tree = order.shape[0] + roots.shape[0] > 0
    for q in range(S_VIOLATION):            # the last projection's numbers are kept
        if q != S_FALLBACKS:
            stats[q] = 0.0
    stats[S_FALLBACKS] = 0.0
    n_impacts = 0
    select_rows(tree, joint_type, joint_row_start, row_active, False, row_direct)
    mark_tree(tree, lw.in_tree)
    write_drive_rows(joints, drives, rows, h)
    for step in range(n_steps):
        t = t0 + step * h
        if may_iterate and step > 0:
            write_drive_rows(joints, drives, rows, h)
        if may_iterate:
            speculative_limits(bodies, joints, rows, h, LIMIT_REACH)   # limits reached within the step
        n_blocks = prepare_contacts(contacts, bodies, h)
        if detection_overflowed(contacts):
            return step                     # nothing moved yet: redone with grown buffers
        crows, cwork, cdirect = contact_views(contacts, work, n_blocks)
        n_need = count_rows(joints, rows, crows, body_inv_mass)
        if n_need > lw.u_row.shape[0]:
            stats[S_NEED_ROWS] = n_need
            return step
        # inertia (with the geometric stiffness of last step's joint impulses, as the
        # impulse solver's direct path) and the tree factor (pass 1 and 2)
        augmented_inertia(h, use_k, tree, joints, rows, bodies)
        world_inverse_inertia(body_quat, body_inv_inertia, inv_I)
        invert_tree_inertia(order, roots, joint_child, body_I, inv_I)
        if has_tree:
            if proj.fresh[0] == 1 and not use_k:
                # the last step's velocity projection factored these rows at these poses
                # with the same inertia (the tree is the projection's): this step's factor
                if targets:
                    articulated_targets(tree, row_J, row_C)
            else:
                articulated_factor(tree, joint_type, joint_body, row_J, row_C, body_pos, body_inv_mass, body_I,
                                   targets, False)
        proj.fresh[0] = 0
        nl = collect_loops(joints, rows, tree, body_inv_mass, lw)
        if nl > lw.l_row.shape[0]:
            stats[S_NEED_LOOPS] = nl
            return step
        rank = build_loops(nl, tree, joint_body, body_inv_mass, inv_I, lw) if nl > 0 else 0
        stats[S_LOOP_ROWS] = nl
        stats[S_LOOP_RANK] = rank
        n_imp = classify_contacts(threshold, h, contacts, crows, body_vel, body_omega, c_vn, c_imp, lw.c_gap)
        for r in range(crows.J.shape[0]):
            c_S[r] = 0.0
        # impacts (seed 004 eq. 8-14): impact LCP from the step's start velocities
        if impact_lcp and n_imp > 0:
            ke0 = kinetic_energy(bodies)
            free_velocity(0.0, bodies, joint_body, tree, body_I, lw)
            align_friction(crows, lw.fv, lw.fw)
            nu = collect_rows(IMPACT_PHASE, 0.0, bodies, joints, rows, crows, lw)
            sparse = sparse_lcp(params, nu, nl, lw)
            build_system(nu, nl, rank, sparse, tree, joint_body, body_inv_mass, inv_I, lw)
            phase_rhs(nu, nl, rank, 0.0, lw)
            solve_lcp(params, stats, nu, sparse, lw)
            gather_impulses(nu, nl, lw.x, lw)
            apply_impulses(0.0, False, 0.0, bodies, joint_body, tree, body_I, row_J, row_lambda, pvel, pomega, lw)
            apply_free_bodies(bodies, inv_I, body_vel, body_omega, lw)
            ke1 = kinetic_energy(bodies)
            for u in range(nu):
                if lw.u_tab[u] == 1 and lw.u_mu[u] == 0.0:
                    r = lw.u_row[u]
                    c_S[r] = lw.x[u]
                    if c_imp[r] == 1:
                        n_impacts = record_impact(impacts, n_impacts, t, r, crows, c_vn, body_vel, body_omega,
                                                  ke0, ke1, lw.x[u])
                        # resting from here: ġ ≥ 0 in the contact LCP (or ġ ≥ −gap/h)
                        crows.bias[r] = lw.c_gap[r] / h
        # forces, then the contact LCP of the step
        gather_forces(t, bodies, loads, force_acc, torque_acc)
        integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
        nu = 0
        sparse = False
        if n_need > 0 or nl > 0:            # else the tree solve below is the whole step
            free_velocity(rate_v, bodies, joint_body, tree, body_I, lw)
            align_friction(crows, lw.fv, lw.fw)
            nu = collect_rows(VELOCITY_PHASE, rate_v, bodies, joints, rows, crows, lw)
            sparse = sparse_lcp(params, nu, nl, lw)
            build_system(nu, nl, rank, sparse, tree, joint_body, body_inv_mass, inv_I, lw)
            phase_rhs(nu, nl, rank, rate_v, lw)
        solve_lcp(params, stats, nu, sparse, lw)
        clear_joint_drive_impulses(joints, rows)
        gather_impulses(nu, nl, lw.x, lw)
        store_impulses(nu, nl, lw.x, c_S, rows, crows, lw)
        pvel[:, :] = 0.0
        pomega[:, :] = 0.0
        apply_impulses(rate_v, rate_p != 0.0 and has_tree, rate_p, bodies, joint_body, tree, body_I, row_J,
                       row_lambda, pvel, pomega, lw)
        apply_free_bodies(bodies, inv_I, body_vel, body_omega, lw)
        if not impact_lcp:
            for u in range(nu):
                if lw.u_tab[u] == 1 and lw.u_mu[u] == 0.0 and c_imp[lw.u_row[u]] == 1:
                    n_impacts = record_impact(impacts, n_impacts, t, lw.u_row[u], crows, c_vn, body_vel, body_omega,
                                              0.0, 0.0, lw.x[u])
        # drift: split impulses, positions moved with V + V^p
        if rate_p != 0.0:
            position_pass(params, nu, nl, rank, rate_p, sparse, bodies, joint_body, tree, inv_I, pvel, pomega, lw)
            body_vel += pvel
            body_omega += pomega
        integrate_positions(bodies, h)
        if rate_p != 0.0:
            body_vel -= pvel
            body_omega -= pomega
        last = step == n_steps - 1
        compute_joint_rows(bodies, joints, rows, last and n_project == 0)
        if n_project > 0:                   # seed 004 eqs. 15-18
            project_step(n_project, bodies, joints, rows, proj, stats[S_VIOLATION:S_VIOLATION + 4], last)
            proj.fresh[0] = 1               # its velocity step's factor is at the final poses
        keep_contact_impulses(contacts, n_blocks)
        stats[S_IMPACTS] = n_impacts
        if blown_up(bodies, max_speed, max_spin):
            return step
    compute_joint_rates(bodies, joints, rows)
    return n_steps


# ---------------------------------------------------------------------------- the solver object
@dataclass
class LcpStats(SolverStats):
    """SolverStats plus, for the last step's LCP: method ("lemke", "pgs" or "none"), rows
    (one-sided and bounded rows), lcp_size (Lemke's variables), pivots, sweeps (PGS),
    loop rows and their rank; over the last advance: fallbacks (Lemke failed, PGS ran) and
    impacts — one row per impact (IMPACT_COLUMNS): time of the step's start (s), bodies a
    and b, ġ⁻ and ġ⁺ (m/s, normal velocity before and after the impact LCP), e (= bias/ġ⁻),
    kinetic energy before and after the impact LCP (J; 0 with impact_lcp off), impulse S
    (N·s)."""
    method: str = "none"
    rows: int = 0
    lcp_size: int = 0
    pivots: int = 0
    sweeps: int = 0
    loop_rows: int = 0
    loop_rank: int = 0
    fallbacks: int = 0
    impacts: np.ndarray = field(default_factory=lambda: np.zeros((0, IMPACT_COLUMNS)))


def make_work(n_bodies, rows, loops, contact_rows, lemke_rows, proj):
    """An LcpWork with room for `rows` U rows, `loops` loop rows, `contact_rows` contact
    rows and Lemke's method on `lemke_rows` rows; proj: the world's Projection."""
    R, L, nb, Rc = max(int(rows), 1), max(int(loops), 1), max(int(n_bodies), 1), max(int(contact_rows), 1)
    f, i = np.float64, np.int64
    z = np.zeros
    return LcpWork(z(R, i), z(R, i), z((R, 2), i), z((R, 12)), z(R), z(R), z(R), z(R, i), z(R, i), z(R), z(R), z(R),
                   z(R, i), z((R, R)), z(R), z(R), z(R), z(R), z(R), z(R), z(R + 1, i), z(R * R, i),
                   z(R * R), z(R), z(R, i), z(nb + 1, i),
                   z(2 * R, i), z(L, i), z((L, 2), i), z((L, 12)), z(L), z((L, L)), z(L, i), z((R, L)), z((R, L)),
                   z(L), z(L), z(L), z(nb, i), z((nb, 6)), z((nb, 3)), z((nb, 3)), z((nb, 6)), z((nb, 3)),
                   z((nb, 3)), z(Rc), z(Rc, i), z(Rc), z(Rc), z((IMPACT_CAPACITY, IMPACT_COLUMNS), f),
                   lemke_work(lemke_rows), proj)


class LcpSolver(SolverBase):
    """The `lcp` family: settings (SETTINGS), step, stats, and its caches — the tree plan
    of the joint graph and the dense work arrays, rebuilt on `model_changed` and grown on
    demand."""
    name = "lcp"
    description = "One mixed LCP per step (seeds 003, 004): trees eliminated in O(N), Lemke or PGS, impacts."
    HONOURS = frozenset({"limits", "friction", "motors", "contacts", "restitution"})
    SETTINGS = SETTINGS

    def __init__(self):
        self.settings = defaults(SETTINGS)
        self.params = np.zeros(N_PARAMS)
        self.kernel_stats = np.zeros(N_STATS)
        self.stats = LcpStats()
        self._work = None
        self._room = (16, 8)                # U rows, loop rows the work was last sized for
        self._pack()

    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(SETTINGS, values, "solver"))
        self._pack()

    def _pack(self):
        s, p = self.settings, self.params
        p[P_METHOD] = METHODS[s["lcp_method"]]
        p[P_LEMKE_MAX] = s["lemke_max_rows"]
        p[P_PGS_ITERATIONS], p[P_PGS_TOLERANCE] = s["pgs_iterations"], s["pgs_tolerance"]
        p[P_TIME_CAP_MS] = s["lcp_time_cap_ms"]
        p[P_STABILIZATION] = STABILIZATIONS[s["lcp_stabilization"]]
        p[P_ERP] = s["lcp_erp"]
        p[P_IMPACT] = 1.0 if s["impact_lcp"] else 0.0
        p[P_GEOMETRIC] = 1.0 if s["geometric_stiffness"] else 0.0
        if self._work is not None and self._work.lemke.slack.shape[0] < 3 * s["lemke_max_rows"]:
            self._work = None

    def model_changed(self, world):
        """The joint graph or the bodies changed: drop the work arrays."""
        self._work = None

    def tree(self, world):
        """The Tree bundle (tree) the kernel factors the joint tree on: the world's
        projection's (projection.projection_for), so the velocity projection's factor at a
        step's end is the next step's."""
        return projection_for(world).tree

    def free_rows_used(self, world):
        """Per joint, 1 if its free rows are in use (friction or a motor)."""
        m, c = world.model.joints, world.control.joints
        return ((m.friction > 0.0) | (c.motor_mode != MOTOR_OFF)).astype(np.int64)

    def _work_for(self, world, contacts):
        """The work arrays, (re)made when missing or too small for the contact rows."""
        w = self._work
        rc = contacts.rows.J.shape[0]
        nb = world.model.bodies.count
        proj = projection_for(world)
        if w is None or w.c_vn.shape[0] < rc or w.in_tree.shape[0] != nb or w.proj is not proj:
            rows, loops = self._room
            self._work = make_work(nb, rows, loops, rc, self.settings["lemke_max_rows"], proj)
        return self._work

    def step(self, world, n, coupled=False):
        """n steps of Δt (lcp_kernel; with `projection` on, seed 004's projection after
        each step inside it); returns the steps done before a blow-up."""
        tree = self.tree(world)
        m, c = world.model.joints, world.control.joints
        self.params[P_MAY_ITERATE] = 1.0 if (m.limit_on.any() or (m.friction > 0.0).any()
                                             or (c.motor_mode != MOTOR_OFF).any()) else 0.0
        self.params[P_TICKS_PER_MS] = ticks_per_ms()
        self.params[P_PROJECTION] = self.settings["projection_iterations"] if self.settings["projection"] else 0
        env, bodies, loads, joints, drives, rows, work = world.kernel_bundles(self.free_rows_used(world), coupled)
        st = self.kernel_stats
        done, fallbacks, capped, impacts, violation = 0, 0, 0, [], None
        while done < n:
            chunk = n - done
            contacts = world.contact_data()
            lw = self._work_for(world, contacts)
            k = lcp_kernel(chunk, world.dt, world.time + done * world.dt, self.params, st, env, bodies, loads,
                           joints, drives, rows, work, tree, contacts, lw)
            grew = world.contacts_stepped()
            done += k
            fallbacks += int(st[S_FALLBACKS])
            capped += int(st[S_CAPPED_STEPS])
            n_imp = int(st[S_IMPACTS])
            if n_imp:
                impacts.append(lw.impacts[:min(n_imp, IMPACT_CAPACITY)].copy())
            if st[S_NEED_ROWS] > 0 or st[S_NEED_LOOPS] > 0:
                rows_room, loops_room = self._room
                self._room = (max(rows_room, 2 * int(st[S_NEED_ROWS])), max(loops_room, 2 * int(st[S_NEED_LOOPS])))
                self._work = None
                continue
            if k < chunk and not grew:
                break                       # blew up
            if k < chunk:
                continue                    # the contact buffers grew: the rest of the chunk
        if self.params[P_PROJECTION] > 0 and done > 0:
            violation = Violation(*(float(v) for v in st[S_VIOLATION:S_VIOLATION + 4]))
        tpm = self.params[P_TICKS_PER_MS]
        self.stats = LcpStats(
            iterations=int(st[S_PIVOTS] if st[S_METHOD] == LEMKE else st[S_SWEEPS]), residual=float(st[S_RESIDUAL]),
            solve_ms=float(st[S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0, time_capped=bool(st[S_CAPPED]),
            capped_steps=capped, steps=done, method={0: "none", LEMKE: "lemke", PGS: "pgs"}[int(st[S_METHOD])],
            rows=int(st[S_ROWS]), lcp_size=int(st[S_SIZE]), pivots=int(st[S_PIVOTS]), sweeps=int(st[S_SWEEPS]),
            loop_rows=int(st[S_LOOP_ROWS]), loop_rank=int(st[S_LOOP_RANK]), fallbacks=fallbacks,
            impacts=np.vstack(impacts) if impacts else np.zeros((0, IMPACT_COLUMNS)))
        self.stats.record_projection(violation)
        return done


def mhat_dense(world):
    """M̂ (6n × 6n, per body v then ω) of the world's joint tree at the current poses, each
    column M̂ e_k by the same tree solve the step uses (mhat_column) — for tests and
    tools. Bodies of no tree get M⁻¹; loop joints' rows are not in it."""
    from ..reference import world_inertia
    world._ensure_rows()
    m = world.model
    plan = build_tree_plan(m.joints.body, m.joints.type, static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia))
    tree = make_tree(plan, m.rows.count)
    _, bodies, _, joints, _, rows, _ = world.kernel_bundles(world.active_solver.free_rows_used(world))
    nb = m.bodies.count
    select_rows(tree, joints.type, joints.row_start, rows.active, False, tree.row_direct)
    body_I = np.ascontiguousarray(world_inertia(world))
    articulated_factor(tree, joints.type, joints.body, rows.J, rows.C, bodies.pos, bodies.inv_mass, body_I, False,
                       False)
    inv_I = np.zeros((nb, 9))
    for i in range(nb):
        if bodies.inv_mass[i] > 0.0:
            inv_I[i] = np.linalg.inv(body_I[i].reshape(3, 3)).ravel()
    in_tree = np.zeros(nb, np.int64)
    mark_tree(tree, in_tree)
    out = np.zeros((6 * nb, 6 * nb))
    J, zc, yv, yw = np.zeros((1, 12)), np.zeros((nb, 6)), np.zeros((nb, 3)), np.zeros((nb, 3))
    for i in range(nb):
        if bodies.inv_mass[i] == 0.0:
            continue
        for k in range(6):
            J[:] = 0.0
            J[0, k] = 1.0
            live = mhat_column(J, 0, i, 0, tree, joints.body, in_tree, bodies.inv_mass, inv_I, zc, yv, yw)
            col = np.hstack([yv, yw])
            if not live:
                col[in_tree == 1] = 0.0
            out[:, 6 * i + k] = col.ravel()
            clear_column(i, 0, in_tree, yv, yw)
    return out
