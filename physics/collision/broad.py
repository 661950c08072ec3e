"""Broad phase: world axis-aligned bounding boxes, then sweep-and-prune along the axis of
largest spread, O(n log n) for the sort (in place) plus O(n + pairs) for the sweep;
infinite planes are tested against every other body's box instead.

Pairs are skipped when both bodies are static or when they are joined (their key
min·n + max is in the sorted `skip_keys`, see `joined_keys`).
"""
import math

import numpy as np
from ..jit import kernel, helper

from ..quat import frame_axes, rotate
from .common import BOX, CAPSULE, COMPOUND, CONVEX, CYLINDER, JIT, JIT_NO_REFS, PAR, PLANE, QUAT, SPHERE


def joined_keys(skip, n):
    """Sorted unique int64 keys min(a, b)·n + max(a, b) of the (k,2) body pairs that must not
    collide (bodies joined by a joint); the kernels find a pair by binary search."""
    skip = np.asarray(skip, dtype=np.int64).reshape(-1, 2)
    lo, hi = skip.min(axis=1), skip.max(axis=1)
    return np.unique(lo * n + hi).astype(np.int64)


@helper(**JIT, _nrt=False)
def lower_bound(keys, n, key):
    """The first index of the sorted keys[:n] whose key is ≥ key (binary search)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@helper(**JIT)
def is_joined(skip_keys, n, i, j):
    """Binary search of the pair (i, j) in the sorted keys."""
    key = min(i, j) * n + max(i, j)
    lo = lower_bound(skip_keys, skip_keys.shape[0], key)
    return lo < skip_keys.shape[0] and skip_keys[lo] == key


@helper(**JIT_NO_REFS)
def _solid_box(kind, body, i, hulls, aabb, g):
    """World AABB of a hull (its local bounding box turned: centre R c + x, half widths
    Σ_j |R_ij| e_j) or a compound (the union of its pieces' local boxes, turned likewise)."""
    r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2],
                                                             body[i, QUAT + 3])
    if kind[i] == CONVEX:
        src, first, cnt, col = hulls.box, int(body[i, PAR]), 1, 0
    else:
        src, first, cnt, col = hulls.piece, int(body[i, PAR]), int(body[i, PAR + 1]), 12
    for c in range(3):
        aabb[i, c] = math.inf
        aabb[i, 3 + c] = -math.inf
    for r in range(first, first + cnt):
        c0, c1, c2 = src[r, col], src[r, col + 1], src[r, col + 2]
        e0, e1, e2 = src[r, col + 3], src[r, col + 4], src[r, col + 5]
        x = body[i, 0] + r00 * c0 + r01 * c1 + r02 * c2
        y = body[i, 1] + r10 * c0 + r11 * c1 + r12 * c2
        z = body[i, 2] + r20 * c0 + r21 * c1 + r22 * c2
        ex = abs(r00) * e0 + abs(r01) * e1 + abs(r02) * e2
        ey = abs(r10) * e0 + abs(r11) * e1 + abs(r12) * e2
        ez = abs(r20) * e0 + abs(r21) * e1 + abs(r22) * e2
        aabb[i, 0], aabb[i, 1], aabb[i, 2] = min(aabb[i, 0], x - ex - g), min(aabb[i, 1], y - ey - g), \
            min(aabb[i, 2], z - ez - g)
        aabb[i, 3], aabb[i, 4], aabb[i, 5] = max(aabb[i, 3], x + ex + g), max(aabb[i, 4], y + ey + g), \
            max(aabb[i, 5], z + ez + g)


