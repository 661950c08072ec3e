"""Small operations shared by the solver families (scalar numba code): on one row, and
plain 2-D copies and fills written as loops."""
from numba import njit

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
