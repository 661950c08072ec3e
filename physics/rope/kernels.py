"""Numba kernels of the Cosserat rope (seed 002), pure functions over preallocated arrays.

Discretization (seed 002, fig. 2): N nodes r_i carry position and mass, E = N−1 elements
between them carry a unit quaternion q_j (x, y, z, w) and an angular velocity ω_j (world
frame); d1, d2, d3 are the columns of R(q_j) (eq. 2). N−2 element pairs carry the
bending/twist strain (the Darboux vector, eq. 12).

Segment j's inextensibility (eq. 7) and tangent coupling (eq. 15) are held as one vector
condition, C_j = r_{j+1} − r_j − l_j d3(q_j) = 0 (zero exactly when |r_{j+1} − r_j| = l_j
and the tangent is d3). Its rows couple only neighbouring segments, and so do the
bending/twist rows of the element pairs, so the rope's own rows are solved exactly in O(N)
by the Thomas algorithm of eq. 11 on blocks: 6×6 blocks (pair j−1/j, segment j) for the
velocities (eq. 10-14, 16-18), 3×3 blocks (segment j) for the positions.

Why not the paper's sequence (Thomas for the lengths, sequential impulses for the
tangents, explicit eq. 14 torques): with light elements (l ≫ r, the paper's rope) a
bending impulse lands on the element and the tangent rows hand only ~r²/l² of it to the
nodes per sweep, so a stiff rod droops; and a transverse wave in a taut rope crosses
c·h/l = h√(T/ρA)/l segments per step (≈ 17 at N = 1000, h = 15 ms), which only an
implicit step survives: geometric stiffness in the velocity solve and a position
projection whose correction also goes into the velocities.

One step of h (`rope_step`), in named stages:

    prepare            frames and C_j; element inertias with the tension's geometric
                       stiffness; bending/twist rows (eq. 12-14, soft, implicit);
                       attachment and clamp rows; the 6×6 block factors
    integrate vel.     drag, v += h g, kinematic anchors, gyroscopic term (eq. 4-6)
    warm start         last step's impulses of the Gauss-Seidel rows (body attachments,
                       interior clamps, contacts, grab), scaled by h/h_prev
    iterate            those rows → the exact coupled solve (bending/twist, length,
                       tangent); once when there are none
    integrate pos.     r += h v, q += h/2 (ω,0)⊗q, normalized (eq. 5-6)
    project            contacts pushed out, then Gauss-Newton steps of the projection onto
                       C = 0 (eq. 15-16, seed 004) until max |C|/l < tolerance, the
                       correction also applied to the velocities

Array layouts (all float64 unless said, C-contiguous):
    node_pos, node_vel (N,3); elem_quat (E,4); elem_omega (E,3)
    clamp rows: one per attachment
Impulses are N·s (linear) and N·m·s (angular); "lam" arrays hold accumulated impulses.
"""
import math
from collections import namedtuple

from ..jit import kernel, helper

from ..contact_geometry import box_distance, plane_distance
from ..integrate import is_static
from ..quat import (frame_axes, integrate_quat, mat3_mul, qmul, rotate, rotate_inv, rotated_diagonal,
                    sym_add_outer, world_inv_inertia_times)

# ---------------------------------------------------------------- parameter vector
(P_RADIUS, P_K1, P_K2, P_K3, P_RETARDATION, P_DRAG, P_FRICTION, P_GROUND_ON, P_GROUND_Z, P_ITERATIONS,
 P_POSITION_ITERATIONS, P_ERP, P_TOLERANCE, P_DRIFT_BIAS, P_WARM_START, P_BENDING_EXPLICIT, P_H_PREV,
 P_GYROSCOPIC, P_GEOMETRIC, P_PROJECTION_VELOCITY, P_PROJECTIONS_USED, P_VIOLATION,
 P_GRAB_NODE, P_GRAB_X, P_GRAB_Y, P_GRAB_Z, P_GRAB_K, P_GRAB_C, P_GRAB_FMAX) = range(29)
N_PARAMS = 29

# bending/twist rows of a pair of frames (clamp rows (A, 45); element pairs are written straight
# into the coupled solve's blocks, see BW_*): T (u̇ = T(ω_b − ω_a), 3×3 row-major), M_a⁻¹Tᵀ and
# M_b⁻¹Tᵀ (row k = M⁻¹ T[k]), (K + Γ)⁻¹ symmetric (6), Γ (3), bias (3), K + Γ symmetric (6)
PR_T, PR_A, PR_B, PR_KINV, PR_GAMMA, PR_BIAS, PR_K = 0, 9, 18, 27, 33, 36, 39
PAIR_COLS = 45
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
# grab work (20): stiffness bias k·C/(c + hk) (3), Γ = 1/(h(c + hk)), active, (G + Γ)⁻¹ (sym 6),
# node mobility G (9)
GRAB_COLS = 20

RopeModel = namedtuple("RopeModel", [
    "seg_rest",            # (E,)  rest length l_j of each segment (m)
    "pair_rest",           # (E−1,) l̄_j = (l_j + l_{j+1})/2 (m)
    "pair_u0",             # (E−1, 3) rest Darboux vector û (1/m), material frame
    "node_mass",           # (N,)  m_i = ρπr²(l_{i−1}+l_i)/2 + point loads (kg)
    "node_w",              # (N,)  inverse mass in the velocity solve (0: world anchor)
    "node_w_pos",          # (N,)  inverse mass in the position projection (0 also on bodies)
    "node_batt",           # (N,)  int64: body attachment index of the node, or −1
    "elem_inertia",        # (E, 3) principal inertia (I11, I22, I33) (kg·m²)
    "elem_inv_inertia",    # (E, 3) its inverse
])

RopeState = namedtuple("RopeState", [
    "node_pos", "node_vel",        # (N, 3) m, m/s
    "elem_quat", "elem_omega",     # (E, 4), (E, 3) rad/s world frame
    "seg_lam",                     # (E, 3) impulse λ_j on the rows C_j in the last step (N·s, world)
    "pair_lam",                    # (E−1, 3) bending/twist impulses (u-space, N·m²·s)
    "clamp_lam",                   # (A, 3) clamp impulses (u-space)
    "att_lam",                     # (A, 3) impulse on the body at the attachment (N·s)
    "contact_lam",                 # (N, 2, 4) normal impulse, friction impulse (3)
    "contact_box",                 # (N,) int64: box touched in slot 1, or −1
    "grab_lam",                    # (3,) impulse of the grab spring (N·s)
])

RopeLinks = namedtuple("RopeLinks", [
    "att_int", "att_f",            # (A, 3) int64, (A, 7)
    "boxes",                       # (B, 10)
])

RopeWork = namedtuple("RopeWork", [
    "blk",                 # (E, BLK_COLS) frames, C_j and block factors of A
    "elem_w",              # (E, 3) element inverse inertias of the velocity solve (geometric stiffness)
    "clamp",               # (A, 45) clamp rows
    "bw",                  # (E+1, BW_COLS) factors of the coupled 6×6 block solve
    "tmp",                 # (36,) scratch of the 6×6 factorization
    "att",                 # (A, 20) attachment rows
    "contact",             # (N, 2, 5) contact candidates
    "grab",                # (20,) grab spring row
    "torque",              # (E, 3) explicit bending torques (only with bending="explicit")
])


# ================================================================ small helpers
@helper(cache=True, error_model="numpy")
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


@helper(cache=True, error_model="numpy")
def sym_times(m, o, x, y, z):
    """(symmetric 3×3 stored as m[o:o+6]) · (x, y, z)."""
    return (m[o] * x + m[o + 1] * y + m[o + 2] * z,
            m[o + 1] * x + m[o + 3] * y + m[o + 4] * z,
            m[o + 2] * x + m[o + 4] * y + m[o + 5] * z)


@helper(cache=True, error_model="numpy")
def body_pose_at(body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia, b, tau):
    """Pose of body b a time tau into the step, as the caller's semi-implicit Euler moves
    it with the current velocities: x + τv, q + τ/2 (ω,0)⊗q normalized."""
    px, py, pz = body_pos[b, 0], body_pos[b, 1], body_pos[b, 2]
    qx, qy, qz, qw = body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3]
    if tau > 0.0 and not is_static(body_inv_mass, body_inv_inertia, b):
        px += tau * body_vel[b, 0]
        py += tau * body_vel[b, 1]
        pz += tau * body_vel[b, 2]
        qx, qy, qz, qw = integrate_quat(qx, qy, qz, qw, body_omega[b, 0], body_omega[b, 1], body_omega[b, 2], tau)
    return px, py, pz, qx, qy, qz, qw


@kernel(cache=True, error_model="numpy")
def darboux(ax, ay, az, aw, bx, by, bz, bw, lbar):
    """u = 2 B_k q̄·q' (eq. 12) for q̄ = (a+b)/2, q' = (b−a)/l̄, i.e. (2/l̄) Im(a* ⊗ b),
    in the frame of a. Also returns the relative rotation p = a* ⊗ b (same hemisphere)."""
    px, py, pz, pw = qmul(-ax, -ay, -az, aw, bx, by, bz, bw)
    if pw < 0.0:
        px, py, pz, pw = -px, -py, -pz, -pw
    s = 2.0 / lbar
    return s * px, s * py, s * pz, px, py, pz, pw