@helper(**JIT_NO_REFS)
def compute_aabbs(kind, body, hulls, margin, aabb):
    """World AABB of every body into aabb (n,6) (min xyz, max xyz, m), grown by margin/2 on
    every side so that boxes overlap when the gap is below the margin. Box: half widths
    Σ_j |R_ij| e_j; capsule: |w_i| h + r (w its axis); cylinder: |w_i| h + r √(1 − w_i²)
    (the disc's extent); sphere r; planes ±∞; hulls and compounds: _solid_box."""
    g = 0.5 * margin
    for i in range(kind.shape[0]):
        k = kind[i]
        cx, cy, cz = body[i, 0], body[i, 1], body[i, 2]
        if k == PLANE:
            for c in range(3):
                aabb[i, c] = -math.inf
                aabb[i, 3 + c] = math.inf
            continue
        if k == CONVEX or k == COMPOUND:
            if hulls is not None:       # None: no hull collides (contacts.ContactShapes)
                _solid_box(kind, body, i, hulls, aabb, g)
            continue
        p0, p1, p2 = body[i, PAR], body[i, PAR + 1], body[i, PAR + 2]
        ex = ey = ez = p0
        if k != SPHERE:
            r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(
                body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2], body[i, QUAT + 3])
            if k == BOX:
                ex = abs(r00) * p0 + abs(r01) * p1 + abs(r02) * p2
                ey = abs(r10) * p0 + abs(r11) * p1 + abs(r12) * p2
                ez = abs(r20) * p0 + abs(r21) * p1 + abs(r22) * p2
            elif k == CAPSULE:
                ex, ey, ez = abs(r02) * p1 + p0, abs(r12) * p1 + p0, abs(r22) * p1 + p0
            elif k == CYLINDER:
                ex = abs(r02) * p1 + p0 * math.sqrt(max(0.0, 1.0 - r02 * r02))
                ey = abs(r12) * p1 + p0 * math.sqrt(max(0.0, 1.0 - r12 * r12))
                ez = abs(r22) * p1 + p0 * math.sqrt(max(0.0, 1.0 - r22 * r22))
        aabb[i, 0], aabb[i, 1], aabb[i, 2] = cx - ex - g, cy - ey - g, cz - ez - g
        aabb[i, 3], aabb[i, 4], aabb[i, 5] = cx + ex + g, cy + ey + g, cz + ez + g


@kernel(**JIT_NO_REFS)
def joined_starts(skip_keys, n, first):
    """first (n+1,): first[i] the index of the first key ≥ i·n in the sorted keys, so the
    pairs whose lower body is i are skip_keys[first[i]:first[i + 1]] (one merge pass,
    O(n + k)): is_joined_from then reads a body's few joined pairs instead of a binary
    search over all of them."""
    p = 0
    k = skip_keys.shape[0]
    for i in range(n + 1):
        lo = i * n
        while p < k and skip_keys[p] < lo:
            p += 1
        first[i] = p


@helper(**JIT)
def is_joined_from(skip_keys, first, n, i, j):
    """is_joined with the starts of joined_starts: a scan of the lower body's keys."""
    lo = min(i, j)
    key = lo * n + max(i, j)
    for p in range(first[lo], first[lo + 1]):
        if skip_keys[p] >= key:
            return skip_keys[p] == key
    return False


@helper(**JIT)
def _add_pair(pairs, count, i, j):
    if count < pairs.shape[0]:
        pairs[count, 0] = i
        pairs[count, 1] = j
    return count + 1


@helper(**JIT)
def broad_phase(kind, body, hulls, static, skip_keys, margin, aabb, key, pairs):
    """Candidate pairs (AABBs overlapping, gap below the margin) into pairs (P,2); returns
    their number, which may exceed P (then only the first fit: grow the
    array and call again). aabb (n,6) and key (n,) are scratch; sweep_pairs does the work."""
    n = kind.shape[0]
    first = np.empty(n + 1, np.int64)
    joined_starts(skip_keys, n, first)
    return sweep_pairs(kind, body, hulls, static, skip_keys, first, margin, aabb, key, np.empty(n, np.int64), pairs)


@helper(**JIT_NO_REFS)
def sweep_pairs(kind, body, hulls, static, skip_keys, first, margin, aabb, key, order, pairs):
    """broad_phase on given scratch: first (n+1,) joined_starts of skip_keys (it changes only
    with them), aabb (n,6), key (n,), order (n,) int64 (a solver's buffers: nothing is
    allocated: compiled without reference counting).

    Sweep and prune: the axis with the largest variance of the box centres; the bodies
    sorted by their box's lower bound on it (sort_order, O(n log n); O(n) when the bounds
    already rise or fall with the index, as a chain's links do: monotone_order); each body is paired
    with the following ones until their lower bound passes its upper bound, keeping those
    whose boxes overlap on the other two axes. Each plane is paired with every non-static
    body whose box reaches below the plane plus the margin."""
    n = kind.shape[0]
    compute_aabbs(kind, body, hulls, margin, aabb)
    # axis of largest spread of the centres (non-planes)
    m = np.int64(0)               # typed, not a literal: sweep_and_prune compiles once
    s1x = s1y = s1z = s2x = s2y = s2z = 0.0
    for i in range(n):
        if kind[i] != PLANE:
            x = aabb[i, 0] + aabb[i, 3]
            y = aabb[i, 1] + aabb[i, 4]
            z = aabb[i, 2] + aabb[i, 5]
            s1x += x
            s1y += y
            s1z += z
            s2x += x * x
            s2y += y * y
            s2z += z * z
            m += 1
    axis = 0
    if m > 0:
        vx, vy, vz = s2x - s1x * s1x / m, s2y - s1y * s1y / m, s2z - s1z * s1z / m
        axis = 0 if (vx >= vy and vx >= vz) else (1 if vy >= vz else 2)
    # planes sort to the end (key +inf) and are handled apart
    for i in range(n):
        key[i] = aabb[i, axis] if kind[i] != PLANE else math.inf
    if not monotone_order(key, order):
        sort_order(key, order)
    return sweep_and_prune(kind, body, static, skip_keys, first, margin, aabb, order, m, axis, pairs)


