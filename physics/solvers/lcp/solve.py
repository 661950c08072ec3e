"""The LCPs of a step on A: the velocity (or impact) LCP by Lemke's method or projected
Gauss–Seidel with the fallback rule (package docstring), and the split pass's position
LCP (pseudo-velocities)."""
import math

import numpy as np
from ...jit import helper

from ...clock import ticks
from ..dense import LEMKE_OK, blcp_residual, blcp_residual_csr, pgs, pivoted_solve, solve_blcp_lemke, sparsity
from ..tree import articulated_solve, zero_tree
from .rows import POS_BOUNDED, POS_FREE_ROW
from .settings import LEMKE, LEMKE_NS_PER_N3, LEMKE_RESIDUAL, PGS, PGS_POSITION_SWEEPS
from ...joint_rows import row_velocity
from .system import loop_velocity
from .velocities import apply_free_bodies, gather_impulses
from .velocity_pgs import velocity_pgs, velocity_residual
from .work import S_CAPPED, S_CAPPED_STEPS, S_FALLBACKS, S_METHOD, S_PIVOTS, S_RESIDUAL, S_ROWS, S_SIZE, \
    S_SOLVE_TICKS, S_SWEEPS


# ---------------------------------------------------------------------------- the velocity LCP
@helper(cache=True)
def solve_lcp(params, stats, nu, sparse, lw):
    """The velocity (or impact) LCP of nu rows in lw (A, b; warm start in x) by the method
    and fallback rule of the package docstring; x holds λ. Returns the method used.
    `sparse`: A is held as build_system's CSR rows, or in velocity form (fast), and PGS
    solves it."""
    A, b, x, lo, hi, mu, g0, g1 = lw.A, lw.b, lw.x, lw.u_lo, lw.u_hi, lw.u_mu, lw.u_g0, lw.u_g1
    method = params.method
    cap = params.time_cap_ms * params.ticks_per_ms
    t0 = ticks()
    stats[S_ROWS] = nu
    stats[S_PIVOTS] = 0
    stats[S_SWEEPS] = 0
    stats[S_CAPPED] = 0
    stats[S_SIZE] = 0
    used = PGS
    if nu == 0:
        stats[S_METHOD] = 0
        stats[S_RESIDUAL] = 0.0
        stats[S_SOLVE_TICKS] = 0.0
        return 0
    if not sparse and method != PGS and nu <= min(params.lemke_max, lw.lemke.slack.shape[0] // 3):
        n_est = 2.0 * nu                        # LCP variables, about (friction rows take three)
        predicted_ms = LEMKE_NS_PER_N3 * n_est ** 3 * 1e-6
        if method == LEMKE or params.time_cap_ms <= 0.0 or predicted_ms <= params.time_cap_ms:
            for i in range(nu):
                lw.xp[i] = x[i]             # the warm start, for PGS if Lemke fails
            status, pivots, size = solve_blcp_lemke(A, b, lo, hi, mu, g0, g1, nu, x, lw.lemke)
            stats[S_PIVOTS] = pivots
            stats[S_SIZE] = size
            scale = 1.0
            for i in range(nu):
                scale = max(scale, abs(b[i]))
            if status == LEMKE_OK and blcp_residual(A, b, lo, hi, mu, g0, g1, nu, x) <= LEMKE_RESIDUAL * scale:
                used = LEMKE
            else:
                stats[S_FALLBACKS] += 1
                if status != LEMKE_OK:
                    for i in range(nu):
                        x[i] = lw.xp[i]
    if used == PGS:
        fast = sparse and lw.fast[0] == 1
        if not sparse:
            sparsity(A, nu, lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag)
        spent = ticks() - t0
        left = max(cap - spent, 1.0) if cap > 0.0 else 0.0
        if fast:
            sweeps, change, capped = velocity_pgs(nu, b, lo, hi, mu, g0, g1, x, params.pgs_iterations,
                                                  params.pgs_tolerance, params.pgs_contact_tolerance, left, lw)
        else:
            sweeps, change, capped = pgs(lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, b, lo, hi, mu, g0, g1, nu, x,
                                         params.pgs_iterations, params.pgs_tolerance, left)
        stats[S_SWEEPS] = sweeps
        if capped:
            stats[S_CAPPED] = 1
            stats[S_CAPPED_STEPS] += 1
        if fast:
            residual = velocity_residual(nu, b, lo, hi, mu, g0, g1, x, lw)
        else:
            residual = blcp_residual_csr(lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, b, lo, hi, mu, g0, g1, nu, x)
    else:
        residual = blcp_residual(A, b, lo, hi, mu, g0, g1, nu, x)
    stats[S_METHOD] = used
    stats[S_RESIDUAL] = residual
    stats[S_SOLVE_TICKS] = ticks() - t0
    return used


# ---------------------------------------------------------------------------- the split pass
@helper(cache=True)
def position_pass(params, nu, nl, rank, rate, sparse, bodies, joint_body, tree, inv_I, pvel, pomega, lw):
    """Split impulses (pseudo-velocities V^p, J V^p = −rate·C): on entry (pvel, pomega)
    hold the tree rows' part (momenta 0, targets −rate·C); the loops, active limits,
    contact normals (≥) and sticking friction rows (= 0) are added by PGS on the velocity
    LCP's A, and V^p solved again with their impulses."""
    A, bp, xp, plo, phi, x = lw.A, lw.bp, lw.xp, lw.plo, lw.phi, lw.x
    u_J, u_body, u_C, u_lo, u_hi, u_mu, u_g0, u_g1, u_pos = lw.u_J, lw.u_body, lw.u_C, lw.u_lo, lw.u_hi, \
        lw.u_mu, lw.u_g0, lw.u_g1, lw.u_pos
    B, l_J, l_body, l_C = lw.B, lw.l_J, lw.l_body, lw.l_C
    G, l_perm, lam_l, tmp_l, work_l = lw.G, lw.l_perm, lw.lam_l, lw.tmp_l, lw.work_l
    P, zc = lw.P, lw.zc
    any_row = False
    for u in range(nu):
        role = u_pos[u]
        plo[u] = 0.0
        phi[u] = 0.0
        xp[u] = 0.0
        if role == POS_BOUNDED:
            plo[u] = u_lo[u]
            phi[u] = u_hi[u]
            any_row = any_row or u_C[u] != 0.0
        elif role == POS_FREE_ROW:
            bound = u_hi[u]
            if u_mu[u] > 0.0:
                s = 0.0
                for k in range(u_g0[u], u_g1[u]):
                    s += x[k]
                bound = u_mu[u] * s
            if abs(x[u]) < bound * (1.0 - 1e-9):       # sticking: held at J V^p = 0
                plo[u] = -math.inf
                phi[u] = math.inf
    if not any_row and nl == 0:
        return
    for l in range(nl):
        tmp_l[l] = -loop_velocity(l_J, l_body, l, pvel, pomega) - rate * l_C[l]
    pivoted_solve(G, l_perm, rank, nl, tmp_l, lam_l, work_l)
    for u in range(nu):
        s = row_velocity(u_J, u, u_body[u, 0], u_body[u, 1], pvel, pomega) + rate * u_C[u]
        for l in range(nl):
            s += B[u, l] * lam_l[l]
        bp[u] = s
    if nu > 0 and sparse and lw.fast[0] == 1:
        velocity_pgs(nu, bp, plo, phi, np.zeros(nu), u_g0, u_g1, xp, PGS_POSITION_SWEEPS, params.pgs_tolerance,
                     params.pgs_contact_tolerance, 0.0, lw)
    elif nu > 0:
        if not sparse:
            sparsity(A, nu, lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag)
        pgs(lw.a_ptr, lw.a_idx, lw.a_val, lw.a_diag, bp, plo, phi, np.zeros(nu), u_g0, u_g1, nu, xp,
            PGS_POSITION_SWEEPS, params.pgs_tolerance, 0.0)
    gather_impulses(nu, nl, xp, lw)
    # V^p again with these impulses: momenta P, targets −rate·C
    order, roots, joint_child = tree.order, tree.roots, tree.joint_child
    if order.shape[0] + roots.shape[0] > 0:
        zero_tree(order, roots, joint_child, zc)
        n_order = order.shape[0]
        for t in range(n_order + roots.shape[0]):
            i = joint_child[order[t]] if t < n_order else roots[t - n_order]
            for q in range(6):
                zc[i, q] += P[i, q]
        articulated_solve(tree, joint_body, rate, zc, pvel, pomega, False, 0.0, zc, pvel, pomega, 0.0)
    apply_free_bodies(bodies, inv_I, pvel, pomega, lw)
