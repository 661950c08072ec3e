"""Collision/visual shapes and their exact mass properties.

Every shape is centred on its body's centre of mass; capsule and cylinder axes run
along the body's local z. Inertia tensors are diagonal in the body frame, so a body
stores its three principal moments (kg·m²).
"""
from dataclasses import dataclass
import math

import numpy as np


@dataclass(frozen=True)
class Box:
    half_extents: tuple  # (m)
    kind = "box"

    def volume(self):
        hx, hy, hz = self.half_extents
        return 8.0 * hx * hy * hz

    def principal_inertia(self, mass):
        hx, hy, hz = self.half_extents
        return np.array([mass * (hy * hy + hz * hz) / 3.0,
                         mass * (hx * hx + hz * hz) / 3.0,
                         mass * (hx * hx + hy * hy) / 3.0])


@dataclass(frozen=True)
class Sphere:
    radius: float
    kind = "sphere"

    def volume(self):
        return 4.0 / 3.0 * math.pi * self.radius ** 3

    def principal_inertia(self, mass):
        i = 0.4 * mass * self.radius ** 2
        return np.array([i, i, i])


@dataclass(frozen=True)
class Cylinder:
    radius: float
    half_length: float  # half the height, along local z (m)
    kind = "cylinder"

    def volume(self):
        return math.pi * self.radius ** 2 * 2.0 * self.half_length

    def principal_inertia(self, mass):
        r, h = self.radius, 2.0 * self.half_length
        ixx = mass * (3.0 * r * r + h * h) / 12.0
        return np.array([ixx, ixx, 0.5 * mass * r * r])


@dataclass(frozen=True)
class Capsule:
    radius: float
    half_length: float  # half the length of the cylindrical part, along local z (m)
    kind = "capsule"

    def volume(self):
        r = self.radius
        return math.pi * r * r * 2.0 * self.half_length + 4.0 / 3.0 * math.pi * r ** 3

    def principal_inertia(self, mass):
        # Cylinder of height H plus two hemispheres; each hemisphere's moment about the
        # capsule centre by the parallel-axis theorem from its own centroid (3r/8).
        r, H = self.radius, 2.0 * self.half_length
        v_cyl = math.pi * r * r * H
        v_sph = 4.0 / 3.0 * math.pi * r ** 3
        m_cyl = mass * v_cyl / (v_cyl + v_sph)
        m_hemi = 0.5 * (mass - m_cyl)
        ixx = (m_cyl * (H * H / 12.0 + r * r / 4.0)
               + 2.0 * m_hemi * (0.4 * r * r + H * H / 4.0 + 3.0 * H * r / 8.0))
        izz = 0.5 * m_cyl * r * r + 2.0 * m_hemi * 0.4 * r * r
        return np.array([ixx, ixx, izz])


@dataclass(frozen=True)
class Plane:
    """An infinite static plane through the body's origin, normal along local z."""
    kind = "plane"

    def volume(self):
        return math.inf

    def principal_inertia(self, mass):
        return np.array([math.inf, math.inf, math.inf])


SHAPE_KINDS = {"box": Box, "sphere": Sphere, "cylinder": Cylinder, "capsule": Capsule, "plane": Plane}
