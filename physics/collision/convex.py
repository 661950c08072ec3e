"""Contacts of convex hulls (hulls.py) with planes, spheres, capsules, boxes and hulls.

| pair | method | points | feature ids |
|---|---|---|---|
| plane–convex | every vertex below the plane plus the margin (only those touching when 3 or more do: common.keep_bearing), reduced to 4 | ≤ 4 | vertex |
| sphere–convex | centre inside: out through the face nearest to it; else GJK's closest point | 1 | 0 |
| capsule–convex | GJK on the core segment and the hull (EPA when the segment enters); a segment nearly parallel to the face it touches (sin < 0.1): clipped to that face, 2 points | 1 or 2 | 0; 1, 2 |
| box–convex, convex–convex | the box as its hull; GJK, or EPA when they overlap, gives the separating axis, then box_box's rule and manifold (below) | ≤ 4 | below |

Hull against hull. GJK/EPA find the separation s* (the distance, or minus the penetration
depth) along the best axis, which on polytopes is a face normal or the cross product of
two edges, exactly as the separating-axis test would (EPA's facet, or GJK's closest
features, tell which edges). The largest separations s_a, s_b over the faces of a and of
b (their planes against the other hull's vertices) are found among the faces that could
still win; as in box_box.py, a face axis is kept unless the edge axis separates by more
(5 % of |s| + 10 µm), and a's face unless b's does. On overlap EPA is paused once its
bounds of the depth are within EPA_PAUSE of each other, the faces found from its upper
bound, and EPA stopped once its lower bound shows that no axis beats the face by the rule
(the answer EPA run to the end would give; most resting pairs). Face
contact: the incident face (of the other hull's faces around its vertex deepest below the
reference face, the one most against the reference normal) clipped by the reference face's
side planes (Sutherland–Hodgman; a vertex within SIDE_SLACK outside one counts as inside), the points below the
reference face plus the margin kept, depth their distance below it, reduced to 4. Edge
contact: the closest points of the two edges, one point, depth −s*.

Feature ids (common.fold_feature of): face contact ((ref·2048 + reference face)·2048 +
incident face)·2²⁴ + point, the point an incident vertex (its number in its hull) or
2²⁰ + 2048·label + side plane for an incident edge (label: its first vertex, or 1024 +
a side plane it was cut along) cut by a side plane; edge contact 2⁵⁰ + the four vertex
numbers (base 1024).
"""
from collections import namedtuple
import math

import numpy as np
from ..jit import helper

from ..quat import frame_axes
from .common import JIT, JIT_NO_REFS, MAX_CANDIDATES, PAR, QUAT, SIDE_SLACK, add_candidate, clip_crossing, clip_keep, emit, \
    flush_manifold, fold_feature, keep_bearing, segment_closest
from .gjk import EPA_DONE, EPA_ITERATIONS, EPA_PAUSED, EPA_REACHED, epa, epa_grow, epa_start, epa_witness, gjk, \
    gjk_work, support, witness

SolidWork = namedtuple("SolidWork", "gjk sp sf poly tags boxes rot table kinds ci cf count")
"""The narrow phase's workspaces: gjk.GjkWork; the manifold candidates sp (C,4), sf (C,);
the clipping polygons poly (2,C,3), tags (2,C,2); box_box's boxes (2,3,4), rot (3,3); for
a compound's piece pairs a two-row body table (common.py layout), its kinds (2,) and their
contacts ci (CP,3), cf (CP,7), count (2,) before the compound's reduction."""
COMPOUND_POINTS = 64

REL_TOL = 0.05          # box_box's face preference (an axis must separate by 5 % of |s| …
ABS_TOL = 1e-5          # … plus 10 µm more to replace a face)
PARALLEL_SIN_FACE = 0.1
TOUCH = 1e-10           # GJK distances below TOUCH·size count as touching (EPA takes over)
EPA_TOL = 1e-11         # EPA stops when a support adds less than EPA_TOL·size
EPA_PAUSE = 1.25        # hull_hull finds the faces once EPA's depth bounds are within this ratio


@helper(**JIT)
def solid_work(hull_table, body_width):
    """SolidWork sized for the hull table's largest face (clipping polygons twice as long)."""
    cap = MAX_CANDIDATES
    for h in range(hull_table.shape[0]):
        cap = max(cap, 2 * hull_table[h, 4] + 8)
    return SolidWork(gjk_work(), np.empty((cap, 4)), np.empty(cap, np.int64), np.empty((2, cap, 3)),
                     np.empty((2, cap, 2), np.int64), np.empty((2, 3, 4)), np.empty((3, 3)),
                     np.zeros((2, body_width)), np.zeros(2, np.int64), np.zeros((COMPOUND_POINTS, 3), np.int64),
                     np.zeros((COMPOUND_POINTS, 7)), np.zeros(2, np.int64))


