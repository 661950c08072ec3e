"""The lcp kernel's work arrays (LcpWork, make_work) and its stats vector (S_*)."""
from collections import namedtuple

import numpy as np

from ..dense import lemke_work
from .velocity_pgs import RUN_MAX


# kernel stats: last solve, counts over the call, capacity requests
S_METHOD, S_ROWS, S_SIZE, S_PIVOTS, S_SWEEPS, S_RESIDUAL, S_SOLVE_TICKS, S_CAPPED, S_CAPPED_STEPS, S_FALLBACKS, \
    S_LOOP_ROWS, S_LOOP_RANK, S_IMPACTS, S_NEED_ROWS, S_NEED_LOOPS, S_VIOLATION = range(16)
N_STATS = S_VIOLATION + 4          # the last projection's Violation (4 numbers) from S_VIOLATION on
IMPACT_COLUMNS = 9          # time, body a, body b, ġ⁻, ġ⁺, e, KE⁻, KE⁺, S (LcpStats.impacts)
IMPACT_CAPACITY = 1024

LcpWork = namedtuple("LcpWork", "u_tab u_row u_body u_J u_lo u_hi u_mu u_g0 u_g1 u_bias u_C u_eps u_pos "
                                "A b x bp xp plo phi a_ptr a_idx a_val a_diag mark body_ptr body_idx "
                                "l_row l_body l_J l_C G l_perm B W lam_l tmp_l work_l "
                                "in_tree zc yv yw P fv fw c_vn c_imp c_S c_gap impacts lemke proj u_mj u_k "
                                "dvv dvw moved moving fast")
"""Work of the lcp kernel. U rows (capacity R): u_tab (R,) 0 joint row / 1 contact row, u_row
(R,) its row in that table, u_body (R,2), u_J (R,12), u_lo/u_hi (R,) fixed bounds, u_mu (R,) μ of
a friction row (0 otherwise) and u_g0/u_g1 (R,) the U range of its contact's normals, u_bias (R,)
velocity target, u_C (R,) drift value, u_eps (R,) soft-row regularization, u_pos (R,) role in the
split pass; A (R,R), b, x (R,) the velocity LCP; bp, xp, plo, phi (R,) the position LCP; a_ptr
(R+1,), a_idx (R·R,) A's sparsity, and a_val (R·R,) its off-diagonal values with a_diag (R,)
its diagonal where A is built sparse (build_system); mark (R,) scratch; body_ptr (nb+1,), body_idx (2R,) U rows per body. Loop rows
(capacity L): l_row (the row, or −1 − k for coupling k between joints), l_body (2L,2), l_J
(2L,12): row l's, and at L + l a coupling's second half (l_body[L + l, 0] = −1: none), l_C;
G (L,L) G_L then its pivoted factor, l_perm (L,), B (R,L),
W (R,L) = B G_L⁺ per U row, lam_l, tmp_l, work_l (L,). Per body: in_tree (nb,) 1 for bodies of
the joint tree, zc (nb,6) momenta of a column, yv, yw (nb,3) its velocities, P (nb,6) impulses
Σ Jᵀλ, fv, fw (nb,3) free velocities. Per contact row (capacity Rc): c_vn (Rc,) ġ⁻, c_imp (Rc,)
1 if impacting, c_S (Rc,) impact impulse, c_gap (Rc,) gap (m, 0 when touching). impacts (IMPACT_CAPACITY, IMPACT_COLUMNS); lemke:
LemkeWork for lemke_max_rows rows; proj: the world's projection.Projection (seed 004's
projection after each step). The velocity-form PGS (velocity_pgs.py): u_mj (R,12) M⁻¹J_uᵀ of
each U row, u_k (R, RUN_MAX + 2) the couplings of its run and the sweep's scratch, dvv, dvw
(nb,3) M⁻¹J_Uᵀλ, moved (nb,6) Σ Jᵀ Δλ of a sweep, moving (nb,) 1 for a body with mass
(written for the rows' bodies), fast (1,) 1 when the phase's A is not built (its rows
solved in velocity form)."""


def make_work(n_bodies, rows, loops, contact_rows, lemke_rows, proj):
    """An LcpWork with room for `rows` U rows, `loops` loop rows, `contact_rows` contact
    rows and Lemke's method on `lemke_rows` rows; proj: the world's Projection."""
    R, L, nb, Rc = max(int(rows), 1), max(int(loops), 1), max(int(n_bodies), 1), max(int(contact_rows), 1)
    f, i = np.float64, np.int64
    z = np.zeros
    return LcpWork(z(R, i), z(R, i), z((R, 2), i), z((R, 12)), z(R), z(R), z(R), z(R, i), z(R, i), z(R), z(R), z(R),
                   z(R, i), z((R, R)), z(R), z(R), z(R), z(R), z(R), z(R), z(R + 1, i), z(R * R, i),
                   z(R * R), z(R), z(R, i), z(nb + 1, i),
                   z(2 * R, i), z(L, i), z((2 * L, 2), i), z((2 * L, 12)), z(L), z((L, L)), z(L, i), z((R, L)), z((R, L)),
                   z(L), z(L), z(L), z(nb, i), z((nb, 6)), z((nb, 3)), z((nb, 3)), z((nb, 6)), z((nb, 3)),
                   z((nb, 3)), z(Rc), z(Rc, i), z(Rc), z(Rc), z((IMPACT_CAPACITY, IMPACT_COLUMNS), f),
                   lemke_work(lemke_rows), proj, z((R, 12)), z((R, RUN_MAX + 2)), z((nb, 3)), z((nb, 3)),
                   z((nb, 6)), z(nb, i), z(1, i))
