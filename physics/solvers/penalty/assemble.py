"""The stiff step's implicit system, assembled in 6×6 blocks.

With the rows linearized over the step, G(t+Δt) ≈ G + Δt J V⁺, backward Euler on every
implicit row is one linear system in the bodies' velocities,

    (M̃ + Σ_r w_r J_rᵀ J_r) V⁺ = M̃ V + Δt F_ext + Σ_r g_r J_rᵀ,
    w_r = Δt² α_r + Δt β_r,   g_r = −Δt α_r G_r,   row force f_r = (g_r − w_r J_r V⁺)/Δt

(eq. 9, seed 000, evaluated at the end of the step), the "(M + Δt B + Δt² K) ΔV = …" of
implicit springs with K = Jᵀ α J, B = Jᵀ β J. M̃ adds the positive bound of the
rotational geometric stiffness (the turning of a lever under a joint force, as in the
impulse solver's direct path; Tournier et al. 2015, Andrews et al. 2017), from the
joints' last point-row forces, to each body's inertia on both sides (added inertia: it
changes nothing that does not accelerate), which keeps long hanging chains stable at
large steps. A limit is eq. 21/25's dead zone taken at the end of the step: a limit row
binding at any iterate stays in for the step, on its signed value q − bound.

Stages: the layout and scratch (Plan, build_plan), one row into the blocks (add_row,
the angular and point rows of a joint), the bodies' blocks (body_blocks), the joints'
rows (stiff_rows), and the rows' forces kept as impulses (store_impulses).
"""
from collections import namedtuple

import numpy as np
from ...jit import helper

from ...joint_rows import FREE_OFF, row_velocity
from ...joint_types import N_EQ, N_FREE, PRISMATIC
from ...quat import rotated_diagonal
from ..row_ops import FAST, fill2d, loaded_point_rows, point_arm, point_stiffness, row_dot, stiffness_bound
from .block_ldl import elimination_plan
from .couplings import coupling_pairs

Plan = namedtuple("Plan", "body_node node_body up_ptr up_node pair_ptr pair_lo pair_hi pair_target joint_slot "
                          "joint_b_late diag0 offd0 rhs0 diag offd rhs inertia_world inv_inertia_world row_w row_g "
                          "c_lin engaged drive_kind drive_max drive_clamped drive_dir pos0 quat0 vel0 omega0 vel_k omega_k")
"""The implicit step's layout and scratch (PenaltySolver.plan). Layout, from the joint graph
(build_plan): body_node (n,) the body's node in elimination order (−1: static), node_body
(k,); up_ptr (k+1,), up_node (u,): CSR of each node's neighbours eliminated after it (its
off-diagonal blocks, fill included: slot s is the block A[up_node[s], k]); per node, the
pairs of its slots whose product updates a later block: pair_ptr (k+1,), pair_lo, pair_hi
(p,) the slots of the earlier and the later neighbour, pair_target (p,) the slot updated
(−1 − node: that node's diagonal block); joint_slot (m,) the slot of the joint's two
bodies (−1: one is static), joint_b_late (m,) 1 if body b is the later node; laid out on
the joints' body pairs and each two bodies of a coupling between joints (build_plan;
contact_graph adds the contacts'; the pairs are not kept here: every helper takes this
bundle by value, and each field more slows every step). Scratch:
diag0, offd0, rhs0 the step's matrix and right side before the bounded rows, diag, offd,
rhs those of one solve (blocks 6×6 row-major, lower triangle of the diagonal blocks);
inertia_world, inv_inertia_world (n,9); row_w, row_g (r,) each implicit row's weight and
right side, c_lin (r,) its linearized value at the end of the step, engaged (r,) the
side of a limit row binding at some iterate of this step; per joint: drive_kind (its free
rows' FREE_* code, joint_rows), drive_max (N·m or N), drive_clamped, drive_dir (m,3) the
unit direction of a clamped force over the free rows; pos0, quat0, vel0, omega0 the step's start and vel_k, omega_k the
velocities of the last Newton iterate (stiff_step)."""

