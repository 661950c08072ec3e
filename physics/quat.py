"""Quaternion and small-vector helpers, scalar code usable inside numba kernels.

Quaternions are `(x, y, z, w)` as in pyrr. Every function returns
scalars or writes into a preallocated output, so kernels allocate nothing.

The kernel helpers are plain compiled helpers (physics/jit.py), each compiled once; LLVM inlines them into their
callers where that pays. (numba's IR inlining would type them again at every call site,
which multiplies the compile time.) The helpers that kernels of different fastmath options
call state FAST (the solvers' fastmath flags) themselves: numba would give them the option of
whichever kernel compiled them first, and the disk cache would keep that build.
"""
import math

import numpy as np
from .jit import kernel, helper

FAST = {"contract", "reassoc", "nsz", "arcp"}   # fastmath without nnan/ninf: NaNs must still show up


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def cross(ax, ay, az, bx, by, bz):
    """a × b as three scalars."""
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@kernel(cache=True, error_model="numpy", _nrt=False)
def rotate(qx, qy, qz, qw, vx, vy, vz):
    """Rotate v by unit quaternion q: q v q*. Returns three scalars."""
    # t = 2 q.xyz × v ; v' = v + w t + q.xyz × t
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (vx + qw * tx + (qy * tz - qz * ty),
            vy + qw * ty + (qz * tx - qx * tz),
            vz + qw * tz + (qx * ty - qy * tx))


@helper(cache=True, error_model="numpy", _nrt=False)
def rotate_inv(qx, qy, qz, qw, vx, vy, vz):
    """Rotate v by the inverse of unit quaternion q."""
    return rotate(-qx, -qy, -qz, qw, vx, vy, vz)


@kernel(cache=True, error_model="numpy", _nrt=False)
def qmul(ax, ay, az, aw, bx, by, bz, bw):
    """Hamilton product a ⊗ b."""
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


@helper(cache=True, error_model="numpy", _nrt=False)
def world_inv_inertia_times(qx, qy, qz, qw, inv_ix, inv_iy, inv_iz, tx, ty, tz):
    """I_world⁻¹ τ = R diag(inv_I) Rᵀ τ for a body with principal inverse inertia."""
    lx, ly, lz = rotate_inv(qx, qy, qz, qw, tx, ty, tz)
    return rotate(qx, qy, qz, qw, inv_ix * lx, inv_iy * ly, inv_iz * lz)


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def frame_axes(qx, qy, qz, qw):
    """Columns n0, n1, n2 of the rotation matrix R(q) of a unit quaternion, as 9 scalars
    (the body's axes in world coordinates; a rope element's d1, d2, d3, eq. 2 seed 002)."""
    return (1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy + qz * qw), 2.0 * (qx * qz - qy * qw),
            2.0 * (qx * qy - qz * qw), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz + qx * qw),
            2.0 * (qx * qz + qy * qw), 2.0 * (qy * qz - qx * qw), 1.0 - 2.0 * (qx * qx + qy * qy))


