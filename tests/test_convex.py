"""Convex and Compound shapes: hulls and mass properties against closed forms, validation."""
import math

import numpy as np
import pytest

from physics import Box, Capsule, Compound, Convex, Plane, Sphere
from physics.quat import q_from_axis_angle, q_to_matrix

I = (0.0, 0.0, 0.0, 1.0)


def _box_points(h):
    hx, hy, hz = h
    return np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])


def _fibonacci_sphere(n, r):
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    phi = math.pi * (1.0 + math.sqrt(5.0)) * k
    s = np.sqrt(1.0 - z * z)
    return r * np.column_stack([s * np.cos(phi), s * np.sin(phi), z])


# ---- mass properties against closed forms ----

def test_box_hull_has_the_box_volume_inertia_and_faces():
    h = (0.3, 0.5, 0.7)
    c = Convex(_box_points(h))
    assert len(c.vertices) == 8 and sorted(len(f) for f in c.faces) == [4] * 6
    assert c.volume() == pytest.approx(8 * 0.3 * 0.5 * 0.7, rel=1e-14)
    np.testing.assert_allclose(c.principal_inertia(2.0), Box(h).principal_inertia(2.0), rtol=1e-13)
    np.testing.assert_allclose(c.frame[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(c.frame[1], I, atol=1e-15)


def test_box_points_with_edge_midpoints_and_inner_points_give_the_8_corners():
    h = np.array([0.3, 0.5, 0.7])
    grid = np.array([[x, y, z] for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)]) * h
    inner = np.random.default_rng(1).uniform(-1, 1, (200, 3)) * h
    c = Convex(np.vstack([grid, inner]))
    assert len(c.vertices) == 8 and len(c.faces) == 6
    np.testing.assert_allclose(np.sort(np.abs(c.vertices), axis=0), np.tile(h, (8, 1)), atol=1e-15)


def test_a_turned_and_moved_box_finds_its_centre_and_axes_back():
    h = np.array([0.2, 0.45, 0.8])
    q = q_from_axis_angle((0.3, -1.0, 0.5), 0.7)
    R, t = q_to_matrix(q), np.array([1.0, -2.0, 0.5])
    pts = _box_points(h) @ R.T + t
    c = Convex(pts)
    np.testing.assert_allclose(c.frame[0], t, atol=1e-13)
    # the body frame is the box's own (each axis up to its sign): the moments are the box's
    np.testing.assert_allclose(c.principal_inertia(3.0), Box(tuple(h)).principal_inertia(3.0), rtol=1e-12)
    np.testing.assert_allclose(np.abs(q_to_matrix(c.frame[1]).T @ R), np.eye(3), atol=1e-12)
    # body_pose places the body so that its vertices fall on the given points
    pos, quat = c.body_pose((0, 0, 0), I)
    world = c.vertices @ q_to_matrix(quat).T + pos
    d = np.linalg.norm(world[:, None, :] - pts[None, :, :], axis=2)
    assert d.min(axis=1).max() < 1e-13
    back = c.source_pose(pos, quat)
    np.testing.assert_allclose(back[0], 0.0, atol=1e-13)
    np.testing.assert_allclose(abs(back[1][3]), 1.0, atol=1e-13)


def test_tetrahedron_volume_centroid_and_inertia_are_the_closed_forms():
    a, b, c = 0.6, 0.9, 1.3
    tet = Convex([[0, 0, 0], [a, 0, 0], [0, b, 0], [0, 0, c]])
    vol = a * b * c / 6.0
    assert tet.volume() == pytest.approx(vol, rel=1e-14)
    np.testing.assert_allclose(tet.frame[0], [a / 4, b / 4, c / 4], atol=1e-15)
    # ∫x² dV = a³bc/60, ∫xy dV = a²b²c/120 over the corner tetrahedron; about the centroid:
    m2 = np.array([a * a, b * b, c * c]) * vol / 10.0           # ∫ x_i² dV
    cross = lambda u, v: u * v * vol / 20.0                       # ∫ x_i x_j dV
    g = np.array([a, b, c]) / 4.0
    S = np.diag(m2)
    for i, j, (u, v) in ((0, 1, (a, b)), (0, 2, (a, c)), (1, 2, (b, c))):
        S[i, j] = S[j, i] = cross(u, v)
    S -= vol * np.outer(g, g)
    tensor = np.trace(S) * np.eye(3) - S                          # per unit density
    np.testing.assert_allclose(np.sort(tet.principal_inertia(vol)), np.sort(np.linalg.eigvalsh(tensor)),
                               rtol=1e-12)
    R = q_to_matrix(tet.frame[1])
    np.testing.assert_allclose(R.T @ tensor @ R, np.diag(tet.principal_inertia(vol)), atol=1e-14)


def test_finely_tessellated_sphere_lies_between_its_inner_and_outer_balls():
    r = 0.25
    s = Convex(_fibonacci_sphere(1000, r))
    # the hull holds the ball of radius r_in (its nearest face plane) and lies in the ball of radius r
    n = np.array([np.cross(s.vertices[f[1]] - s.vertices[f[0]], s.vertices[f[2]] - s.vertices[f[0]])
                  for f in s.faces])
    n /= np.linalg.norm(n, axis=1)[:, None]
    r_in = min(float(n[k] @ s.vertices[f[0]]) for k, f in enumerate(s.faces))
    assert r_in > 0.995 * r
    V = s.volume()
    assert 4 / 3 * math.pi * r_in ** 3 <= V <= 4 / 3 * math.pi * r ** 3
    assert V == pytest.approx(4 / 3 * math.pi * r ** 3, rel=0.015)
    unit = s.principal_inertia(V)                                 # unit density
    assert np.all(8 / 15 * math.pi * r_in ** 5 <= unit) and np.all(unit <= 8 / 15 * math.pi * r ** 5)
    assert np.linalg.norm(s.frame[0]) < r - r_in


def test_compound_mass_properties_are_the_parallel_axis_sum():
    box, ball = Box((0.4, 0.3, 0.2)), Sphere(0.25)
    offset = np.array([0.1, -0.2, 0.9])
    c = Compound([box, (ball, offset)])
    vb, vs = box.volume(), ball.volume()
    com = vs * offset / (vb + vs)
    np.testing.assert_allclose(c.frame[0], com, atol=1e-15)
    # about the common centre: each piece's own inertia + v (|d|² E − d dᵀ)
    T = np.diag(box.principal_inertia(vb)) + vb * (com @ com * np.eye(3) - np.outer(com, com))
    d = offset - com
    T += np.diag(ball.principal_inertia(vs)) + vs * (d @ d * np.eye(3) - np.outer(d, d))
    m = 3.0
    np.testing.assert_allclose(np.sort(c.principal_inertia(m)), np.sort(np.linalg.eigvalsh(T)) * m / (vb + vs),
                               rtol=1e-12)
    assert c.volume() == pytest.approx(vb + vs, rel=1e-15)
    R = q_to_matrix(c.frame[1])
    for (shape, p, q), given in zip(c.pieces, (np.zeros(3), offset)):
        np.testing.assert_allclose(R @ p + c.frame[0], given, atol=1e-14)


def test_compound_of_a_convex_box_turned_is_the_box():
    h = (0.1, 0.2, 0.3)
    q = q_from_axis_angle((0, 0, 1), 0.4)
    hull = Convex(_box_points(h) + [5.0, 0.0, 0.0])             # the points' frame is off the box
    c = Compound([(hull, (-5.0, 1.0, 2.0), q)])
    np.testing.assert_allclose(c.frame[0], np.array([-5.0, 1.0, 2.0]) + q_to_matrix(q) @ [5.0, 0.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(c.principal_inertia(1.0), Box(h).principal_inertia(1.0), rtol=1e-12)
    shape, p, pq = c.pieces[0]
    np.testing.assert_allclose(p, 0.0, atol=1e-14)
    assert abs(abs(pq[3]) - 1.0) < 1e-12


def test_compound_frame_and_unit_inertia_as_given():
    pieces = [(Capsule(0.05, 0.2), (0, 0, 0.2)), (Box((0.1, 0.1, 0.1)), (0, 0, 0.5))]
    q = q_from_axis_angle((1, 0, 0), 0.3)
    c = Compound(pieces, frame=((0, 0, 0.3), q), unit_inertia=(0.02, 0.02, 0.01))
    np.testing.assert_allclose(c.principal_inertia(2.0), [0.04, 0.04, 0.02])
    np.testing.assert_allclose(c.frame[0], [0, 0, 0.3])
    R = q_to_matrix(q)
    for (_, p, _), given in zip(c.pieces, ((0, 0, 0.2), (0, 0, 0.5))):
        np.testing.assert_allclose(R @ p + [0, 0, 0.3], given, atol=1e-14)


# ---- validation ----

@pytest.mark.parametrize("points, words", [
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "at least 4 points"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.5, 0]], "flat"),
    ([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], "collinear"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, float("nan")]], "finite"),
    ([[0, 0], [1, 0], [0, 1], [1, 1]], "(n, 3)"),
    ("cube", "(n, 3)"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1e7]], "within"),
])
def test_bad_points_are_refused_naming_the_shape(points, words):
    with pytest.raises(ValueError) as e:
        Convex(points)
    assert str(e.value).startswith("Convex:") and words in str(e.value)