@helper(**JIT_NO_REFS)
def load_frame(body, i, F, s):
    """Body i's world rotation (row-major) and position into F[s]."""
    r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2],
                                                             body[i, QUAT + 3])
    F[s, 0], F[s, 1], F[s, 2] = r00, r01, r02
    F[s, 3], F[s, 4], F[s, 5] = r10, r11, r12
    F[s, 6], F[s, 7], F[s, 8] = r20, r21, r22
    F[s, 9], F[s, 10], F[s, 11] = body[i, 0], body[i, 1], body[i, 2]


@helper(**JIT_NO_REFS)
def to_world(F, s, x, y, z):
    return (F[s, 0] * x + F[s, 1] * y + F[s, 2] * z + F[s, 9], F[s, 3] * x + F[s, 4] * y + F[s, 5] * z + F[s, 10],
            F[s, 6] * x + F[s, 7] * y + F[s, 8] * z + F[s, 11])


@helper(**JIT_NO_REFS)
def turn(F, s, x, y, z):
    """A direction from frame s to the world."""
    return F[s, 0] * x + F[s, 1] * y + F[s, 2] * z, F[s, 3] * x + F[s, 4] * y + F[s, 5] * z, \
        F[s, 6] * x + F[s, 7] * y + F[s, 8] * z


@helper(**JIT_NO_REFS)
def turn_back(F, s, x, y, z):
    """A world direction into frame s."""
    return F[s, 0] * x + F[s, 3] * y + F[s, 6] * z, F[s, 1] * x + F[s, 4] * y + F[s, 7] * z, \
        F[s, 2] * x + F[s, 5] * y + F[s, 8] * z


@helper(**JIT_NO_REFS)
def relative(F, p, q, rel):
    """rel := frame q in frame p (R = R_pᵀ R_q row-major, t = R_pᵀ (x_q − x_p))."""
    for i in range(3):
        for j in range(3):
            rel[3 * i + j] = F[p, i] * F[q, j] + F[p, 3 + i] * F[q, 3 + j] + F[p, 6 + i] * F[q, 6 + j]
    rel[9], rel[10], rel[11] = turn_back(F, p, F[q, 9] - F[p, 9], F[q, 10] - F[p, 10], F[q, 11] - F[p, 11])


# ---------------------------------------------------------------- plane, sphere, capsule
@helper(**JIT_NO_REFS)
def plane_convex(body, p, b, h, margin, hulls, work, ci, cf, count):
    """Every vertex of hull h (body b) below plane p plus the margin, reduced to 4."""
    F, sp, sf = work.gjk.frames, work.sp, work.sf
    load_frame(body, p, F, np.int64(0))
    load_frame(body, b, F, np.int64(1))
    nx, ny, nz = F[0, 2], F[0, 5], F[0, 8]                 # the plane's local z
    off = nx * F[0, 9] + ny * F[0, 10] + nz * F[0, 11]
    height = nx * F[1, 9] + ny * F[1, 10] + nz * F[1, 11] - off
    if height - hulls.box[h, 6] >= margin:
        return
    lx, ly, lz = turn_back(F, np.int64(1), nx, ny, nz)
    vert = hulls.vert
    v0, nv = hulls.hull[h, 0], hulls.hull[h, 1]
    m = 0
    for v in range(v0, v0 + nv):
        gap = height + lx * vert[v, 0] + ly * vert[v, 1] + lz * vert[v, 2]
        if gap < margin:
            wx, wy, wz = to_world(F, np.int64(1), vert[v, 0], vert[v, 1], vert[v, 2])
            m = add_candidate(sp, sf, m, wx, wy, wz, -gap, v - v0)
    flush_manifold(sp, sf, keep_bearing(sp, sf, m), p, b, nx, ny, nz, ci, cf, count)


