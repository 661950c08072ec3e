"""Narrow phase: the contact manifold of each candidate pair, by the shapes' kinds.

| pair | method | points | feature ids |
|---|---|---|---|
| plane–sphere | centre's height above the plane − r | 1 | 0 |
| plane–capsule | each end sphere against the plane | ≤ 2 | end 0 (−z), 1 (+z) |
| plane–box | each of the 8 corners against the plane, reduced to 4 | ≤ 4 | corner (bit 0 x, 1 y, 2 z: + side) |
| plane–cylinder | per cap, the deepest rim point and the rim points 90°, 180°, 270° from it (exact for each rim point), reduced to 4 | ≤ 4 | 4·cap + k |
| sphere–sphere | centre distance − r_a − r_b | 1 | 0 |
| sphere–capsule | sphere against the closest point of the capsule's segment | 1 | 0 |
| sphere–box | contact_geometry.box_distance (closest point of the box; inside: nearest face) | 1 | 0 |
| capsule–capsule | closest points of the segments (Ericson 5.1.9); nearly parallel (sin < 0.02) and overlapping: the two ends of the overlap | 1 or 2 | 0; 1, 2 |
| capsule–box | closest point of the segment to the box by golden-section search of the convex signed distance along the segment; if it touches a face and the segment is nearly parallel to the face (sin < 0.1) the segment clipped to the face's rectangle, 2 points | 1 or 2 | 0; 1, 2 |
| box–box | box_box.py: SAT over 15 axes, face clipping or edge–edge | ≤ 4 | box_box.py |
| convex–{plane, sphere, capsule, box, convex} | convex.py: GJK / EPA, then box_box's face rule and clipping | ≤ 4 | convex.py |
| compound–anything | each piece against the other body (or its pieces, bounding spheres first), every pair as above; all their points (only the touching ones when 3 or more touch) reduced to 4 (deepest, farthest, largest triangles), each keeping its normal | ≤ 4 | the piece pair's and the piece's (common.fold_feature) |

Cylinders against spheres, capsules, boxes, cylinders and hulls are APPROXIMATE: the cylinder is
taken as the capsule of the same radius and half length (its flat caps become hemispheres
that reach r further along the axis); only cylinder–plane treats the caps exactly.
"""
import math

import numpy as np
from ..jit import helper

from ..contact_geometry import box_distance

from ..quat import frame_axes, qmul, rotate, rotate_inv
from .box_box import box_box
from .common import BODY_WIDTH, BOX, CAPSULE, COMPOUND, CONVEX, CYLINDER, JIT, JIT_NO_REFS, MAX_CANDIDATES, PAR, \
    PLANE, QUAT, SPHERE, add_candidate, count_touching, deepest, emit, flush_manifold, fold_feature, segment_closest, \
    spread_three
from .convex import capsule_convex, hull_hull, plane_convex, solid_work, sphere_convex

PARALLEL_SIN_CAPSULES = 0.02
PARALLEL_SIN_FACE = 0.1
GOLDEN_ITERATIONS = 40


@helper(**JIT)
def _axis(body, i):
    """A body's local z axis in world coordinates."""
    return rotate(body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2], body[i, QUAT + 3], 0.0, 0.0, 1.0)


@helper(**JIT)
def _plane(body, p):
    """Normal (local z in world) and offset n·origin of plane body p."""
    nx, ny, nz = _axis(body, p)
    return nx, ny, nz, nx * body[p, 0] + ny * body[p, 1] + nz * body[p, 2]


@helper(**JIT)
def sphere_pair(ci, cf, count, a, b, ax, ay, az, ra, bx, by, bz, rb, margin, feature):
    """Contact of sphere (centre A, radius ra) on a and sphere (B, rb) on b: n = (B − A)/|B − A|
    (+z when the centres coincide), depth = ra + rb − |B − A|, point B − rb n. Used for the
    spheres swept by capsules at their closest points."""
    dx, dy, dz = bx - ax, by - ay, bz - az
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    gap = dist - ra - rb
    if gap >= margin:
        return
    if dist > 1e-12:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:
        nx, ny, nz = 0.0, 0.0, 1.0
    emit(ci, cf, count, a, b, bx - rb * nx, by - rb * ny, bz - rb * nz, nx, ny, nz, -gap, feature)