def test_a_hull_with_too_many_vertices_is_refused():
    with pytest.raises(ValueError, match=r"Convex: the hull has .* vertices, more than 1024"):
        Convex(_fibonacci_sphere(1500, 1.0))


@pytest.mark.parametrize("pieces, words", [
    ([], "non-empty"),
    ([Plane()], "pieces[0]"),
    ([Box((1, 1, 1)), Compound([Box((1, 1, 1))])], "pieces[1]"),
    ([(Box((1, 1, 1)), (0, float("nan"), 0))], "position"),
    ([(Box((1, 1, 1)), (0, 0, 0), (0, 0, 0, 0))], "orientation"),
    ([(Box((1, 1, 1)), (0, 0, 0), I, "x")], "pieces[0]"),
])
def test_bad_compound_pieces_are_refused(pieces, words):
    with pytest.raises(ValueError) as e:
        Compound(pieces)
    assert str(e.value).startswith("Compound:") and words in str(e.value)


def test_compound_unit_inertia_must_be_physical():
    with pytest.raises(ValueError, match="triangle inequality"):
        Compound([Box((1, 1, 1))], frame=((0, 0, 0), I), unit_inertia=(1.0, 1.0, 3.0))
    with pytest.raises(ValueError, match="needs the frame"):
        Compound([Box((1, 1, 1))], unit_inertia=(1.0, 1.0, 1.0))