def build_plan(world):
    """Plan for the world's current layout (bodies, joints, rows)."""
    m = world.model
    nb, nj, nr = m.bodies.count, m.joints.count, m.rows.count
    inv_mass, inv_inertia = m.bodies.inv_mass, m.bodies.inv_inertia
    dynamic = ~((inv_mass == 0.0) & np.all(inv_inertia == 0.0, axis=1))
    pairs = np.array([tuple(int(x) for x in p) for p in m.joints.body[:nj]] + coupling_pairs(m),
                     np.int64).reshape(-1, 2)
    layout = elimination_plan(nb, dynamic, pairs)
    nn, nu = len(layout[1]), len(layout[3])
    z = np.zeros
    return Plan(*layout[:8], layout[8][:nj].copy(), layout[9][:nj].copy(), z((nn, 36)), z((nu, 36)),
                z((nn, 6)), z((nn, 36)), z((nu, 36)), z((nn, 6)), z((nb, 9)), z((nb, 9)), z(nr), z(nr), z(nr),
                z(nr, np.int64), z(nj, np.int64), z(nj), z(nj, np.int64), z((nj, 3)), z((nb, 3)),
                z((nb, 4)), z((nb, 3)), z((nb, 3)), z((nb, 3)), z((nb, 3)))


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def add_row(row_J, r, na, nb, slot, b_late, w, g, diag, offd, rhs):
    """w J_rᵀJ_r into the blocks of the row's bodies (nodes na, nb; −1 static) and g J_rᵀ
    into their right sides. (Not inlined: it serves the few translational rows that are
    not point rows, and inlined it slows its callers' loops by a third.)"""
    if na >= 0:
        for i in range(6):
            ji = row_J[r, i]
            rhs[na, i] += g * ji
            wi = w * ji
            for j in range(i + 1):
                diag[na, 6 * i + j] += wi * row_J[r, j]
    if nb >= 0:
        for i in range(6):
            ji = row_J[r, 6 + i]
            rhs[nb, i] += g * ji
            wi = w * ji
            for j in range(i + 1):
                diag[nb, 6 * i + j] += wi * row_J[r, 6 + j]
    if slot >= 0:
        ol = 6 if b_late else 0                      # rows of the later node, columns of the earlier
        oe = 6 - ol
        for i in range(6):
            wi = w * row_J[r, ol + i]
            for j in range(6):
                offd[slot, 6 * i + j] += wi * row_J[r, oe + j]


@helper(cache=True, error_model="numpy", fastmath=FAST)
def add_skew(block, n, o, rs, cs, w, x, y, z):
    """w [x]ₓ (the cross-product matrix [[0, −z, y], [z, 0, −x], [−y, x, 0]]) into block n of
    row-major 6×6 blocks, its entry (i, j) at o + rs·i + cs·j: (rs, cs) = (6, 1) as it is,
    (1, 6) transposed."""
    block[n, o + cs] -= w * z
    block[n, o + 2 * cs] += w * y
    block[n, o + rs] += w * z
    block[n, o + rs + 2 * cs] -= w * x
    block[n, o + 2 * rs] -= w * y
    block[n, o + 2 * rs + cs] += w * x


@helper(cache=True, error_model="numpy", fastmath=FAST)
def add_angular_lower(block, n, wx, wy, wz, ex, ey, ez):
    """The lower triangle of (wx, wy, wz) (ex, ey, ez)ᵀ into block n's angular part (rows and
    columns 3-5 of a row-major 6×6)."""
    block[n, 21] += wx * ex
    block[n, 27] += wy * ex
    block[n, 28] += wy * ey
    block[n, 33] += wz * ex
    block[n, 34] += wz * ey
    block[n, 35] += wz * ez


