"""Collision detection for the shapes of physics/shapes.py (plane, sphere, capsule, box,
cylinder, convex, compound): a broad phase (broad.py: world AABBs, sweep and prune) and a
narrow phase (narrow.py, box_box.py, convex.py with gjk.py; hulls in the flat arrays of
hulls.py) writing contact manifolds — up to 4 points per pair, each with a
world point, a normal from body a to body b, a depth (m, positive when overlapping,
negative for a gap below the margin) and a persistent feature id (common.py states the
conventions). Scalar numba kernels over preallocated arrays; nothing here knows World.

Python entry: `detect(kinds, params, positions, quaternions, static, skip, margin)` (a
convex or compound body's params: the Convex / Compound object) returns
the contacts as plain arrays. For repeated calls (a step loop, the benchmark), build a
`Detector(n)` once and call it: it keeps the output arrays and the sorted keys of the
joined pairs, and runs the whole detection in one kernel call (`collide`, plain arrays in:
named tuples of arrays dispatch slowly from Python). `collide_packed` leaves the
contacts in the kernels' packed buffers (ci, cf: common.py) without the copy.
"""
from collections import namedtuple

import numpy as np
from ..jit import kernel, helper

from .broad import broad_phase, joined_keys, joined_starts, sweep_pairs
from .common import BODY_WIDTH, BOX, CAPSULE, COMPOUND, CONVEX, CYLINDER, JIT, KIND_CODES, PLANE, SPHERE
from .hulls import Hulls, HullTable
from .narrow import narrow_phase

__all__ = ["PLANE", "SPHERE", "CAPSULE", "BOX", "CYLINDER", "CONVEX", "COMPOUND", "KIND_CODES", "Shapes",
           "Contacts", "Detector", "Hulls", "HullTable",
           "detect", "collide", "collide_packed", "collide_table", "candidate_pairs", "broad_phase", "narrow_phase", "joined_keys", "make_shapes",
           "make_contacts"]

Shapes = namedtuple("Shapes", "kind params position quaternion static hulls")
"""Per body (Python side; pass as *shapes): kind (n,) int64 code, params (n,4), position
(n,3) m, quaternion (n,4) x y z w, static (n,) bool (static bodies never collide with each
other; planes are always static); hulls the hull table (hulls.Hulls) params point into."""

Contacts = namedtuple("Contacts", "pair point normal depth feature count")
"""Output arrays: pair (m,2) int64 bodies a, b; point (m,3) m, on b's surface; normal (m,3)
unit, from a to b; depth (m,) m; feature (m,) int64; count (2,) int64: contacts written,
contacts that did not fit."""


@helper(**JIT)
def pack_bodies(params, position, quaternion):
    """The kernels' body table (n, 11): position, quaternion, params (common.py)."""
    n = position.shape[0]
    body = np.empty((n, BODY_WIDTH))
    for i in range(n):
        for c in range(3):
            body[i, c] = position[i, c]
        for c in range(4):
            body[i, 3 + c] = quaternion[i, c]
            body[i, 7 + c] = params[i, c]
    return body


@helper(**JIT)
def candidate_pairs(kind, params, position, quaternion, static, hulls, skip_keys, margin, pairs):
    """The broad phase alone (broad.broad_phase) on plain arrays: candidate pairs into
    pairs (P,2); returns their number (more than P: grow and call again)."""
    n = kind.shape[0]
    body = pack_bodies(params, position, quaternion)
    return broad_phase(kind, body, hulls, static, skip_keys, margin, np.empty((n, 6)), np.empty(n), pairs)


@kernel(**JIT)
def collide_packed(kind, params, position, quaternion, static, hulls, skip_keys, margin, pairs, ci, cf, count):
    """Broad then narrow phase in one call, the contacts in the kernels' packed layout:
    ci (m,3) int64 (a, b, feature id), cf (m,7) (point, normal, depth) — what a numba solver
    reads. Inputs as Shapes; skip_keys from broad.joined_keys; pairs (P,2) the candidate-pair
    workspace. Returns the number of candidate pairs (if more than P, the pairs past P were
    not tested: grow and call again); count[0] contacts were written, count[1] did not fit."""
    n = kind.shape[0]
    body = pack_bodies(params, position, quaternion)
    first = np.empty(n + 1, np.int64)
    joined_starts(skip_keys, n, first)
    return collide_table(kind, body, hulls, static, skip_keys, first, margin, np.empty((n, 6)), np.empty(n),
                         np.empty(n, np.int64), pairs, ci, cf, count)


@helper(**JIT)
def collide_table(kind, body, hulls, static, skip_keys, first, margin, aabb, key, order, pairs, ci, cf, count):
    """collide_packed on the packed body table (pack_bodies) with the broad phase's scratch
    given (broad.sweep_pairs: first, aabb, key, order), for a caller that keeps them: the
    contacts' buffers of physics/contacts.py, filled in place every substep."""
    n_pairs = sweep_pairs(kind, body, hulls, static, skip_keys, first, margin, aabb, key, order, pairs)
    if n_pairs > 0:
        narrow_phase(kind, body, hulls, pairs, min(n_pairs, pairs.shape[0]), margin, ci, cf, count)
    else:                           # nothing near (a chain's links apart): no narrow-phase workspaces
        count[0] = 0
        count[1] = 0
    return n_pairs


