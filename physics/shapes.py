"""Collision/visual shapes and their exact mass properties.

Every shape is centred on its body's centre of mass; capsule and cylinder axes run
along the body's local z. Inertia tensors are diagonal in the body frame, so a body
stores its three principal moments (kg·m²).

Dimensions are checked when a shape is made: each must be a real number, finite, and
between MIN_SIZE and MAX_SIZE (a capsule's half_length may also be 0); anything else
raises ValueError naming the shape and the argument. `check_shape(obj)` says whether an
object is a shape at all (for World.add_body).
"""
from dataclasses import dataclass
import math
import numbers

import numpy as np

MIN_SIZE = 1e-6    # m: smaller dimensions make the inertia underflow
MAX_SIZE = 1e6     # m: larger ones make the volume and inertia overflow


def _size(shape, what, value, zero_ok=False):
    """A dimension as a float, or ValueError naming the shape and the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{shape}: {what} must be a number of metres, got {_show(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{shape}: {what} must be finite, got {v!r}")
    if zero_ok and v == 0.0:
        return 0.0
    if v <= 0.0:
        raise ValueError(f"{shape}: {what} must be {'>= 0' if zero_ok else 'positive'} (m), got {v!r}")
    if not MIN_SIZE <= v <= MAX_SIZE:
        lo = "0 or between" if zero_ok else "between"
        raise ValueError(f"{shape}: {what} must be {lo} {MIN_SIZE:g} and {MAX_SIZE:g} m, got {v!r}")
    return v


def _show(value, limit=60):
    s = repr(value)
    return s if len(s) <= limit else s[:limit - 1] + "…"


@dataclass(frozen=True)
class Box:
    half_extents: tuple  # (m)
    kind = "box"

    def __post_init__(self):
        he = self.half_extents
        if isinstance(he, (str, bytes)) or not hasattr(he, "__len__") or len(he) != 3:
            raise ValueError(f"Box: half_extents must be 3 numbers (hx, hy, hz) in metres, got {_show(he)}")
        object.__setattr__(self, "half_extents",
                           tuple(_size("Box", f"half_extents[{i}]", h) for i, h in enumerate(he)))

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

    def __post_init__(self):
        object.__setattr__(self, "radius", _size("Sphere", "radius", self.radius))

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

    def __post_init__(self):
        object.__setattr__(self, "radius", _size("Cylinder", "radius", self.radius))
        object.__setattr__(self, "half_length", _size("Cylinder", "half_length", self.half_length))

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

    def __post_init__(self):
        object.__setattr__(self, "radius", _size("Capsule", "radius", self.radius))
        object.__setattr__(self, "half_length", _size("Capsule", "half_length", self.half_length, zero_ok=True))

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


def check_shape(obj):
    """`obj` if it is a shape (Box, Sphere, Capsule, Cylinder, Plane), else ValueError
    saying what a shape is — e.g. for `add_body("b", "sphere", ...)`."""
    if isinstance(obj, tuple(SHAPE_KINDS.values())):
        return obj
    hint = ""
    if isinstance(obj, str) and obj.strip().lower() in SHAPE_KINDS:
        cls = SHAPE_KINDS[obj.strip().lower()].__name__
        hint = f" (a shape object such as physics.{cls}(…), not its name)"
    raise ValueError(f"shape must be one of physics.Box, Sphere, Capsule, Cylinder, Plane{hint}, "
                     f"got {_show(obj)} ({type(obj).__name__})")
