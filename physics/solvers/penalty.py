"""The `penalty` solver (seed 000): each active row becomes a spring-damper.

    F_pen = −Jᵀ(α G + β Ġ)                                  (eq. 9, seed 000)

Three presets of α, β and of how they are integrated:

* ``paper`` — exactly seed 000 §5: α = m_eff α*, β = m_eff β* with
  m_eff = 1/(1/m_i + 1/m_j) (masses only), α* = 5000, β* = 25 for translational
  rows and α* = 10000, β* = 10 for rotational rows, tuned for Δt ≈ 3 ms; explicit
  forces, semi-implicit Euler (eq. 27).
* ``critical`` — explicit as ``paper``, stiffness from each row's effective mass *and
  inertia* and the step, so that every mode of the coupled rows stays stable and
  critically damped: α_r = ω²/D_r, β_r = 2ζω/D_r with ω = κ/Δt, where D_r bounds the
  r-th Gershgorin row sum of A = J M⁻¹ Jᵀ (over the rows sharing a body with r). Then
  every eigenvalue λ of diag(α)A is ≤ ω², the damping diag(β)A = (2ζ/ω) diag(α)A acts
  on the same modes, and semi-implicit Euler is stable when κ² + 4ζκ < 4 (κ < 0.83 at
  ζ = 1); κ = 0.7 by default. D_r = Σ_{bodies b of r} Σ_{rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|
  (≥ the row sum, by the triangle inequality), from a static list of the rows on each
  body. Explicit penalty cannot be both stiff and stable where a row's effective mass
  is dominated by a small inertia on a long lever: there the row is soft.
* ``stiff`` (the default) — the same law integrated by backward Euler (below), so the
  springs can be far stiffer than explicit integration allows: α = m ω², β = 2ζ_s m ω,
  ω = κ_s/Δt, κ_s = 100, ζ_s = 1. m is seed 000's m_eff = 1/(1/m_i + 1/m_j) for a
  translational row and its rotational counterpart 1/(J M⁻¹ Jᵀ) (the two inertias about
  the row's axis) for a rotational row — not the translational row's J M⁻¹ Jᵀ, which
  a small inertia on a long lever makes tiny although the rest of the system holds
  that lever still (a carriage far out on its rail). A steady load F opens a row by
  F/α = F Δt²/(10⁴ m). Why implicit: explicit penalty is stable only for ωΔt < 2 on
  every mode of the coupled rows, and those modes' stiffness is set by the lightest
  part on the longest lever; backward Euler is stable for any α, β ≥ 0 (a linear
  spring-damper under it only loses energy), so the stiffness is chosen for the gap.

Implicit step. With the rows linearized over the step, G(t+Δt) ≈ G + Δt J V⁺, backward
Euler on every implicit row is one linear system in the bodies' velocities,

    (M̃ + Σ_r w_r J_rᵀ J_r) V⁺ = M̃ V + Δt F_ext + Σ_r g_r J_rᵀ,
    w_r = Δt² α_r + Δt β_r,   g_r = −Δt α_r G_r,   row force f_r = (g_r − w_r J_r V⁺)/Δt

(eq. 9 evaluated at the end of the step), the "(M + Δt B + Δt² K) ΔV = …" of implicit
springs with K = Jᵀ α J, B = Jᵀ β J. Why not Gauss–Seidel or Jacobi sweeps over the
joint blocks: on a long stiff chain they need ~depth² sweeps, and an unconverged sweep
is an explicit step again (it is how the explicit presets fail). So it is solved
exactly: the matrix is block-sparse, one 6×6 block per dynamic body and one per pair of
jointed bodies, factored by block LDLᵀ (Cholesky without square roots) in an elimination
order found once per layout (minimum degree: leaves first on a tree, so a tree — every scene, every chain —
has no fill and costs O(N); a loop of joints adds fill blocks, still exact).
Two nonlinearities the linearization leaves out are handled in the step:
* the turning of a lever under a joint force (rotational geometric stiffness, as in
  the impulse solver's direct path; Tournier et al. 2015, Andrews et al. 2017): M̃ adds
  its positive bound, from the joints' last point-row forces, to each body's inertia on
  both sides (added inertia: it changes nothing that does not accelerate), which keeps
  long hanging chains stable at large steps;
* fast rotation (a whip's tip: ωΔt ≈ 1) and limits reached within the step: when the
  poses the step reached miss the linearized rows by more than NEWTON_TOL, the same
  backward Euler step is solved again from its start, linearized at those poses (a
  Newton iteration, at most NEWTON_ITERATIONS). A limit is eq. 21/25's dead zone taken
  at the end of the step: a limit row binding at any iterate stays in for the step, on
  its signed value q − bound.
`paper` and `critical` keep seed 000's explicit forces (their behaviour is the
paper's); only the free rows below are in their system (with M: so a joint's friction
acts there on the bodies' own inertia, the joint springs passing it on).

Joint friction and motors (the free rows of joint_rows.py; the meaning of the impulse
solver's write_drive_rows) are rows of the same system with a bound:

* friction — the regularized Coulomb law f = −F_max ġ/max(|ġ|, v_ε) on the vector ġ of
  the joint's free-row rates (the ball ‖f‖ ≤ F_max of seed 001 eq. 8, 16), implicit in
  ġ⁺: a damper c = S m_b/Δt (S = STICK = 10⁶, m_b = n/Σ_rows 1/m the block's mass as
  above) whose force is clamped to the ball. The two are the same law with
  v_ε = F_max/c = F_max Δt/(S m_b): a sticking joint creeps at most at v_ε (the door:
  1.1·10⁻⁷ rad/s), a sliding one feels exactly F_max against its motion, and a joint
  stops within the step where the exact solution stops. The bound makes it an active
  set (damper, or constant force F_max along the last solve's force) of at most PASSES
  solves per step, started from the last step's forces. The door coasting from 2 rad/s
  against 20 N·m (I = 7.13 kg·m² about the hinge) stops at I ω0/τ = 0.7132 s exactly;
  here |ω| < 10⁻³ rad/s from the end of that step on, 0.72 s at Δt = 10 ms (error < Δt;
  the deceleration is exact to 0.1 %), and seed 001's pushed door stops at 0.87 s.
* motors — a servo on a 1-DOF joint's free row with the impulse motors' targets,
  modes and limits: position mode a spring-damper on q − target, k = m ω², c = 2ζ m ω
  (ω = 2π·frequency, ζ = damping: Box2D's soft constraint, which is this spring under
  the same backward Euler), velocity mode a damper c = S m/Δt on q̇ − target (as stiff
  as the impulse solver's hard velocity row); the force is clamped to ±max_force by
  the same active set. The servo's m is the inertia it drives: 1/(J A₀⁻¹ Jᵀ) with A₀
  the step's matrix without the drives (the other joints hold, the other drives are
  free; one solve per servo), so that ω is the servo's frequency on the arm it moves.
  (The impulse solver's soft row uses the row's own J M⁻¹ Jᵀ, the two bodies about their
  centres: on the robot arm its shoulder then sags 2.4° instead of 0.07°.)

Contacts (physics/contacts.py: per touching pair a manifold of ≤ 4 points, their normal rows
J V = ġ, the separation rate, and G = −depth). The explicit presets push with explicit
one-sided springs (contacts.penalty_contact_forces, ωΔt = CONTACT_KAPPA = 0.5: a body
resting at Δt = 10 ms sinks g(Δt/κ)² = 3.9 mm, a tower or a motor's push far more). The
stiff preset makes each point a spring of the implicit system: α = m ω², β = 2ζ m ω,
ω = CONTACT_STIFF_KAPPA/Δt = 10/Δt, ζ = CONTACT_ZETA = 1, m = 1/(p (1/m_a + 1/m_b)) over
the pair's p points (the whole patch: k = m_eff ω²), so a box resting on the ground sinks
m g/k = g (Δt/κ)² (0.01 mm at 10 ms) and a load F on a pair closes it by F/k. Seed 000's
dead zone χ = min(0, G), taken at the end of the step, and one-sidedness make the springs
an active set over the solves (check_springs): a row is in when it penetrates at the
end of the step (depth − Δt ġ⁺ > 0) and its force f = α(depth − Δt ġ⁺) − β ġ⁺ pushes,
at most CONTACT_PASSES solves (with the drives' active set), starting from the rows that
would penetrate at the start's velocity. A spring against a static body adds only to the
dynamic body's diagonal block and right side; one between two dynamic bodies couples
two nodes the elimination plan (the joint graph) does not link: those rows enter by the
Woodbury identity — x = A⁻¹b − A⁻¹U (W⁻¹ + Uᵀ A⁻¹ U)⁻¹ Uᵀ A⁻¹b, one solve with A's
factor per row and a dense m×m Cholesky (coupled_springs), the exact solution of the
whole system, as seed 004's Schur complement does for loop joints. Past MAX_COUPLED such
rows in a step, the rest are block Jacobi (each side against the other's velocity of the
last pass). Friction follows the solve (contacts.penalty_contact_friction): per pair the
impulses that stop its friction rows within the step, scaled into the Coulomb ball of
radius μ Σ f_n Δt of the springs just solved, change the velocities before the positions
(explicit friction before the solve, as the other presets', missed the normal springs'
torques: a box on a 30° slope crept). Where a touching body is also a joint's (a driven
wheel on its axle), those friction impulses then act as forces in the implicit solve,
done again from the step's start (friction_as_forces), so the joints pass the traction
on within the step: applied after the solve only, it opened rope_tow's wheel axles by
5.7 cm; now 0.2 mm.

The free rows' forces of the last step are kept as impulses (force·Δt) in the rows'
`impulse` (state: the Joint's friction_torque and sliding readouts read them, and the
next step starts its active set from them, so a restored state replays bit for bit);
the stiff preset keeps its joint rows' forces there too (the geometric stiffness).
"""
import heapq
import time
from collections import namedtuple

import numpy as np
from numba import njit

from ..contacts import (N_BLOCKS, N_NOW, N_ROWS, broad_contacts, detection_overflowed, narrow_contacts,
                        penalty_contact_forces, penalty_contact_friction, write_contact_rows)
from ..integrate import blown_up, gather_forces, gyroscopic_implicit, integrate_positions, integrate_velocities
from ..joint_rows import (MOTOR_OFF, MOTOR_POSITION, ROW_FREE, ROW_LIMIT, compute_joint_rates,
                          compute_joint_rows, row_velocity)
from ..joint_types import N_EQ, N_FREE, PRISMATIC
from ..quat import rotated_diagonal, world_inv_inertia_times
from ..settings import Setting, checked, defaults
from . import projection
from .projection import project_step
from .row_ops import copy2d, fill2d, scatter_row
from .stats import SolverStats

PAPER, CRITICAL, STIFF = 0, 1, 2
PRESETS = {"paper": PAPER, "critical": CRITICAL, "stiff": STIFF}
COEFFICIENTS = ("alpha_lin", "beta_lin", "alpha_rot", "beta_rot", "kappa", "zeta", "stiff_kappa",
                "stiff_zeta")                                                       # params[1:9]
P_NEWTON = 9
P_PROJECTION = 10       # Newton iterations of the post-projection (0: off)
N_PARAMS = 11
NEWTON_ITERATIONS = 2   # most extra solves of a stiff step (stiff_step)
NEWTON_TOL = 1e-3       # m or rad: a linearization that missed the reached poses by more is iterated
STICK = 1.0e6           # friction and velocity-motor dampers: c = S·m/Δt (v_ε = F_max Δt/(S m))
PASSES = 4              # most solves per step of the friction / motor-limit active set
DRIVE_NONE, DRIVE_FRICTION, DRIVE_POSITION, DRIVE_VELOCITY = 0, 1, 2, 3

SETTINGS = (
    Setting("penalty_preset", "choice", "stiff", choices=tuple(PRESETS), label="preset",
            help="stiff: stiff springs integrated implicitly (backward Euler; stable at any Δt and stiffness); "
                 "paper: α, β from the effective mass and α*, β* (seed 000), explicit; critical: every row "
                 "critically damped from its effective mass and Δt, explicit."),
    Setting("alpha_lin", "float", 5000.0, 0.0, 1e9, unit="1/s²", label="α* lin",
            help="Paper preset: stiffness per unit effective mass of translational rows (1/s²); "
                 "α = m_eff α* (seed 000 eq. 9)."),
    Setting("beta_lin", "float", 25.0, 0.0, 1e7, unit="1/s", label="β* lin",
            help="Paper preset: damping per unit effective mass of translational rows (1/s)."),
    Setting("alpha_rot", "float", 10000.0, 0.0, 1e9, unit="1/s²", label="α* rot",
            help="Paper preset: stiffness per unit effective mass of rotational rows (1/s²)."),
    Setting("beta_rot", "float", 10.0, 0.0, 1e7, unit="1/s", label="β* rot",
            help="Paper preset: damping per unit effective mass of rotational rows (1/s)."),
    Setting("kappa", "float", 0.7, 0.0, 2.0, label="κ",
            help="Critical preset: ωΔt of every row (dimensionless); below 2 for semi-implicit Euler, "
                 "0.7 by default."),
    Setting("zeta", "float", 1.0, 0.0, 100.0, label="ζ", help="Critical preset: damping ratio of every row (1 = critical)."),
    Setting("stiff_kappa", "float", 100.0, 0.0, 1000.0, label="κ stiff",
            help="Stiff preset: ωΔt of every row (dimensionless, any size: implicit) on its mass m (the bodies' "
                 "m_eff for translational rows, their inertias about the axis for rotational ones); a steady "
                 "load F opens a row by F Δt²/(κ² m)."),
    Setting("stiff_zeta", "float", 1.0, 0.0, 100.0, label="ζ stiff",
            help="Stiff preset: damping ratio of every row (1 = critical)."),
    Setting("post_projection", "bool", False, label="projection",
            help="Seed 004's projection onto the joints' constraint manifold after each step (positions, then "
                 "velocities; physics/solvers/projection.py): post-stabilization. (lcp's own is `projection`, on by "
                 "default.)"),
    Setting("projection_iterations", "int", 2, 1, 10, label="projection iter.",
            help="Newton iterations of the position projection."),
)