@kernel(**JIT)
def collide(kind, params, position, quaternion, static, hulls, skip_keys, margin, pairs, pair, point, normal, depth,
            feature, count):
    """collide_packed with the contacts in separate arrays (as Contacts): pair (m,2), point
    (m,3), normal (m,3), depth (m,), feature (m,); the packed buffers are allocated for at
    most 4 contacts per candidate pair and copied out."""
    n = kind.shape[0]
    body = pack_bodies(params, position, quaternion)
    n_pairs = broad_phase(kind, body, hulls, static, skip_keys, margin, np.empty((n, 6)), np.empty(n), pairs)
    tested = min(n_pairs, pairs.shape[0])
    m = min(depth.shape[0], 4 * tested)
    ci = np.empty((m, 3), np.int64)
    cf = np.empty((m, 7))
    narrow_phase(kind, body, hulls, pairs, tested, margin, ci, cf, count)
    for k in range(count[0]):
        pair[k, 0] = ci[k, 0]
        pair[k, 1] = ci[k, 1]
        feature[k] = ci[k, 2]
        for c in range(3):
            point[k, c] = cf[k, c]
            normal[k, c] = cf[k, 3 + c]
        depth[k] = cf[k, 6]
    return n_pairs


def _kind_codes(kinds):
    kinds = list(kinds) if not isinstance(kinds, np.ndarray) else kinds
    if len(kinds) and isinstance(kinds[0], str):
        kinds = [KIND_CODES[k] for k in kinds]
    return np.ascontiguousarray(kinds, dtype=np.int64)


def make_shapes(kinds, params, positions, quaternions, static=None):
    """Shapes tuple of contiguous arrays: kinds as codes or names ("box", ...), params (n,≤4)
    (box: half extents; sphere: r; capsule/cylinder: r, half_length; convex, compound: the
    physics.Convex / Compound object), positions (n,3), quaternions (n,4) x y z w, static
    (n,) (planes are made static)."""
    kind = _kind_codes(kinds)
    n = kind.shape[0]
    par = np.zeros((n, 4))
    solids = bool(np.any((kind == CONVEX) | (kind == COMPOUND)))
    table = HullTable(boxes=solids)
    for i, row in enumerate(params):                    # rows may differ in length
        if kind[i] in (CONVEX, COMPOUND):
            par[i] = table.numbers(row)[1]
            continue
        row = np.atleast_1d(np.asarray(row, dtype=float))
        par[i, :row.shape[0]] = row
        if solids and kind[i] == BOX:                   # boxes meet hulls as hulls
            par[i, 3] = table.add_box(row[:3])
    st = np.zeros(n, dtype=np.bool_) if static is None else np.asarray(static, dtype=np.bool_).copy()
    st |= kind == PLANE
    return Shapes(kind, par, np.ascontiguousarray(positions, dtype=float).reshape(n, 3),
                  np.ascontiguousarray(quaternions, dtype=float).reshape(n, 4), st, table.arrays())


def make_contacts(capacity):
    return Contacts(np.zeros((capacity, 2), np.int64), np.zeros((capacity, 3)), np.zeros((capacity, 3)),
                    np.zeros(capacity), np.zeros(capacity, np.int64), np.zeros(2, np.int64))


class Detector:
    """Workspaces for n bodies, reused call after call; `skip` the (k,2) joined pairs."""

    def __init__(self, n, skip=None, max_pairs=None, max_contacts=None):
        self.n = n
        self.skip_keys = joined_keys(np.zeros((0, 2)) if skip is None else skip, max(n, 1))
        self.pairs = np.zeros((max_pairs or 8 * n + 16, 2), np.int64)
        self.contacts = make_contacts(max_contacts or 16 * n + 64)

    def __call__(self, shapes, margin=0.0):
        """Run detection; returns the number of contacts (in self.contacts), growing the
        buffers and running again when they overflowed."""
        while True:
            n_pairs = collide(*shapes, self.skip_keys, float(margin), self.pairs, *self.contacts)
            if n_pairs > self.pairs.shape[0]:
                self.pairs = np.zeros((2 * n_pairs, 2), np.int64)
                continue
            if self.contacts.count[1] > 0:
                self.contacts = make_contacts(2 * (self.contacts.count[0] + self.contacts.count[1]))
                continue
            return int(self.contacts.count[0])


def detect(kinds, params, positions, quaternions, static=None, skip=None, margin=0.0):
    """All contacts of the bodies (see make_shapes for the inputs; skip: (k,2) pairs never
    tested; margin (m): contacts are reported while the gap is below it). Returns a dict of
    arrays trimmed to the contact count: pair (m,2), point (m,3), normal (m,3) from a to b,
    depth (m,), feature (m,)."""
    shapes = make_shapes(kinds, params, positions, quaternions, static)
    det = Detector(shapes.kind.shape[0], skip)
    m = det(shapes, margin)
    c = det.contacts
    return {"pair": c.pair[:m].copy(), "point": c.point[:m].copy(), "normal": c.normal[:m].copy(),
            "depth": c.depth[:m].copy(), "feature": c.feature[:m].copy()}