# ---- narrow phase: hulls against the separating-axis brute force ----

from physics.collision import detect  # noqa: E402

REL, ABS = 0.05, 1e-5                   # the face rule of box_box.py and convex.py


def _random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def _world(c, pos, q):
    """A hull's vertices, faces (polygons), face normals and offsets in the world."""
    R = q_to_matrix(q)
    V = c.vertices @ R.T + pos
    N, D = [], []
    for f in c.faces:
        p = V[f]
        n = sum(np.cross(p[k] - p[0], p[k + 1] - p[0]) for k in range(1, len(f) - 1))
        n /= np.linalg.norm(n)
        N.append(n)
        D.append(np.max(p @ n))
    edges = {tuple(sorted((int(f[k]), int(f[(k + 1) % len(f)])))) for f in c.faces for k in range(len(f))}
    E = np.array([V[j] - V[i] for i, j in edges])
    return V, list(c.faces), np.array(N), np.array(D), E


def _tol(s):
    return s + REL * abs(s) + ABS


def _sat(A, B):
    """Brute-force SAT over every face normal of A and B and every edge pair's cross
    product, with the face rule: (kind 'a'/'b'/'edge', unit axis from A to B, its
    separation, the face index, the closest call among the decisions)."""
    VA, FA, NA, DA, EA = A
    VB, FB, NB, DB, EB = B
    sep_a = (VB @ NA.T).min(axis=0) - DA
    sep_b = (VA @ NB.T).min(axis=0) - DB
    ia, ib = int(np.argmax(sep_a)), int(np.argmax(sep_b))
    sa, sb = sep_a[ia], sep_b[ib]
    L = np.cross(EA[:, None, :], EB[None, :, :]).reshape(-1, 3)
    size = (np.linalg.norm(EA, axis=1)[:, None] * np.linalg.norm(EB, axis=1)[None, :]).reshape(-1)
    keep = np.linalg.norm(L, axis=1) > 1e-9 * size
    L = L[keep] / np.linalg.norm(L[keep], axis=1)[:, None]
    pa, pb = VA @ L.T, VB @ L.T
    fwd = pb.min(axis=0) - pa.max(axis=0)
    bwd = pa.min(axis=0) - pb.max(axis=0)
    sep_e = np.maximum(fwd, bwd)
    ie = int(np.argmax(sep_e))
    se = sep_e[ie]
    edge_axis = L[ie] if fwd[ie] >= bwd[ie] else -L[ie]
    kind, face_sep, axis, face = "a", sa, NA[ia], ia
    close = [abs(sb - _tol(sa))]
    if sb > _tol(sa):
        kind, face_sep, axis, face = "b", sb, -NB[ib], ib
    close.append(abs(se - _tol(face_sep)))
    if se > _tol(face_sep):
        kind, axis, face, face_sep = "edge", edge_axis, -1, se
    srt_a, srt_b = np.sort(sep_a), np.sort(sep_b)
    close += [srt_a[-1] - srt_a[-2], srt_b[-1] - srt_b[-2]]
    return kind, axis, face_sep, face, max(sa, sb, se), min(close)


