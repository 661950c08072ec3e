"""The hull table: Convex and Compound shapes (physics/shapes.py) as flat contiguous arrays
for the kernels, built once per body layout (Python side, not on the hot path).

    hull  (H,59) int64  per hull: first row in vert, vertex count, first row in plane/face,
                        face count, the most vertices of one of its faces, then 54 start
                        vertices for hill climbs: the vertex extreme along the centre of each
                        cell of a cube map of directions (start_cell)
    box   (H,7)         per hull, in its body frame: the centre (3) and half extents (3) of
                        its bounding box, the radius of its bounding sphere about the origin
    vert  (V,3)         vertices, each hull's in its body frame (centre of mass, principal axes)
    plane (F,4)         faces' outward unit normal and offset d (n·x = d on the face)
    face  (F,2) int64   a face's first entry in fvert and its vertex count
    fvert (K,)  int64   the faces' vertices (rows of vert), counter-clockwise seen from outside
    vadj  (V,2) int64   a vertex's first entry in adj and its neighbour count
    adj   (A,)  int64   the vertices' neighbours along the hull's edges (rows of vert)
    piece (P,19)        compound pieces: position 0:3 and quaternion 3:7 in the compound's
                        body frame, shape numbers 7:11 (as a body's), kind code 11, bounding
                        box centre 12:15 and half extents 15:18 in the compound's body frame,
                        bounding-sphere radius 18 about the piece's centre

A body's shape numbers (common.py's `params`) then are, for a convex body (hull index,
bounding radius, 0, 0); for a compound (first piece, piece count, bounding radius, 0); for
a box (hx, hy, hz, the index of its box as a hull) when the table holds solids, so boxes
meet hulls through the hull–hull test.
"""
from collections import namedtuple

import numpy as np
from ..jit import helper

from ..quat import q_to_matrix
from ..shapes import primitive_half_extents
from .common import CONVEX, JIT_NO_REFS, KIND_CODES

Hulls = namedtuple("Hulls", "hull box vert plane face fvert vadj adj piece")
PIECE_WIDTH = 19


def _cell_directions():
    """The centres of the 54 cells of start_cell's cube map: on each face of the cube (the
    direction's dominant axis and its sign), a 3 × 3 grid of the other two components over
    the dominant one (cut at ±1/3)."""
    out = []
    for face in range(6):
        a, sign = face // 2, (1.0 if face % 2 == 0 else -1.0)
        for iu in range(3):
            for iv in range(3):
                d = np.zeros(3)
                d[a] = sign
                d[(a + 1) % 3], d[(a + 2) % 3] = (iu - 1) * 2.0 / 3.0, (iv - 1) * 2.0 / 3.0
                out.append(d / np.linalg.norm(d))
    return np.array(out)


CELL_DIRECTIONS = _cell_directions()


@helper(**JIT_NO_REFS)
def start_cell(dx, dy, dz):
    """The cube-map cell (0 … 53) of direction d: 9·(2·axis + (d_axis < 0)) + 3·iu + iv."""
    ax, ay, az = abs(dx), abs(dy), abs(dz)
    if ax >= ay and ax >= az:
        a, m, u, v = 0, ax, dy, dz
        neg = dx < 0.0
    elif ay >= az:
        a, m, u, v = 1, ay, dz, dx
        neg = dy < 0.0
    else:
        a, m, u, v = 2, az, dx, dy
        neg = dz < 0.0
    t = m / 3.0
    iu = 0 if u < -t else (1 if u < t else 2)
    iv = 0 if v < -t else (1 if v < t else 2)
    return 9 * (2 * a + (1 if neg else 0)) + 3 * iu + iv


def _box_hull(h):
    hx, hy, hz = h
    verts = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
    # corner k has bit 2 for +x, bit 1 for +y, bit 0 for +z; faces counter-clockwise from outside
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return verts, [np.array(f, np.int64) for f in faces]