# ================================================================ tridiagonal solver (eq. 11)
@helper(cache=True, error_model="numpy")
def thomas_solve(lower, diag, upper, rhs, cprime, out):
    """Solve a tridiagonal system by the Thomas algorithm (tridiagonal elimination, eq. 11):
    the paper's solve for the length rows alone; the step uses its block forms (block_solve,
    coupled_solve), which reduce to it for 1×1 blocks.

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


@helper(cache=True, error_model="numpy")
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


# ================================================================ coupled length + tangent rows (eq. 7-11, 15-18)
# Segment j's condition, eq. 7 (|r_{j+1} − r_j| = l_j) and eq. 15 (n_j = d3(q_j)) together:
#     C_j = r_{j+1} − r_j − l_j d3(q_j) = 0       (3 rows, m)
#     Ċ_j = v_{j+1} − v_j + l_j d3 × ω_j = 0      (eq. 8 and 16 together)
# Jacobian blocks: −E on node j, +E on node j+1, l_j[d3]× on element j. A = J M⁻¹ Jᵀ is block
# tridiagonal (3×3 blocks; segments j and j+1 share node j+1 only):
#     D_j = W_j + W_{j+1} + l_j² (i1 d2 d2ᵀ + i2 d1 d1ᵀ),   O_j = −W_{j+1}
# (W a node's inverse mass, a 3×3 for a node merged with a rigid body), solved exactly by
# block tridiagonal elimination (the Thomas algorithm of eq. 11 with 3×3 blocks).
# blk (E, BLK_COLS): frame d1 d2 d3 (9), S⁻¹ (sym 6), O (sym 6), C = S⁻¹O (9), rhs/solution (3),
# residual C (3), mask (1: the segment's stretch direction can move)
B_F, B_SINV, B_O, B_C, B_X, B_RES, B_MASK = 0, 9, 15, 21, 30, 33, 36
BLK_COLS = 37


@helper(cache=True, error_model="numpy")
def node_inv_mass(k, node_w, node_batt, att_work, use_bodies):
    """W_k as 6 numbers (sym 00 01 02 11 12 22) and whether it is a plain w E."""
    a = node_batt[k] if use_bodies else -1
    if a < 0:
        w = node_w[k]
        return w, 0.0, 0.0, w, 0.0, w, True
    return (att_work[a, AW_W], att_work[a, AW_W + 1], att_work[a, AW_W + 2], att_work[a, AW_W + 3],
            att_work[a, AW_W + 4], att_work[a, AW_W + 5], False)


@helper(cache=True, error_model="numpy")
def segment_diag(blk, j, l, i1, i2, w0, w1, w2, w3, w4, w5):
    """D_j = W + l² (i1 d2 d2ᵀ + i2 d1 d1ᵀ) as 6 numbers (sym), W = W_j + W_{j+1} (sym 6):
    segment j's diagonal block of A = J M⁻¹ Jᵀ, frames from blk, i1 i2 its element's inverse
    inertias."""
    d1x, d1y, d1z, d2x, d2y, d2z = blk[j, 0], blk[j, 1], blk[j, 2], blk[j, 3], blk[j, 4], blk[j, 5]
    e1 = l * l * i1
    e2 = l * l * i2
    return (w0 + e1 * d2x * d2x + e2 * d1x * d1x, w1 + e1 * d2x * d2y + e2 * d1x * d1y,
            w2 + e1 * d2x * d2z + e2 * d1x * d1z, w3 + e1 * d2y * d2y + e2 * d1y * d1y,
            w4 + e1 * d2y * d2z + e2 * d1y * d1z, w5 + e1 * d2z * d2z + e2 * d1z * d1z)


@helper(cache=True, error_model="numpy")
def segment_pivot(blk, j, movable, s00, s01, s02, s11, s12, s22):
    """Segment j's B_MASK, and its block S (sym 6) with the unit pivot d3 d3ᵀ added when
    both its nodes are immovable (its length cannot change; the solves drop its right-hand
    side along d3)."""
    if movable:
        blk[j, B_MASK] = 1.0
        return s00, s01, s02, s11, s12, s22
    blk[j, B_MASK] = 0.0
    d3x, d3y, d3z = blk[j, 6], blk[j, 7], blk[j, 8]
    return sym_add_outer(s00, s01, s02, s11, s12, s22, d3x, d3y, d3z, d3x, d3y, d3z)


@kernel(cache=True, error_model="numpy")
def rod_frames(node_pos, elem_quat, seg_rest, blk):
    """Frames d1 d2 d3 of every element and C_j = r_{j+1} − r_j − l_j d3 (eq. 7 + 15) into
    blk; returns max_j |C_j|/l_j."""
    x = node_pos
    q = elem_quat
    worst = 0.0
    for j in range(blk.shape[0]):
        d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z = frame_axes(q[j, 0], q[j, 1], q[j, 2], q[j, 3])
        blk[j, 0], blk[j, 1], blk[j, 2] = d1x, d1y, d1z
        blk[j, 3], blk[j, 4], blk[j, 5] = d2x, d2y, d2z
        blk[j, 6], blk[j, 7], blk[j, 8] = d3x, d3y, d3z
        l = seg_rest[j]
        cx = x[j + 1, 0] - x[j, 0] - l * d3x
        cy = x[j + 1, 1] - x[j, 1] - l * d3y
        cz = x[j + 1, 2] - x[j, 2] - l * d3z
        blk[j, B_RES], blk[j, B_RES + 1], blk[j, B_RES + 2] = cx, cy, cz
        c = cx * cx + cy * cy + cz * cz
        if c > worst * l * l:
            worst = c / (l * l)
    return math.sqrt(worst)


@helper(cache=True, error_model="numpy")
def block_factor(elem_inv_inertia, seg_rest, node_w, node_batt, att_work, use_bodies, blk):
    """The factors of block_factor_general when every node's W is a plain w E (no node
    merged with a body): O_j = −w_{j+1}E, S_j = D_j − w_j² S_{j−1}⁻¹, and C_j = −w_{j+1}S_j⁻¹
    is not stored (block_solve then reads w from B_O). Returns False (and does nothing)
    otherwise."""
    if use_bodies:
        for k in range(node_batt.shape[0]):
            if node_batt[k] >= 0:
                block_factor_general(elem_inv_inertia, seg_rest, node_w, node_batt, att_work, use_bodies, blk)
                return False
    E = blk.shape[0]
    pw = node_w[0]
    i0 = i1 = i2 = i3 = i4 = i5 = 0.0
    ww = 0.0
    for j in range(E):
        d1x, d1y, d1z, d2x, d2y, d2z = blk[j, 0], blk[j, 1], blk[j, 2], blk[j, 3], blk[j, 4], blk[j, 5]
        nw = node_w[j + 1]
        l = seg_rest[j]
        e1 = l * l * elem_inv_inertia[j, 0]
        e2 = l * l * elem_inv_inertia[j, 1]
        ws = pw + nw
        s00 = ws + e1 * d2x * d2x + e2 * d1x * d1x - ww * i0
        s01 = e1 * d2x * d2y + e2 * d1x * d1y - ww * i1
        s02 = e1 * d2x * d2z + e2 * d1x * d1z - ww * i2
        s11 = ws + e1 * d2y * d2y + e2 * d1y * d1y - ww * i3
        s12 = e1 * d2y * d2z + e2 * d1y * d1z - ww * i4
        s22 = ws + e1 * d2z * d2z + e2 * d1z * d1z - ww * i5
        s00, s01, s02, s11, s12, s22 = segment_pivot(blk, j, ws > 0.0, s00, s01, s02, s11, s12, s22)
        i0, i1, i2, i3, i4, i5 = inv3sym(s00, s01, s02, s11, s12, s22)
        blk[j, B_SINV], blk[j, B_SINV + 1], blk[j, B_SINV + 2] = i0, i1, i2
        blk[j, B_SINV + 3], blk[j, B_SINV + 4], blk[j, B_SINV + 5] = i3, i4, i5
        blk[j, B_O] = -nw if j < E - 1 else 0.0
        ww = nw * nw
        pw = nw
    return True


@helper(cache=True, error_model="numpy")
def block_factor_general(elem_inv_inertia, seg_rest, node_w, node_batt, att_work, use_bodies, blk):
    """Block LDLᵀ factors of A = J M⁻¹ Jᵀ from the frames in blk: S_0 = D_0,
    C_{j−1} = S_{j−1}⁻¹ O_{j−1}, S_j = D_j − O_{j−1} C_{j−1} (O = −W_j symmetric). A segment
    between two immovable nodes cannot change its length: its d3 direction gets a unit pivot
    and no right-hand side (B_MASK = 0)."""
    E = blk.shape[0]
    pw0, pw1, pw2, pw3, pw4, pw5, _ = node_inv_mass(0, node_w, node_batt, att_work, use_bodies)
    for j in range(E):
        nw0, nw1, nw2, nw3, nw4, nw5, plain = node_inv_mass(j + 1, node_w, node_batt, att_work, use_bodies)
        s00, s01, s02, s11, s12, s22 = segment_diag(blk, j, seg_rest[j], elem_inv_inertia[j, 0],
                                                    elem_inv_inertia[j, 1], pw0 + nw0, pw1 + nw1, pw2 + nw2,
                                                    pw3 + nw3, pw4 + nw4, pw5 + nw5)
        s00, s01, s02, s11, s12, s22 = segment_pivot(blk, j, pw0 + nw0 + pw3 + nw3 + pw5 + nw5 > 0.0,
                                                     s00, s01, s02, s11, s12, s22)
        if j > 0:
            # S_j −= O_{j−1} C_{j−1}, C stored row-major
            p = j - 1
            o0, o1, o2, o3, o4, o5 = blk[p, B_O], blk[p, B_O + 1], blk[p, B_O + 2], blk[p, B_O + 3], \
                blk[p, B_O + 4], blk[p, B_O + 5]
            s00 -= o0 * blk[p, B_C] + o1 * blk[p, B_C + 3] + o2 * blk[p, B_C + 6]
            s01 -= o0 * blk[p, B_C + 1] + o1 * blk[p, B_C + 4] + o2 * blk[p, B_C + 7]
            s02 -= o0 * blk[p, B_C + 2] + o1 * blk[p, B_C + 5] + o2 * blk[p, B_C + 8]
            s11 -= o1 * blk[p, B_C + 1] + o3 * blk[p, B_C + 4] + o4 * blk[p, B_C + 7]
            s12 -= o1 * blk[p, B_C + 2] + o3 * blk[p, B_C + 5] + o4 * blk[p, B_C + 8]
            s22 -= o2 * blk[p, B_C + 2] + o4 * blk[p, B_C + 5] + o5 * blk[p, B_C + 8]
        i0, i1, i2, i3, i4, i5 = inv3sym(s00, s01, s02, s11, s12, s22)
        blk[j, B_SINV], blk[j, B_SINV + 1], blk[j, B_SINV + 2] = i0, i1, i2
        blk[j, B_SINV + 3], blk[j, B_SINV + 4], blk[j, B_SINV + 5] = i3, i4, i5
        # O_j = −W_{j+1}, C_j = S_j⁻¹ O_j
        blk[j, B_O], blk[j, B_O + 1], blk[j, B_O + 2] = -nw0, -nw1, -nw2
        blk[j, B_O + 3], blk[j, B_O + 4], blk[j, B_O + 5] = -nw3, -nw4, -nw5
        if plain:
            f = -nw0
            blk[j, B_C], blk[j, B_C + 1], blk[j, B_C + 2] = f * i0, f * i1, f * i2
            blk[j, B_C + 3], blk[j, B_C + 4], blk[j, B_C + 5] = f * i1, f * i3, f * i4
            blk[j, B_C + 6], blk[j, B_C + 7], blk[j, B_C + 8] = f * i2, f * i4, f * i5
        else:
            for col in range(3):
                if col == 0:
                    ox, oy, oz = -nw0, -nw1, -nw2
                elif col == 1:
                    ox, oy, oz = -nw1, -nw3, -nw4
                else:
                    ox, oy, oz = -nw2, -nw4, -nw5
                blk[j, B_C + col] = i0 * ox + i1 * oy + i2 * oz
                blk[j, B_C + 3 + col] = i1 * ox + i3 * oy + i4 * oz
                blk[j, B_C + 6 + col] = i2 * ox + i4 * oy + i5 * oz
        pw0, pw1, pw2, pw3, pw4, pw5 = nw0, nw1, nw2, nw3, nw4, nw5
    for t in range(6):
        blk[E - 1, B_O + t] = 0.0
    for t in range(9):
        blk[E - 1, B_C + t] = 0.0


@helper(cache=True, error_model="numpy")
def block_solve(blk, plain):
    """A λ = b with the factors of block_factor (block Thomas elimination, eq. 11):
    y_j = S_j⁻¹(b_j − O_{j−1} y_{j−1}), then λ_j = y_j − C_j λ_{j+1} (plain: O = −wE,
    C_j = −w_{j+1}S_j⁻¹). b in B_X, λ out. A masked segment's right-hand side along d3 is
    dropped."""
    E = blk.shape[0]
    y0 = y1 = y2 = 0.0
    for j in range(E):
        r0, r1, r2 = blk[j, B_X], blk[j, B_X + 1], blk[j, B_X + 2]
        if blk[j, B_MASK] == 0.0:
            t = r0 * blk[j, 6] + r1 * blk[j, 7] + r2 * blk[j, 8]
            r0 -= t * blk[j, 6]
            r1 -= t * blk[j, 7]
            r2 -= t * blk[j, 8]
        if j > 0:
            if plain:
                w = blk[j - 1, B_O]
                r0 -= w * y0
                r1 -= w * y1
                r2 -= w * y2
            else:
                o0, o1, o2 = sym_times(blk[j - 1], B_O, y0, y1, y2)
                r0 -= o0
                r1 -= o1
                r2 -= o2
        y0, y1, y2 = sym_times(blk[j], B_SINV, r0, r1, r2)
        blk[j, B_X], blk[j, B_X + 1], blk[j, B_X + 2] = y0, y1, y2
    x0, x1, x2 = y0, y1, y2
    for j in range(E - 2, -1, -1):
        if plain:
            c0, c1, c2 = sym_times(blk[j], B_SINV, x0, x1, x2)
            w = blk[j, B_O]
            x0, x1, x2 = blk[j, B_X] - w * c0, blk[j, B_X + 1] - w * c1, blk[j, B_X + 2] - w * c2
        else:
            x0, x1, x2 = (blk[j, B_X] - (blk[j, B_C] * x0 + blk[j, B_C + 1] * x1 + blk[j, B_C + 2] * x2),
                          blk[j, B_X + 1] - (blk[j, B_C + 3] * x0 + blk[j, B_C + 4] * x1 + blk[j, B_C + 5] * x2),
                          blk[j, B_X + 2] - (blk[j, B_C + 6] * x0 + blk[j, B_C + 7] * x1 + blk[j, B_C + 8] * x2))
        blk[j, B_X], blk[j, B_X + 1], blk[j, B_X + 2] = x0, x1, x2


@helper(cache=True, error_model="numpy")
def elem_turn(blk, j, l, ii, l0, l1, l2):
    """M_j⁻¹ (l_j[d3]×)ᵀ λ = l_j (i1 (λ·d2) d1 − i2 (λ·d1) d2): the element's share of λ."""
    a = l * ii[j, 0] * (l0 * blk[j, 3] + l1 * blk[j, 4] + l2 * blk[j, 5])
    c = -l * ii[j, 1] * (l0 * blk[j, 0] + l1 * blk[j, 1] + l2 * blk[j, 2])
    return (a * blk[j, 0] + c * blk[j, 3], a * blk[j, 1] + c * blk[j, 4], a * blk[j, 2] + c * blk[j, 5])


