"""physics/collision: contact manifolds checked against closed forms and brute force, and
the broad phase against the O(n²) test of every pair's bounding boxes."""
import itertools
import math

import numpy as np
import pytest

from physics import Convex
from physics.collision import candidate_pairs, detect, joined_keys, make_shapes
from physics.quat import q_from_axis_angle, q_to_matrix

I = (0.0, 0.0, 0.0, 1.0)
Z = (0.0, 0.0, 1.0)


def _q(axis, deg):
    return tuple(q_from_axis_angle(axis, math.radians(deg)))


def _one(kinds, params, pos, quats, **kw):
    return detect(kinds, params, pos, quats, **kw)


def _box_sdf(p, c, q, h):
    """Signed distance of world point p to a box (numpy, independent of the kernels)."""
    local = q_to_matrix(q).T @ (np.asarray(p) - np.asarray(c))
    d = np.abs(local) - np.asarray(h)
    return np.linalg.norm(np.maximum(d, 0.0)) + min(d.max(), 0.0)


def _sat(ca, qa, ha, cb, qb, hb):
    """Largest separation (m, negative: penetration) over the 15 SAT axes, and its axis."""
    A, B = q_to_matrix(qa), q_to_matrix(qb)
    d = np.asarray(cb) - np.asarray(ca)
    axes = [A[:, i] for i in range(3)] + [B[:, j] for j in range(3)]
    for i in range(3):
        for j in range(3):
            L = np.cross(A[:, i], B[:, j])
            if np.linalg.norm(L) > 1e-6:
                axes.append(L / np.linalg.norm(L))
    best, best_axis = -np.inf, None
    for L in axes:
        ra = np.sum(np.asarray(ha) * np.abs(A.T @ L))
        rb = np.sum(np.asarray(hb) * np.abs(B.T @ L))
        s = abs(d @ L) - ra - rb
        if s > best:
            best, best_axis = s, L * np.sign(d @ L)
    return best, best_axis


# ---- spheres and planes ----

def test_sphere_sphere_depth_normal_and_point_are_the_closed_form():
    ca, cb, ra, rb = np.array([0.1, -0.2, 0.3]), np.array([0.5, 0.1, 0.6]), 0.3, 0.4
    c = _one(["sphere", "sphere"], [[ra], [rb]], [ca, cb], [I, I])
    dist = np.linalg.norm(cb - ca)
    n = (cb - ca) / dist
    assert len(c["depth"]) == 1 and tuple(c["pair"][0]) == (0, 1)
    assert c["depth"][0] == pytest.approx(ra + rb - dist, abs=1e-14)
    np.testing.assert_allclose(c["normal"][0], n, atol=1e-14)
    np.testing.assert_allclose(c["point"][0], cb - rb * n, atol=1e-14)


def test_spheres_apart_give_nothing_and_within_the_margin_a_negative_depth():
    pos = [[0, 0, 0], [1.05, 0, 0]]
    assert len(_one(["sphere", "sphere"], [[0.5], [0.5]], pos, [I, I])["depth"]) == 0
    c = _one(["sphere", "sphere"], [[0.5], [0.5]], pos, [I, I], margin=0.1)
    assert c["depth"][0] == pytest.approx(-0.05, abs=1e-14)


@pytest.mark.parametrize("tilt", [0.0, 20.0, 135.0])
def test_sphere_plane_depth_and_normal_on_a_tilted_plane(tilt):
    qp = _q((1, 0.3, 0), tilt)
    n = q_to_matrix(qp)[:, 2]
    origin = np.array([0.2, 0.1, -0.3])
    centre = origin + 0.27 * n + np.array([0.4, -0.5, 0.1]) - (np.array([0.4, -0.5, 0.1]) @ n) * n
    c = _one(["plane", "sphere"], [[0], [0.3]], [origin, centre], [qp, I])
    assert c["depth"][0] == pytest.approx(0.03, abs=1e-13)
    np.testing.assert_allclose(c["normal"][0], n, atol=1e-14)
    np.testing.assert_allclose(c["point"][0], centre - 0.3 * n, atol=1e-13)