@helper(**JIT)
def plane_sphere(body, p, b, margin, ci, cf, count):
    nx, ny, nz, off = _plane(body, p)
    r = body[b, PAR]
    cx, cy, cz = body[b, 0], body[b, 1], body[b, 2]
    gap = nx * cx + ny * cy + nz * cz - off - r
    if gap < margin:
        emit(ci, cf, count, p, b, cx - r * nx, cy - r * ny, cz - r * nz, nx, ny, nz, -gap, 0)


@helper(**JIT)
def plane_capsule(body, p, b, margin, ci, cf, count):
    nx, ny, nz, off = _plane(body, p)
    r, h = body[b, PAR], body[b, PAR + 1]
    wx, wy, wz = _axis(body, b)
    for e in range(2):
        sg = -1.0 if e == 0 else 1.0
        cx = body[b, 0] + sg * h * wx
        cy = body[b, 1] + sg * h * wy
        cz = body[b, 2] + sg * h * wz
        gap = nx * cx + ny * cy + nz * cz - off - r
        if gap < margin:
            emit(ci, cf, count, p, b, cx - r * nx, cy - r * ny, cz - r * nz, nx, ny, nz, -gap, e)


@helper(**JIT)
def plane_box(body, p, b, margin, sp, sf, ci, cf, count):
    """Each corner c ± hx a0 ± hy a1 ± hz a2 at height (c − o)·n ± hx a0·n ± hy a1·n ± hz a2·n
    (three dot products for all 8); the corners below the margin, reduced to 4. With at
    most 4 below (a box resting on a face, an edge or a corner: the common case) they are
    written straight out in corner order, as flush_manifold would."""
    nx, ny, nz, off = _plane(body, p)
    r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(body[b, QUAT], body[b, QUAT + 1], body[b, QUAT + 2],
                                                             body[b, QUAT + 3])
    hx, hy, hz = body[b, PAR], body[b, PAR + 1], body[b, PAR + 2]
    e0 = hx * (r00 * nx + r10 * ny + r20 * nz)
    e1 = hy * (r01 * nx + r11 * ny + r21 * nz)
    e2 = hz * (r02 * nx + r12 * ny + r22 * nz)
    cx, cy, cz = body[b, 0], body[b, 1], body[b, 2]
    height = cx * nx + cy * ny + cz * nz - off
    below = 0
    for k in range(8):
        s0 = 1.0 if k & 1 else -1.0
        s1 = 1.0 if k & 2 else -1.0
        s2 = 1.0 if k & 4 else -1.0
        if height + s0 * e0 + s1 * e1 + s2 * e2 < margin:
            below += 1
    if below == 0:
        return
    m = 0
    for k in range(8):
        s0 = 1.0 if k & 1 else -1.0
        s1 = 1.0 if k & 2 else -1.0
        s2 = 1.0 if k & 4 else -1.0
        gap = height + s0 * e0 + s1 * e1 + s2 * e2
        if gap < margin:
            px = cx + s0 * hx * r00 + s1 * hy * r01 + s2 * hz * r02
            py = cy + s0 * hx * r10 + s1 * hy * r11 + s2 * hz * r12
            pz = cz + s0 * hx * r20 + s1 * hy * r21 + s2 * hz * r22
            if below <= 4:
                emit(ci, cf, count, p, b, px, py, pz, nx, ny, nz, -gap, k)
            else:
                m = add_candidate(sp, sf, m, px, py, pz, -gap, k)
    if below > 4:
        flush_manifold(sp, sf, m, p, b, nx, ny, nz, ci, cf, count)


