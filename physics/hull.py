"""Convex hulls of point clouds, and the exact mass properties of solid polyhedra.

`convex_hull(points, tol, max_vertices)` is quickhull (Barber, Dobkin & Huhdanpaa, "The
Quickhull Algorithm for Convex Hulls", 1996) in numpy: a tetrahedron of extreme points,
then, while a face has points more than `tol` outside it, the farthest one is added —
the faces it sees are removed and the horizon joined to it. Points within `tol` of the
hull are taken as on it. Adjacent coplanar triangles are then merged into polygons and
vertices left on a straight polygon edge are dropped, so a box comes out as 8 vertices and
6 quads whatever points it was given.

`mass_properties(vertices, triangles)`: volume, centre of mass and inertia tensor of the
solid of unit density, by the divergence theorem as a sum over tetrahedra (a reference
point and each outward triangle): ∫_T x xᵀ dV = V/20 (Σᵢ xᵢxᵢᵀ + (Σᵢ xᵢ)(Σᵢ xᵢ)ᵀ) over
the tetrahedron's four vertices (Tonon, "Explicit exact formulas for the 3-D tetrahedron
inertia tensor in terms of its vertex coordinates", 2004).
"""
import math

import numpy as np


class HullError(ValueError):
    """The points do not span a solid (too few, collinear, flat) or make too many vertices."""


def _cross(u, v):
    """u × v of two 3-vectors, on Python floats (np.cross costs ~20× more on one pair)."""
    (u0, u1, u2), (v0, v1, v2) = u, v
    return u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0


def _plane(P, a, b, c):
    pa = P[a].tolist()
    pb, pc = P[b].tolist(), P[c].tolist()
    n = _cross([pb[i] - pa[i] for i in range(3)], [pc[i] - pa[i] for i in range(3)])
    ln = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    n = np.array(n) / ln if ln > 0.0 else np.array(n)
    return n, float(n @ P[a])


def _initial_simplex(P, tol):
    """Four points spanning the largest tetrahedron found greedily, or HullError."""
    ext = np.concatenate([np.argmin(P, axis=0), np.argmax(P, axis=0)])
    best, i0, i1 = -1.0, 0, 0
    for s in range(6):
        for t in range(s + 1, 6):
            d = float(np.sum((P[ext[s]] - P[ext[t]]) ** 2))
            if d > best:
                best, i0, i1 = d, ext[s], ext[t]
    u = P[i1] - P[i0]
    line = np.linalg.norm(np.cross(P - P[i0], u), axis=1) / max(np.linalg.norm(u), 1e-300)
    i2 = int(np.argmax(line))
    if line[i2] <= tol:
        raise HullError(f"the points are collinear (all within {line[i2]:.3g} m of a line)")
    n = np.cross(u, P[i2] - P[i0])
    n /= np.linalg.norm(n)
    off = (P - P[i0]) @ n
    i3 = int(np.argmax(np.abs(off)))
    return int(i0), int(i1), int(i2), i3, abs(float(off[i3]))