@helper(cache=True, error_model="numpy")
def anchor_impulse(state, links, att_work, a, fx, fy, fz, body_quat, body_vel, body_omega, body_inv_mass,
                   body_inv_inertia):
    """Impulse F (N·s) on the body of attachment a at its anchor (lever att_work[a, AW_R]),
    added to the attachment's impulse att_lam."""
    apply_body_impulse(body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia,
                       links.att_int[a, AI_BODY], att_work[a, AW_R], att_work[a, AW_R + 1], att_work[a, AW_R + 2],
                       fx, fy, fz)
    state.att_lam[a, 0] += fx
    state.att_lam[a, 1] += fy
    state.att_lam[a, 2] += fz


@kernel(cache=True, error_model="numpy")
def block_project(state, model, links, blk, att_work, erp, tol, feedback, h, body_quat, body_vel, body_omega,
                  body_inv_mass, body_inv_inertia):
    """Relax C_j = r_{j+1} − r_j − l_j d3 (eq. 7 and 15) at the current positions: one
    Gauss-Newton step of the mass-weighted projection (eq. 15-16, seed 004) through the same
    block matrix: A λ = −ERP·C, Δr = W Jᵀλ, Δθ_j = M_j⁻¹(l_j[d3]×)ᵀλ. C is linear in the
    positions, so only the element turn is linearized. Returns max |C_j|/l_j before the
    step; below tol nothing moves (and nothing is factored).
    feedback: the correction also changes the velocities, V += Δ/h (the step is then
    implicit in the constraint directions, stable for waves that cross many segments in one
    step); a node on a rigid body then moves with the merged node+body mass and the body
    gets the rest as a velocity change, F/h at its anchor (its caller-side integration
    carries it along). Without feedback (split impulses) anchored nodes do not move."""
    x = state.node_pos
    q = state.elem_quat
    E = blk.shape[0]
    wpos = model.node_w if feedback else model.node_w_pos
    nbatt = model.node_batt
    rest = model.seg_rest
    ii = model.elem_inv_inertia
    worst = rod_frames(x, q, rest, blk)
    if worst < tol:
        return worst
    plain = block_factor(ii, rest, wpos, nbatt, att_work, feedback, blk)
    for j in range(E):
        blk[j, B_X] = -erp * blk[j, B_RES]
        blk[j, B_X + 1] = -erp * blk[j, B_RES + 1]
        blk[j, B_X + 2] = -erp * blk[j, B_RES + 2]
    block_solve(blk, plain)
    v = state.node_vel
    om = state.elem_omega
    fb = 1.0 / h if feedback else 0.0
    p0 = p1 = p2 = 0.0
    for k in range(E + 1):
        if k < E:
            l0, l1, l2 = blk[k, B_X], blk[k, B_X + 1], blk[k, B_X + 2]
            tx, ty, tz = elem_turn(blk, k, rest[k], ii, l0, l1, l2)
            q[k, 0], q[k, 1], q[k, 2], q[k, 3] = integrate_quat(q[k, 0], q[k, 1], q[k, 2], q[k, 3], tx, ty, tz, 1.0)
            om[k, 0] += fb * tx
            om[k, 1] += fb * ty
            om[k, 2] += fb * tz
        else:
            l0 = l1 = l2 = 0.0
        px, py, pz = p0 - l0, p1 - l1, p2 - l2
        p0, p1, p2 = l0, l1, l2
        a = nbatt[k] if feedback else -1
        if a < 0:
            wk = wpos[k]
            if wk == 0.0:
                continue
            dx, dy, dz = wk * px, wk * py, wk * pz
        else:
            dx, dy, dz = sym_times(att_work[a], AW_W, px, py, pz)
            m = att_work[a, AW_MASS]
            fx, fy, fz = (px - m * dx) * fb, (py - m * dy) * fb, (pz - m * dz) * fb
            anchor_impulse(state, links, att_work, a, fx, fy, fz, body_quat, body_vel, body_omega, body_inv_mass,
                           body_inv_inertia)
        x[k, 0] += dx
        x[k, 1] += dy
        x[k, 2] += dz
        v[k, 0] += fb * dx
        v[k, 1] += fb * dy
        v[k, 2] += fb * dz
    return worst


# ================================================================ bending and twist (eq. 12-14)
@helper(cache=True, error_model="numpy")
def pair_row_prepare(row, r, qa, qb, lbar, u0, prm, h):
    """Bending/twist of one pair of frames a, b (elements j, j+1, or a clamp and its
    element) as an implicit spring on the strain u − û (eq. 12-14).

    u = (2/l̄) Im(a* ⊗ b) (eq. 12); energy V = ½ l̄ Σ_k K_kk (u_k − û_k)² (eq. 13);
    u̇ = T (ω_b − ω_a), T = (1/l̄)(p_w E − [p_v]×) R_aᵀ, p = a* ⊗ b; the torques of
    eq. 14 are τ_b = −Tᵀ s(u − û), τ_a = −τ_b with s_k = l̄ K_kk.
    Instead of applying them explicitly (stable only for h ≲ l²·√(ρA/EI)), the row is a
    soft constraint (backward Euler, Kelvin-Voigt damping with retardation time τ):
    impulse P = −h s (C + h u̇') − h τ s u̇', i.e. u̇' + Γ P + C/(h+τ) = 0 with
    Γ = 1/(h s (h+τ)); at rest P/h equals eq. 14's torque. It is solved exactly with the
    segment rows (coupled_velocity_pass), or by Gauss-Seidel for an interior clamp.
    Fills row r except the M⁻¹Tᵀ blocks (PR_A, PR_B), which the caller writes, and K.
    qa, qb: the two frames (x, y, z, w); u0: the rest strain û (3). Returns C (3)."""
    ax, ay, az, aw = qa
    bx, by, bz, bw = qb
    u0x, u0y, u0z = u0
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
        if not soft_row(row[r], PR_GAMMA, PR_BIAS, k, lbar * prm[P_K1 + k], cx if k == 0 else (cy if k == 1 else cz),
                        h, tau):
            row[r, PR_T + 3 * k] = row[r, PR_T + 3 * k + 1] = row[r, PR_T + 3 * k + 2] = 0.0
    return cx, cy, cz


@helper(cache=True, error_model="numpy")
def soft_row(row, og, ob, k, s, c, h, tau):
    """Γ_k = 1/(h s (h + τ)) and bias C_k/(h + τ) of bending/twist row k with stiffness
    s = l̄ K_kk (see pair_row_prepare), into row[og + k] and row[ob + k]; returns False when
    s = 0: the row is then unused (the caller zeroes its Jacobian; Γ = 1, no bias)."""
    if s > 0.0:
        row[og + k] = 1.0 / (h * s * (h + tau))
        row[ob + k] = c / (h + tau)
        return True
    row[og + k] = 1.0
    row[ob + k] = 0.0
    return False


@helper(cache=True, error_model="numpy")
def pair_fill_minv(row, r, off, qx, qy, qz, qw, ix, iy, iz):
    """row[r, off + 3k : off + 3k + 3] = M⁻¹ T[k] for a frame with principal inverse inertia."""
    for k in range(3):
        mx, my, mz = world_inv_inertia_times(qx, qy, qz, qw, ix, iy, iz, row[r, 3 * k], row[r, 3 * k + 1],
                                             row[r, 3 * k + 2])
        row[r, off + 3 * k] = mx
        row[r, off + 3 * k + 1] = my
        row[r, off + 3 * k + 2] = mz