def test_static_bodies_never_collide_with_each_other():
    c = _one(["plane", "sphere"], [[0], [0.3]], [[0, 0, 0], [0, 0, 0.1]], [I, I], static=[True, True])
    assert len(c["depth"]) == 0


# ---- boxes on the ground ----

@pytest.mark.parametrize("yaw", [0.0, 45.0, 10.0])
def test_box_resting_flat_on_a_plane_gives_its_four_bottom_corners(yaw):
    h, pen = np.array([0.3, 0.2, 0.1]), 0.002
    q = _q(Z, yaw)
    centre = np.array([1.0, -2.0, h[2] - pen])
    c = _one(["plane", "box"], [[0], h], [[0, 0, 0], centre], [I, q])
    R = q_to_matrix(q)
    corners = {k: centre + R @ (h * [1 if k & 1 else -1, 1 if k & 2 else -1, -1]) for k in range(4)}
    assert sorted(c["feature"]) == [0, 1, 2, 3]
    for p, n, d, f in zip(c["point"], c["normal"], c["depth"], c["feature"]):
        np.testing.assert_allclose(p, corners[f], atol=1e-14)
        np.testing.assert_allclose(n, Z, atol=1e-15)
        assert d == pytest.approx(pen, abs=1e-14)


def test_box_on_its_edge_on_a_plane_gives_two_points():
    h, pen = np.array([0.5, 0.5, 0.5]), 0.001
    q = _q((0, 1, 0), 45.0)
    centre = np.array([0, 0, 0.5 * math.sqrt(2) - pen])
    c = _one(["plane", "box"], [[0], h], [[0, 0, 0], centre], [I, q])
    assert len(c["depth"]) == 2
    np.testing.assert_allclose(c["depth"], pen, atol=1e-12)
    np.testing.assert_allclose(sorted(c["point"][:, 1]), [-0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(c["point"][:, 0], 0.0, atol=1e-12)


def test_feature_ids_stay_the_same_while_a_box_slides_a_little():
    h = [0.3, 0.2, 0.1]
    ids = []
    for k in range(5):
        pos = [[0, 0, 0], [0.001 * k, 0.0005 * k, 0.099], [0.001 * k, 0.0005 * k, 0.299]]
        c = _one(["plane", "box", "box"], [[0], h, [0.2, 0.15, 0.1]], pos, [I, I, _q(Z, 20 + 0.2 * k)])
        ids.append(sorted(zip(c["pair"][:, 0], c["pair"][:, 1], c["feature"])))
    assert len(ids[0]) == 8
    assert all(x == ids[0] for x in ids)


@pytest.mark.parametrize("kind", ["box", "convex"])
def test_a_box_half_on_another_of_its_depth_keeps_its_feature_ids_whichever_side_round_off_puts_it(kind):
    """A pyramid's contact: a box resting half on another of the same depth (y), their
    side faces flush. Moved by ±1e-12 m in y — round-off in a settled stack — the upper
    box's bottom corners lie just inside or just outside the lower box's side planes; they
    stay the same corners with the same ids (a corner on a side plane counts as inside),
    not crossings of those planes, which would start the warm start from nothing."""
    h = np.array([0.1, 0.1, 0.1])
    shape = h if kind == "box" else Convex(np.array(list(itertools.product(*[(-x, x) for x in h]))))
    ids = set()
    for dy in (-1e-12, 0.0, 1e-12):
        poses = [((0.0, 0.0, 0.0), I), ((0.1, dy, 0.199), I)]
        if kind == "convex":
            poses = [shape.body_pose(p, q) for p, q in poses]
        c = _one([kind, kind], [shape, shape], [p for p, _ in poses], [q for _, q in poses])
        assert len(c["depth"]) == 4
        np.testing.assert_allclose(c["depth"], 0.001, atol=1e-12)
        np.testing.assert_allclose(sorted(c["point"][:, 0]), [0.0, 0.0, 0.1, 0.1], atol=1e-9)
        ids.add(tuple(sorted(c["feature"])))
    assert len(ids) == 1, ids


# ---- box against box ----

def _box_pair(ha, qa, ca, hb, qb, cb, margin=0.0):
    return _one(["box", "box"], [ha, hb], [ca, cb], [qa, qb], margin=margin)


def _check_surfaces(c, ca, qa, ha, cb, qb, hb):
    """Each point lies on b's surface and point + depth·n on a's."""
    for p, n, d in zip(c["point"], c["normal"], c["depth"]):
        assert abs(_box_sdf(p, cb, qb, hb)) < 1e-9
        assert abs(_box_sdf(p + d * n, ca, qa, ha)) < 1e-9
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("yaw", [0.0, 30.0])
def test_small_box_on_a_large_box_gives_its_four_bottom_corners(yaw):
    ha, hb, pen = np.array([1.0, 1.0, 0.5]), np.array([0.3, 0.2, 0.1]), 0.003
    qb = _q(Z, yaw)
    cb = np.array([0.1, 0.2, 0.5 + 0.1 - pen])
    c = _box_pair(ha, I, [0, 0, 0], hb, qb, cb)
    R = q_to_matrix(qb)
    bottoms = [cb + R @ (hb * [sx, sy, -1]) for sx in (-1, 1) for sy in (-1, 1)]
    assert len(c["depth"]) == 4
    np.testing.assert_allclose(c["depth"], pen, atol=1e-12)
    np.testing.assert_allclose(c["normal"], np.tile(Z, (4, 1)), atol=1e-12)
    for p in c["point"]:
        assert min(np.linalg.norm(p - b) for b in bottoms) < 1e-12
    _check_surfaces(c, [0, 0, 0], I, ha, cb, qb, hb)
    # the same with the roles swapped: the normal still points from a to b
    c2 = _box_pair(hb, qb, cb, ha, I, [0, 0, 0])
    np.testing.assert_allclose(c2["normal"], np.tile(-np.array(Z), (4, 1)), atol=1e-12)
    np.testing.assert_allclose(c2["depth"], pen, atol=1e-12)
    _check_surfaces(c2, cb, qb, hb, [0, 0, 0], I, ha)


def test_a_gap_below_the_margin_gives_the_face_points_with_negative_depth():
    h = np.array([0.5, 0.5, 0.5])
    cb = np.array([0.2, 0.1, 1.01])
    assert len(_box_pair(h, I, [0, 0, 0], h, I, cb)["depth"]) == 0
    c = _box_pair(h, I, [0, 0, 0], h, I, cb, margin=0.02)
    assert len(c["depth"]) == 4
    np.testing.assert_allclose(c["depth"], -0.01, atol=1e-12)
    np.testing.assert_allclose(c["normal"], np.tile(Z, (4, 1)), atol=1e-12)
    # the overlap of the two squares seen from above: x ∈ [−0.3, 0.5], y ∈ [−0.4, 0.5]
    assert {tuple(np.round(p[:2], 12)) for p in c["point"]} == {(-0.3, -0.4), (0.5, -0.4), (-0.3, 0.5), (0.5, 0.5)}


def test_equal_boxes_turned_45_degrees_reduce_the_octagon_to_four_points():
    h, pen = np.array([0.5, 0.5, 0.5]), 0.01
    cb = np.array([0.0, 0.0, 1.0 - pen])
    c = _box_pair(h, I, [0, 0, 0], h, _q(Z, 45.0), cb)
    assert len(c["depth"]) == 4
    np.testing.assert_allclose(c["depth"], pen, atol=1e-12)
    # the octagon of the two squares' overlap: its vertices at radius 0.5/cos(22.5°)
    r = np.linalg.norm(c["point"][:, :2], axis=1)
    np.testing.assert_allclose(r, 0.5 / math.cos(math.radians(22.5)), atol=1e-12)
    np.testing.assert_allclose(c["point"][:, 2], 0.5 - pen, atol=1e-12)
    _check_surfaces(c, [0, 0, 0], I, h, cb, _q(Z, 45.0), h)


def test_crossed_edges_give_one_point_with_the_edge_normal():
    # a: its top an edge along y; b: its bottom an edge along x; they cross at the origin
    h, pen = np.array([0.5, 0.5, 0.5]), 0.004
    qa, qb = _q((0, 1, 0), 45.0), _q((1, 0, 0), 45.0)
    top = 0.5 * math.sqrt(2)
    ca, cb = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 2 * top - pen])
    c = _box_pair(h, qa, ca, h, qb, cb)
    assert len(c["depth"]) == 1 and c["feature"][0] >= 3000
    np.testing.assert_allclose(c["normal"][0], Z, atol=1e-12)
    assert c["depth"][0] == pytest.approx(pen, abs=1e-12)
    np.testing.assert_allclose(c["point"][0], [0, 0, top - pen], atol=1e-12)
    sep, axis = _sat(ca, qa, h, cb, qb, h)
    assert -sep == pytest.approx(pen, abs=1e-12)
    np.testing.assert_allclose(axis, Z, atol=1e-12)
    _check_surfaces(c, ca, qa, h, cb, qb, h)


