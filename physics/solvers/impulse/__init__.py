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
uses the same factor and, with nothing to iterate, is solved in the same sweeps (direct.py).

The package, by stage of the step (step.py has the step's order):

    settings.py        the settings, the Params the kernels read, their stats vector (S_*)
    rows.py            prepare rows (M⁻¹Jᵀ, effective masses), warm start
    sweeps.py          one sweep of the joints' blocks: constraint rows, motor or friction
                       (eq. 15-16); the split-impulse sweep
    contact_sweeps.py  the contact blocks' sweep on their couplings
    iterative.py       the iterative path: sweeps until ε (eq. 17), the limit or the cap
    direct.py          the direct path: the tree's rows solved exactly around the sweeps
    direct_sets.py     its active sets: limits that let go, friction that sticks or slips
    step.py            the kernel: contacts, forces, the solve, positions, projections
    solver.py          ImpulseSolver (SolverBase): Params per call, the kernel call, stats,
                       the panel's rows and readouts
"""
from .direct import uses_direct_solve
from .settings import METHODS, SETTINGS, STABILIZATIONS, Params, make_params
from .solver import ImpulseSolver

__all__ = ["ImpulseSolver", "SETTINGS", "METHODS", "STABILIZATIONS", "Params", "make_params", "uses_direct_solve"]