@helper(cache=True, error_model="numpy")
def pair_finish(row, r):
    """K = T (M_a⁻¹ + M_b⁻¹) Tᵀ + diag Γ and its inverse."""
    k00 = k01 = k02 = k11 = k12 = k22 = 0.0
    for c in range(3):
        a0 = row[r, PR_A + c] + row[r, PR_B + c]
        a1 = row[r, PR_A + 3 + c] + row[r, PR_B + 3 + c]
        a2 = row[r, PR_A + 6 + c] + row[r, PR_B + 6 + c]
        k00, k01, k02, k11, k12, k22 = sym_add_outer(k00, k01, k02, k11, k12, k22, a0, a1, a2,
                                                     row[r, c], row[r, 3 + c], row[r, 6 + c])
    k00 += row[r, PR_GAMMA]
    k11 += row[r, PR_GAMMA + 1]
    k22 += row[r, PR_GAMMA + 2]
    row[r, PR_K], row[r, PR_K + 1], row[r, PR_K + 2] = k00, k01, k02
    row[r, PR_K + 3], row[r, PR_K + 4], row[r, PR_K + 5] = k11, k12, k22
    i0, i1, i2, i3, i4, i5 = inv3sym(k00, k01, k02, k11, k12, k22)
    row[r, PR_KINV] = i0
    row[r, PR_KINV + 1] = i1
    row[r, PR_KINV + 2] = i2
    row[r, PR_KINV + 3] = i3
    row[r, PR_KINV + 4] = i4
    row[r, PR_KINV + 5] = i5


@kernel(cache=True, error_model="numpy")
def pair_prepare(state, model, prm, h, blk, ii, bw):
    """Rows of every element pair j, j+1 (see pair_row_prepare for the model), written in
    the elements' own frames (d1 d2 d3 of both, from blk): with p = a* ⊗ b and
    t_k = S[k]/l̄ (S = p_w E − [p_v]×) the a-frame components of T's rows, their b-frame
    components are t_k R(p) (R(p) = R_aᵀR_b), so M_a⁻¹ and M_b⁻¹ stay diagonal. Written
    straight into the μ slot of block j+1 of the coupled solve (left = a, right = b)."""
    q = state.elem_quat
    tau = prm[P_RETARDATION]
    k1, k2, k3 = prm[P_K1], prm[P_K2], prm[P_K3]
    for j in range(bw.shape[0] - 2):
        row = bw[j + 1]
        row[BW_SRC], row[BW_IDX], row[BW_SL], row[BW_SR] = 1.0, j, -1.0, 1.0
        row[BW_P] = row[BW_P + 1] = row[BW_P + 2] = 0.0
        fa = blk[j]
        fb = blk[j + 1]
        lbar = model.pair_rest[j]
        ux, uy, uz, px, py, pz, pw = darboux(q[j, 0], q[j, 1], q[j, 2], q[j, 3], q[j + 1, 0], q[j + 1, 1],
                                             q[j + 1, 2], q[j + 1, 3], lbar)
        il = 1.0 / lbar
        # t_k (rows of S/l̄); a row without stiffness is unused (zero Jacobian)
        cx, cy, cz = ux - model.pair_u0[j, 0], uy - model.pair_u0[j, 1], uz - model.pair_u0[j, 2]
        f0 = il if soft_row(row, BW_GAMMA, BW_BIAS, 0, lbar * k1, cx, h, tau) else 0.0
        f1 = il if soft_row(row, BW_GAMMA, BW_BIAS, 1, lbar * k2, cy, h, tau) else 0.0
        f2 = il if soft_row(row, BW_GAMMA, BW_BIAS, 2, lbar * k3, cz, h, tau) else 0.0
        t00, t01, t02 = pw * f0, pz * f0, -py * f0
        t10, t11, t12 = -pz * f1, pw * f1, px * f1
        t20, t21, t22 = py * f2, -px * f2, pw * f2
        # R(p)
        r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(px, py, pz, pw)
        # b-frame components s_k = t_k R(p)
        s00, s01, s02, s10, s11, s12, s20, s21, s22 = mat3_mul((t00, t01, t02, t10, t11, t12, t20, t21, t22),
                                                               (r00, r01, r02, r10, r11, r12, r20, r21, r22))
        ia0, ia1, ia2 = ii[j, 0], ii[j, 1], ii[j, 2]
        ib0, ib1, ib2 = ii[j + 1, 0], ii[j + 1, 1], ii[j + 1, 2]
        for c in range(3):
            a1, a2, a3 = fa[c], fa[3 + c], fa[6 + c]          # c-th world component of d1, d2, d3 of a
            b1, b2, b3 = fb[c], fb[3 + c], fb[6 + c]
            row[BW_T + c] = t00 * a1 + t01 * a2 + t02 * a3
            row[BW_T + 3 + c] = t10 * a1 + t11 * a2 + t12 * a3
            row[BW_T + 6 + c] = t20 * a1 + t21 * a2 + t22 * a3
            row[BW_ML + c] = t00 * ia0 * a1 + t01 * ia1 * a2 + t02 * ia2 * a3
            row[BW_ML + 3 + c] = t10 * ia0 * a1 + t11 * ia1 * a2 + t12 * ia2 * a3
            row[BW_ML + 6 + c] = t20 * ia0 * a1 + t21 * ia1 * a2 + t22 * ia2 * a3
            row[BW_MR + c] = s00 * ib0 * b1 + s01 * ib1 * b2 + s02 * ib2 * b3
            row[BW_MR + 3 + c] = s10 * ib0 * b1 + s11 * ib1 * b2 + s12 * ib2 * b3
            row[BW_MR + 6 + c] = s20 * ib0 * b1 + s21 * ib1 * b2 + s22 * ib2 * b3
        # K = T (M_a⁻¹ + M_b⁻¹) Tᵀ + Γ (the coupled solve factors it with the rest)
        m00 = t00 * t00 * ia0 + t01 * t01 * ia1 + t02 * t02 * ia2 + s00 * s00 * ib0 + s01 * s01 * ib1 + s02 * s02 * ib2
        m01 = t00 * t10 * ia0 + t01 * t11 * ia1 + t02 * t12 * ia2 + s00 * s10 * ib0 + s01 * s11 * ib1 + s02 * s12 * ib2
        m02 = t00 * t20 * ia0 + t01 * t21 * ia1 + t02 * t22 * ia2 + s00 * s20 * ib0 + s01 * s21 * ib1 + s02 * s22 * ib2
        m11 = t10 * t10 * ia0 + t11 * t11 * ia1 + t12 * t12 * ia2 + s10 * s10 * ib0 + s11 * s11 * ib1 + s12 * s12 * ib2
        m12 = t10 * t20 * ia0 + t11 * t21 * ia1 + t12 * t22 * ia2 + s10 * s20 * ib0 + s11 * s21 * ib1 + s12 * s22 * ib2
        m22 = t20 * t20 * ia0 + t21 * t21 * ia1 + t22 * t22 * ia2 + s20 * s20 * ib0 + s21 * s21 * ib1 + s22 * s22 * ib2
        row[BW_K] = m00 + row[BW_GAMMA]
        row[BW_K + 1] = m01
        row[BW_K + 2] = m02
        row[BW_K + 3] = m11 + row[BW_GAMMA + 1]
        row[BW_K + 4] = m12
        row[BW_K + 5] = m22 + row[BW_GAMMA + 2]


@helper(cache=True, error_model="numpy")
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


@helper(cache=True, error_model="numpy")
def pair_delta(row, r, off, p0, p1, p2):
    """Δω = (M⁻¹Tᵀ) P for one side."""
    return (row[r, off] * p0 + row[r, off + 3] * p1 + row[r, off + 6] * p2,
            row[r, off + 1] * p0 + row[r, off + 4] * p1 + row[r, off + 7] * p2,
            row[r, off + 2] * p0 + row[r, off + 5] * p1 + row[r, off + 8] * p2)


@helper(cache=True, error_model="numpy")
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


# ================================================================ coupled velocity solve (eq. 10-14, 16-18)
# All the rope's own rows in one exact solve: for each element j the bending/twist row of the
# pair (j−1, j) (eq. 12-14, soft) and the rows C_j of segment j (eq. 7 + 15). Block j =
# [μ_j (3): pair (j−1, j), or a clamp at an end of the rope, or unused; λ_j (3): segment j,
# unused for j = E]; blocks j and j+1 share only element j and node j+1, so A = J M⁻¹Jᵀ + Γ
# is block tridiagonal with 6×6 blocks, solved by block Thomas elimination (eq. 11).
# The μ rows act on a left element (j−1) and/or a right element (j) with signs s_L, s_R
# (a clamp's anchor frame is its other side). The coupling of block j with block j+1 is
#     O_j = [[Y, 0], [X, −W_{j+1}]],  Y = s_R s_L' T_j M_j⁻¹ T_{j+1}ᵀ,  X = s_L' l_j [d3]× M_j⁻¹ T_{j+1}ᵀ.
# bw (E+1, BW_COLS): S⁻¹ (6×6), Y (9), X (9), W (sym 6), Z = S⁻¹O (6×6), rhs/solution (6),
# μ source (0 none, 1 pair row, 2 clamp row), its index, s_L, s_R, and the μ rows gathered:
# T (9), M⁻¹Tᵀ of the left and right elements (9 + 9), Γ (3), bias (3), impulse P (3), K + Γ (6)
(BW_SINV, BW_Y, BW_XC, BW_W, BW_Z, BW_X, BW_SRC, BW_IDX, BW_SL, BW_SR, BW_T, BW_ML, BW_MR, BW_GAMMA, BW_BIAS,
 BW_P, BW_K) = 0, 36, 45, 54, 60, 96, 102, 103, 104, 105, 106, 115, 124, 133, 136, 139, 142
BW_COLS = 148


@helper(cache=True, error_model="numpy")
def sym_idx(a, b):
    """Index of (a, b) in a symmetric 3×3 stored as 00 01 02 11 12 22."""
    if a > b:
        a, b = b, a
    return a * (5 - a) // 2 + b


