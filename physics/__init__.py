"""Sharnir's physics engine: rigid bodies, joints and solvers in maximal coordinates."""
from .kernel_cache import guard as _guard_kernel_cache

_guard_kernel_cache()       # before any kernel loads from numba's cache

from .shapes import Box, Capsule, Compound, Convex, Cylinder, Plane, Sphere
from .solvers import SolverStats
from .world import Body, Joint, SimulationBlowUp, World

__all__ = ["World", "Body", "Joint", "SimulationBlowUp", "SolverStats",
           "Box", "Sphere", "Capsule", "Cylinder", "Plane", "Convex", "Compound", "load_scene", "SceneError"]


def load_scene(path, overrides=None):
    """Build a World from a TOML scene file (see physics/io/scene.py)."""
    from .io.scene import load_scene as _load
    return _load(path, overrides)


def __getattr__(name):
    if name == "SceneError":
        from .io.scene import SceneError
        return SceneError
    raise AttributeError(name)
