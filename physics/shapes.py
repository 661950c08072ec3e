"""Collision/visual shapes and their exact mass properties.

Every shape is centred on its body's centre of mass; capsule and cylinder axes run
along the body's local z. Inertia tensors are diagonal in the body frame, so a body
stores its three principal moments (kg·m²).

`Convex` (the hull of a point cloud) and `Compound` (several pieces, each with a local
pose) are given in a frame of their own (a mesh's, a robot link's) whose origin is
generally not their centre of mass, nor its axes their principal axes. They keep their
geometry in the body frame — the centre of mass of the solid of uniform density and its
principal axes — and report where that frame lies in theirs as `frame` (position,
orientation): `body_pose(position, orientation)` turns the pose of their own frame into
the body's pose to give World.add_body, `source_pose` the reverse.

Dimensions are checked when a shape is made: each must be a real number, finite, and
between MIN_SIZE and MAX_SIZE (a capsule's half_length may also be 0); anything else
raises ValueError naming the shape and the argument. `check_shape(obj)` says whether an
object is a shape at all (for World.add_body).
"""
from dataclasses import dataclass
import math
import numbers

import numpy as np

from .hull import HullError, convex_hull, mass_properties, principal_axes, triangulate
from .quat import q_from_matrix, q_mul, q_conj, q_rotate, q_to_matrix

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


MAX_POINTS = 1_000_000      # points given to Convex
MAX_HULL_VERTICES = 1024    # vertices of a hull (the narrow phase scans them: keep hulls small)
MAX_PIECES = 256            # pieces of a Compound