Plan = namedtuple("Plan", "body_node node_body up_ptr up_node pair_ptr pair_lo pair_hi pair_target joint_slot "
                          "joint_b_late diag0 offd0 rhs0 diag offd rhs inertia_world inv_inertia_world row_w row_g "
                          "c_lin engaged drive_kind drive_max drive_clamped drive_dir pos0 quat0 vel0 omega0 vel_k omega_k")
"""The implicit step's layout and scratch (PenaltySolver.plan). Layout, from the joint graph
(build_plan): body_node (n,) the body's node in elimination order (−1: static), node_body
(k,); up_ptr (k+1,), up_node (u,): CSR of each node's neighbours eliminated after it (its
off-diagonal blocks, fill included: slot s is the block A[up_node[s], k]); per node, the
pairs of its slots whose product updates a later block: pair_ptr (k+1,), pair_lo, pair_hi
(p,) the slots of the earlier and the later neighbour, pair_target (p,) the slot updated
(−1 − node: that node's diagonal block); joint_slot (m,) the slot of the joint's two
bodies (−1: one is static), joint_b_late (m,) 1 if body b is the later node. Scratch:
diag0, offd0, rhs0 the step's matrix and right side before the bounded rows, diag, offd,
rhs those of one solve (blocks 6×6 row-major, lower triangle of the diagonal blocks);
inertia_world, inv_inertia_world (n,9); row_w, row_g (r,) each implicit row's weight and
right side, c_lin (r,) its linearized value at the end of the step, engaged (r,) the
side of a limit row binding at some iterate of this step; per joint: drive_kind,
drive_max (N·m or N), drive_clamped, drive_dir (m,3) the unit direction of a clamped force
over the free rows; pos0, quat0, vel0, omega0 the step's start and vel_k, omega_k the
velocities of the last Newton iterate (stiff_step)."""


# ωΔt of a contact's spring under the explicit presets (contacts.penalty_contact_forces): a
# body resting at Δt sinks g(Δt/κ)², 0.35 mm at 3 ms
CONTACT_KAPPA = 0.5
# the stiff preset's contact springs (implicit, contact_springs): ωΔt and damping ratio; a
# body resting on the ground sinks m g/k = g(Δt/κ)², 0.01 mm at 10 ms
CONTACT_STIFF_KAPPA = 10.0
CONTACT_ZETA = 1.0
CONTACT_PASSES = 8      # most solves per step of the contacts' (and drives') active set
MAX_COUPLED = 256       # most contact rows between two dynamic bodies solved exactly per step (coupled_springs)

# ---------------------------------------------------------------------------- explicit forces
@njit(cache=True, error_model="numpy", _nrt=False)
def gershgorin_bounds(bodies, rows, work):
    """row_bound[r] = Σ_{bodies b of r} Σ_{active rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|.
    body_row_ptr/body_row_idx list only equality and limit rows (free rows never push)."""
    row_kind, row_J, row_active, row_body = rows.kind, rows.J, rows.active, rows.body
    body_quat, body_inv_mass, body_inv_inertia = bodies.quat, bodies.inv_mass, bodies.inv_inertia
    body_row_ptr, body_row_idx, row_minv_jt, row_bound = work.body_row_ptr, work.body_row_idx, work.minv_jt, work.bound
    # M⁻¹Jᵀ of each side of each active row (zero for inactive rows and static bodies)
    for r in range(row_J.shape[0]):
        on = row_active[r] != 0 and row_kind[r] != ROW_FREE
        for side in range(2):
            i = row_body[r, side]
            o = 6 * side
            if not on:
                for k in range(6):
                    row_minv_jt[r, o + k] = 0.0
                continue
            im = body_inv_mass[i]
            row_minv_jt[r, o] = im * row_J[r, o]
            row_minv_jt[r, o + 1] = im * row_J[r, o + 1]
            row_minv_jt[r, o + 2] = im * row_J[r, o + 2]
            ix, iy, iz = world_inv_inertia_times(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                                 body_inv_inertia[i, 0], body_inv_inertia[i, 1],
                                                 body_inv_inertia[i, 2], row_J[r, o + 3], row_J[r, o + 4],
                                                 row_J[r, o + 5])
            row_minv_jt[r, o + 3] = ix
            row_minv_jt[r, o + 4] = iy
            row_minv_jt[r, o + 5] = iz
        row_bound[r] = 0.0
    # per body: every pair of rows on it adds |J_rb · M⁻¹J_r'bᵀ| to both rows' bounds
    for i in range(body_row_ptr.shape[0] - 1):
        if body_inv_mass[i] == 0.0 and body_inv_inertia[i, 0] == 0.0:
            continue
        for p in range(body_row_ptr[i], body_row_ptr[i + 1]):
            r = body_row_idx[p, 0]
            if row_active[r] == 0:
                continue
            o = 6 * body_row_idx[p, 1]
            for p2 in range(p, body_row_ptr[i + 1]):
                r2 = body_row_idx[p2, 0]
                if row_active[r2] == 0:
                    continue
                o2 = 6 * body_row_idx[p2, 1]
                dot = 0.0
                for k in range(6):
                    dot += row_J[r, o + k] * row_minv_jt[r2, o2 + k]
                dot = abs(dot)
                row_bound[r] += dot
                if p2 != p:
                    row_bound[r2] += dot


@njit(cache=True, error_model="numpy", _nrt=False)
def penalty_forces(params, h, bodies, rows, work):
    """Add −Jᵀ(αC + βĊ) of every active equality and limit row to the body forces
    (the explicit presets)."""
    preset = params[0]
    if preset == CRITICAL:
        gershgorin_bounds(bodies, rows, work)
    row_kind, row_rot, row_J, row_C, row_active = rows.kind, rows.rot, rows.J, rows.C, rows.active
    row_body = rows.body
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    row_bound, force_acc, torque_acc = work.bound, work.force_acc, work.torque_acc
    for r in range(row_C.shape[0]):
        if row_active[r] == 0 or row_kind[r] == ROW_FREE:
            continue
        a = row_body[r, 0]
        b = row_body[r, 1]
        if preset == PAPER:
            s = body_inv_mass[a] + body_inv_mass[b]
            if s == 0.0:
                continue
            m_eff = 1.0 / s
            if row_rot[r]:
                alpha, beta = m_eff * params[3], m_eff * params[4]
            else:
                alpha, beta = m_eff * params[1], m_eff * params[2]
        else:
            d = row_bound[r]
            if d <= 0.0:
                continue
            w = params[5] / h
            alpha = w * w / d
            beta = 2.0 * params[6] * w / d
        lam = -(alpha * row_C[r] + beta * row_velocity(row_J, r, a, b, body_vel, body_omega))
        scatter_row(row_J, r, a, b, lam, force_acc, torque_acc)


# ---------------------------------------------------------------------------- 6×6 block algebra
FMA = {"contract", "reassoc"}   # fused multiply-adds and reordered sums (round-off only; no NaN assumptions)
# Blocks are 6×6 row-major (36 numbers). The system is factored as A = L D Lᵀ, block by block
# (no square root on the chain of pivots each node waits for: a quarter of the factor's time
# on a 100-link chain). A factored diagonal block holds its unit lower triangle L below the
# diagonal and the reciprocals 1/d_j of its pivots on it; a factored off-diagonal block
# A_nk holds N_nk = A_nk L_kk⁻ᵀ D_k⁻¹, so that A_nn − N_nk D_k N_nkᵀ is the next Schur
# complement and no solve divides.
@njit(cache=True, error_model="numpy", inline="always")
def inv_pivot(d):
    """1/d of an LDLᵀ pivot (not positive definite — a NaN state: 1e300, blown_up catches
    it)."""
    if not d > 0.0:
        d = 1e-300
    return 1.0 / d


@njit(cache=True, error_model="numpy", inline="always")
def ldl6_locals(D, k):
    """D[k] (lower triangle read) := its factor L D Lᵀ (L unit lower below the diagonal, 1/d_j
    on it), which is also returned as the 21 lower entries row by row (L_ij at i(i+1)/2 + j,
    the diagonal as 1/d_j). t_ij = L_ij d_j are the entries before the division."""
    c0 = inv_pivot(D[k, 0])
    t10, t20, t30, t40, t50 = D[k, 6], D[k, 12], D[k, 18], D[k, 24], D[k, 30]
    l10, l20, l30, l40, l50 = t10 * c0, t20 * c0, t30 * c0, t40 * c0, t50 * c0
    c1 = inv_pivot(D[k, 7] - l10 * t10)
    t21 = D[k, 13] - l20 * t10
    t31 = D[k, 19] - l30 * t10
    t41 = D[k, 25] - l40 * t10
    t51 = D[k, 31] - l50 * t10
    l21, l31, l41, l51 = t21 * c1, t31 * c1, t41 * c1, t51 * c1
    c2 = inv_pivot(D[k, 14] - l20 * t20 - l21 * t21)
    t32 = D[k, 20] - l30 * t20 - l31 * t21
    t42 = D[k, 26] - l40 * t20 - l41 * t21
    t52 = D[k, 32] - l50 * t20 - l51 * t21
    l32, l42, l52 = t32 * c2, t42 * c2, t52 * c2
    c3 = inv_pivot(D[k, 21] - l30 * t30 - l31 * t31 - l32 * t32)
    t43 = D[k, 27] - l40 * t30 - l41 * t31 - l42 * t32
    t53 = D[k, 33] - l50 * t30 - l51 * t31 - l52 * t32
    l43, l53 = t43 * c3, t53 * c3
    c4 = inv_pivot(D[k, 28] - l40 * t40 - l41 * t41 - l42 * t42 - l43 * t43)
    t54 = D[k, 34] - l50 * t40 - l51 * t41 - l52 * t42 - l53 * t43
    l54 = t54 * c4
    c5 = inv_pivot(D[k, 35] - l50 * t50 - l51 * t51 - l52 * t52 - l53 * t53 - l54 * t54)
    D[k, 0] = c0
    D[k, 6], D[k, 7] = l10, c1
    D[k, 12], D[k, 13], D[k, 14] = l20, l21, c2
    D[k, 18], D[k, 19], D[k, 20], D[k, 21] = l30, l31, l32, c3
    D[k, 24], D[k, 25], D[k, 26], D[k, 27], D[k, 28] = l40, l41, l42, l43, c4
    D[k, 30], D[k, 31], D[k, 32], D[k, 33], D[k, 34], D[k, 35] = l50, l51, l52, l53, l54, c5
    return (c0, l10, c1, l20, l21, c2, l30, l31, l32, c3, l40, l41, l42, l43, c4, l50, l51, l52, l53, l54, c5)


@njit(cache=True, error_model="numpy", inline="always")
def factored6(D, k):
    """A factored diagonal block's 21 lower entries as ldl6_locals returns them."""
    return (D[k, 0], D[k, 6], D[k, 7], D[k, 12], D[k, 13], D[k, 14], D[k, 18], D[k, 19], D[k, 20], D[k, 21],
            D[k, 24], D[k, 25], D[k, 26], D[k, 27], D[k, 28], D[k, 30], D[k, 31], D[k, 32], D[k, 33], D[k, 34],
            D[k, 35])


@njit(cache=True, error_model="numpy", inline="always")
def lower_solve6(L, x0, x1, x2, x3, x4, x5):
    """L⁻¹x on scalars (L unit lower: ldl6_locals' entries below the diagonal)."""
    y0 = x0
    y1 = x1 - L[1] * y0
    y2 = x2 - L[3] * y0 - L[4] * y1
    y3 = x3 - L[6] * y0 - L[7] * y1 - L[8] * y2
    y4 = x4 - L[10] * y0 - L[11] * y1 - L[12] * y2 - L[13] * y3
    y5 = x5 - L[15] * y0 - L[16] * y1 - L[17] * y2 - L[18] * y3 - L[19] * y4
    return y0, y1, y2, y3, y4, y5


@njit(cache=True, error_model="numpy", inline="always")
def upper_solve6(L, y0, y1, y2, y3, y4, y5):
    """L⁻ᵀy on scalars (L unit lower)."""
    x5 = y5
    x4 = y4 - L[19] * x5
    x3 = y3 - L[13] * x4 - L[18] * x5
    x2 = y2 - L[8] * x3 - L[12] * x4 - L[17] * x5
    x1 = y1 - L[4] * x2 - L[7] * x3 - L[11] * x4 - L[16] * x5
    x0 = y0 - L[1] * x1 - L[3] * x2 - L[6] * x3 - L[10] * x4 - L[15] * x5
    return x0, x1, x2, x3, x4, x5


@njit(cache=True, error_model="numpy", inline="always")
def pivots6(L, y0, y1, y2, y3, y4, y5):
    """D⁻¹y on scalars (the reciprocal pivots on ldl6_locals' diagonal)."""
    return y0 * L[0], y1 * L[2], y2 * L[5], y3 * L[9], y4 * L[14], y5 * L[20]


