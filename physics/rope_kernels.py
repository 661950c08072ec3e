"""Numba kernels of the Cosserat rope (seed 002), pure functions over preallocated arrays.

Discretization (seed 002, fig. 2): N nodes r_i carry position and mass, N−1 elements
between them carry a unit quaternion q_j (x, y, z, w) and an angular velocity ω_j (world
frame); d1, d2, d3 are the columns of R(q_j) and d3 must follow the tangent (eq. 1).
N−2 element pairs carry the bending/twist strain (the Darboux vector, eq. 12).

One step of h (`rope_step`), in named stages:

    prepare            segment directions n_i and lengths; the inextensibility matrix
                       A = J W Jᵀ (eq. 11), factored once (Thomas); tangent rows (eq. 16);
                       bending/twist rows (eq. 12-14); attachment rows; contacts
    integrate vel.     v += h g, air drag, kinematic anchors, element gyroscopic term
    warm start         last step's accumulated impulses (tangent, bending, clamps,
                       attachments, contacts), scaled by h/h_prev
    iterate            attachments → clamps → bending/twist → tangent → contacts →
                       inextensibility (exact O(N) Thomas solve, eq. 10-11), repeated
    integrate pos.     r += h v, q += h/2 (ω,0)⊗q, normalized (eq. 5-6)
    relax              split impulses on the predicted positions (pseudo-velocities,
                       J V* = −ERP·G/h): tangent (eq. 15), inextensibility (same
                       tridiagonal matrix, Newton iterations), contacts

Array layouts (all float64 unless said, C-contiguous):
    node_pos, node_vel (N,3); elem_quat (E,4); elem_omega (E,3), E = N−1
    pair rows: one per element pair (E−1) and one per clamp (attachment)
Impulses are N·s (linear) and N·m·s (angular); "lam" arrays hold accumulated impulses.
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from .integrate import gyroscopic_implicit
from .quat import qmul, rotate, rotate_inv, world_inv_inertia_times

# ---------------------------------------------------------------- parameter vector
(P_RADIUS, P_K1, P_K2, P_K3, P_RETARDATION, P_DRAG, P_FRICTION, P_GROUND_ON, P_GROUND_Z, P_ITERATIONS,
 P_POSITION_ITERATIONS, P_ERP, P_TANGENT_ERP, P_DRIFT_BIAS, P_WARM_START, P_BENDING_EXPLICIT, P_H_PREV,
 P_GYROSCOPIC, P_SECOND_ORDER, P_MAX_ROTATION, P_MAX_SUBSTEPS, P_SUBSTEPS_USED) = range(22)
N_PARAMS = 22

# tridiagonal work columns (E, TRI_COLS); T_BIAS holds the segment's target length at t + h
T_DIAG, T_OFF, T_CPRIME, T_DINV, T_RHS, T_MASK, T_BIAS, T_LOWER = range(8)
TRI_COLS = 8
# segment geometry (E, 4): unit direction n_i (3) and current length |r_{i+1} − r_i|
SEG_COLS = 4
# tangent rows (E, 21): g1 g2 (linear, on v_{j+1}; −g on v_j), k1 k2 (angular, on ω_j),
# M_j k1, M_j k2, K⁻¹ (2×2 symmetric: 11 12 22)
TAN_G1, TAN_G2, TAN_K1, TAN_K2, TAN_MK1, TAN_MK2, TAN_KINV = 0, 3, 6, 9, 12, 15, 18
TAN_COLS = 21
# pair rows (P, 39): T (u̇ = T(ω_b − ω_a), 3×3 row-major), M_a Tᵀ and M_b Tᵀ (row k = M T[k]),
# (K + Γ)⁻¹ symmetric (6), Γ (3), bias (3)
PR_T, PR_A, PR_B, PR_KINV, PR_GAMMA, PR_BIAS = 0, 9, 18, 27, 33, 36
PAIR_COLS = 39
# attachment integers (A, 3): node, body (−1 = world), clamp (1 = orientation held)
AI_NODE, AI_BODY, AI_CLAMP = range(3)
# attachment floats (A, 7): point (world target, or body-local point), frame quaternion
# (world frame of the clamp, or relative to the body: q_anchor = q_body ⊗ q_rel)
AF_POINT, AF_FRAME = 0, 3
# attachment work (A, 20): lever r (world), K⁻¹ (sym 6) of the point row, W (sym 6)
# merged node+body inverse mass, node mass, current anchor frame (4)
AW_R, AW_KINV, AW_W, AW_MASS, AW_FRAME = 0, 3, 9, 15, 16
ATT_WORK_COLS = 20
# boxes (B, 10): centre, half extents, quaternion
BOX_COLS = 10
# contacts (N, 2, 5): slot 0 ground, slot 1 nearest box; normal (3), gap, active
C_NX, C_GAP, C_ACTIVE = 0, 3, 4
CONTACT_COLS = 5

RopeModel = namedtuple("RopeModel", [
    "seg_rest",            # (E,)  rest length l_j of each segment (m)
    "pair_rest",           # (E−1,) l̄_j = (l_j + l_{j+1})/2 (m)
    "pair_u0",             # (E−1, 3) rest Darboux vector û (1/m), material frame
    "node_mass",           # (N,)  m_i = ρπr²(l_{i−1}+l_i)/2 + point loads (kg)
    "node_w",              # (N,)  inverse mass in the velocity solve (0: world anchor)
    "node_w_pos",          # (N,)  inverse mass in the position relax (0 also on bodies)
    "node_batt",           # (N,)  int64: body attachment index of the node, or −1
    "elem_inertia",        # (E, 3) principal inertia (I11, I22, I33) (kg·m²)
    "elem_inv_inertia",    # (E, 3) its inverse
])

RopeState = namedtuple("RopeState", [
    "node_pos", "node_vel",        # (N, 3) m, m/s
    "elem_quat", "elem_omega",     # (E, 4), (E, 3) rad/s world frame
    "seg_lam",                     # (E,)  inextensibility impulse of the last step (N·s)
    "tan_lam",                     # (E, 2) tangent-coupling impulses (accumulated)
    "pair_lam",                    # (E−1, 3) bending/twist impulses (u-space, N·m²·s)
    "clamp_lam",                   # (A, 3) clamp impulses (u-space)
    "att_lam",                     # (A, 3) impulse on the body at the attachment (N·s)
    "contact_lam",                 # (N, 2, 4) normal impulse, friction impulse (3)
    "contact_box",                 # (N,) int64: box touched in slot 1, or −1
])

RopeLinks = namedtuple("RopeLinks", [
    "att_int", "att_f",            # (A, 3) int64, (A, 7)
    "boxes",                       # (B, 10)
])

RopeWork = namedtuple("RopeWork", [
    "seg",                 # (E, 4) segment direction and length
    "tri",                 # (E, 7) tridiagonal matrix, its factors, rhs/solution, mask, bias
    "tan",                 # (E, 21) tangent rows
    "pair",                # (E−1, 39) bending/twist rows
    "clamp",               # (A, 39) clamp rows
    "att",                 # (A, 20) attachment rows
    "contact",             # (N, 2, 5) contact candidates
    "torque",              # (E, 3) explicit bending torques (only with bending="explicit")
])


# ================================================================ small helpers
@njit(cache=True, error_model="numpy", inline="always")
def inv3sym(a00, a01, a02, a11, a12, a22):
    """Inverse of a symmetric 3×3 matrix as 6 numbers (00 01 02 11 12 22); 0 if singular."""
    c00 = a11 * a22 - a12 * a12
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    det = a00 * c00 + a01 * c01 + a02 * c02
    if not (abs(det) > 1e-300):
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    inv = 1.0 / det
    return (c00 * inv, c01 * inv, c02 * inv, (a00 * a22 - a02 * a02) * inv, (a01 * a02 - a00 * a12) * inv,
            (a00 * a11 - a01 * a01) * inv)


@njit(cache=True, error_model="numpy", inline="always")
def sym_times(m, o, x, y, z):
    """(symmetric 3×3 stored as m[o:o+6]) · (x, y, z)."""
    return (m[o] * x + m[o + 1] * y + m[o + 2] * z,
            m[o + 1] * x + m[o + 3] * y + m[o + 4] * z,
            m[o + 2] * x + m[o + 4] * y + m[o + 5] * z)


@njit(cache=True, error_model="numpy", inline="always")
def world_inv_inertia_matrix(qx, qy, qz, qw, ix, iy, iz):
    """R diag(ix, iy, iz) Rᵀ as 6 numbers (00 01 02 11 12 22)."""
    r00, r01, r02 = 1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qz * qw), 2.0 * (qx * qz + qy * qw)
    r10, r11, r12 = 2.0 * (qx * qy + qz * qw), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qx * qw)
    r20, r21, r22 = 2.0 * (qx * qz - qy * qw), 2.0 * (qy * qz + qx * qw), 1.0 - 2.0 * (qx * qx + qy * qy)
    return (ix * r00 * r00 + iy * r01 * r01 + iz * r02 * r02,
            ix * r00 * r10 + iy * r01 * r11 + iz * r02 * r12,
            ix * r00 * r20 + iy * r01 * r21 + iz * r02 * r22,
            ix * r10 * r10 + iy * r11 * r11 + iz * r12 * r12,
            ix * r10 * r20 + iy * r11 * r21 + iz * r12 * r22,
            ix * r20 * r20 + iy * r21 * r21 + iz * r22 * r22)


@njit(cache=True, error_model="numpy", inline="always")
def integrate_quat(qx, qy, qz, qw, wx, wy, wz, h):
    """q += h/2 (ω, 0) ⊗ q, normalized (eq. 6, seed 002; ω in the world frame)."""
    wx, wy, wz = 0.5 * h * wx, 0.5 * h * wy, 0.5 * h * wz
    nx = qx + (wx * qw + wy * qz - wz * qy)
    ny = qy + (wy * qw + wz * qx - wx * qz)
    nz = qz + (wz * qw + wx * qy - wy * qx)
    nw = qw - (wx * qx + wy * qy + wz * qz)
    inv = 1.0 / math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    return nx * inv, ny * inv, nz * inv, nw * inv


@njit(cache=True, error_model="numpy", inline="always")
def is_static_body(body_inv_mass, body_inv_inertia, b):
    return (body_inv_mass[b] == 0.0 and body_inv_inertia[b, 0] == 0.0 and body_inv_inertia[b, 1] == 0.0
            and body_inv_inertia[b, 2] == 0.0)


@njit(cache=True, error_model="numpy", inline="always")
def body_pose_at(body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, b, tau):
    """Pose of body b a time tau into the step, as the caller's semi-implicit Euler moves
    it with the current velocities: x + τv, q + τ/2 (ω,0)⊗q normalized."""
    px, py, pz = body_pos[b, 0], body_pos[b, 1], body_pos[b, 2]
    qx, qy, qz, qw = body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3]
    if tau > 0.0 and not is_static_body(body_inv_mass, body_inv_inertia, b):
        px += tau * body_vel[b, 0]
        py += tau * body_vel[b, 1]
        pz += tau * body_vel[b, 2]
        qx, qy, qz, qw = integrate_quat(qx, qy, qz, qw, body_omega[b, 0], body_omega[b, 1], body_omega[b, 2], tau)
    return px, py, pz, qx, qy, qz, qw


@njit(cache=True, error_model="numpy", inline="always")
def darboux(ax, ay, az, aw, bx, by, bz, bw, lbar):
    """u = 2 B_k q̄·q' (eq. 12) for q̄ = (a+b)/2, q' = (b−a)/l̄, i.e. (2/l̄) Im(a* ⊗ b),
    in the frame of a. Also returns the relative rotation p = a* ⊗ b (same hemisphere)."""
    px, py, pz, pw = qmul(-ax, -ay, -az, aw, bx, by, bz, bw)
    if pw < 0.0:
        px, py, pz, pw = -px, -py, -pz, -pw
    s = 2.0 / lbar
    return s * px, s * py, s * pz, px, py, pz, pw


# ================================================================ tridiagonal solver (eq. 11)
@njit(cache=True, error_model="numpy")
def thomas_solve(lower, diag, upper, rhs, cprime, out):
    """Solve a tridiagonal system by the Thomas algorithm (tridiagonal elimination, eq. 11).

    Row i reads lower[i]·x[i−1] + diag[i]·x[i] + upper[i]·x[i+1] = rhs[i] (lower[0] and
    upper[n−1] unused). Stable without pivoting for diagonally dominant or symmetric
    positive definite matrices, which A = J M⁻¹ Jᵀ is. cprime: scratch (n,). O(n).
    """
    n = diag.shape[0]
    if n == 0:
        return
    d = diag[0]
    cprime[0] = upper[0] / d if n > 1 else 0.0
    out[0] = rhs[0] / d
    for i in range(1, n):
        d = diag[i] - lower[i] * cprime[i - 1]
        cprime[i] = upper[i] / d if i < n - 1 else 0.0
        out[i] = (rhs[i] - lower[i] * out[i - 1]) / d
    for i in range(n - 2, -1, -1):
        out[i] -= cprime[i] * out[i + 1]


@njit(cache=True, error_model="numpy")
def tri_factor(tri, n):
    """Factor the symmetric tridiagonal matrix (tri[:, T_DIAG], tri[:, T_OFF]) once, so
    that every later solve with it is two O(n) sweeps: c'_i = e_i/d'_i, d'_i = a_i − e_{i−1}c'_{i−1}."""
    prev_c = 0.0
    prev_e = 0.0
    for i in range(n):
        d = tri[i, T_DIAG] - prev_e * prev_c
        inv = 1.0 / d
        tri[i, T_DINV] = inv
        c = tri[i, T_OFF] * inv if i < n - 1 else 0.0
        tri[i, T_CPRIME] = c
        prev_c = c
        prev_e = tri[i, T_OFF]


@njit(cache=True, error_model="numpy")
def tri_solve(tri, n):
    """Solve with the factored matrix; tri[:, T_RHS] in, solution out in place."""
    prev = 0.0
    prev_e = 0.0
    for i in range(n):
        y = (tri[i, T_RHS] - prev_e * prev) * tri[i, T_DINV]
        tri[i, T_RHS] = y
        prev = y
        prev_e = tri[i, T_OFF]
    for i in range(n - 2, -1, -1):
        tri[i, T_RHS] -= tri[i, T_CPRIME] * tri[i + 1, T_RHS]


@njit(cache=True, error_model="numpy")
def tri_solve_general(tri, n):
    """Thomas elimination of a general tridiagonal system held in tri: row i is
    T_LOWER·x[i−1] + T_DIAG·x[i] + T_OFF·x[i+1] = T_RHS; the solution replaces T_RHS."""
    if n == 0:
        return
    prev_c = 0.0
    prev_y = 0.0
    for i in range(n):
        lo = tri[i, T_LOWER] if i > 0 else 0.0
        inv = 1.0 / (tri[i, T_DIAG] - lo * prev_c)
        prev_c = tri[i, T_OFF] * inv if i < n - 1 else 0.0
        tri[i, T_CPRIME] = prev_c
        prev_y = (tri[i, T_RHS] - lo * prev_y) * inv
        tri[i, T_RHS] = prev_y
    for i in range(n - 2, -1, -1):
        tri[i, T_RHS] -= tri[i, T_CPRIME] * tri[i + 1, T_RHS]


# ================================================================ geometry
@njit(cache=True, error_model="numpy")
def segment_geometry(node_pos, seg):
    """n_i = (r_{i+1} − r_i)/|r_{i+1} − r_i| and the length, for every segment."""
    for i in range(seg.shape[0]):
        dx = node_pos[i + 1, 0] - node_pos[i, 0]
        dy = node_pos[i + 1, 1] - node_pos[i, 1]
        dz = node_pos[i + 1, 2] - node_pos[i, 2]
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        inv = 1.0 / ln if ln > 1e-300 else 0.0
        seg[i, 0] = dx * inv
        seg[i, 1] = dy * inv
        seg[i, 2] = dz * inv
        seg[i, 3] = ln


# ================================================================ inextensibility (eq. 7-11)
@njit(cache=True, error_model="numpy", inline="always")
def node_quad(k, node_w, node_batt, att_work, use_bodies, ax, ay, az, bx, by, bz):
    """aᵀ W_k b: W_k = w_k E for a free node, the merged node+body inverse mass for a
    node attached to a rigid body (velocity solve only)."""
    a = node_batt[k] if use_bodies else -1
    if a < 0:
        return node_w[k] * (ax * bx + ay * by + az * bz)
    wx, wy, wz = sym_times(att_work[a], AW_W, bx, by, bz)
    return ax * wx + ay * wy + az * wz


@njit(cache=True, error_model="numpy")
def inextensibility_assemble(seg, node_w, node_batt, att_work, use_bodies, tri):
    """A = J W Jᵀ for the rows n_i·(v_{i+1} − v_i) = 0 (eq. 8-11): diagonal
    n_iᵀ(W_i + W_{i+1})n_i (= 1/m_i + 1/m_{i+1}), off-diagonal −n_iᵀ W_{i+1} n_{i+1}
    (= −n_i·n_{i+1}/m_{i+1}). A segment between two immovable nodes becomes an identity
    row with zero right-hand side (T_MASK = 0). Then factored (Thomas)."""
    E = seg.shape[0]
    for i in range(E):
        nx, ny, nz = seg[i, 0], seg[i, 1], seg[i, 2]
        d = (node_quad(i, node_w, node_batt, att_work, use_bodies, nx, ny, nz, nx, ny, nz)
             + node_quad(i + 1, node_w, node_batt, att_work, use_bodies, nx, ny, nz, nx, ny, nz))
        if i < E - 1:
            tri[i, T_OFF] = -node_quad(i + 1, node_w, node_batt, att_work, use_bodies, nx, ny, nz,
                                       seg[i + 1, 0], seg[i + 1, 1], seg[i + 1, 2])
        else:
            tri[i, T_OFF] = 0.0
        if d > 1e-300:
            tri[i, T_DIAG] = d
            tri[i, T_MASK] = 1.0
        else:
            tri[i, T_DIAG] = 1.0
            tri[i, T_MASK] = 0.0
    tri_factor(tri, E)


@njit(cache=True, error_model="numpy")
def apply_body_impulse(body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, b, rx, ry, rz,
                       fx, fy, fz):
    """Impulse F at lever r (world) on body b: v += F/m, ω += I⁻¹ (r × F)."""
    im = body_inv_mass[b]
    body_vel[b, 0] += im * fx
    body_vel[b, 1] += im * fy
    body_vel[b, 2] += im * fz
    tx = ry * fz - rz * fy
    ty = rz * fx - rx * fz
    tz = rx * fy - ry * fx
    ax, ay, az = world_inv_inertia_times(body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3],
                                         body_inv_inertia[b, 0], body_inv_inertia[b, 1], body_inv_inertia[b, 2],
                                         tx, ty, tz)
    body_omega[b, 0] += ax
    body_omega[b, 1] += ay
    body_omega[b, 2] += az


@njit(cache=True, error_model="numpy")
def inextensibility_velocity_pass(h, prm_second, seg, tri, model, state, links, att_work, body_quat, body_vel, body_omega,
                                  body_inv_mass, body_inv_inertia):
    """One exact solve for the inextensibility impulses p (eq. 10-11): V += W Jᵀ p with J
    the start-of-step rows n_i·(v_{i+1} − v_i) (eq. 8).

    To first order the right-hand side is −J V (eq. 11). Here p is chosen so that the
    segments land on their target length at t + h, |d_i + hΔv_i| = l_t (d_i = r_{i+1} − r_i),
    which adds the centripetal term the linear row misses; this pass is one Newton step of
    those equations. Its Jacobian is tridiagonal, n'_iᵀ(W_i + W_{i+1})n_i on the diagonal,
    −n'_iᵀW_{i+1}n_{i+1} and −n'_iᵀW_i n_{i−1} off it (n'_i the predicted direction), equal
    to A (eq. 11) when n' = n, so the same Thomas elimination solves it. A segment turning
    by more than ~45° in one step falls back to the linear row of the paper.
    At a node on a rigid body the impulse P goes to the merged node+body point: the node
    gets W P and the body the part F = P − m_node W P at its anchor (it accumulates in the
    attachment's impulse). seg_lam accumulates p over the passes of the step."""
    E = seg.shape[0]
    v = state.node_vel
    nb = model.node_batt
    nw = model.node_w
    for i in range(E):
        nx, ny, nz, ln = seg[i, 0], seg[i, 1], seg[i, 2], seg[i, 3]
        dx = v[i + 1, 0] - v[i, 0]
        dy = v[i + 1, 1] - v[i, 1]
        dz = v[i + 1, 2] - v[i, 2]
        jv = nx * dx + ny * dy + nz * dz
        perp2 = dx * dx + dy * dy + dz * dz - jv * jv
        lt = tri[i, T_BIAS]
        along = ln + h * jv
        if prm_second and h * h * perp2 < 0.5 * lt * lt and along > 0.0:
            # predicted segment s = d + hΔv, residual (|s| − l_t)/h, Jacobian rows along n' = s/|s|
            sx, sy, sz = ln * nx + h * dx, ln * ny + h * dy, ln * nz + h * dz
            sl = math.sqrt(sx * sx + sy * sy + sz * sz)
            res = (sl - lt) / h
            ax, ay, az = sx / sl, sy / sl, sz / sl
        else:
            res = jv + (ln - lt) / h
            ax, ay, az = nx, ny, nz
        d = (node_quad(i, nw, nb, att_work, True, ax, ay, az, nx, ny, nz)
             + node_quad(i + 1, nw, nb, att_work, True, ax, ay, az, nx, ny, nz))
        if d > 1e-300 and tri[i, T_MASK] != 0.0:
            tri[i, T_DIAG] = d
            tri[i, T_RHS] = -res
            tri[i, T_OFF] = (-node_quad(i + 1, nw, nb, att_work, True, ax, ay, az, seg[i + 1, 0], seg[i + 1, 1],
                                        seg[i + 1, 2]) if i < E - 1 else 0.0)
            tri[i, T_LOWER] = (-node_quad(i, nw, nb, att_work, True, ax, ay, az, seg[i - 1, 0], seg[i - 1, 1],
                                          seg[i - 1, 2]) if i > 0 else 0.0)
        else:
            tri[i, T_DIAG] = 1.0
            tri[i, T_RHS] = 0.0
            tri[i, T_OFF] = 0.0
            tri[i, T_LOWER] = 0.0
    tri_solve_general(tri, E)
    for i in range(E):
        state.seg_lam[i] += tri[i, T_RHS]
    # V += W Jᵀ p : node k gets n_{k−1} p_{k−1} − n_k p_k
    N = E + 1
    for k in range(N):
        px = py = pz = 0.0
        if k > 0:
            p = tri[k - 1, T_RHS]
            px += seg[k - 1, 0] * p
            py += seg[k - 1, 1] * p
            pz += seg[k - 1, 2] * p
        if k < E:
            p = tri[k, T_RHS]
            px -= seg[k, 0] * p
            py -= seg[k, 1] * p
            pz -= seg[k, 2] * p
        a = model.node_batt[k]
        if a < 0:
            w = model.node_w[k]
            v[k, 0] += w * px
            v[k, 1] += w * py
            v[k, 2] += w * pz
        else:
            dx, dy, dz = sym_times(att_work[a], AW_W, px, py, pz)
            v[k, 0] += dx
            v[k, 1] += dy
            v[k, 2] += dz
            m = att_work[a, AW_MASS]
            fx, fy, fz = px - m * dx, py - m * dy, pz - m * dz
            b = links.att_int[a, AI_BODY]
            apply_body_impulse(body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, b,
                               att_work[a, AW_R], att_work[a, AW_R + 1], att_work[a, AW_R + 2], fx, fy, fz)
            state.att_lam[a, 0] += fx
            state.att_lam[a, 1] += fy
            state.att_lam[a, 2] += fz


@njit(cache=True, error_model="numpy")
def stretch_merit(node_pos, seg_rest, tri):
    """Σ ((|r_{i+1} − r_i| − l_i)/l_i)² over the rows that can move."""
    e = 0.0
    for i in range(seg_rest.shape[0]):
        dx = node_pos[i + 1, 0] - node_pos[i, 0]
        dy = node_pos[i + 1, 1] - node_pos[i, 1]
        dz = node_pos[i + 1, 2] - node_pos[i, 2]
        c = (math.sqrt(dx * dx + dy * dy + dz * dz) - seg_rest[i]) / seg_rest[i]
        e += c * c * tri[i, T_MASK]
    return e


@njit(cache=True, error_model="numpy")
def move_along_rows(node_pos, node_w_pos, seg, tri, alpha):
    """r_k += α W_k (n_{k−1} p_{k−1} − n_k p_k) with p in tri[:, T_RHS]."""
    E = seg.shape[0]
    for k in range(E + 1):
        w = node_w_pos[k] * alpha
        if w == 0.0:
            continue
        px = py = pz = 0.0
        if k > 0:
            p = tri[k - 1, T_RHS]
            px += seg[k - 1, 0] * p
            py += seg[k - 1, 1] * p
            pz += seg[k - 1, 2] * p
        if k < E:
            p = tri[k, T_RHS]
            px -= seg[k, 0] * p
            py -= seg[k, 1] * p
            pz -= seg[k, 2] * p
        node_pos[k, 0] += w * px
        node_pos[k, 1] += w * py
        node_pos[k, 2] += w * pz


@njit(cache=True, error_model="numpy")
def inextensibility_sweep(node_pos, seg_rest, node_w_pos, forward):
    """One nonlinear Gauss-Seidel sweep: each segment in turn put exactly back to its rest
    length, the correction shared by inverse mass along the segment (robust for any turn)."""
    E = seg_rest.shape[0]
    for t in range(E):
        i = t if forward else E - 1 - t
        wa = node_w_pos[i]
        wb = node_w_pos[i + 1]
        ws = wa + wb
        if ws == 0.0:
            continue
        dx = node_pos[i + 1, 0] - node_pos[i, 0]
        dy = node_pos[i + 1, 1] - node_pos[i, 1]
        dz = node_pos[i + 1, 2] - node_pos[i, 2]
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        if ln < 1e-300:
            continue
        f = (ln - seg_rest[i]) / (ln * ws)
        node_pos[i, 0] += wa * f * dx
        node_pos[i, 1] += wa * f * dy
        node_pos[i, 2] += wa * f * dz
        node_pos[i + 1, 0] -= wb * f * dx
        node_pos[i + 1, 1] -= wb * f * dy
        node_pos[i + 1, 2] -= wb * f * dz


@njit(cache=True, error_model="numpy")
def inextensibility_project(node_pos, seg_rest, node_w_pos, erp, seg, tri, att_work, node_batt):
    """Split-impulse relax of G_i = |r_{i+1} − r_i| − l_i (eq. 7): pseudo-velocities with
    J V* = −ERP·G/h through the same tridiagonal matrix, evaluated at the current
    (predicted) positions, so repeated calls are Gauss-Newton steps of the mass-weighted
    projection (eq. 15-16, seed 004). The step is halved until the stretch decreases
    (backtracking), which keeps a large turn of the segments from overshooting. Rigid-body
    and world anchors do not move here."""
    E = seg.shape[0]
    segment_geometry(node_pos, seg)
    inextensibility_assemble(seg, node_w_pos, node_batt, att_work, False, tri)
    e0 = 0.0
    for i in range(E):
        c = seg[i, 3] - seg_rest[i]
        tri[i, T_RHS] = -erp * c * tri[i, T_MASK]
        c /= seg_rest[i]
        e0 += c * c * tri[i, T_MASK]
    if e0 < 1e-30:
        return
    tri_solve(tri, E)
    alpha = 1.0
    move_along_rows(node_pos, node_w_pos, seg, tri, alpha)
    for _ in range(6):
        if stretch_merit(node_pos, seg_rest, tri) < e0:
            return
        move_along_rows(node_pos, node_w_pos, seg, tri, -0.5 * alpha)
        alpha *= 0.5


# ================================================================ tangent coupling (eq. 15-18)
@njit(cache=True, error_model="numpy")
def tangent_row(node_pos, elem_quat, elem_inv_inertia, node_w, j, tan):
    """Rows of G_j = n_j − d3(q_j) = 0 (eq. 15) projected on the element's d1, d2:
    C_a = d_a·n_j, Ċ_a = g_a·(v_{j+1} − v_j) + k_a·ω_j with g_a = (E − n nᵀ)d_a/|r_{j+1} − r_j|
    (R_p of eq. 16) and k_a = d_a × n_j (R_q of eq. 16). The third component of G,
    d3·G = n·d3 − 1, is second order, so the 3×3 matrix of eq. 18 is singular at G = 0:
    these two rows carry all its first-order information. Writes tan[j] and returns C."""
    dx = node_pos[j + 1, 0] - node_pos[j, 0]
    dy = node_pos[j + 1, 1] - node_pos[j, 1]
    dz = node_pos[j + 1, 2] - node_pos[j, 2]
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    inv = 1.0 / ln
    nx, ny, nz = dx * inv, dy * inv, dz * inv
    qx, qy, qz, qw = elem_quat[j, 0], elem_quat[j, 1], elem_quat[j, 2], elem_quat[j, 3]
    ix, iy, iz = elem_inv_inertia[j, 0], elem_inv_inertia[j, 1], elem_inv_inertia[j, 2]
    c1 = 0.0
    c2 = 0.0
    for a in range(2):
        if a == 0:
            ex, ey, ez = rotate(qx, qy, qz, qw, 1.0, 0.0, 0.0)
        else:
            ex, ey, ez = rotate(qx, qy, qz, qw, 0.0, 1.0, 0.0)
        dn = ex * nx + ey * ny + ez * nz
        if a == 0:
            c1 = dn
        else:
            c2 = dn
        o = 3 * a
        tan[j, TAN_G1 + o] = (ex - dn * nx) * inv
        tan[j, TAN_G1 + o + 1] = (ey - dn * ny) * inv
        tan[j, TAN_G1 + o + 2] = (ez - dn * nz) * inv
        kx, ky, kz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx
        tan[j, TAN_K1 + o] = kx
        tan[j, TAN_K1 + o + 1] = ky
        tan[j, TAN_K1 + o + 2] = kz
        mx, my, mz = world_inv_inertia_times(qx, qy, qz, qw, ix, iy, iz, kx, ky, kz)
        tan[j, TAN_MK1 + o] = mx
        tan[j, TAN_MK1 + o + 1] = my
        tan[j, TAN_MK1 + o + 2] = mz
    # K = J M⁻¹ Jᵀ (2×2, eq. 18)
    w = node_w[j] + node_w[j + 1]
    k11 = (w * (tan[j, 0] * tan[j, 0] + tan[j, 1] * tan[j, 1] + tan[j, 2] * tan[j, 2])
           + tan[j, 6] * tan[j, 12] + tan[j, 7] * tan[j, 13] + tan[j, 8] * tan[j, 14])
    k12 = (w * (tan[j, 0] * tan[j, 3] + tan[j, 1] * tan[j, 4] + tan[j, 2] * tan[j, 5])
           + tan[j, 6] * tan[j, 15] + tan[j, 7] * tan[j, 16] + tan[j, 8] * tan[j, 17])
    k22 = (w * (tan[j, 3] * tan[j, 3] + tan[j, 4] * tan[j, 4] + tan[j, 5] * tan[j, 5])
           + tan[j, 9] * tan[j, 15] + tan[j, 10] * tan[j, 16] + tan[j, 11] * tan[j, 17])
    det = k11 * k22 - k12 * k12
    if det > 1e-300:
        idet = 1.0 / det
        tan[j, TAN_KINV] = k22 * idet
        tan[j, TAN_KINV + 1] = -k12 * idet
        tan[j, TAN_KINV + 2] = k11 * idet
    else:
        tan[j, TAN_KINV] = 0.0
        tan[j, TAN_KINV + 1] = 0.0
        tan[j, TAN_KINV + 2] = 0.0
    return c1, c2


@njit(cache=True, error_model="numpy")
def tangent_prepare(state, model, tan):
    for j in range(tan.shape[0]):
        tangent_row(state.node_pos, state.elem_quat, model.elem_inv_inertia, model.node_w, j, tan)


@njit(cache=True, error_model="numpy", inline="always")
def tangent_apply(tan, j, l1, l2, node_w, v, w):
    """V += M⁻¹ Jᵀ λ for tangent row pair j (eq. 17)."""
    gx = tan[j, 0] * l1 + tan[j, 3] * l2
    gy = tan[j, 1] * l1 + tan[j, 4] * l2
    gz = tan[j, 2] * l1 + tan[j, 5] * l2
    wa = node_w[j]
    wb = node_w[j + 1]
    v[j, 0] -= wa * gx
    v[j, 1] -= wa * gy
    v[j, 2] -= wa * gz
    v[j + 1, 0] += wb * gx
    v[j + 1, 1] += wb * gy
    v[j + 1, 2] += wb * gz
    w[j, 0] += tan[j, 12] * l1 + tan[j, 15] * l2
    w[j, 1] += tan[j, 13] * l1 + tan[j, 16] * l2
    w[j, 2] += tan[j, 14] * l1 + tan[j, 17] * l2


@njit(cache=True, error_model="numpy")
def tangent_warm_start(tan, state, model, scale):
    for j in range(tan.shape[0]):
        l1 = state.tan_lam[j, 0] * scale
        l2 = state.tan_lam[j, 1] * scale
        state.tan_lam[j, 0] = l1
        state.tan_lam[j, 1] = l2
        tangent_apply(tan, j, l1, l2, model.node_w, state.node_vel, state.elem_omega)


@njit(cache=True, error_model="numpy")
def tangent_solve(tan, state, model):
    """One Gauss-Seidel sweep of eq. 18: Δλ = −K⁻¹ Ġ, accumulated (eq. 17)."""
    v = state.node_vel
    w = state.elem_omega
    for j in range(tan.shape[0]):
        rvx = v[j + 1, 0] - v[j, 0]
        rvy = v[j + 1, 1] - v[j, 1]
        rvz = v[j + 1, 2] - v[j, 2]
        c1 = (tan[j, 0] * rvx + tan[j, 1] * rvy + tan[j, 2] * rvz
              + tan[j, 6] * w[j, 0] + tan[j, 7] * w[j, 1] + tan[j, 8] * w[j, 2])
        c2 = (tan[j, 3] * rvx + tan[j, 4] * rvy + tan[j, 5] * rvz
              + tan[j, 9] * w[j, 0] + tan[j, 10] * w[j, 1] + tan[j, 11] * w[j, 2])
        l1 = -(tan[j, TAN_KINV] * c1 + tan[j, TAN_KINV + 1] * c2)
        l2 = -(tan[j, TAN_KINV + 1] * c1 + tan[j, TAN_KINV + 2] * c2)
        state.tan_lam[j, 0] += l1
        state.tan_lam[j, 1] += l2
        tangent_apply(tan, j, l1, l2, model.node_w, v, w)


@njit(cache=True, error_model="numpy")
def tangent_project(state, model, erp, tan):
    """Split-impulse relax of eq. 15 at the current positions: displacement −ERP·K⁻¹C
    through M⁻¹Jᵀ — the light element mostly turns to the tangent; a node moves only
    where the element cannot (e.g. next to a clamp)."""
    x = state.node_pos
    q = state.elem_quat
    w = model.node_w_pos
    for j in range(tan.shape[0]):
        c1, c2 = tangent_row(x, q, model.elem_inv_inertia, w, j, tan)
        l1 = -erp * (tan[j, TAN_KINV] * c1 + tan[j, TAN_KINV + 1] * c2)
        l2 = -erp * (tan[j, TAN_KINV + 1] * c1 + tan[j, TAN_KINV + 2] * c2)
        gx = tan[j, 0] * l1 + tan[j, 3] * l2
        gy = tan[j, 1] * l1 + tan[j, 4] * l2
        gz = tan[j, 2] * l1 + tan[j, 5] * l2
        x[j, 0] -= w[j] * gx
        x[j, 1] -= w[j] * gy
        x[j, 2] -= w[j] * gz
        x[j + 1, 0] += w[j + 1] * gx
        x[j + 1, 1] += w[j + 1] * gy
        x[j + 1, 2] += w[j + 1] * gz
        tx = tan[j, 12] * l1 + tan[j, 15] * l2
        ty = tan[j, 13] * l1 + tan[j, 16] * l2
        tz = tan[j, 14] * l1 + tan[j, 17] * l2
        q[j, 0], q[j, 1], q[j, 2], q[j, 3] = integrate_quat(q[j, 0], q[j, 1], q[j, 2], q[j, 3], tx, ty, tz, 1.0)


# ================================================================ bending and twist (eq. 12-14)
@njit(cache=True, error_model="numpy")
def pair_row_prepare(row, r, ax, ay, az, aw, bx, by, bz, bw, lbar, u0x, u0y, u0z, prm, h):
    """Bending/twist of one pair of frames a, b (elements j, j+1, or a clamp and its
    element) as an implicit spring on the strain u − û (eq. 12-14).

    u = (2/l̄) Im(a* ⊗ b) (eq. 12); energy V = ½ l̄ Σ_k K_kk (u_k − û_k)² (eq. 13);
    u̇ = T (ω_b − ω_a), T = (1/l̄)(p_w E − [p_v]×) R_aᵀ, p = a* ⊗ b; the torques of
    eq. 14 are τ_b = −Tᵀ s(u − û), τ_a = −τ_b with s_k = l̄ K_kk.
    Instead of applying them explicitly (stable only for h ≲ l²·√(ρA/EI)), the row is a
    soft constraint solved with the others (backward Euler, Kelvin-Voigt damping with
    retardation time τ): impulse P = −h s (C + h u̇') − h τ s u̇', i.e.
    u̇' + Γ P + C/(h+τ) = 0 with Γ = 1/(h s (h+τ)). At rest P/h equals eq. 14's torque.
    Fills row r except the M⁻¹Tᵀ blocks (PR_A, PR_B), which the caller writes, and K⁻¹.
    Returns C (3)."""
    ux, uy, uz, px, py, pz, pw = darboux(ax, ay, az, aw, bx, by, bz, bw, lbar)
    cx, cy, cz = ux - u0x, uy - u0y, uz - u0z
    # S = p_w E − [p_v]× ; T = S R_aᵀ / l̄, R_aᵀ's rows are d1, d2, d3 of a
    d1x, d1y, d1z = rotate(ax, ay, az, aw, 1.0, 0.0, 0.0)
    d2x, d2y, d2z = rotate(ax, ay, az, aw, 0.0, 1.0, 0.0)
    d3x, d3y, d3z = rotate(ax, ay, az, aw, 0.0, 0.0, 1.0)
    il = 1.0 / lbar
    s00, s01, s02 = pw, pz, -py
    s10, s11, s12 = -pz, pw, px
    s20, s21, s22 = py, -px, pw
    row[r, 0] = il * (s00 * d1x + s01 * d2x + s02 * d3x)
    row[r, 1] = il * (s00 * d1y + s01 * d2y + s02 * d3y)
    row[r, 2] = il * (s00 * d1z + s01 * d2z + s02 * d3z)
    row[r, 3] = il * (s10 * d1x + s11 * d2x + s12 * d3x)
    row[r, 4] = il * (s10 * d1y + s11 * d2y + s12 * d3y)
    row[r, 5] = il * (s10 * d1z + s11 * d2z + s12 * d3z)
    row[r, 6] = il * (s20 * d1x + s21 * d2x + s22 * d3x)
    row[r, 7] = il * (s20 * d1y + s21 * d2y + s22 * d3y)
    row[r, 8] = il * (s20 * d1z + s21 * d2z + s22 * d3z)
    tau = prm[P_RETARDATION]
    for k in range(3):
        s = lbar * prm[P_K1 + k]
        c = cx if k == 0 else (cy if k == 1 else cz)
        if s > 0.0:
            row[r, PR_GAMMA + k] = 1.0 / (h * s * (h + tau))
            row[r, PR_BIAS + k] = c / (h + tau)
        else:
            row[r, PR_GAMMA + k] = 1e30      # no stiffness: the row carries no impulse
            row[r, PR_BIAS + k] = 0.0
    return cx, cy, cz


@njit(cache=True, error_model="numpy", inline="always")
def pair_fill_minv(row, r, off, qx, qy, qz, qw, ix, iy, iz):
    """row[r, off + 3k : off + 3k + 3] = M⁻¹ T[k] for a frame with principal inverse inertia."""
    for k in range(3):
        mx, my, mz = world_inv_inertia_times(qx, qy, qz, qw, ix, iy, iz, row[r, 3 * k], row[r, 3 * k + 1],
                                             row[r, 3 * k + 2])
        row[r, off + 3 * k] = mx
        row[r, off + 3 * k + 1] = my
        row[r, off + 3 * k + 2] = mz


@njit(cache=True, error_model="numpy", inline="always")
def pair_finish(row, r):
    """K⁻¹ = (T (M_a + M_b) Tᵀ + diag Γ)⁻¹."""
    k00 = 0.0
    k01 = 0.0
    k02 = 0.0
    k11 = 0.0
    k12 = 0.0
    k22 = 0.0
    for c in range(3):
        a0 = row[r, PR_A + c] + row[r, PR_B + c]
        a1 = row[r, PR_A + 3 + c] + row[r, PR_B + 3 + c]
        a2 = row[r, PR_A + 6 + c] + row[r, PR_B + 6 + c]
        t0, t1, t2 = row[r, c], row[r, 3 + c], row[r, 6 + c]
        k00 += t0 * a0
        k01 += t1 * a0
        k02 += t2 * a0
        k11 += t1 * a1
        k12 += t2 * a1
        k22 += t2 * a2
    i0, i1, i2, i3, i4, i5 = inv3sym(k00 + row[r, PR_GAMMA], k01, k02, k11 + row[r, PR_GAMMA + 1], k12,
                                     k22 + row[r, PR_GAMMA + 2])
    row[r, PR_KINV] = i0
    row[r, PR_KINV + 1] = i1
    row[r, PR_KINV + 2] = i2
    row[r, PR_KINV + 3] = i3
    row[r, PR_KINV + 4] = i4
    row[r, PR_KINV + 5] = i5


@njit(cache=True, error_model="numpy")
def pair_prepare(state, model, prm, h, pair):
    q = state.elem_quat
    ii = model.elem_inv_inertia
    for j in range(pair.shape[0]):
        pair_row_prepare(pair, j, q[j, 0], q[j, 1], q[j, 2], q[j, 3], q[j + 1, 0], q[j + 1, 1], q[j + 1, 2],
                         q[j + 1, 3], model.pair_rest[j], model.pair_u0[j, 0], model.pair_u0[j, 1],
                         model.pair_u0[j, 2], prm, h)
        pair_fill_minv(pair, j, PR_A, q[j, 0], q[j, 1], q[j, 2], q[j, 3], ii[j, 0], ii[j, 1], ii[j, 2])
        pair_fill_minv(pair, j, PR_B, q[j + 1, 0], q[j + 1, 1], q[j + 1, 2], q[j + 1, 3], ii[j + 1, 0],
                       ii[j + 1, 1], ii[j + 1, 2])
        pair_finish(pair, j)


@njit(cache=True, error_model="numpy", inline="always")
def pair_impulse(row, r, lam, wax, way, waz, wbx, wby, wbz):
    """ΔP = −(K + Γ)⁻¹ (u̇ + bias + Γ P) for the soft row r; lam (3) accumulates it."""
    dwx, dwy, dwz = wbx - wax, wby - way, wbz - waz
    e0 = row[r, 0] * dwx + row[r, 1] * dwy + row[r, 2] * dwz + row[r, PR_BIAS] + row[r, PR_GAMMA] * lam[0]
    e1 = (row[r, 3] * dwx + row[r, 4] * dwy + row[r, 5] * dwz + row[r, PR_BIAS + 1]
          + row[r, PR_GAMMA + 1] * lam[1])
    e2 = (row[r, 6] * dwx + row[r, 7] * dwy + row[r, 8] * dwz + row[r, PR_BIAS + 2]
          + row[r, PR_GAMMA + 2] * lam[2])
    d0, d1, d2 = sym_times(row[r], PR_KINV, e0, e1, e2)
    lam[0] -= d0
    lam[1] -= d1
    lam[2] -= d2
    return -d0, -d1, -d2


@njit(cache=True, error_model="numpy", inline="always")
def pair_delta(row, r, off, p0, p1, p2):
    """Δω = (M⁻¹Tᵀ) P for one side."""
    return (row[r, off] * p0 + row[r, off + 3] * p1 + row[r, off + 6] * p2,
            row[r, off + 1] * p0 + row[r, off + 4] * p1 + row[r, off + 7] * p2,
            row[r, off + 2] * p0 + row[r, off + 5] * p1 + row[r, off + 8] * p2)


@njit(cache=True, error_model="numpy")
def pair_warm_start(pair, state, scale):
    w = state.elem_omega
    for j in range(pair.shape[0]):
        lam = state.pair_lam[j]
        lam[0] *= scale
        lam[1] *= scale
        lam[2] *= scale
        ax, ay, az = pair_delta(pair, j, PR_A, lam[0], lam[1], lam[2])
        bx, by, bz = pair_delta(pair, j, PR_B, lam[0], lam[1], lam[2])
        w[j, 0] -= ax
        w[j, 1] -= ay
        w[j, 2] -= az
        w[j + 1, 0] += bx
        w[j + 1, 1] += by
        w[j + 1, 2] += bz


@njit(cache=True, error_model="numpy")
def pair_solve(pair, state):
    """One Gauss-Seidel sweep over the bending/twist rows of neighbouring elements."""
    w = state.elem_omega
    for j in range(pair.shape[0]):
        p0, p1, p2 = pair_impulse(pair, j, state.pair_lam[j], w[j, 0], w[j, 1], w[j, 2], w[j + 1, 0],
                                  w[j + 1, 1], w[j + 1, 2])
        ax, ay, az = pair_delta(pair, j, PR_A, p0, p1, p2)
        bx, by, bz = pair_delta(pair, j, PR_B, p0, p1, p2)
        w[j, 0] -= ax
        w[j, 1] -= ay
        w[j, 2] -= az
        w[j + 1, 0] += bx
        w[j + 1, 1] += by
        w[j + 1, 2] += bz


@njit(cache=True, error_model="numpy")
def bending_torques_explicit(elem_quat, elem_omega, pair_rest, pair_u0, prm, torque):
    """The torques of eq. 14 on every element from the energy gradient, plus the
    Kelvin-Voigt damping torque −Tᵀ(τ s u̇): τ_{j+1} −= Tᵀ s(u − û), τ_j += Tᵀ s(u − û).
    torque (E, 3) is overwritten (N·m)."""
    torque[:, :] = 0.0
    tau = prm[P_RETARDATION]
    for j in range(pair_rest.shape[0]):
        ax, ay, az, aw = elem_quat[j, 0], elem_quat[j, 1], elem_quat[j, 2], elem_quat[j, 3]
        bx, by, bz, bw = elem_quat[j + 1, 0], elem_quat[j + 1, 1], elem_quat[j + 1, 2], elem_quat[j + 1, 3]
        lbar = pair_rest[j]
        ux, uy, uz, px, py, pz, pw = darboux(ax, ay, az, aw, bx, by, bz, bw, lbar)
        d1x, d1y, d1z = rotate(ax, ay, az, aw, 1.0, 0.0, 0.0)
        d2x, d2y, d2z = rotate(ax, ay, az, aw, 0.0, 1.0, 0.0)
        d3x, d3y, d3z = rotate(ax, ay, az, aw, 0.0, 0.0, 1.0)
        dwx = elem_omega[j + 1, 0] - elem_omega[j, 0]
        dwy = elem_omega[j + 1, 1] - elem_omega[j, 1]
        dwz = elem_omega[j + 1, 2] - elem_omega[j, 2]
        # T rows
        il = 1.0 / lbar
        t0x = il * (pw * d1x + pz * d2x - py * d3x)
        t0y = il * (pw * d1y + pz * d2y - py * d3y)
        t0z = il * (pw * d1z + pz * d2z - py * d3z)
        t1x = il * (-pz * d1x + pw * d2x + px * d3x)
        t1y = il * (-pz * d1y + pw * d2y + px * d3y)
        t1z = il * (-pz * d1z + pw * d2z + px * d3z)
        t2x = il * (py * d1x - px * d2x + pw * d3x)
        t2y = il * (py * d1y - px * d2y + pw * d3y)
        t2z = il * (py * d1z - px * d2z + pw * d3z)
        f0 = lbar * prm[P_K1] * ((ux - pair_u0[j, 0]) + tau * (t0x * dwx + t0y * dwy + t0z * dwz))
        f1 = lbar * prm[P_K2] * ((uy - pair_u0[j, 1]) + tau * (t1x * dwx + t1y * dwy + t1z * dwz))
        f2 = lbar * prm[P_K3] * ((uz - pair_u0[j, 2]) + tau * (t2x * dwx + t2y * dwy + t2z * dwz))
        tx = t0x * f0 + t1x * f1 + t2x * f2
        ty = t0y * f0 + t1y * f1 + t2y * f2
        tz = t0z * f0 + t1z * f1 + t2z * f2
        torque[j, 0] += tx
        torque[j, 1] += ty
        torque[j, 2] += tz
        torque[j + 1, 0] -= tx
        torque[j + 1, 1] -= ty
        torque[j + 1, 2] -= tz


# ================================================================ attachments
@njit(cache=True, error_model="numpy", inline="always")
def anchor_frame(links, a, qx, qy, qz, qw):
    """World quaternion of attachment a's clamp frame (q_body = (qx, qy, qz, qw) on a body)."""
    f = links.att_f
    if links.att_int[a, AI_BODY] < 0:
        return f[a, AF_FRAME], f[a, AF_FRAME + 1], f[a, AF_FRAME + 2], f[a, AF_FRAME + 3]
    return qmul(qx, qy, qz, qw, f[a, AF_FRAME], f[a, AF_FRAME + 1], f[a, AF_FRAME + 2], f[a, AF_FRAME + 3])


@njit(cache=True, error_model="numpy")
def attach_prepare(state, model, links, prm, h, tau, att, clamp, body_pos, body_quat, body_vel, body_omega,
                   body_inv_mass, body_inv_inertia):
    """Point rows node ↔ body anchor (3 rows, C = p_body − r_node, J = [−E | E, −[r]×]):
    K = w_node E + K_b, K_b = E/m_b − [r]× I⁻¹ [r]×; W = K_b (E + m_node K_b)⁻¹ is the
    inverse mass of node and body point moving together (used by the tridiagonal solve).
    Clamps: a pair row between the anchor frame and the end element, l̄ = l_element/2."""
    x = state.node_pos
    q = state.elem_quat
    E = q.shape[0]
    for a in range(links.att_int.shape[0]):
        node = links.att_int[a, AI_NODE]
        b = links.att_int[a, AI_BODY]
        m = model.node_mass[node]
        att[a, AW_MASS] = m
        qx, qy, qz, qw = 0.0, 0.0, 0.0, 1.0
        if b >= 0:
            _, _, _, qx, qy, qz, qw = body_pose_at(body_pos, body_quat, body_vel, body_omega, body_inv_mass,
                                                   body_inv_inertia, b, tau)
        fx, fy, fz, fw = anchor_frame(links, a, qx, qy, qz, qw)
        att[a, AW_FRAME] = fx
        att[a, AW_FRAME + 1] = fy
        att[a, AW_FRAME + 2] = fz
        att[a, AW_FRAME + 3] = fw
        if b >= 0:
            rx, ry, rz = rotate(qx, qy, qz, qw, links.att_f[a, 0], links.att_f[a, 1], links.att_f[a, 2])
            att[a, AW_R] = rx
            att[a, AW_R + 1] = ry
            att[a, AW_R + 2] = rz
            i00, i01, i02, i11, i12, i22 = world_inv_inertia_matrix(qx, qy, qz, qw, body_inv_inertia[b, 0],
                                                                    body_inv_inertia[b, 1], body_inv_inertia[b, 2])
            # −[r]× I⁻¹ [r]× = [r]×ᵀ I⁻¹ [r]× ; [r]× = [[0,−z,y],[z,0,−x],[−y,x,0]]
            # columns of I⁻¹[r]×
            c0x, c0y, c0z = i01 * rz - i02 * ry, i11 * rz - i12 * ry, i12 * rz - i22 * ry
            c1x, c1y, c1z = -i00 * rz + i02 * rx, -i01 * rz + i12 * rx, -i02 * rz + i22 * rx
            c2x, c2y, c2z = i00 * ry - i01 * rx, i01 * ry - i11 * rx, i02 * ry - i12 * rx
            # [r]×ᵀ = −[r]× rows: (0, z, −y), (−z, 0, x), (y, −x, 0)
            im = body_inv_mass[b]
            k00 = im + (rz * c0y - ry * c0z)
            k01 = rz * c1y - ry * c1z
            k02 = rz * c2y - ry * c2z
            k11 = im + (-rz * c1x + rx * c1z)
            k12 = -rz * c2x + rx * c2z
            k22 = im + (ry * c2x - rx * c2y)
            wn = model.node_w[node]
            kin = inv3sym(k00 + wn, k01, k02, k11 + wn, k12, k22 + wn)
            for c in range(6):
                att[a, AW_KINV + c] = kin[c]
            # W = K_b (E + m K_b)⁻¹
            mi = inv3sym(1.0 + m * k00, m * k01, m * k02, 1.0 + m * k11, m * k12, 1.0 + m * k22)
            # general product of two symmetric matrices, then symmetrized
            w00 = k00 * mi[0] + k01 * mi[1] + k02 * mi[2]
            w01 = k00 * mi[1] + k01 * mi[3] + k02 * mi[4]
            w02 = k00 * mi[2] + k01 * mi[4] + k02 * mi[5]
            w10 = k01 * mi[0] + k11 * mi[1] + k12 * mi[2]
            w11 = k01 * mi[1] + k11 * mi[3] + k12 * mi[4]
            w12 = k01 * mi[2] + k11 * mi[4] + k12 * mi[5]
            w20 = k02 * mi[0] + k12 * mi[1] + k22 * mi[2]
            w21 = k02 * mi[1] + k12 * mi[3] + k22 * mi[4]
            w22 = k02 * mi[2] + k12 * mi[4] + k22 * mi[5]
            att[a, AW_W] = w00
            att[a, AW_W + 1] = 0.5 * (w01 + w10)
            att[a, AW_W + 2] = 0.5 * (w02 + w20)
            att[a, AW_W + 3] = w11
            att[a, AW_W + 4] = 0.5 * (w12 + w21)
            att[a, AW_W + 5] = w22
        if links.att_int[a, AI_CLAMP] != 0:
            j = node if node < E else E - 1
            lbar = 0.5 * model.seg_rest[j]
            pair_row_prepare(clamp, a, fx, fy, fz, fw, q[j, 0], q[j, 1], q[j, 2], q[j, 3], lbar, 0.0, 0.0, 0.0,
                             prm, h)
            if b >= 0:
                pair_fill_minv(clamp, a, PR_A, qx, qy, qz, qw, body_inv_inertia[b, 0], body_inv_inertia[b, 1],
                               body_inv_inertia[b, 2])
            else:
                for c in range(9):
                    clamp[a, PR_A + c] = 0.0
            ii = model.elem_inv_inertia
            pair_fill_minv(clamp, a, PR_B, q[j, 0], q[j, 1], q[j, 2], q[j, 3], ii[j, 0], ii[j, 1], ii[j, 2])
            pair_finish(clamp, a)


@njit(cache=True, error_model="numpy")
def attach_apply_point(state, model, links, att, a, lx, ly, lz, body_quat, body_vel, body_omega, body_inv_mass,
                       body_inv_inertia):
    """Impulse λ on the body at its anchor, −λ on the node."""
    node = links.att_int[a, AI_NODE]
    b = links.att_int[a, AI_BODY]
    wn = model.node_w[node]
    v = state.node_vel
    v[node, 0] -= wn * lx
    v[node, 1] -= wn * ly
    v[node, 2] -= wn * lz
    apply_body_impulse(body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, b, att[a, AW_R],
                       att[a, AW_R + 1], att[a, AW_R + 2], lx, ly, lz)


@njit(cache=True, error_model="numpy")
def attach_clamp_apply(state, links, clamp, a, p0, p1, p2, body_omega, E):
    node = links.att_int[a, AI_NODE]
    b = links.att_int[a, AI_BODY]
    j = node if node < E else E - 1
    w = state.elem_omega
    bx, by, bz = pair_delta(clamp, a, PR_B, p0, p1, p2)
    w[j, 0] += bx
    w[j, 1] += by
    w[j, 2] += bz
    if b >= 0:
        ax, ay, az = pair_delta(clamp, a, PR_A, p0, p1, p2)
        body_omega[b, 0] -= ax
        body_omega[b, 1] -= ay
        body_omega[b, 2] -= az


@njit(cache=True, error_model="numpy")
def attach_warm_start(state, model, links, att, clamp, scale, body_quat, body_vel, body_omega, body_inv_mass,
                      body_inv_inertia):
    E = state.elem_quat.shape[0]
    for a in range(links.att_int.shape[0]):
        lam = state.att_lam[a]
        lam[0] *= scale
        lam[1] *= scale
        lam[2] *= scale
        if links.att_int[a, AI_BODY] >= 0:
            attach_apply_point(state, model, links, att, a, lam[0], lam[1], lam[2], body_quat, body_vel, body_omega,
                               body_inv_mass, body_inv_inertia)
        if links.att_int[a, AI_CLAMP] != 0:
            c = state.clamp_lam[a]
            c[0] *= scale
            c[1] *= scale
            c[2] *= scale
            attach_clamp_apply(state, links, clamp, a, c[0], c[1], c[2], body_omega, E)


@njit(cache=True, error_model="numpy")
def attach_solve(state, model, links, att, clamp, body_quat, body_vel, body_omega, body_inv_mass,
                 body_inv_inertia):
    """One sweep: each body anchor's point row (λ = −K⁻¹ Ċ, Ċ = v_b + ω_b × r − v_node),
    then each clamp's soft bending/twist row."""
    E = state.elem_quat.shape[0]
    v = state.node_vel
    w = state.elem_omega
    for a in range(links.att_int.shape[0]):
        node = links.att_int[a, AI_NODE]
        b = links.att_int[a, AI_BODY]
        if b >= 0:
            rx, ry, rz = att[a, AW_R], att[a, AW_R + 1], att[a, AW_R + 2]
            ox, oy, oz = body_omega[b, 0], body_omega[b, 1], body_omega[b, 2]
            cx = body_vel[b, 0] + (oy * rz - oz * ry) - v[node, 0]
            cy = body_vel[b, 1] + (oz * rx - ox * rz) - v[node, 1]
            cz = body_vel[b, 2] + (ox * ry - oy * rx) - v[node, 2]
            lx, ly, lz = sym_times(att[a], AW_KINV, cx, cy, cz)
            lx, ly, lz = -lx, -ly, -lz
            state.att_lam[a, 0] += lx
            state.att_lam[a, 1] += ly
            state.att_lam[a, 2] += lz
            attach_apply_point(state, model, links, att, a, lx, ly, lz, body_quat, body_vel, body_omega,
                               body_inv_mass, body_inv_inertia)
        if links.att_int[a, AI_CLAMP] != 0:
            j = node if node < E else E - 1
            if b >= 0:
                wax, way, waz = body_omega[b, 0], body_omega[b, 1], body_omega[b, 2]
            else:
                wax = way = waz = 0.0
            p0, p1, p2 = pair_impulse(clamp, a, state.clamp_lam[a], wax, way, waz, w[j, 0], w[j, 1], w[j, 2])
            attach_clamp_apply(state, links, clamp, a, p0, p1, p2, body_omega, E)


@njit(cache=True, error_model="numpy")
def attach_snap(state, links, tau, body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia):
    """Put every body-attached node on its anchor at the body's pose a time tau into the
    step (tau = h at the end of the step: the pose the caller's semi-implicit Euler will
    give it). World anchors need nothing: they move kinematically."""
    x = state.node_pos
    for a in range(links.att_int.shape[0]):
        node = links.att_int[a, AI_NODE]
        b = links.att_int[a, AI_BODY]
        if b < 0:
            continue
        px, py, pz, qx, qy, qz, qw = body_pose_at(body_pos, body_quat, body_vel, body_omega, body_inv_mass,
                                                  body_inv_inertia, b, tau)
        rx, ry, rz = rotate(qx, qy, qz, qw, links.att_f[a, 0], links.att_f[a, 1], links.att_f[a, 2])
        x[node, 0] = px + rx
        x[node, 1] = py + ry
        x[node, 2] = pz + rz


# ================================================================ contacts
@njit(cache=True, error_model="numpy", inline="always")
def box_distance(boxes, k, x, y, z, radius):
    """Gap (m) between a sphere of the rope's radius at (x, y, z) and box k, and the
    outward normal at the closest point (world). Negative gap = penetration."""
    cx, cy, cz = boxes[k, 0], boxes[k, 1], boxes[k, 2]
    hx, hy, hz = boxes[k, 3], boxes[k, 4], boxes[k, 5]
    qx, qy, qz, qw = boxes[k, 6], boxes[k, 7], boxes[k, 8], boxes[k, 9]
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
    # centre inside: leave through the nearest face
    ex, ey, ez = hx - abs(px), hy - abs(py), hz - abs(pz)
    if ex <= ey and ex <= ez:
        nx, ny, nz = rotate(qx, qy, qz, qw, 1.0 if px >= 0.0 else -1.0, 0.0, 0.0)
        return -ex - radius, nx, ny, nz
    if ey <= ez:
        nx, ny, nz = rotate(qx, qy, qz, qw, 0.0, 1.0 if py >= 0.0 else -1.0, 0.0)
        return -ey - radius, nx, ny, nz
    nx, ny, nz = rotate(qx, qy, qz, qw, 0.0, 0.0, 1.0 if pz >= 0.0 else -1.0)
    return -ez - radius, nx, ny, nz


@njit(cache=True, error_model="numpy")
def contacts_prepare(state, model, links, prm, h, contact):
    """Contact candidates of every node, radius-aware (the rope surface touches): slot 0
    the ground plane z = ground_z, slot 1 the nearest box. A candidate is kept when its
    gap is below r + 2h|v| (speculative: the row lets the node approach up to contact
    within the step, so nothing tunnels). Warm-start impulses of a lost contact are reset."""
    x = state.node_pos
    v = state.node_vel
    r = prm[P_RADIUS]
    ground = prm[P_GROUND_ON] != 0.0
    gz = prm[P_GROUND_Z]
    boxes = links.boxes
    lam = state.contact_lam
    for i in range(x.shape[0]):
        speed = math.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        margin = r + 2.0 * h * speed
        movable = model.node_w[i] > 0.0
        gap = x[i, 2] - gz - r
        if ground and movable and gap < margin:
            contact[i, 0, 0] = 0.0
            contact[i, 0, 1] = 0.0
            contact[i, 0, 2] = 1.0
            contact[i, 0, C_GAP] = gap
            contact[i, 0, C_ACTIVE] = 1.0
        else:
            contact[i, 0, C_ACTIVE] = 0.0
            for c in range(4):
                lam[i, 0, c] = 0.0
        best = -1
        bgap = margin
        bnx = bny = bnz = 0.0
        if movable:
            for k in range(boxes.shape[0]):
                g, nx, ny, nz = box_distance(boxes, k, x[i, 0], x[i, 1], x[i, 2], r)
                if g < bgap:
                    best, bgap, bnx, bny, bnz = k, g, nx, ny, nz
        if best >= 0:
            if state.contact_box[i] != best:
                for c in range(4):
                    lam[i, 1, c] = 0.0
            state.contact_box[i] = best
            contact[i, 1, 0] = bnx
            contact[i, 1, 1] = bny
            contact[i, 1, 2] = bnz
            contact[i, 1, C_GAP] = bgap
            contact[i, 1, C_ACTIVE] = 1.0
        else:
            state.contact_box[i] = -1
            contact[i, 1, C_ACTIVE] = 0.0
            for c in range(4):
                lam[i, 1, c] = 0.0


@njit(cache=True, error_model="numpy")
def contacts_warm_start(state, model, contact, scale, mu):
    """Re-apply last step's normal and friction impulses, the friction projected on the
    current tangent plane and kept inside the Coulomb disc |P_t| ≤ μ P_n."""
    v = state.node_vel
    lam = state.contact_lam
    for i in range(contact.shape[0]):
        w = model.node_w[i]
        for s in range(2):
            if contact[i, s, C_ACTIVE] == 0.0:
                continue
            nx, ny, nz = contact[i, s, 0], contact[i, s, 1], contact[i, s, 2]
            pn = lam[i, s, 0] * scale
            tx, ty, tz = lam[i, s, 1] * scale, lam[i, s, 2] * scale, lam[i, s, 3] * scale
            d = tx * nx + ty * ny + tz * nz
            tx, ty, tz = tx - d * nx, ty - d * ny, tz - d * nz
            t = math.sqrt(tx * tx + ty * ty + tz * tz)
            lim = mu * pn
            if t > lim:
                f = lim / t
                tx, ty, tz = tx * f, ty * f, tz * f
            lam[i, s, 0], lam[i, s, 1], lam[i, s, 2], lam[i, s, 3] = pn, tx, ty, tz
            v[i, 0] += w * (pn * nx + tx)
            v[i, 1] += w * (pn * ny + ty)
            v[i, 2] += w * (pn * nz + tz)


@njit(cache=True, error_model="numpy")
def contacts_solve(state, model, contact, h, mu):
    """Normal row v·n ≥ −max(gap, 0)/h with accumulated λ_n ≥ 0, then Coulomb friction:
    Δp_t = −m v_t, the accumulated P_t kept in the disc |P_t| ≤ μ λ_n (eq. 15-16, seed 001,
    with a static obstacle)."""
    v = state.node_vel
    lam = state.contact_lam
    for i in range(contact.shape[0]):
        w = model.node_w[i]
        if w == 0.0:
            continue
        m = 1.0 / w
        for s in range(2):
            if contact[i, s, C_ACTIVE] == 0.0:
                continue
            nx, ny, nz = contact[i, s, 0], contact[i, s, 1], contact[i, s, 2]
            gap = contact[i, s, C_GAP]
            vn = v[i, 0] * nx + v[i, 1] * ny + v[i, 2] * nz
            target = -gap / h if gap > 0.0 else 0.0
            old = lam[i, s, 0]
            new = old - m * (vn - target)
            if new < 0.0:
                new = 0.0
            dn = new - old
            lam[i, s, 0] = new
            v[i, 0] += w * dn * nx
            v[i, 1] += w * dn * ny
            v[i, 2] += w * dn * nz
            # friction
            vn = v[i, 0] * nx + v[i, 1] * ny + v[i, 2] * nz
            vtx, vty, vtz = v[i, 0] - vn * nx, v[i, 1] - vn * ny, v[i, 2] - vn * nz
            ox, oy, oz = lam[i, s, 1], lam[i, s, 2], lam[i, s, 3]
            tx, ty, tz = ox - m * vtx, oy - m * vty, oz - m * vtz
            t = math.sqrt(tx * tx + ty * ty + tz * tz)
            lim = mu * new
            if t > lim:
                f = lim / t if t > 0.0 else 0.0
                tx, ty, tz = tx * f, ty * f, tz * f
            lam[i, s, 1], lam[i, s, 2], lam[i, s, 3] = tx, ty, tz
            v[i, 0] += w * (tx - ox)
            v[i, 1] += w * (ty - oy)
            v[i, 2] += w * (tz - oz)


@njit(cache=True, error_model="numpy")
def contacts_project(state, model, links, prm):
    """Push every penetrating node out to the surface (split impulse, full ERP)."""
    x = state.node_pos
    r = prm[P_RADIUS]
    ground = prm[P_GROUND_ON] != 0.0
    gz = prm[P_GROUND_Z]
    for i in range(x.shape[0]):
        if model.node_w_pos[i] == 0.0:
            continue
        if ground:
            gap = x[i, 2] - gz - r
            if gap < 0.0:
                x[i, 2] -= gap
        k = state.contact_box[i]
        if k >= 0:
            g, nx, ny, nz = box_distance(links.boxes, k, x[i, 0], x[i, 1], x[i, 2], r)
            if g < 0.0:
                x[i, 0] -= g * nx
                x[i, 1] -= g * ny
                x[i, 2] -= g * nz


# ================================================================ integration (eq. 5-6)
@njit(cache=True, error_model="numpy")
def integrate_velocities(state, model, links, prm, h, remaining, gravity, torque):
    """Nodes: v += h g, then air drag v /= 1 + h c; world anchors move kinematically
    to their target, reached at the end of the whole step (v = (target − r)/remaining).
    Elements: implicit gyroscopic term of
    I ω̇ = τ − ω × Iω (eq. 4), the explicit torques of eq. 14 if chosen, drag."""
    v = state.node_vel
    x = state.node_pos
    drag = 1.0 / (1.0 + h * prm[P_DRAG])
    for i in range(v.shape[0]):
        if model.node_w[i] > 0.0:
            v[i, 0] = (v[i, 0] + h * gravity[0]) * drag
            v[i, 1] = (v[i, 1] + h * gravity[1]) * drag
            v[i, 2] = (v[i, 2] + h * gravity[2]) * drag
    for a in range(links.att_int.shape[0]):
        if links.att_int[a, AI_BODY] < 0:
            i = links.att_int[a, AI_NODE]
            v[i, 0] = (links.att_f[a, 0] - x[i, 0]) / remaining
            v[i, 1] = (links.att_f[a, 1] - x[i, 1]) / remaining
            v[i, 2] = (links.att_f[a, 2] - x[i, 2]) / remaining
    q = state.elem_quat
    w = state.elem_omega
    explicit = prm[P_BENDING_EXPLICIT] != 0.0
    if explicit:
        bending_torques_explicit(q, w, model.pair_rest, model.pair_u0, prm, torque)
    gyro = prm[P_GYROSCOPIC] == 1.0
    ii = model.elem_inv_inertia
    I = model.elem_inertia
    for j in range(w.shape[0]):
        wx, wy, wz = w[j, 0], w[j, 1], w[j, 2]
        if explicit:
            ax, ay, az = world_inv_inertia_times(q[j, 0], q[j, 1], q[j, 2], q[j, 3], ii[j, 0], ii[j, 1], ii[j, 2],
                                                 torque[j, 0], torque[j, 1], torque[j, 2])
            wx += h * ax
            wy += h * ay
            wz += h * az
        if gyro:
            wx, wy, wz = gyroscopic_implicit(q[j, 0], q[j, 1], q[j, 2], q[j, 3], I[j, 0], I[j, 1], I[j, 2], wx, wy,
                                             wz, h)
        w[j, 0] = wx * drag
        w[j, 1] = wy * drag
        w[j, 2] = wz * drag


@njit(cache=True, error_model="numpy")
def integrate_positions(state, h):
    """r += h v (eq. 5); q += h/2 (ω,0)⊗q, normalized (eq. 6), each element kept in the
    quaternion hemisphere of its predecessor (q and −q are the same rotation)."""
    x = state.node_pos
    v = state.node_vel
    for i in range(x.shape[0]):
        x[i, 0] += h * v[i, 0]
        x[i, 1] += h * v[i, 1]
        x[i, 2] += h * v[i, 2]
    q = state.elem_quat
    w = state.elem_omega
    for j in range(q.shape[0]):
        nx, ny, nz, nw = integrate_quat(q[j, 0], q[j, 1], q[j, 2], q[j, 3], w[j, 0], w[j, 1], w[j, 2], h)
        if j > 0 and nx * q[j - 1, 0] + ny * q[j - 1, 1] + nz * q[j - 1, 2] + nw * q[j - 1, 3] < 0.0:
            nx, ny, nz, nw = -nx, -ny, -nz, -nw
        q[j, 0], q[j, 1], q[j, 2], q[j, 3] = nx, ny, nz, nw


# ================================================================ the step
@njit(cache=True, error_model="numpy")
def substep_count(state, prm, h):
    """Substeps so that no segment turns by more than P_MAX_ROTATION (rad) per substep,
    judged from the current relative velocities |Δv⊥|/ℓ (at most P_MAX_SUBSTEPS)."""
    v = state.node_vel
    x = state.node_pos
    worst = 0.0
    for i in range(v.shape[0] - 1):
        ex = x[i + 1, 0] - x[i, 0]
        ey = x[i + 1, 1] - x[i, 1]
        ez = x[i + 1, 2] - x[i, 2]
        l2 = ex * ex + ey * ey + ez * ez
        dx = v[i + 1, 0] - v[i, 0]
        dy = v[i + 1, 1] - v[i, 1]
        dz = v[i + 1, 2] - v[i, 2]
        # |Δv × e|² / |e|⁴ = (|Δv⊥|/ℓ)²
        cx, cy, cz = dy * ez - dz * ey, dz * ex - dx * ez, dx * ey - dy * ex
        r2 = (cx * cx + cy * cy + cz * cz) / (l2 * l2)
        if r2 > worst:
            worst = r2
    limit = prm[P_MAX_ROTATION]
    cap = int(prm[P_MAX_SUBSTEPS])
    if limit <= 0.0:
        return 1
    n = int(math.ceil(h * math.sqrt(worst) / limit))
    return max(1, min(cap, n))


@njit(cache=True, error_model="numpy")
def rope_step(h, gravity, prm, model, state, links, work, body_pos, body_quat, body_vel, body_omega,
              body_inv_mass, body_inv_inertia):
    """Advance the rope by h and apply the attachment impulses to the bodies' (v, ω).

    Body positions are not moved: the caller integrates them afterwards with
    semi-implicit Euler, and the rope's anchored nodes already sit where that puts the
    anchors. The step is cut into substeps when a segment would turn too far in one
    (see substep_count). See the module docstring for the stages."""
    n = substep_count(state, prm, h)
    hs = h / n
    for k in range(n):
        rope_substep(hs, k * hs, h, gravity, prm, model, state, links, work, body_pos, body_quat, body_vel,
                     body_omega, body_inv_mass, body_inv_inertia)
    prm[P_SUBSTEPS_USED] = n


@njit(cache=True, error_model="numpy")
def rope_substep(h, tau, h_full, gravity, prm, model, state, links, work, body_pos, body_quat, body_vel, body_omega,
                 body_inv_mass, body_inv_inertia):
    """One (sub)step of h starting tau into the caller's step of h_full."""
    seg, tri, tan, pair, clamp, att, contact = (work.seg, work.tri, work.tan, work.pair, work.clamp, work.att,
                                                 work.contact)
    E = seg.shape[0]
    scale = h / prm[P_H_PREV] if (prm[P_WARM_START] != 0.0 and prm[P_H_PREV] > 0.0) else 0.0
    mu = prm[P_FRICTION]
    tangent_on = prm[P_GYROSCOPIC] < 2.0
    implicit_bending = prm[P_BENDING_EXPLICIT] == 0.0

    # -- prepare rows at the start-of-step configuration
    segment_geometry(state.node_pos, seg)
    attach_prepare(state, model, links, prm, h, tau, att, clamp, body_pos, body_quat, body_vel, body_omega,
                   body_inv_mass, body_inv_inertia)
    beta = prm[P_DRIFT_BIAS]
    for i in range(E):
        # target length at t + h: the current one, moved by the drift bias towards rest
        tri[i, T_BIAS] = seg[i, 3] - beta * (seg[i, 3] - model.seg_rest[i])
        tri[i, T_MASK] = 1.0 if (model.node_w[i] > 0.0 or model.node_w[i + 1] > 0.0) else 0.0
        state.seg_lam[i] = 0.0
    tangent_prepare(state, model, tan)
    if implicit_bending:
        pair_prepare(state, model, prm, h, pair)

    # -- external forces, kinematic anchors
    integrate_velocities(state, model, links, prm, h, h_full - tau, gravity, work.torque)
    contacts_prepare(state, model, links, prm, h, contact)

    # -- warm start
    if tangent_on:
        tangent_warm_start(tan, state, model, scale)
    if implicit_bending:
        pair_warm_start(pair, state, scale)
    attach_warm_start(state, model, links, att, clamp, scale, body_quat, body_vel, body_omega, body_inv_mass,
                      body_inv_inertia)
    contacts_warm_start(state, model, contact, scale, mu)

    # -- velocity iterations, each ending with the exact inextensibility solve
    second = prm[P_SECOND_ORDER] != 0.0
    for _ in range(int(prm[P_ITERATIONS])):
        attach_solve(state, model, links, att, clamp, body_quat, body_vel, body_omega, body_inv_mass,
                     body_inv_inertia)
        if implicit_bending:
            pair_solve(pair, state)
        if tangent_on:
            tangent_solve(tan, state, model)
        contacts_solve(state, model, contact, h, mu)
        inextensibility_velocity_pass(h, second, seg, tri, model, state, links, att, body_quat, body_vel,
                                      body_omega, body_inv_mass, body_inv_inertia)

    # -- positions, then split-impulse relax on the predicted configuration
    integrate_positions(state, h)
    attach_snap(state, links, tau + h, body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia)
    for _ in range(int(prm[P_POSITION_ITERATIONS])):
        if tangent_on:
            tangent_project(state, model, prm[P_TANGENT_ERP], tan)
        inextensibility_project(state.node_pos, model.seg_rest, model.node_w_pos, prm[P_ERP], seg, tri, att,
                                model.node_batt)
        contacts_project(state, model, links, prm)
    prm[P_H_PREV] = h


# ================================================================ readouts
@njit(cache=True, error_model="numpy")
def elastic_energy(elem_quat, pair_rest, pair_u0, prm, links, att, seg_rest):
    """½ Σ l̄ K_kk (u_k − û_k)² over element pairs and clamps (eq. 13-14), J."""
    e = 0.0
    for j in range(pair_rest.shape[0]):
        q = elem_quat
        ux, uy, uz, _, _, _, _ = darboux(q[j, 0], q[j, 1], q[j, 2], q[j, 3], q[j + 1, 0], q[j + 1, 1], q[j + 1, 2],
                                         q[j + 1, 3], pair_rest[j])
        cx, cy, cz = ux - pair_u0[j, 0], uy - pair_u0[j, 1], uz - pair_u0[j, 2]
        e += 0.5 * pair_rest[j] * (prm[P_K1] * cx * cx + prm[P_K2] * cy * cy + prm[P_K3] * cz * cz)
    E = elem_quat.shape[0]
    for a in range(links.att_int.shape[0]):
        if links.att_int[a, AI_CLAMP] == 0:
            continue
        node = links.att_int[a, AI_NODE]
        j = node if node < E else E - 1
        lbar = 0.5 * seg_rest[j]
        q = elem_quat
        ux, uy, uz, _, _, _, _ = darboux(att[a, AW_FRAME], att[a, AW_FRAME + 1], att[a, AW_FRAME + 2],
                                         att[a, AW_FRAME + 3], q[j, 0], q[j, 1], q[j, 2], q[j, 3], lbar)
        e += 0.5 * lbar * (prm[P_K1] * ux * ux + prm[P_K2] * uy * uy + prm[P_K3] * uz * uz)
    return e


@njit(cache=True, error_model="numpy")
def kinetic_energy(node_vel, node_mass, node_w, elem_quat, elem_omega, elem_inertia):
    """Σ ½ m v² over movable nodes + Σ ½ ωᵀ I ω over elements (J)."""
    e = 0.0
    for i in range(node_vel.shape[0]):
        if node_w[i] > 0.0:
            e += 0.5 * node_mass[i] * (node_vel[i, 0] ** 2 + node_vel[i, 1] ** 2 + node_vel[i, 2] ** 2)
    for j in range(elem_omega.shape[0]):
        q = elem_quat
        bx, by, bz = rotate_inv(q[j, 0], q[j, 1], q[j, 2], q[j, 3], elem_omega[j, 0], elem_omega[j, 1],
                                elem_omega[j, 2])
        e += 0.5 * (elem_inertia[j, 0] * bx * bx + elem_inertia[j, 1] * by * by + elem_inertia[j, 2] * bz * bz)
    return e


@njit(cache=True, error_model="numpy")
def tangent_violation(node_pos, elem_quat):
    """max_j |n_j − d3(q_j)| (eq. 15), dimensionless."""
    worst = 0.0
    for j in range(elem_quat.shape[0]):
        dx = node_pos[j + 1, 0] - node_pos[j, 0]
        dy = node_pos[j + 1, 1] - node_pos[j, 1]
        dz = node_pos[j + 1, 2] - node_pos[j, 2]
        inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
        ex, ey, ez = rotate(elem_quat[j, 0], elem_quat[j, 1], elem_quat[j, 2], elem_quat[j, 3], 0.0, 0.0, 1.0)
        g = math.sqrt((dx * inv - ex) ** 2 + (dy * inv - ey) ** 2 + (dz * inv - ez) ** 2)
        if g > worst:
            worst = g
    return worst
