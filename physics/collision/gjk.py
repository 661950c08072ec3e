"""Distance and penetration of two convex shapes given by their vertices — a hull's
(hulls.py), a segment's two ends (a capsule's core), a point (a sphere's centre) — in the
frame of the first, P; the second, Q, is placed in it by `rel` (R row-major 0:9, t 9:12:
x_P = R x_Q + t). A shape side is (h, hl): hull h of the hull table, or when h < 0 the
segment from (0, 0, −hl) to (0, 0, hl) of its own frame (a point when hl = 0). A hull's
vertex extreme along a direction: a scan of its vertices up to SCAN_VERTICES, beyond that a
hill climb along its edges from the vertex extreme along the centre of the direction's
cell in a cube map (hulls.start_cell), most often one or two steps away: a vertex no
neighbour beats is the maximum, the hull being convex.

`gjk`: the distance between P and Q by GJK (Gilbert, Johnson & Keerthi, "A fast procedure
for computing the distance between complex objects in three-dimensional space", 1988)
on the Minkowski difference P − Q, the simplex's closest point to the origin by its
Voronoi regions (Ericson, Real-Time Collision Detection, 2005, §5.1.5, §9.5.2).

`epa`: when they overlap, the penetration: the Minkowski difference's facet nearest the
origin by the expanding polytope algorithm (van den Bergen, "Proximity queries and
penetration depth computation on 3D game objects", 2001). On polytopes both end exactly
(to round-off): their iterates are vertices of P − Q, and a facet's support adds nothing.

Workspaces (GjkWork): simplex (4,9) float — the point w = p − q, p on P, q on Q (in P's
frame) — and sid (4,2) int64 their vertex ids on P and Q, lam (4,) the closest point's
weights; EPA's polytope: ev (EV,9), eid (EV,2), faces ef (EF,3) int64, planes ep (EF,4),
alive ea (EF,) int64, horizon edges ee (EE,2) int64; rel (12,) Q's pose in P's frame, inv (12,)
its inverse;
frames (2,12) two bodies' world rotations (row-major) and positions, for the callers.
"""
import math
from collections import namedtuple

import numpy as np
from ..jit import helper

from .common import JIT, JIT_NO_REFS
from .hulls import start_cell

GjkWork = namedtuple("GjkWork", "simplex sid lam ev eid ef ep ea ee rel inv frames")
EPA_VERTICES, EPA_FACES, EPA_EDGES = 128, 256, 128
GJK_ITERATIONS, EPA_ITERATIONS = 64, 96
REL_TOL = 1e-12       # GJK stops when |v|² − v·w ≤ REL_TOL |v|² (the distance to ~1e-12 relative)
SCAN_VERTICES = 24    # hulls up to this many vertices are scanned, larger ones climbed


@helper(**JIT)
def gjk_work():
    return GjkWork(np.zeros((4, 9)), np.zeros((4, 2), np.int64), np.zeros(4), np.zeros((EPA_VERTICES, 9)),
                   np.zeros((EPA_VERTICES, 2), np.int64), np.zeros((EPA_FACES, 3), np.int64),
                   np.zeros((EPA_FACES, 4)), np.zeros(EPA_FACES, np.int64), np.zeros((EPA_EDGES, 2), np.int64),
                   np.zeros(12), np.zeros(12), np.zeros((2, 12)))


@helper(**JIT_NO_REFS)
def support(hulls, h, hl, dx, dy, dz):
    """(id, x, y, z): the vertex of a shape side extreme along d, in its own frame."""
    if h >= 0:
        vert = hulls.vert
        v0, nv = hulls.hull[h, 0], hulls.hull[h, 1]
        if nv <= SCAN_VERTICES:
            k = v0
            best = vert[v0, 0] * dx + vert[v0, 1] * dy + vert[v0, 2] * dz
            for i in range(v0 + 1, v0 + nv):
                s = vert[i, 0] * dx + vert[i, 1] * dy + vert[i, 2] * dz
                if s > best:
                    best, k = s, i
            return k, vert[k, 0], vert[k, 1], vert[k, 2]
        k = hulls.hull[h, 5 + start_cell(dx, dy, dz)]
        best = vert[k, 0] * dx + vert[k, 1] * dy + vert[k, 2] * dz
        adj, vadj = hulls.adj, hulls.vadj
        for _ in range(nv):
            here = k
            for a in range(vadj[here, 0], vadj[here, 0] + vadj[here, 1]):
                j = adj[a]
                s = vert[j, 0] * dx + vert[j, 1] * dy + vert[j, 2] * dz
                if s > best:
                    best, k = s, j
            if k == here:
                break
        return k, vert[k, 0], vert[k, 1], vert[k, 2]
    if hl > 0.0 and dz >= 0.0:
        return 1, 0.0, 0.0, hl
    return 0, 0.0, 0.0, -hl


