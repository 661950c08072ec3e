"""Ray casts against the bodies' own shapes (boxes, spheres, capsules, cylinders, hulls,
compounds).

The ray is taken into each body's frame (shapes are centred on the body, capsule and
cylinder axes along local z, physics/shapes.py) and intersected exactly; the nearest
hit in front of the camera wins. Planes (the ground) are not pickable.
"""
import math

import numpy as np

from physics.quat import q_conj, q_rotate, q_to_matrix
from physics.shapes import primitive_half_extents


def _slab(o, d, half):
    """Ray vs axis-aligned box |x| <= half: entry distance or None."""
    t0, t1 = -math.inf, math.inf
    for k in range(3):
        if abs(d[k]) < 1e-15:
            if abs(o[k]) > half[k]:
                return None
            continue
        a, b = (-half[k] - o[k]) / d[k], (half[k] - o[k]) / d[k]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
        if t0 > t1:
            return None
    if t1 < 0:
        return None
    return t0 if t0 >= 0 else 0.0


def _sphere(o, d, c, r):
    oc = o - c
    b = float(np.dot(oc, d))
    disc = b * b - (float(np.dot(oc, oc)) - r * r)
    if disc < 0:
        return None
    s = math.sqrt(disc)
    for t in (-b - s, -b + s):
        if t >= 0:
            return t
    return None


def _side(o, d, r, h):
    """Ray vs the side of the z-axis cylinder of radius r, |z| <= h: nearest t or None."""
    a = d[0] * d[0] + d[1] * d[1]
    if a < 1e-15:
        return None
    b = o[0] * d[0] + o[1] * d[1]
    c = o[0] * o[0] + o[1] * o[1] - r * r
    disc = b * b - a * c
    if disc < 0:
        return None
    s = math.sqrt(disc)
    for t in ((-b - s) / a, (-b + s) / a):
        if t >= 0 and abs(o[2] + t * d[2]) <= h:
            return t
    return None


def _hull(o, d, shape):
    """Ray vs a convex hull (the intersection of its faces' half-spaces, clipped slab by slab)."""
    t0, t1 = 0.0, math.inf
    V = shape.vertices
    for f in shape.faces:
        p = V[f]
        n = sum(np.cross(p[k] - p[0], p[k + 1] - p[0]) for k in range(1, len(f) - 1))
        n = n / np.linalg.norm(n)
        dist, rate = float(n @ (o - p[0])), float(n @ d)      # height above the face, its rate
        if abs(rate) < 1e-15:
            if dist > 0.0:
                return None
            continue
        t = -dist / rate
        if rate < 0.0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return t0


def _nearest(ts):
    ts = [t for t in ts if t is not None]
    return min(ts) if ts else None


def ray_shape(shape, o, d):
    """Distance along a unit ray (origin o, direction d, body frame) to `shape`, or None."""
    kind = shape.kind
    if kind == "box":
        return _slab(o, d, np.asarray(shape.half_extents, float))
    if kind == "sphere":
        return _sphere(o, d, np.zeros(3), shape.radius)
    if kind == "capsule":
        r, h = shape.radius, shape.half_length
        return _nearest([_side(o, d, r, h), _sphere(o, d, np.array([0.0, 0.0, h]), r),
                         _sphere(o, d, np.array([0.0, 0.0, -h]), r)])
    if kind == "cylinder":
        r, h = shape.radius, shape.half_length
        caps = []
        if abs(d[2]) > 1e-15:
            for z in (h, -h):
                t = (z - o[2]) / d[2]
                p = o + t * d
                if t >= 0 and p[0] * p[0] + p[1] * p[1] <= r * r:
                    caps.append(t)
        return _nearest([_side(o, d, r, h)] + caps)
    if kind == "convex":
        return _hull(o, d, shape)
    if kind == "compound":
        hits = []
        for piece, p, q in shape.pieces:
            R = q_to_matrix(q)
            hits.append(ray_shape(piece, R.T @ (o - p), R.T @ d))
        return _nearest(hits)
    return None


def ray_cast(shapes, positions, orientations, origin, direction):
    """Nearest body hit by the ray: (index, distance, world point), or None.
    Index 0 (the static world) and planes are skipped."""
    origin = np.asarray(origin, float)
    direction = np.asarray(direction, float)
    best = None
    for i in range(1, len(shapes)):
        shape = shapes[i]
        if shape.kind == "plane":
            continue
        qc = q_conj(np.asarray(orientations[i], float))
        o = q_rotate(qc, origin - positions[i])
        d = q_rotate(qc, direction)
        t = ray_shape(shape, o, d)
        if t is not None and (best is None or t < best[1]):
            best = (i, t)
    if best is None:
        return None
    i, t = best
    return i, t, origin + t * direction


def bounding_corners(shape):
    """The 8 corners (body frame) of a shape's bounding box, for outlines; None for planes."""
    kind = shape.kind
    h = primitive_half_extents(shape)
    if h is not None:
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
        return signs * h
    if kind in ("convex", "compound"):
        pts = shape.vertices if kind == "convex" else np.vstack(
            [bounding_corners(s) @ q_to_matrix(q).T + p for s, p, q in shape.pieces])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        signs = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
        return lo + signs * (hi - lo)
    return None


BOX_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]