@helper(**JIT_NO_REFS)
def sphere_convex(body, a, b, h, margin, hulls, work, ci, cf, count):
    """Sphere a (radius r) against hull h of body b: the centre c's largest height above a
    face plane s (a lower bound of its distance); c inside (s ≤ 0): it leaves through that
    face, depth r − s; else the hull's point closest to c by GJK."""
    wk = work.gjk
    F = wk.frames
    load_frame(body, b, F, np.int64(1))
    r = body[a, PAR]
    cx, cy, cz = turn_back(F, np.int64(1), body[a, 0] - F[1, 9], body[a, 1] - F[1, 10], body[a, 2] - F[1, 11])
    plane = hulls.plane
    f0, nf = hulls.hull[h, 2], hulls.hull[h, 3]
    s, best = -math.inf, f0
    for f in range(f0, f0 + nf):
        d = plane[f, 0] * cx + plane[f, 1] * cy + plane[f, 2] * cz - plane[f, 3]
        if d > s:
            s, best = d, f
    if s - r >= margin:
        return
    if s <= 0.0:
        nx, ny, nz = turn(F, np.int64(1), -plane[best, 0], -plane[best, 1], -plane[best, 2])    # a to b
        px, py, pz = to_world(F, np.int64(1), cx - s * plane[best, 0], cy - s * plane[best, 1], cz - s * plane[best, 2])
        emit(ci, cf, count, a, b, px, py, pz, nx, ny, nz, r - s, 0)
        return
    rel = wk.rel
    for k in range(9):
        rel[k] = 1.0 if k % 4 == 0 else 0.0
    rel[9], rel[10], rel[11] = cx, cy, cz
    n, dist = gjk(hulls, h, 0.0, np.int64(-1), 0.0, wk, 0.0)
    if dist - r >= margin or dist <= 0.0:
        return
    px, py, pz, qx, qy, qz = witness(wk, n)
    nx, ny, nz = turn(F, np.int64(1), (px - cx) / dist, (py - cy) / dist, (pz - cz) / dist)
    wx, wy, wz = to_world(F, np.int64(1), px, py, pz)
    emit(ci, cf, count, a, b, wx, wy, wz, nx, ny, nz, r - dist, 0)


@helper(**JIT_NO_REFS)
def capsule_convex(body, a, b, h, margin, hulls, work, ci, cf, count):
    """Capsule (or cylinder, as a capsule) a against hull h of body b: GJK between the core
    segment and the hull (EPA when the segment enters it) gives the closest points and the
    normal; if that normal is a face's and the segment lies along the face (sin < 0.1), the
    segment clipped to the face's side planes gives 2 points, each at its own depth."""
    wk = work.gjk
    F, rel = wk.frames, wk.rel
    load_frame(body, a, F, np.int64(0))
    load_frame(body, b, F, np.int64(1))
    r, hl = body[a, PAR], body[a, PAR + 1]
    relative(F, np.int64(1), np.int64(0), rel)                  # the segment in the hull's frame
    reach = hulls.box[h, 6] + hl + r + margin
    if rel[9] * rel[9] + rel[10] * rel[10] + rel[11] * rel[11] > reach * reach:
        return
    vert = hulls.vert
    size = hulls.box[h, 6] + hl + r
    n, dist = gjk(hulls, h, 0.0, np.int64(-1), hl, wk, TOUCH * size)
    if dist - r >= margin:
        return
    if dist > 0.0:
        px, py, pz, qx, qy, qz = witness(wk, n)
        # from the hull towards the segment (hull frame)
        mx, my, mz = (qx - px) / dist, (qy - py) / dist, (qz - pz) / dist
        depth = r - dist
    else:
        face, mx, my, mz, pen = epa(hulls, h, 0.0, np.int64(-1), hl, wk, n, EPA_TOL * size)
        if face < 0:
            return
        px, py, pz, qx, qy, qz = epa_witness(wk, face, pen)      # EPA's n: hull to segment
        depth = r + pen
    # the face the contact is on, when the normal is a face normal
    plane = hulls.plane
    f0, nf = hulls.hull[h, 2], hulls.hull[h, 3]
    best, bf = -2.0, f0
    for f in range(f0, f0 + nf):
        d = plane[f, 0] * mx + plane[f, 1] * my + plane[f, 2] * mz
        if d > best:
            best, bf = d, f
    ax, ay, az = rel[2], rel[5], rel[8]                     # the segment's axis in the hull's frame
    along = ax * plane[bf, 0] + ay * plane[bf, 1] + az * plane[bf, 2]
    nwx, nwy, nwz = turn(F, np.int64(1), -mx, -my, -mz)               # a to b, world
    if best > 1.0 - 1e-9 and hl > 0.0 and abs(along) < PARALLEL_SIN_FACE:
        # clip the segment s(t) = e0 + t (e1 − e0), t ∈ [0, 1], by the face's side planes
        e0x, e0y, e0z = rel[9] - hl * ax, rel[10] - hl * ay, rel[11] - hl * az
        dx, dy, dz = 2.0 * hl * ax, 2.0 * hl * ay, 2.0 * hl * az
        fnx, fny, fnz = plane[bf, 0], plane[bf, 1], plane[bf, 2]
        t0, t1 = 0.0, 1.0
        k0, k = hulls.face[bf, 0], hulls.face[bf, 1]
        fv = hulls.fvert
        for e in range(k):
            u, w = fv[k0 + e], fv[k0 + (e + 1) % k]
            ex, ey, ez = vert[w, 0] - vert[u, 0], vert[w, 1] - vert[u, 1], vert[w, 2] - vert[u, 2]
            sx, sy, sz = ey * fnz - ez * fny, ez * fnx - ex * fnz, ex * fny - ey * fnx     # outward side normal
            s0 = sx * (e0x - vert[u, 0]) + sy * (e0y - vert[u, 1]) + sz * (e0z - vert[u, 2])
            sd = sx * dx + sy * dy + sz * dz
            if abs(sd) < 1e-300:
                if s0 > 0.0:
                    t1 = -1.0
            elif sd > 0.0:
                t1 = min(t1, -s0 / sd)
            else:
                t0 = max(t0, -s0 / sd)
        if t1 - t0 > 1e-9:
            for e in range(2):
                t = t0 if e == 0 else t1
                sx, sy, sz = e0x + t * dx, e0y + t * dy, e0z + t * dz
                height = fnx * sx + fny * sy + fnz * sz - plane[bf, 3]
                if height - r < margin:
                    wx, wy, wz = to_world(F, np.int64(1), sx - height * fnx, sy - height * fny, sz - height * fnz)
                    nx, ny, nz = turn(F, np.int64(1), -fnx, -fny, -fnz)
                    emit(ci, cf, count, a, b, wx, wy, wz, nx, ny, nz, r - height, 1 + e)
            return
    wx, wy, wz = to_world(F, np.int64(1), px, py, pz)
    emit(ci, cf, count, a, b, wx, wy, wz, nwx, nwy, nwz, depth, 0)