@helper(**JIT)
def plane_cylinder(body, p, b, margin, sp, sf, ci, cf, count):
    nx, ny, nz, off = _plane(body, p)
    r, h = body[b, PAR], body[b, PAR + 1]
    wx, wy, wz = _axis(body, b)
    # u: the rim direction deepest along −n (−n's part perpendicular to the axis); v = w × u
    c = nx * wx + ny * wy + nz * wz
    ux, uy, uz = -(nx - c * wx), -(ny - c * wy), -(nz - c * wz)
    lu = math.sqrt(ux * ux + uy * uy + uz * uz)
    if lu > 1e-9:
        ux, uy, uz = ux / lu, uy / lu, uz / lu
    else:
        q0, q1, q2, q3 = body[b, QUAT], body[b, QUAT + 1], body[b, QUAT + 2], body[b, QUAT + 3]
        ux, uy, uz = rotate(q0, q1, q2, q3, 1.0, 0.0, 0.0)
    vx, vy, vz = wy * uz - wz * uy, wz * ux - wx * uz, wx * uy - wy * ux
    m = 0
    for cap in range(2):
        sg = -1.0 if cap == 0 else 1.0
        ccx = body[b, 0] + sg * h * wx
        ccy = body[b, 1] + sg * h * wy
        ccz = body[b, 2] + sg * h * wz
        for k in range(4):
            cu = 1.0 if k == 0 else (-1.0 if k == 2 else 0.0)
            cv = 1.0 if k == 1 else (-1.0 if k == 3 else 0.0)
            px = ccx + r * (cu * ux + cv * vx)
            py = ccy + r * (cu * uy + cv * vy)
            pz = ccz + r * (cu * uz + cv * vz)
            gap = nx * px + ny * py + nz * pz - off
            if gap < margin:
                m = add_candidate(sp, sf, m, px, py, pz, -gap, 4 * cap + k)
    flush_manifold(sp, sf, m, p, b, nx, ny, nz, ci, cf, count)


@helper(**JIT)
def sphere_capsule(body, a, b, margin, ci, cf, count):
    """Sphere a against the point of capsule b's segment closest to its centre."""
    h = body[b, PAR + 1]
    wx, wy, wz = _axis(body, b)
    cx, cy, cz = body[a, 0], body[a, 1], body[a, 2]
    bx, by, bz = body[b, 0], body[b, 1], body[b, 2]
    t = min(max((cx - bx) * wx + (cy - by) * wy + (cz - bz) * wz, -h), h)
    sphere_pair(ci, cf, count, a, b, cx, cy, cz, body[a, PAR], bx + t * wx, by + t * wy, bz + t * wz,
                body[b, PAR], margin, 0)


@helper(**JIT)
def sphere_box(body, a, b, margin, ci, cf, count):
    """Sphere a against box b by contact_geometry.box_distance: n_box points from the box to
    the centre, the contact normal (a to b) is −n_box, the point the box's closest point."""
    r = body[a, PAR]
    cx, cy, cz = body[a, 0], body[a, 1], body[a, 2]
    q0, q1, q2, q3 = body[b, QUAT], body[b, QUAT + 1], body[b, QUAT + 2], body[b, QUAT + 3]
    gap, nx, ny, nz = box_distance(cx, cy, cz, r, body[b, 0], body[b, 1],
                                   body[b, 2], q0, q1, q2, q3,
                                   body[b, PAR], body[b, PAR + 1], body[b, PAR + 2])
    if gap < margin:
        emit(ci, cf, count, a, b, cx - (gap + r) * nx, cy - (gap + r) * ny, cz - (gap + r) * nz, -nx, -ny, -nz, -gap, 0)