def _inside_polygon(p, poly, n, tol=1e-12):
    """Whether point p projects inside the convex polygon (counter-clockwise about n)."""
    m = len(poly)
    return all(np.cross(poly[(k + 1) % m] - poly[k], p - poly[k]) @ n >= -tol for k in range(m))


def _random_hull(rng, scale, points=(6, 30)):
    n = int(rng.integers(*points))
    return Convex(rng.normal(size=(n, 3)) * rng.uniform(0.5, 1.5, 3) * scale)


def test_the_hill_climbing_support_finds_the_extreme_vertex():
    from physics.collision.gjk import SCAN_VERTICES, support
    from physics.collision.hulls import HullTable
    rng = np.random.default_rng(4)
    table = HullTable()
    shapes = [Convex(_fibonacci_sphere(300, 1.0) * [1.0, 0.6, 0.3] + rng.normal(size=(300, 3)) * 0.01)
              for _ in range(3)]
    index = [table.add_convex(c) for c in shapes]
    hulls = table.arrays()
    for c, h in zip(shapes, index):
        assert len(c.vertices) > SCAN_VERTICES
        for d in rng.normal(size=(300, 3)):
            k, x, y, z = support(hulls, h, 0.0, *d)
            assert np.array([x, y, z]) @ d == pytest.approx((c.vertices @ d).max(), abs=1e-15)


@pytest.mark.parametrize("points", [(6, 30), (30, 80)], ids=["small", "large"])
def test_random_hull_pairs_agree_with_the_separating_axis_brute_force(points):
    rng = np.random.default_rng(7)
    overlapping = exact_depth = edges = missed = 0
    for _ in range(400):
        ca, cb = _random_hull(rng, 0.3, points), _random_hull(rng, 0.3, points)
        qa, qb = _random_quat(rng), _random_quat(rng)
        pa, pb = np.zeros(3), rng.uniform(-0.8, 0.8, 3)
        A, B = _world(ca, pa, qa), _world(cb, pb, qb)
        kind, axis, sep, face, s_max, close = _sat(A, B)
        c = detect(["convex", "convex"], [ca, cb], [pa, pb], [qa, qb])
        if s_max > 1e-9:
            assert len(c["depth"]) == 0
            continue
        if s_max > -1e-9 or close < 1e-9:
            continue                                       # touching, or a tie of the face rule
        overlapping += 1
        assert 1 <= len(c["depth"]) <= 4
        assert np.all(c["pair"] == [0, 1])
        n = c["normal"][0]
        assert np.abs(c["normal"] - n).max() < 1e-12       # one normal for the manifold
        np.testing.assert_allclose(n, axis, atol=1e-6)
        assert c["depth"].max() <= -sep + 1e-9
        # the brute-force extreme point lies within the reference face: then the manifold
        # reaches it (the incident face is one around it), depth to 1e-9
        if kind == "edge":
            edges += 1
            exact = True
        else:
            (VR, FR, NR, DR, _), (VI, FI, NI, DI, _) = (A, B) if kind == "a" else (B, A)
            v = int(np.argmin(VI @ NR[face]))
            exact = _inside_polygon(VI[v], VR[FR[face]], NR[face])
        if exact:
            exact_depth += 1
            assert c["depth"].max() == pytest.approx(-sep, abs=1e-9)
        # every point on b's surface and its partner point + depth·n on a's — except when
        # even the incident hull's deepest vertex lies outside the reference face (an overlap
        # of half the hulls' size: one point, that vertex, whose partner is on the
        # reference face's plane, outside the face)
        for p, d in zip(c["point"], c["depth"]):
            q = p + d * n
            on_b, on_a = abs(np.max(B[2] @ p - B[3])), abs(np.max(A[2] @ q - A[3]))
            if max(on_a, on_b) > 1e-9:
                assert len(c["depth"]) == 1 and kind != "edge" and -sep > 0.25      # hulls ~0.3-0.6 m across
                if kind == "a":
                    assert on_b <= 1e-9 and abs(A[2][face] @ q - A[3][face]) <= 1e-9
                else:
                    assert on_a <= 1e-9 and abs(B[2][face] @ p - B[3][face]) <= 1e-9
                missed += 1
    assert overlapping > 150 and exact_depth > 100 and edges > 10 and missed <= 0.03 * overlapping