# ---------------------------------------------------------------- hull against hull
@helper(**JIT_NO_REFS)
def _best_face(hulls, h, dx, dy, dz):
    """The face of hull h whose normal is most along d (its frame)."""
    plane = hulls.plane
    f0, nf = hulls.hull[h, 2], hulls.hull[h, 3]
    best, bf = -math.inf, f0
    for f in range(f0, f0 + nf):
        d = plane[f, 0] * dx + plane[f, 1] * dy + plane[f, 2] * dz
        if d > best:
            best, bf = d, f
    return bf


@helper(**JIT_NO_REFS)
def _face_around(hulls, h, v, dx, dy, dz):
    """Of the faces of hull h that have vertex v, the one whose normal is most along d."""
    plane, face, fvert = hulls.plane, hulls.face, hulls.fvert
    f0, nf = hulls.hull[h, 2], hulls.hull[h, 3]
    best, bf = -math.inf, f0
    for f in range(f0, f0 + nf):
        d = plane[f, 0] * dx + plane[f, 1] * dy + plane[f, 2] * dz
        if d > best:
            for k in range(face[f, 0], face[f, 0] + face[f, 1]):
                if fvert[k] == v:
                    best, bf = d, f
                    break
    return bf


@helper(**JIT_NO_REFS)
def _face_separation(hulls, f, o, rel):
    """Separation of hull o (placed by rel in face f's hull frame) from face f's plane: the
    lowest height of o's vertices above it."""
    plane, vert = hulls.plane, hulls.vert
    nx, ny, nz = plane[f, 0], plane[f, 1], plane[f, 2]
    # n in o's frame: Rᵀ n; heights = (Rᵀ n)·v + n·t − d
    lx = rel[0] * nx + rel[3] * ny + rel[6] * nz
    ly = rel[1] * nx + rel[4] * ny + rel[7] * nz
    lz = rel[2] * nx + rel[5] * ny + rel[8] * nz
    base = nx * rel[9] + ny * rel[10] + nz * rel[11] - plane[f, 3]
    v0, nv = hulls.hull[o, 0], hulls.hull[o, 1]
    low = math.inf
    for v in range(v0, v0 + nv):
        hgt = lx * vert[v, 0] + ly * vert[v, 1] + lz * vert[v, 2]
        if hgt < low:
            low = hgt
    return low + base


@helper(**JIT_NO_REFS)
def _invert(rel, out):
    """out := the inverse of the pose rel."""
    for i in range(3):
        for j in range(3):
            out[3 * i + j] = rel[3 * j + i]
    tx, ty, tz = rel[9], rel[10], rel[11]
    out[9] = -(out[0] * tx + out[1] * ty + out[2] * tz)
    out[10] = -(out[3] * tx + out[4] * ty + out[5] * tz)
    out[11] = -(out[6] * tx + out[7] * ty + out[8] * tz)


