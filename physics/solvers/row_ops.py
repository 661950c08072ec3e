"""Small operations shared by the solver families (scalar numba code): on one row (and a
row's two bodies' velocities as a 12-tuple), the geometric stiffness of a joint's point
force, and plain 2-D copies and fills written as loops."""
from ..jit import helper

from ..joint_types import PRISMATIC
from ..quat import FAST, rotate_inv, rotated_diagonal, store_symmetric


@helper(cache=True, error_model="numpy", _nrt=False)
def scatter_row(M, r, a, b, s, lin, ang):
    """lin[a] += s·M[r, 0:3], ang[a] += s·M[r, 3:6], lin[b] += s·M[r, 6:9],
    ang[b] += s·M[r, 9:12]: a row's 12 numbers times a scalar onto its two bodies
    (Jᵀλ as forces, or M⁻¹Jᵀ Δλ as velocity changes)."""
    for k in range(3):
        lin[a, k] += M[r, k] * s
        ang[a, k] += M[r, 3 + k] * s
        lin[b, k] += M[r, 6 + k] * s
        ang[b, k] += M[r, 9 + k] * s


@helper(cache=True, _nrt=False)
def pair_run_end(pairs, i, n):
    """The end of the run of entries i, i + 1, … (of the first n) with entry i's two bodies
    (pairs[:, 0:2]; sorted by them: a contact's points, the rows of a body pair)."""
    a, b = pairs[i, 0], pairs[i, 1]
    end = i + 1
    while end < n and pairs[end, 0] == a and pairs[end, 1] == b:
        end += 1
    return end


@helper(cache=True, _nrt=False)
def jv12(row_J, r, v):
    """J·V of row r with the two bodies' velocities held in a local 12-tuple."""
    return (row_J[r, 0] * v[0] + row_J[r, 1] * v[1] + row_J[r, 2] * v[2] + row_J[r, 3] * v[3]
            + row_J[r, 4] * v[4] + row_J[r, 5] * v[5] + row_J[r, 6] * v[6] + row_J[r, 7] * v[7]
            + row_J[r, 8] * v[8] + row_J[r, 9] * v[9] + row_J[r, 10] * v[10] + row_J[r, 11] * v[11])


@helper(cache=True, _nrt=False)
def add12(row_minv_jt, r, dl, v):
    """The 12-tuple V + M⁻¹Jᵀ Δλ."""
    m = row_minv_jt
    return (v[0] + m[r, 0] * dl, v[1] + m[r, 1] * dl, v[2] + m[r, 2] * dl, v[3] + m[r, 3] * dl,
            v[4] + m[r, 4] * dl, v[5] + m[r, 5] * dl, v[6] + m[r, 6] * dl, v[7] + m[r, 7] * dl,
            v[8] + m[r, 8] * dl, v[9] + m[r, 9] * dl, v[10] + m[r, 10] * dl, v[11] + m[r, 11] * dl)


@helper(cache=True, _nrt=False)
def load12(a, b, vel, omega):
    return (vel[a, 0], vel[a, 1], vel[a, 2], omega[a, 0], omega[a, 1], omega[a, 2],
            vel[b, 0], vel[b, 1], vel[b, 2], omega[b, 0], omega[b, 1], omega[b, 2])


@helper(cache=True, _nrt=False)
def store12(a, b, v, vel, omega):
    vel[a, 0], vel[a, 1], vel[a, 2] = v[0], v[1], v[2]
    omega[a, 0], omega[a, 1], omega[a, 2] = v[3], v[4], v[5]
    vel[b, 0], vel[b, 1], vel[b, 2] = v[6], v[7], v[8]
    omega[b, 0], omega[b, 1], omega[b, 2] = v[9], v[10], v[11]


@helper(cache=True, error_model="numpy", _nrt=False)
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


@helper(cache=True, error_model="numpy", _nrt=False, fastmath=FAST)
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


@helper(cache=True, error_model="numpy")
def row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """J_r·V with the two bodies' velocities (v, ω of a, then of b) as 12 scalars: the sum
    of row_velocity in its order, with the velocities loaded once per joint."""
    return (row_J[r, 0] * a0 + row_J[r, 1] * a1 + row_J[r, 2] * a2 + row_J[r, 3] * a3 + row_J[r, 4] * a4
            + row_J[r, 5] * a5 + row_J[r, 6] * b0 + row_J[r, 7] * b1 + row_J[r, 8] * b2 + row_J[r, 9] * b3
            + row_J[r, 10] * b4 + row_J[r, 11] * b5)