def test_random_box_pairs_agree_with_the_separating_axis_brute_force():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(300):
        ha, hb = rng.uniform(0.1, 0.6, 3), rng.uniform(0.1, 0.6, 3)
        qa = rng.normal(size=4)
        qb = rng.normal(size=4)
        qa, qb = qa / np.linalg.norm(qa), qb / np.linalg.norm(qb)
        cb = rng.uniform(-0.9, 0.9, 3)
        c = _box_pair(ha, qa, [0, 0, 0], hb, qb, cb)
        sep, axis = _sat([0, 0, 0], qa, ha, cb, qb, hb)
        if sep > 1e-9:
            assert len(c["depth"]) == 0
            continue
        if sep > -1e-9:
            continue
        hits += 1
        assert 1 <= len(c["depth"]) <= 4
        # the normal: an axis whose separation is the SAT maximum, or within the face
        # preference (5 % + 1e-5 m, twice); no point deeper than the overlap along it
        n = c["normal"][0]
        A, B = q_to_matrix(qa), q_to_matrix(qb)
        ra = np.sum(ha * np.abs(A.T @ n))
        rb = np.sum(hb * np.abs(B.T @ n))
        sep_n = abs(cb @ n) - ra - rb
        assert (sep - 2e-5) / 0.95 ** 2 - 1e-9 <= sep_n <= sep + 1e-9
        assert c["depth"].max() <= -sep_n + 1e-9
        _check_surfaces(c, [0, 0, 0], qa, ha, cb, qb, hb)
    assert hits > 100