@njit(cache=True, error_model="numpy", inline="always")
def dot6(a, b):
    """a·b of two 6-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, error_model="numpy", inline="always")
def solved_row6(L, B, s, i):
    """Row i of W = B[s] L⁻ᵀ, returned, and of N = W D⁻¹, written back into B[s]."""
    o = 6 * i
    w = lower_solve6(L, B[s, o], B[s, o + 1], B[s, o + 2], B[s, o + 3], B[s, o + 4], B[s, o + 5])
    B[s, o], B[s, o + 1], B[s, o + 2], B[s, o + 3], B[s, o + 4], B[s, o + 5] = pivots6(L, w[0], w[1], w[2], w[3],
                                                                                         w[4], w[5])
    return w


@njit(cache=True, error_model="numpy", inline="always")
def row6(B, s, i):
    """Row i of B[s] as a 6-tuple."""
    o = 6 * i
    return B[s, o], B[s, o + 1], B[s, o + 2], B[s, o + 3], B[s, o + 4], B[s, o + 5]


@njit(cache=True, error_model="numpy", inline="always")
def downdate6(D, n, B, s, w0, w1, w2, w3, w4, w5):
    """D[n]'s lower triangle −= N Wᵀ = W D⁻¹ Wᵀ (N: B[s] as solved_row6 left it; W's rows
    w0…w5 as 6-tuples), entry by entry as factor's diagonal pair."""
    n0, n1, n2 = row6(B, s, 0), row6(B, s, 1), row6(B, s, 2)
    n3, n4, n5 = row6(B, s, 3), row6(B, s, 4), row6(B, s, 5)
    D[n, 0] -= dot6(n0, w0)
    D[n, 6] -= dot6(n1, w0)
    D[n, 7] -= dot6(n1, w1)
    D[n, 12] -= dot6(n2, w0)
    D[n, 13] -= dot6(n2, w1)
    D[n, 14] -= dot6(n2, w2)
    D[n, 18] -= dot6(n3, w0)
    D[n, 19] -= dot6(n3, w1)
    D[n, 20] -= dot6(n3, w2)
    D[n, 21] -= dot6(n3, w3)
    D[n, 24] -= dot6(n4, w0)
    D[n, 25] -= dot6(n4, w1)
    D[n, 26] -= dot6(n4, w2)
    D[n, 27] -= dot6(n4, w3)
    D[n, 28] -= dot6(n4, w4)
    D[n, 30] -= dot6(n5, w0)
    D[n, 31] -= dot6(n5, w1)
    D[n, 32] -= dot6(n5, w2)
    D[n, 33] -= dot6(n5, w3)
    D[n, 34] -= dot6(n5, w4)
    D[n, 35] -= dot6(n5, w5)


@njit(cache=True, error_model="numpy", inline="always")
def forward_node6(L, x, k, n, B, s):
    """solve's forward step of node k on scalars: y_k = L_kk⁻¹x_k, x_n −= N_nk y_k (B[s]),
    then x_k := D_k⁻¹ y_k."""
    y = lower_solve6(L, x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5])
    x[n, 0] -= dot6(row6(B, s, 0), y)
    x[n, 1] -= dot6(row6(B, s, 1), y)
    x[n, 2] -= dot6(row6(B, s, 2), y)
    x[n, 3] -= dot6(row6(B, s, 3), y)
    x[n, 4] -= dot6(row6(B, s, 4), y)
    x[n, 5] -= dot6(row6(B, s, 5), y)
    x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5] = pivots6(L, y[0], y[1], y[2], y[3], y[4], y[5])


