"""Visual meshes for bodies, read from OBJ/STL files with trimesh.

A body whose snapshot entry `visual_meshes[i]` names a file is drawn with that mesh (in
the body frame, metres, with the body's colour) instead of its collision shape. The path
is used as given (the scene loader makes paths relative to the scene file absolute); a
relative path not found is looked up from the current directory, then from the
repository root. A missing or unreadable file is reported with one warning line (once
per path) and the body keeps its primitive shape.
"""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CREASE_DEG = 45.0          # edges sharper than this stay hard (split normals)

_CACHE = {}                # resolved path → (vertices, indices) or None (failed)
_WARNED = set()


def resolve(path):
    """The file a visual-mesh path names, or None."""
    p = Path(path).expanduser()
    candidates = [p] if p.is_absolute() else [p, Path.cwd() / p, ROOT / p]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    return None


def load(path):
    """Read a mesh file: (vertices (n, 6) float32 = position, normal; indices (m,) uint32).
    Raises ValueError (or the reader's exception) when it holds no usable triangles."""
    import trimesh
    mesh = trimesh.load(str(path), force="mesh", process=True)
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ValueError("no triangles")
    if not np.all(np.isfinite(mesh.vertices)):
        raise ValueError("non-finite vertex coordinates")
    mesh = trimesh.graph.smooth_shade(mesh, angle=np.radians(CREASE_DEG), facet_minarea=None)
    verts = np.hstack([mesh.vertices, mesh.vertex_normals]).astype(np.float32)
    return verts, np.asarray(mesh.faces, np.uint32).reshape(-1)


def _warn(path, why):
    if path not in _WARNED:
        _WARNED.add(path)
        print(f"warning: visual mesh {path}: {why}; drawing the body's shape instead", file=sys.stderr)


def mesh_for(path):
    """The mesh a body names (cached per file), or None after one warning if unusable."""
    found = resolve(path)
    if found is None:
        _warn(path, "file not found")
        return None
    if found not in _CACHE:
        try:
            _CACHE[found] = load(found)
        except Exception as exc:          # any reader failure: keep the viewer running
            _CACHE[found] = None
            _warn(path, f"cannot read it ({type(exc).__name__}: {exc})".replace("\n", " "))
    return _CACHE[found]


def bounding_radius(mesh):
    """Largest distance of a vertex from the body origin (m)."""
    return float(np.linalg.norm(mesh[0][:, :3], axis=1).max(initial=0.0))


_PARTS = {}                # VisualPart → (vertices, indices) in the body frame, or None


def part_mesh(part):
    """A physics.visual.VisualPart's mesh with its scale and pose baked into the
    vertices (body frame), cached per part; None after one warning if unusable."""
    if part in _PARTS:
        return _PARTS[part]
    from physics.quat import q_to_matrix
    from . import meshes
    mesh = mesh_for(part.mesh) if part.mesh is not None else meshes.for_shape(part.shape)
    if mesh is None:
        _PARTS[part] = None
        return None
    verts, idx = mesh
    rot = q_to_matrix(np.asarray(part.orientation, float))
    scale = np.asarray(part.scale, float)
    pos = verts[:, :3].astype(float) * scale @ rot.T + np.asarray(part.position, float)
    normals = (verts[:, 3:].astype(float) / scale) @ rot.T
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    if np.prod(scale) < 0:            # a mirroring scale turns the triangles inside out
        idx = idx.reshape(-1, 3)[:, ::-1].reshape(-1)
    _PARTS[part] = (np.hstack([pos, normals]).astype(np.float32), np.ascontiguousarray(idx, np.uint32))
    return _PARTS[part]


def moved(mesh, position, orientation):
    """A mesh given in a shape's own frame, expressed in its body frame (the frame's pose
    `position`, `orientation` in the shape's own frame: x_body = Rᵀ (x − position))."""
    from physics.quat import q_to_matrix
    R = q_to_matrix(orientation)
    verts, idx = mesh
    out = verts.astype(float)
    out[:, :3] = (out[:, :3] - np.asarray(position, float)) @ R
    out[:, 3:6] = out[:, 3:6] @ R
    return out.astype(np.float32), idx