@helper(**JIT_NO_REFS)
def capsule_capsule(body, a, b, margin, ci, cf, count):
    """Segments P(s) = P0 + s d1, Q(t) = Q0 + t d2 (s, t ∈ [0, 1]); their closest points by
    Ericson's ClosestPtSegmentSegment; the contact is that of the spheres of radius ra, rb
    there. When sin∠(d1, d2) < 0.02 and b's segment projects onto a's with overlap, the two
    ends of the overlap give 2 points (a line contact)."""
    ra, ha = body[a, PAR], body[a, PAR + 1]
    rb, hb = body[b, PAR], body[b, PAR + 1]
    ux, uy, uz = _axis(body, a)
    vx, vy, vz = _axis(body, b)
    p0x, p0y, p0z = body[a, 0] - ha * ux, body[a, 1] - ha * uy, body[a, 2] - ha * uz
    q0x, q0y, q0z = body[b, 0] - hb * vx, body[b, 1] - hb * vy, body[b, 2] - hb * vz
    d1x, d1y, d1z = 2.0 * ha * ux, 2.0 * ha * uy, 2.0 * ha * uz
    d2x, d2y, d2z = 2.0 * hb * vx, 2.0 * hb * vy, 2.0 * hb * vz
    rx, ry, rz = p0x - q0x, p0y - q0y, p0z - q0z
    A = d1x * d1x + d1y * d1y + d1z * d1z
    Ecoef = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    cdot = ux * vx + uy * vy + uz * vz
    if A > 1e-18 and Ecoef > 1e-18 and 1.0 - cdot * cdot < PARALLEL_SIN_CAPSULES ** 2:
        # nearly parallel: the overlap of b's segment projected on a's
        s0 = ((q0x - p0x) * d1x + (q0y - p0y) * d1y + (q0z - p0z) * d1z) / A
        s1 = s0 + (d2x * d1x + d2y * d1y + d2z * d1z) / A
        lo, hi = max(min(s0, s1), 0.0), min(max(s0, s1), 1.0)
        if hi - lo > 1e-9:
            for e in range(2):
                sv = lo if e == 0 else hi
                px, py, pz = p0x + sv * d1x, p0y + sv * d1y, p0z + sv * d1z
                t = ((px - q0x) * d2x + (py - q0y) * d2y + (pz - q0z) * d2z) / Ecoef
                t = min(max(t, 0.0), 1.0)
                sphere_pair(ci, cf, count, a, b, px, py, pz, ra, q0x + t * d2x, q0y + t * d2y, q0z + t * d2z, rb, margin, 1 + e)
            return
    # general case (Ericson 5.1.9)
    if A <= 1e-18 and Ecoef <= 1e-18:
        sv = t = 0.0
    elif A <= 1e-18:
        sv = 0.0
        t = min(max(f / Ecoef, 0.0), 1.0)
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if Ecoef <= 1e-18:
            t = 0.0
            sv = min(max(-c / A, 0.0), 1.0)
        else:
            bb = d1x * d2x + d1y * d2y + d1z * d2z
            sv, t = segment_closest(A, Ecoef, bb, c, f, 1e-18)
    sphere_pair(ci, cf, count, a, b, p0x + sv * d1x, p0y + sv * d1y, p0z + sv * d1z, ra,
                q0x + t * d2x, q0y + t * d2y, q0z + t * d2z, rb, margin, 0)


@helper(**JIT)
def _box_sdf(px, py, pz, hx, hy, hz):
    """Signed distance (m) of a point to a box centred at the origin (its own frame)."""
    qx, qy, qz = abs(px) - hx, abs(py) - hy, abs(pz) - hz
    ox, oy, oz = max(qx, 0.0), max(qy, 0.0), max(qz, 0.0)
    return math.sqrt(ox * ox + oy * oy + oz * oz) + min(max(qx, max(qy, qz)), 0.0)


