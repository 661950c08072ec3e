"""Shared pieces of collision detection: the shape kind codes, the named tuples of arrays the
kernels take, and the contact output (one contact at a time, or a whole manifold reduced to
four points).

Conventions (every kernel in this package):
- positions in m, quaternions (x, y, z, w) as in physics/quat.py;
- `params[i]` holds a body's shape numbers: box (hx, hy, hz) half extents; sphere (r,);
  capsule and cylinder (r, half_length) with the axis along local z; plane: unused (an
  infinite static plane through the body's origin, normal along local z); convex and
  compound: indices into the hull table (hulls.py), which also gives a box its hull;
- a contact joins bodies a and b; its normal is the unit vector from a to b, its depth
  (m) is positive when the shapes overlap and negative for a gap, and its point lies on
  b's surface (b's deepest point into a); the matching point on a's surface is
  point + depth·normal;
- a contact's feature id is an integer naming the features (corner, face, edge, clipping
  plane, segment end) that made it, stable from step to step while the same features touch,
  so a solver can match it with last step's contact and warm start.
"""
from ..jit import helper

PLANE, SPHERE, CAPSULE, BOX, CYLINDER, CONVEX, COMPOUND = 0, 1, 2, 3, 4, 5, 6
KIND_CODES = {"plane": PLANE, "sphere": SPHERE, "capsule": CAPSULE, "box": BOX, "cylinder": CYLINDER,
              "convex": CONVEX, "compound": COMPOUND}

# Inside the kernels a body is one row of `body` (n, 11): position 0:3 (m), quaternion 3:7
# (x y z w), shape numbers 7:11 (`params`). Contacts are built in `ci` (m,3) int64 (a, b,
# feature id) and `cf` (m,7) float (point 0:3, normal 3:6, depth 6) with `count` (2,) int64
# (written, did not fit); a manifold's candidate points in `sp` (16,4) (point, depth) and
# `sf` (16,) (feature id). Plain arrays, not named tuples: every read of a named tuple's
# field costs a reference-count pair in numba, ten times the arithmetic of a box–plane test.
POS, QUAT, PAR = 0, 3, 7
BODY_WIDTH = 11

JIT = dict(cache=True, error_model="numpy")
# For kernels that allocate nothing and return no array: compiled without numba's
# reference counting. numba counts references to every array a helper takes, and in a
# loop with branches its pruning leaves them in: a dozen atomic calls per pair, more than a
# box–plane manifold costs (the contacts are the same bit for bit).
JIT_NO_REFS = dict(JIT, _nrt=False)

MAX_CANDIDATES = 16
# an incident corner this close (m) outside a reference face's side plane counts as inside
# when the incident face is clipped (box_box, convex): a corner on a flush side (boxes of one
# size side by side, a pyramid's rows) stays that corner instead of turning into a crossing
# by round-off, so its feature id, the warm start's key, is stable
SIDE_SLACK = 1e-6


@helper(**JIT)
def emit(ci, cf, count, a, b, px, py, pz, nx, ny, nz, depth, feature):
    """Append one contact (dropped and counted in count[1] when full)."""
    k = count[0]
    if k < ci.shape[0]:
        ci[k, 0] = a
        ci[k, 1] = b
        ci[k, 2] = feature
        cf[k, 0] = px
        cf[k, 1] = py
        cf[k, 2] = pz
        cf[k, 3] = nx
        cf[k, 4] = ny
        cf[k, 5] = nz
        cf[k, 6] = depth
        count[0] = k + 1
    else:
        count[1] += 1


@helper(**JIT)
def add_candidate(sp, sf, m, px, py, pz, depth, feature):
    """Store a manifold candidate point (on b's surface) while sp has room (MAX_CANDIDATES
    rows, or a hull face's workspace); returns the new count."""
    if m < sp.shape[0]:
        sp[m, 0] = px
        sp[m, 1] = py
        sp[m, 2] = pz
        sp[m, 3] = depth
        sf[m] = feature
        return m + 1
    return m


