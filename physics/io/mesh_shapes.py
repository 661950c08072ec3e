"""Collision shapes from mesh files (OBJ, STL, read with trimesh): a Convex — the hull of all
the file's vertices — or a Compound of one Convex per connected part of the mesh (the
pieces of a V-HACD decomposition, which ship as one file). The path is kept on the shape
(`source`) so writers can name the file again; the caller decides which paths may be read
(physics/io/scene.py's folder jail)."""
import numpy as np

from ..shapes import Compound, Convex


def _mesh(path):
    """The file's mesh, vertices as its indices join them (OBJ: each object's own; STL,
    which has none: merged where they coincide)."""
    import trimesh
    try:
        mesh = trimesh.load(str(path), force="mesh", process=False)
    except Exception as e:                       # trimesh raises many kinds for a bad file
        raise ValueError(f"cannot read it as a mesh ({type(e).__name__}: {e})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.vertices) == 0:
        raise ValueError("it holds no vertices")
    if str(path).lower().endswith(".stl"):
        mesh.merge_vertices()
    return mesh


def convex_from_mesh(path):
    """Convex hull of the mesh file's vertices (ValueError saying why not)."""
    return Convex(np.asarray(_mesh(path).vertices, float), source=str(path))


def compound_from_mesh(path):
    """Compound of the hulls of the mesh file's connected parts (ValueError saying why not)."""
    mesh = _mesh(path)
    parts = list(mesh.split(only_watertight=False)) if len(mesh.faces) else []
    pieces = []
    for k, part in enumerate(parts or [mesh]):
        try:
            pieces.append(Convex(np.asarray(part.vertices, float)))
        except ValueError as e:
            raise ValueError(f"part {k + 1} of {len(parts)}: {e}") from None
    return Compound(pieces, source=str(path))