def _canon(c):
    """Contacts as sorted rows (point, normal, depth), for comparing unordered manifolds."""
    rows = np.column_stack([c["point"], c["normal"], c["depth"]])
    return rows[np.lexsort(np.round(rows, 9).T[::-1])]


def test_a_box_given_as_a_hull_gives_the_box_narrow_phase_contacts():
    rng = np.random.default_rng(11)
    compared = 0
    for k in range(300):
        ha, hb = rng.uniform(0.1, 0.6, 3), rng.uniform(0.1, 0.6, 3)
        qa, qb = _random_quat(rng), _random_quat(rng)
        pa, pb = np.zeros(3), rng.uniform(-0.9, 0.9, 3)
        if k % 3 == 0:                                     # resting face on face, a little turned
            qa = np.array(I)
            qb = q_from_axis_angle((0.1, 0.2, 1.0), rng.uniform(-1, 1))
            pb = np.array([*rng.uniform(-0.3, 0.3, 2), ha[2] + hb[2] - rng.uniform(0, 0.01)])
        boxes = detect(["box", "box"], [ha, hb], [pa, pb], [qa, qb], margin=0.01)
        hulls = detect(["convex", "convex"], [Convex(_box_points(ha)), Convex(_box_points(hb))], [pa, pb], [qa, qb],
                       margin=0.01)
        mixed = detect(["box", "convex"], [ha, Convex(_box_points(hb))], [pa, pb], [qa, qb], margin=0.01)
        assert len(boxes["depth"]) == len(hulls["depth"]) == len(mixed["depth"])
        if len(boxes["depth"]):
            compared += 1
            np.testing.assert_allclose(_canon(hulls), _canon(boxes), atol=1e-12)
            np.testing.assert_allclose(_canon(mixed), _canon(boxes), atol=1e-12)
    assert compared > 100


# ---- hulls against planes, spheres and capsules: the primitives' own kernels as references ----

def _turned(rng):
    return [_random_quat(rng) for _ in range(2)]


def test_a_hull_on_a_plane_gives_its_deepest_vertices_and_a_box_hull_the_box_corners():
    rng = np.random.default_rng(5)
    plane_q = q_from_axis_angle((1, 0.5, 0), 0.3)
    n = q_to_matrix(plane_q)[:, 2]
    for _ in range(50):
        h = rng.uniform(0.05, 0.5, 3)
        q = _random_quat(rng)
        pos = n * rng.uniform(0.0, 0.5) + rng.uniform(-1, 1, 3) * [1, 1, 0]
        box = detect(["plane", "box"], [[0], h], [[0, 0, 0], pos], [plane_q, q], margin=0.01)
        hull = detect(["plane", "convex"], [[0], Convex(_box_points(h))], [[0, 0, 0], pos], [plane_q, q], margin=0.01)
        assert len(box["depth"]) == len(hull["depth"])
        if len(box["depth"]):
            np.testing.assert_allclose(_canon(hull), _canon(box), atol=1e-12)
        c = _random_hull(rng, 0.2)
        got = detect(["plane", "convex"], [[0], c], [[0, 0, 0], pos], [plane_q, q], margin=0.01)
        heights = (c.vertices @ q_to_matrix(q).T + pos) @ n
        below = np.sort(heights[heights < 0.01])
        assert len(got["depth"]) == min(4, len(below))
        if len(below):
            assert got["depth"].max() == pytest.approx(-below[0], abs=1e-12)
            np.testing.assert_allclose(got["normal"], np.tile(n, (len(got["depth"]), 1)), atol=1e-12)


def test_sphere_against_a_box_hull_is_the_sphere_box_contact():
    rng = np.random.default_rng(6)
    seen = inside = 0
    for _ in range(300):
        h, r = rng.uniform(0.1, 0.5, 3), rng.uniform(0.05, 0.3)
        qb = _random_quat(rng)
        cs = rng.uniform(-0.6, 0.6, 3)
        box = detect(["sphere", "box"], [[r], h], [cs, [0, 0, 0]], [I, qb], margin=0.01)
        hull = detect(["sphere", "convex"], [[r], Convex(_box_points(h))], [cs, [0, 0, 0]], [I, qb], margin=0.01)
        assert len(box["depth"]) == len(hull["depth"])
        if len(box["depth"]):
            seen += 1
            inside += box["depth"][0] > r
            for key in ("point", "normal", "depth"):
                np.testing.assert_allclose(hull[key], box[key], atol=1e-9)
    assert seen > 100 and inside > 10


