"""physics/contact_geometry.py: signed distances and normals of a point or sphere against
the ground plane and an oriented box, checked against closed forms."""
import math

import numpy as np
import pytest

from physics.contact_geometry import box_distance, plane_distance
from physics.quat import q_from_axis_angle, q_to_matrix

HALF = np.array([0.3, 0.2, 0.1])


def _box(point, radius, centre, quat, half=HALF):
    d, nx, ny, nz = box_distance(*point, radius, *centre, *quat, *half)
    return d, np.array([nx, ny, nz])


@pytest.mark.parametrize("z, z0, r", [(1.0, 0.0, 0.0), (0.25, 0.1, 0.1), (0.05, 0.1, 0.02), (-2.0, -1.0, 0.5)])
def test_plane_distance_is_height_above_the_plane_minus_the_radius(z, z0, r):
    d, nx, ny, nz = plane_distance(z, z0, r)
    assert d == pytest.approx(z - z0 - r, abs=1e-15)
    assert (nx, ny, nz) == (0.0, 0.0, 1.0)


IDENTITY = (0.0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize("axis", range(3))
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_point_off_a_face_is_its_height_over_the_face(axis, sign):
    p = np.zeros(3)
    p[axis] = sign * (HALF[axis] + 0.4)
    p[(axis + 1) % 3] = 0.5 * HALF[(axis + 1) % 3]          # still over the face
    d, n = _box(p, 0.05, (0.0, 0.0, 0.0), IDENTITY)
    assert d == pytest.approx(0.4 - 0.05, abs=1e-12)
    expected = np.zeros(3)
    expected[axis] = sign
    assert np.allclose(n, expected, atol=1e-12)


def test_point_off_a_corner_and_an_edge_is_its_euclidean_distance():
    corner = HALF * np.array([1.0, -1.0, 1.0])
    off = np.array([0.3, -0.4, 1.2])
    d, n = _box(corner + off, 0.1, (0.0, 0.0, 0.0), IDENTITY)
    assert d == pytest.approx(np.linalg.norm(off) - 0.1, abs=1e-12)
    assert np.allclose(n, off / np.linalg.norm(off), atol=1e-12)
    # beside the edge x = hx, z = hz (y inside): distance in the xz-plane only
    p = np.array([HALF[0] + 0.3, 0.05, HALF[2] + 0.4])
    d, n = _box(p, 0.0, (0.0, 0.0, 0.0), IDENTITY)
    assert d == pytest.approx(0.5, abs=1e-12)
    assert np.allclose(n, [0.6, 0.0, 0.8], atol=1e-12)


@pytest.mark.parametrize("axis, depth", [(0, 0.05), (1, 0.03), (2, 0.01)])
def test_centre_inside_leaves_through_the_nearest_face(axis, depth):
    p = np.zeros(3)
    p[axis] = -(HALF[axis] - depth)               # `depth` below the face on the − side
    d, n = _box(p, 0.02, (0.0, 0.0, 0.0), IDENTITY)
    assert d == pytest.approx(-depth - 0.02, abs=1e-12)
    expected = np.zeros(3)
    expected[axis] = -1.0
    assert np.allclose(n, expected, atol=1e-12)


def test_centre_at_the_box_centre_leaves_through_the_thinnest_side():
    d, n = _box((0.0, 0.0, 0.0), 0.0, (0.0, 0.0, 0.0), IDENTITY)
    assert d == pytest.approx(-HALF[2], abs=1e-15)
    assert np.allclose(n, [0.0, 0.0, 1.0])


def test_rotated_and_moved_box_is_the_same_geometry_in_its_frame():
    """A box turned 90° about z and moved: a point along world x sees the box's y faces."""
    centre = np.array([1.0, 2.0, 0.5])
    q = q_from_axis_angle((0, 0, 1), math.pi / 2)
    d, n = _box(centre + [HALF[1] + 0.25, 0.0, 0.0], 0.05, centre, q)
    assert d == pytest.approx(0.25 - 0.05, abs=1e-12)
    assert np.allclose(n, [1.0, 0.0, 0.0], atol=1e-12)


def _reference(p, r, centre, quat, half):
    """Closest point by clamping in the box frame (rotation matrix R: world = R·local)."""
    R = q_to_matrix(quat)
    local = R.T @ (np.asarray(p) - centre)
    closest = np.clip(local, -half, half)
    delta = local - closest
    dist = np.linalg.norm(delta)
    if dist > 0.0:
        return dist - r, R @ (delta / dist)
    depth = half - np.abs(local)
    k = int(np.argmin(depth))
    e = np.zeros(3)
    e[k] = 1.0 if local[k] >= 0.0 else -1.0
    return -depth[k] - r, R @ e


def test_random_points_against_the_closed_form():
    rng = np.random.default_rng(7)
    for _ in range(300):
        half = rng.uniform(0.05, 0.5, 3)
        centre = rng.uniform(-1.0, 1.0, 3)
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        r = rng.uniform(0.0, 0.1)
        p = centre + rng.uniform(-1.0, 1.0, 3)
        d, n = _box(p, r, centre, q, half)
        d_ref, n_ref = _reference(p, r, centre, q, half)
        assert d == pytest.approx(d_ref, abs=1e-12)
        assert np.allclose(n, n_ref, atol=1e-9)
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
        # moving the centre by −d·n puts the sphere on the surface
        if d > 0.0:
            d_moved, _ = _box(p - d * n, r, centre, q, half)
            assert d_moved == pytest.approx(0.0, abs=1e-9)