@helper(**JIT)
def _signed_area(sp, i1, i2, j, nx, ny, nz):
    """((p2 − p1) × (pj − p1)) · n: twice the signed area of the triangle p1 p2 pj seen along n."""
    ux, uy, uz = sp[i2, 0] - sp[i1, 0], sp[i2, 1] - sp[i1, 1], sp[i2, 2] - sp[i1, 2]
    vx, vy, vz = sp[j, 0] - sp[i1, 0], sp[j, 1] - sp[i1, 1], sp[j, 2] - sp[i1, 2]
    return (uy * vz - uz * vy) * nx + (uz * vx - ux * vz) * ny + (ux * vy - uy * vx) * nz


@helper(**JIT)
def _emit_candidate(sp, sf, i, a, b, nx, ny, nz, ci, cf, count):
    emit(ci, cf, count, a, b, sp[i, 0], sp[i, 1], sp[i, 2], nx, ny, nz, sp[i, 3], sf[i])


@helper(**JIT)
def count_touching(sp, dc, m):
    """How many of the m points touch (depth ≥ 0; rows of sp, the depth in column dc)."""
    touching = 0
    for k in range(m):
        if sp[k, dc] >= 0.0:
            touching += 1
    return touching


@helper(**JIT_NO_REFS)
def keep_bearing(sp, sf, m):
    """When more than 4 candidates hold 3 or more that touch (depth ≥ 0), drop those with a
    gap (moving the rest to the front), so that flush_manifold's four bear: a hull has many
    vertices within the margin, and the farthest from the deepest is often one above the
    floor, which makes no row. Returns the new count."""
    if m <= 4:
        return m
    touching = count_touching(sp, 3, m)
    if touching < 3 or touching == m:
        return m
    n = 0
    for k in range(m):
        if sp[k, 3] >= 0.0:
            for c in range(4):
                sp[n, c] = sp[k, c]
            sf[n] = sf[k]
            n += 1
    return n


@helper(**JIT_NO_REFS)
def _beats(sp, dc, j, k, vj, vk):
    """Whether candidate j beats the best so far k on the value v (largest wins). Values
    within round-off (1e-9 relative) tie; a tie goes to the deeper point (depth in column
    dc), then to the larger x, y, z (1e-12 m apart): the choice does not depend on the
    candidates' order, so the same points clipped in another order (a box given as a hull)
    give the same four."""
    if k < 0:
        return True
    tol = 1e-9 * max(abs(vj), abs(vk))
    if vj > vk + tol:
        return True
    if vj < vk - tol:
        return False
    for c in (dc, 0, 1, 2):
        if sp[j, c] > sp[k, c] + 1e-12:
            return True
        if sp[j, c] < sp[k, c] - 1e-12:
            return False
    return False


@helper(**JIT_NO_REFS)
def deepest(sp, dc, m):
    """The deepest of the m points (rows of sp: x, y, z, …, the depth in column dc)."""
    i1 = -1
    for j in range(m):
        if _beats(sp, dc, j, i1, sp[j, dc], sp[i1, dc] if i1 >= 0 else 0.0):
            i1 = j
    return i1


@helper(**JIT_NO_REFS)
def spread_three(sp, dc, m, i1, nx, ny, nz):
    """With the deepest point p1 chosen, the three that span the largest area with it (seen
    along n): p2 the farthest from p1, p3 making the largest triangle p1 p2 p3, p4 the
    largest triangle on the other side of the line p1 p2 (the reduction of Bullet / Box2D
    v3); ties broken by _beats."""
    i2 = -1
    best = -1.0
    for j in range(m):
        if j != i1:
            dx, dy, dz = sp[j, 0] - sp[i1, 0], sp[j, 1] - sp[i1, 1], sp[j, 2] - sp[i1, 2]
            d2 = dx * dx + dy * dy + dz * dz
            if _beats(sp, dc, j, i2, d2, best):
                best, i2 = d2, j
    i3 = -1
    best = -1.0
    for j in range(m):
        if j != i1 and j != i2:
            area = abs(_signed_area(sp, i1, i2, j, nx, ny, nz))
            if _beats(sp, dc, j, i3, area, best):
                best, i3 = area, j
    side = 1.0 if _signed_area(sp, i1, i2, i3, nx, ny, nz) >= 0.0 else -1.0
    i4 = -1
    best = -1e300
    for j in range(m):
        if j != i1 and j != i2 and j != i3:
            area = -side * _signed_area(sp, i1, i2, j, nx, ny, nz)
            if _beats(sp, dc, j, i4, area, best):
                best, i4 = area, j
    return i2, i3, i4