@helper(**JIT_NO_REFS)
def cso_support(hulls, ph, phl, qh, qhl, rel, dx, dy, dz, out, row, ids):
    """The vertex of P − Q extreme along d (P's frame) into out[row] (w, p, q) and ids[row]."""
    i, px, py, pz = support(hulls, ph, phl, dx, dy, dz)
    # −d in Q's frame: Rᵀ(−d)
    ex = -(rel[0] * dx + rel[3] * dy + rel[6] * dz)
    ey = -(rel[1] * dx + rel[4] * dy + rel[7] * dz)
    ez = -(rel[2] * dx + rel[5] * dy + rel[8] * dz)
    j, lx, ly, lz = support(hulls, qh, qhl, ex, ey, ez)
    qx = rel[0] * lx + rel[1] * ly + rel[2] * lz + rel[9]
    qy = rel[3] * lx + rel[4] * ly + rel[5] * lz + rel[10]
    qz = rel[6] * lx + rel[7] * ly + rel[8] * lz + rel[11]
    out[row, 0], out[row, 1], out[row, 2] = px - qx, py - qy, pz - qz
    out[row, 3], out[row, 4], out[row, 5] = px, py, pz
    out[row, 6], out[row, 7], out[row, 8] = qx, qy, qz
    ids[row, 0] = i
    ids[row, 1] = j


@helper(**JIT_NO_REFS)
def _copy_row(src, sid, i, dst, did, j):
    for c in range(9):
        dst[j, c] = src[i, c]
    did[j, 0] = sid[i, 0]
    did[j, 1] = sid[i, 1]


AT_VERTEX, ON_EDGE = 1, 2       # _vertex_side's regions (0: neither)


@helper(**JIT_NO_REFS)
def _vertex_side(S, x, ux, uy, uz, wx, wy, wz, d1, d2):
    """_triangle's tests at a vertex X = S[x] = A + u, the same for B (u = AB, w = AC) and
    for C (u = AC, w = AB; A's dots d1 = −u·A, d2 = −w·A swapped likewise): X's dots
    e1 = −u·X, e2 = −w·X, Ericson's vc (vb at C) = d1 e2 − e1 d2, and where the closest
    point is: AT_VERTEX (X), ON_EDGE (on edge AX: A + v u, v returned) or 0 (neither)."""
    px, py, pz = S[x, 0], S[x, 1], S[x, 2]
    e1 = -(ux * px + uy * py + uz * pz)
    e2 = -(wx * px + wy * py + wz * pz)
    vx = d1 * e2 - e1 * d2
    if e1 >= 0.0 and e2 <= e1:
        return e1, e2, vx, AT_VERTEX, 0.0
    if vx <= 0.0 and d1 >= 0.0 and e1 <= 0.0:
        return e1, e2, vx, ON_EDGE, d1 / (d1 - e1)
    return e1, e2, vx, 0, 0.0


