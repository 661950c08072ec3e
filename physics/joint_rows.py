"""The one joint geometry every solver shares: constraint rows (seed 000, docs/papers.md).

Each joint owns a block of rows starting at `joint_row_start[j]`, in this order:
equality rows, limit rows, free-DOF rows (for friction and motors). A row is

    C      its value (G in seed 000; the dead-zone value χ for a limit row)
    J      its Jacobian, 12 numbers: linear and angular part on body a, then on b,
           so that Ċ = J·V = lin_a·v_a + ang_a·ω_a + lin_b·v_b + ang_b·ω_b
    active 1 for equality rows; for a limit row +1 when the lower bound is violated
           (the row may only push C up), -1 for the upper bound, 0 when inside; for a
           free-DOF row FREE_OFF here, then write_drive_rows switches it to FREE_FRICTION
           or FREE_MOTOR for the impulse solver.
    lo, hi bounds of the row's accumulated impulse (write_drive_rows): equality rows
           unbounded, limits one-sided, friction rows ±F·h (the radius of the joint's
           Coulomb ball, eq. 16 seed 001), motor rows ±F_max·h.

Sign convention (Box2D's): C is "b minus a", so J on body a carries the minus sign.
Seed 000 writes G = r_i + ξ_i − r_j − ξ_j, the same rows with the opposite sign.

Rows per type (eq / limit / free): physics/joint_types.py.

Joint readouts `joint_q[j, k]` are the angle (rad) or slide (m) of free DOF k, unwrapped
over full turns; for a spherical joint q = (swing, twist, 0).
"""
import math
from collections import namedtuple

import numpy as np
from .jit import kernel, helper

from .joint_types import FIXED, N_EQ, N_FREE, N_LIMIT, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from .quat import FAST, cross, frame_axes, qmul, rotate

ROW_EQ, ROW_LIMIT, ROW_FREE = 0, 1, 2            # static kinds (model.rows.kind)
FREE_OFF, FREE_FRICTION, FREE_MOTOR = 0, 1, 2     # what a free row does this step (rows.active)
FREE_CONTACT = 3    # a contact's friction row: Coulomb disc of radius hi·λ_n (physics/contacts.py)
MOTOR_OFF, MOTOR_VELOCITY, MOTOR_POSITION = 0, 1, 2
MOTOR_MODES = {"off": MOTOR_OFF, "velocity": MOTOR_VELOCITY, "position": MOTOR_POSITION}