@helper(cache=True, error_model="numpy")
def coupled_gather(bw, clamp, links, implicit_bending):
    """The μ slots pair_prepare does not fill: a clamp at node 0 (right = its element, side b)
    or node N−1 (left = its element, side b), copied from its clamp row; an unused slot gets
    K = E and zero rows (the ends without clamp, and every pair with explicit bending)."""
    nb = bw.shape[0]
    E = nb - 1
    for j in range(nb):
        if 0 < j < E and implicit_bending:
            continue
        bw[j, BW_SRC] = 0.0
        bw[j, BW_IDX] = -1.0
        bw[j, BW_SL] = bw[j, BW_SR] = 0.0
        for t in range(27):
            bw[j, BW_T + t] = 0.0
        for t in range(9):
            bw[j, BW_GAMMA + t] = 0.0
        bw[j, BW_K], bw[j, BW_K + 1], bw[j, BW_K + 2] = 1.0, 0.0, 0.0
        bw[j, BW_K + 3], bw[j, BW_K + 4], bw[j, BW_K + 5] = 1.0, 0.0, 1.0
    for a in range(links.att_int.shape[0]):
        node = links.att_int[a, AI_NODE]
        if links.att_int[a, AI_CLAMP] == 0 or not (node == 0 or node == E):
            continue
        j = node
        bw[j, BW_SRC] = 2.0
        bw[j, BW_IDX] = a
        if j == 0:
            bw[j, BW_SL], bw[j, BW_SR] = 0.0, 1.0
        else:
            bw[j, BW_SL], bw[j, BW_SR] = 1.0, 0.0
        for t in range(9):
            bw[j, BW_T + t] = clamp[a, PR_T + t]
            bw[j, BW_ML + t] = clamp[a, PR_B + t] if j > 0 else 0.0
            bw[j, BW_MR + t] = clamp[a, PR_B + t] if j == 0 else 0.0
        for t in range(3):
            bw[j, BW_GAMMA + t] = clamp[a, PR_GAMMA + t]
            bw[j, BW_BIAS + t] = clamp[a, PR_BIAS + t]
        for t in range(6):
            bw[j, BW_K + t] = clamp[a, PR_K + t]


@helper(cache=True, error_model="numpy")
def inv6_spd(d, out, j):
    """out[j, BW_SINV:+36] = inverse of the symmetric positive definite 6×6 d (row-major,
    upper triangle read) = [[P, Q], [Qᵀ, R]] by its 3×3 blocks: Σ = R − QᵀP⁻¹Q,
    S⁻¹ = [[P⁻¹ + P⁻¹QΣ⁻¹QᵀP⁻¹, −P⁻¹QΣ⁻¹], [·ᵀ, Σ⁻¹]] (two 3×3 inverses: a shorter
    chain of divisions than six pivots in a row)."""
    p0, p1, p2, p3, p4, p5 = inv3sym(d[0], d[1], d[2], d[7], d[8], d[14])
    q00, q01, q02 = d[3], d[4], d[5]
    q10, q11, q12 = d[9], d[10], d[11]
    q20, q21, q22 = d[15], d[16], d[17]
    # G = P⁻¹ Q
    g00, g01, g02, g10, g11, g12, g20, g21, g22 = mat3_mul((p0, p1, p2, p1, p3, p4, p2, p4, p5),
                                                           (q00, q01, q02, q10, q11, q12, q20, q21, q22))
    # Σ = R − Qᵀ G
    s0, s1, s2, s3, s4, s5 = inv3sym(d[21] - (q00 * g00 + q10 * g10 + q20 * g20),
                                     d[22] - (q00 * g01 + q10 * g11 + q20 * g21),
                                     d[23] - (q00 * g02 + q10 * g12 + q20 * g22),
                                     d[28] - (q01 * g01 + q11 * g11 + q21 * g21),
                                     d[29] - (q01 * g02 + q11 * g12 + q21 * g22),
                                     d[35] - (q02 * g02 + q12 * g12 + q22 * g22))
    # B = −G Σ⁻¹ (top right)
    b00 = -(g00 * s0 + g01 * s1 + g02 * s2)
    b01 = -(g00 * s1 + g01 * s3 + g02 * s4)
    b02 = -(g00 * s2 + g01 * s4 + g02 * s5)
    b10 = -(g10 * s0 + g11 * s1 + g12 * s2)
    b11 = -(g10 * s1 + g11 * s3 + g12 * s4)
    b12 = -(g10 * s2 + g11 * s4 + g12 * s5)
    b20 = -(g20 * s0 + g21 * s1 + g22 * s2)
    b21 = -(g20 * s1 + g21 * s3 + g22 * s4)
    b22 = -(g20 * s2 + g21 * s4 + g22 * s5)
    o = BW_SINV
    # top left = P⁻¹ − B Gᵀ
    out[j, o] = p0 - (b00 * g00 + b01 * g01 + b02 * g02)
    out[j, o + 1] = out[j, o + 6] = p1 - (b00 * g10 + b01 * g11 + b02 * g12)
    out[j, o + 2] = out[j, o + 12] = p2 - (b00 * g20 + b01 * g21 + b02 * g22)
    out[j, o + 7] = p3 - (b10 * g10 + b11 * g11 + b12 * g12)
    out[j, o + 8] = out[j, o + 13] = p4 - (b10 * g20 + b11 * g21 + b12 * g22)
    out[j, o + 14] = p5 - (b20 * g20 + b21 * g21 + b22 * g22)
    out[j, o + 3] = out[j, o + 18] = b00
    out[j, o + 4] = out[j, o + 24] = b01
    out[j, o + 5] = out[j, o + 30] = b02
    out[j, o + 9] = out[j, o + 19] = b10
    out[j, o + 10] = out[j, o + 25] = b11
    out[j, o + 11] = out[j, o + 31] = b12
    out[j, o + 15] = out[j, o + 20] = b20
    out[j, o + 16] = out[j, o + 26] = b21
    out[j, o + 17] = out[j, o + 32] = b22
    out[j, o + 21] = s0
    out[j, o + 22] = out[j, o + 27] = s1
    out[j, o + 23] = out[j, o + 33] = s2
    out[j, o + 28] = s3
    out[j, o + 29] = out[j, o + 34] = s4
    out[j, o + 35] = s5


@kernel(cache=True, error_model="numpy")
def coupled_factor(blk, bw, ew, seg_rest, node_w, node_batt, att_work, tmp):
    """Block LDLᵀ factors of the coupled matrix (see the section comment): D_j from the rows'
    effective masses, S_j = D_j − O_{j−1}ᵀ Z_{j−1}, Z_j = S_j⁻¹ O_j, using the zero block of O.
    Needs coupled_gather and the frames of rod_frames. tmp: 36 scratch."""
    nb = bw.shape[0]
    E = nb - 1
    d = tmp
    pw0, pw1, pw2, pw3, pw4, pw5, _ = node_inv_mass(0, node_w, node_batt, att_work, True)
    pplain = True
    for j in range(nb):
        d[0], d[1], d[2] = bw[j, BW_K], bw[j, BW_K + 1], bw[j, BW_K + 2]
        d[7], d[8], d[14] = bw[j, BW_K + 3], bw[j, BW_K + 4], bw[j, BW_K + 5]
        for k in range(3):
            d[6 * k + 3] = d[6 * k + 4] = d[6 * k + 5] = 0.0
        sr = bw[j, BW_SR]
        if j < E:
            d3x, d3y, d3z = blk[j, 6], blk[j, 7], blk[j, 8]
            l = seg_rest[j]
            nw0, nw1, nw2, nw3, nw4, nw5, plain = node_inv_mass(j + 1, node_w, node_batt, att_work, True)
            if j + 1 == E:
                plain = True
            s00, s01, s02, s11, s12, s22 = segment_diag(blk, j, l, ew[j, 0], ew[j, 1], pw0 + nw0, pw1 + nw1,
                                                        pw2 + nw2, pw3 + nw3, pw4 + nw4, pw5 + nw5)
            d[21], d[22], d[23], d[28], d[29], d[35] = segment_pivot(
                blk, j, pw0 + nw0 + pw3 + nw3 + pw5 + nw5 > 0.0, s00, s01, s02, s11, s12, s22)
            if sr != 0.0:
                # μλ: s_R l_j (d3 × M_j⁻¹T[k])
                f = sr * l
                for k in range(3):
                    mx, my, mz = bw[j, BW_MR + 3 * k], bw[j, BW_MR + 3 * k + 1], bw[j, BW_MR + 3 * k + 2]
                    d[6 * k + 3] = f * (d3y * mz - d3z * my)
                    d[6 * k + 4] = f * (d3z * mx - d3x * mz)
                    d[6 * k + 5] = f * (d3x * my - d3y * mx)
        else:
            d[21] = d[28] = d[35] = 1.0
            nw0 = nw1 = nw2 = nw3 = nw4 = nw5 = 0.0
            plain = True
        if j > 0:
            # S_j = D_j − O_{j−1}ᵀ Z_{j−1} (upper triangle); O = [[Y, 0], [X, −W]]
            p = j - 1
            for r in range(3):
                for c in range(r, 6):
                    d[6 * r + c] -= (bw[p, BW_Y + r] * bw[p, BW_Z + c] + bw[p, BW_Y + 3 + r] * bw[p, BW_Z + 6 + c]
                                     + bw[p, BW_Y + 6 + r] * bw[p, BW_Z + 12 + c]
                                     + bw[p, BW_XC + r] * bw[p, BW_Z + 18 + c]
                                     + bw[p, BW_XC + 3 + r] * bw[p, BW_Z + 24 + c]
                                     + bw[p, BW_XC + 6 + r] * bw[p, BW_Z + 30 + c])
            if pplain:
                w = bw[p, BW_W]
                for r in range(3, 6):
                    for c in range(r, 6):
                        d[6 * r + c] += w * bw[p, BW_Z + 6 * r + c]
            else:
                for r in range(3, 6):
                    rr = r - 3
                    for c in range(r, 6):
                        d[6 * r + c] += (bw[p, BW_W + sym_idx(0, rr)] * bw[p, BW_Z + 18 + c]
                                         + bw[p, BW_W + sym_idx(1, rr)] * bw[p, BW_Z + 24 + c]
                                         + bw[p, BW_W + sym_idx(2, rr)] * bw[p, BW_Z + 30 + c])
        inv6_spd(d, bw, j)
        # O_j
        for t in range(18):
            bw[j, BW_Y + t] = 0.0
        bw[j, BW_W], bw[j, BW_W + 1], bw[j, BW_W + 2] = nw0, nw1, nw2
        bw[j, BW_W + 3], bw[j, BW_W + 4], bw[j, BW_W + 5] = nw3, nw4, nw5
        if j + 1 == E:
            for t in range(6):
                bw[j, BW_W + t] = 0.0
        if j < E:
            n = j + 1
            sl2 = bw[n, BW_SL]
            if sl2 != 0.0:
                f = sr * sl2
                if f != 0.0:
                    for k in range(3):
                        for m in range(3):
                            bw[j, BW_Y + 3 * k + m] = f * (bw[j, BW_MR + 3 * k] * bw[n, BW_T + 3 * m]
                                                           + bw[j, BW_MR + 3 * k + 1] * bw[n, BW_T + 3 * m + 1]
                                                           + bw[j, BW_MR + 3 * k + 2] * bw[n, BW_T + 3 * m + 2])
                g = sl2 * seg_rest[j]
                d3x, d3y, d3z = blk[j, 6], blk[j, 7], blk[j, 8]
                for m in range(3):
                    mx, my, mz = bw[n, BW_ML + 3 * m], bw[n, BW_ML + 3 * m + 1], bw[n, BW_ML + 3 * m + 2]
                    bw[j, BW_XC + m] = g * (d3y * mz - d3z * my)
                    bw[j, BW_XC + 3 + m] = g * (d3z * mx - d3x * mz)
                    bw[j, BW_XC + 6 + m] = g * (d3x * my - d3y * mx)
        # Z = S⁻¹ O: columns 0-2 S⁻¹[:, :3] Y + S⁻¹[:, 3:] X, columns 3-5 −S⁻¹[:, 3:] W
        for r in range(6):
            o = BW_SINV + 6 * r
            for c in range(3):
                bw[j, BW_Z + 6 * r + c] = (
                    bw[j, o] * bw[j, BW_Y + c] + bw[j, o + 1] * bw[j, BW_Y + 3 + c] + bw[j, o + 2] * bw[j, BW_Y + 6 + c]
                    + bw[j, o + 3] * bw[j, BW_XC + c] + bw[j, o + 4] * bw[j, BW_XC + 3 + c]
                    + bw[j, o + 5] * bw[j, BW_XC + 6 + c])
            a3, a4, a5 = bw[j, o + 3], bw[j, o + 4], bw[j, o + 5]
            if plain:
                w = bw[j, BW_W]
                bw[j, BW_Z + 6 * r + 3] = -w * a3
                bw[j, BW_Z + 6 * r + 4] = -w * a4
                bw[j, BW_Z + 6 * r + 5] = -w * a5
            else:
                z0, z1, z2 = sym_times(bw[j], BW_W, a3, a4, a5)
                bw[j, BW_Z + 6 * r + 3] = -z0
                bw[j, BW_Z + 6 * r + 4] = -z1
                bw[j, BW_Z + 6 * r + 5] = -z2
        pw0, pw1, pw2, pw3, pw4, pw5 = nw0, nw1, nw2, nw3, nw4, nw5
        pplain = plain