@helper(**JIT_NO_REFS)
def capsule_box(body, a, b, margin, ci, cf, count):
    """Capsule (or cylinder, as a capsule) a against box b: see the module table. The signed
    distance of a point to a box is convex, so along the segment it has one minimum, found by
    golden-section search (40 iterations, t to ~1e-8 of the length) in the box's frame."""
    r, h = body[a, PAR], body[a, PAR + 1]
    hx, hy, hz = body[b, PAR], body[b, PAR + 1], body[b, PAR + 2]
    q0, q1, q2, q3 = body[b, QUAT], body[b, QUAT + 1], body[b, QUAT + 2], body[b, QUAT + 3]
    bx, by, bz = body[b, 0], body[b, 1], body[b, 2]
    wx, wy, wz = _axis(body, a)
    # the segment in the box's frame: P0 + t D, t ∈ [0, 1]
    p0x, p0y, p0z = rotate_inv(q0, q1, q2, q3, body[a, 0] - h * wx - bx,
                               body[a, 1] - h * wy - by, body[a, 2] - h * wz - bz)
    Dx, Dy, Dz = rotate_inv(q0, q1, q2, q3, 2.0 * h * wx, 2.0 * h * wy, 2.0 * h * wz)
    lo, hi = 0.0, 1.0
    g = 0.5 * (math.sqrt(5.0) - 1.0)
    t1, t2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1 = _box_sdf(p0x + t1 * Dx, p0y + t1 * Dy, p0z + t1 * Dz, hx, hy, hz)
    f2 = _box_sdf(p0x + t2 * Dx, p0y + t2 * Dy, p0z + t2 * Dz, hx, hy, hz)
    for _ in range(GOLDEN_ITERATIONS):
        if f1 <= f2:
            hi, t2, f2 = t2, t1, f1
            t1 = hi - g * (hi - lo)
            f1 = _box_sdf(p0x + t1 * Dx, p0y + t1 * Dy, p0z + t1 * Dz, hx, hy, hz)
        else:
            lo, t1, f1 = t1, t2, f2
            t2 = lo + g * (hi - lo)
            f2 = _box_sdf(p0x + t2 * Dx, p0y + t2 * Dy, p0z + t2 * Dz, hx, hy, hz)
    t = 0.5 * (lo + hi)
    ft = _box_sdf(p0x + t * Dx, p0y + t * Dy, p0z + t * Dz, hx, hy, hz)
    for te in (0.0, 1.0):
        fe = _box_sdf(p0x + te * Dx, p0y + te * Dy, p0z + te * Dz, hx, hy, hz)
        if fe <= ft:
            t, ft = te, fe
    if ft - r >= margin:
        return
    cx = body[a, 0] + (2.0 * t - 1.0) * h * wx
    cy = body[a, 1] + (2.0 * t - 1.0) * h * wy
    cz = body[a, 2] + (2.0 * t - 1.0) * h * wz
    gap, nx, ny, nz = box_distance(cx, cy, cz, r, bx, by, bz, q0, q1, q2, q3, hx, hy, hz)
    # a face normal (in the box frame one component is ±1) and the segment along the face?
    lnx, lny, lnz = rotate_inv(q0, q1, q2, q3, nx, ny, nz)
    k = -1
    if abs(lnx) > 1.0 - 1e-9:
        k = 0
    elif abs(lny) > 1.0 - 1e-9:
        k = 1
    elif abs(lnz) > 1.0 - 1e-9:
        k = 2
    dl = 2.0 * h
    if k >= 0 and dl > 1e-12:
        along = (Dx * lnx + Dy * lny + Dz * lnz) / dl
        if abs(along) < PARALLEL_SIN_FACE:
            # clip t ∈ [0, 1] to the face's rectangle (Liang–Barsky on the two tangent axes)
            t0, t1c = 0.0, 1.0
            for c in range(3):
                if c == k:
                    continue
                pc = p0x if c == 0 else (p0y if c == 1 else p0z)
                dc = Dx if c == 0 else (Dy if c == 1 else Dz)
                hc = hx if c == 0 else (hy if c == 1 else hz)
                if abs(dc) < 1e-15:
                    if abs(pc) > hc:
                        t1c = -1.0
                    continue
                ta, tb = (-hc - pc) / dc, (hc - pc) / dc
                t0 = max(t0, min(ta, tb))
                t1c = min(t1c, max(ta, tb))
            if t1c - t0 > 1e-9:
                hk = hx if k == 0 else (hy if k == 1 else hz)
                for e in range(2):
                    te = t0 if e == 0 else t1c
                    pk = (p0x + te * Dx) * lnx + (p0y + te * Dy) * lny + (p0z + te * Dz) * lnz
                    gap_e = pk - hk - r                # pk: the coordinate along the face normal
                    if gap_e < margin:
                        sx = body[a, 0] + (2.0 * te - 1.0) * h * wx
                        sy = body[a, 1] + (2.0 * te - 1.0) * h * wy
                        sz = body[a, 2] + (2.0 * te - 1.0) * h * wz
                        d_face = gap_e + r                 # segment point's height above the face
                        emit(ci, cf, count, a, b, sx - d_face * nx, sy - d_face * ny, sz - d_face * nz, -nx, -ny, -nz,
                             -gap_e, 1 + e)
                return
    if gap < margin:
        emit(ci, cf, count, a, b, cx - (gap + r) * nx, cy - (gap + r) * ny, cz - (gap + r) * nz, -nx, -ny, -nz, -gap, 0)