@helper(**JIT_NO_REFS)
def _triangle(S, i, j, k):
    """Closest point to the origin of triangle S[i] S[j] S[k] (Ericson's
    ClosestPtPointTriangle): (vx, vy, vz, λi, λj, λk), zero weights for dropped vertices."""
    ax, ay, az = S[i, 0], S[i, 1], S[i, 2]
    abx, aby, abz = S[j, 0] - ax, S[j, 1] - ay, S[j, 2] - az
    acx, acy, acz = S[k, 0] - ax, S[k, 1] - ay, S[k, 2] - az
    d1 = -(abx * ax + aby * ay + abz * az)
    d2 = -(acx * ax + acy * ay + acz * az)
    if d1 <= 0.0 and d2 <= 0.0:
        return ax, ay, az, 1.0, 0.0, 0.0
    d3, d4, vc, region, v = _vertex_side(S, j, abx, aby, abz, acx, acy, acz, d1, d2)
    if region == AT_VERTEX:
        return S[j, 0], S[j, 1], S[j, 2], 0.0, 1.0, 0.0
    if region == ON_EDGE:
        return ax + v * abx, ay + v * aby, az + v * abz, 1.0 - v, v, 0.0
    d6, d5, vb, region, w = _vertex_side(S, k, acx, acy, acz, abx, aby, abz, d2, d1)
    if region == AT_VERTEX:
        return S[k, 0], S[k, 1], S[k, 2], 0.0, 0.0, 1.0
    if region == ON_EDGE:
        return ax + w * acx, ay + w * acy, az + w * acz, 1.0 - w, 0.0, w
    bx, by, bz = S[j, 0], S[j, 1], S[j, 2]
    cx, cy, cz = S[k, 0], S[k, 1], S[k, 2]
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return bx + w * (cx - bx), by + w * (cy - by), bz + w * (cz - bz), 0.0, 1.0 - w, w
    den = va + vb + vc
    if den <= 0.0:                      # a degenerate (zero-area) triangle: its best edge
        return ax, ay, az, 1.0, 0.0, 0.0
    v, w = vb / den, vc / den
    return ax + v * abx + w * acx, ay + v * aby + w * acy, az + v * abz + w * acz, 1.0 - v - w, v, w


@helper(**JIT_NO_REFS)
def _closest(S, sid, lam, n):
    """The simplex S[:n]'s closest point to the origin: (n kept, vx, vy, vz), the simplex
    reduced to the vertices with positive weight (in lam); n kept = 4 and v = 0 when the
    origin lies inside the tetrahedron."""
    for i in range(4):
        lam[i] = 0.0
    if n == 1:
        lam[0] = 1.0
        return 1, S[0, 0], S[0, 1], S[0, 2]
    if n == 2:
        ax, ay, az = S[0, 0], S[0, 1], S[0, 2]
        dx, dy, dz = S[1, 0] - ax, S[1, 1] - ay, S[1, 2] - az
        dd = dx * dx + dy * dy + dz * dz
        t = -(ax * dx + ay * dy + az * dz) / dd if dd > 0.0 else 0.0
        if t <= 0.0:
            lam[0] = 1.0
        elif t >= 1.0:
            lam[1] = 1.0
        else:
            lam[0], lam[1] = 1.0 - t, t
        vx, vy, vz = ax + lam[1] * dx, ay + lam[1] * dy, az + lam[1] * dz
    elif n == 3:
        vx, vy, vz, lam[0], lam[1], lam[2] = _triangle(S, np.int64(0), np.int64(1), np.int64(2))
    else:
        # each face whose plane has the origin on the far side from the fourth vertex
        best = math.inf
        vx = vy = vz = 0.0
        inside = True
        for f in range(4):
            i, j, k = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
            abx, aby, abz = S[j, 0] - S[i, 0], S[j, 1] - S[i, 1], S[j, 2] - S[i, 2]
            acx, acy, acz = S[k, 0] - S[i, 0], S[k, 1] - S[i, 1], S[k, 2] - S[i, 2]
            nx, ny, nz = aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx
            so = -(nx * S[i, 0] + ny * S[i, 1] + nz * S[i, 2])
            sd = nx * (S[f, 0] - S[i, 0]) + ny * (S[f, 1] - S[i, 1]) + nz * (S[f, 2] - S[i, 2])
            if so * sd > 0.0:
                continue
            inside = False
            tx, ty, tz, li, lj, lk = _triangle(S, i, j, k)
            d2 = tx * tx + ty * ty + tz * tz
            if d2 < best:
                best = d2
                vx, vy, vz = tx, ty, tz
                lam[f] = 0.0
                lam[i], lam[j], lam[k] = li, lj, lk
        if inside:
            for i in range(4):
                lam[i] = 0.25
            return 4, 0.0, 0.0, 0.0
    m = 0
    for i in range(n):
        if lam[i] > 0.0:
            if m != i:
                _copy_row(S, sid, i, S, sid, m)
                lam[m] = lam[i]
            m += 1
    for i in range(m, 4):
        lam[i] = 0.0
    return m, vx, vy, vz