@helper(cache=True, error_model="numpy", fastmath=FAST)
def add_angular_side(n, w, g, x, y, z, diag, rhs):
    """One body's share of a rotational row whose angular part on it is (x, y, z): w j jᵀ into
    the lower triangle of its angular block, g j into its right side."""
    rhs[n, 3] += g * x
    rhs[n, 4] += g * y
    rhs[n, 5] += g * z
    add_angular_lower(diag, n, w * x, w * y, w * z, x, y, z)


@helper(cache=True, error_model="numpy", fastmath=FAST)
def add_angular_row(row_J, r, na, nb, slot, b_late, w, g, diag, offd, rhs):
    """add_row for a rotational row (no linear part): only the angular blocks. Its six
    angular numbers are read once into locals (the stores into the blocks could alias
    row_J, so a loop over them would read them again after every store)."""
    ax, ay, az = row_J[r, 3], row_J[r, 4], row_J[r, 5]
    bx, by, bz = row_J[r, 9], row_J[r, 10], row_J[r, 11]
    if na >= 0:
        add_angular_side(na, w, g, ax, ay, az, diag, rhs)
    if nb >= 0:
        add_angular_side(nb, w, g, bx, by, bz, diag, rhs)
    if slot >= 0:
        lx, ly, lz = (bx, by, bz) if b_late else (ax, ay, az)     # the later node's rows
        ex, ey, ez = (ax, ay, az) if b_late else (bx, by, bz)     # the earlier node's columns
        wx, wy, wz = w * lx, w * ly, w * lz
        add_angular_lower(offd, slot, wx, wy, wz, ex, ey, ez)
        offd[slot, 22] += wx * ey                                   # and the upper triangle
        offd[slot, 23] += wx * ez
        offd[slot, 29] += wy * ez


@helper(cache=True, error_model="numpy", fastmath=FAST)
def add_joint_side(n, sgn, w, ra, g, S, diag, rhs):
    """One body's share of a joint's three point rows along the world axes (common weight
    w, right sides g) and of its perpendicular rows (S: perpendicular_rows' sums). Point
    rows: J(e) = sgn·P e with P = [E; [r]ₓ], so w P Pᵀ = w [[E, [r]ₓᵀ], [[r]ₓ, |r|²E − r rᵀ]]
    and Σ g_e J(e) = sgn (g, r × g); perpendicular rows: Σ w u uᵀ into the angular block,
    −sgn Σ g u into the right side (J's angular part is u on body a, −u on b)."""
    rx, ry, rz = ra
    gx, gy, gz = g
    s00, s01, s02, s11, s12, s22, hx, hy, hz = S
    diag[n, 0] += w
    diag[n, 7] += w
    diag[n, 14] += w
    add_skew(diag, n, 18, 6, 1, w, rx, ry, rz)                  # w [r]ₓ in rows 3-5, columns 0-2
    rr = rx * rx + ry * ry + rz * rz
    diag[n, 21] += w * (rr - rx * rx) + s00
    diag[n, 27] += s01 - w * ry * rx
    diag[n, 28] += w * (rr - ry * ry) + s11
    diag[n, 33] += s02 - w * rz * rx
    diag[n, 34] += s12 - w * rz * ry
    diag[n, 35] += w * (rr - rz * rz) + s22
    rhs[n, 0] += sgn * gx
    rhs[n, 1] += sgn * gy
    rhs[n, 2] += sgn * gz
    rhs[n, 3] += sgn * (ry * gz - rz * gy - hx)
    rhs[n, 4] += sgn * (rz * gx - rx * gz - hy)
    rhs[n, 5] += sgn * (rx * gy - ry * gx - hz)