class HullTable:
    """Collects hulls and compound pieces, then `arrays()` the Hulls bundle. Shapes met
    twice (many bodies of one Convex, boxes of one size) are stored once. `boxes`: whether
    bodies' boxes get their hulls (needed only when some body is a hull or a compound;
    compound pieces always have theirs)."""

    def __init__(self, boxes=True):
        self.boxes = boxes
        self.hull, self.box, self.vert, self.plane, self.face, self.fvert, self.piece = [], [], [], [], [], [], []
        self.vadj, self.adj = [], []
        self._rows = [0, 0, 0]                    # vertices, faces, face vertices so far
        self._seen = {}

    def add_hull(self, verts, faces, key=None):
        """Index of the hull of vertices (V,3) and polygon faces (index arrays)."""
        if key is not None and key in self._seen:
            return self._seen[key]
        v0, f0, k0 = self._rows
        verts = np.asarray(verts, float)
        # each polygon's area vector: the sum of its fan triangles' cross products, all at once
        fan = np.array([(i, f[0], f[k], f[k + 1]) for i, f in enumerate(faces) for k in range(1, len(f) - 1)],
                       np.int64)
        cross = np.cross(verts[fan[:, 2]] - verts[fan[:, 1]], verts[fan[:, 3]] - verts[fan[:, 1]])
        normal = np.zeros((len(faces), 3))
        np.add.at(normal, fan[:, 0], cross)
        normal /= np.linalg.norm(normal, axis=1)[:, None]
        for f, n in zip(faces, normal):
            self.plane.append([*n, float(np.max(verts[f] @ n))])
            self.face.append([k0, len(f)])
            self.fvert.extend(int(v0 + i) for i in f)
            k0 += len(f)
        self.vert.extend(verts.tolist())
        near = [set() for _ in verts]
        for f in faces:
            for k in range(len(f)):
                u, w = int(f[k]), int(f[(k + 1) % len(f)])
                near[u].add(w)
                near[w].add(u)
        for nb in near:
            self.vadj.append([len(self.adj), len(nb)])
            self.adj.extend(v0 + w for w in sorted(nb))
        lo, hi = verts.min(axis=0), verts.max(axis=0)
        self.box.append([*(0.5 * (lo + hi)), *(0.5 * (hi - lo)), float(np.linalg.norm(verts, axis=1).max())])
        starts = [v0 + int(np.argmax(verts @ d)) for d in CELL_DIRECTIONS]
        self.hull.append([v0, len(verts), f0, len(faces), max(len(f) for f in faces), *starts])
        self._rows = [v0 + len(verts), f0 + len(faces), k0]
        index = len(self.hull) - 1
        if key is not None:
            self._seen[key] = index
        return index

    def add_convex(self, shape):
        return self.add_hull(shape.vertices, shape.faces, key=("convex", id(shape)))

    def add_box(self, half_extents):
        h = tuple(float(x) for x in half_extents)
        verts, faces = _box_hull(h)
        return self.add_hull(verts, faces, key=("box", h))

    def numbers(self, shape, piece=False):
        """(kind code, 4 shape numbers) of a shape, its hulls and pieces added."""
        kind = shape.kind
        size = np.zeros(4)
        if kind == "box":
            size[:3] = shape.half_extents
            if self.boxes or piece:
                size[3] = self.add_box(shape.half_extents)
        elif kind == "sphere":
            size[0] = shape.radius
        elif kind in ("capsule", "cylinder"):
            size[0], size[1] = shape.radius, shape.half_length
        elif kind == "convex":
            size[0], size[1] = self.add_convex(shape), shape.bounding_radius()
        elif kind == "compound":
            key = ("compound", id(shape))
            if key not in self._seen:
                self._seen[key] = len(self.piece)
                for piece, p, q in shape.pieces:
                    code, numbers = self.numbers(piece, piece=True)
                    R = q_to_matrix(q)
                    lo, hi = _local_box(piece, numbers, self)
                    centre, half = R @ (0.5 * (lo + hi)) + p, np.abs(R) @ (0.5 * (hi - lo))
                    radius = float(np.linalg.norm(np.maximum(np.abs(lo), np.abs(hi))))
                    if code == CONVEX:
                        radius = float(numbers[1])
                    self.piece.append([*p, *q, *numbers, code, *centre, *half, radius])
            size[0], size[1], size[2] = self._seen[key], len(shape.pieces), shape.bounding_radius()
        return KIND_CODES[kind], size

    def arrays(self):
        f, i = np.float64, np.int64
        return Hulls(np.array(self.hull, i).reshape(-1, 5 + len(CELL_DIRECTIONS)), np.array(self.box, f).reshape(-1, 7),
                     np.array(self.vert, f).reshape(-1, 3), np.array(self.plane, f).reshape(-1, 4),
                     np.array(self.face, i).reshape(-1, 2), np.array(self.fvert, i).reshape(-1),
                     np.array(self.vadj, i).reshape(-1, 2), np.array(self.adj, i).reshape(-1),
                     np.array(self.piece, f).reshape(-1, PIECE_WIDTH))


def _local_box(shape, numbers, table):
    """(lo, hi) corners of a piece's bounding box in its own frame."""
    h = primitive_half_extents(shape)
    if h is None:                       # a hull: its box from the table
        b = table.box[int(numbers[0])]
        c, e = np.array(b[:3]), np.array(b[3:6])
        return c - e, c + e
    return -h, h


def has_solids(shapes):
    """Whether some of the shapes are hulls or compounds (then boxes need their hulls)."""
    return any(getattr(s, "kind", None) in ("convex", "compound") for s in shapes)