@helper(cache=True, error_model="numpy")
def coupled_solve(bw):
    """A x = rhs with the factors of coupled_factor: y_j = S_j⁻¹(b_j − O_{j−1}ᵀ y_{j−1}),
    x_j = y_j − Z_j x_{j+1} (block Thomas, eq. 11). rhs in BW_X, x out."""
    nb = bw.shape[0]
    for j in range(nb):
        r0, r1, r2 = bw[j, BW_X], bw[j, BW_X + 1], bw[j, BW_X + 2]
        r3, r4, r5 = bw[j, BW_X + 3], bw[j, BW_X + 4], bw[j, BW_X + 5]
        if j > 0:
            p = j - 1
            y0, y1, y2 = bw[p, BW_X], bw[p, BW_X + 1], bw[p, BW_X + 2]
            y3, y4, y5 = bw[p, BW_X + 3], bw[p, BW_X + 4], bw[p, BW_X + 5]
            # Oᵀ y: [Yᵀ y_μ + Xᵀ y_λ ; −W y_λ]
            r0 -= bw[p, BW_Y] * y0 + bw[p, BW_Y + 3] * y1 + bw[p, BW_Y + 6] * y2 + \
                bw[p, BW_XC] * y3 + bw[p, BW_XC + 3] * y4 + bw[p, BW_XC + 6] * y5
            r1 -= bw[p, BW_Y + 1] * y0 + bw[p, BW_Y + 4] * y1 + bw[p, BW_Y + 7] * y2 + \
                bw[p, BW_XC + 1] * y3 + bw[p, BW_XC + 4] * y4 + bw[p, BW_XC + 7] * y5
            r2 -= bw[p, BW_Y + 2] * y0 + bw[p, BW_Y + 5] * y1 + bw[p, BW_Y + 8] * y2 + \
                bw[p, BW_XC + 2] * y3 + bw[p, BW_XC + 5] * y4 + bw[p, BW_XC + 8] * y5
            w0, w1, w2 = sym_times(bw[p], BW_W, y3, y4, y5)
            r3 += w0
            r4 += w1
            r5 += w2
        for c in range(6):
            o = BW_SINV + 6 * c
            bw[j, BW_X + c] = (bw[j, o] * r0 + bw[j, o + 1] * r1 + bw[j, o + 2] * r2 + bw[j, o + 3] * r3
                               + bw[j, o + 4] * r4 + bw[j, o + 5] * r5)
    x0, x1, x2 = bw[nb - 1, BW_X], bw[nb - 1, BW_X + 1], bw[nb - 1, BW_X + 2]
    x3, x4, x5 = bw[nb - 1, BW_X + 3], bw[nb - 1, BW_X + 4], bw[nb - 1, BW_X + 5]
    for j in range(nb - 2, -1, -1):
        for c in range(6):
            o = BW_Z + 6 * c
            bw[j, BW_X + c] -= (bw[j, o] * x0 + bw[j, o + 1] * x1 + bw[j, o + 2] * x2 + bw[j, o + 3] * x3
                                + bw[j, o + 4] * x4 + bw[j, o + 5] * x5)
        x0, x1, x2 = bw[j, BW_X], bw[j, BW_X + 1], bw[j, BW_X + 2]
        x3, x4, x5 = bw[j, BW_X + 3], bw[j, BW_X + 4], bw[j, BW_X + 5]


@kernel(cache=True, error_model="numpy")
def coupled_velocity_pass(h, beta, blk, bw, clamp, ew, model, state, links, att_work, body_quat, body_vel,
                          body_omega, body_inv_mass, body_inv_inertia):
    """One exact solve of all bending/twist rows (soft, eq. 12-14) and segment rows C_j
    (eq. 10-11, 16-18): A x = −(J V + bias + Γ P), then V += M⁻¹Jᵀx (eq. 10, 17). μ rows:
    u̇ = T(ω_b − ω_a), bias C/(h+τ), P the impulse so far this step. λ rows: Ċ_j + βC_j/h.
    At a node on a rigid body the impulse P goes to the merged node+body point: the node
    gets W P and the body F = P − m W P at its anchor."""
    nb = bw.shape[0]
    E = nb - 1
    v = state.node_vel
    w = state.elem_omega
    rest = model.seg_rest
    fb = beta / h
    for j in range(nb):
        src = bw[j, BW_SRC]
        if src != 0.0:
            sl, sr = bw[j, BW_SL], bw[j, BW_SR]
            ox = oy = oz = 0.0
            if sl != 0.0:
                ox, oy, oz = sl * w[j - 1, 0], sl * w[j - 1, 1], sl * w[j - 1, 2]
            if sr != 0.0:
                ox += sr * w[j, 0]
                oy += sr * w[j, 1]
                oz += sr * w[j, 2]
            if src == 2.0:
                bb = links.att_int[int(bw[j, BW_IDX]), AI_BODY]
                if bb >= 0:
                    ox -= body_omega[bb, 0]
                    oy -= body_omega[bb, 1]
                    oz -= body_omega[bb, 2]
            for k in range(3):
                bw[j, BW_X + k] = -(bw[j, BW_T + 3 * k] * ox + bw[j, BW_T + 3 * k + 1] * oy
                                    + bw[j, BW_T + 3 * k + 2] * oz + bw[j, BW_BIAS + k]
                                    + bw[j, BW_GAMMA + k] * bw[j, BW_P + k])
        else:
            bw[j, BW_X] = bw[j, BW_X + 1] = bw[j, BW_X + 2] = 0.0
        if j < E:
            l = rest[j]
            wx, wy, wz = w[j, 0], w[j, 1], w[j, 2]
            d3x, d3y, d3z = blk[j, 6], blk[j, 7], blk[j, 8]
            r0 = -(v[j + 1, 0] - v[j, 0] + l * (d3y * wz - d3z * wy) + fb * blk[j, B_RES])
            r1 = -(v[j + 1, 1] - v[j, 1] + l * (d3z * wx - d3x * wz) + fb * blk[j, B_RES + 1])
            r2 = -(v[j + 1, 2] - v[j, 2] + l * (d3x * wy - d3y * wx) + fb * blk[j, B_RES + 2])
            if blk[j, B_MASK] == 0.0:
                t = r0 * d3x + r1 * d3y + r2 * d3z
                r0 -= t * d3x
                r1 -= t * d3y
                r2 -= t * d3z
            bw[j, BW_X + 3], bw[j, BW_X + 4], bw[j, BW_X + 5] = r0, r1, r2
        else:
            bw[j, BW_X + 3] = bw[j, BW_X + 4] = bw[j, BW_X + 5] = 0.0
    coupled_solve(bw)
    lam_seg = state.seg_lam
    nbatt = model.node_batt
    nw = model.node_w
    p0 = p1 = p2 = 0.0
    for j in range(nb):
        src = bw[j, BW_SRC]
        if src != 0.0:
            x0, x1, x2 = bw[j, BW_X], bw[j, BW_X + 1], bw[j, BW_X + 2]
            bw[j, BW_P] += x0
            bw[j, BW_P + 1] += x1
            bw[j, BW_P + 2] += x2
            sl, sr = bw[j, BW_SL], bw[j, BW_SR]
            if sl != 0.0:
                ax, ay, az = pair_delta(bw, j, BW_ML, x0, x1, x2)
                w[j - 1, 0] += sl * ax
                w[j - 1, 1] += sl * ay
                w[j - 1, 2] += sl * az
            if sr != 0.0:
                ax, ay, az = pair_delta(bw, j, BW_MR, x0, x1, x2)
                w[j, 0] += sr * ax
                w[j, 1] += sr * ay
                w[j, 2] += sr * az
            if src == 2.0:
                r = int(bw[j, BW_IDX])
                bb = links.att_int[r, AI_BODY]
                if bb >= 0:
                    ax, ay, az = pair_delta(clamp, r, PR_A, x0, x1, x2)
                    body_omega[bb, 0] -= ax
                    body_omega[bb, 1] -= ay
                    body_omega[bb, 2] -= az
        if j < E:
            l0, l1, l2 = bw[j, BW_X + 3], bw[j, BW_X + 4], bw[j, BW_X + 5]
            lam_seg[j, 0] += l0
            lam_seg[j, 1] += l1
            lam_seg[j, 2] += l2
            tx, ty, tz = elem_turn(blk, j, rest[j], ew, l0, l1, l2)
            w[j, 0] += tx
            w[j, 1] += ty
            w[j, 2] += tz
        else:
            l0 = l1 = l2 = 0.0
        # node j: +λ_{j−1} − λ_j
        px, py, pz = p0 - l0, p1 - l1, p2 - l2
        p0, p1, p2 = l0, l1, l2
        a = nbatt[j]
        if a < 0:
            wk = nw[j]
            v[j, 0] += wk * px
            v[j, 1] += wk * py
            v[j, 2] += wk * pz
        else:
            dx, dy, dz = sym_times(att_work[a], AW_W, px, py, pz)
            v[j, 0] += dx
            v[j, 1] += dy
            v[j, 2] += dz
            mass = att_work[a, AW_MASS]
            fx, fy, fz = px - mass * dx, py - mass * dy, pz - mass * dz
            anchor_impulse(state, links, att_work, a, fx, fy, fz, body_quat, body_vel, body_omega, body_inv_mass,
                           body_inv_inertia)