def convex_hull(points, tol, max_vertices, min_thickness=0.0):
    """Hull of points (n,3): (vertices (V,3), faces: list of int arrays indexing vertices,
    each a polygon counter-clockwise seen from outside). HullError when the points are
    collinear or flatter than max(tol, min_thickness), or the hull has more than
    max_vertices vertices."""
    P = np.asarray(points, dtype=np.float64)
    i0, i1, i2, i3, thick = _initial_simplex(P, tol)
    if thick <= max(tol, min_thickness):
        raise HullError(f"the points are flat (all within {thick:.3g} m of a plane)")
    inner = (P[i0] + P[i1] + P[i2] + P[i3]) / 4.0
    faces = {}                  # id -> [a, b, c, normal, offset, outside point indices]
    edges = {}                  # directed edge (u, v) of a face, counter-clockwise -> face id
    next_id = [0]

    def add_face(a, b, c):
        n, d = _plane(P, a, b, c)
        if n @ inner - d > 0.0:
            b, c = c, b
            n, d = -n, -d
        f = next_id[0]
        next_id[0] += 1
        faces[f] = [a, b, c, n, d, None]
        edges[(a, b)], edges[(b, c)], edges[(c, a)] = f, f, f
        return f

    def assign(cand, new):
        """Give each candidate point to the new face it is farthest outside (if > tol)."""
        for f in new:
            faces[f][5] = np.zeros(0, np.int64)
        if len(cand) == 0:
            return
        N = np.array([faces[f][3] for f in new])
        D = np.array([faces[f][4] for f in new])
        dist = P[cand] @ N.T - D
        k = np.argmax(dist, axis=1)
        out = dist[np.arange(len(cand)), k] > tol
        cand, k = cand[out], k[out]
        for j, f in enumerate(new):
            faces[f][5] = cand[k == j]

    first = [add_face(i0, i1, i2), add_face(i0, i1, i3), add_face(i0, i2, i3), add_face(i1, i2, i3)]
    rest = np.setdiff1d(np.arange(len(P)), [i0, i1, i2, i3])
    assign(rest, first)
    on_hull = {i0, i1, i2, i3}
    pending = [f for f in first if len(faces[f][5])]
    while pending:
        f = pending.pop()
        if f not in faces or len(faces[f][5]) == 0:
            continue
        out = faces[f][5]
        p = int(out[np.argmax(P[out] @ faces[f][3] - faces[f][4])])
        eye = P[p]
        visible, horizon, stack = {f}, [], [f]
        while stack:                    # the faces the point sees, and their horizon edges
            g = stack.pop()
            a, b, c = faces[g][:3]
            for u, v in ((a, b), (b, c), (c, a)):
                h = edges[(v, u)]
                if h in visible:
                    continue
                if faces[h][3] @ eye - faces[h][4] > tol:
                    visible.add(h)
                    stack.append(h)
                else:
                    horizon.append((u, v))
        cand = [faces[g][5] for g in visible]
        for g in visible:
            a, b, c = faces[g][:3]
            for e in ((a, b), (b, c), (c, a)):
                if edges.get(e) == g:
                    del edges[e]
            del faces[g]
        new = [add_face(u, v, p) for u, v in horizon]
        on_hull.add(p)
        if len(on_hull) > 4 * max_vertices:        # far beyond: stop early (the count is checked below)
            raise HullError(f"the hull has more than {max_vertices} vertices")
        cand = np.concatenate(cand)
        assign(cand[cand != p], new)
        pending.extend(g for g in new if len(faces[g][5]))
    return _polygons(P, [tuple(v[:3]) for v in faces.values()], tol, max_vertices)