@helper(cache=True, error_model="numpy")
def wrap_angle(a):
    """Angle wrapped into (-π, π]."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))


@helper(cache=True, error_model="numpy")
def unwrap(raw, previous):
    """The angle equal to `raw` modulo 2π nearest to `previous` (a joint's angle tracked
    through whole turns): raw plus whole turns, so that writing the rows again at the
    same poses gives the same angle to the bit."""
    return raw + 2.0 * math.pi * math.floor((previous - raw) * (0.5 / math.pi) + 0.5)


@helper(cache=True, error_model="numpy")
def tracked_angle(s, c, previous, exact):
    """The angle atan2(s, c), unwrapped next to `previous`; not `exact`: only the middle of
    its octant (within π/8, no atan2), which carries the whole turns from one exact angle
    to the next as long as the joint turns less than 3π/4 between two calls (substeps)."""
    if exact:
        return unwrap(math.atan2(s, c), previous)
    e = math.pi / 8.0
    if c >= 0.0:
        if s >= 0.0:
            return unwrap(e if s < c else 3.0 * e, previous)
        return unwrap(-e if -s < c else -3.0 * e, previous)
    if s >= 0.0:
        return unwrap(7.0 * e if s < -c else 5.0 * e, previous)
    return unwrap(-7.0 * e if s > c else -5.0 * e, previous)


# The row helpers below are plain compiled helpers, each compiled once and called (LLVM
# inlines what pays), not inline="always": numba would type their IR again at each of the
# ~40 call sites of compute_joint_rows, for a longer compile and slower code.
@helper(cache=True, error_model="numpy")
def write_row(row_J, row_C, row_active, r, lin_a, ang_a, lin_b, ang_b, C, active):
    """Row r: J = [lin_a, ang_a, lin_b, ang_b] (3-tuples), value C, activity. (The row
    arrays come in one by one: taken from the Rows bundle inside a loop, numba would
    count references to them at every row.)"""
    row_J[r, 0], row_J[r, 1], row_J[r, 2] = lin_a
    row_J[r, 3], row_J[r, 4], row_J[r, 5] = ang_a
    row_J[r, 6], row_J[r, 7], row_J[r, 8] = lin_b
    row_J[r, 9], row_J[r, 10], row_J[r, 11] = ang_b
    row_C[r] = C
    row_active[r] = active


@helper(cache=True, error_model="numpy")
def point_row(row_J, row_C, row_active, r, ex, ey, ez, rax, ray, raz, rbx, rby, rbz, C):
    """Point-to-point row along world direction e (eq. 11-12, seed 000):
    C = e·(p_b − p_a), Ċ = e·(v_b + ω_b×r_b − v_a − ω_a×r_a)."""
    cax, cay, caz = cross(rax, ray, raz, ex, ey, ez)
    cbx, cby, cbz = cross(rbx, rby, rbz, ex, ey, ez)
    write_row(row_J, row_C, row_active, r, (-ex, -ey, -ez), (-cax, -cay, -caz), (ex, ey, ez), (cbx, cby, cbz), C, np.int64(1))


@helper(cache=True, error_model="numpy")
def perpendicular_row(row_J, row_C, row_active, r, ux, uy, uz, wx, wy, wz):
    """Angular row keeping axis u (on a) perpendicular to axis w (on b) (eq. 14, 15, 18,
    seed 000): C = u·w, Ċ = (u×w)·ω_a − (u×w)·ω_b."""
    cx, cy, cz = cross(ux, uy, uz, wx, wy, wz)
    write_row(row_J, row_C, row_active, r, (0.0, 0.0, 0.0), (cx, cy, cz), (0.0, 0.0, 0.0), (-cx, -cy, -cz),
              ux * wx + uy * wy + uz * wz, np.int64(1))


@helper(cache=True, error_model="numpy")
def slide_row(row_J, row_C, row_active, r, n, pba, rb, C, active):
    """Row along axis n fixed in body a through the anchor gap d = p_b − p_a
    (eq. 16-17, seed 000): Ċ = n·(v_b − v_a) + (r_b×n)·ω_b − ((p_b − x_a)×n)·ω_a."""
    nx, ny, nz = n
    cax, cay, caz = cross(pba[0], pba[1], pba[2], nx, ny, nz)
    cbx, cby, cbz = cross(rb[0], rb[1], rb[2], nx, ny, nz)
    write_row(row_J, row_C, row_active, r, (-nx, -ny, -nz), (-cax, -cay, -caz), (nx, ny, nz), (cbx, cby, cbz), C, active)


@helper(cache=True, error_model="numpy")
def twist_row(row_J, row_C, row_active, r, nx, ny, nz, C, active):
    """Angular row about axis n: Ċ = n·(ω_b − ω_a) (limits and free rotational DOFs)."""
    write_row(row_J, row_C, row_active, r, (0.0, 0.0, 0.0), (-nx, -ny, -nz), (0.0, 0.0, 0.0), (nx, ny, nz), C, active)


@helper(cache=True, error_model="numpy")
def limit_value(q, lo, hi, on):
    """Dead-zone function χ (eq. 21, 25, seed 000) on an angle or slide: (C, active)."""
    if on == 0:
        return 0.0, 0
    if q < lo:
        return q - lo, 1
    if q > hi:
        return q - hi, -1
    return 0.0, 0


@kernel(cache=True, error_model="numpy", _nrt=False)
def compute_joint_rows(bodies, joints, rows, readout):
    """Write every joint's rows from the body poses; update joint_q and joint_err.

    A joint's angles and its limit and free rows are written exactly where something
    reads them: when `readout` is set (the last step of a run), when one of its limits is
    on, and when its free rows are used (joint_free_used[j]: friction, a motor, damping or
    a coupling). Otherwise nothing in a step reads them:
    - a spherical joint needs no frames at all, only its three point rows (its swing and
      twist cost two atan2 and a quaternion product);
    - a revolute or universal joint keeps its angles within π/8 without atan2
      (tracked_angle), which carries their whole turns to the next exact angle; its limit
      rows are switched off, its free rows left as they are.
    """
    body_pos, body_quat = bodies.pos, bodies.quat
    joint_type, joint_body, joint_q, joint_err = joints.type, joints.body, joints.q, joints.err
    joint_anchor_a, joint_anchor_b, joint_frame_a, joint_frame_b = (joints.anchor_a, joints.anchor_b,
                                                                    joints.frame_a, joints.frame_b)
    joint_limit_lo, joint_limit_hi, joint_limit_on = joints.limit_lo, joints.limit_hi, joints.limit_on
    joint_row_start, joint_free_used = joints.row_start, joints.free_used
    row_J, row_C, row_active = rows.J, rows.C, rows.active
    # activities as int64 variables, not constants: the row helpers then compile once,
    # not once more per literal value (numba specializes on Literal[int] arguments)
    on, off = np.int64(1), np.int64(FREE_OFF)
    for j in range(joint_type.shape[0]):
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        qax, qay, qaz, qaw = body_quat[a, 0], body_quat[a, 1], body_quat[a, 2], body_quat[a, 3]
        qbx, qby, qbz, qbw = body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3]
        # world anchor arms and points
        rax, ray, raz = rotate(qax, qay, qaz, qaw, joint_anchor_a[j, 0], joint_anchor_a[j, 1], joint_anchor_a[j, 2])
        rbx, rby, rbz = rotate(qbx, qby, qbz, qbw, joint_anchor_b[j, 0], joint_anchor_b[j, 1], joint_anchor_b[j, 2])
        pax, pay, paz = body_pos[a, 0] + rax, body_pos[a, 1] + ray, body_pos[a, 2] + raz
        pbx, pby, pbz = body_pos[b, 0] + rbx, body_pos[b, 1] + rby, body_pos[b, 2] + rbz
        dx, dy, dz = pbx - pax, pby - pay, pbz - paz
        t = joint_type[j]
        r = joint_row_start[j]
        if (t == SPHERICAL and not readout and joint_free_used[j] == 0
                and joint_limit_on[j, 0] == 0 and joint_limit_on[j, 1] == 0):
            point_row(row_J, row_C, row_active, r, 1.0, 0.0, 0.0, rax, ray, raz, rbx, rby, rbz, dx)
            point_row(row_J, row_C, row_active, r + 1, 0.0, 1.0, 0.0, rax, ray, raz, rbx, rby, rbz, dy)
            point_row(row_J, row_C, row_active, r + 2, 0.0, 0.0, 1.0, rax, ray, raz, rbx, rby, rbz, dz)
            joint_err[j] = max(abs(dx), max(abs(dy), abs(dz)))
            continue
        # world joint frames n_a0..n_a2 and n_b0..n_b2
        fax, fay, faz, faw = qmul(qax, qay, qaz, qaw, joint_frame_a[j, 0], joint_frame_a[j, 1], joint_frame_a[j, 2], joint_frame_a[j, 3])
        fbx, fby, fbz, fbw = qmul(qbx, qby, qbz, qbw, joint_frame_b[j, 0], joint_frame_b[j, 1], joint_frame_b[j, 2], joint_frame_b[j, 3])
        a0x, a0y, a0z, a1x, a1y, a1z, a2x, a2y, a2z = frame_axes(fax, fay, faz, faw)
        b0x, b0y, b0z, b1x, b1y, b1z, b2x, b2y, b2z = frame_axes(fbx, fby, fbz, fbw)

        err = 0.0
        if t == PRISMATIC:
            # two slide rows across the axis (eq. 16) + three orientation rows (eq. 18)
            c1 = dx * a1x + dy * a1y + dz * a1z
            c2 = dx * a2x + dy * a2y + dz * a2z
            pba = (pbx - body_pos[a, 0], pby - body_pos[a, 1], pbz - body_pos[a, 2])
            rb = (rbx, rby, rbz)
            slide_row(row_J, row_C, row_active, r, (a1x, a1y, a1z), pba, rb, c1, on)
            slide_row(row_J, row_C, row_active, r + 1, (a2x, a2y, a2z), pba, rb, c2, on)
            perpendicular_row(row_J, row_C, row_active, r + 2, a1x, a1y, a1z, b0x, b0y, b0z)
            perpendicular_row(row_J, row_C, row_active, r + 3, a2x, a2y, a2z, b0x, b0y, b0z)
            perpendicular_row(row_J, row_C, row_active, r + 4, a1x, a1y, a1z, b2x, b2y, b2z)
            n_eq = 5
            s = dx * a0x + dy * a0y + dz * a0z
            joint_q[j, 0] = s
            C, act = limit_value(s, joint_limit_lo[j, 0], joint_limit_hi[j, 0], joint_limit_on[j, 0])
            slide_row(row_J, row_C, row_active, r + 5, (a0x, a0y, a0z), pba, rb, C, act)
            err = max(err, abs(C))
            slide_row(row_J, row_C, row_active, r + 6, (a0x, a0y, a0z), pba, rb, 0.0, off)
        else:
            # three point rows along the world axes (eq. 11, seed 000)
            point_row(row_J, row_C, row_active, r, 1.0, 0.0, 0.0, rax, ray, raz, rbx, rby, rbz, dx)
            point_row(row_J, row_C, row_active, r + 1, 0.0, 1.0, 0.0, rax, ray, raz, rbx, rby, rbz, dy)
            point_row(row_J, row_C, row_active, r + 2, 0.0, 0.0, 1.0, rax, ray, raz, rbx, rby, rbz, dz)
            if t == FIXED:
                perpendicular_row(row_J, row_C, row_active, r + 3, a1x, a1y, a1z, b0x, b0y, b0z)
                perpendicular_row(row_J, row_C, row_active, r + 4, a2x, a2y, a2z, b0x, b0y, b0z)
                perpendicular_row(row_J, row_C, row_active, r + 5, a1x, a1y, a1z, b2x, b2y, b2z)
                n_eq = 6
            elif t == REVOLUTE:
                # axis n_a0 = n_b0 (eq. 14); angle from n_a1 to n_b1 about n_a0
                perpendicular_row(row_J, row_C, row_active, r + 3, a1x, a1y, a1z, b0x, b0y, b0z)
                perpendicular_row(row_J, row_C, row_active, r + 4, a2x, a2y, a2z, b0x, b0y, b0z)
                n_eq = 5
                exact = readout or joint_free_used[j] != 0 or joint_limit_on[j, 0] != 0
                cx, cy, cz = cross(a1x, a1y, a1z, b1x, b1y, b1z)
                phi = tracked_angle(cx * a0x + cy * a0y + cz * a0z, a1x * b1x + a1y * b1y + a1z * b1z, joint_q[j, 0],
                                    exact)
                joint_q[j, 0] = phi
                if exact:
                    C, act = limit_value(phi, joint_limit_lo[j, 0], joint_limit_hi[j, 0], joint_limit_on[j, 0])
                    twist_row(row_J, row_C, row_active, r + 5, a0x, a0y, a0z, C, act)
                    err = max(err, abs(C))
                    twist_row(row_J, row_C, row_active, r + 6, a0x, a0y, a0z, 0.0, off)
                else:
                    row_active[r + 5] = 0
            elif t == UNIVERSAL:
                # n_a0 ⟂ n_b1 (eq. 15); φ1 about n_a0, φ2 about n_b1
                perpendicular_row(row_J, row_C, row_active, r + 3, a0x, a0y, a0z, b1x, b1y, b1z)
                n_eq = 4
                exact = (readout or joint_free_used[j] != 0 or joint_limit_on[j, 0] != 0
                         or joint_limit_on[j, 1] != 0)
                phi1 = tracked_angle(b1x * a2x + b1y * a2y + b1z * a2z, b1x * a1x + b1y * a1y + b1z * a1z, joint_q[j, 0],
                                     exact)
                phi2 = tracked_angle(b2x * a0x + b2y * a0y + b2z * a0z, b0x * a0x + b0y * a0y + b0z * a0z, joint_q[j, 1],
                                     exact)
                joint_q[j, 0] = phi1
                joint_q[j, 1] = phi2
                if exact:
                    C, act = limit_value(phi1, joint_limit_lo[j, 0], joint_limit_hi[j, 0], joint_limit_on[j, 0])
                    twist_row(row_J, row_C, row_active, r + 4, a0x, a0y, a0z, C, act)
                    err = max(err, abs(C))
                    C, act = limit_value(phi2, joint_limit_lo[j, 1], joint_limit_hi[j, 1], joint_limit_on[j, 1])
                    twist_row(row_J, row_C, row_active, r + 5, b1x, b1y, b1z, C, act)
                    err = max(err, abs(C))
                    twist_row(row_J, row_C, row_active, r + 6, a0x, a0y, a0z, 0.0, off)
                    twist_row(row_J, row_C, row_active, r + 7, b1x, b1y, b1z, 0.0, off)
                else:
                    row_active[r + 4] = 0
                    row_active[r + 5] = 0
            else:  # SPHERICAL: swing cone about n_a0 and twist about it
                n_eq = 3
                if readout or joint_limit_on[j, 0] != 0 or joint_limit_on[j, 1] != 0:
                    sx, sy, sz = cross(a0x, a0y, a0z, b0x, b0y, b0z)
                    sn = math.sqrt(sx * sx + sy * sy + sz * sz)
                    swing = math.atan2(sn, a0x * b0x + a0y * b0y + a0z * b0z)
                    joint_q[j, 0] = swing
                    if sn > 1e-12:
                        sx, sy, sz = sx / sn, sy / sn, sz / sn
                    else:
                        sx, sy, sz = a1x, a1y, a1z
                    C, act = limit_value(swing, -1.0, joint_limit_hi[j, 0], joint_limit_on[j, 0])
                    twist_row(row_J, row_C, row_active, r + 3, sx, sy, sz, C, act)
                    err = max(err, abs(C))
                    # twist: swing-twist decomposition of the relative rotation about n_a0
                    rx, ry, rz, rw = qmul(-fax, -fay, -faz, faw, fbx, fby, fbz, fbw)
                    raw = wrap_angle(2.0 * math.atan2(rx, rw))
                    tw = unwrap(raw, joint_q[j, 1])
                    joint_q[j, 1] = tw
                    # the twist's rate is (ω_b − ω_a)·(n_a0 + n_b0)/(1 + n_a0·n_b0)
                    hx, hy, hz = a0x + b0x, a0y + b0y, a0z + b0z
                    hd = 1.0 + a0x * b0x + a0y * b0y + a0z * b0z
                    if hd > 1e-12:
                        hx, hy, hz = hx / hd, hy / hd, hz / hd
                    else:
                        hx, hy, hz = a0x, a0y, a0z
                    C, act = limit_value(tw, joint_limit_lo[j, 1], joint_limit_hi[j, 1], joint_limit_on[j, 1])
                    twist_row(row_J, row_C, row_active, r + 4, hx, hy, hz, C, act)
                    err = max(err, abs(C))
                else:
                    row_active[r + 3] = 0
                    row_active[r + 4] = 0
                twist_row(row_J, row_C, row_active, r + 5, a0x, a0y, a0z, 0.0, off)
                twist_row(row_J, row_C, row_active, r + 6, a1x, a1y, a1z, 0.0, off)
                twist_row(row_J, row_C, row_active, r + 7, a2x, a2y, a2z, 0.0, off)
        for k in range(n_eq):
            err = max(err, abs(row_C[r + k]))
        joint_err[j] = err


@helper(cache=True, error_model="numpy", fastmath=FAST, _nrt=False)
def row_velocity(row_J, r, a, b, body_vel, body_omega):
    """Ċ = J·V for row r between bodies a and b."""
    return (row_J[r, 0] * body_vel[a, 0] + row_J[r, 1] * body_vel[a, 1] + row_J[r, 2] * body_vel[a, 2]
            + row_J[r, 3] * body_omega[a, 0] + row_J[r, 4] * body_omega[a, 1] + row_J[r, 5] * body_omega[a, 2]
            + row_J[r, 6] * body_vel[b, 0] + row_J[r, 7] * body_vel[b, 1] + row_J[r, 8] * body_vel[b, 2]
            + row_J[r, 9] * body_omega[b, 0] + row_J[r, 10] * body_omega[b, 1] + row_J[r, 11] * body_omega[b, 2])


@helper(cache=True, _nrt=False)
def free_rows(row_kind, start, end):
    """(first, count) of the free rows of the block of rows [start, end) (they close a
    joint's or a contact's block). Helpers called per row or block take the row arrays
    one by one: taken from a bundle inside a loop, numba would count references to them
    every time."""
    f0 = end
    while f0 > start and row_kind[f0 - 1] == ROW_FREE:
        f0 -= 1
    return f0, end - f0


@helper(cache=True)
def block_rows(block_start, block_count, row_kind, k):
    """Block k's rows [start, end) and its free rows (first, count: free_rows)."""
    start = block_start[k]
    end = start + block_count[k]
    f0, nf = free_rows(row_kind, start, end)
    return start, end, f0, nf