@helper(**JIT)
def flush_manifold(sp, sf, m, a, b, nx, ny, nz, ci, cf, count):
    """Emit the m candidate points of one manifold (common normal n, from a to b), reduced to
    at most 4: the deepest point p1 and the three that span the largest area with it
    (spread_three)."""
    if m <= 4:
        for i in range(m):
            _emit_candidate(sp, sf, i, a, b, nx, ny, nz, ci, cf, count)
        return
    i1 = deepest(sp, 3, m)
    i2, i3, i4 = spread_three(sp, 3, m, i1, nx, ny, nz)
    _emit_candidate(sp, sf, i1, a, b, nx, ny, nz, ci, cf, count)
    _emit_candidate(sp, sf, i2, a, b, nx, ny, nz, ci, cf, count)
    _emit_candidate(sp, sf, i3, a, b, nx, ny, nz, ci, cf, count)
    _emit_candidate(sp, sf, i4, a, b, nx, ny, nz, ci, cf, count)


FEATURE_BITS = 26           # feature ids are < 2²⁶ − 1 (contacts.py keys a pair's points by them)


@helper(**JIT)
def fold_feature(raw):
    """A feature id below 2²⁵ made from a wider one (hulls' face, vertex and clipping-plane
    numbers; compound piece pairs): kept when it fits, else its remainder modulo the
    largest prime below 2²⁵: two points of one manifold share an id with odds ~m²/2²⁶,
    and then only their warm starts mix."""
    if 0 <= raw < (1 << 25):
        return raw
    return raw % 33554393


# ---------------------------------------------------------------------------- shared geometry
@helper(**JIT)
def segment_closest(A, E, bb, c, f, tiny):
    """Ericson's ClosestPtSegmentSegment (Real-Time Collision Detection, 2005, 5.1.9) for
    P(s) = P0 + s d1, Q(t) = Q0 + t d2, neither a point: (s, t) in [0, 1]² from A = d1·d1,
    E = d2·d2, bb = d1·d2, c = d1·r, f = d2·r (r = P0 − Q0). s from the two lines (0 when
    they are parallel: A E − bb² ≤ tiny), t from s, clamped, then s again from t."""
    den = A * E - bb * bb
    s = min(max((bb * f - c * E) / den, 0.0), 1.0) if den > tiny else 0.0
    t = (bb * s + f) / E
    if t < 0.0:
        t = 0.0
        s = min(max(-c / A, 0.0), 1.0)
    elif t > 1.0:
        t = 1.0
        s = min(max((bb - c) / A, 0.0), 1.0)
    return s, t


@helper(**JIT)
def clip_crossing(poly, src, dst, q, qn, m, t):
    """Sutherland–Hodgman: the point at t along polygon src's edge q → qn (where it crosses
    the clipping plane) as vertex m of polygon dst (poly: (2, n, 3), the two polygons)."""
    for c in range(3):
        poly[dst, m, c] = poly[src, q, c] + t * (poly[src, qn, c] - poly[src, q, c])


@helper(**JIT)
def clip_keep(poly, tags, src, dst, qn, m):
    """Sutherland–Hodgman: vertex qn of polygon src, inside the clipping plane, kept as
    vertex m of polygon dst with its two tags (label, feature id)."""
    for c in range(3):
        poly[dst, m, c] = poly[src, qn, c]
    tags[dst, m, 0] = tags[src, qn, 0]
    tags[dst, m, 1] = tags[src, qn, 1]
