"""The `lcp` family (seeds 003, 004): each step one mixed LCP over the constraint rows.

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
top of the tree), A ← A − B G_L⁺ Bᵀ with B = J_U M̂ J_Lᵀ. A coupling between joints
(q_f = m·q_l + o, ../couplings.py) is one more such row, over its two halves (the two
joints' bodies, up to four).

The LCP (method `auto`): Lemke's method (dense.lemke, exact, lexicographic so it
cannot cycle) when |U| ≤ lemke_max_rows, else projected Gauss–Seidel from the warm
start. Fallback rule: PGS also runs when Lemke fails (a ray, the pivot budget, a
non-finite pivot, round-off taking over, or a result whose residual is not below
LEMKE_RESIDUAL — PGS then starts from it) and when the time cap (lcp_time_cap_ms) is smaller than Lemke's
predicted time (LEMKE_NS_PER_N3 · n³, n = 2 × rows) — Lemke cannot be cut midway,
PGS can stop after any sweep with a feasible λ. Method `lemke` skips the prediction,
`pgs` always iterates. Which form PGS runs on: with loop rows, or with Lemke tried first,
the dense A (its CSR rows by dense.sparsity); else — the many-contact case — A is built
sparse: when some U row is on a body of the joint tree, as CSR rows of its nonzeros
(system.sparse_system, one tree solve per row), and when none is (M̂ = M⁻¹ on every row's
bodies: heaps, pyramids, piles) not at all — PGS in velocity form (velocity_pgs.py: each
row's M⁻¹J_uᵀ, the sweeps on D = M⁻¹J_Uᵀλ, a contact's rows on their couplings; the same
iterates in O(rows) a sweep), which
also stops when no body's momentum changes by more than pgs_tolerance over a sweep (the
impulse family's measure). Small problems, where Lemke runs, are solved as before.

Friction: a box (pyramid) per friction row, |λ_t| ≤ μ Σλ_n on each of the patch's
tangent rows t1, t2 and its twist row (physics/contacts.py writes them) — not the
impulse solver's Coulomb ball. Before each solve the tangent pair is turned so that t1
points along the contact's tangential velocity of that solve's free motion, so a
sliding contact gets exactly μ Σλ_n against its motion (the box only differs from the
ball for sticking contacts, where it allows up to √2 μ Σλ_n diagonally). When PGS will
solve the step, only the contacts that will slide are turned (more free tangential speed
than their warm-start bound can take away): a sticking contact's free tangential velocity
is round-off, and a box turned along it each step moves the solution away from the warm
start (rows.align_friction). Joint friction
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

A step (step.py, lcp_kernel), by stage:

1. drive rows and speculative limits; contacts found; the joint tree factored
   (tree.articulated_factor); the loops' equality rows and the couplings between joints
   (rows.collect_loops) and G_L factored (system.build_loops)
2. impacts: the contact points classified (impacts.classify_contacts); with some
   impacting, the impact LCP from the start velocities (stages 4-6 without forces), its
   impacts recorded (impacts.record_impact)
3. forces, velocities integrated; the joints' viscous damping (../damping.py)
4. the free motion (velocities.free_velocity); friction turned along the sliding
   (rows.align_friction); the U rows (rows.collect_rows)
5. A (system.build_system) and b (velocities.phase_rhs); the LCP (solve.solve_lcp)
6. the impulses stored in the row tables and applied (velocities)
7. drift: the split pass (solve.position_pass); positions, rows, seed 004's projection,
   the blow-up check

The modules:

    settings.py    the settings, and the named tuple the kernel reads them from (Params)
    work.py        the kernel's work arrays (LcpWork) and its stats vector (S_*)
    rows.py        the rows of a phase: the loops' L and the one-sided and bounded U
    impacts.py     the contact points at the step's start: impacting, resting or
                   speculative; the impact records
    system.py      products with the rows and with M̂ (the tree solve), the loops' G_L,
                   the LCP matrix A (dense, or sparse rows)
    velocities.py  the free motion, the right-hand side b, the impulses applied and stored
    solve.py       the LCP by Lemke or PGS (the fallback rule); the split pass
    velocity_pgs.py  PGS without A, in velocity form, for U rows on bodies of no tree
    step.py        the kernel
    solver.py      LcpSolver: settings, the kernel call, stats; mhat_dense for tests
"""
from .solver import LcpSolver, LcpStats, mhat_dense

__all__ = ["LcpSolver", "LcpStats", "mhat_dense"]