@kernel(cache=True, error_model="numpy")
def compute_joint_rates(bodies, joints, rows):
    """Rate of each free DOF = its free row's J·V (rad/s or m/s)."""
    joint_type, joint_body, joint_row_start, joint_row_count = joints.type, joints.body, joints.row_start, joints.row_count
    row_J, body_vel, body_omega, joint_qd = rows.J, bodies.vel, bodies.omega, joints.qd
    for j in range(joint_type.shape[0]):
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        t = joint_type[j]
        n_free = 0
        if t == SPHERICAL or t == UNIVERSAL:
            n_free = 3 if t == SPHERICAL else 2
        elif t == REVOLUTE or t == PRISMATIC:
            n_free = 1
        end = joint_row_start[j] + joint_row_count[j]
        for k in range(3):
            if k < n_free:
                joint_qd[j, k] = row_velocity(row_J, end - n_free + k, a, b, body_vel, body_omega)
            else:
                joint_qd[j, k] = 0.0


@helper(cache=True, error_model="numpy")
def speculative_limits(bodies, joints, rows, h, reach):
    """Speculative limits (Catto's speculative contacts, Box2D's joint limits): a limit row
    inside its bounds (C = χ = 0) whose joint moves toward a bound it could reach within
    `reach` steps of h at its current rate, d ≤ reach·|q̇|·h, binds this step as a one-sided
    row with the velocity bias ±d/h: J·V ≥ −d/h toward a lower bound (λ ≥ 0), J·V ≤ d/h
    toward an upper one (λ ≤ 0). It lets the joint arrive exactly at the bound, never
    through it, and acts on nothing else (a joint moving away or slower than d/h keeps
    λ = 0). C stays 0, so the drift passes (Baumgarte, split impulses) ignore it. A violated
    limit (χ ≠ 0) keeps bias 0. Called by the impulse and lcp solvers after
    write_drive_rows; penalty keeps seed 000's dead zone. Returns the rows switched on."""
    body_vel, body_omega, body_quat = bodies.vel, bodies.omega, bodies.quat
    joint_type, joint_body, row_start, joint_q = joints.type, joints.body, joints.row_start, joints.q
    frame_a, frame_b = joints.frame_a, joints.frame_b
    limit_lo, limit_hi, limit_on = joints.limit_lo, joints.limit_hi, joints.limit_on
    row_J, row_C, active, lo, hi, bias = rows.J, rows.C, rows.active, rows.lo, rows.hi, rows.bias
    n = 0
    for j in range(joint_type.shape[0]):
        t = joint_type[j]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        r0 = row_start[j] + N_EQ[t]
        for k in range(N_LIMIT[t]):
            r = r0 + k
            bias[r] = 0.0
            if limit_on[j, k] == 0:
                continue
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            q = joint_q[j, k]
            # the swing cone's rim is a small circle: moving along it at rate u_t (b0 on
            # its great circle) takes the swing θ up by δ = ½(u_t h)² cot θ in the step,
            # a second-order rise J·V does not see; the row asks for δ/h less
            delta = 0.0
            if t == SPHERICAL and k == 0:
                delta = swing_rise(body_quat, body_omega, frame_a, frame_b, a, b, j, h)
            if active[r] != 0:                                      # violated: C drives it back
                if active[r] == -1:
                    bias[r] = delta / h
                continue
            if v < 0.0 and not (t == SPHERICAL and k == 0):        # toward the lower bound
                d = q - limit_lo[j, k]
                if d <= -reach * v * h:
                    active[r] = 1
                    lo[r] = 0.0
                    hi[r] = math.inf
                    bias[r] = d / h
                    n += 1
            else:                                                   # toward the upper bound
                d = limit_hi[j, k] - q - delta
                if (v > 0.0 and d <= reach * v * h) or d < 0.0:
                    active[r] = -1
                    lo[r] = -math.inf
                    hi[r] = 0.0
                    bias[r] = -d / h
                    n += 1
    return n


