"""The `penalty` family (seed 000): each active row becomes a spring-damper.

    F_pen = −Jᵀ(α G + β Ġ)                                  (eq. 9, seed 000)

Three presets of α, β and of how they are integrated (settings.py):

* ``paper`` — exactly seed 000 §5: α = m_eff α*, β = m_eff β* with
  m_eff = 1/(1/m_i + 1/m_j) (masses only), α* = 5000, β* = 25 for translational
  rows and α* = 10000, β* = 10 for rotational rows, tuned for Δt ≈ 3 ms; explicit
  forces, semi-implicit Euler (eq. 27).
* ``critical`` — explicit as ``paper``, stiffness from each row's effective mass *and
  inertia* and the step, so that every mode of the coupled rows stays stable and
  critically damped (explicit.py).
* ``stiff`` (the default) — the same law integrated by backward Euler, so the springs
  can be far stiffer than explicit integration allows: α = m ω², β = 2ζ_s m ω,
  ω = κ_s/Δt, κ_s = 100, ζ_s = 1. m is seed 000's m_eff = 1/(1/m_i + 1/m_j) for a
  translational row and its rotational counterpart 1/(J M⁻¹ Jᵀ) (the two inertias about
  the row's axis) for a rotational row — not the translational row's J M⁻¹ Jᵀ, which
  a small inertia on a long lever makes tiny although the rest of the system holds
  that lever still (a carriage far out on its rail). A steady load F opens a row by
  F/α = F Δt²/(κ_s² m). Why implicit: explicit penalty is stable only for ωΔt < 2 on
  every mode of the coupled rows, and those modes' stiffness is set by the lightest
  part on the longest lever; backward Euler is stable for any α, β ≥ 0 (a linear
  spring-damper under it only loses energy), so the stiffness is chosen for the gap.

The stiff step, by stage (run.py has the step's order):

    assemble.py        the implicit system of the joints' rows, in 6×6 blocks
    drives.py          joint friction and motors: rows of the same system with a bound
    contact_springs.py contacts: one-sided springs of the same system, an active set
    block_ldl.py       the exact solve: block LDLᵀ in a minimum-degree order
    explicit.py        the paper and critical presets' explicit forces
    run.py             the step: forces, the system, its solves, positions, Newton
    solver.py          PenaltySolver: settings, the kernel call, stats

The free rows' forces of the last step are kept as impulses (force·Δt) in the rows'
`impulse` (state: the Joint's friction_torque and sliding readouts read them, and the
next step starts its active set from them, so a restored state replays bit for bit);
the stiff preset keeps its joint rows' forces there too (the geometric stiffness).
"""
from .block_ldl import elimination_plan, factor, factor_solve, solve
from .contact_springs import CONTACT_STIFF_KAPPA
from .explicit import CONTACT_KAPPA
from .solver import PenaltySolver

__all__ = ["PenaltySolver", "elimination_plan", "factor", "factor_solve", "solve", "CONTACT_KAPPA",
           "CONTACT_STIFF_KAPPA"]