@helper(cache=True, error_model="numpy", fastmath=FAST)
def add_joint_coupling(slot, w, rl, re, S, offd):
    """The off-diagonal block A[late, early] of a joint's three point rows,
    −w P_l P_eᵀ = −w [[E, [r_e]ₓᵀ], [[r_l]ₓ, (r_l·r_e)E − r_e r_lᵀ]], and of its
    perpendicular rows, −Σ w u uᵀ (the same for either order: symmetric)."""
    lx, ly, lz = rl
    ex, ey, ez = re
    s00, s01, s02, s11, s12, s22 = S[0], S[1], S[2], S[3], S[4], S[5]
    offd[slot, 0] -= w
    offd[slot, 7] -= w
    offd[slot, 14] -= w
    add_skew(offd, slot, 3, 1, 6, -w, ex, ey, ez)               # −w [r_e]ₓᵀ in rows 0-2, columns 3-5
    add_skew(offd, slot, 18, 6, 1, -w, lx, ly, lz)              # −w [r_l]ₓ in rows 3-5, columns 0-2
    d = lx * ex + ly * ey + lz * ez
    offd[slot, 21] -= w * (d - ex * lx) + s00
    offd[slot, 22] += w * ex * ly - s01
    offd[slot, 23] += w * ex * lz - s02
    offd[slot, 27] += w * ey * lx - s01
    offd[slot, 28] -= w * (d - ey * ly) + s11
    offd[slot, 29] += w * ey * lz - s12
    offd[slot, 33] += w * ez * lx - s02
    offd[slot, 34] += w * ez * ly - s12
    offd[slot, 35] -= w * (d - ez * lz) + s22


@helper(cache=True, error_model="numpy")
def perpendicular_rows(h, omega, zeta, relin, a, b, r0, r1, rows, plan):
    """stiff_rows' springs of a joint's perpendicular rows r0…r1−1 (angular part u on body
    a, −u on b: joint_rows.perpendicular_row): per active row its mass 1/(uᵀ(I_a⁻¹ + I_b⁻¹)u),
    weight w and right side g (plan.row_w, row_g, c_lin as stiff_rows); returns the sums
    Σ w u uᵀ (00 01 02 11 12 22) and Σ g u, zeros for none. (Inlined into stiff_rows,
    which has no reference counts: the bundles cost nothing to unpack here.)"""
    row_J, row_C, row_active = rows.J, rows.C, rows.active
    inv_inertia_world, vel_k, omega_k = plan.inv_inertia_world, plan.vel_k, plan.omega_k
    row_w, row_g, c_lin = plan.row_w, plan.row_g, plan.c_lin
    s00 = s01 = s02 = s11 = s12 = s22 = hx = hy = hz = 0.0
    if r1 > r0:
        i00 = inv_inertia_world[a, 0] + inv_inertia_world[b, 0]
        i01 = inv_inertia_world[a, 1] + inv_inertia_world[b, 1]
        i02 = inv_inertia_world[a, 2] + inv_inertia_world[b, 2]
        i11 = inv_inertia_world[a, 4] + inv_inertia_world[b, 4]
        i12 = inv_inertia_world[a, 5] + inv_inertia_world[b, 5]
        i22 = inv_inertia_world[a, 8] + inv_inertia_world[b, 8]
        for r in range(r0, r1):
            row_w[r] = 0.0
            row_g[r] = 0.0
            if row_active[r] == 0:
                continue
            ux, uy, uz = row_J[r, 3], row_J[r, 4], row_J[r, 5]
            kk = (ux * (i00 * ux + 2.0 * (i01 * uy + i02 * uz)) + uy * (i11 * uy + 2.0 * i12 * uz)
                  + uz * i22 * uz)
            if kk <= 0.0:
                continue
            m = 1.0 / kk
            alpha = m * omega * omega
            w = h * h * alpha + h * 2.0 * zeta * m * omega
            c = row_C[r] - h * row_velocity(row_J, r, a, b, vel_k, omega_k) if relin else row_C[r]
            c_lin[r] = c
            g = -h * alpha * c
            row_w[r] = w
            row_g[r] = g
            wx, wy, wz = w * ux, w * uy, w * uz
            s00 += wx * ux
            s01 += wx * uy
            s02 += wx * uz
            s11 += wy * uy
            s12 += wy * uz
            s22 += wz * uz
            hx += g * ux
            hy += g * uy
            hz += g * uz
    return s00, s01, s02, s11, s12, s22, hx, hy, hz