@helper(**JIT_NO_REFS)
def hull_hull(body, a, b, ha, hb, margin, hulls, work, ci, cf, count):
    """Contacts of hull ha (body a) and hull hb (body b): see the module docstring."""
    wk = work.gjk
    F, rel = wk.frames, wk.rel
    load_frame(body, a, F, np.int64(0))
    load_frame(body, b, F, np.int64(1))
    relative(F, np.int64(0), np.int64(1), rel)                                    # b in a's frame
    ra, rb = hulls.box[ha, 6], hulls.box[hb, 6]
    reach = ra + rb + margin
    if rel[9] * rel[9] + rel[10] * rel[10] + rel[11] * rel[11] > reach * reach:
        return
    size = ra + rb
    n, dist = gjk(hulls, ha, 0.0, hb, 0.0, wk, TOUCH * size)
    if dist > 0.0 and dist >= margin:
        return
    e_a0 = e_a1 = e_b0 = e_b1 = -1
    _invert(rel, wk.inv)                                      # a in b's frame
    fa = fb = -1
    s_a = s_b = -math.inf
    found = math.inf                    # the `low` the faces were found with (none yet)
    settled = False                     # the face rule settled with EPA stopped early
    ref, face_sep = 0, 0.0
    if dist > 0.0:
        px, py, pz, qx, qy, qz = witness(wk, n)
        nx, ny, nz = (qx - px) / dist, (qy - py) / dist, (qz - pz) / dist
        s_best = dist
        rows = n
    else:
        tol = EPA_TOL * size
        face, depth = -1, 0.0
        if epa_start(hulls, ha, 0.0, hb, 0.0, wk, n, tol):
            outcome, face, nx, ny, nz, depth, nv, nf, left, high = epa_grow(
                hulls, ha, 0.0, hb, 0.0, wk, np.int64(4), np.int64(4), np.int64(EPA_ITERATIONS), tol, math.inf,
                EPA_PAUSE, math.inf)
            if outcome == EPA_PAUSED:
                # s* ≥ −high: the faces that could win; then EPA only until its lower bound
                # of the depth shows that no edge axis beats the face
                found = _below(_below(-high))
                fa, s_a = _max_face(hulls, ha, hb, rel, found)
                fb, s_b = _max_face(hulls, hb, ha, wk.inv, found)
                if fa >= 0 or fb >= 0:
                    ref, face_sep = _reference(fa, s_a, fb, s_b)
                    reach = -(face_sep + REL_TOL * abs(face_sep) + ABS_TOL)
                    outcome, face, nx, ny, nz, depth, nv, nf, left, high = epa_grow(
                        hulls, ha, 0.0, hb, 0.0, wk, nv, nf, left, tol, reach, 0.0, high)
                    if outcome == EPA_REACHED:
                        # s* ≤ −depth: the faces kept are those the bound from s* keeps
                        sure = _below(_below(-depth))
                        settled = (fa < 0 or s_a >= sure) and (fb < 0 or s_b >= sure)
            if outcome != EPA_DONE and not settled:
                outcome, face, nx, ny, nz, depth, nv, nf, left, high = epa_grow(
                    hulls, ha, 0.0, hb, 0.0, wk, nv, nf, left, tol, math.inf, 0.0, high)
        if not settled:
            if face < 0:
                lt = math.sqrt(rel[9] * rel[9] + rel[10] * rel[10] + rel[11] * rel[11])
                if lt == 0.0:
                    return
                nx, ny, nz, s_best = rel[9] / lt, rel[10] / lt, rel[11] / lt, 0.0
                rows = 0
            else:
                s_best = -depth
                rows = 3
                for k in range(3):
                    wk.sid[k, 0] = wk.eid[wk.ef[face, k], 0]
                    wk.sid[k, 1] = wk.eid[wk.ef[face, k], 1]
    if not settled:
        # the simplex's vertex ids: two on each hull make an edge pair
        if rows >= 2:
            e_a0, e_a1 = _two(wk.sid, rows, np.int64(0))
            e_b0, e_b1 = _two(wk.sid, rows, np.int64(1))
        # face axes: the faces of a and of b that the other hull stands farthest above, among
        # those that could win against s* under the face rule (then their values are exact);
        # found with a lower cut already, those still above this one are the same
        low = _below(_below(s_best))
        if found <= low:
            if s_a < low:
                fa, s_a = -1, -math.inf
            if s_b < low:
                fb, s_b = -1, -math.inf
        else:
            fa, s_a = _max_face(hulls, ha, hb, rel, low)
            fb, s_b = _max_face(hulls, hb, ha, wk.inv, low)
        edge = e_a0 >= 0 and e_b0 >= 0
        if fa < 0 and fb < 0:
            if edge:
                _edge_pair(wk, e_a0, e_a1, e_b0, e_b1)
                _edge_contact(a, b, hulls, wk, ha, hb, nx, ny, nz, margin, ci, cf, count)
                return
            fa = _best_face(hulls, ha, nx, ny, nz)                # round-off: a's face along n
            s_a = _face_separation(hulls, fa, hb, rel)
        ref, face_sep = _reference(fa, s_a, fb, s_b)
        if edge and s_best > face_sep + REL_TOL * abs(face_sep) + ABS_TOL:
            _edge_pair(wk, e_a0, e_a1, e_b0, e_b1)
            _edge_contact(a, b, hulls, wk, ha, hb, nx, ny, nz, margin, ci, cf, count)
            return
    if face_sep >= margin:
        return
    if ref == 0:
        _face_contact(a, b, np.int64(0), ha, fa, hb, work, margin, hulls, ci, cf, count)
    else:
        _face_contact(a, b, np.int64(1), hb, fb, ha, work, margin, hulls, ci, cf, count)