@helper(**JIT_NO_REFS)
def gjk(hulls, ph, phl, qh, qhl, wk, tol):
    """Distance between P and Q (wk.rel places Q): (n, dist) with the simplex's n points and
    their weights in wk (closest points p = Σ λ p_i on P, q = Σ λ q_i on Q, P's frame).
    dist = 0 when they overlap or are within `tol` (m) of touching: then epa."""
    S, sid, lam, rel = wk.simplex, wk.sid, wk.lam, wk.rel
    dx, dy, dz = -rel[9], -rel[10], -rel[11]             # from Q's origin towards P's
    if dx * dx + dy * dy + dz * dz == 0.0:
        dx = 1.0
    cso_support(hulls, ph, phl, qh, qhl, rel, dx, dy, dz, S, np.int64(0), sid)
    n = 1
    lam[0] = 1.0
    vx, vy, vz = S[0, 0], S[0, 1], S[0, 2]
    for _ in range(GJK_ITERATIONS):
        vv = vx * vx + vy * vy + vz * vz
        if vv <= tol * tol:
            return n, 0.0
        cso_support(hulls, ph, phl, qh, qhl, rel, -vx, -vy, -vz, S, n, sid)
        vw = vx * S[n, 0] + vy * S[n, 1] + vz * S[n, 2]
        if vv - vw <= REL_TOL * vv:
            return n, math.sqrt(vv)
        repeat = False
        for i in range(n):
            if sid[i, 0] == sid[n, 0] and sid[i, 1] == sid[n, 1]:
                repeat = True
        if repeat:
            return n, math.sqrt(vv)
        n, wx, wy, wz = _closest(S, sid, lam, n + 1)
        if n == 4:
            return 4, 0.0
        if wx * wx + wy * wy + wz * wz >= vv:          # no progress (round-off): v is the answer
            vx, vy, vz = wx, wy, wz
            return n, math.sqrt(vv)
        vx, vy, vz = wx, wy, wz
    return n, math.sqrt(vx * vx + vy * vy + vz * vz)


@helper(**JIT_NO_REFS)
def witness(wk, n):
    """The closest points (p on P, q on Q, P's frame) of the simplex's weights."""
    S, lam = wk.simplex, wk.lam
    px = py = pz = qx = qy = qz = 0.0
    for i in range(n):
        px += lam[i] * S[i, 3]
        py += lam[i] * S[i, 4]
        pz += lam[i] * S[i, 5]
        qx += lam[i] * S[i, 6]
        qy += lam[i] * S[i, 7]
        qz += lam[i] * S[i, 8]
    return px, py, pz, qx, qy, qz


@helper(**JIT_NO_REFS)
def _plane_normal(V, i, j, k):
    """The unit normal of triangle V[i] V[j] V[k], (V[j] − V[i]) × (V[k] − V[i]) normalized,
    and that cross product's length ln (0: a degenerate triangle, the normal left 0)."""
    abx, aby, abz = V[j, 0] - V[i, 0], V[j, 1] - V[i, 1], V[j, 2] - V[i, 2]
    acx, acy, acz = V[k, 0] - V[i, 0], V[k, 1] - V[i, 1], V[k, 2] - V[i, 2]
    nx, ny, nz = aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx
    ln = math.sqrt(nx * nx + ny * ny + nz * nz)
    if ln > 0.0:
        nx, ny, nz = nx / ln, ny / ln, nz / ln
    return nx, ny, nz, ln