@helper(**JIT)
def collide_pair(kind, body, a, b, margin, sp, sf, poly, tags, boxes, rot, ci, cf, count):
    """The manifold of one pair, by kind (ordered plane < sphere < capsule < box < cylinder;
    a cylinder off a plane counts as a capsule). The output pair is the ordered one."""
    ka, kb = kind[a], kind[b]
    if ka > kb:
        a, b, ka, kb = b, a, kb, ka
    if ka == PLANE:
        if kb == SPHERE:
            plane_sphere(body, a, b, margin, ci, cf, count)
        elif kb == CAPSULE:
            plane_capsule(body, a, b, margin, ci, cf, count)
        elif kb == BOX:
            plane_box(body, a, b, margin, sp, sf, ci, cf, count)
        elif kb == CYLINDER:
            plane_cylinder(body, a, b, margin, sp, sf, ci, cf, count)
        return
    if ka == CYLINDER:
        ka = CAPSULE
    if kb == CYLINDER:
        kb = CAPSULE
        if ka == BOX:
            a, b, ka, kb = b, a, CAPSULE, BOX
    if ka == SPHERE:
        if kb == SPHERE:
            sphere_pair(ci, cf, count, a, b, body[a, 0], body[a, 1], body[a, 2], body[a, PAR],
                        body[b, 0], body[b, 1], body[b, 2], body[b, PAR], margin, 0)
        elif kb == CAPSULE:
            sphere_capsule(body, a, b, margin, ci, cf, count)
        elif kb == BOX:
            sphere_box(body, a, b, margin, ci, cf, count)
    elif ka == CAPSULE:
        if kb == CAPSULE:
            capsule_capsule(body, a, b, margin, ci, cf, count)
        elif kb == BOX:
            capsule_box(body, a, b, margin, ci, cf, count)
    elif ka == BOX and kb == BOX:
        box_box(body, a, b, margin, sp, sf, poly, tags, boxes, rot, ci, cf, count)


@helper(**JIT)
def narrow_phase(kind, body, hulls, pairs, n_pairs, margin, ci, cf, count):
    """Contacts of the first n_pairs candidate pairs into ci, cf (common.py's layout; count
    reset first); hulls the hull table (hulls.py). Allocates its small workspaces once per
    call (convex.solid_work: the clipping polygons as long as the largest hull face needs)."""
    narrow_pairs(kind, body, hulls, pairs, n_pairs, margin, solid_work(hulls.hull, BODY_WIDTH), ci, cf, count)


@helper(**JIT_NO_REFS)
def narrow_pairs(kind, body, hulls, pairs, n_pairs, margin, work, ci, cf, count):
    """narrow_phase's loop over the pairs, with its workspaces (convex.SolidWork: sp, sf the
    manifold candidates; poly, tags, boxes, rot box_box's and the hulls' clipping; gjk, the
    piece table, …), without reference counting (common.JIT_NO_REFS)."""
    count[0] = 0
    count[1] = 0
    for p in range(n_pairs):
        a, b = pairs[p, 0], pairs[p, 1]
        if kind[a] == COMPOUND or kind[b] == COMPOUND:
            compound_pair(kind, body, a, b, margin, hulls, work, ci, cf, count)
        else:
            _single_pair(kind, body, a, b, margin, hulls, work, ci, cf, count)


@helper(**JIT)
def narrow_phase_primitive(kind, body, pairs, n_pairs, margin, ci, cf, count):
    """narrow_phase for bodies of which none is a hull (kind CONVEX or COMPOUND): every pair
    by collide_pair, with the workspaces narrow_phase would make for them (an empty hull
    table's), so the contacts are the same bit for bit; it compiles none of convex.py and
    gjk.py (a world without hulls runs this one: the kernels' HULLS feature)."""
    cap = MAX_CANDIDATES
    narrow_pairs_primitive(kind, body, pairs, n_pairs, margin, np.empty((cap, 4)), np.empty(cap, np.int64),
                           np.empty((2, cap, 3)), np.empty((2, cap, 2), np.int64), np.empty((2, 3, 4)),
                           np.empty((3, 3)), ci, cf, count)


