"""Solver families over the shared constraint rows. Each is one package subclassing
SolverBase (base.py: settings, the step loop, what the panel shows); penalty/ is the
example. FAMILIES is the registry: its order is the menu's and the keys' (1, 2, …), and
its first family is the default (DEFAULT_FAMILY: a World's, a scene file's).

Adding a family is one package and one line in FAMILIES (docs/architecture.md).
"""
from .base import Readout, SolverBase
from .impulse import ImpulseSolver
from .lcp import LcpSolver
from .penalty import PenaltySolver
from .stats import SolverStats

FAMILIES = {family.name: family for family in (PenaltySolver, ImpulseSolver, LcpSolver)}
DEFAULT_FAMILY = next(iter(FAMILIES))

__all__ = ["DEFAULT_FAMILY", "FAMILIES", "Readout", "SolverBase", "SolverStats", "PenaltySolver", "ImpulseSolver",
           "LcpSolver"]