@helper(cache=True, error_model="numpy", _nrt=False)
def swing_rise(body_quat, body_omega, frame_a, frame_b, a, b, j, h):
    """Second-order rise of a spherical joint's swing θ = ∠(n_a0, n_b0) in a step h: n_b0
    moves at u = (ω_b − ω_a)×n_b0; its part u_t across the swing direction carries it on a
    great circle, cos θ(h) = cos θ cos(|u_t| h), so θ rises by ½(|u_t| h)² cot θ."""
    qax, qay, qaz, qaw = body_quat[a, 0], body_quat[a, 1], body_quat[a, 2], body_quat[a, 3]
    qbx, qby, qbz, qbw = body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3]
    fax, fay, faz, faw = qmul(qax, qay, qaz, qaw, frame_a[j, 0], frame_a[j, 1], frame_a[j, 2], frame_a[j, 3])
    fbx, fby, fbz, fbw = qmul(qbx, qby, qbz, qbw, frame_b[j, 0], frame_b[j, 1], frame_b[j, 2], frame_b[j, 3])
    a0x, a0y, a0z, _1, _2, _3, _4, _5, _6 = frame_axes(fax, fay, faz, faw)
    b0x, b0y, b0z, _1, _2, _3, _4, _5, _6 = frame_axes(fbx, fby, fbz, fbw)
    c = a0x * b0x + a0y * b0y + a0z * b0z
    # e_r: unit direction of rising swing at n_b0, −(n_a0 − c n_b0)/sin θ
    ex, ey, ez = c * b0x - a0x, c * b0y - a0y, c * b0z - a0z
    sn = math.sqrt(ex * ex + ey * ey + ez * ez)
    if sn < 1e-9:
        return 0.0
    ex, ey, ez = ex / sn, ey / sn, ez / sn
    wx, wy, wz = body_omega[b, 0] - body_omega[a, 0], body_omega[b, 1] - body_omega[a, 1], \
        body_omega[b, 2] - body_omega[a, 2]
    ux, uy, uz = cross(wx, wy, wz, b0x, b0y, b0z)
    ur = ux * ex + uy * ey + uz * ez
    ut2 = max(ux * ux + uy * uy + uz * uz - ur * ur, 0.0)
    return 0.5 * ut2 * h * h * c / sn


