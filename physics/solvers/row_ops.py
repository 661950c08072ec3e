"""Small operations shared by the solver families (scalar numba code): on one row, the
geometric stiffness of a joint's point force, and plain 2-D copies and fills written as
loops."""
from numba import njit

from ..joint_types import PRISMATIC
from ..quat import rotated_diagonal, store_symmetric


@njit(cache=True)
def scatter_row(M, r, a, b, s, lin, ang):
    """lin[a] += s·M[r, 0:3], ang[a] += s·M[r, 3:6], lin[b] += s·M[r, 6:9],
    ang[b] += s·M[r, 9:12]: a row's 12 numbers times a scalar onto its two bodies
    (Jᵀλ as forces, or M⁻¹Jᵀ Δλ as velocity changes)."""
    for k in range(3):
        lin[a, k] += M[r, k] * s
        ang[a, k] += M[r, 3 + k] * s
        lin[b, k] += M[r, 6 + k] * s
        ang[b, k] += M[r, 9 + k] * s


@njit(cache=True, error_model="numpy", _nrt=False)
def copy2d(dst, src):
    """dst[:n, :m] = src, (n, m) src's shape (explicit loops: numba's slice assignment
    compiles a shape-mismatch error path with string formatting, which costs tens of
    seconds of compile time per caller, and needs reference counts, which kernels compiled
    without them cannot call). The bodies' vectors and quaternions (3 and 4 columns) with
    the rows written out: twice as fast as the loop over columns."""
    m = src.shape[1]
    if m == 3:
        for i in range(src.shape[0]):
            dst[i, 0], dst[i, 1], dst[i, 2] = src[i, 0], src[i, 1], src[i, 2]
    elif m == 4:
        for i in range(src.shape[0]):
            dst[i, 0], dst[i, 1], dst[i, 2], dst[i, 3] = src[i, 0], src[i, 1], src[i, 2], src[i, 3]
    else:
        for i in range(src.shape[0]):
            for j in range(m):
                dst[i, j] = src[i, j]


@njit(cache=True, error_model="numpy", _nrt=False)
def fill2d(dst, value):
    """dst[:, :] = value (3 columns written out, as copy2d)."""
    m = dst.shape[1]
    if m == 3:
        for i in range(dst.shape[0]):
            dst[i, 0], dst[i, 1], dst[i, 2] = value, value, value
    else:
        for i in range(dst.shape[0]):
            for j in range(m):
                dst[i, j] = value


@njit(cache=True, error_model="numpy")
def row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """J_r·V with the two bodies' velocities (v, ω of a, then of b) as 12 scalars: the sum
    of row_velocity in its order, with the velocities loaded once per joint."""
    return (row_J[r, 0] * a0 + row_J[r, 1] * a1 + row_J[r, 2] * a2 + row_J[r, 3] * a3 + row_J[r, 4] * a4
            + row_J[r, 5] * a5 + row_J[r, 6] * b0 + row_J[r, 7] * b1 + row_J[r, 8] * b2 + row_J[r, 9] * b3
            + row_J[r, 10] * b4 + row_J[r, 11] * b5)


@njit(cache=True)
def world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world):
    """I⁻¹ in world axes, R diag(1/I) Rᵀ, for every body (9 numbers, row-major)."""
    for i in range(body_quat.shape[0]):
        store_symmetric(body_inv_inertia_world, i, rotated_diagonal(
            body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
            body_inv_inertia[i, 0], body_inv_inertia[i, 1], body_inv_inertia[i, 2]))


@njit(cache=True, error_model="numpy")
def point_arm(row_J, r0, side):
    """The lever arm r (body centre → anchor, world) of a joint's point rows r0…r0+2 on one
    side (0: a, 1: b), from their angular parts ±(r × e_x), ±(r × e_y), ±(r × e_z)."""
    o = 6 * side
    s = 1.0 if side == 1 else -1.0
    return s * row_J[r0 + 1, o + 5], s * row_J[r0 + 2, o + 3], s * row_J[r0, o + 4]


@njit(cache=True, error_model="numpy")
def geometric_stiffness(fx, fy, fz, rx, ry, rz):
    """The rotational geometric stiffness of a point force f (or impulse) held at lever r
    from a body's centre, (f·r) E − ½ (f rᵀ + r fᵀ) (the turning of the lever under the
    force; Tournier et al. 2015, Andrews et al. 2017): its entries xx, yy, zz, xy, xz, yz."""
    d = fx * rx + fy * ry + fz * rz
    return (d - fx * rx, d - fy * ry, d - fz * rz,
            -0.5 * (fx * ry + rx * fy), -0.5 * (fx * rz + rx * fz), -0.5 * (fy * rz + ry * fz))


@njit(cache=True, error_model="numpy")
def loaded_point_rows(joint_type, joint_row_start, row_impulse, j):
    """The first of joint j's three point rows when they carry an impulse, else −1 (none,
    or a prismatic joint: its first rows hold no point)."""
    if joint_type[j] == PRISMATIC:
        return -1
    r0 = joint_row_start[j]
    if row_impulse[r0] == 0.0 and row_impulse[r0 + 1] == 0.0 and row_impulse[r0 + 2] == 0.0:
        return -1
    return r0


@njit(cache=True, error_model="numpy")
def point_stiffness(row_J, row_impulse, r0, side):
    """geometric_stiffness of a joint's point-row impulse on one side (b receives +λ, a −λ)
    at that side's lever arm."""
    s = 1.0 if side == 1 else -1.0
    rx, ry, rz = point_arm(row_J, r0, side)
    return geometric_stiffness(s * row_impulse[r0], s * row_impulse[r0 + 1], s * row_impulse[r0 + 2], rx, ry, rz)


@njit(cache=True, error_model="numpy")
def stiffness_bound(k00, k11, k22, k01, k02, k12):
    """A positive diagonal bounding the symmetric K above (the absolute row sums,
    Gershgorin): added to an inertia, it keeps the system positive definite."""
    a01, a02, a12 = abs(k01), abs(k02), abs(k12)
    return abs(k00) + a01 + a02, abs(k11) + a01 + a12, abs(k22) + a02 + a12
