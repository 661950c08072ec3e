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