@njit(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def factor_node1(diag, offd, k, s, n, x):
    """factor_solve's node k with one later neighbour n (slot s) and no other pair — a
    chain's or a leaf's: written out on scalars (no reload through the possibly aliased
    arrays; fused multiply-adds: round-off apart, the generic path). L_kk D_k L_kkᵀ,
    W = A_nk L_kk⁻ᵀ, N_nk = W D_k⁻¹, A_nn −= N_nk Wᵀ (lower triangle), then the forward
    step (forward_node6)."""
    L = ldl6_locals(diag, k)
    w0, w1, w2 = solved_row6(L, offd, s, 0), solved_row6(L, offd, s, 1), solved_row6(L, offd, s, 2)
    w3, w4, w5 = solved_row6(L, offd, s, 3), solved_row6(L, offd, s, 4), solved_row6(L, offd, s, 5)
    downdate6(diag, n, offd, s, w0, w1, w2, w3, w4, w5)
    forward_node6(L, x, k, n, offd, s)


@njit(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def factor_node_pair(diag, offd, k, s, n, s2, n2, x):
    """factor_node1 of nodes k and k + 1 (slots s, s2; later neighbours n, n2 ≠ k + 1), their
    steps interleaved: the two are independent (a chain eliminated from both ends), and
    each is a latency chain (pivot divisions, triangular solves) the processor now
    overlaps. Where n = n2, A_nn and x_n are updated by k first, as in order."""
    L = ldl6_locals(diag, k)
    M = ldl6_locals(diag, k + 1)
    w0, w1, w2 = solved_row6(L, offd, s, 0), solved_row6(L, offd, s, 1), solved_row6(L, offd, s, 2)
    v0, v1, v2 = solved_row6(M, offd, s2, 0), solved_row6(M, offd, s2, 1), solved_row6(M, offd, s2, 2)
    w3, w4, w5 = solved_row6(L, offd, s, 3), solved_row6(L, offd, s, 4), solved_row6(L, offd, s, 5)
    v3, v4, v5 = solved_row6(M, offd, s2, 3), solved_row6(M, offd, s2, 4), solved_row6(M, offd, s2, 5)
    downdate6(diag, n, offd, s, w0, w1, w2, w3, w4, w5)
    downdate6(diag, n2, offd, s2, v0, v1, v2, v3, v4, v5)
    forward_node6(L, x, k, n, offd, s)
    forward_node6(M, x, k + 1, n2, offd, s2)


@njit(cache=True, error_model="numpy", inline="always")
def factor_node(diag, offd, k, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target):
    """The generic step of node k (any number of later neighbours): L_kk D_k L_kkᵀ; per slot
    W = A_nk L_kk⁻ᵀ; every pair of later neighbours n1 ≤ n2 updated by W_n2 D_k⁻¹ W_n1ᵀ (its
    diagonal block, or the fill block pair_target); then each slot's W turned into N."""
    ldl6_locals(diag, k)
    for s in range(up_ptr[k], up_ptr[k + 1]):
        for i in range(6):
            for j in range(6):
                t = offd[s, 6 * i + j]
                for p in range(j):
                    t -= diag[k, 6 * j + p] * offd[s, 6 * i + p]
                offd[s, 6 * i + j] = t
    for p in range(pair_ptr[k], pair_ptr[k + 1]):
        lo, hi, t = pair_lo[p], pair_hi[p], pair_target[p]
        if t < 0:
            n = -1 - t
            for i in range(6):
                for j in range(i + 1):
                    acc = 0.0
                    for q in range(6):
                        acc += offd[lo, 6 * i + q] * diag[k, 7 * q] * offd[lo, 6 * j + q]
                    diag[n, 6 * i + j] -= acc
        else:
            for i in range(6):
                for j in range(6):
                    acc = 0.0
                    for q in range(6):
                        acc += offd[hi, 6 * i + q] * diag[k, 7 * q] * offd[lo, 6 * j + q]
                    offd[t, 6 * i + j] -= acc
    for s in range(up_ptr[k], up_ptr[k + 1]):
        for i in range(6):
            for j in range(6):
                offd[s, 6 * i + j] *= diag[k, 7 * j]


@njit(cache=True, error_model="numpy", inline="always")
def forward_node(diag, offd, k, up_ptr, up_node, x):
    """solve's generic forward step of node k: y_k = L_kk⁻¹x_k, x_n −= N_nk y_k for each
    later neighbour, x_k := D_k⁻¹ y_k."""
    for j in range(6):
        t = x[k, j]
        for p in range(j):
            t -= diag[k, 6 * j + p] * x[k, p]
        x[k, j] = t
    for s in range(up_ptr[k], up_ptr[k + 1]):
        n = up_node[s]
        for i in range(6):
            acc = 0.0
            for q in range(6):
                acc += offd[s, 6 * i + q] * x[k, q]
            x[n, i] -= acc
    for j in range(6):
        x[k, j] *= diag[k, 7 * j]


@njit(cache=True, error_model="numpy", inline="always")
def backward_node(diag, offd, k, up_ptr, up_node, x):
    """solve's generic backward step of node k: x_k := L_kk⁻ᵀ (x_k − Σ N_nkᵀ x_n)."""
    for s in range(up_ptr[k], up_ptr[k + 1]):
        n = up_node[s]
        for q in range(6):
            acc = 0.0
            for i in range(6):
                acc += offd[s, 6 * i + q] * x[n, i]
            x[k, q] -= acc
    for j in range(5, -1, -1):
        t = x[k, j]
        for p in range(j + 1, 6):
            t -= diag[k, 6 * p + j] * x[k, p]
        x[k, j] = t


@njit(cache=True, error_model="numpy")
def factor(diag, offd, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target):
    """Block LDLᵀ A = L D Lᵀ in place, node by node in elimination order (factor_node)."""
    for k in range(diag.shape[0]):
        factor_node(diag, offd, k, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)


@njit(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def factor_solve(diag, offd, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, x):
    """factor, then x := A⁻¹x as solve, with solve's forward substitution done node by node
    right after the node is factored (its blocks are still in cache): factor then solve
    (round-off apart: fused multiply-adds), one pass over the factor fewer. A node with one
    later neighbour and only that neighbour's diagonal to update (a chain's, a leaf's):
    factor_node1; two such consecutive independent nodes: factor_node_pair."""
    nn = diag.shape[0]
    k = 0
    while k < nn:
        s0 = up_ptr[k]
        if up_ptr[k + 1] == s0 + 1 and pair_ptr[k + 1] == pair_ptr[k] + 1:
            if (k + 1 < nn and up_node[s0] != k + 1 and up_ptr[k + 2] == s0 + 2
                    and pair_ptr[k + 2] == pair_ptr[k + 1] + 1):
                factor_node_pair(diag, offd, k, s0, up_node[s0], s0 + 1, up_node[s0 + 1], x)
                k += 2
            else:
                factor_node1(diag, offd, k, s0, up_node[s0], x)
                k += 1
            continue
        factor_node(diag, offd, k, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)
        forward_node(diag, offd, k, up_ptr, up_node, x)
        k += 1
    back_substitute(diag, offd, up_ptr, up_node, x)


@njit(cache=True, error_model="numpy", fastmath=FMA, _nrt=False)
def back_substitute(diag, offd, up_ptr, up_node, x):
    """solve's backward substitution (Lᵀ x = D⁻¹y, the nodes in reverse order); a node with
    one later neighbour on scalars (back_rhs6, then L_kk⁻ᵀ), two such independent
    consecutive ones interleaved (as factor_node_pair)."""
    k = diag.shape[0] - 1
    while k >= 0:
        s0 = up_ptr[k]
        if up_ptr[k + 1] == s0 + 1:
            if k >= 1 and up_ptr[k - 1] == s0 - 1 and up_node[s0 - 1] != k:
                y = back_rhs6(offd, s0, x, up_node[s0], k)
                z = back_rhs6(offd, s0 - 1, x, up_node[s0 - 1], k - 1)
                x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5] = upper_solve6(factored6(diag, k), y[0], y[1],
                                                                                     y[2], y[3], y[4], y[5])
                x[k - 1, 0], x[k - 1, 1], x[k - 1, 2], x[k - 1, 3], x[k - 1, 4], x[k - 1, 5] = upper_solve6(
                    factored6(diag, k - 1), z[0], z[1], z[2], z[3], z[4], z[5])
                k -= 2
            else:
                y = back_rhs6(offd, s0, x, up_node[s0], k)
                x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5] = upper_solve6(factored6(diag, k), y[0], y[1],
                                                                                     y[2], y[3], y[4], y[5])
                k -= 1
            continue
        backward_node(diag, offd, k, up_ptr, up_node, x)
        k -= 1


@njit(cache=True, error_model="numpy", inline="always")
def back_rhs6(offd, s, x, n, k):
    """x_k − L_nkᵀ x_n (B = offd[s]) on scalars."""
    xn = (x[n, 0], x[n, 1], x[n, 2], x[n, 3], x[n, 4], x[n, 5])
    return (x[k, 0] - (offd[s, 0] * xn[0] + offd[s, 6] * xn[1] + offd[s, 12] * xn[2] + offd[s, 18] * xn[3]
                       + offd[s, 24] * xn[4] + offd[s, 30] * xn[5]),
            x[k, 1] - (offd[s, 1] * xn[0] + offd[s, 7] * xn[1] + offd[s, 13] * xn[2] + offd[s, 19] * xn[3]
                       + offd[s, 25] * xn[4] + offd[s, 31] * xn[5]),
            x[k, 2] - (offd[s, 2] * xn[0] + offd[s, 8] * xn[1] + offd[s, 14] * xn[2] + offd[s, 20] * xn[3]
                       + offd[s, 26] * xn[4] + offd[s, 32] * xn[5]),
            x[k, 3] - (offd[s, 3] * xn[0] + offd[s, 9] * xn[1] + offd[s, 15] * xn[2] + offd[s, 21] * xn[3]
                       + offd[s, 27] * xn[4] + offd[s, 33] * xn[5]),
            x[k, 4] - (offd[s, 4] * xn[0] + offd[s, 10] * xn[1] + offd[s, 16] * xn[2] + offd[s, 22] * xn[3]
                       + offd[s, 28] * xn[4] + offd[s, 34] * xn[5]),
            x[k, 5] - (offd[s, 5] * xn[0] + offd[s, 11] * xn[1] + offd[s, 17] * xn[2] + offd[s, 23] * xn[3]
                       + offd[s, 29] * xn[4] + offd[s, 35] * xn[5]))


@njit(cache=True, error_model="numpy")
def solve(diag, offd, up_ptr, up_node, x):
    """x := A⁻¹x with A = L D Lᵀ from factor (x: (k, 6), one row per node)."""
    nn = diag.shape[0]
    for k in range(nn):
        forward_node(diag, offd, k, up_ptr, up_node, x)
    for k in range(nn - 1, -1, -1):
        backward_node(diag, offd, k, up_ptr, up_node, x)


@njit(cache=True, error_model="numpy")
def add_row(row_J, r, na, nb, slot, b_late, w, g, diag, offd, rhs):
    """w J_rᵀJ_r into the blocks of the row's bodies (nodes na, nb; −1 static) and g J_rᵀ
    into their right sides. (Not inlined: it serves the few translational rows that are
    not point rows, and inlined it slows its callers' loops by a third.)"""
    if na >= 0:
        for i in range(6):
            ji = row_J[r, i]
            rhs[na, i] += g * ji
            wi = w * ji
            for j in range(i + 1):
                diag[na, 6 * i + j] += wi * row_J[r, j]
    if nb >= 0:
        for i in range(6):
            ji = row_J[r, 6 + i]
            rhs[nb, i] += g * ji
            wi = w * ji
            for j in range(i + 1):
                diag[nb, 6 * i + j] += wi * row_J[r, 6 + j]
    if slot >= 0:
        ol = 6 if b_late else 0                      # rows of the later node, columns of the earlier
        oe = 6 - ol
        for i in range(6):
            wi = w * row_J[r, ol + i]
            for j in range(6):
                offd[slot, 6 * i + j] += wi * row_J[r, oe + j]


@njit(cache=True, error_model="numpy", inline="always")
def add_angular_side(n, w, g, x, y, z, diag, rhs):
    """One body's share of a rotational row whose angular part on it is (x, y, z): w j jᵀ into
    the lower triangle of its angular block, g j into its right side."""
    rhs[n, 3] += g * x
    rhs[n, 4] += g * y
    rhs[n, 5] += g * z
    wx, wy, wz = w * x, w * y, w * z
    diag[n, 21] += wx * x
    diag[n, 27] += wy * x
    diag[n, 28] += wy * y
    diag[n, 33] += wz * x
    diag[n, 34] += wz * y
    diag[n, 35] += wz * z


@njit(cache=True, error_model="numpy", inline="always")
def add_angular_row(row_J, r, na, nb, slot, b_late, w, g, diag, offd, rhs):
    """add_row for a rotational row (no linear part): only the angular blocks. Its six
    angular numbers are read once into locals (the stores into the blocks could alias
    row_J, so a loop over them would read them again after every store)."""
    ax, ay, az = row_J[r, 3], row_J[r, 4], row_J[r, 5]
    bx, by, bz = row_J[r, 9], row_J[r, 10], row_J[r, 11]
    if na >= 0:
        add_angular_side(na, w, g, ax, ay, az, diag, rhs)
    if nb >= 0:
        add_angular_side(nb, w, g, bx, by, bz, diag, rhs)
    if slot >= 0:
        lx, ly, lz = (bx, by, bz) if b_late else (ax, ay, az)     # the later node's rows
        ex, ey, ez = (ax, ay, az) if b_late else (bx, by, bz)     # the earlier node's columns
        wx, wy, wz = w * lx, w * ly, w * lz
        offd[slot, 21] += wx * ex
        offd[slot, 22] += wx * ey
        offd[slot, 23] += wx * ez
        offd[slot, 27] += wy * ex
        offd[slot, 28] += wy * ey
        offd[slot, 29] += wy * ez
        offd[slot, 33] += wz * ex
        offd[slot, 34] += wz * ey
        offd[slot, 35] += wz * ez


@njit(cache=True, error_model="numpy", inline="always")
def add_joint_side(n, sgn, w, ra, g, S, diag, rhs):
    """One body's share of a joint's three point rows along the world axes (common weight
    w, right sides g) and of its perpendicular rows (S: perpendicular_rows' sums). Point
    rows: J(e) = sgn·P e with P = [E; [r]ₓ], so w P Pᵀ = w [[E, [r]ₓᵀ], [[r]ₓ, |r|²E − r rᵀ]]
    and Σ g_e J(e) = sgn (g, r × g); perpendicular rows: Σ w u uᵀ into the angular block,
    −sgn Σ g u into the right side (J's angular part is u on body a, −u on b)."""
    rx, ry, rz = ra
    gx, gy, gz = g
    s00, s01, s02, s11, s12, s22, hx, hy, hz = S
    diag[n, 0] += w
    diag[n, 7] += w
    diag[n, 14] += w
    # [r]ₓ = [[0, −rz, ry], [rz, 0, −rx], [−ry, rx, 0]] in rows 3-5, columns 0-2
    diag[n, 19] -= w * rz
    diag[n, 20] += w * ry
    diag[n, 24] += w * rz
    diag[n, 26] -= w * rx
    diag[n, 30] -= w * ry
    diag[n, 31] += w * rx
    rr = rx * rx + ry * ry + rz * rz
    diag[n, 21] += w * (rr - rx * rx) + s00
    diag[n, 27] += s01 - w * ry * rx
    diag[n, 28] += w * (rr - ry * ry) + s11
    diag[n, 33] += s02 - w * rz * rx
    diag[n, 34] += s12 - w * rz * ry
    diag[n, 35] += w * (rr - rz * rz) + s22
    rhs[n, 0] += sgn * gx
    rhs[n, 1] += sgn * gy
    rhs[n, 2] += sgn * gz
    rhs[n, 3] += sgn * (ry * gz - rz * gy - hx)
    rhs[n, 4] += sgn * (rz * gx - rx * gz - hy)
    rhs[n, 5] += sgn * (rx * gy - ry * gx - hz)




@njit(cache=True, error_model="numpy", inline="always")
def add_joint_coupling(slot, w, rl, re, S, offd):
    """The off-diagonal block A[late, early] of a joint's three point rows,
    −w P_l P_eᵀ = −w [[E, [r_e]ₓᵀ], [[r_l]ₓ, (r_l·r_e)E − r_e r_lᵀ]], and of its
    perpendicular rows, −Σ w u uᵀ (the same for either order: symmetric)."""
    lx, ly, lz = rl
    ex, ey, ez = re
    s00, s01, s02, s11, s12, s22 = S[0], S[1], S[2], S[3], S[4], S[5]
    offd[slot, 0] -= w
    offd[slot, 7] -= w
    offd[slot, 14] -= w
    # rows 0-2, columns 3-5: [r_e]ₓᵀ = [[0, ez, −ey], [−ez, 0, ex], [ey, −ex, 0]]
    offd[slot, 4] -= w * ez
    offd[slot, 5] += w * ey
    offd[slot, 9] += w * ez
    offd[slot, 11] -= w * ex
    offd[slot, 15] -= w * ey
    offd[slot, 16] += w * ex
    # rows 3-5, columns 0-2: [r_l]ₓ
    offd[slot, 19] += w * lz
    offd[slot, 20] -= w * ly
    offd[slot, 24] -= w * lz
    offd[slot, 26] += w * lx
    offd[slot, 30] += w * ly
    offd[slot, 31] -= w * lx
    d = lx * ex + ly * ey + lz * ez
    offd[slot, 21] -= w * (d - ex * lx) + s00
    offd[slot, 22] += w * ex * ly - s01
    offd[slot, 23] += w * ex * lz - s02
    offd[slot, 27] += w * ey * lx - s01
    offd[slot, 28] -= w * (d - ey * ly) + s11
    offd[slot, 29] += w * ey * lz - s12
    offd[slot, 33] += w * ez * lx - s02
    offd[slot, 34] += w * ez * ly - s12
    offd[slot, 35] -= w * (d - ez * lz) + s22


@njit(cache=True, error_model="numpy", inline="always")
def perpendicular_rows(h, omega, zeta, relin, a, b, r0, r1, rows, plan):
    """stiff_rows' springs of a joint's perpendicular rows r0…r1−1 (angular part u on body
    a, −u on b: joint_rows.perpendicular_row): per active row its mass 1/(uᵀ(I_a⁻¹ + I_b⁻¹)u),
    weight w and right side g (plan.row_w, row_g, c_lin as stiff_rows); returns the sums
    Σ w u uᵀ (00 01 02 11 12 22) and Σ g u, zeros for none. (Inlined into stiff_rows,
    which has no reference counts: the bundles cost nothing to unpack here.)"""
    row_J, row_C, row_active = rows.J, rows.C, rows.active
    inv_inertia_world, vel_k, omega_k = plan.inv_inertia_world, plan.vel_k, plan.omega_k
    row_w, row_g, c_lin = plan.row_w, plan.row_g, plan.c_lin
    s00 = s01 = s02 = s11 = s12 = s22 = hx = hy = hz = 0.0
    if r1 > r0:
        i00 = inv_inertia_world[a, 0] + inv_inertia_world[b, 0]
        i01 = inv_inertia_world[a, 1] + inv_inertia_world[b, 1]
        i02 = inv_inertia_world[a, 2] + inv_inertia_world[b, 2]
        i11 = inv_inertia_world[a, 4] + inv_inertia_world[b, 4]
        i12 = inv_inertia_world[a, 5] + inv_inertia_world[b, 5]
        i22 = inv_inertia_world[a, 8] + inv_inertia_world[b, 8]
        for r in range(r0, r1):
            row_w[r] = 0.0
            row_g[r] = 0.0
            if row_active[r] == 0:
                continue
            ux, uy, uz = row_J[r, 3], row_J[r, 4], row_J[r, 5]
            kk = (ux * (i00 * ux + 2.0 * (i01 * uy + i02 * uz)) + uy * (i11 * uy + 2.0 * i12 * uz)
                  + uz * i22 * uz)
            if kk <= 0.0:
                continue
            m = 1.0 / kk
            alpha = m * omega * omega
            w = h * h * alpha + h * 2.0 * zeta * m * omega
            c = row_C[r] - h * row_velocity(row_J, r, a, b, vel_k, omega_k) if relin else row_C[r]
            c_lin[r] = c
            g = -h * alpha * c
            row_w[r] = w
            row_g[r] = g
            wx, wy, wz = w * ux, w * uy, w * uz
            s00 += wx * ux
            s01 += wx * uy
            s02 += wx * uz
            s11 += wy * uy
            s12 += wy * uz
            s22 += wz * uz
            hx += g * ux
            hy += g * uy
            hz += g * uz
    return s00, s01, s02, s11, s12, s22, hx, hy, hz


@njit(cache=True, error_model="numpy", inline="always")
def add_force(row_J, r, na, nb, g, rhs):
    """g J_rᵀ into the right sides (a constant impulse g along the row)."""
    if na >= 0:
        for i in range(6):
            rhs[na, i] += g * row_J[r, i]
    if nb >= 0:
        for i in range(6):
            rhs[nb, i] += g * row_J[r, 6 + i]


@njit(cache=True, error_model="numpy", inline="always")
def inv_inertia_quad(inv_inertia_world, i, x, y, z):
    """uᵀ I_i⁻¹ u (world inverse inertia, 9 numbers)."""
    return (x * (inv_inertia_world[i, 0] * x + inv_inertia_world[i, 1] * y + inv_inertia_world[i, 2] * z)
            + y * (inv_inertia_world[i, 3] * x + inv_inertia_world[i, 4] * y + inv_inertia_world[i, 5] * z)
            + z * (inv_inertia_world[i, 6] * x + inv_inertia_world[i, 7] * y + inv_inertia_world[i, 8] * z))


@njit(cache=True, error_model="numpy", inline="always")
def row_inv_mass(row_J, r, a, b, body_inv_mass, inv_inertia_world, rot):
    """The inverse of the mass a row's spring is scaled by: a rotational row's J_r M⁻¹ J_rᵀ
    (the two inertias about its axis; world inverse inertia, 9 numbers per body), a
    translational row's 1/m_a + 1/m_b (seed 000's m_eff: a lever between a body's centre
    and the joint must not soften the row — on a long one, J M⁻¹ Jᵀ is dominated by a
    small inertia that the rest of the system holds still)."""
    if not rot:
        return body_inv_mass[a] + body_inv_mass[b]
    return (inv_inertia_quad(inv_inertia_world, a, row_J[r, 3], row_J[r, 4], row_J[r, 5])
            + inv_inertia_quad(inv_inertia_world, b, row_J[r, 9], row_J[r, 10], row_J[r, 11]))


@njit(cache=True, error_model="numpy", inline="always")
def point_arm(row_J, r0, side):
    """The lever arm r (body centre → anchor, world) of a joint's point rows r0…r0+2 on one
    side, from their angular parts ±(r × e_x), ±(r × e_y), ±(r × e_z)."""
    o = 6 * side
    s = 1.0 if side == 1 else -1.0
    return s * row_J[r0 + 1, o + 5], s * row_J[r0 + 2, o + 3], s * row_J[r0, o + 4]


# ---------------------------------------------------------------------------- implicit step
@njit(cache=True, error_model="numpy", fastmath=True, _nrt=False)
def body_blocks(h, geometric, gravity, bodies, joints, rows, force_acc, torque_acc, plan):
    """Per dynamic body: world inertia and its inverse, the diagonal block M̃ and the right
    side M̃ V + Δt (F + m g). M̃ is the mass and world inertia, plus (`geometric`) the
    bound of the rotational geometric stiffness of its joints' last point-row forces
    (module docstring), on both sides: added inertia, which damps nothing that does not
    change."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inertia, body_inv_inertia = bodies.inv_mass, bodies.inertia, bodies.inv_inertia
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_impulse = rows.J, rows.impulse
    body_node, node_body = plan.body_node, plan.node_body
    diag0, offd0, rhs0 = plan.diag0, plan.offd0, plan.rhs0
    inertia_world, inv_inertia_world = plan.inertia_world, plan.inv_inertia_world
    fill2d(offd0, 0.0)
    for k in range(node_body.shape[0]):
        i = node_body[k]
        for c in range(36):
            diag0[k, c] = 0.0
        qx, qy, qz, qw = body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3]
        I = rotated_diagonal(qx, qy, qz, qw, body_inertia[i, 0], body_inertia[i, 1], body_inertia[i, 2])
        iI = rotated_diagonal(qx, qy, qz, qw, body_inv_inertia[i, 0], body_inv_inertia[i, 1], body_inv_inertia[i, 2])
        inertia_world[i, 0], inertia_world[i, 1], inertia_world[i, 2] = I[0], I[1], I[2]
        inertia_world[i, 3], inertia_world[i, 4], inertia_world[i, 5] = I[1], I[3], I[4]
        inertia_world[i, 6], inertia_world[i, 7], inertia_world[i, 8] = I[2], I[4], I[5]
        inv_inertia_world[i, 0], inv_inertia_world[i, 1], inv_inertia_world[i, 2] = iI[0], iI[1], iI[2]
        inv_inertia_world[i, 3], inv_inertia_world[i, 4], inv_inertia_world[i, 5] = iI[1], iI[3], iI[4]
        inv_inertia_world[i, 6], inv_inertia_world[i, 7], inv_inertia_world[i, 8] = iI[2], iI[4], iI[5]
        m = 1.0 / body_inv_mass[i] if body_inv_mass[i] > 0.0 else 0.0
        diag0[k, 0] = m
        diag0[k, 7] = m
        diag0[k, 14] = m
        diag0[k, 21] = I[0]
        diag0[k, 27], diag0[k, 28] = I[1], I[3]
        diag0[k, 33], diag0[k, 34], diag0[k, 35] = I[2], I[4], I[5]
        for c in range(3):
            rhs0[k, c] = m * body_vel[i, c] + h * (force_acc[i, c] + m * gravity[c])
        for c in range(3):
            rhs0[k, 3 + c] = (inertia_world[i, 3 * c] * body_omega[i, 0] + inertia_world[i, 3 * c + 1] * body_omega[i, 1]
                              + inertia_world[i, 3 * c + 2] * body_omega[i, 2] + h * torque_acc[i, c])
    if not geometric:
        return
    # h² K of the point rows' forces f = λ/Δt at lever r: h λ ((λ·r) E − ½(λ rᵀ + r λᵀ)),
    # bounded by its absolute row sums (positive, so M̃ stays positive definite)
    for j in range(joint_type.shape[0]):
        if joint_type[j] == PRISMATIC:
            continue
        r0 = joint_row_start[j]
        fx, fy, fz = row_impulse[r0], row_impulse[r0 + 1], row_impulse[r0 + 2]
        if fx == 0.0 and fy == 0.0 and fz == 0.0:
            continue
        for side in range(2):
            i = joint_body[j, side]
            k = body_node[i]
            if k < 0:
                continue
            rx, ry, rz = point_arm(row_J, r0, side)
            s = 1.0 if side == 1 else -1.0
            sx, sy, sz = s * fx, s * fy, s * fz
            d = sx * rx + sy * ry + sz * rz
            k01 = abs(0.5 * (sx * ry + rx * sy))
            k02 = abs(0.5 * (sx * rz + rx * sz))
            k12 = abs(0.5 * (sy * rz + ry * sz))
            e0 = h * (abs(d - sx * rx) + k01 + k02)
            e1 = h * (abs(d - sy * ry) + k01 + k12)
            e2 = h * (abs(d - sz * rz) + k02 + k12)
            diag0[k, 21] += e0
            diag0[k, 28] += e1
            diag0[k, 35] += e2
            rhs0[k, 3] += e0 * body_omega[i, 0]
            rhs0[k, 4] += e1 * body_omega[i, 1]
            rhs0[k, 5] += e2 * body_omega[i, 2]


@njit(cache=True, error_model="numpy", inline="always")
def limit_raw(joint_q, joint_limit_lo, joint_limit_hi, j, k, side):
    """The signed value of joint j's limit row k on its binding side (+1: the lower bound,
    −1: the upper), q − bound: negative when violated (then it is the row's C, eq. 21, 25
    seed 000), positive inside."""
    return joint_q[j, k] - (joint_limit_lo[j, k] if side > 0 else joint_limit_hi[j, k])


@njit(cache=True, error_model="numpy", fastmath=True, _nrt=False)
def stiff_rows(params, h, relin, bodies, joints, rows, plan):
    """The stiff preset's equality and active limit rows into the step's matrix, linearized
    at the poses the rows were written at, X_k = X + Δt V_k (plan.vel_k, omega_k; zero on
    the first pass): G(X + Δt V⁺) ≈ G_k + Δt J_k (V⁺ − V_k). α = m ω², β = 2ζ m ω,
    ω = κ_s/Δt (m: row_inv_mass); w = Δt²α + Δtβ, g = −Δt α (G_k − Δt J_k V_k). A joint's
    three point rows share their weight (the spring is isotropic) and are added as one
    block, with the joint's perpendicular rows (perpendicular_rows; add_joint_side,
    add_joint_coupling). Limit rows: see limit_raw."""
    joint_type, joint_body, joint_row_start, joint_row_count = joints.type, joints.body, joints.row_start, joints.row_count
    row_J, row_C, row_active, row_rot = rows.J, rows.C, rows.active, rows.rot
    body_inv_mass = bodies.inv_mass
    body_node, joint_slot, joint_b_late = plan.body_node, plan.joint_slot, plan.joint_b_late
    diag0, offd0, rhs0 = plan.diag0, plan.offd0, plan.rhs0
    inv_inertia_world, row_w, row_g = plan.inv_inertia_world, plan.row_w, plan.row_g
    vel_k, omega_k, engaged, c_lin = plan.vel_k, plan.omega_k, plan.engaged, plan.c_lin
    joint_q, joint_limit_lo, joint_limit_hi = joints.q, joints.limit_lo, joints.limit_hi
    omega = params[7] / h
    zeta = params[8]
    for j in range(joint_type.shape[0]):
        t = joint_type[j]
        start = joint_row_start[j]
        f0 = start + joint_row_count[j] - N_FREE[t]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        na, nb = body_node[a], body_node[b]
        slot, late = joint_slot[j], joint_b_late[j]
        r = start
        if t != PRISMATIC:
            ra = point_arm(row_J, start, 0)
            rb = point_arm(row_J, start, 1)
            kk = row_inv_mass(row_J, start, a, b, body_inv_mass, inv_inertia_world, False)
            w = 0.0
            alpha = 0.0
            if kk > 0.0:
                m = 1.0 / kk
                alpha = m * omega * omega
                w = h * h * alpha + h * 2.0 * zeta * m * omega
            for q in range(3):
                row_w[start + q] = w
                c_lin[start + q] = row_C[start + q]
                if relin:
                    c_lin[start + q] -= h * row_velocity(row_J, start + q, a, b, vel_k, omega_k)
                row_g[start + q] = -h * alpha * c_lin[start + q]
            g = (row_g[start], row_g[start + 1], row_g[start + 2])
            # the perpendicular rows (J = (0, u, 0, −u)): Σ w u uᵀ and Σ g u, summed here and
            # added with the point rows' blocks (one update of each block per joint)
            S = perpendicular_rows(h, omega, zeta, relin, a, b, start + 3, start + N_EQ[t], rows, plan)
            if na >= 0:
                add_joint_side(na, -1.0, w, ra, g, S, diag0, rhs0)
            if nb >= 0:
                add_joint_side(nb, 1.0, w, rb, g, S, diag0, rhs0)
            if slot >= 0:
                add_joint_coupling(slot, w, rb if late else ra, ra if late else rb, S, offd0)
            r = start + N_EQ[t]
        n_eq = start + N_EQ[t]
        for rr in range(r, f0):
            row_w[rr] = 0.0
            row_g[rr] = 0.0
            C = row_C[rr]
            if rr >= n_eq:                          # a limit: binding now, or earlier in this step
                if row_active[rr] != 0 or not relin:
                    engaged[rr] = row_active[rr]    # (the step's first linearization starts it)
                if engaged[rr] == 0:
                    continue
                C = limit_raw(joint_q, joint_limit_lo, joint_limit_hi, j, rr - n_eq, engaged[rr])
            elif row_active[rr] == 0:
                continue
            kk = row_inv_mass(row_J, rr, a, b, body_inv_mass, inv_inertia_world, row_rot[rr])
            if kk <= 0.0:
                continue
            m = 1.0 / kk
            alpha = m * omega * omega
            w = h * h * alpha + h * 2.0 * zeta * m * omega
            c_lin[rr] = C - h * row_velocity(row_J, rr, a, b, vel_k, omega_k) if relin else C
            g = -h * alpha * c_lin[rr]
            row_w[rr] = w
            row_g[rr] = g
            if row_rot[rr]:
                add_angular_row(row_J, rr, na, nb, slot, late, w, g, diag0, offd0, rhs0)
            else:
                add_row(row_J, rr, na, nb, slot, late, w, g, diag0, offd0, rhs0)


@njit(cache=True, error_model="numpy", inline="always")
def servo_row(h, m, freq, damping, err):
    """(w, g) of a position servo on effective mass m: k = m ω², c = 2ζ m ω, ω = 2π·freq,
    on the error err (rad or m) linearized at the step's start."""
    om = 2.0 * np.pi * freq
    k_spring = m * om * om
    return h * h * k_spring + h * 2.0 * damping * m * om, -h * k_spring * err