def test_capsule_against_a_box_hull_is_the_capsule_box_contact():
    rng = np.random.default_rng(8)
    seen = two = deep = 0
    for k in range(300):
        h, r, hl = rng.uniform(0.1, 0.5, 3), rng.uniform(0.03, 0.2), rng.uniform(0.05, 0.4)
        qa, qb = _random_quat(rng), _random_quat(rng)
        ca = rng.uniform(-0.8, 0.8, 3)
        if k % 3 == 0:                          # lying on the top face, nearly parallel
            qb = np.array(I)
            qa = q_from_axis_angle(np.cross((0, 0, 1), rng.normal(size=3)), math.pi / 2 + rng.uniform(-0.05, 0.05))
            ca = np.array([*rng.uniform(-0.1, 0.1, 2), h[2] + r - rng.uniform(0.0, 0.005)])
        box = detect(["capsule", "box"], [[r, hl], h], [ca, [0, 0, 0]], [qa, qb], margin=0.01)
        hull = detect(["capsule", "convex"], [[r, hl], Convex(_box_points(h))], [ca, [0, 0, 0]], [qa, qb],
                      margin=0.01)
        assert len(box["depth"]) == len(hull["depth"])
        if len(box["depth"]) == 0:
            continue
        if box["depth"].max() < r:              # the core segment outside the box: the same contact
            seen += 1
            two += len(box["depth"]) == 2
            np.testing.assert_allclose(_canon(hull), _canon(box), atol=1e-7)
        else:
            # the core inside: capsule_box takes the deepest point of the segment; the hull
            # kernel the least translation (EPA), the separating-axis brute force over the
            # box's faces and the segment × the box's edges
            deep += 1
            R, w = q_to_matrix(qb), q_to_matrix(qa)[:, 2]
            ends = np.array([ca - hl * w, ca + hl * w])
            corners = _box_points(h) @ R.T
            axes = [R[:, i] for i in range(3)] + [np.cross(w, R[:, i]) / np.linalg.norm(np.cross(w, R[:, i]))
                                                  for i in range(3)]
            best, best_axis = -np.inf, None
            for L in axes:
                s1, s2 = ends @ L, corners @ L
                for sgn, sep in ((1, s2.min() - s1.max()), (-1, s1.min() - s2.max())):
                    if sep > best:
                        best, best_axis = sep, sgn * L
            assert hull["depth"].max() == pytest.approx(r - best, abs=1e-9)       # 1 point, or 2 along a face
            np.testing.assert_allclose(hull["normal"], np.tile(best_axis, (len(hull["depth"]), 1)), atol=1e-6)
    assert seen > 80 and two > 40 and deep > 10


# ---- compounds ----

def test_a_compound_of_one_hull_collides_as_the_hull_and_two_boxes_give_four_points_on_a_plane():
    rng = np.random.default_rng(9)
    for _ in range(30):
        c = _random_hull(rng, 0.2)
        one = Compound([c])
        q = _random_quat(rng)
        for kind, other, par in (("plane", [0], I), ("sphere", [0.2], I), ("box", [0.2, 0.3, 0.1], _random_quat(rng))):
            pos = rng.uniform(-0.3, 0.3, 3)
            a = detect([kind, "convex"], [other, c], [[0, 0, 0], pos], [par, q], margin=0.01)
            bp, bq = one.body_pose(*c.source_pose(pos, q))
            b = detect([kind, "compound"], [other, one], [[0, 0, 0], bp], [par, bq], margin=0.01)
            assert len(a["depth"]) == len(b["depth"])
            if len(a["depth"]):
                np.testing.assert_allclose(_canon(b), _canon(a), atol=1e-9)
    # a dumbbell of two boxes resting on the floor: the 8 corners below reduced to 4, the outer ones
    bar = Compound([(Box((0.1, 0.1, 0.1)), (-0.5, 0, 0)), (Box((0.1, 0.1, 0.1)), (0.5, 0, 0))])
    c = detect(["plane", "compound"], [[0], bar], [[0, 0, 0], [0, 0, 0.099]], [I, I])
    assert len(c["depth"]) == 4
    np.testing.assert_allclose(np.sort(np.abs(c["point"][:, 0])), [0.6] * 4, atol=1e-12)
    np.testing.assert_allclose(c["depth"], 0.001, atol=1e-12)
    # two dumbbells crossed: the pieces that touch, normal from a to b
    d = detect(["compound", "compound"], [bar, bar], [[0, 0, 0], [0.5, 0.5, 0.195]],
               [I, q_from_axis_angle((0, 0, 1), math.pi / 2)])
    assert 1 <= len(d["depth"]) <= 4 and np.all(d["pair"] == [0, 1])
    np.testing.assert_allclose(d["normal"], np.tile([0, 0, 1.0], (len(d["depth"]), 1)), atol=1e-12)
    np.testing.assert_allclose(d["depth"], 0.005, atol=1e-12)



