"""Small operations on one row shared by the solver families (scalar numba code)."""
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