@njit(cache=True, error_model="numpy", _nrt=False)
def servo_masses(h, joints, drives, rows, plan):
    """The position servos' stiffness from the inertia they drive: m = 1/(J A₀⁻¹ Jᵀ) with A₀
    the step's matrix without the drives (bodies and stiff joint rows: the other joints
    hold, the other drives are free), one solve per servo with the factor of A₀; then
    k = m ω², c = 2ζ m ω as in servo_row."""
    joint_type, joint_row_start, joint_row_count, joint_q = joints.type, joints.row_start, joints.row_count, joints.q
    joint_body = joints.body
    motor_target, motor_freq, motor_damping = drives.motor_target, drives.motor_freq, drives.motor_damping
    row_J = rows.J
    body_node, up_ptr, up_node = plan.body_node, plan.up_ptr, plan.up_node
    pair_ptr, pair_lo, pair_hi, pair_target = plan.pair_ptr, plan.pair_lo, plan.pair_hi, plan.pair_target
    diag0, offd0, diag, offd, x = plan.diag0, plan.offd0, plan.diag, plan.offd, plan.rhs
    row_w, row_g, drive_kind, vel_k, omega_k = plan.row_w, plan.row_g, plan.drive_kind, plan.vel_k, plan.omega_k
    copy2d(diag, diag0)
    copy2d(offd, offd0)
    factor(diag, offd, up_ptr, pair_ptr, pair_lo, pair_hi, pair_target)
    for j in range(joint_type.shape[0]):
        if drive_kind[j] != DRIVE_POSITION:
            continue
        r = joint_row_start[j] + joint_row_count[j] - 1
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        na, nb = body_node[a], body_node[b]
        fill2d(x, 0.0)
        for c in range(6):
            if na >= 0:
                x[na, c] = row_J[r, c]
            if nb >= 0:
                x[nb, c] = row_J[r, 6 + c]
        solve(diag, offd, up_ptr, up_node, x)
        kk = 0.0
        for c in range(6):
            if na >= 0:
                kk += row_J[r, c] * x[na, c]
            if nb >= 0:
                kk += row_J[r, 6 + c] * x[nb, c]
        if kk <= 0.0:
            continue
        err = joint_q[j, 0] - motor_target[j] - h * row_velocity(row_J, r, a, b, vel_k, omega_k)
        row_w[r], row_g[r] = servo_row(h, 1.0 / kk, motor_freq[j], motor_damping[j], err)


@njit(cache=True, error_model="numpy", _nrt=False)
def setup_drives(h, bodies, joints, drives, rows, plan):
    """Per joint: its drive this step (friction, position or velocity motor, none), each
    free row's w, g (the damper or servo, linearized as in stiff_rows), the bound, and
    where the active set starts: clamped when the last step's force was on the bound
    (and, for friction, the joint is moving: the clamped force opposes its motion now).
    Returns the number of drives."""
    joint_type, joint_row_start, joint_row_count, joint_q = joints.type, joints.row_start, joints.row_count, joints.q
    joint_body = joints.body
    friction, motor_mode, motor_target = drives.friction, drives.motor_mode, drives.motor_target
    motor_max, motor_freq, motor_damping = drives.motor_max, drives.motor_freq, drives.motor_damping
    row_J, row_impulse, row_rot = rows.J, rows.impulse, rows.rot
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    inv_inertia_world, row_w, row_g = plan.inv_inertia_world, plan.row_w, plan.row_g
    vel_k, omega_k = plan.vel_k, plan.omega_k
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    count = 0
    for j in range(joint_type.shape[0]):
        nf = N_FREE[joint_type[j]]
        end = joint_row_start[j] + joint_row_count[j]
        f0 = end - nf
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        for r in range(f0, end):
            row_w[r] = 0.0
            row_g[r] = 0.0
        kind = DRIVE_NONE
        fmax = 0.0
        if nf == 1 and motor_mode[j] != MOTOR_OFF:
            if motor_max[j] > 0.0:
                kind = DRIVE_POSITION if motor_mode[j] == MOTOR_POSITION else DRIVE_VELOCITY
                fmax = motor_max[j]
        elif nf > 0 and friction[j] > 0.0:
            kind = DRIVE_FRICTION
            fmax = friction[j]
        drive_kind[j] = kind
        drive_max[j] = fmax
        drive_clamped[j] = 0
        if kind == DRIVE_NONE:
            for r in range(f0, end):
                row_impulse[r] = 0.0
            continue
        count += 1
        if kind == DRIVE_FRICTION:
            ksum = 0.0
            for r in range(f0, end):
                ksum += row_inv_mass(row_J, r, a, b, body_inv_mass, inv_inertia_world, row_rot[r])
            if ksum <= 0.0:
                drive_kind[j] = DRIVE_NONE
                continue
            w = STICK * nf / ksum                    # c Δt, c = S m_b/Δt, m_b = nf / Σ J M⁻¹ Jᵀ
            pn = vn = 0.0
            for r in range(f0, end):
                row_w[r] = w
                v = row_velocity(row_J, r, a, b, body_vel, body_omega)
                pn += row_impulse[r] * row_impulse[r]
                vn += v * v
            if np.sqrt(pn) >= fmax * h * (1.0 - 1e-9) and vn > 0.0:
                drive_clamped[j] = 1
                vn = np.sqrt(vn)
                for c in range(3):
                    drive_dir[j, c] = -row_velocity(row_J, f0 + c, a, b, body_vel, body_omega) / vn if c < nf else 0.0
            continue
        kk = row_inv_mass(row_J, f0, a, b, body_inv_mass, inv_inertia_world, row_rot[f0])
        if kk <= 0.0:
            drive_kind[j] = DRIVE_NONE
            continue
        m = 1.0 / kk
        if kind == DRIVE_POSITION:
            err = joint_q[j, 0] - motor_target[j] - h * row_velocity(row_J, f0, a, b, vel_k, omega_k)
            row_w[f0], row_g[f0] = servo_row(h, m, motor_freq[j], motor_damping[j], err)
        else:
            row_w[f0] = STICK * m
            row_g[f0] = STICK * m * motor_target[j]
        p = row_impulse[f0]
        if abs(p) >= fmax * h * (1.0 - 1e-9):
            drive_clamped[j] = 1
            drive_dir[j, 0] = 1.0 if p > 0.0 else -1.0
            drive_dir[j, 1] = 0.0
            drive_dir[j, 2] = 0.0
    return count


