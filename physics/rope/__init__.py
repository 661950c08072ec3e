"""Ropes (seed 002): inextensible Cosserat rods stepped with the bodies (rope.py),
their numba kernels (kernels.py)."""
from .rope import Rope, frames_along

__all__ = ["Rope", "frames_along"]
