"""Shared pieces of collision detection: the shape kind codes, the named tuples of arrays the
kernels take, and the contact output (one contact at a time, or a whole manifold reduced to
four points).

Conventions (every kernel in this package):
- positions in m, quaternions (x, y, z, w) as in physics/quat.py;
- `params[i]` holds a body's shape numbers: box (hx, hy, hz) half extents; sphere (r,);
  capsule and cylinder (r, half_length) with the axis along local z; plane: unused (an
  infinite static plane through the body's origin, normal along local z);
- a contact joins bodies a and b; its normal is the unit vector from a to b, its depth
  (m) is positive when the shapes overlap and negative for a gap, and its point lies on
  b's surface (b's deepest point into a); the matching point on a's surface is
  point + depth·normal;
- a contact's feature id is an integer naming the features (corner, face, edge, clipping
  plane, segment end) that made it, stable from step to step while the same features touch,
  so a solver can match it with last step's contact and warm start.
"""
from collections import namedtuple

from numba import njit

PLANE, SPHERE, CAPSULE, BOX, CYLINDER = 0, 1, 2, 3, 4
KIND_CODES = {"plane": PLANE, "sphere": SPHERE, "capsule": CAPSULE, "box": BOX, "cylinder": CYLINDER}

Shapes = namedtuple("Shapes", "kind params position quaternion static")
"""Per body: kind (n,) int64 code, params (n,4), position (n,3) m, quaternion (n,4) x y z w,
static (n,) bool (static bodies never collide with each other; planes are always static)."""

Broad = namedtuple("Broad", "aabb key pairs")
"""Broad-phase workspace: aabb (n,6) min xyz then max xyz (m), key (n,) sort keys,
pairs (P,2) int64 candidate pairs."""

Scratch = namedtuple("Scratch", "point depth feature poly label vid frame half rot")
"""Narrow-phase workspace (allocated once, reused by every pair): a manifold's candidate
points point (16,3), depth (16,), feature (16,); the clipping polygons poly (2,16,3), their
edge labels label (2,16) and vertex ids vid (2,16); the two boxes' axes frame (2,3,3)
(frame[box, i] = axis i in world), half extents half (2,3) and the rotation between them
rot (3,3) (rot[i, j] = A_i · B_j)."""

Contacts = namedtuple("Contacts", "pair point normal depth feature count")
"""Output: pair (m,2) int64 bodies a, b; point (m,3) m; normal (m,3) unit, from a to b;
depth (m,) m; feature (m,) int64; count (2,) int64: contacts written, contacts that did not
fit."""

JIT = dict(cache=True, error_model="numpy")

MAX_CANDIDATES = 16


@njit(inline="always", **JIT)
def emit(out, a, b, px, py, pz, nx, ny, nz, depth, feature):
    """Append one contact to `out` (dropped and counted in out.count[1] when full)."""
    k = out.count[0]
    if k < out.depth.shape[0]:
        out.pair[k, 0] = a
        out.pair[k, 1] = b
        out.point[k, 0] = px
        out.point[k, 1] = py
        out.point[k, 2] = pz
        out.normal[k, 0] = nx
        out.normal[k, 1] = ny
        out.normal[k, 2] = nz
        out.depth[k] = depth
        out.feature[k] = feature
        out.count[0] = k + 1
    else:
        out.count[1] += 1


@njit(inline="always", **JIT)
def add_candidate(s, m, px, py, pz, depth, feature):
    """Store a manifold candidate point (on b's surface) in the scratch; returns the new count."""
    if m < MAX_CANDIDATES:
        s.point[m, 0] = px
        s.point[m, 1] = py
        s.point[m, 2] = pz
        s.depth[m] = depth
        s.feature[m] = feature
        return m + 1
    return m


@njit(inline="always", **JIT)
def _emit_candidate(s, i, out, a, b, nx, ny, nz):
    emit(out, a, b, s.point[i, 0], s.point[i, 1], s.point[i, 2], nx, ny, nz, s.depth[i], s.feature[i])


@njit(inline="always", **JIT)
def _signed_area(s, i1, i2, j, nx, ny, nz):
    """((p2 − p1) × (pj − p1)) · n: twice the signed area of the triangle p1 p2 pj seen along n."""
    ux, uy, uz = s.point[i2, 0] - s.point[i1, 0], s.point[i2, 1] - s.point[i1, 1], s.point[i2, 2] - s.point[i1, 2]
    vx, vy, vz = s.point[j, 0] - s.point[i1, 0], s.point[j, 1] - s.point[i1, 1], s.point[j, 2] - s.point[i1, 2]
    return (uy * vz - uz * vy) * nx + (uz * vx - ux * vz) * ny + (ux * vy - uy * vx) * nz


@njit(inline="always", **JIT)
def flush_manifold(s, m, a, b, nx, ny, nz, out):
    """Emit the m candidate points of one manifold (common normal n, from a to b), reduced to
    at most 4: the deepest point p1; the point farthest from it p2; the point p3 making the
    largest triangle p1 p2 p3 (seen along n); then the largest triangle on the other side of
    the line p1 p2 — the four span the largest area the deepest point allows (the reduction
    of Bullet / Box2D v3)."""
    if m <= 4:
        for i in range(m):
            _emit_candidate(s, i, out, a, b, nx, ny, nz)
        return
    i1 = 0
    for j in range(1, m):
        if s.depth[j] > s.depth[i1]:
            i1 = j
    i2 = -1
    best = -1.0
    for j in range(m):
        if j != i1:
            dx = s.point[j, 0] - s.point[i1, 0]
            dy = s.point[j, 1] - s.point[i1, 1]
            dz = s.point[j, 2] - s.point[i1, 2]
            d2 = dx * dx + dy * dy + dz * dz
            if d2 > best:
                best, i2 = d2, j
    i3 = -1
    best = -1.0
    for j in range(m):
        if j != i1 and j != i2:
            area = abs(_signed_area(s, i1, i2, j, nx, ny, nz))
            if area > best:
                best, i3 = area, j
    side = 1.0 if _signed_area(s, i1, i2, i3, nx, ny, nz) >= 0.0 else -1.0
    i4 = -1
    best = -1e300
    for j in range(m):
        if j != i1 and j != i2 and j != i3:
            area = -side * _signed_area(s, i1, i2, j, nx, ny, nz)
            if area > best:
                best, i4 = area, j
    _emit_candidate(s, i1, out, a, b, nx, ny, nz)
    _emit_candidate(s, i2, out, a, b, nx, ny, nz)
    _emit_candidate(s, i3, out, a, b, nx, ny, nz)
    _emit_candidate(s, i4, out, a, b, nx, ny, nz)