@helper(**JIT_NO_REFS)
def _reference(fa, s_a, fb, s_b):
    """(ref, separation): the reference face's hull (0: a, 1: b) by the face rule, a's
    face kept unless b's separates by more; one of fa, fb ≥ 0."""
    if fa < 0 or (fb >= 0 and s_b > s_a + REL_TOL * abs(s_a) + ABS_TOL):
        return 1, s_b
    return 0, s_a


@helper(**JIT_NO_REFS)
def _below(s):
    """The least separation a face may have and still be kept against an axis separating
    by s (the face rule: face + REL_TOL·|face| + ABS_TOL ≥ s)."""
    x = s - ABS_TOL
    return x / (1.0 - REL_TOL) if x < 0.0 else x / (1.0 + REL_TOL)


@helper(**JIT_NO_REFS)
def _max_face(hulls, h, o, rel, low):
    """(face, separation): the face of hull h whose plane hull o (placed by rel in h's
    frame) stands farthest above, among the faces it stands at least `low` above; (−1,
    −inf) if none. A face is dropped at the first vertex of o lower than `low`; the last
    such vertex (kept in h's frame) is tried first on the next face, which most faces
    fail: one plane test per face in the end."""
    plane, vert, hull = hulls.plane, hulls.vert, hulls.hull
    f0, nf, v0, nv = hull[h, 2], hull[h, 3], hull[o, 0], hull[o, 1]
    best, bf = -math.inf, -1
    cx = cy = cz = math.nan                    # the cut vertex in h's frame (none yet)
    for f in range(f0, f0 + nf):
        nx, ny, nz, d = plane[f, 0], plane[f, 1], plane[f, 2], plane[f, 3]
        if nx * cx + ny * cy + nz * cz - d < low:
            continue
        lx = rel[0] * nx + rel[3] * ny + rel[6] * nz      # n in o's frame: heights (Rᵀ n)·v + n·t − d
        ly = rel[1] * nx + rel[4] * ny + rel[7] * nz
        lz = rel[2] * nx + rel[5] * ny + rel[8] * nz
        base = nx * rel[9] + ny * rel[10] + nz * rel[11] - d
        lowest = math.inf
        for v in range(v0, v0 + nv):
            hgt = lx * vert[v, 0] + ly * vert[v, 1] + lz * vert[v, 2] + base
            if hgt < lowest:
                lowest = hgt
                if hgt < low:
                    x, y, z = vert[v, 0], vert[v, 1], vert[v, 2]
                    cx = rel[0] * x + rel[1] * y + rel[2] * z + rel[9]
                    cy = rel[3] * x + rel[4] * y + rel[5] * z + rel[10]
                    cz = rel[6] * x + rel[7] * y + rel[8] * z + rel[11]
                    break
        if lowest >= low and lowest > best:
            best, bf = lowest, f
    return bf, best


@helper(**JIT_NO_REFS)
def _edge_pair(wk, i0, i1, j0, j1):
    wk.sid[0, 0], wk.sid[0, 1], wk.sid[1, 0], wk.sid[1, 1] = i0, j0, i1, j1