@njit(cache=True, error_model="numpy", _nrt=False)
def add_drives(h, joints, rows, plan):
    """The drives into the solve's matrix: free rows in their linear range as rows (w, g),
    clamped ones as a constant force F_max along drive_dir."""
    joint_type, joint_row_start, joint_row_count, joint_body = joints.type, joints.row_start, joints.row_count, joints.body
    row_J, row_rot = rows.J, rows.rot
    body_node, joint_slot, joint_b_late = plan.body_node, plan.joint_slot, plan.joint_b_late
    diag, offd, rhs, row_w, row_g = plan.diag, plan.offd, plan.rhs, plan.row_w, plan.row_g
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    for j in range(joint_type.shape[0]):
        if drive_kind[j] == DRIVE_NONE:
            continue
        end = joint_row_start[j] + joint_row_count[j]
        f0 = end - N_FREE[joint_type[j]]
        na = body_node[joint_body[j, 0]]
        nb = body_node[joint_body[j, 1]]
        for r in range(f0, end):
            if drive_clamped[j]:
                add_force(row_J, r, na, nb, h * drive_max[j] * drive_dir[j, r - f0], rhs)
            elif row_rot[r]:
                add_angular_row(row_J, r, na, nb, joint_slot[j], joint_b_late[j], row_w[r], row_g[r], diag, offd, rhs)
            else:
                add_row(row_J, r, na, nb, joint_slot[j], joint_b_late[j], row_w[r], row_g[r], diag, offd, rhs)


@njit(cache=True, error_model="numpy", _nrt=False)
def check_drives(h, bodies, joints, rows, plan):
    """The active set after a solve: a linear drive whose force leaves its bound is clamped
    there (in the direction of that force); a clamped friction whose rate turned along its
    force (the joint stopped within the step) or a clamped motor that wants less than its
    bound goes back to linear. Returns whether anything changed."""
    joint_type, joint_row_start, joint_row_count, joint_body = joints.type, joints.row_start, joints.row_count, joints.body
    row_J = rows.J
    body_vel, body_omega = bodies.vel, bodies.omega
    row_w, row_g = plan.row_w, plan.row_g
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    changed = False
    for j in range(joint_type.shape[0]):
        kind = drive_kind[j]
        if kind == DRIVE_NONE:
            continue
        end = joint_row_start[j] + joint_row_count[j]
        f0 = end - N_FREE[joint_type[j]]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        fn = along = 0.0
        for r in range(f0, end):
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            f = (row_g[r] - row_w[r] * v) / h
            fn += f * f
            along += drive_dir[j, r - f0] * (v if kind == DRIVE_FRICTION else f)
        fn = np.sqrt(fn)
        if drive_clamped[j] == 0:
            if fn > drive_max[j] * (1.0 + 1e-9):
                drive_clamped[j] = 1
                for r in range(f0, end):
                    v = row_velocity(row_J, r, a, b, body_vel, body_omega)
                    drive_dir[j, r - f0] = (row_g[r] - row_w[r] * v) / h / fn
                changed = True
        elif kind == DRIVE_FRICTION:
            if along > 0.0:
                drive_clamped[j] = 0
                changed = True
        elif along < drive_max[j]:
            drive_clamped[j] = 0
            changed = True
    return changed


# ---------------------------------------------------------------------------- implicit contact springs
@njit(cache=True, error_model="numpy")
def contact_springs(h, bodies, contacts, body_node, spring_w, spring_g, spring_on, spring_depth, coupled):
    """The stiff preset's contact springs (module docstring, "Contacts"): per normal row of
    this step's contacts (contacts.write_contact_rows) its weight w = Δt²α + Δtβ and right
    side g = Δt α depth (depth > 0: penetration; the row's G = −depth), with
    α = m ω², β = 2ζ m ω, ω = CONTACT_STIFF_KAPPA/Δt, ζ = CONTACT_ZETA, m = 1/(p (1/m_a + 1/m_b)) over the pair's p points;
    spring_depth its depth (m); spring_on the first guess of the active set (penetrating at
    the end of the step at the start's velocity); coupled lists the rows between two dynamic bodies (the solve's
    Schur complement, coupled_springs), at most MAX_COUPLED. Returns the number of rows."""
    buf, crows = contacts.buffers, contacts.rows
    row_J, row_kind, row_body = crows.J, crows.kind, crows.body
    cf, row_of, block_of, block_start = buf.cf, buf.row_of, buf.block_of, crows.block_start
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    n_rows = spring_w.shape[0]
    omega = CONTACT_STIFF_KAPPA / h
    for r in range(n_rows):
        spring_w[r] = 0.0
        spring_g[r] = 0.0
        spring_on[r] = 0
        spring_depth[r] = 0.0
    n_coupled = 0
    for q in range(buf.n[N_NOW]):
        r = row_of[q]
        if r < 0:
            continue
        a, b = row_body[r, 0], row_body[r, 1]
        k = body_inv_mass[a] + body_inv_mass[b]
        if k <= 0.0:
            continue
        s = block_start[block_of[q]]
        p = 0
        while row_kind[s + p] != ROW_FREE:
            p += 1
        m = 1.0 / (k * p)
        alpha = m * omega * omega
        depth = cf[q, 6]
        spring_w[r] = h * h * alpha + h * 2.0 * CONTACT_ZETA * m * omega
        spring_g[r] = h * alpha * depth
        spring_depth[r] = depth
        if depth - h * row_velocity(row_J, r, a, b, body_vel, body_omega) > 0.0:
            spring_on[r] = 1
        if body_node[a] >= 0 and body_node[b] >= 0:
            if n_coupled < MAX_COUPLED:
                coupled[n_coupled] = r
                n_coupled += 1
            else:
                spring_on[r] |= 2                    # beyond the Schur complement: lagged (add_springs)
    return n_coupled


@njit(cache=True, error_model="numpy")
def add_springs(row_J, row_body, body_node, spring_w, spring_g, spring_on, body_vel, body_omega, diag, offd, rhs):
    """The contact springs in the active set into one solve's matrix and right side: against
    a static body into the dynamic body's diagonal block; between two dynamic bodies only
    g Jᵀ (the matrix part is coupled_springs' Schur complement), or, past MAX_COUPLED rows,
    each side's own part with the other side's velocity of the last pass (block Jacobi)."""
    none = np.int64(-1)
    late = np.int64(0)
    for r in range(spring_w.shape[0]):
        if spring_on[r] & 1 == 0 or spring_w[r] == 0.0:
            continue
        a, b = row_body[r, 0], row_body[r, 1]
        na, nb = body_node[a], body_node[b]
        w, g = spring_w[r], spring_g[r]
        if na >= 0 and nb >= 0:
            if spring_on[r] & 2 == 0:
                add_force(row_J, r, na, nb, g, rhs)
                continue
            va = vb = 0.0
            for c in range(3):
                va += row_J[r, c] * body_vel[a, c] + row_J[r, 3 + c] * body_omega[a, c]
                vb += row_J[r, 6 + c] * body_vel[b, c] + row_J[r, 9 + c] * body_omega[b, c]
            add_row(row_J, r, na, none, none, late, w, g - w * vb, diag, offd, rhs)
            add_row(row_J, r, none, nb, none, late, w, g - w * va, diag, offd, rhs)
        else:
            add_row(row_J, r, na, nb, none, late, w, g, diag, offd, rhs)


@njit(cache=True, error_model="numpy", inline="always")
def zero6(x, k):
    """Whether node k's row of x is all zero."""
    return x[k, 0] == 0.0 and x[k, 1] == 0.0 and x[k, 2] == 0.0 and x[k, 3] == 0.0 and x[k, 4] == 0.0 \
        and x[k, 5] == 0.0


@njit(cache=True, error_model="numpy")
def solve_sparse(diag, offd, up_ptr, up_node, x):
    """solve for a right side with few nonzero nodes (a contact row's Jacobian): the same
    substitutions, the forward one skipping the nodes whose block is still zero (on a
    forest of joints only the two nodes' ancestors and what hangs from them fill in)."""
    nn = diag.shape[0]
    for k in range(nn):
        if not zero6(x, k):
            forward_node(diag, offd, k, up_ptr, up_node, x)
    for k in range(nn - 1, -1, -1):
        backward_node(diag, offd, k, up_ptr, up_node, x)


@njit(cache=True, error_model="numpy", inline="always")
def row_dot_nodes(row_J, r, na, nb, x, y, c):
    """J_r · x over the row's two nodes (x (k,6) when c < 0, else y[c] (…, k, 6))."""
    s = 0.0
    for i in range(6):
        if c < 0:
            s += row_J[r, i] * x[na, i] + row_J[r, 6 + i] * x[nb, i]
        else:
            s += row_J[r, i] * y[c, na, i] + row_J[r, 6 + i] * y[c, nb, i]
    return s


@njit(cache=True, error_model="numpy")
def coupled_springs(row_J, row_body, body_node, spring_w, spring_on, coupled, n_coupled, diag, offd, up_ptr, up_node,
                    x, y):
    """x := (A + U W Uᵀ)⁻¹ b from x = A⁻¹ b (A factored by `factor`), U the Jacobians of the
    coupled contact rows in the active set, W their weights: the Woodbury identity
    x −= A⁻¹U (W⁻¹ + Uᵀ A⁻¹ U)⁻¹ Uᵀ x, one solve per row (solve_sparse; y: (≥ m, k, 6)) and a
    dense m×m Cholesky: the exact solution of the whole system, as the Schur complement of
    seed 004 eq. 12-14 does for loop joints."""
    idx = np.empty(n_coupled, np.int64)
    m = 0
    for c in range(n_coupled):
        r = coupled[c]
        if spring_on[r] & 1 != 0:
            idx[m] = r
            m += 1
    if m == 0:
        return
    for c in range(m):
        r = idx[c]
        na, nb = body_node[row_body[r, 0]], body_node[row_body[r, 1]]
        yc = y[c]
        fill2d(yc, 0.0)
        for i in range(6):
            yc[na, i] = row_J[r, i]
            yc[nb, i] = row_J[r, 6 + i]
        solve_sparse(diag, offd, up_ptr, up_node, yc)
    S = np.empty((m, m))
    t = np.empty(m)
    for c in range(m):
        r = idx[c]
        na, nb = body_node[row_body[r, 0]], body_node[row_body[r, 1]]
        t[c] = row_dot_nodes(row_J, r, na, nb, x, y, -1)
        for d in range(c + 1):
            S[c, d] = row_dot_nodes(row_J, r, na, nb, x, y, d)
        S[c, c] += 1.0 / spring_w[r]
    for j in range(m):                               # S = L Lᵀ (lower), then L Lᵀ z = t
        s = S[j, j]
        for p in range(j):
            s -= S[j, p] * S[j, p]
        s = np.sqrt(s) if s > 0.0 else 1e-150
        S[j, j] = s
        for i in range(j + 1, m):
            v = S[i, j]
            for p in range(j):
                v -= S[i, p] * S[j, p]
            S[i, j] = v / s
    for i in range(m):
        v = t[i]
        for p in range(i):
            v -= S[i, p] * t[p]
        t[i] = v / S[i, i]
    for i in range(m - 1, -1, -1):
        v = t[i]
        for p in range(i + 1, m):
            v -= S[p, i] * t[p]
        t[i] = v / S[i, i]
    for c in range(m):
        z = t[c]
        for k in range(x.shape[0]):
            for i in range(6):
                x[k, i] -= z * y[c, k, i]


@njit(cache=True, error_model="numpy")
def check_springs(h, row_J, row_body, spring_depth, spring_w, spring_g, spring_on, body_vel, body_omega):
    """The contact springs' active set after a solve — seed 000's dead zone at the end of the
    step, one-sided: a row is in when it penetrates at the end of the step
    (depth − Δt J V⁺ > 0) and its force f = (g − w J V⁺)/Δt pushes (f > 0). Returns
    whether anything changed."""
    changed = False
    for r in range(spring_w.shape[0]):
        if spring_w[r] == 0.0:
            continue
        v = row_velocity(row_J, r, row_body[r, 0], row_body[r, 1], body_vel, body_omega)
        on = spring_depth[r] - h * v > 0.0 and spring_g[r] - spring_w[r] * v > 0.0
        if on != (spring_on[r] & 1 != 0):
            spring_on[r] ^= 1
            changed = True
    return changed


@njit(cache=True, error_model="numpy", inline="always")
def row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """J_r·V with the two bodies' velocities (v, ω of a, then of b) as 12 scalars: the sum
    of row_velocity in its order, with the velocities loaded once per joint."""
    return (row_J[r, 0] * a0 + row_J[r, 1] * a1 + row_J[r, 2] * a2 + row_J[r, 3] * a3 + row_J[r, 4] * a4
            + row_J[r, 5] * a5 + row_J[r, 6] * b0 + row_J[r, 7] * b1 + row_J[r, 8] * b2 + row_J[r, 9] * b3
            + row_J[r, 10] * b4 + row_J[r, 11] * b5)


