"""Triangle meshes of the primitive shapes with smooth normals, in the body frame; hulls
(Convex) with flat faces, compounds as their pieces' meshes placed by the pieces' poses.

Each returns (vertices (n, 6) float32 = position, normal; indices (m,) uint32).
Capsule and cylinder axes run along local z, as in physics/shapes.py.
"""
import numpy as np

from physics.quat import q_to_matrix


def box(half_extents):
    hx, hy, hz = half_extents
    verts, idx = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = [(axis + 1) % 3, (axis + 2) % 3]
            base = len(verts)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis] = sign
                p[u], p[v] = a, b
                verts.append(np.concatenate([p * (hx, hy, hz), n]))
            quad = [0, 1, 2, 0, 2, 3] if sign > 0 else [0, 2, 1, 0, 3, 2]
            idx += [base + q for q in quad]
    return np.array(verts, np.float32), np.array(idx, np.uint32)


def _lathe(profile, segments=32):
    """Surface of revolution about z from a profile of (r, z, nr, nz) rows."""
    prof = np.asarray(profile, float)
    ang = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    c, s = np.cos(ang), np.sin(ang)
    verts = np.zeros((len(prof), segments + 1, 6))
    verts[:, :, 0] = prof[:, 0:1] * c
    verts[:, :, 1] = prof[:, 0:1] * s
    verts[:, :, 2] = prof[:, 1:2]
    verts[:, :, 3] = prof[:, 2:3] * c
    verts[:, :, 4] = prof[:, 2:3] * s
    verts[:, :, 5] = prof[:, 3:4]
    rows, cols = len(prof), segments + 1
    i, j = np.meshgrid(np.arange(rows - 1), np.arange(segments), indexing="ij")
    a = i * cols + j
    b = a + 1
    c2 = a + cols
    d = c2 + 1
    idx = np.stack([a, b, d, a, d, c2], axis=-1).reshape(-1)
    return verts.reshape(-1, 6).astype(np.float32), idx.astype(np.uint32)


def _cap_rings(radius, z0, sign, rings=8):
    """Hemisphere profile rows from the equator (z0) to the pole (z0 + sign·r)."""
    out = []
    for k in range(rings + 1):
        t = k / rings * np.pi / 2
        out.append((radius * np.cos(t), z0 + sign * radius * np.sin(t), np.cos(t), sign * np.sin(t)))
    return out


def sphere(radius):
    prof = _cap_rings(radius, 0.0, -1.0)[::-1] + _cap_rings(radius, 0.0, 1.0)[1:]
    return _lathe(prof)


def capsule(radius, half_length):
    prof = _cap_rings(radius, -half_length, -1.0)[::-1] + _cap_rings(radius, half_length, 1.0)
    return _lathe(prof)


def cylinder(radius, half_length):
    h = half_length
    prof = [(0.0, -h, 0.0, -1.0), (radius, -h, 0.0, -1.0), (radius, -h, 1.0, 0.0), (radius, h, 1.0, 0.0),
            (radius, h, 0.0, 1.0), (0.0, h, 0.0, 1.0)]
    return _lathe(prof)


def convex(shape):
    """A hull's polygon faces, each with its own vertices and its flat normal."""
    verts, idx = [], []
    V = np.asarray(shape.vertices, float)
    for f in shape.faces:
        p = V[f]
        n = sum(np.cross(p[k] - p[0], p[k + 1] - p[0]) for k in range(1, len(f) - 1))
        n = n / np.linalg.norm(n)
        base = len(verts)
        verts.extend(np.concatenate([q, n]) for q in p)
        for k in range(1, len(f) - 1):
            idx += [base, base + k, base + k + 1]
    return np.array(verts, np.float32), np.array(idx, np.uint32)


def compound(shape):
    """The pieces' meshes, each moved to its pose in the body frame, in one mesh."""
    verts, idx, base = [], [], 0
    for piece, p, q in shape.pieces:
        v, i = for_shape(piece)
        R = q_to_matrix(q)
        v = v.astype(float)
        v[:, :3] = v[:, :3] @ R.T + p
        v[:, 3:] = v[:, 3:] @ R.T
        verts.append(v)
        idx.append(i + base)
        base += len(v)
    return np.vstack(verts).astype(np.float32), np.concatenate(idx).astype(np.uint32)


def ground(half_size=60.0):
    v = np.array([[-1, -1, 0, 0, 0, 1], [1, -1, 0, 0, 0, 1], [1, 1, 0, 0, 0, 1], [-1, 1, 0, 0, 0, 1]], np.float32)
    v[:, :2] *= half_size
    return v, np.array([0, 1, 2, 0, 2, 3], np.uint32)


def for_shape(shape):
    """Mesh of a physics shape (None for the ground plane)."""
    kind = shape.kind
    if kind == "box":
        return box(shape.half_extents)
    if kind == "sphere":
        return sphere(shape.radius)
    if kind == "capsule":
        return capsule(shape.radius, shape.half_length)
    if kind == "cylinder":
        return cylinder(shape.radius, shape.half_length)
    if kind == "convex":
        return convex(shape)
    if kind == "compound":
        return compound(shape)
    return None


def shape_key(shape):
    """Shapes with equal keys share one mesh (instanced)."""
    if shape.kind in ("convex", "compound"):
        return (shape.kind, hash(shape), id(shape))
    values = np.hstack([np.ravel(getattr(shape, f)) for f in shape.__dataclass_fields__] or [0.0])
    return (shape.kind,) + tuple(round(float(v), 6) for v in values)


def bounding_radius(shape):
    kind = shape.kind
    if kind == "box":
        return float(np.linalg.norm(shape.half_extents))
    if kind == "sphere":
        return shape.radius
    if kind in ("capsule", "cylinder"):
        return float(np.hypot(shape.radius, shape.half_length) + (shape.radius if kind == "capsule" else 0))
    if kind in ("convex", "compound"):
        return shape.bounding_radius()
    return 0.0