@pytest.mark.parametrize("points", [16, 64])
def test_hulls_placed_by_their_points_frame_meet_cap_to_cap_at_the_set_depth(points):
    """physics.bench.collision's hulls: flat octagonal caps at z = ±0.042 m of the points'
    frame, whose body frame (principal axes) an irregular hull has tilted. Placed by
    body_pose, one on the other's top turned about z and sunk 1 mm: the caps overlap, 4
    points 1 mm deep along z (the bench once placed body frames and found no contact).
    Unturned, the caps coincide: the points are the cap's own corners (at most 4; the
    16-point hull's cap is a triangle), no crossing of a side plane made by round-off."""
    from physics.bench.collision import _ellipsoid_hull
    c = _ellipsoid_hull(points, np.random.default_rng(0))
    pts = c.vertices @ q_to_matrix(c.frame[1]).T + c.frame[0]
    low, high = -pts[:, 2].min(), pts[:, 2].max()
    np.testing.assert_allclose([low, high], 0.042, atol=1e-12)
    cap_corners = int(np.sum(np.abs(pts[:, 2] - high) < 1e-9))
    for turn in (0.0, 0.3, -0.5):
        pa, qa = c.body_pose((1.0, 2.0, 0.0), I)
        pb, qb = c.body_pose((1.0, 2.0, high + low - 0.001), q_from_axis_angle((0, 0, 1), turn))
        d = detect(["convex", "convex"], [c, c], [pa, pb], [qa, qb])
        assert len(d["depth"]) == (min(cap_corners, 4) if turn == 0.0 else 4)
        np.testing.assert_allclose(d["depth"], 0.001, atol=1e-9)
        np.testing.assert_allclose(np.abs(d["normal"]), np.tile([0, 0, 1.0], (len(d["depth"]), 1)), atol=1e-9)
        np.testing.assert_allclose(d["point"][:, 2], 0.042 - 0.001 * (d["normal"][:, 2] > 0), atol=1e-9)

# ---- in the World: resting on the floor ----

from pathlib import Path  # noqa: E402

import physics  # noqa: E402
from physics.io.mesh_shapes import compound_from_mesh, convex_from_mesh  # noqa: E402
from physics.quat import q_from_matrix, frame_from_axes  # noqa: E402

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "meshes"


def _resting_pose(shape):
    """(position, orientation) of a hull lying on the largest face its centre of mass is
    over, that face on the floor z = 0."""
    V = shape.vertices
    best = None
    for f in shape.faces:
        p = V[f]
        n = sum(np.cross(p[k] - p[0], p[k + 1] - p[0]) for k in range(1, len(f) - 1))
        area = np.linalg.norm(n) / 2
        n /= np.linalg.norm(n)
        d = float(n @ p[0])
        if _inside_polygon(d * n, p, n) and (best is None or area > best[0]):
            best = (area, n, d)
    _, n, d = best
    R = frame_from_axes((0, 0, -1.0)) @ frame_from_axes(n).T     # takes n to −z
    return np.array([0.0, 0.0, d]), q_from_matrix(R)


def _rock_world(solver):
    w = physics.World(dt=0.01, solver=solver)
    w.add_body("ground", Plane(), static=True)
    rock = convex_from_mesh(ASSETS / "rock.obj")
    pos, q = _resting_pose(rock)
    w.add_body("rock", rock, density=2500.0, position=pos, orientation=q, friction=0.7)
    return w


def _turn(q1, q0):
    return 2 * math.acos(min(1.0, abs(float(np.dot(q1, q0)))))


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_a_convex_rock_resting_on_the_floor_stays_still_ten_seconds_on_four_points(solver):
    """Placed on its largest face (a triangle) touching the floor: within the first steps
    it settles (impulse: 0.12 mm, 1.6 mrad; lcp: not at all), then nothing moves."""
    w = _rock_world(solver)
    rock = w.body("rock")
    p0, q0 = rock.position, rock.orientation
    w.advance(1.0)
    p1, q1 = rock.position, rock.orientation
    w.advance(9.0)
    assert np.linalg.norm(rock.position - p0) < 1e-3 and _turn(rock.orientation, q0) < 5e-3
    assert np.linalg.norm(rock.position - p1) < 1e-6 and _turn(rock.orientation, q1) < 1e-5
    c = w.contacts()
    assert 3 <= len(c["depth"]) <= 4 and np.all(c["depth"] < 0.003)