@njit(cache=True, error_model="numpy", _nrt=False)
def store_impulses(h, stiff, bodies, joints, rows, plan):
    """Each implicit row's force of the step as the impulse f Δt = g − w J V⁺ (clamped
    drives: F_max Δt along drive_dir) into rows.impulse; the stiff preset's rows also
    their linearized value at the end of the step: c_lin (G_k − Δt J_k V_k, stiff_rows)
    += Δt J_k V⁺."""
    joint_type, joint_row_start, joint_row_count, joint_body = joints.type, joints.row_start, joints.row_count, joints.body
    row_J, row_impulse = rows.J, rows.impulse
    body_vel, body_omega = bodies.vel, bodies.omega
    row_w, row_g, c_lin = plan.row_w, plan.row_g, plan.c_lin
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    for j in range(joint_type.shape[0]):
        start = joint_row_start[j]
        end = start + joint_row_count[j]
        f0 = end - N_FREE[joint_type[j]]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        a0, a1, a2, a3, a4, a5 = body_vel[a, 0], body_vel[a, 1], body_vel[a, 2], body_omega[a, 0], \
            body_omega[a, 1], body_omega[a, 2]
        b0, b1, b2, b3, b4, b5 = body_vel[b, 0], body_vel[b, 1], body_vel[b, 2], body_omega[b, 0], \
            body_omega[b, 1], body_omega[b, 2]
        if stiff:
            r = start
            if joint_type[j] != PRISMATIC and row_w[start] != 0.0:
                # the three point rows (along x, y, z; one weight): J = (−e, −r_a×e, e, r_b×e)
                # has four zeros, so J·V is row_dot's sum without those terms (adding ±0
                # changes no sum: the same numbers bit for bit)
                v = (row_J[r, 0] * a0 + row_J[r, 4] * a4 + row_J[r, 5] * a5 + row_J[r, 6] * b0
                     + row_J[r, 10] * b4 + row_J[r, 11] * b5)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
                r += 1
                v = (row_J[r, 1] * a1 + row_J[r, 3] * a3 + row_J[r, 5] * a5 + row_J[r, 7] * b1
                     + row_J[r, 9] * b3 + row_J[r, 11] * b5)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
                r += 1
                v = (row_J[r, 2] * a2 + row_J[r, 3] * a3 + row_J[r, 4] * a4 + row_J[r, 8] * b2
                     + row_J[r, 9] * b3 + row_J[r, 10] * b4)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
                r += 1
                # the perpendicular rows: J = (0, u, 0, −u), row_dot's six non-zero terms
                for r in range(r, start + N_EQ[joint_type[j]]):
                    if row_w[r] == 0.0 and row_g[r] == 0.0:
                        row_impulse[r] = 0.0
                        continue
                    v = (row_J[r, 3] * a3 + row_J[r, 4] * a4 + row_J[r, 5] * a5 + row_J[r, 9] * b3
                         + row_J[r, 10] * b4 + row_J[r, 11] * b5)
                    row_impulse[r] = row_g[r] - row_w[r] * v
                    c_lin[r] += h * v
                r = start + N_EQ[joint_type[j]]
            for r in range(r, f0):
                if row_w[r] == 0.0 and row_g[r] == 0.0:
                    row_impulse[r] = 0.0
                    continue
                v = row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
        kind, clamped = drive_kind[j], drive_clamped[j]
        for r in range(f0, end):
            if kind == DRIVE_NONE:
                row_impulse[r] = 0.0
            elif clamped:
                row_impulse[r] = h * drive_max[j] * drive_dir[j, r - f0]
            elif row_w[r] == 0.0 and row_g[r] == 0.0:
                row_impulse[r] = 0.0
            else:
                row_impulse[r] = row_g[r] - row_w[r] * row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3,
                                                                b4, b5)


@njit(cache=True, error_model="numpy", _nrt=False)
def open_system(params, h, relin, gravity, bodies, joints, drives, rows, work, plan, drives_on):
    """The step's implicit system in plan.diag0, offd0, rhs0: the bodies' blocks
    (body_blocks), the stiff preset's rows (stiff_rows) and the drives set up
    (setup_drives, servo_masses); returns the number of drives in use."""
    stiff = params[0] == STIFF
    body_blocks(h, stiff, gravity, bodies, joints, rows, work.force_acc, work.torque_acc, plan)
    if stiff:
        stiff_rows(params, h, relin, bodies, joints, rows, plan)
    n_drives = setup_drives(h, bodies, joints, drives, rows, plan) if drives_on else 0
    if stiff and n_drives > 0:
        servo_masses(h, joints, drives, rows, plan)
    return n_drives


@njit(cache=True, error_model="numpy", _nrt=False)
def write_velocities(bodies, plan, x):
    """The solved velocities x (one row per node) into the bodies."""
    body_vel, body_omega, node_body = bodies.vel, bodies.omega, plan.node_body
    for k in range(node_body.shape[0]):
        i = node_body[k]
        body_vel[i, 0], body_vel[i, 1], body_vel[i, 2] = x[k, 0], x[k, 1], x[k, 2]
        body_omega[i, 0], body_omega[i, 1], body_omega[i, 2] = x[k, 3], x[k, 4], x[k, 5]


@njit(cache=True, error_model="numpy", _nrt=False)
def close_system(h, stiff, gyroscopic, bodies, joints, rows, plan):
    """After the last solve: the rows' impulses (store_impulses), then the implicit
    gyroscopic update of the spins."""
    body_quat, body_inertia, body_omega, node_body = bodies.quat, bodies.inertia, bodies.omega, plan.node_body
    store_impulses(h, stiff, bodies, joints, rows, plan)
    if gyroscopic:
        for k in range(node_body.shape[0]):
            i = node_body[k]
            wx, wy, wz = gyroscopic_implicit(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                             body_inertia[i, 0], body_inertia[i, 1], body_inertia[i, 2],
                                             body_omega[i, 0], body_omega[i, 1], body_omega[i, 2], h)
            body_omega[i, 0], body_omega[i, 1], body_omega[i, 2] = wx, wy, wz


@njit(cache=True, error_model="numpy", _nrt=False)
def restart_system(plan):
    """One solve's matrix and right side (diag, offd, rhs) from the step's (diag0, offd0,
    rhs0), for the bounded rows of an active-set pass to be added to."""
    copy2d(plan.diag, plan.diag0)
    copy2d(plan.offd, plan.offd0)
    copy2d(plan.rhs, plan.rhs0)


@njit(cache=True, error_model="numpy", _nrt=False)
def joint_velocities(params, h, relin, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, drives_on):
    """V⁺ from the implicit system of the module docstring with no contact spring (nothing
    touching, or a preset whose contacts push explicitly): the stiff preset's equality and
    limit rows and every drive (friction, motors) as rows of one system, solved exactly;
    the drives' bounds by an active set of at most PASSES solves. `relin`: the rows were
    written at X + Δt V_k, not at X (a Newton iteration of stiff_step). `drives_on`: some
    joint has friction or a motor (any_drive; without, penalty_run has cleared the drives
    once for the whole run). Allocates nothing: compiled without reference counting, as
    everything penalty_run calls per step on a mechanism that touches nothing (passing
    the bundles through a counted call costs each of their arrays two atomic updates)."""
    up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target = (plan.up_ptr, plan.up_node, plan.pair_ptr,
                                                                 plan.pair_lo, plan.pair_hi, plan.pair_target)
    diag0, offd0, rhs0, diag, offd, rhs = plan.diag0, plan.offd0, plan.rhs0, plan.diag, plan.offd, plan.rhs
    n_drives = open_system(params, h, relin, gravity, bodies, joints, drives, rows, work, plan, drives_on)
    if n_drives == 0:                               # one solve: factor the step's matrix in place
        factor_solve(diag0, offd0, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, rhs0)
        write_velocities(bodies, plan, rhs0)
    else:
        for it in range(PASSES):
            restart_system(plan)
            add_drives(h, joints, rows, plan)
            factor_solve(diag, offd, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, rhs)
            write_velocities(bodies, plan, rhs)
            if it == PASSES - 1 or not check_drives(h, bodies, joints, rows, plan):
                break
    close_system(h, params[0] == STIFF, gyroscopic, bodies, joints, rows, plan)


@njit(cache=True, error_model="numpy")
def implicit_velocities(params, h, relin, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, contacts,
                        n_contacts, drives_on):
    """joint_velocities with the stiff preset's contact springs (n_contacts > 0 blocks:
    contact_springs) as rows of the same system; the drives' bounds and the springs' dead
    zone by an active set of at most CONTACT_PASSES solves. Contact rows stay linearized
    at X in a Newton iteration."""
    stiff = params[0] == STIFF
    n_springs = contacts.buffers.n[N_ROWS] if stiff and n_contacts > 0 else 0
    if n_springs == 0:
        joint_velocities(params, h, relin, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, drives_on)
        return
    body_vel, body_omega = bodies.vel, bodies.omega
    node_body, up_ptr, up_node, body_node = plan.node_body, plan.up_ptr, plan.up_node, plan.body_node
    pair_ptr, pair_lo, pair_hi, pair_target = plan.pair_ptr, plan.pair_lo, plan.pair_hi, plan.pair_target
    diag, offd, rhs = plan.diag, plan.offd, plan.rhs
    crow_J, crow_body, crow_impulse = contacts.rows.J, contacts.rows.body, contacts.rows.impulse
    n_drives = open_system(params, h, relin, gravity, bodies, joints, drives, rows, work, plan, drives_on)
    spring_w, spring_g, spring_depth = np.zeros(n_springs), np.zeros(n_springs), np.zeros(n_springs)
    spring_on, coupled = np.zeros(n_springs, np.int64), np.zeros(n_springs, np.int64)
    n_coupled = contact_springs(h, bodies, contacts, body_node, spring_w, spring_g, spring_on, spring_depth, coupled)
    y = np.empty((n_coupled, node_body.shape[0], 6))
    for it in range(CONTACT_PASSES):
        restart_system(plan)
        if n_drives > 0:
            add_drives(h, joints, rows, plan)
        add_springs(crow_J, crow_body, body_node, spring_w, spring_g, spring_on, body_vel, body_omega, diag, offd, rhs)
        factor_solve(diag, offd, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, rhs)
        if n_coupled > 0:
            coupled_springs(crow_J, crow_body, body_node, spring_w, spring_on, coupled, n_coupled, diag, offd, up_ptr,
                            up_node, rhs, y)
        write_velocities(bodies, plan, rhs)
        if it == CONTACT_PASSES - 1:
            break
        changed = n_drives > 0 and check_drives(h, bodies, joints, rows, plan)
        if check_springs(h, crow_J, crow_body, spring_depth, spring_w, spring_g, spring_on, body_vel, body_omega):
            changed = True
        if not changed:
            break
    for r in range(n_springs):      # the springs' impulses f Δt = g − w J V⁺ (friction's radius next step)
        crow_impulse[r] = 0.0
        if spring_on[r] & 1 != 0:
            v = row_velocity(crow_J, r, crow_body[r, 0], crow_body[r, 1], body_vel, body_omega)
            crow_impulse[r] = max(0.0, spring_g[r] - spring_w[r] * v)
    close_system(h, stiff, gyroscopic, bodies, joints, rows, plan)


@njit(cache=True, error_model="numpy", _nrt=False)
def nonlinearity(joints, rows, plan):
    """Largest |G(X⁺) − (G_k + Δt J_k (V⁺ − V_k))| over the stiff rows (m or rad): how far
    the rows' linearization missed the poses the step reached; a limit row that was not
    in the linearization and binds at X⁺ counts with its whole |G(X⁺)|."""
    row_C, row_kind, row_active, row_joint = rows.C, rows.kind, rows.active, rows.joint
    joint_type, joint_row_start, joint_q = joints.type, joints.row_start, joints.q
    joint_limit_lo, joint_limit_hi = joints.limit_lo, joints.limit_hi
    row_w, c_lin, engaged = plan.row_w, plan.c_lin, plan.engaged
    worst = 0.0
    for r in range(row_C.shape[0]):
        if row_kind[r] == ROW_FREE:
            continue
        if row_w[r] != 0.0:
            C = row_C[r]
            if row_kind[r] == ROW_LIMIT:
                j = row_joint[r]
                C = limit_raw(joint_q, joint_limit_lo, joint_limit_hi, j, r - joint_row_start[j] - N_EQ[joint_type[j]],
                              engaged[r])
            worst = max(worst, abs(C - c_lin[r]))
        elif row_active[r] != 0:            # a limit reached within the step
            worst = max(worst, abs(row_C[r]))
    return worst


@njit(cache=True, error_model="numpy", _nrt=False)
def begin_newton(bodies, plan, keep_start):
    """A stiff step's start: the poses and velocities kept (pos0 … omega0) for a Newton
    iteration or a second solve to start from (`keep_start`). (vel_k, omega_k are zero
    between steps: end_newton; the first linearization starts the limits' `engaged`:
    stiff_rows.)"""
    if keep_start:
        copy2d(plan.pos0, bodies.pos)
        copy2d(plan.quat0, bodies.quat)
        copy2d(plan.vel0, bodies.vel)
        copy2d(plan.omega0, bodies.omega)


@njit(cache=True, error_model="numpy", _nrt=False)
def end_newton(h, it, newton, bodies, joints, rows, plan, readout):
    """A stiff step's positions from the velocities solved in Newton iteration `it` (of at
    most `newton` more than the first), and the rows at them; returns True when the step is
    done (the last iteration, or the rows' linearization missed the reached poses by at
    most NEWTON_TOL: nonlinearity), then vel_k, omega_k are zero again (X_k = X: what the
    drives' servos and the next step's first linearization take). Otherwise sets up the
    next iteration, linearized at the poses reached: X_k = X + Δt V_k, from the step's start."""
    integrate_positions(bodies, h)
    compute_joint_rows(bodies, joints, rows, readout)
    if it == newton or nonlinearity(joints, rows, plan) <= NEWTON_TOL:
        if it > 0:
            fill2d(plan.vel_k, 0.0)
            fill2d(plan.omega_k, 0.0)
        return True
    copy2d(plan.vel_k, bodies.vel)
    copy2d(plan.omega_k, bodies.omega)
    copy2d(bodies.pos, plan.pos0)
    copy2d(bodies.quat, plan.quat0)
    copy2d(bodies.vel, plan.vel0)
    copy2d(bodies.omega, plan.omega0)
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def stiff_joint_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, readout, drives_on):
    """One step of the stiff preset with nothing touching: the implicit velocities
    linearized at the current poses (joint_velocities), then positions; while the rows'
    linearization missed the reached poses by more than NEWTON_TOL, another Newton
    iteration of the same backward Euler step, linearized at the poses reached (at most
    params[P_NEWTON] more). Without reference counting (joint_velocities)."""
    newton = int(params[P_NEWTON])
    begin_newton(bodies, plan, newton > 0)
    for it in range(newton + 1):
        joint_velocities(params, h, it > 0, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, drives_on)
        if end_newton(h, it, newton, bodies, joints, rows, plan, readout):
            break