@helper(cache=True, error_model="numpy")
def add_force(row_J, r, na, nb, g, rhs):
    """g J_rᵀ into the right sides (a constant impulse g along the row)."""
    if na >= 0:
        for i in range(6):
            rhs[na, i] += g * row_J[r, i]
    if nb >= 0:
        for i in range(6):
            rhs[nb, i] += g * row_J[r, 6 + i]


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def inv_inertia_quad(inv_inertia_world, i, x, y, z):
    """uᵀ I_i⁻¹ u (world inverse inertia, 9 numbers)."""
    return (x * (inv_inertia_world[i, 0] * x + inv_inertia_world[i, 1] * y + inv_inertia_world[i, 2] * z)
            + y * (inv_inertia_world[i, 3] * x + inv_inertia_world[i, 4] * y + inv_inertia_world[i, 5] * z)
            + z * (inv_inertia_world[i, 6] * x + inv_inertia_world[i, 7] * y + inv_inertia_world[i, 8] * z))


@helper(cache=True, error_model="numpy", fastmath=FAST)
def row_inv_mass(row_J, r, a, b, body_inv_mass, inv_inertia_world, rot):
    """The inverse of the mass a row's spring is scaled by: a rotational row's J_r M⁻¹ J_rᵀ
    (the two inertias about its axis; world inverse inertia, 9 numbers per body), a
    translational row's 1/m_a + 1/m_b (seed 000's m_eff: a lever between a body's centre
    and the joint must not soften the row — on a long one, J M⁻¹ Jᵀ is dominated by a
    small inertia that the rest of the system holds still)."""
    if not rot:
        return body_inv_mass[a] + body_inv_mass[b]
    return (inv_inertia_quad(inv_inertia_world, a, row_J[r, 3], row_J[r, 4], row_J[r, 5])
            + inv_inertia_quad(inv_inertia_world, b, row_J[r, 9], row_J[r, 10], row_J[r, 11]))


