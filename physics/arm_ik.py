"""One control tick of a robot arm's Cartesian target (arm_control.Arm.update) as kernels:
the tip's geometric Jacobian and the clamped damped least-squares step

    Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e

(Wampler 1986; Nakamura & Hanafusa 1986; survey: Buss 2004) with the joint limits, the
null-space drift to home, the speed caps and the lead bound of arm_control's docstring.
The arm's own state (targets, program, gripper) stays in Python; these read the bodies'
poses and the joints' positions straight from the World's arrays.
"""
import math
from collections import namedtuple

import numpy as np
from .jit import kernel, helper

from .quat import cross, qmul, rotate
from .solvers.tree.block import _chol_solve
from .solvers.tree.factor import _cholesky

ArmChain = namedtuple("ArmChain", "index child axis anchor revolute tip tip_local tip_q lo hi home vmax")
"""An arm's joints, root first: index (n,) World joint indices; child (n,) their child bodies;
axis, anchor (n,3) each joint's axis and anchor in its child body's frame; revolute (n,)
bool; tip the tip's body, tip_local (3,) its point and tip_q (4,) its frame in that body's
frame; lo, hi (n,) limits (±inf: none); home (n,) home pose; vmax (n,) velocity limits."""
ArmGains = namedtuple("ArmGains", "period lookahead gain max_speed damping rot_weight max_lead")
"""The tick's numbers (arm_control.Arm's attributes of those names; rot_weight m/rad, max_lead rad or m)."""


@kernel(cache=True)
def tip_point(pos, quat, tip, tip_local):
    """The tip's world point: body `tip`'s pose applied to tip_local (its body frame)."""
    x, y, z = rotate(quat[tip, 0], quat[tip, 1], quat[tip, 2], quat[tip, 3], tip_local[0], tip_local[1], tip_local[2])
    return pos[tip, 0] + x, pos[tip, 1] + y, pos[tip, 2] + z


@kernel(cache=True)
def arm_jacobian(pos, quat, chain, x, J):
    """J (6×n, rows linear then angular) of the world point x: joint k's axis a and anchor p
    from its child body's pose; a revolute column is [a × (x − p); a], a prismatic one [a; 0]."""
    child, axis_local, anchor_local, revolute = chain.child, chain.axis, chain.anchor, chain.revolute
    for k in range(child.shape[0]):
        i = child[k]
        qx, qy, qz, qw = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        ax, ay, az = rotate(qx, qy, qz, qw, axis_local[k, 0], axis_local[k, 1], axis_local[k, 2])
        if revolute[k]:
            rx, ry, rz = rotate(qx, qy, qz, qw, anchor_local[k, 0], anchor_local[k, 1], anchor_local[k, 2])
            lx, ly, lz = cross(ax, ay, az, x[0] - pos[i, 0] - rx, x[1] - pos[i, 1] - ry, x[2] - pos[i, 2] - rz)
            J[0, k], J[1, k], J[2, k] = lx, ly, lz
            J[3, k], J[4, k], J[5, k] = ax, ay, az
        else:
            J[0, k], J[1, k], J[2, k] = ax, ay, az
            J[3, k] = J[4, k] = J[5, k] = 0.0


@helper(cache=True)
def _rotation_error(quat, tip, tip_q, target_q):
    """Rotation vector (rad) that turns the tip frame (body `tip`'s orientation ⊗ tip_q)
    onto target_q, the shorter way round."""
    b = quat[tip]
    tx, ty, tz, tw = qmul(b[0], b[1], b[2], b[3], tip_q[0], tip_q[1], tip_q[2], tip_q[3])
    ex, ey, ez, ew = qmul(target_q[0], target_q[1], target_q[2], target_q[3], -tx, -ty, -tz, tw)
    if ew < 0.0:
        ex, ey, ez, ew = -ex, -ey, -ez, -ew
    s = math.sqrt(ex * ex + ey * ey + ez * ez)
    f = 2.0 if s < 1e-12 else 2.0 * math.atan2(s, ew) / s
    return ex * f, ey * f, ez * f


@helper(cache=True)
def _dls_solve(J, m, free, e, A, y):
    """y[:m] = (J_f J_fᵀ + A's damping)⁻¹ e[:m] over the free columns; A (1, 36) holds λ² on
    entry at A[0, 0] and its factor on exit (for a second solve, _chol_solve)."""
    lam2 = A[0, 0]
    for i in range(m):
        for j in range(i + 1):
            s = lam2 if i == j else 0.0
            for k in range(J.shape[1]):
                if free[k]:
                    s += J[i, k] * J[j, k]
            A[0, 6 * i + j] = s
            A[0, 6 * j + i] = s
    _cholesky(A, 0, m)
    for i in range(m):
        y[0, i] = e[i]
    _chol_solve(A, 0, m, y, 0)