@helper(**JIT_NO_REFS)
def narrow_pairs_primitive(kind, body, pairs, n_pairs, margin, sp, sf, poly, tags, boxes, rot, ci, cf, count):
    """narrow_phase_primitive's loop over the pairs (narrow_pairs without the hulls)."""
    count[0] = 0
    count[1] = 0
    for p in range(n_pairs):
        collide_pair(kind, body, pairs[p, 0], pairs[p, 1], margin, sp, sf, poly, tags, boxes, rot, ci, cf, count)


@helper(**JIT_NO_REFS)
def convex_pair(kind, body, a, b, margin, hulls, work, ci, cf, count):
    """A hull (kind CONVEX: params (hull, radius)) against a plane, sphere, capsule, cylinder
    (as a capsule), box (its hull: params[3]) or hull (convex.py). Output pair ordered."""
    ka, kb = kind[a], kind[b]
    if ka > kb:
        a, b, ka, kb = b, a, kb, ka
    h = int(body[b, PAR])
    if ka == PLANE:
        plane_convex(body, a, b, h, margin, hulls, work, ci, cf, count)
    elif ka == SPHERE:
        sphere_convex(body, a, b, h, margin, hulls, work, ci, cf, count)
    elif ka == CAPSULE or ka == CYLINDER:
        capsule_convex(body, a, b, h, margin, hulls, work, ci, cf, count)
    elif ka == BOX:
        hull_hull(body, a, b, int(body[a, PAR + 3]), h, margin, hulls, work, ci, cf, count)
    else:
        hull_hull(body, a, b, int(body[a, PAR]), h, margin, hulls, work, ci, cf, count)


@helper(**JIT_NO_REFS)
def _single_pair(kind, body, a, b, margin, hulls, work, ci, cf, count):
    """One pair of non-compound shapes (a piece pair of compound_pair)."""
    if kind[a] == CONVEX or kind[b] == CONVEX:
        convex_pair(kind, body, a, b, margin, hulls, work, ci, cf, count)
    else:
        collide_pair(kind, body, a, b, margin, work.sp, work.sf, work.poly, work.tags, work.boxes, work.rot,
                     ci, cf, count)


@helper(**JIT_NO_REFS)
def _radius(kind, params, c):
    """Bounding-sphere radius of a non-compound shape about its centre (planes: 0)."""
    k = kind
    if k == SPHERE:
        return params[c]
    if k == CAPSULE:
        return params[c] + params[c + 1]
    if k == CYLINDER:
        return math.sqrt(params[c] * params[c] + params[c + 1] * params[c + 1])
    if k == BOX:
        return math.sqrt(params[c] ** 2 + params[c + 1] ** 2 + params[c + 2] ** 2)
    if k == CONVEX:
        return params[c + 1]
    return 0.0


@helper(**JIT_NO_REFS)
def _load_side(kind, body, i, k, hulls, T, K, row):
    """Row `row` of the piece table T: body i itself (not a compound), or its piece k placed
    in the world (the body's pose ∘ the piece's); returns its bounding radius."""
    if kind[i] != COMPOUND:
        for c in range(BODY_WIDTH):
            T[row, c] = body[i, c]
        K[row] = kind[i]
        return _radius(kind[i], body[i], PAR) if kind[i] != COMPOUND else 0.0
    P = hulls.piece
    r = int(body[i, PAR]) + k
    qx, qy, qz, qw = body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2], body[i, QUAT + 3]
    ox, oy, oz = rotate(qx, qy, qz, qw, P[r, 0], P[r, 1], P[r, 2])
    T[row, 0], T[row, 1], T[row, 2] = body[i, 0] + ox, body[i, 1] + oy, body[i, 2] + oz
    T[row, 3], T[row, 4], T[row, 5], T[row, 6] = qmul(qx, qy, qz, qw, P[r, 3], P[r, 4], P[r, 5], P[r, 6])
    for c in range(4):
        T[row, PAR + c] = P[r, 7 + c]
    K[row] = int(P[r, 11])
    return P[r, 18]