def _pose(what, position, orientation):
    """(position (3,), unit quaternion (4,)) checked, or ValueError naming `what`."""
    try:
        p = np.array(position, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise ValueError(f"{what} position must be 3 numbers (m), got {_show(position)}") from None
    try:
        q = np.array(orientation, dtype=float).reshape(4)
    except (TypeError, ValueError):
        raise ValueError(f"{what} orientation must be a quaternion [x, y, z, w], got {_show(orientation)}") from None
    if not (np.all(np.isfinite(p)) and np.all(np.abs(p) <= MAX_SIZE)):
        raise ValueError(f"{what} position must be finite and within {MAX_SIZE:g} m, got {_show(position)}")
    norm = float(np.linalg.norm(q)) if np.all(np.isfinite(q)) else math.nan
    if not norm > 1e-9:
        raise ValueError(f"{what} orientation must be a finite non-zero quaternion [x, y, z, w], "
                         f"got {_show(orientation)}")
    return p, q / norm


class _Framed:
    """What Convex and Compound share: geometry kept in the body frame, and that frame's
    pose `frame` = (position (3,), orientation (4,)) in the shape's own frame."""

    def body_pose(self, position=(0.0, 0.0, 0.0), orientation=(0.0, 0.0, 0.0, 1.0)):
        """The body's (position, orientation) when the shape's own frame (the mesh's, the
        link's) is at (position, orientation)."""
        q = np.asarray(orientation, float)
        q = q / np.linalg.norm(q)
        fp, fq = self.frame
        return np.asarray(position, float) + q_rotate(q, fp), q_mul(q, fq)

    def source_pose(self, position, orientation):
        """The pose of the shape's own frame when the body is at (position, orientation)."""
        fp, fq = self.frame
        q = q_mul(np.asarray(orientation, float), q_conj(fq))
        return np.asarray(position, float) - q_rotate(q, fp), q

    def volume(self):
        return self._volume

    def principal_inertia(self, mass):
        return float(mass) * self._unit_moments

    def inertia_tensor(self, mass):
        """The inertia tensor (3,3) about the body frame's origin, in its axes (kg·m²)."""
        return float(mass) * self._unit_tensor


class Convex(_Framed):
    """The convex hull of a point cloud (n,3) — a mesh's vertices, a V-HACD piece —
    computed once here (physics/hull.py: quickhull, coplanar triangles merged into
    polygons). The solid hull's exact volume, centre of mass and inertia tensor (uniform
    density) give the body frame: `vertices` (V,3) and `faces` (polygons, indices into
    vertices, counter-clockwise seen from outside) are in it, `frame` is its pose in the
    points' frame. `source`: the mesh file the points came from, if any (kept for
    writers)."""
    kind = "convex"

    def __init__(self, points, source=None):
        try:
            P = np.array(points, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"Convex: points must be an (n, 3) array of numbers (m), got {_show(points)}") from None
        if P.ndim != 2 or P.shape[1] != 3:
            raise ValueError(f"Convex: points must be an (n, 3) array of numbers (m), got shape {P.shape}")
        if P.shape[0] < 4:
            raise ValueError(f"Convex: needs at least 4 points not in one plane, got {P.shape[0]}")
        if P.shape[0] > MAX_POINTS:
            raise ValueError(f"Convex: at most {MAX_POINTS} points, got {P.shape[0]}")
        bad = ~np.all(np.isfinite(P), axis=1)
        if bad.any():
            raise ValueError(f"Convex: points must be finite, point {int(np.argmax(bad))} is {P[np.argmax(bad)].tolist()}")
        if np.abs(P).max() > MAX_SIZE:
            raise ValueError(f"Convex: points must lie within {MAX_SIZE:g} m of the origin, got "
                             f"{float(np.abs(P).max()):.6g} m")
        extent = float((P.max(axis=0) - P.min(axis=0)).max())
        tol = 1e-9 * max(extent, float(np.abs(P).max()))
        try:
            verts, faces = convex_hull(P, tol, MAX_HULL_VERTICES, min_thickness=MIN_SIZE)
        except HullError as e:
            raise ValueError(f"Convex: {e}; a convex shape needs a solid at least {MIN_SIZE:g} m thick"
                             if "vertices" not in str(e) else
                             f"Convex: {e} (simplify the mesh, or split it into convex pieces)") from None
        tris = triangulate(faces)
        vol, com, tensor = mass_properties(verts, tris)
        moments, R = principal_axes(tensor)
        body = (verts - com) @ R                       # rows: Rᵀ (v − c)
        self.vertices = body
        self.faces = tuple(faces)
        self.triangles = tris
        self.frame = (com, q_from_matrix(R))
        self.source = source
        self._volume = vol
        self._unit_moments = moments / vol
        self._unit_tensor = np.diag(self._unit_moments)
        self._freeze()

    def _freeze(self):
        for a in (self.vertices, self.triangles, self.frame[0], self.frame[1], *self.faces):
            a.flags.writeable = False

    def __setstate__(self, state):
        """Unpickled (a disk cache of pieces): its arrays read-only again."""
        self.__dict__.update(state)
        self._freeze()

    def __repr__(self):
        src = f", source={self.source!r}" if self.source else ""
        return f"Convex({len(self.vertices)} vertices, {len(self.faces)} faces{src})"

    def __eq__(self, other):
        return (type(other) is Convex and self.source == other.source
                and np.array_equal(self.vertices, other.vertices) and np.array_equal(self.frame[1], other.frame[1])
                and np.array_equal(self.frame[0], other.frame[0]) and len(self.faces) == len(other.faces)
                and all(np.array_equal(f, g) for f, g in zip(self.faces, other.faces)))

    def __hash__(self):
        return hash(("convex", self.source, self.vertices.shape, self.vertices.tobytes()))

    def bounding_radius(self):
        return float(np.linalg.norm(self.vertices, axis=1).max())


PIECE_KINDS = ("box", "sphere", "capsule", "cylinder", "convex")


def _piece_mass(shape):
    """(volume, centre (3,), inertia tensor per unit density (3,3)) of a piece in its frame."""
    v = shape.volume()
    if shape.kind == "convex":
        R = q_to_matrix(shape.frame[1])
        return v, shape.frame[0].copy(), R @ np.diag(shape.principal_inertia(v)) @ R.T
    return v, np.zeros(3), np.diag(shape.principal_inertia(v))


class Compound(_Framed):
    """Several pieces in one body — a robot link given as convex pieces (V-HACD).

    `pieces`: a sequence of shapes (Box, Sphere, Capsule, Cylinder, Convex), each bare (at
    the compound's origin) or as (shape, position, orientation) in the compound's own frame
    (a Convex piece placed by the frame of its points). Mass properties are those of the
    pieces' union at uniform density, overlaps counted twice (parallel-axis theorem).

    The body frame is, by default, their centre of mass with its principal axes. Give
    `frame` = (position, orientation) to fix it instead (a URDF link's inertial frame), and
    with it `unit_inertia` = the principal moments per kilogram (m²) that the body is to
    have there (otherwise the diagonal of the uniform solid's tensor about that frame).

    `pieces` (after construction): tuple of (shape, position, orientation) relative to the
    body frame, a Convex piece's pose being that of its own body frame. `source`: the mesh
    file the pieces came from, if any (kept for writers)."""
    kind = "compound"

    def __init__(self, pieces, frame=None, unit_inertia=None, source=None):
        self.source = source
        if isinstance(pieces, (str, bytes)) or not hasattr(pieces, "__len__") or len(pieces) == 0:
            raise ValueError(f"Compound: pieces must be a non-empty list of shapes or (shape, position, "
                             f"orientation), got {_show(pieces)}")
        if len(pieces) > MAX_PIECES:
            raise ValueError(f"Compound: at most {MAX_PIECES} pieces, got {len(pieces)}")
        placed = []
        for k, item in enumerate(pieces):
            pose = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
            shape = item
            if isinstance(item, (tuple, list)):
                if not 1 <= len(item) <= 3:
                    raise ValueError(f"Compound: pieces[{k}] must be a shape or (shape, position, orientation), "
                                     f"got {_show(item)}")
                shape = item[0]
                pose = (item[1] if len(item) > 1 else pose[0], item[2] if len(item) > 2 else pose[1])
            if getattr(shape, "kind", None) not in PIECE_KINDS or not isinstance(shape, tuple(_PIECE_CLASSES)):
                raise ValueError(f"Compound: pieces[{k}] must be a Box, Sphere, Capsule, Cylinder or Convex, "
                                 f"got {_show(shape)}")
            p, q = _pose(f"Compound: pieces[{k}]", *pose)
            placed.append((shape, p, q))
        # mass properties in the compound's own frame
        vol, first, tensors = 0.0, np.zeros(3), []
        for shape, p, q in placed:
            v, c, I = _piece_mass(shape)
            R = q_to_matrix(q)
            c = p + R @ c
            vol += v
            first += v * c
            tensors.append((v, c, R @ I @ R.T))
        com = first / vol
        tensor = np.zeros((3, 3))
        for v, c, I in tensors:                      # parallel axis: I + v (|d|² E − d dᵀ)
            d = c - com
            tensor += I + v * (d @ d * np.eye(3) - np.outer(d, d))
        if frame is None:
            moments, R = principal_axes(tensor)
            origin, fq = com, q_from_matrix(R)
            unit_tensor = np.diag(moments / vol)
        else:
            origin, fq = _pose("Compound: frame", *frame)
            R = q_to_matrix(fq)
            d = com - origin
            unit_tensor = R.T @ (tensor + vol * (d @ d * np.eye(3) - np.outer(d, d))) @ R / vol
        if unit_inertia is not None:
            if frame is None:
                raise ValueError("Compound: unit_inertia needs the frame it is given in (frame=…)")
            try:
                m = np.array(unit_inertia, dtype=float).reshape(3)
            except (TypeError, ValueError):
                raise ValueError(f"Compound: unit_inertia must be 3 principal moments per kg (m²), "
                                 f"got {_show(unit_inertia)}") from None
            if not (np.all(np.isfinite(m)) and np.all(m > 0.0)):
                raise ValueError(f"Compound: unit_inertia must be 3 positive finite numbers (m²), got {m.tolist()}")
            if m.max() > m.sum() - m.max() + 1e-12 * m.sum():
                raise ValueError(f"Compound: unit_inertia {m.tolist()} breaks the triangle inequality "
                                 f"(no body has these principal moments)")
            unit_tensor = np.diag(m)
        self.frame = (origin, fq)
        self._volume = vol
        self._unit_tensor = unit_tensor
        self._unit_moments = np.diag(unit_tensor).copy()
        # the pieces relative to the body frame (a Convex by its own body frame)
        Rt, qi = q_to_matrix(fq).T, q_conj(fq)
        out = []
        for shape, p, q in placed:
            if shape.kind == "convex":
                p, q = p + q_rotate(q, shape.frame[0]), q_mul(q, shape.frame[1])
            out.append((shape, Rt @ (p - origin), q_mul(qi, q)))
        self.pieces = tuple(out)
        for a in (self.frame[0], self.frame[1], self._unit_tensor, self._unit_moments):
            a.flags.writeable = False

    def __repr__(self):
        src = f", source={self.source!r}" if self.source else ""
        return f"Compound({len(self.pieces)} pieces: {', '.join(s.kind for s, _, _ in self.pieces)}{src})"

    def __eq__(self, other):
        return (type(other) is Compound and self.source == other.source and len(self.pieces) == len(other.pieces)
                and all(a == b and np.array_equal(p, q) and np.array_equal(r, t)
                        for (a, p, r), (b, q, t) in zip(self.pieces, other.pieces))
                and all(np.array_equal(x, y) for x, y in zip(self.frame, other.frame))
                and np.array_equal(self._unit_tensor, other._unit_tensor))

    def __hash__(self):
        return hash(("compound", self.source, len(self.pieces)))

    def bounding_radius(self):
        return max(float(np.linalg.norm(p)) + _radius(s) for s, p, _ in self.pieces)


def _radius(shape):
    """The radius of a shape's bounding sphere about its body frame's origin."""
    if shape.kind == "box":
        return float(np.linalg.norm(shape.half_extents))
    if shape.kind == "sphere":
        return shape.radius
    if shape.kind == "capsule":
        return shape.radius + shape.half_length
    if shape.kind == "cylinder":
        return math.hypot(shape.radius, shape.half_length)
    return shape.bounding_radius()


def primitive_half_extents(shape):
    """Half sizes (3,) of a box's, sphere's, capsule's or cylinder's bounding box in its body
    frame (a capsule's and a cylinder's axis along z); None for other kinds."""
    kind = shape.kind
    if kind == "box":
        return np.asarray(shape.half_extents, float)
    if kind == "sphere":
        return np.full(3, shape.radius)
    if kind == "capsule":
        return np.array([shape.radius, shape.radius, shape.radius + shape.half_length])
    if kind == "cylinder":
        return np.array([shape.radius, shape.radius, shape.half_length])
    return None


_PIECE_CLASSES = (Box, Sphere, Capsule, Cylinder, Convex)


SHAPE_KINDS = {"box": Box, "sphere": Sphere, "cylinder": Cylinder, "capsule": Capsule, "plane": Plane,
               "convex": Convex, "compound": Compound}


def check_shape(obj):
    """`obj` if it is a shape (Box, Sphere, Capsule, Cylinder, Plane, Convex, Compound), else ValueError
    saying what a shape is — e.g. for `add_body("b", "sphere", ...)`."""
    if isinstance(obj, tuple(SHAPE_KINDS.values())):
        return obj
    hint = ""
    if isinstance(obj, str) and obj.strip().lower() in SHAPE_KINDS:
        cls = SHAPE_KINDS[obj.strip().lower()].__name__
        hint = f" (a shape object such as physics.{cls}(…), not its name)"
    raise ValueError(f"shape must be one of physics.Box, Sphere, Capsule, Cylinder, Plane, Convex, Compound{hint}, "
                     f"got {_show(obj)} ({type(obj).__name__})")
