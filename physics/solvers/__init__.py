"""Solver families over the shared constraint rows. Each is one object with the same
small surface (penalty.PenaltySolver is the shortest example):

    name, description     its key and one line for menus
    HONOURS               features it acts on ("limits", "friction", "motors" of joints;
                          "contacts", "restitution")
    SETTINGS              its settings schema (physics/settings.py Setting entries)
    settings, configure   current values (dict) and the checked setter
    step(world, n, coupled) -> steps done before a blow-up
    stats                 SolverStats of the last call
    model_changed(world)  the layout of bodies/joints/rows changed: drop caches
    free_rows_used(world) per joint, 1 if the family pushes its free rows

Adding a family is one module and one line in FAMILIES.
"""
from .impulse import ImpulseSolver
from .lcp import LcpSolver
from .penalty import PenaltySolver
from .stats import SolverStats

FAMILIES = {"penalty": PenaltySolver, "impulse": ImpulseSolver, "lcp": LcpSolver}
PLANNED = ("penalty", "impulse")     # the families the scene schema knows of

__all__ = ["FAMILIES", "PLANNED", "SolverStats", "PenaltySolver", "ImpulseSolver", "LcpSolver"]