@njit(cache=True, error_model="numpy")
def stiff_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, readout, contacts, n_contacts,
               drives_on):
    """stiff_joint_step with n_contacts > 0 contact blocks: their springs in the implicit
    solve (implicit_velocities), then their friction (penalty_contact_friction); a
    jointed body's friction passes through its joints by a second solve within the step."""
    body_vel, body_omega = bodies.vel, bodies.omega
    vel0, omega0 = plan.vel0, plan.omega0
    newton = int(params[P_NEWTON])
    jointed_contact = contact_on_joints(joints, contacts)
    begin_newton(bodies, plan, newton > 0 or jointed_contact)
    for it in range(newton + 1):
        implicit_velocities(params, h, it > 0, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, contacts,
                            n_contacts, drives_on)
        if jointed_contact:
            copy2d(work.pvel, body_vel)
            copy2d(work.pomega, body_omega)
        penalty_contact_friction(contacts, bodies, h)
        if jointed_contact:
            # a jointed body's friction is passed on by its joints in this step: the
            # friction impulses act as forces in the implicit solve, done again from V
            friction_as_forces(h, bodies, work, plan, vel0, omega0, 1.0)
            implicit_velocities(params, h, it > 0, gravity, gyroscopic, bodies, joints, drives, rows, work, plan,
                                contacts, n_contacts, drives_on)
            friction_as_forces(h, bodies, work, plan, vel0, omega0, -1.0)
        if end_newton(h, it, newton, bodies, joints, rows, plan, readout):
            break


@njit(cache=True, error_model="numpy", _nrt=False)
def contact_on_joints(joints, contacts):
    """Whether a touching contact's body is also a joint's (its friction then has to pass
    through the joints within the step: stiff_step solves again)."""
    buf, row_body = contacts.buffers, contacts.rows.body
    n_rows = buf.n[N_ROWS] if buf.n[N_NOW] > 0 else 0
    joint_body = joints.body
    for r in range(n_rows):
        for side in range(2):
            i = row_body[r, side]
            for j in range(joint_body.shape[0]):
                if joint_body[j, 0] == i or joint_body[j, 1] == i:
                    return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def friction_as_forces(h, bodies, work, plan, vel0, omega0, sign):
    """sign = +1: the contact friction's change of the velocities (now (vel, omega), before
    it (pvel, pomega)) as forces m Δv/Δt, I Δω/Δt added to force_acc/torque_acc, kept in
    (pvel, pomega), and the velocities put back to the step's start (vel0, omega0), for the
    implicit solve to be done again; sign = −1: those forces taken off again."""
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    force_acc, torque_acc, pvel, pomega = work.force_acc, work.torque_acc, work.pvel, work.pomega
    inertia_world, node_body = plan.inertia_world, plan.node_body
    for k in range(node_body.shape[0]):
        i = node_body[k]
        if sign > 0.0:
            m = 1.0 / body_inv_mass[i] if body_inv_mass[i] > 0.0 else 0.0
            dwx, dwy, dwz = body_omega[i, 0] - pomega[i, 0], body_omega[i, 1] - pomega[i, 1], \
                body_omega[i, 2] - pomega[i, 2]
            for c in range(3):
                pvel[i, c] = m * (body_vel[i, c] - pvel[i, c]) / h
            for c in range(3):
                pomega[i, c] = (inertia_world[i, 3 * c] * dwx + inertia_world[i, 3 * c + 1] * dwy
                                + inertia_world[i, 3 * c + 2] * dwz) / h
            for c in range(3):
                body_vel[i, c] = vel0[i, c]
                body_omega[i, c] = omega0[i, c]
        for c in range(3):
            force_acc[i, c] += sign * pvel[i, c]
            torque_acc[i, c] += sign * pomega[i, c]


@njit(cache=True, error_model="numpy", _nrt=False)
def any_drive(joints, drives):
    """Whether some joint has friction or a motor on (its free rows in use)."""
    joint_type, motor_mode, friction, motor_max = joints.type, drives.motor_mode, drives.friction, drives.motor_max
    for j in range(joint_type.shape[0]):
        nf = N_FREE[joint_type[j]]
        if nf == 1 and motor_mode[j] != MOTOR_OFF:
            if motor_max[j] > 0.0:
                return True
        elif nf > 0 and friction[j] > 0.0:
            return True
    return False


@njit(cache=True, error_model="numpy")
def penalty_run(n_steps, h, t0, params, env, bodies, loads, joints, drives, rows, work, plan, contacts, proj,
                violation):
    """Advance n_steps fixed steps. Rows must hold the current poses on entry; they hold
    the final poses on return. With params[P_PROJECTION] > 0, seed 004's projection ends
    each step (projection.project_step with that many Newton iterations; proj its
    Projection, violation (4,) its last Violation numbers). Contacts (physics/contacts.py) push as one-sided springs:
    implicit under the stiff preset (module docstring, "Contacts"), explicit under the
    others (contacts.penalty_contact_forces, κ = CONTACT_KAPPA, ζ = 1). Returns the number
    of steps done before a blow-up (n_steps when none)."""
    force_acc, torque_acc = work.force_acc, work.torque_acc
    gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
    stiff = params[0] == STIFF
    drives_on = any_drive(joints, drives)
    implicit = stiff or drives_on
    n_project = int(params[P_PROJECTION])
    contact_n = contacts.buffers.n
    if not drives_on:                       # no friction or motor for the whole run: clear the drives once
        setup_drives(h, bodies, joints, drives, rows, plan)
    for step in range(n_steps):
        gather_forces(t0 + step * h, bodies, loads, force_acc, torque_acc)
        # contacts.prepare_contacts written out: without the calls that count references to
        # the contact bundles (a microsecond) when nothing is near or nothing was found
        n_pairs = broad_contacts(contacts, bodies)
        m = narrow_contacts(contacts, n_pairs) if n_pairs > 0 else 0
        if m > 0:
            n_contacts = write_contact_rows(contacts, bodies, h, m)
        else:
            contact_n[N_ROWS] = 0
            contact_n[N_BLOCKS] = 0
            n_contacts = 0
        if detection_overflowed(contacts):
            return step                     # nothing moved yet: redone with grown buffers
        if n_contacts > 0 and not stiff:
            penalty_contact_forces(contacts, bodies, h, CONTACT_KAPPA, 1.0, force_acc, torque_acc, gravity)
        if stiff and n_contacts > 0:
            stiff_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, step == n_steps - 1,
                       contacts, n_contacts, drives_on)
        elif stiff:
            stiff_joint_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan,
                             step == n_steps - 1, drives_on)
        else:
            penalty_forces(params, h, bodies, rows, work)
            if implicit:
                # relin = stiff, False here: a typed bool, not the literal False (numba would
                # compile joint_velocities a second time for the literal)
                joint_velocities(params, h, stiff, gravity, gyroscopic, bodies, joints, drives, rows, work, plan,
                                 drives_on)
            else:
                integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
            integrate_positions(bodies, h)
            compute_joint_rows(bodies, joints, rows, step == n_steps - 1)
        if n_project > 0:                   # post-stabilization: seed 004 eqs. 15-18
            project_step(n_project, bodies, joints, rows, proj, violation, step == n_steps - 1)
        if blown_up(bodies, max_speed, max_spin):
            return step
    compute_joint_rates(bodies, joints, rows)
    return n_steps



# ---------------------------------------------------------------------------- layout
def elimination_plan(n_bodies, dynamic, pairs):
    """The block layout of the implicit system: `dynamic` (n,) bool, `pairs` the (a, b) body
    pairs of the joints. Orders the dynamic bodies by minimum degree (greedy, with the fill
    of each elimination), so a tree is eliminated leaves first with no fill; ties go first
    in, first out, so a chain is eliminated from both ends at once (consecutive nodes are
    independent: the substitutions of solve run as two chains the processor overlaps, a
    fifth faster on a 100-link chain than one end to the other). Returns the layout arrays
    of Plan (body_node … joint_b_late)."""
    nodes = np.flatnonzero(dynamic)
    adj = {int(i): set() for i in nodes}
    for a, b in pairs:
        if dynamic[a] and dynamic[b] and a != b:
            adj[a].add(b)
            adj[b].add(a)
    heap = [(len(s), q, i) for q, (i, s) in enumerate(adj.items())]
    pushed = len(heap)
    heapq.heapify(heap)
    order, later, done = [], {}, set()
    while heap:
        deg, _, i = heapq.heappop(heap)
        if i in done or deg != len(adj[i]):
            continue
        done.add(i)
        order.append(i)
        nb = adj.pop(i)
        later[i] = nb
        for n in nb:
            adj[n].discard(i)
            adj[n] |= nb - {n}                       # the fill: the neighbours become a clique
            heapq.heappush(heap, (len(adj[n]), pushed, n))
            pushed += 1
    body_node = np.full(n_bodies, -1, np.int64)
    body_node[order] = np.arange(len(order))
    up_ptr, up_node, slot_of = [0], [], {}
    for k, i in enumerate(order):
        for n in sorted(int(body_node[x]) for x in later[i]):
            slot_of[(k, n)] = len(up_node)
            up_node.append(n)
        up_ptr.append(len(up_node))
    pair_ptr, pair_lo, pair_hi, pair_target = [0], [], [], []
    for k in range(len(order)):
        slots = range(up_ptr[k], up_ptr[k + 1])
        for s1 in slots:
            for s2 in slots:
                if s2 < s1:
                    continue
                n1, n2 = up_node[s1], up_node[s2]
                pair_lo.append(s1)
                pair_hi.append(s2)
                pair_target.append(-1 - n1 if n1 == n2 else slot_of[(n1, n2)])
        pair_ptr.append(len(pair_lo))
    joint_slot = np.full(len(pairs), -1, np.int64)
    joint_b_late = np.zeros(len(pairs), np.int64)
    for j, (a, b) in enumerate(pairs):
        na, nb = body_node[a], body_node[b]
        if na >= 0 and nb >= 0 and na != nb:
            joint_slot[j] = slot_of[(min(na, nb), max(na, nb))]
            joint_b_late[j] = int(nb > na)
    as_int = lambda x: np.asarray(x, np.int64)
    return (body_node, as_int(order), as_int(up_ptr), as_int(up_node), as_int(pair_ptr), as_int(pair_lo),
            as_int(pair_hi), as_int(pair_target), joint_slot, joint_b_late)


def build_plan(world):
    """Plan for the world's current layout (bodies, joints, rows)."""
    m = world.model
    nb, nj, nr = m.bodies.count, m.joints.count, m.rows.count
    inv_mass, inv_inertia = m.bodies.inv_mass, m.bodies.inv_inertia
    dynamic = ~((inv_mass == 0.0) & np.all(inv_inertia == 0.0, axis=1))
    layout = elimination_plan(nb, dynamic, [tuple(int(x) for x in p) for p in m.joints.body[:nj]])
    nn, nu = len(layout[1]), len(layout[3])
    z = np.zeros
    return Plan(*layout, z((nn, 36)), z((nu, 36)), z((nn, 6)), z((nn, 36)), z((nu, 36)), z((nn, 6)), z((nb, 9)),
                z((nb, 9)), z(nr), z(nr), z(nr), z(nr, np.int64), z(nj, np.int64), z(nj), z(nj, np.int64), z((nj, 3)), z((nb, 3)),
                z((nb, 4)), z((nb, 3)), z((nb, 3)), z((nb, 3)), z((nb, 3)))


class PenaltySolver:
    """The `penalty` family: settings (SETTINGS), step, stats. Caches: the params vector
    built from the settings, and the implicit step's Plan (rebuilt when the layout changes)."""
    name = "penalty"
    description = "Penalty forces, seed 000: every row a spring-damper (stiff: implicit)."
    HONOURS = frozenset({"limits", "friction", "motors", "contacts"})     # no restitution: its contact
    # springs are critically damped (a resting body must not bounce), so contacts do not bounce
    SETTINGS = SETTINGS

    def __init__(self):
        self.settings = defaults(SETTINGS)
        self.params = np.zeros(N_PARAMS)       # [preset, α*_lin, β*_lin, α*_rot, β*_rot, κ, ζ, κ_s, ζ_s]
        self.stats = SolverStats()
        self.plan = None
        self._plan_key = None
        self._pack()

    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(SETTINGS, values, "penalty"))
        self._pack()

    def _pack(self):
        self.params[0] = PRESETS[self.settings["penalty_preset"]]
        self.params[1:9] = [self.settings[k] for k in COEFFICIENTS]
        self.params[P_NEWTON] = NEWTON_ITERATIONS

    def model_changed(self, world):
        self.plan = None

    def _current_plan(self, world):
        m = world.model
        key = (m.version, m.bodies.count, m.joints.count, m.rows.count)
        if self.plan is None or key != self._plan_key:
            self.plan, self._plan_key = build_plan(world), key
        return self.plan

    def free_rows_used(self, world):
        """Per joint, 1 where its free rows carry friction or a motor."""
        m, c = world.model.joints, world.control.joints
        nf = N_FREE[m.type]
        motor = (nf == 1) & (c.motor_mode != MOTOR_OFF)
        return (motor | ((nf > 0) & (m.friction > 0.0))).astype(np.int64)

    def step(self, world, n, coupled=False):
        """n steps of Δt; returns the steps done before a blow-up."""
        t0 = time.perf_counter()
        plan = self._current_plan(world)
        env, bodies, loads, joints, drives, rows, work = world.kernel_bundles(self.free_rows_used(world), coupled)
        # seed 004's projection after each step, inside the kernel
        self.params[P_PROJECTION] = self.settings["projection_iterations"] if self.settings["post_projection"] else 0
        violation = np.zeros(4)
        done = 0
        while done < n:
            chunk = n - done
            k = penalty_run(chunk, world.dt, world.time + done * world.dt, self.params, env, bodies, loads, joints,
                            drives, rows, work, plan, world.contact_data(), projection.projection_for(world),
                            violation)
            grew = world.contacts_stepped()
            done += k
            if k < chunk and not grew:
                break                       # blew up
            if k < chunk:
                continue                    # the contact buffers grew: the rest of the chunk
        ms = (time.perf_counter() - t0) * 1e3 / max(n, 1)
        self.stats = SolverStats(0, 0.0, ms, False, 0, done)
        if self.params[P_PROJECTION] > 0 and done > 0:
            self.stats.record_projection(projection.Violation(*(float(v) for v in violation)))
        return done