# ---- capsules and cylinders ----

def test_parallel_capsules_touch_at_the_two_ends_of_their_overlap():
    qx = _q((0, 1, 0), 90.0)                 # local z along world x
    ra, rb, gap = 0.1, 0.15, 0.24
    c = _one(["capsule", "capsule"], [[ra, 0.5], [rb, 0.4]], [[0, 0, 0], [0.3, 0.0, gap]], [qx, qx])
    assert len(c["depth"]) == 2 and sorted(c["feature"]) == [1, 2]
    np.testing.assert_allclose(c["depth"], ra + rb - gap, atol=1e-12)
    np.testing.assert_allclose(c["normal"], np.tile(Z, (2, 1)), atol=1e-12)
    np.testing.assert_allclose(sorted(c["point"][:, 0]), [-0.1, 0.5], atol=1e-12)   # overlap [0.3−0.4, 0.5]
    np.testing.assert_allclose(c["point"][:, 2], gap - rb, atol=1e-12)


def test_crossing_capsules_touch_at_one_point():
    ra, rb = 0.1, 0.15
    c = _one(["capsule", "capsule"], [[ra, 0.5], [rb, 0.4]], [[0, 0, 0], [0.05, -0.1, 0.2]],
             [_q((0, 1, 0), 90.0), _q((1, 0, 0), 90.0)])
    assert len(c["depth"]) == 1 and c["feature"][0] == 0
    assert c["depth"][0] == pytest.approx(ra + rb - 0.2, abs=1e-12)
    np.testing.assert_allclose(c["normal"][0], Z, atol=1e-12)
    np.testing.assert_allclose(c["point"][0], [0.05, 0.0, 0.2 - rb], atol=1e-12)   # b's axis crosses y = 0


