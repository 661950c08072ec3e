"""Collision shapes from mesh files (OBJ, STL, read with trimesh): a Convex — the hull of all
the file's vertices — or a Compound of one Convex per connected part of the mesh (the
pieces of a V-HACD decomposition, which ship as one file). The path is kept on the shape
(`source`) so writers can name the file again; the caller decides which paths may be read
(physics/io/scene.py's folder jail). `link_pieces`: a URDF link's collision mesh as convex pieces."""
import functools
import hashlib
import os
import pickle
from pathlib import Path

import numpy as np

from ..caches import cache_dir
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


MAX_LINK_PARTS = 16         # a mesh of more connected parts is one hull (not a V-HACD set)
MAX_LINK_VERTICES = 96      # a link's hull keeps this many of its vertices (farthest-point)


def _sphere_directions(n):
    """n unit vectors spread evenly over the sphere (a Fibonacci lattice)."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    phi = np.pi * (1.0 + 5.0 ** 0.5) * k
    r = np.sqrt(1.0 - z * z)
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


DIRECTIONS = _sphere_directions(2000)


def _hull_of(points):
    """A Convex close to the points' hull with at most MAX_LINK_VERTICES vertices: the
    points extreme along 2000 directions (hull vertices all; their hull has the same
    support along those directions), thinned by farthest-point sampling from the one
    farthest from their centre (their hull lies inside the whole hull, near it)."""
    best = np.concatenate([np.argmax(points @ D.T, axis=0) for D in np.split(DIRECTIONS, 10)])
    P = np.unique(points[best], axis=0)
    if len(P) > MAX_LINK_VERTICES:
        pick = [int(np.argmax(np.linalg.norm(P - P.mean(axis=0), axis=1)))]
        d = np.linalg.norm(P - P[pick[0]], axis=1)
        for _ in range(MAX_LINK_VERTICES - 1):
            pick.append(int(np.argmax(d)))
            d = np.minimum(d, np.linalg.norm(P - P[pick[-1]], axis=1))
        P = P[pick]
    return Convex(P)


def link_pieces(path, scale=(1.0, 1.0, 1.0)):
    """Convex pieces of a robot link's collision mesh (scaled, in the mesh's frame): for an
    OBJ of 2 … MAX_LINK_PARTS connected parts that each span a solid, one per part (V-HACD
    pieces ship so), else the hull of all its vertices (an STL is a visual mesh whose parts
    overlap); hulls of at most MAX_LINK_VERTICES vertices (_hull_of). ValueError saying
    why not. Made once per file, scale and code: kept on disk (_pieces_file) for later runs."""
    cached = _pieces_file(path, scale)
    try:
        with open(cached, "rb") as f:
            pieces = pickle.load(f)
        if isinstance(pieces, list) and pieces and all(isinstance(c, Convex) for c in pieces):
            return pieces
    except Exception:                           # none yet, unreadable or stale: made again
        pass
    pieces = _make_pieces(path, scale)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(pieces, f)
        os.replace(tmp, cached)
    except OSError:                             # a read-only place: made again next run
        pass
    return pieces


def _pieces_file(path, scale):
    """The disk cache of a mesh's pieces: named by a digest of the file's bytes, the scale
    and the code that makes and holds them (this module, shapes.py, hull.py)."""
    h = hashlib.sha256(Path(path).read_bytes())
    h.update(repr(tuple(float(x) for x in scale)).encode())
    h.update(_code_digest())
    return cache_dir() / "mesh-pieces" / f"{h.hexdigest()[:32]}.pickle"


@functools.lru_cache(maxsize=None)
def _code_digest():
    here = Path(__file__).resolve()
    h = hashlib.sha256()
    for p in (here, here.parents[1] / "shapes.py", here.parents[1] / "hull.py"):
        h.update(p.read_bytes())
    return h.digest()


def _make_pieces(path, scale):
    """link_pieces without the disk cache."""
    mesh = _mesh(path)
    s = np.asarray(scale, float)
    parts = list(mesh.split(only_watertight=False)) if len(mesh.faces) and str(path).lower().endswith(".obj") else []
    if 2 <= len(parts) <= MAX_LINK_PARTS:
        try:
            return [_hull_of(np.asarray(p.vertices, float) * s) for p in parts]
        except ValueError:
            pass                                # a flat or tiny part: not convex pieces
    return [_hull_of(np.asarray(mesh.vertices, float) * s)]