@helper(**JIT_NO_REFS)
def _two(sid, rows, side):
    """The two distinct vertex ids on one side of the simplex's rows, or (−1, −1) when that
    side has one or more than two."""
    u = sid[0, side]
    v = -1
    for k in range(1, rows):
        x = sid[k, side]
        if x == u or x == v:
            continue
        if v < 0:
            v = x
        else:
            return -1, -1
    if v < 0:
        return -1, -1
    return (u, v) if u < v else (v, u)


@helper(**JIT_NO_REFS)
def _edge_contact(a, b, hulls, wk, ha, hb, nx, ny, nz, margin, ci, cf, count):
    """One point: the closest points of a's edge i0 i1 and b's edge j0 j1 (world; wk.sid
    holds (i0, j0), (i1, j1)), the axis their cross product turned along n (a's frame),
    depth −(separation along it)."""
    vert, F = hulls.vert, wk.frames
    i0, j0, i1, j1 = wk.sid[0, 0], wk.sid[0, 1], wk.sid[1, 0], wk.sid[1, 1]
    a0x, a0y, a0z = to_world(F, np.int64(0), vert[i0, 0], vert[i0, 1], vert[i0, 2])
    a1x, a1y, a1z = to_world(F, np.int64(0), vert[i1, 0], vert[i1, 1], vert[i1, 2])
    b0x, b0y, b0z = to_world(F, np.int64(1), vert[j0, 0], vert[j0, 1], vert[j0, 2])
    b1x, b1y, b1z = to_world(F, np.int64(1), vert[j1, 0], vert[j1, 1], vert[j1, 2])
    ux, uy, uz = a1x - a0x, a1y - a0y, a1z - a0z
    vx, vy, vz = b1x - b0x, b1y - b0y, b1z - b0z
    lx, ly, lz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    ln = math.sqrt(lx * lx + ly * ly + lz * lz)
    wnx, wny, wnz = turn(F, np.int64(0), nx, ny, nz)
    if ln < 1e-12 * math.sqrt((ux * ux + uy * uy + uz * uz) * (vx * vx + vy * vy + vz * vz)):
        lx, ly, lz = wnx, wny, wnz                              # parallel edges: keep n
    else:
        lx, ly, lz = lx / ln, ly / ln, lz / ln
        if lx * wnx + ly * wny + lz * wnz < 0.0:
            lx, ly, lz = -lx, -ly, -lz
    sep = lx * (b0x - a0x) + ly * (b0y - a0y) + lz * (b0z - a0z)
    if sep >= margin:
        return
    # closest points of the segments (Ericson 5.1.9): the point on b's edge
    rx, ry, rz = a0x - b0x, a0y - b0y, a0z - b0z
    A = ux * ux + uy * uy + uz * uz
    E = vx * vx + vy * vy + vz * vz
    f = vx * rx + vy * ry + vz * rz
    c = ux * rx + uy * ry + uz * rz
    bb = ux * vx + uy * vy + uz * vz
    t = segment_closest(A, E, bb, c, f, 1e-30)[1]
    va0, vb0 = hulls.hull[ha, 0], hulls.hull[hb, 0]
    raw = (1 << 50) + (((i0 - va0) * 1024 + (i1 - va0)) * 1024 + (j0 - vb0)) * 1024 + (j1 - vb0)
    emit(ci, cf, count, a, b, b0x + t * vx, b0y + t * vy, b0z + t * vz, lx, ly, lz, -sep, fold_feature(raw))


