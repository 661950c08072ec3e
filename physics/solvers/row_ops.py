"""Small operations shared by the solver families (scalar numba code): on one row, and
plain 2-D copies and fills written as loops."""
from numba import njit


@njit(cache=True, inline="always")
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