@helper(**JIT_NO_REFS)
def _add_face(wk, nf, i, j, k):
    """Face (i, j, k) of the polytope, counter-clockwise from outside: its plane; returns
    the new face count, or −1 when the faces are full."""
    if nf >= wk.ef.shape[0]:
        return -1
    V = wk.ev
    nx, ny, nz, ln = _plane_normal(V, i, j, k)
    wk.ef[nf, 0], wk.ef[nf, 1], wk.ef[nf, 2] = i, j, k
    wk.ep[nf, 0], wk.ep[nf, 1], wk.ep[nf, 2] = nx, ny, nz
    wk.ep[nf, 3] = nx * V[i, 0] + ny * V[i, 1] + nz * V[i, 2]
    wk.ea[nf] = 1 if ln > 0.0 else 0
    return nf + 1


@helper(**JIT_NO_REFS)
def _far_from(V, m, dx, dy, dz, tol):
    """Whether the new point V[m] is more than tol from V[0] along direction d (unit)."""
    return abs((V[m, 0] - V[0, 0]) * dx + (V[m, 1] - V[0, 1]) * dy + (V[m, 2] - V[0, 2]) * dz) > tol


@helper(**JIT_NO_REFS)
def _tetrahedron(hulls, ph, phl, qh, qhl, wk, n, tol):
    """Grow GJK's final simplex (n points, the origin on it) into a tetrahedron of P − Q
    vertices containing the origin; returns False when P − Q is too thin to have one."""
    V, vid, rel = wk.ev, wk.eid, wk.rel
    for i in range(n):
        _copy_row(wk.simplex, wk.sid, i, V, vid, i)
    if n == 1:
        for axis in range(6):
            d = 1.0 if axis < 3 else -1.0
            cso_support(hulls, ph, phl, qh, qhl, rel, d if axis % 3 == 0 else 0.0,
                        d if axis % 3 == 1 else 0.0, d if axis % 3 == 2 else 0.0, V, np.int64(1), vid)
            if _far_from(V, np.int64(1), d if axis % 3 == 0 else 0.0, d if axis % 3 == 1 else 0.0,
                         d if axis % 3 == 2 else 0.0, tol):
                n = 2
                break
        if n < 2:
            return False
    if n == 2:
        ex, ey, ez = V[1, 0] - V[0, 0], V[1, 1] - V[0, 1], V[1, 2] - V[0, 2]
        le = math.sqrt(ex * ex + ey * ey + ez * ez)
        ex, ey, ez = ex / le, ey / le, ez / le
        # two directions perpendicular to the segment
        if abs(ex) < 0.57735:
            ux, uy, uz = 0.0, ez, -ey
        else:
            ux, uy, uz = -ez, 0.0, ex
        lu = math.sqrt(ux * ux + uy * uy + uz * uz)
        ux, uy, uz = ux / lu, uy / lu, uz / lu
        vx, vy, vz = ey * uz - ez * uy, ez * ux - ex * uz, ex * uy - ey * ux
        for k in range(4):
            s = 1.0 if k % 2 == 0 else -1.0
            dx, dy, dz = (s * ux, s * uy, s * uz) if k < 2 else (s * vx, s * vy, s * vz)
            cso_support(hulls, ph, phl, qh, qhl, rel, dx, dy, dz, V, np.int64(2), vid)
            if _far_from(V, np.int64(2), dx, dy, dz, tol):
                n = 3
                break
        if n < 3:
            return False
    if n == 3:
        nx, ny, nz, ln = _plane_normal(V, 0, 1, 2)
        if ln == 0.0:
            return False
        for k in range(2):
            s = 1.0 if k == 0 else -1.0
            cso_support(hulls, ph, phl, qh, qhl, rel, s * nx, s * ny, s * nz, V, np.int64(3), vid)
            if _far_from(V, np.int64(3), nx, ny, nz, tol):
                n = 4
                break
        if n < 4:
            return False
    return True