DriveUse = namedtuple("DriveUse", "free any_free limits motors damped any_damped")
"""What the joints' limit and free rows do this step: free (per joint, int64 0/1: 1 where
its free rows act — a motor on a 1-DOF joint, or friction on a joint with free DOFs, what
write_drive_rows makes FREE_MOTOR or FREE_FRICTION), any_free (some joint's free rows act),
limits (some joint has a limit on), motors (some 1-DOF joint has a motor on), damped (per
joint, int64 0/1: viscous damping on its free DOFs, solvers/damping.py), any_damped."""


def drive_use(model_joints, control_joints):
    """DriveUse of the joints' current limits, friction, damping and motor modes: the one
    place this is decided; solvers and the World ask it (SolverBase.drive_use)."""
    m = model_joints.type.shape[0]
    free, damped = np.empty(m, np.int64), np.empty(m, np.int64)
    any_free, limits, motors, any_damped = drive_flags(model_joints.type, model_joints.friction, model_joints.damping,
                                                       model_joints.limit_on, control_joints.motor_mode, free, damped)
    return DriveUse(free, any_free, limits, motors, damped, any_damped)


@kernel(cache=True, _nrt=False)
def drive_flags(joint_type, friction, damping, limit_on, motor_mode, free, damped):
    """drive_use's arrays written in one pass (free: a motor on a 1-DOF joint, or friction on
    a joint with free DOFs; damped: damping on a joint with free DOFs); returns any_free,
    limits (some limit on), motors (some motor on), any_damped."""
    any_free = limits = motors = any_damped = False
    for j in range(joint_type.shape[0]):
        nf = N_FREE[joint_type[j]]
        motor = nf == 1 and motor_mode[j] != MOTOR_OFF
        free[j] = 1 if motor or (nf > 0 and friction[j] > 0.0) else 0
        damped[j] = 1 if nf > 0 and damping[j] > 0.0 else 0
        any_free |= free[j] == 1
        any_damped |= damped[j] == 1
        motors |= motor
        for k in range(limit_on.shape[1]):
            limits |= limit_on[j, k] != 0
    return any_free, limits, motors, any_damped