def test_capsule_on_a_plane_lying_and_standing():
    r, hl = 0.1, 0.3
    c = _one(["plane", "capsule"], [[0], [r, hl]], [[0, 0, 0], [0, 0, r - 0.002]], [I, _q((0, 1, 0), 90.0)])
    assert sorted(c["feature"]) == [0, 1]
    np.testing.assert_allclose(c["depth"], 0.002, atol=1e-12)
    np.testing.assert_allclose(sorted(c["point"][:, 0]), [-hl, hl], atol=1e-12)
    c = _one(["plane", "capsule"], [[0], [r, hl]], [[0, 0, 0], [0, 0, hl + r - 0.002]], [I, I])
    assert list(c["feature"]) == [0] and c["depth"][0] == pytest.approx(0.002, abs=1e-12)


def test_sphere_against_capsule_and_box():
    c = _one(["sphere", "capsule"], [[0.2], [0.1, 0.5]], [[0.3, 0.0, 0.25], [0, 0, 0]], [I, _q((0, 1, 0), 90.0)])
    assert c["depth"][0] == pytest.approx(0.05, abs=1e-12)
    np.testing.assert_allclose(c["normal"][0], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(c["point"][0], [0.3, 0, 0.1], atol=1e-12)
    # sphere over a box's corner: the normal along the corner diagonal
    h = np.array([0.5, 0.5, 0.5])
    centre = h + 0.1 * np.ones(3) / math.sqrt(3)
    c = _one(["sphere", "box"], [[0.15], h], [centre, [0, 0, 0]], [I, I])
    assert c["depth"][0] == pytest.approx(0.05, abs=1e-12)
    np.testing.assert_allclose(c["normal"][0], -np.ones(3) / math.sqrt(3), atol=1e-12)
    np.testing.assert_allclose(c["point"][0], h, atol=1e-12)


def test_capsule_lying_on_a_box_gives_two_points_and_across_an_edge_one():
    h = np.array([0.5, 0.5, 0.5])
    r, hl, pen = 0.1, 0.3, 0.003
    qx = _q((0, 1, 0), 90.0)
    c = _one(["capsule", "box"], [[r, hl], h], [[0.1, 0.2, 0.5 + r - pen], [0, 0, 0]], [qx, I])
    assert sorted(c["feature"]) == [1, 2]
    np.testing.assert_allclose(c["depth"], pen, atol=1e-12)
    np.testing.assert_allclose(c["normal"], np.tile([0, 0, -1.0], (2, 1)), atol=1e-12)
    np.testing.assert_allclose(sorted(c["point"][:, 0]), [0.1 - hl, 0.1 + hl], atol=1e-12)
    np.testing.assert_allclose(c["point"][:, 2], 0.5, atol=1e-12)
    # overhanging the +x edge: clipped to the face, the second point at x = 0.5
    c = _one(["capsule", "box"], [[r, hl], h], [[0.4, 0.0, 0.5 + r - pen], [0, 0, 0]], [qx, I])
    np.testing.assert_allclose(sorted(c["point"][:, 0]), [0.1, 0.5], atol=1e-12)
    # tilted across the box's top edge along y at x = 0.5: one point on the edge
    q = _q((0, 1, 0), -45.0)                 # axis (−1, 0, 1)/√2, across the edge's diagonal
    d = r - pen                             # the segment passes at distance d from the edge
    centre = np.array([0.5, 0.1, 0.5]) + d * np.array([1, 0, 1]) / math.sqrt(2)
    c = _one(["capsule", "box"], [[r, hl], h], [centre, [0, 0, 0]], [q, I])
    assert list(c["feature"]) == [0]
    assert c["depth"][0] == pytest.approx(pen, abs=1e-7)
    np.testing.assert_allclose(c["normal"][0], -np.array([1, 0, 1]) / math.sqrt(2), atol=1e-6)
    np.testing.assert_allclose(c["point"][0], [0.5, 0.1, 0.5], atol=1e-6)


def test_cylinder_on_a_plane_standing_and_lying():
    r, hl, pen = 0.2, 0.3, 0.002
    c = _one(["plane", "cylinder"], [[0], [r, hl]], [[0, 0, 0], [0, 0, hl - pen]], [I, I])
    assert len(c["depth"]) == 4
    np.testing.assert_allclose(c["depth"], pen, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c["point"][:, :2], axis=1), r, atol=1e-12)
    c = _one(["plane", "cylinder"], [[0], [r, hl]], [[0, 0, 0], [0, 0, r - pen]], [I, _q((1, 0, 0), 90.0)])
    assert len(c["depth"]) == 2
    np.testing.assert_allclose(c["depth"], pen, atol=1e-12)
    np.testing.assert_allclose(sorted(c["point"][:, 1]), [-hl, hl], atol=1e-12)
    # tilted 30° onto its rim: the deepest rim point
    t = math.radians(30.0)
    low = r * math.sin(t) + hl * math.cos(t)
    c = _one(["plane", "cylinder"], [[0], [r, hl]], [[0, 0, 0], [0, 0, low - pen]], [I, _q((1, 0, 0), 30.0)])
    assert c["depth"].max() == pytest.approx(pen, abs=1e-12)