def _polygons(P, tris, tol, max_vertices):
    """Merge coplanar neighbouring triangles into polygons, drop vertices on straight polygon
    edges or inside polygons, renumber: (vertices (V,3), faces list of int arrays)."""
    T = np.array(tris, np.int64)
    n = np.cross(P[T[:, 1]] - P[T[:, 0]], P[T[:, 2]] - P[T[:, 0]])
    area = np.linalg.norm(n, axis=1)
    n /= area[:, None]
    d = np.einsum("ij,ij->i", n, P[T[:, 0]])
    owner = {}
    for t, (a, b, c) in enumerate(T):
        owner[(a, b)], owner[(b, c)], owner[(c, a)] = t, t, t
    parent = list(range(len(T)))

    def root(t):
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for t, tri in enumerate(T):
        for k in range(3):
            u, v = tri[k], tri[(k + 1) % 3]
            s = owner[(v, u)]
            if s <= t:
                continue
            far_s = [w for w in T[s] if w != u and w != v][0]
            far_t = tri[(k + 2) % 3]
            if (n[t] @ n[s] > 0.99 and abs(n[t] @ P[far_s] - d[t]) <= tol
                    and abs(n[s] @ P[far_t] - d[s]) <= tol):
                parent[root(s)] = root(t)
    groups = {}
    for t in range(len(T)):
        groups.setdefault(root(t), []).append(t)
    loops = []
    for members in groups.values():
        inside = {(T[t][k], T[t][(k + 1) % 3]) for t in members for k in range(3)}
        nxt = {u: v for u, v in inside if (v, u) not in inside}
        start = next(iter(nxt))
        loop, u = [start], nxt[start]
        while u != start:
            loop.append(u)
            u = nxt[u]
        normal = (n[members] * area[members, None]).sum(axis=0)
        normal /= np.linalg.norm(normal)
        loops.append((loop, normal))
    # drop the vertices where a polygon goes straight on (a point on an edge of the hull)
    straight = {}
    for loop, normal in loops:
        m = len(loop)
        for k in range(m):
            a, b, c = P[loop[k - 1]], P[loop[k]], P[loop[(k + 1) % m]]
            bend = float(np.array(_cross((b - a).tolist(), (c - b).tolist())) @ normal)
            # b is on the straight line a–c (within tol) in this polygon
            st = bend <= tol * np.linalg.norm(c - a)
            straight[loop[k]] = straight.get(loop[k], True) and bool(st)
    keep = sorted(v for v, s in straight.items() if not s)
    if len(keep) > max_vertices:
        raise HullError(f"the hull has {len(keep)} vertices, more than {max_vertices}")
    index = {v: i for i, v in enumerate(keep)}
    faces = [np.array([index[v] for v in loop if v in index], np.int64) for loop, _ in loops]
    return P[keep].copy(), [f for f in faces if len(f) >= 3]


def triangulate(faces):
    """Fan triangles (T,3) of polygon faces."""
    return np.array([(f[0], f[k], f[k + 1]) for f in faces for k in range(1, len(f) - 1)], np.int64)


def mass_properties(vertices, triangles):
    """(volume, centre of mass (3,), inertia tensor (3,3) about the centre of mass) of the
    solid of unit density bounded by the outward triangles."""
    ref = vertices.mean(axis=0)
    x1 = vertices[triangles[:, 0]] - ref
    x2 = vertices[triangles[:, 1]] - ref
    x3 = vertices[triangles[:, 2]] - ref
    vol = np.einsum("ij,ij->i", x1, np.cross(x2, x3)) / 6.0
    volume = float(vol.sum())
    s = x1 + x2 + x3                                  # the fourth vertex is the reference (0)
    first = (vol[:, None] * s).sum(axis=0) / 4.0
    second = np.einsum("t,ti,tj->ij", vol / 20.0, s, s)
    for x in (x1, x2, x3):
        second += np.einsum("t,ti,tj->ij", vol / 20.0, x, x)
    c = first / volume
    cov = second - volume * np.outer(c, c)            # ∫ (x − c)(x − c)ᵀ dV
    inertia = np.trace(cov) * np.eye(3) - cov
    return volume, c + ref, 0.5 * (inertia + inertia.T)


def principal_axes(inertia):
    """(moments (3,), R (3,3) proper rotation whose columns are the principal axes), R as
    close to the identity as the tensor allows: a tensor already diagonal keeps its axes,
    otherwise the eigenvectors are ordered and signed to follow x, y, z."""
    scale = max(np.trace(inertia), 1e-300)
    off = max(abs(inertia[0, 1]), abs(inertia[0, 2]), abs(inertia[1, 2]))
    if off <= 1e-12 * scale:
        return np.diag(inertia).copy(), np.eye(3)
    w, R = np.linalg.eigh(inertia)
    best = None
    for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        score = sum(abs(R[i, perm[i]]) for i in range(3))
        if best is None or score > best[0]:
            best = (score, perm)
    perm = list(best[1])
    w, R = w[perm], R[:, perm]
    R = R * np.where(np.diag(R) < 0.0, -1.0, 1.0)
    if np.linalg.det(R) < 0.0:
        k = int(np.argmin(np.abs(np.diag(R))))
        R[:, k] = -R[:, k]
    return w, R
