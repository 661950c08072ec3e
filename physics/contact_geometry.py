"""Contact geometry against static obstacles: the signed distance and the normal of a
point, or of a sphere of radius r (a point with r = 0), against

    the ground plane z = z0       (normal +z)
    an oriented static box        (centre c, orientation q (x, y, z, w), half extents)

Signed distance d: the gap between the sphere's surface and the obstacle (m), positive
when apart, negative when they overlap (−d is the depth). Normal n: the unit vector, in
world coordinates, from the obstacle's closest point towards the sphere's centre, the
direction that separates them; moving the centre by −d·n puts the sphere exactly on the
surface. For a centre inside a box the normal is that of the nearest face (the centre
leaves through it) and d = −(distance to that face) − r.

Scalar numba code, each function compiled once with its own flags (LLVM inlines it where
that pays). The rope's contacts (rope/kernels.py) use them.
"""
import math

from .jit import helper

from .quat import rotate, rotate_inv


@helper(cache=True, error_model="numpy")
def plane_distance(z, z0, radius):
    """(d, nx, ny, nz) of a sphere of `radius` centred at height z against the ground plane
    z = z0: d = z − z0 − radius, n = (0, 0, 1)."""
    return z - z0 - radius, 0.0, 0.0, 1.0


@helper(cache=True, error_model="numpy", _nrt=False)
def box_distance(x, y, z, radius, cx, cy, cz, qx, qy, qz, qw, hx, hy, hz):
    """(d, nx, ny, nz) of a sphere of `radius` centred at (x, y, z) against the box of
    centre (cx, cy, cz), unit quaternion (qx, qy, qz, qw) and half extents (hx, hy, hz):
    the closest point of the box is the centre clamped to the box in its own frame.
    A centre inside the box leaves through the nearest face (ties: x, then y, then z)."""
    px, py, pz = rotate_inv(qx, qy, qz, qw, x - cx, y - cy, z - cz)
    sx = min(max(px, -hx), hx)
    sy = min(max(py, -hy), hy)
    sz = min(max(pz, -hz), hz)
    dx, dy, dz = px - sx, py - sy, pz - sz
    d2 = dx * dx + dy * dy + dz * dz
    if d2 > 1e-24:
        d = math.sqrt(d2)
        nx, ny, nz = rotate(qx, qy, qz, qw, dx / d, dy / d, dz / d)
        return d - radius, nx, ny, nz
    # centre inside (or on the surface): leave through the nearest face
    ex, ey, ez = hx - abs(px), hy - abs(py), hz - abs(pz)
    if ex <= ey and ex <= ez:
        nx, ny, nz = rotate(qx, qy, qz, qw, 1.0 if px >= 0.0 else -1.0, 0.0, 0.0)
        return -ex - radius, nx, ny, nz
    if ey <= ez:
        nx, ny, nz = rotate(qx, qy, qz, qw, 0.0, 1.0 if py >= 0.0 else -1.0, 0.0)
        return -ey - radius, nx, ny, nz
    nx, ny, nz = rotate(qx, qy, qz, qw, 0.0, 0.0, 1.0 if pz >= 0.0 else -1.0)
    return -ez - radius, nx, ny, nz