@helper(cache=True, error_model="numpy")
def coupled_scatter(bw, state):
    """The bending/twist and end-clamp impulses of the step back into pair_lam, clamp_lam."""
    for j in range(bw.shape[0]):
        src = bw[j, BW_SRC]
        if src == 0.0:
            continue
        r = int(bw[j, BW_IDX])
        lam = state.pair_lam if src == 1.0 else state.clamp_lam
        lam[r, 0] = bw[j, BW_P]
        lam[r, 1] = bw[j, BW_P + 1]
        lam[r, 2] = bw[j, BW_P + 2]


# ================================================================ attachments
@helper(cache=True, error_model="numpy")
def anchor_frame(links, a, qx, qy, qz, qw):
    """World quaternion of attachment a's clamp frame (q_body = (qx, qy, qz, qw) on a body)."""
    f = links.att_f
    if links.att_int[a, AI_BODY] < 0:
        return f[a, AF_FRAME], f[a, AF_FRAME + 1], f[a, AF_FRAME + 2], f[a, AF_FRAME + 3]
    return qmul(qx, qy, qz, qw, f[a, AF_FRAME], f[a, AF_FRAME + 1], f[a, AF_FRAME + 2], f[a, AF_FRAME + 3])


@helper(cache=True, error_model="numpy")
def attach_prepare(state, model, links, prm, h, tau, att, clamp, ii, body_pos, body_quat, body_vel, body_omega,
                   body_inv_mass, body_inv_inertia):
    """Point rows node ↔ body anchor (3 rows, C = p_body − r_node, J = [−E | E, −[r]×]):
    K = w_node E + K_b, K_b = E/m_b − [r]× I⁻¹ [r]×; W = K_b (E + m_node K_b)⁻¹ is the
    inverse mass of node and body point moving together (used by the block solves).
    Clamps: a pair row between the anchor frame and the end element, l̄ = l_element/2."""
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
            i00, i01, i02, i11, i12, i22 = rotated_diagonal(qx, qy, qz, qw, body_inv_inertia[b, 0],
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
            w00, w01, w02, w10, w11, w12, w20, w21, w22 = mat3_mul(
                (k00, k01, k02, k01, k11, k12, k02, k12, k22),
                (mi[0], mi[1], mi[2], mi[1], mi[3], mi[4], mi[2], mi[4], mi[5]))
            att[a, AW_W] = w00
            att[a, AW_W + 1] = 0.5 * (w01 + w10)
            att[a, AW_W + 2] = 0.5 * (w02 + w20)
            att[a, AW_W + 3] = w11
            att[a, AW_W + 4] = 0.5 * (w12 + w21)
            att[a, AW_W + 5] = w22
        if links.att_int[a, AI_CLAMP] != 0:
            j = node if node < E else E - 1
            lbar = 0.5 * model.seg_rest[j]
            pair_row_prepare(clamp, a, (fx, fy, fz, fw), (q[j, 0], q[j, 1], q[j, 2], q[j, 3]), lbar, (0.0, 0.0, 0.0),
                             prm, h)
            if b >= 0:
                pair_fill_minv(clamp, a, PR_A, qx, qy, qz, qw, body_inv_inertia[b, 0], body_inv_inertia[b, 1],
                               body_inv_inertia[b, 2])
            else:
                for c in range(9):
                    clamp[a, PR_A + c] = 0.0
            pair_fill_minv(clamp, a, PR_B, q[j, 0], q[j, 1], q[j, 2], q[j, 3], ii[j, 0], ii[j, 1], ii[j, 2])
            pair_finish(clamp, a)


@helper(cache=True, error_model="numpy")
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


@helper(cache=True, error_model="numpy")
def attach_clamp_apply(state, links, clamp, a, p0, p1, p2, body_omega, E):
    """Impulse of an interior clamp's row on its element and its body."""
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


@helper(cache=True, error_model="numpy")
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
        node = links.att_int[a, AI_NODE]
        if links.att_int[a, AI_CLAMP] != 0 and 0 < node < E:
            c = state.clamp_lam[a]
            c[0] *= scale
            c[1] *= scale
            c[2] *= scale
            attach_clamp_apply(state, links, clamp, a, c[0], c[1], c[2], body_omega, E)


@helper(cache=True, error_model="numpy")
def attach_solve(state, model, links, att, clamp, body_quat, body_vel, body_omega, body_inv_mass,
                 body_inv_inertia):
    """One sweep: each body anchor's point row (λ = −K⁻¹ Ċ, Ċ = v_b + ω_b × r − v_node),
    then each interior clamp's soft bending/twist row (Gauss-Seidel, on the element)."""
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
        if links.att_int[a, AI_CLAMP] != 0 and 0 < node < E:
            # an interior clamp (the end clamps are in the coupled solve)
            j = node
            if b >= 0:
                wax, way, waz = body_omega[b, 0], body_omega[b, 1], body_omega[b, 2]
            else:
                wax = way = waz = 0.0
            p0, p1, p2 = pair_impulse(clamp, a, state.clamp_lam[a], wax, way, waz, w[j, 0], w[j, 1], w[j, 2])
            attach_clamp_apply(state, links, clamp, a, p0, p1, p2, body_omega, E)


@helper(cache=True, error_model="numpy")
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
# The distances and normals are physics/contact_geometry.py's (ground plane, oriented box).
@helper(cache=True, error_model="numpy")
def box_gap(boxes, k, x, y, z, radius):
    """(gap, normal) of a node's sphere of the rope's radius at (x, y, z) against box k of
    the rope's boxes (centre, half extents, quaternion: BOX_COLS)."""
    return box_distance(x, y, z, radius, boxes[k, 0], boxes[k, 1], boxes[k, 2], boxes[k, 6], boxes[k, 7],
                        boxes[k, 8], boxes[k, 9], boxes[k, 3], boxes[k, 4], boxes[k, 5])


@helper(cache=True, error_model="numpy")
def keep_contact(contact, i, s, gap, nx, ny, nz):
    """Node i's candidate in slot s (0 ground, 1 box): normal, gap, active."""
    contact[i, s, 0] = nx
    contact[i, s, 1] = ny
    contact[i, s, 2] = nz
    contact[i, s, C_GAP] = gap
    contact[i, s, C_ACTIVE] = 1.0


@helper(cache=True, error_model="numpy")
def drop_contact(contact, lam, i, s):
    """No candidate in slot s of node i: inactive, its warm-start impulses reset."""
    contact[i, s, C_ACTIVE] = 0.0
    for c in range(4):
        lam[i, s, c] = 0.0


@helper(cache=True, error_model="numpy")
def contacts_prepare(state, model, links, prm, h, contact):
    """Contact candidates of every node, radius-aware (the rope surface touches): slot 0
    the ground plane z = ground_z, slot 1 the nearest box. A candidate is kept when its
    gap is below r + 2h|v| (speculative: the row lets the node approach up to contact
    within the step, so nothing tunnels). Warm-start impulses of a lost contact are reset.
    Returns the number of candidates."""
    x = state.node_pos
    v = state.node_vel
    r = prm[P_RADIUS]
    ground = prm[P_GROUND_ON] != 0.0
    gz = prm[P_GROUND_Z]
    boxes = links.boxes
    lam = state.contact_lam
    count = 0
    for i in range(x.shape[0]):
        speed = math.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        margin = r + 2.0 * h * speed
        movable = model.node_w[i] > 0.0
        gap, nx, ny, nz = plane_distance(x[i, 2], gz, r)
        if ground and movable and gap < margin:
            keep_contact(contact, i, 0, gap, nx, ny, nz)
            count += 1
        else:
            drop_contact(contact, lam, i, 0)
        best = -1
        bgap = margin
        bnx = bny = bnz = 0.0
        if movable:
            for k in range(boxes.shape[0]):
                g, nx, ny, nz = box_gap(boxes, k, x[i, 0], x[i, 1], x[i, 2], r)
                if g < bgap:
                    best, bgap, bnx, bny, bnz = k, g, nx, ny, nz
        if best >= 0:
            if state.contact_box[i] != best:
                for c in range(4):
                    lam[i, 1, c] = 0.0
            state.contact_box[i] = best
            keep_contact(contact, i, 1, bgap, bnx, bny, bnz)
            count += 1
        else:
            state.contact_box[i] = -1
            drop_contact(contact, lam, i, 1)
    return count


@helper(cache=True, error_model="numpy")
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


@helper(cache=True, error_model="numpy")
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


@helper(cache=True, error_model="numpy")
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
            gap, _, _, _ = plane_distance(x[i, 2], gz, r)
            if gap < 0.0:
                x[i, 2] -= gap
        k = state.contact_box[i]
        if k >= 0:
            g, nx, ny, nz = box_gap(links.boxes, k, x[i, 0], x[i, 1], x[i, 2], r)
            if g < 0.0:
                x[i, 0] -= g * nx
                x[i, 1] -= g * ny
                x[i, 2] -= g * nz


# ================================================================ integration (eq. 5-6)
@kernel(cache=True, error_model="numpy")
def integrate_velocities(state, model, links, prm, h, remaining, gravity, blk, torque):
    """Nodes (eq. 5): air drag on the velocity so far, v /= 1 + h c (implicit in the drag,
    and the weight of a rope at rest is not scaled by it), then v += h g; world anchors
    move kinematically to their target, reached at the end of the whole step
    (v = (target − r)/remaining). Elements (eq. 6): drag, the explicit torques of eq. 14 if
    chosen, the implicit gyroscopic term of I ω̇ = τ − ω × Iω (eq. 4)."""
    v = state.node_vel
    x = state.node_pos
    drag = 1.0 / (1.0 + h * prm[P_DRAG])
    for i in range(v.shape[0]):
        if model.node_w[i] > 0.0:
            v[i, 0] = v[i, 0] * drag + h * gravity[0]
            v[i, 1] = v[i, 1] * drag + h * gravity[1]
            v[i, 2] = v[i, 2] * drag + h * gravity[2]
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
    gyro = prm[P_GYROSCOPIC] != 0.0
    ii = model.elem_inv_inertia
    I = model.elem_inertia
    for j in range(w.shape[0]):
        wx, wy, wz = w[j, 0] * drag, w[j, 1] * drag, w[j, 2] * drag
        if explicit:
            ax, ay, az = world_inv_inertia_times(q[j, 0], q[j, 1], q[j, 2], q[j, 3], ii[j, 0], ii[j, 1], ii[j, 2],
                                                 torque[j, 0], torque[j, 1], torque[j, 2])
            wx += h * ax
            wy += h * ay
            wz += h * az
        if gyro:
            # round cross-section (I11 = I22): I ω̇ = −ω × Iω turns ω⊥ about d3 at the rate
            # Ω = (I33 − I11) ω·d3 / I11 (eq. 4); implicit midpoint (Cayley), norm-preserving
            d3x, d3y, d3z = blk[j, 6], blk[j, 7], blk[j, 8]
            sp = wx * d3x + wy * d3y + wz * d3z
            i11 = 0.5 * (I[j, 0] + I[j, 1])
            a = 0.5 * h * (I[j, 2] - i11) * sp / i11
            px, py, pz = wx - sp * d3x, wy - sp * d3y, wz - sp * d3z
            cx, cy, cz = d3y * pz - d3z * py, d3z * px - d3x * pz, d3x * py - d3y * px
            f = 1.0 / (1.0 + a * a)
            wx = sp * d3x + f * ((1.0 - a * a) * px + 2.0 * a * cx)
            wy = sp * d3y + f * ((1.0 - a * a) * py + 2.0 * a * cy)
            wz = sp * d3z + f * ((1.0 - a * a) * pz + 2.0 * a * cz)
        w[j, 0] = wx
        w[j, 1] = wy
        w[j, 2] = wz


@kernel(cache=True, error_model="numpy")
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


@kernel(cache=True, error_model="numpy")
def elem_effective_inertia(state, model, prm, h, blk, ew):
    """Element inverse inertias for this step's velocity solves, with the geometric
    stiffness of the tension (a backward-Euler step in the rows' direction): the torque
    l_j λ_j × d3 that C_j puts on element j changes with a turn δθ by −l_j T_j δθ⊥ when
    pulled (T_j = −λ_j·d3/h), so I_11, I_22 become I + h² l_j T_j. T_j from the last step's
    λ; compression adds nothing. It stops transverse waves that cross several segments in
    one step from ringing near the anchors. Frames from blk (rod_frames)."""
    lam = state.seg_lam
    ii = model.elem_inv_inertia
    on = prm[P_GEOMETRIC] != 0.0 and prm[P_H_PREV] > 0.0
    scale = h / prm[P_H_PREV] if on else 0.0
    for j in range(ew.shape[0]):
        k = 0.0
        if on:
            t = -(lam[j, 0] * blk[j, 6] + lam[j, 1] * blk[j, 7] + lam[j, 2] * blk[j, 8]) * scale
            if t > 0.0:
                k = h * model.seg_rest[j] * t
        ew[j, 0] = 1.0 / (1.0 / ii[j, 0] + k)
        ew[j, 1] = 1.0 / (1.0 / ii[j, 1] + k)
        ew[j, 2] = ii[j, 2]


# ================================================================ grab spring
@helper(cache=True, error_model="numpy")
def grab_prepare(state, model, prm, h, bw, grab, scale):
    """A spring k (N/m) with damper c (N·s/m) from node i to a target point, as a soft
    constraint (implicit, stable for any k): Ċ + k C/(c + hk) + Γ P = 0 with C = r_i − target,
    Γ = 1/(h(c + hk)); its accumulated impulse is kept within |P| ≤ F_max h. Its effective
    mass is the node's inside the rope: the mobility G = Δv_i/P of node i through the
    factored coupled matrix (three solves), so one Gauss-Seidel update followed by the
    coupled solve meets the row exactly. Warm-started. Not on anchored nodes."""
    i = int(prm[P_GRAB_NODE])
    grab[4] = 0.0
    if i < 0 or model.node_w[i] == 0.0 or model.node_batt[i] >= 0:
        state.grab_lam[:] = 0.0
        return
    k, c = prm[P_GRAB_K], prm[P_GRAB_C]
    den = c + h * k
    if not den > 0.0:
        state.grab_lam[:] = 0.0
        return
    x = state.node_pos
    f = k / den
    g = 1.0 / (h * den)
    grab[0] = f * (x[i, 0] - prm[P_GRAB_X])
    grab[1] = f * (x[i, 1] - prm[P_GRAB_Y])
    grab[2] = f * (x[i, 2] - prm[P_GRAB_Z])
    grab[3] = g
    grab[4] = 1.0
    # G e_k: a unit impulse at node i changes Ċ_{i−1} by +w e_k and Ċ_i by −w e_k
    nb = bw.shape[0]
    E = nb - 1
    w = model.node_w[i]
    gm = grab[11:20]
    for col in range(3):
        for j in range(nb):
            for t in range(6):
                bw[j, BW_X + t] = 0.0
        if i > 0:
            bw[i - 1, BW_X + 3 + col] = -w
        if i < E:
            bw[i, BW_X + 3 + col] = w
        coupled_solve(bw)
        for r in range(3):
            d = w if r == col else 0.0
            if i > 0:
                d += w * bw[i - 1, BW_X + 3 + r]
            if i < E:
                d -= w * bw[i, BW_X + 3 + r]
            gm[3 * r + col] = d
    i0, i1, i2, i3, i4, i5 = inv3sym(gm[0] + g, 0.5 * (gm[1] + gm[3]), 0.5 * (gm[2] + gm[6]), gm[4] + g,
                                     0.5 * (gm[5] + gm[7]), gm[8] + g)
    grab[5], grab[6], grab[7], grab[8], grab[9], grab[10] = i0, i1, i2, i3, i4, i5
    lam = state.grab_lam
    for a in range(3):
        lam[a] *= scale
        state.node_vel[i, a] += w * lam[a]


@helper(cache=True, error_model="numpy")
def grab_solve(state, model, prm, h, grab):
    """ΔP = −(G + Γ)⁻¹(v_i + bias + Γ P), the sum clamped to |P| ≤ F_max h."""
    if grab[4] == 0.0:
        return
    i = int(prm[P_GRAB_NODE])
    w = model.node_w[i]
    v = state.node_vel
    lam = state.grab_lam
    g = grab[3]
    ox, oy, oz = lam[0], lam[1], lam[2]
    dx, dy, dz = sym_times(grab, 5, v[i, 0] + grab[0] + g * ox, v[i, 1] + grab[1] + g * oy,
                           v[i, 2] + grab[2] + g * oz)
    nx, ny, nz = ox - dx, oy - dy, oz - dz
    lim = prm[P_GRAB_FMAX] * h
    t = math.sqrt(nx * nx + ny * ny + nz * nz)
    if t > lim:
        f = lim / t
        nx, ny, nz = nx * f, ny * f, nz * f
    lam[0], lam[1], lam[2] = nx, ny, nz
    v[i, 0] += w * (nx - ox)
    v[i, 1] += w * (ny - oy)
    v[i, 2] += w * (nz - oz)


# ================================================================ the step
@kernel(cache=True, error_model="numpy")
def rope_step(h, gravity, prm, model, state, links, work, body_pos, body_quat, body_vel, body_omega,
              body_inv_mass, body_inv_inertia):
    """Advance the rope by h and apply the attachment impulses to the bodies' (v, ω).

    Body positions are not moved: the caller integrates them afterwards with
    semi-implicit Euler, and the rope's anchored nodes already sit where that puts the
    anchors. See the module docstring for the stages."""
    blk, bw, clamp, att, contact, ew, grab = (work.blk, work.bw, work.clamp, work.att, work.contact, work.elem_w,
                                              work.grab)
    scale = h / prm[P_H_PREV] if (prm[P_WARM_START] != 0.0 and prm[P_H_PREV] > 0.0) else 0.0
    mu = prm[P_FRICTION]
    implicit_bending = prm[P_BENDING_EXPLICIT] == 0.0

    # -- prepare rows at the start-of-step configuration, factor the coupled matrix
    rod_frames(state.node_pos, state.elem_quat, model.seg_rest, blk)
    elem_effective_inertia(state, model, prm, h, blk, ew)
    attach_prepare(state, model, links, prm, h, 0.0, att, clamp, ew, body_pos, body_quat, body_vel, body_omega,
                   body_inv_mass, body_inv_inertia)
    if implicit_bending:
        pair_prepare(state, model, prm, h, blk, ew, bw)
    coupled_gather(bw, clamp, links, implicit_bending)
    coupled_factor(blk, bw, ew, model.seg_rest, model.node_w, model.node_batt, att, work.tmp)
    state.seg_lam[:, :] = 0.0
    E = blk.shape[0]

    # -- external forces, kinematic anchors
    integrate_velocities(state, model, links, prm, h, h, gravity, blk, work.torque)
    n_contacts = contacts_prepare(state, model, links, prm, h, contact)

    # -- warm start (the rows solved by Gauss-Seidel)
    attach_warm_start(state, model, links, att, clamp, scale, body_quat, body_vel, body_omega, body_inv_mass,
                      body_inv_inertia)
    contacts_warm_start(state, model, contact, scale, mu)
    grab_prepare(state, model, prm, h, bw, grab, scale)

    # -- velocity iterations: attachments, contacts, grab (Gauss-Seidel), then the exact coupled
    #    solve of bending/twist and length + tangent (eq. 10-14, 16-18)
    #    (with none of those rows, one exact pass is the whole answer)
    gauss_seidel = n_contacts > 0 or grab[4] != 0.0
    for a in range(links.att_int.shape[0]):
        node = links.att_int[a, AI_NODE]
        if links.att_int[a, AI_BODY] >= 0 or (links.att_int[a, AI_CLAMP] != 0 and 0 < node < E):
            gauss_seidel = True
    for _ in range(int(prm[P_ITERATIONS]) if gauss_seidel else 1):
        attach_solve(state, model, links, att, clamp, body_quat, body_vel, body_omega, body_inv_mass,
                     body_inv_inertia)
        contacts_solve(state, model, contact, h, mu)
        grab_solve(state, model, prm, h, grab)
        coupled_velocity_pass(h, prm[P_DRIFT_BIAS], blk, bw, clamp, ew, model, state, links, att, body_quat,
                              body_vel, body_omega, body_inv_mass, body_inv_inertia)
    coupled_scatter(bw, state)

    # -- positions (eq. 5-6), then the projection onto C = 0 (eq. 15-16, seed 004)
    integrate_positions(state, h)
    attach_snap(state, links, h, body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia)
    tol = prm[P_TOLERANCE]
    feedback = prm[P_PROJECTION_VELOCITY] != 0.0
    used = 0
    worst = 0.0
    for _ in range(int(prm[P_POSITION_ITERATIONS])):
        contacts_project(state, model, links, prm)
        worst = block_project(state, model, links, blk, att, prm[P_ERP], tol, feedback, h, body_quat, body_vel,
                              body_omega, body_inv_mass, body_inv_inertia)
        if worst < tol:
            break
        used += 1
    prm[P_PROJECTIONS_USED] = used
    prm[P_VIOLATION] = worst
    prm[P_H_PREV] = h


# ================================================================ readouts
@kernel(cache=True, error_model="numpy")
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


@kernel(cache=True, error_model="numpy")
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


@kernel(cache=True, error_model="numpy")
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