@helper(**JIT_NO_REFS)
def epa(hulls, ph, phl, qh, qhl, wk, n, tol):
    """Penetration of overlapping P and Q from GJK's final simplex (n points): the facet
    of P − Q nearest the origin, (face, nx, ny, nz, depth) — its unit outward normal n
    (P's frame; the direction to move Q out of P) and distance (m); wk.ev[wk.ef[face]] its
    corners. face = −1 when P − Q is degenerate (then depth 0 along the centres' line)."""
    if not epa_start(hulls, ph, phl, qh, qhl, wk, n, tol):
        return -1, 0.0, 0.0, 0.0, 0.0
    r = epa_grow(hulls, ph, phl, qh, qhl, wk, np.int64(4), np.int64(4), np.int64(EPA_ITERATIONS), tol, math.inf,
                 0.0, math.inf)
    return r[1], r[2], r[3], r[4], r[5]


@helper(**JIT_NO_REFS)
def epa_start(hulls, ph, phl, qh, qhl, wk, n, tol):
    """EPA's first polytope: GJK's final simplex (n points) grown into a tetrahedron (4
    vertices, 4 faces, counter-clockwise from outside); False when P − Q is degenerate."""
    V, vid = wk.ev, wk.eid
    if not _tetrahedron(hulls, ph, phl, qh, qhl, wk, n, tol):
        return False
    # orient the tetrahedron: faces counter-clockwise seen from outside
    abx, aby, abz = V[1, 0] - V[0, 0], V[1, 1] - V[0, 1], V[1, 2] - V[0, 2]
    acx, acy, acz = V[2, 0] - V[0, 0], V[2, 1] - V[0, 1], V[2, 2] - V[0, 2]
    adx, ady, adz = V[3, 0] - V[0, 0], V[3, 1] - V[0, 1], V[3, 2] - V[0, 2]
    det = adx * (aby * acz - abz * acy) + ady * (abz * acx - abx * acz) + adz * (abx * acy - aby * acx)
    if det > 0.0:                      # D above the plane A B C (counter-clockwise): swap B and C
        for c in range(9):
            V[1, c], V[2, c] = V[2, c], V[1, c]
        vid[1, 0], vid[2, 0] = vid[2, 0], vid[1, 0]
        vid[1, 1], vid[2, 1] = vid[2, 1], vid[1, 1]
    nf = _add_face(wk, np.int64(0), np.int64(0), np.int64(1), np.int64(2))
    nf = _add_face(wk, nf, np.int64(0), np.int64(3), np.int64(1))
    nf = _add_face(wk, nf, np.int64(0), np.int64(2), np.int64(3))
    nf = _add_face(wk, nf, np.int64(1), np.int64(3), np.int64(2))
    return True


EPA_DONE, EPA_REACHED, EPA_PAUSED = 0, 1, 2     # epa_grow's outcomes