@helper(**JIT_NO_REFS)
def compound_pair(kind, body, a, b, margin, hulls, work, ci, cf, count):
    """A compound against any body, or two compounds: each piece pair whose bounding spheres
    (a plane: the piece's height) come within the margin, by the pairs above, into the
    work's buffer (turned so that a piece of a is their first body); all their points then
    reduced to 4, each with its own normal. Output pair ordered by kind."""
    ka, kb = kind[a], kind[b]
    if ka > kb:
        a, b, ka, kb = b, a, kb, ka
    T, K, ci2, cf2, c2 = work.table, work.kinds, work.ci, work.cf, work.count
    na = int(body[a, PAR + 1]) if ka == COMPOUND else 1
    nb = int(body[b, PAR + 1]) if kb == COMPOUND else 1
    c2[0] = 0
    c2[1] = 0
    for i in range(na):
        ra = _load_side(kind, body, a, i, hulls, T, K, np.int64(0))
        if K[0] == PLANE:
            nx, ny, nz = rotate(T[0, 3], T[0, 4], T[0, 5], T[0, 6], 0.0, 0.0, 1.0)
        for j in range(nb):
            rb = _load_side(kind, body, b, j, hulls, T, K, np.int64(1))
            if K[0] == PLANE:
                gap = nx * (T[1, 0] - T[0, 0]) + ny * (T[1, 1] - T[0, 1]) + nz * (T[1, 2] - T[0, 2]) - rb
            else:
                dx, dy, dz = T[1, 0] - T[0, 0], T[1, 1] - T[0, 1], T[1, 2] - T[0, 2]
                gap = math.sqrt(dx * dx + dy * dy + dz * dz) - ra - rb
            if gap >= margin:
                continue
            first = c2[0]
            _single_pair(K, T, np.int64(0), np.int64(1), margin, hulls, work, ci2, cf2, c2)
            for k in range(first, c2[0]):
                if ci2[k, 0] == 1:               # made as (b's piece, a's piece): turned round
                    d = cf2[k, 6]
                    for c in range(3):
                        cf2[k, c] += d * cf2[k, 3 + c]
                        cf2[k, 3 + c] = -cf2[k, 3 + c]
                ci2[k, 0], ci2[k, 1] = a, b
                ci2[k, 2] = fold_feature(((i * 256 + j + 1) << 25) + ci2[k, 2])
            if c2[0] > ci2.shape[0] - 8:
                c2[0] = _reduce4(cf2, ci2, c2[0])
    m = _reduce4(cf2, ci2, c2[0])
    for k in range(m):
        emit(ci, cf, count, a, b, cf2[k, 0], cf2[k, 1], cf2[k, 2], cf2[k, 3], cf2[k, 4], cf2[k, 5], cf2[k, 6],
             ci2[k, 2])


@helper(**JIT_NO_REFS)
def _swap(cf, ci, i, j):
    for c in range(7):
        cf[i, c], cf[j, c] = cf[j, c], cf[i, c]
    for c in range(3):
        ci[i, c], ci[j, c] = ci[j, c], ci[i, c]


@helper(**JIT_NO_REFS)
def _reduce4(cf, ci, m):
    """Keep 4 of m contacts, moved to the front (each keeps its own normal): the deepest and
    the three spanning the largest area with it seen along its normal (common.deepest,
    spread_three: flush_manifold's choice), only among the touching ones when 3 or more
    touch (as common.keep_bearing); returns how many are kept."""
    if m <= 4:
        return m
    touching = count_touching(cf, 6, m)
    if 3 <= touching < m:
        n = 0
        for k in range(m):
            if cf[k, 6] >= 0.0:
                _swap(cf, ci, n, k)
                n += 1
        m = n
        if m <= 4:
            return m
    i1 = deepest(cf, 6, m)
    i2, i3, i4 = spread_three(cf, 6, m, i1, cf[i1, 3], cf[i1, 4], cf[i1, 5])
    n = 0
    for k in range(m):                  # the four to the front, in their order
        if k == i1 or k == i2 or k == i3 or k == i4:
            _swap(cf, ci, n, k)
            n += 1
    return 4