@helper(**JIT_NO_REFS)
def _face_contact(a, b, ref, hr, fr, hi, work, margin, hulls, ci, cf, count):
    """Reference face fr of hull hr (body a when ref = 0, b when 1); the incident hull hi,
    placed in hr's frame by work.gjk.rel (ref = 0) or .inv (ref = 1). Clipping in hr's
    frame, then the points to the world."""
    F, sp, sf, poly, tags = work.gjk.frames, work.sp, work.sf, work.poly, work.tags
    rel = work.gjk.rel if ref == 0 else work.gjk.inv
    plane, vert, face, fvert = hulls.plane, hulls.vert, hulls.face, hulls.fvert
    Nx, Ny, Nz, Nd = plane[fr, 0], plane[fr, 1], plane[fr, 2], plane[fr, 3]
    # incident face: of the faces around the incident hull's vertex deepest along −N, the
    # one most against N (N in hi's frame: Rᵀ N), so the deepest point is on it
    lx = rel[0] * Nx + rel[3] * Ny + rel[6] * Nz
    ly = rel[1] * Nx + rel[4] * Ny + rel[7] * Nz
    lz = rel[2] * Nx + rel[5] * Ny + rel[8] * Nz
    deep = support(hulls, hi, 0.0, -lx, -ly, -lz)[0]
    fi = _face_around(hulls, hi, deep, -lx, -ly, -lz)
    vi0 = hulls.hull[hi, 0]
    k0, k = face[fi, 0], face[fi, 1]
    for q in range(k):
        v = fvert[k0 + q]
        x, y, z = vert[v, 0], vert[v, 1], vert[v, 2]
        poly[0, q, 0] = rel[0] * x + rel[1] * y + rel[2] * z + rel[9]
        poly[0, q, 1] = rel[3] * x + rel[4] * y + rel[5] * z + rel[10]
        poly[0, q, 2] = rel[6] * x + rel[7] * y + rel[8] * z + rel[11]
        tags[0, q, 0] = v - vi0              # label: the edge starting here
        tags[0, q, 1] = v - vi0              # id: an incident vertex
    cnt, src = k, 0
    r0, rk = face[fr, 0], face[fr, 1]
    for e in range(rk):
        u, w = fvert[r0 + e], fvert[r0 + (e + 1) % rk]
        ex, ey, ez = vert[w, 0] - vert[u, 0], vert[w, 1] - vert[u, 1], vert[w, 2] - vert[u, 2]
        sx, sy, sz = ey * Nz - ez * Ny, ez * Nx - ex * Nz, ex * Ny - ey * Nx      # outward side normal
        so = sx * vert[u, 0] + sy * vert[u, 1] + sz * vert[u, 2]
        slack = SIDE_SLACK * math.sqrt(sx * sx + sy * sy + sz * sz)
        dst = 1 - src
        m = 0
        for q in range(cnt):
            qn = q + 1 if q + 1 < cnt else 0
            dp = sx * poly[src, q, 0] + sy * poly[src, q, 1] + sz * poly[src, q, 2] - so
            dq = sx * poly[src, qn, 0] + sy * poly[src, qn, 1] + sz * poly[src, qn, 2] - so
            p_in, q_in = dp <= slack, dq <= slack
            if p_in != q_in and min(dp, dq) <= 0.0 and m < poly.shape[1]:
                clip_crossing(poly, src, dst, q, qn, m, dp / (dp - dq))
                tags[dst, m, 1] = (1 << 20) + 2048 * tags[src, q, 0] + e
                tags[dst, m, 0] = 1024 + e if p_in else tags[src, q, 0]
                m += 1
            if q_in and m < poly.shape[1]:
                clip_keep(poly, tags, src, dst, qn, m)
                m += 1
        cnt, src = m, dst
        if cnt == 0:
            break
    s = 0 if ref == 0 else 1                                   # F's slot of the reference body
    wnx, wny, wnz = turn(F, s, Nx, Ny, Nz)
    base = ((ref * 2048 + fr - hulls.hull[hr, 2]) * 2048 + fi - hulls.hull[hi, 2]) << 24
    if cnt == 0:
        # the incident face misses the reference face (a deep, skewed overlap): the incident
        # hull's vertex deepest below the reference plane, alone
        v0, nv = hulls.hull[hi, 0], hulls.hull[hi, 1]
        low, best = math.inf, v0
        for v in range(v0, v0 + nv):
            hgt = lx * vert[v, 0] + ly * vert[v, 1] + lz * vert[v, 2]
            if hgt < low:
                low, best = hgt, v
        x, y, z = vert[best, 0], vert[best, 1], vert[best, 2]
        poly[src, 0, 0] = rel[0] * x + rel[1] * y + rel[2] * z + rel[9]
        poly[src, 0, 1] = rel[3] * x + rel[4] * y + rel[5] * z + rel[10]
        poly[src, 0, 2] = rel[6] * x + rel[7] * y + rel[8] * z + rel[11]
        tags[src, 0, 1] = (1 << 23) + best - v0
        cnt = 1
    n_pts = 0
    for q in range(cnt):
        sep = Nx * poly[src, q, 0] + Ny * poly[src, q, 1] + Nz * poly[src, q, 2] - Nd
        if sep >= margin:
            continue
        wx, wy, wz = to_world(F, s, poly[src, q, 0], poly[src, q, 1], poly[src, q, 2])
        if ref == 1:                        # the incident point is on a: its partner on b's face
            wx, wy, wz = wx - sep * wnx, wy - sep * wny, wz - sep * wnz
        n_pts = add_candidate(sp, sf, n_pts, wx, wy, wz, -sep, fold_feature(base + tags[src, q, 1]))
    if ref == 0:
        flush_manifold(sp, sf, n_pts, a, b, wnx, wny, wnz, ci, cf, count)
    else:
        flush_manifold(sp, sf, n_pts, a, b, -wnx, -wny, -wnz, ci, cf, count)