@helper(cache=True, error_model="numpy", _nrt=False)
def plain_k(row_J, r, a, b, body_inv_mass, body_inv_inertia, body_quat):
    """J M⁻¹ Jᵀ of one row with the bodies' own inertia (a soft row's effective mass⁻¹)."""
    k = 0.0
    for side in range(2):
        i = a if side == 0 else b
        o = 6 * side
        im = body_inv_mass[i]
        k += im * (row_J[r, o] ** 2 + row_J[r, o + 1] ** 2 + row_J[r, o + 2] ** 2)
        bx, by, bz = rotate_inv(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                row_J[r, o + 3], row_J[r, o + 4], row_J[r, o + 5])
        k += body_inv_inertia[i, 0] * bx * bx + body_inv_inertia[i, 1] * by * by + body_inv_inertia[i, 2] * bz * bz
    return k


@helper(cache=True)
def world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world):
    """I⁻¹ in world axes, R diag(1/I) Rᵀ, for every body (9 numbers, row-major)."""
    for i in range(body_quat.shape[0]):
        store_symmetric(body_inv_inertia_world, i, rotated_diagonal(
            body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
            body_inv_inertia[i, 0], body_inv_inertia[i, 1], body_inv_inertia[i, 2]))


@helper(cache=True, error_model="numpy", fastmath=FAST)
def point_arm(row_J, r0, side):
    """The lever arm r (body centre → anchor, world) of a joint's point rows r0…r0+2 on one
    side (0: a, 1: b), from their angular parts ±(r × e_x), ±(r × e_y), ±(r × e_z)."""
    o = 6 * side
    s = 1.0 if side == 1 else -1.0
    return s * row_J[r0 + 1, o + 5], s * row_J[r0 + 2, o + 3], s * row_J[r0, o + 4]


@helper(cache=True, error_model="numpy", fastmath=FAST)
def geometric_stiffness(fx, fy, fz, rx, ry, rz):
    """The rotational geometric stiffness of a point force f (or impulse) held at lever r
    from a body's centre, (f·r) E − ½ (f rᵀ + r fᵀ) (the turning of the lever under the
    force; Tournier et al. 2015, Andrews et al. 2017): its entries xx, yy, zz, xy, xz, yz."""
    d = fx * rx + fy * ry + fz * rz
    return (d - fx * rx, d - fy * ry, d - fz * rz,
            -0.5 * (fx * ry + rx * fy), -0.5 * (fx * rz + rx * fz), -0.5 * (fy * rz + ry * fz))


@helper(cache=True, error_model="numpy", fastmath=FAST)
def loaded_point_rows(joint_type, joint_row_start, row_impulse, j):
    """The first of joint j's three point rows when they carry an impulse, else −1 (none,
    or a prismatic joint: its first rows hold no point)."""
    if joint_type[j] == PRISMATIC:
        return -1
    r0 = joint_row_start[j]
    if row_impulse[r0] == 0.0 and row_impulse[r0 + 1] == 0.0 and row_impulse[r0 + 2] == 0.0:
        return -1
    return r0


@helper(cache=True, error_model="numpy", fastmath=FAST)
def point_stiffness(row_J, row_impulse, r0, side):
    """geometric_stiffness of a joint's point-row impulse on one side (b receives +λ, a −λ)
    at that side's lever arm."""
    s = 1.0 if side == 1 else -1.0
    rx, ry, rz = point_arm(row_J, r0, side)
    return geometric_stiffness(s * row_impulse[r0], s * row_impulse[r0 + 1], s * row_impulse[r0 + 2], rx, ry, rz)


@helper(cache=True, error_model="numpy", fastmath=FAST)
def stiffness_bound(k00, k11, k22, k01, k02, k12):
    """A positive diagonal bounding the symmetric K above (the absolute row sums,
    Gershgorin): added to an inertia, it keeps the system positive definite."""
    a01, a02, a12 = abs(k01), abs(k02), abs(k12)
    return abs(k00) + a01 + a02, abs(k11) + a01 + a12, abs(k22) + a02 + a12