@kernel(cache=True)
def dls_command(pos, quat, joint_q, joint_qd, motor_target, chain, gains, target, target_q, ahead, out):
    """out = the arm's next joint targets (n,) for the tip target (point; target_q a unit
    quaternion of the tip frame, or NaN in its first entry: free; ahead: the program's
    target one tick on, or NaN: none), from the chain's joints (ArmChain; their positions
    and rates in column 0 of joint_q, joint_qd, their present targets in motor_target) and
    the gains (ArmGains). The steps of arm_control's docstring: the tip predicted
    `lookahead` s on, the gained and capped task error (plus the program's feed-forward),
    the clamped DLS step with the null-space drift, the per-joint speed cap, the limits
    and the lead bound."""
    index, tip, tip_q, lo, hi, home_q, vmax = chain.index, chain.tip, chain.tip_q, chain.lo, chain.hi, chain.home, \
        chain.vmax
    h, lookahead, gain, max_speed = gains.period, gains.lookahead, gains.gain, gains.max_speed
    damping, rot_weight, max_lead = gains.damping, gains.rot_weight, gains.max_lead
    n = index.shape[0]
    J = np.zeros((6, n))
    x = np.empty(3)
    x[0], x[1], x[2] = tip_point(pos, quat, tip, chain.tip_local)
    arm_jacobian(pos, quat, chain, x, J)
    lead = np.empty(n)
    base = np.empty(n)
    for k in range(n):
        lead[k] = joint_qd[index[k], 0] * lookahead
        base[k] = motor_target[index[k]]
    g = min(gain * h, 1.0)
    e = np.zeros(6)
    for i in range(3):
        s = 0.0
        for k in range(n):
            s += J[i, k] * lead[k]
        e[i] = (target[i] - x[i] - s) * g
        if not math.isnan(ahead[0]):            # the program's own motion, fed forward
            e[i] += ahead[i] - target[i]
    norm = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    cap = max_speed * h
    if norm > cap:
        for i in range(3):
            e[i] *= cap / norm
    m = 3
    if not math.isnan(target_q[0]):
        m = 6
        e[3], e[4], e[5] = _rotation_error(quat, tip, tip_q, target_q)
        for i in range(3, 6):
            s = 0.0
            for k in range(n):
                s += J[i, k] * lead[k]
            e[i] = rot_weight * (e[i] - s) * g
            for k in range(n):
                J[i, k] *= rot_weight
    free = np.ones(n, np.bool_)
    dq = np.zeros(n)
    A = np.zeros((1, 36))
    y = np.zeros((1, 6))
    z = np.zeros(n)
    for _ in range(n):
        A[0, 0] = damping * damping
        _dls_solve(J, m, free, e, A, y)
        for k in range(n):
            dq[k] = 0.0
            if free[k]:
                for i in range(m):
                    dq[k] += J[i, k] * y[0, i]
        if n > m:                               # redundant: drift to home in the null space
            for k in range(n):
                z[k] = 0.5 * h * (home_q[k] - base[k]) if free[k] else 0.0
            for i in range(m):                  # dq += (I − J_fᵀ A⁻¹ J_f) z
                s = 0.0
                for k in range(n):
                    s += J[i, k] * z[k]
                y[0, i] = s
            _chol_solve(A, 0, m, y, 0)
            for k in range(n):
                if free[k]:
                    s = z[k]
                    for i in range(m):
                        s -= J[i, k] * y[0, i]
                    dq[k] += s
        any_out = False
        for k in range(n):
            new = base[k] + dq[k]
            if free[k] and (new < lo[k] or new > hi[k]):
                # clamped at its limit, its column out of the solve, the task error less what it did
                clamped = min(max(new, lo[k]), hi[k])
                for i in range(m):
                    e[i] -= J[i, k] * (clamped - base[k])
                base[k] = clamped
                free[k] = False
                any_out = True
        if not any_out:
            break
        n_free = 0
        for k in range(n):
            n_free += free[k]
        if n_free == 0:
            break
    scale = 0.0
    for k in range(n):
        if not free[k]:
            dq[k] = 0.0
        scale = max(scale, abs(dq[k]) / (vmax[k] * h))
    for k in range(n):
        if scale > 1.0:
            dq[k] /= scale
        c = min(max(base[k] + dq[k], lo[k]), hi[k])
        q = joint_q[index[k], 0]
        out[k] = min(max(c, q - max_lead), q + max_lead)
