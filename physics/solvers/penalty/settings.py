"""The penalty family's settings: the schema the panel, scene files and World check
against, and the named tuple its kernels read them from (Params)."""
from collections import namedtuple

from ...settings import Setting
from ..projection import PROJECTION_ITERATIONS

PAPER, CRITICAL, STIFF = 0, 1, 2        # the presets as the kernels see them (Params.preset)
PRESETS = {"paper": PAPER, "critical": CRITICAL, "stiff": STIFF}
NEWTON_ITERATIONS = 2   # most extra solves of a stiff step (run.stiff_step)

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
    PROJECTION_ITERATIONS,
)

Params = namedtuple("Params", "preset alpha_lin beta_lin alpha_rot beta_rot kappa zeta stiff_kappa stiff_zeta "
                              "newton projection dt damped")
"""What the kernels read: preset (PAPER, CRITICAL, STIFF), the paper preset's α*, β* per row
kind (1/s², 1/s), the critical preset's κ, ζ and the stiff preset's κ, ζ; newton: the most
extra solves of a stiff step; projection: Newton iterations of seed 004's projection after
each step (0: off); of the call: dt the World's Δt (s), damped (some joint has viscous
damping: drives.add_dampers)."""


def make_params(s, dt, damped):
    """Params of a settings dict and of the call (every field of one type, so the kernels
    compile once)."""
    return Params(PRESETS[s["penalty_preset"]], float(s["alpha_lin"]), float(s["beta_lin"]), float(s["alpha_rot"]),
                  float(s["beta_rot"]), float(s["kappa"]), float(s["zeta"]), float(s["stiff_kappa"]),
                  float(s["stiff_zeta"]), NEWTON_ITERATIONS,
                  int(s["projection_iterations"]) if s["post_projection"] else 0, float(dt), bool(damped))