@helper(cache=True, error_model="numpy", _nrt=False)
def write_drive_rows(joints, drives, rows, h):
    """Bounds and drives of every joint's limit and free rows for a solve of step h (s):
    a limit binds on one side (λ ≥ 0 or λ ≤ 0); the free rows carry the motor of a 1-DOF
    joint — a velocity target, or a position servo as a soft row (Box2D's soft step:
    ω = 2πf, a1 = 2ζ + hω, a2 = hω·a1, a3 = 1/(1 + a2), bias = ω/a1·(q − target),
    mass_scale = a2·a3, impulse_scale = a3) limited to ±F_max·h — or, with the motor
    off, Coulomb friction: a ball of radius F·h over the joint's free rows (eq. 12, 16,
    seed 001). Free rows with neither stay FREE_OFF."""
    joint_type, row_start, row_count, joint_q = joints.type, joints.row_start, joints.row_count, joints.q
    motor_mode, motor_max, motor_target = drives.motor_mode, drives.motor_max, drives.motor_target
    motor_freq, motor_damping, friction = drives.motor_freq, drives.motor_damping, drives.friction
    active, lo, hi, bias = rows.active, rows.lo, rows.hi, rows.bias
    mass_scale, impulse_scale = rows.mass_scale, rows.impulse_scale
    for j in range(joint_type.shape[0]):
        t = joint_type[j]
        start = row_start[j]
        end = start + row_count[j]
        nf = N_FREE[t]
        for r in range(start + N_EQ[t], end - nf):
            act = active[r]
            lo[r] = 0.0 if act >= 0 else -math.inf
            hi[r] = 0.0 if act <= 0 else math.inf
        mode = motor_mode[j]
        if nf == 1 and mode != MOTOR_OFF:
            f0 = end - 1
            lim = motor_max[j] * h
            active[f0] = FREE_MOTOR
            lo[f0] = -lim
            hi[f0] = lim
            if mode == MOTOR_VELOCITY:
                bias[f0] = -motor_target[j]
                mass_scale[f0] = 1.0
                impulse_scale[f0] = 0.0
            else:
                w = 2.0 * math.pi * motor_freq[j]
                a1 = 2.0 * motor_damping[j] + h * w
                a2 = h * w * a1
                a3 = 1.0 / (1.0 + a2)
                bias[f0] = w / a1 * (joint_q[j, 0] - motor_target[j])
                mass_scale[f0] = a2 * a3
                impulse_scale[f0] = a3
            continue
        pmax = friction[j] * h
        for r in range(end - nf, end):
            active[r] = FREE_FRICTION if pmax > 0.0 else FREE_OFF
            lo[r] = -pmax
            hi[r] = pmax
            bias[r] = 0.0