def test_a_convex_rock_on_the_floor_does_not_blow_up_under_penalty():
    w = _rock_world("penalty")
    p0 = w.body("rock").position
    w.advance(10.0)
    assert np.all(np.isfinite(w.state.bodies.pos)) and np.linalg.norm(w.body("rock").position - p0) < 0.01


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_a_compound_ring_dropped_flat_settles_on_at_most_four_points(solver):
    w = physics.World(dt=0.005, solver=solver)
    w.add_body("ground", Plane(), static=True)
    ring = compound_from_mesh(ASSETS / "ring_pieces.obj")
    pos, q = ring.body_pose((0.0, 0.0, 0.1), I)
    w.add_body("ring", ring, mass=0.5, position=pos, orientation=q)
    w.advance(2.0)
    body = w.body("ring")
    c = w.contacts()
    assert 3 <= len(c["depth"]) <= 4
    Rb = q_to_matrix(body.orientation)
    lowest = min(float((Rb @ (s.vertices @ q_to_matrix(pq).T + pp).T)[2].min()) for s, pp, pq in ring.pieces)
    assert body.position[2] + lowest == pytest.approx(0.0, abs=3e-3)           # on the floor, slop deep
    assert np.linalg.norm(body.velocity) < 1e-3 and np.linalg.norm(body.angular_velocity) < 1e-2


# ---- scenes: shape = "convex" / "compound" from a mesh file ----

import tomllib  # noqa: E402

from physics.io.scene import SceneError, load_scene  # noqa: E402
from physics.io.scene_writer import save_scene  # noqa: E402

ROCK = '[[bodies]]\nname = "r"\nshape = "{}"\nmesh = "{}"\nmass = 1.0\nposition = [1, 2, 3]\n'


def test_a_scene_convex_body_is_placed_by_its_mesh_frame_and_written_back(tmp_path):
    rock = convex_from_mesh(ASSETS / "rock.obj")
    q = q_from_axis_angle((0, 0, 1), 0.5)
    text = ROCK.format("convex", "meshes/rock.obj") + f"orientation = {[float(x) for x in q]}\n"
    w = load_scene(_scene(tmp_path, text))
    pos, quat = rock.body_pose((1, 2, 3), q)
    np.testing.assert_allclose(w.body("r").position, pos, atol=1e-14)
    np.testing.assert_allclose(w.body("r").inertia, rock.principal_inertia(1.0), rtol=1e-14)
    save_scene(w, tmp_path / "out.toml")
    written = tomllib.loads((tmp_path / "out.toml").read_text())["bodies"][0]
    assert written["shape"] == "convex" and written["mesh"] == "assets/meshes/rock.obj"
    np.testing.assert_allclose(written["position"], [1.0, 2.0, 3.0], atol=1e-14)
    w2 = load_scene(tmp_path / "out.toml")
    assert w2.body_info[1].shape == w.body_info[1].shape
    np.testing.assert_allclose(w2.body("r").position, pos, atol=1e-14)


def _scene(tmp_path, text, name="s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, key, word", [
    ('[[bodies]]\nname = "r"\nshape = "convex"\nmass = 1\n', "bodies[0].mesh", "missing"),
    ('[[bodies]]\nname = "b"\nshape = "box"\nsize = [1, 1, 1]\nmass = 1\nmesh = "meshes/rock.obj"\n',
     "bodies[0].mesh", "convex"),
    (ROCK.format("convex", "nosuch.obj"), "bodies[0].mesh", "an existing mesh file"),
    (ROCK.format("compound", "flat.obj"), "bodies[0].mesh", "flat"),
    (ROCK.format("convex", "flat.obj"), "bodies[0].mesh", "flat"),
    (ROCK.format("convex", "../outside.obj"), "bodies[0].mesh", "may not leave"),
    (ROCK.format("convex", "rock.txt"), "bodies[0].mesh", "OBJ or STL"),
])
def test_bad_convex_meshes_in_scenes_name_the_key(text, key, word, tmp_path):
    (tmp_path / "scene").mkdir()
    (tmp_path / "scene" / "flat.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    (tmp_path / "scene" / "rock.txt").write_text("v 0 0 0\n")
    (tmp_path / "outside.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n")
    path = _scene(tmp_path / "scene", text)
    with pytest.raises(SceneError) as err:
        load_scene(path)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}: expected ") and word in message and "\n" not in message