@helper(**JIT)
def _before(key, a, b):
    """Whether index a sorts before index b: by key, equal keys by index."""
    return key[a] < key[b] or (key[a] == key[b] and a < b)


@helper(**JIT_NO_REFS)
def _sift_down(key, order, root, end):
    """Restore the max-heap order[root:end] below root (heapsort's step)."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and _before(key, order[child], order[child + 1]):
            child += 1
        if not _before(key, order[root], order[child]):
            return
        order[root], order[child] = order[child], order[root]
        root = child


@helper(**JIT_NO_REFS)
def sort_order(key, order):
    """order := the indices 0…n−1 sorted by key, equal keys by index (the order of
    np.argsort(key, kind="stable")), in place by heapsort: O(n log n), nothing allocated."""
    n = key.shape[0]
    for i in range(n):
        order[i] = i
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(key, order, root, n)
    for end in range(n - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        _sift_down(key, order, 0, end)


@helper(**JIT_NO_REFS)
def monotone_order(key, order):
    """sort_order's order in O(n) when it is plain: the finite keys strictly rising
    or strictly falling with the index (a chain's links along the sweep axis), then at most
    one +inf (a plane). Writes it into order and returns True; returns False (order
    unspecified) otherwise — ties, NaN, two planes: then the caller sorts. A strict order
    is the unique sorted one, so the pairs come out as sort_order's, bit for bit."""
    n = key.shape[0]
    up = down = True
    planes = 0
    last = -1
    for i in range(n):
        k = key[i]
        if k == math.inf:
            planes += 1
            continue
        if last >= 0:
            if not k > key[last]:
                up = False
            if not k < key[last]:
                down = False
            if not (up or down):
                return False
        last = i
    if planes > 1:
        return False
    c = 0
    for s in range(n):
        i = s if up else n - 1 - s
        if key[i] != math.inf:
            order[c] = i
            c += 1
    for i in range(n):
        if key[i] == math.inf:
            order[c] = i
            c += 1
    return True


@helper(**JIT_NO_REFS)
def sweep_and_prune(kind, body, static, skip_keys, first, margin, aabb, order, m, axis, pairs):
    """broad_phase's sweep along `axis` over the m non-planes in `order`, then the planes
    (order[m:]) against every non-static body; returns the number of pairs. Joined pairs
    are found from `first` (joined_starts). Without reference counting (common.JIT_NO_REFS)."""
    n = kind.shape[0]
    a1, a2 = (axis + 1) % 3, (axis + 2) % 3
    count = 0
    for s in range(m):
        i = order[s]
        hi = aabb[i, 3 + axis]
        for t in range(s + 1, m):
            j = order[t]
            if aabb[j, axis] > hi:
                break
            if (aabb[j, a1] > aabb[i, 3 + a1] or aabb[i, a1] > aabb[j, 3 + a1]
                    or aabb[j, a2] > aabb[i, 3 + a2] or aabb[i, a2] > aabb[j, 3 + a2]):
                continue
            if static[i] and static[j]:
                continue
            if skip_keys.shape[0] > 0 and is_joined_from(skip_keys, first, n, i, j):
                continue
            count = _add_pair(pairs, count, min(i, j), max(i, j))
    # planes against every non-static body
    for p in range(m, n):
        i = order[p]
        nx, ny, nz = rotate(body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2], body[i, QUAT + 3], 0.0, 0.0, 1.0)
        off = nx * body[i, 0] + ny * body[i, 1] + nz * body[i, 2]
        for s in range(m):
            j = order[s]
            if static[j]:
                continue
            # lowest corner of the box along n (the box already holds margin/2 on each side)
            low = (nx * (aabb[j, 3] if nx < 0.0 else aabb[j, 0]) + ny * (aabb[j, 4] if ny < 0.0 else aabb[j, 1])
                   + nz * (aabb[j, 5] if nz < 0.0 else aabb[j, 2]))
            if low - off > margin:
                continue
            if skip_keys.shape[0] > 0 and is_joined_from(skip_keys, first, n, i, j):
                continue
            count = _add_pair(pairs, count, min(i, j), max(i, j))
    return count