# ---- pairs and the broad phase ----

def test_joined_pairs_are_skipped():
    kinds = ["box", "box", "box"]
    params = [[0.5, 0.5, 0.5]] * 3
    pos = [[0, 0, 0], [0.9, 0, 0], [1.8, 0, 0]]
    c = _one(kinds, params, pos, [I] * 3)
    assert {tuple(p) for p in c["pair"]} == {(0, 1), (1, 2)}
    c = _one(kinds, params, pos, [I] * 3, skip=[[1, 0]])
    assert {tuple(p) for p in c["pair"]} == {(1, 2)}


def _corners_aabb(c, q, h):
    R = q_to_matrix(q)
    pts = np.array([c + R @ (h * s) for s in itertools.product((-1, 1), repeat=3)])
    return pts.min(axis=0), pts.max(axis=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_broad_phase_finds_exactly_the_overlapping_bounding_boxes(seed):
    rng = np.random.default_rng(seed)
    n = 200
    h = rng.uniform(0.05, 0.3, (n, 3))
    pos = rng.uniform(-2.0, 2.0, (n, 3)) * [1.0, 1.0, 0.3]
    quats = rng.normal(size=(n, 4))
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    shapes = make_shapes(["box"] * n, h, pos, quats)
    keys = joined_keys(np.zeros((0, 2)), n)
    pairs = np.zeros((100, 2), np.int64)
    count = candidate_pairs(*shapes, keys, 0.0, pairs)
    assert count > 100                           # more than fit: the count says how many to make room for
    pairs = np.zeros((count, 2), np.int64)
    assert candidate_pairs(*shapes, keys, 0.0, pairs) == count
    found = {tuple(p) for p in pairs[:count]}
    boxes = [_corners_aabb(pos[i], quats[i], h[i]) for i in range(n)]
    brute = {(i, j) for i in range(n) for j in range(i + 1, n)
             if np.all(boxes[i][0] <= boxes[j][1]) and np.all(boxes[j][0] <= boxes[i][1])}
    assert len(found) == count and found == brute and len(brute) > 50