@helper(**JIT_NO_REFS)
def epa_grow(hulls, ph, phl, qh, qhl, wk, nv, nf, left, tol, reach, pause, high):
    """EPA's iterations on the polytope of nv vertices and nf faces (epa_start's, or a
    paused run's), at most `left` more: (outcome, face, nx, ny, nz, dist, nv, nf, left,
    high). EPA_DONE: epa's answer. The nearest facet's distance dist (origin inside: dist
    > 0) is a lower bound of the depth, and `high`, the least support along a facet normal
    so far, an upper bound: EPA_REACHED stops once dist ≥ reach, EPA_PAUSED once high ≤
    pause·dist, each before that iteration's support; a call with the returned state goes
    on as if never stopped."""
    V, vid, ef, ep, ea = wk.ev, wk.eid, wk.ef, wk.ep, wk.ea
    best = 0
    while left > 0:
        best = -1
        dist = math.inf
        for f in range(nf):
            if ea[f] != 0 and ep[f, 3] < dist:
                dist, best = ep[f, 3], f
        if best < 0:
            return EPA_DONE, -1, 0.0, 0.0, 0.0, 0.0, nv, nf, left, high
        nx, ny, nz = ep[best, 0], ep[best, 1], ep[best, 2]
        if dist > 0.0:
            if dist >= reach:
                return EPA_REACHED, best, nx, ny, nz, dist, nv, nf, left, high
            if high <= pause * dist:
                return EPA_PAUSED, best, nx, ny, nz, dist, nv, nf, left, high
        left -= 1
        if nv >= V.shape[0]:
            break
        cso_support(hulls, ph, phl, qh, qhl, wk.rel, nx, ny, nz, V, nv, vid)
        gain = nx * V[nv, 0] + ny * V[nv, 1] + nz * V[nv, 2] - dist
        high = min(high, dist + gain)
        if gain <= tol:
            break
        repeat = False
        for i in range(nv):
            if vid[i, 0] == vid[nv, 0] and vid[i, 1] == vid[nv, 1]:
                repeat = True
        if repeat:
            break
        # remove the faces the new point sees; the horizon: their edges not shared by two of them
        ne = 0
        for f in range(nf):
            if ea[f] == 0:
                continue
            if (ep[f, 0] * V[nv, 0] + ep[f, 1] * V[nv, 1] + ep[f, 2] * V[nv, 2] - ep[f, 3]) > 1e-3 * tol:
                ea[f] = 0
                for e in range(3):
                    u, v = ef[f, e], ef[f, (e + 1) % 3]
                    shared = -1
                    for h in range(ne):
                        if wk.ee[h, 0] == v and wk.ee[h, 1] == u:
                            shared = h
                    if shared >= 0:            # seen from both sides: not on the horizon
                        ne -= 1
                        wk.ee[shared, 0], wk.ee[shared, 1] = wk.ee[ne, 0], wk.ee[ne, 1]
                    elif ne < wk.ee.shape[0]:
                        wk.ee[ne, 0], wk.ee[ne, 1] = u, v
                        ne += 1
                    else:
                        return EPA_DONE, best, nx, ny, nz, dist, nv, nf, left, high
        for h in range(ne):
            nf = _add_face(wk, nf, wk.ee[h, 0], wk.ee[h, 1], nv)
            if nf < 0:
                return EPA_DONE, best, nx, ny, nz, dist, nv, nf, left, high
        nv += 1
    return EPA_DONE, best, ep[best, 0], ep[best, 1], ep[best, 2], ep[best, 3], nv, nf, left, high


@helper(**JIT_NO_REFS)
def epa_witness(wk, face, depth):
    """The points on P and on Q (P's frame) behind the origin's projection on EPA's facet:
    its barycentric weights applied to the corners' p and q."""
    V, ef = wk.ev, wk.ef
    i, j, k = ef[face, 0], ef[face, 1], ef[face, 2]
    nx, ny, nz = wk.ep[face, 0], wk.ep[face, 1], wk.ep[face, 2]
    ox, oy, oz = depth * nx, depth * ny, depth * nz
    # barycentric weights of o in triangle i j k (by the sub-triangles' areas along n)
    ax, ay, az = V[i, 0] - ox, V[i, 1] - oy, V[i, 2] - oz
    bx, by, bz = V[j, 0] - ox, V[j, 1] - oy, V[j, 2] - oz
    cx, cy, cz = V[k, 0] - ox, V[k, 1] - oy, V[k, 2] - oz
    wa = nx * (by * cz - bz * cy) + ny * (bz * cx - bx * cz) + nz * (bx * cy - by * cx)
    wb = nx * (cy * az - cz * ay) + ny * (cz * ax - cx * az) + nz * (cx * ay - cy * ax)
    wc = nx * (ay * bz - az * by) + ny * (az * bx - ax * bz) + nz * (ax * by - ay * bx)
    s = wa + wb + wc
    if s <= 0.0:
        wa, wb, wc, s = 1.0, 0.0, 0.0, 1.0
    wa, wb, wc = wa / s, wb / s, wc / s
    px = wa * V[i, 3] + wb * V[j, 3] + wc * V[k, 3]
    py = wa * V[i, 4] + wb * V[j, 4] + wc * V[k, 4]
    pz = wa * V[i, 5] + wb * V[j, 5] + wc * V[k, 5]
    qx = wa * V[i, 6] + wb * V[j, 6] + wc * V[k, 6]
    qy = wa * V[i, 7] + wb * V[j, 7] + wc * V[k, 7]
    qz = wa * V[i, 8] + wb * V[j, 8] + wc * V[k, 8]
    return px, py, pz, qx, qy, qz