@helper(cache=True, error_model="numpy", fastmath=True, _nrt=False)
def body_blocks(h, geometric, gravity, bodies, joints, rows, force_acc, torque_acc, plan):
    """Per dynamic body: world inertia and its inverse, the diagonal block M̃ and the right
    side M̃ V + Δt (F + m g). M̃ is the mass and world inertia, plus (`geometric`) the
    bound of the rotational geometric stiffness of its joints' last point-row forces
    (module docstring), on both sides: added inertia, which damps nothing that does not
    change."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inertia, body_inv_inertia = bodies.inv_mass, bodies.inertia, bodies.inv_inertia
    joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
    row_J, row_impulse = rows.J, rows.impulse
    body_node, node_body = plan.body_node, plan.node_body
    diag0, offd0, rhs0 = plan.diag0, plan.offd0, plan.rhs0
    inertia_world, inv_inertia_world = plan.inertia_world, plan.inv_inertia_world
    fill2d(offd0, 0.0)
    for k in range(node_body.shape[0]):
        i = node_body[k]
        for c in range(36):
            diag0[k, c] = 0.0
        qx, qy, qz, qw = body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3]
        I = rotated_diagonal(qx, qy, qz, qw, body_inertia[i, 0], body_inertia[i, 1], body_inertia[i, 2])
        iI = rotated_diagonal(qx, qy, qz, qw, body_inv_inertia[i, 0], body_inv_inertia[i, 1], body_inv_inertia[i, 2])
        inertia_world[i, 0], inertia_world[i, 1], inertia_world[i, 2] = I[0], I[1], I[2]
        inertia_world[i, 3], inertia_world[i, 4], inertia_world[i, 5] = I[1], I[3], I[4]
        inertia_world[i, 6], inertia_world[i, 7], inertia_world[i, 8] = I[2], I[4], I[5]
        inv_inertia_world[i, 0], inv_inertia_world[i, 1], inv_inertia_world[i, 2] = iI[0], iI[1], iI[2]
        inv_inertia_world[i, 3], inv_inertia_world[i, 4], inv_inertia_world[i, 5] = iI[1], iI[3], iI[4]
        inv_inertia_world[i, 6], inv_inertia_world[i, 7], inv_inertia_world[i, 8] = iI[2], iI[4], iI[5]
        m = 1.0 / body_inv_mass[i] if body_inv_mass[i] > 0.0 else 0.0
        diag0[k, 0] = m
        diag0[k, 7] = m
        diag0[k, 14] = m
        diag0[k, 21] = I[0]
        diag0[k, 27], diag0[k, 28] = I[1], I[3]
        diag0[k, 33], diag0[k, 34], diag0[k, 35] = I[2], I[4], I[5]
        for c in range(3):
            rhs0[k, c] = m * body_vel[i, c] + h * (force_acc[i, c] + m * gravity[c])
        for c in range(3):
            rhs0[k, 3 + c] = (inertia_world[i, 3 * c] * body_omega[i, 0] + inertia_world[i, 3 * c + 1] * body_omega[i, 1]
                              + inertia_world[i, 3 * c + 2] * body_omega[i, 2] + h * torque_acc[i, c])
    if not geometric:
        return
    # h² K of the point rows' forces f = λ/Δt at lever r: h (geometric stiffness of λ),
    # bounded per joint by its absolute row sums (positive, so M̃ stays positive definite)
    for j in range(joint_type.shape[0]):
        r0 = loaded_point_rows(joint_type, joint_row_start, row_impulse, j)
        if r0 < 0:
            continue
        for side in range(2):
            i = joint_body[j, side]
            k = body_node[i]
            if k < 0:
                continue
            b0, b1, b2 = stiffness_bound(*point_stiffness(row_J, row_impulse, r0, side))
            e0, e1, e2 = h * b0, h * b1, h * b2
            diag0[k, 21] += e0
            diag0[k, 28] += e1
            diag0[k, 35] += e2
            rhs0[k, 3] += e0 * body_omega[i, 0]
            rhs0[k, 4] += e1 * body_omega[i, 1]
            rhs0[k, 5] += e2 * body_omega[i, 2]


@helper(cache=True, error_model="numpy", fastmath=FAST)
def limit_raw(joint_q, joint_limit_lo, joint_limit_hi, j, k, side):
    """The signed value of joint j's limit row k on its binding side (+1: the lower bound,
    −1: the upper), q − bound: negative when violated (then it is the row's C, eq. 21, 25
    seed 000), positive inside."""
    return joint_q[j, k] - (joint_limit_lo[j, k] if side > 0 else joint_limit_hi[j, k])


@helper(cache=True, error_model="numpy", fastmath=True, _nrt=False)
def stiff_rows(params, h, relin, bodies, joints, rows, plan):
    """The stiff preset's equality and active limit rows into the step's matrix, linearized
    at the poses the rows were written at, X_k = X + Δt V_k (plan.vel_k, omega_k; zero on
    the first pass): G(X + Δt V⁺) ≈ G_k + Δt J_k (V⁺ − V_k). α = m ω², β = 2ζ m ω,
    ω = κ_s/Δt (m: row_inv_mass); w = Δt²α + Δtβ, g = −Δt α (G_k − Δt J_k V_k). A joint's
    three point rows share their weight (the spring is isotropic) and are added as one
    block, with the joint's perpendicular rows (perpendicular_rows; add_joint_side,
    add_joint_coupling). Limit rows: see limit_raw."""
    joint_type, joint_body, joint_row_start, joint_row_count = joints.type, joints.body, joints.row_start, joints.row_count
    row_J, row_C, row_active, row_rot = rows.J, rows.C, rows.active, rows.rot
    body_inv_mass = bodies.inv_mass
    body_node, joint_slot, joint_b_late = plan.body_node, plan.joint_slot, plan.joint_b_late
    diag0, offd0, rhs0 = plan.diag0, plan.offd0, plan.rhs0
    inv_inertia_world, row_w, row_g = plan.inv_inertia_world, plan.row_w, plan.row_g
    vel_k, omega_k, engaged, c_lin = plan.vel_k, plan.omega_k, plan.engaged, plan.c_lin
    joint_q, joint_limit_lo, joint_limit_hi = joints.q, joints.limit_lo, joints.limit_hi
    omega = params.stiff_kappa / h
    zeta = params.stiff_zeta
    for j in range(joint_type.shape[0]):
        t = joint_type[j]
        start = joint_row_start[j]
        f0 = start + joint_row_count[j] - N_FREE[t]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        na, nb = body_node[a], body_node[b]
        slot, late = joint_slot[j], joint_b_late[j]
        r = start
        if t != PRISMATIC:
            ra = point_arm(row_J, start, 0)
            rb = point_arm(row_J, start, 1)
            kk = row_inv_mass(row_J, start, a, b, body_inv_mass, inv_inertia_world, np.int64(0))   # typed: one compile
            w = 0.0
            alpha = 0.0
            if kk > 0.0:
                m = 1.0 / kk
                alpha = m * omega * omega
                w = h * h * alpha + h * 2.0 * zeta * m * omega
            for q in range(3):
                row_w[start + q] = w
                c_lin[start + q] = row_C[start + q]
                if relin:
                    c_lin[start + q] -= h * row_velocity(row_J, start + q, a, b, vel_k, omega_k)
                row_g[start + q] = -h * alpha * c_lin[start + q]
            g = (row_g[start], row_g[start + 1], row_g[start + 2])
            # the perpendicular rows (J = (0, u, 0, −u)): Σ w u uᵀ and Σ g u, summed here and
            # added with the point rows' blocks (one update of each block per joint)
            S = perpendicular_rows(h, omega, zeta, relin, a, b, start + 3, start + N_EQ[t], rows, plan)
            if na >= 0:
                add_joint_side(na, -1.0, w, ra, g, S, diag0, rhs0)
            if nb >= 0:
                add_joint_side(nb, 1.0, w, rb, g, S, diag0, rhs0)
            if slot >= 0:
                add_joint_coupling(slot, w, rb if late else ra, ra if late else rb, S, offd0)
            r = start + N_EQ[t]
        n_eq = start + N_EQ[t]
        for rr in range(r, f0):
            row_w[rr] = 0.0
            row_g[rr] = 0.0
            C = row_C[rr]
            if rr >= n_eq:                          # a limit: binding now, or earlier in this step
                if row_active[rr] != 0 or not relin:
                    engaged[rr] = row_active[rr]    # (the step's first linearization starts it)
                if engaged[rr] == 0:
                    continue
                C = limit_raw(joint_q, joint_limit_lo, joint_limit_hi, j, rr - n_eq, engaged[rr])
            elif row_active[rr] == 0:
                continue
            kk = row_inv_mass(row_J, rr, a, b, body_inv_mass, inv_inertia_world, row_rot[rr])
            if kk <= 0.0:
                continue
            m = 1.0 / kk
            alpha = m * omega * omega
            w = h * h * alpha + h * 2.0 * zeta * m * omega
            c_lin[rr] = C - h * row_velocity(row_J, rr, a, b, vel_k, omega_k) if relin else C
            g = -h * alpha * c_lin[rr]
            row_w[rr] = w
            row_g[rr] = g
            if row_rot[rr]:
                add_angular_row(row_J, rr, na, nb, slot, late, w, g, diag0, offd0, rhs0)
            else:
                add_row(row_J, rr, na, nb, slot, late, w, g, diag0, offd0, rhs0)


@helper(cache=True, error_model="numpy", _nrt=False)
def store_impulses(h, stiff, bodies, joints, rows, plan):
    """Each implicit row's force of the step as the impulse f Δt = g − w J V⁺ (clamped
    drives: F_max Δt along drive_dir) into rows.impulse; the stiff preset's rows also
    their linearized value at the end of the step: c_lin (G_k − Δt J_k V_k, stiff_rows)
    += Δt J_k V⁺."""
    joint_type, joint_row_start, joint_row_count, joint_body = joints.type, joints.row_start, joints.row_count, joints.body
    row_J, row_impulse = rows.J, rows.impulse
    body_vel, body_omega = bodies.vel, bodies.omega
    row_w, row_g, c_lin = plan.row_w, plan.row_g, plan.c_lin
    drive_kind, drive_max, drive_clamped, drive_dir = plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir
    for j in range(joint_type.shape[0]):
        start = joint_row_start[j]
        end = start + joint_row_count[j]
        f0 = end - N_FREE[joint_type[j]]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        a0, a1, a2, a3, a4, a5 = body_vel[a, 0], body_vel[a, 1], body_vel[a, 2], body_omega[a, 0], \
            body_omega[a, 1], body_omega[a, 2]
        b0, b1, b2, b3, b4, b5 = body_vel[b, 0], body_vel[b, 1], body_vel[b, 2], body_omega[b, 0], \
            body_omega[b, 1], body_omega[b, 2]
        if stiff:
            r = start
            if joint_type[j] != PRISMATIC and row_w[start] != 0.0:
                # the three point rows (along x, y, z; one weight): J = (−e, −r_a×e, e, r_b×e)
                # has four zeros, so J·V is row_dot's sum without those terms (adding ±0
                # changes no sum: the same numbers bit for bit)
                v = (row_J[r, 0] * a0 + row_J[r, 4] * a4 + row_J[r, 5] * a5 + row_J[r, 6] * b0
                     + row_J[r, 10] * b4 + row_J[r, 11] * b5)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
                r += 1
                v = (row_J[r, 1] * a1 + row_J[r, 3] * a3 + row_J[r, 5] * a5 + row_J[r, 7] * b1
                     + row_J[r, 9] * b3 + row_J[r, 11] * b5)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
                r += 1
                v = (row_J[r, 2] * a2 + row_J[r, 3] * a3 + row_J[r, 4] * a4 + row_J[r, 8] * b2
                     + row_J[r, 9] * b3 + row_J[r, 10] * b4)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
                r += 1
                # the perpendicular rows: J = (0, u, 0, −u), row_dot's six non-zero terms
                for r in range(r, start + N_EQ[joint_type[j]]):
                    if row_w[r] == 0.0 and row_g[r] == 0.0:
                        row_impulse[r] = 0.0
                        continue
                    v = (row_J[r, 3] * a3 + row_J[r, 4] * a4 + row_J[r, 5] * a5 + row_J[r, 9] * b3
                         + row_J[r, 10] * b4 + row_J[r, 11] * b5)
                    row_impulse[r] = row_g[r] - row_w[r] * v
                    c_lin[r] += h * v
                r = start + N_EQ[joint_type[j]]
            for r in range(r, f0):
                if row_w[r] == 0.0 and row_g[r] == 0.0:
                    row_impulse[r] = 0.0
                    continue
                v = row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)
                row_impulse[r] = row_g[r] - row_w[r] * v
                c_lin[r] += h * v
        kind, clamped = drive_kind[j], drive_clamped[j]
        for r in range(f0, end):
            if kind == FREE_OFF:
                row_impulse[r] = 0.0
            elif clamped:
                row_impulse[r] = h * drive_max[j] * drive_dir[j, r - f0]
            elif row_w[r] == 0.0 and row_g[r] == 0.0:
                row_impulse[r] = 0.0
            else:
                row_impulse[r] = row_g[r] - row_w[r] * row_dot(row_J, r, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3,
                                                                b4, b5)