@helper(cache=True, error_model="numpy", _nrt=False)
def integrate_quat(qx, qy, qz, qw, wx, wy, wz, h):
    """One step of the orientation: q + h/2 (ω, 0) ⊗ q, normalized, for the angular velocity
    ω in the world frame (eq. 27 seed 000, eq. 11 seed 001, eq. 6 seed 002)."""
    wx, wy, wz = 0.5 * h * wx, 0.5 * h * wy, 0.5 * h * wz
    nx = qx + (wx * qw + wy * qz - wz * qy)
    ny = qy + (wy * qw + wz * qx - wx * qz)
    nz = qz + (wz * qw + wx * qy - wy * qx)
    nw = qw - (wx * qx + wy * qy + wz * qz)
    inv = 1.0 / math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    return nx * inv, ny * inv, nz * inv, nw * inv


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def rotated_diagonal(qx, qy, qz, qw, dx, dy, dz):
    """R diag(dx, dy, dz) Rᵀ for the rotation of quaternion q, as 6 numbers (00 01 02 11 12 22):
    a body-frame principal inertia (or its inverse) in world axes."""
    r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(qx, qy, qz, qw)
    return (dx * r00 * r00 + dy * r01 * r01 + dz * r02 * r02,
            dx * r00 * r10 + dy * r01 * r11 + dz * r02 * r12,
            dx * r00 * r20 + dy * r01 * r21 + dz * r02 * r22,
            dx * r10 * r10 + dy * r11 * r11 + dz * r12 * r12,
            dx * r10 * r20 + dy * r11 * r21 + dz * r12 * r22,
            dx * r20 * r20 + dy * r21 * r21 + dz * r22 * r22)


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def sym_add_outer(s00, s01, s02, s11, s12, s22, ax, ay, az, bx, by, bz):
    """The upper triangle (00 01 02 11 12 22) of S + a bᵀ: S symmetric as 6 numbers, a bᵀ
    read as symmetric (b = a: a rank-one update; a Gram matrix or T Aᵀ summed over columns)."""
    return s00 + ax * bx, s01 + ax * by, s02 + ax * bz, s11 + ay * by, s12 + ay * bz, s22 + az * bz


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def store_symmetric(out, i, m):
    """Write the 6 numbers (00 01 02 11 12 22) of a symmetric 3×3 as 9, row-major, into out[i]."""
    out[i, 0], out[i, 1], out[i, 2] = m[0], m[1], m[2]
    out[i, 3], out[i, 4], out[i, 5] = m[1], m[3], m[4]
    out[i, 6], out[i, 7], out[i, 8] = m[2], m[4], m[5]


@helper(cache=True, error_model="numpy")
def mat3_mul(a, b):
    """a b for 3×3 matrices given as 9-tuples, row-major (a symmetric one written out in
    full); the product as a 9-tuple."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
            a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
            a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
            a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
            a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


# ---- plain numpy helpers for the builder (not on the hot path) ----


def q_mul(a, b):
    return np.array(qmul(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]))


def q_conj(q):
    return np.array([-q[0], -q[1], -q[2], q[3]])


def q_rotate(q, v):
    return np.array(rotate(q[0], q[1], q[2], q[3], v[0], v[1], v[2]))


def q_from_axis_angle(axis, angle):
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    s = math.sin(0.5 * angle)
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle)])


def q_from_matrix(m):
    """Unit quaternion (x, y, z, w) of a proper rotation matrix (columns = frame axes)."""
    m = np.asarray(m, float)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def q_to_matrix(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def q_from_euler_deg(rx, ry, rz):
    """Rotation about x, then y, then z (extrinsic, world axes), angles in degrees."""
    qx = q_from_axis_angle((1, 0, 0), math.radians(rx))
    qy = q_from_axis_angle((0, 1, 0), math.radians(ry))
    qz = q_from_axis_angle((0, 0, 1), math.radians(rz))
    return q_mul(qz, q_mul(qy, qx))


def frame_from_axes(axis, secondary=None):
    """Right-handed orthonormal frame (3×3, columns n0, n1, n2) with n0 along `axis`.

    `secondary`, if given, fixes n1 (projected perpendicular to n0); otherwise n1 is
    chosen perpendicular to n0, preferring the world Z or X axis for readability.
    """
    n0 = np.asarray(axis, float)
    n0 = n0 / np.linalg.norm(n0)
    if secondary is not None:
        n1 = np.asarray(secondary, float)
        n1 = n1 - n0 * np.dot(n0, n1)
    else:
        ref = np.array([0.0, 0.0, 1.0]) if abs(n0[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
        n1 = ref - n0 * np.dot(n0, ref)
    n1 = n1 / np.linalg.norm(n1)
    n2 = np.cross(n0, n1)
    return np.column_stack([n0, n1, n2])
