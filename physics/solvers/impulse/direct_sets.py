"""The direct solve's active sets (see direct.py): limits in it that let go, and joints
locked in it by static friction that stick or slip (eq. 16, seed 001)."""
import math

from numba import njit

from ...joint_rows import FREE_FRICTION
from ...joint_types import N_FREE, N_LIMIT


# ---------------------------------------------------------------------------- limits
@njit(cache=True)
def n_limit_rows(t):
    """Limit rows of joint type t (joint_types.py)."""
    return N_LIMIT[t]


@njit(cache=True)
def release_pulling_limits(tree, joint_type, joint_row_start, row_active, row_direct, row_lambda):
    """Active set of the limits in the direct solve: a limit row whose impulse came out
    pulling (λ of the wrong sign: the joint is leaving its stop) leaves the direct solve
    for the rest of the step (row_direct = −1), to the one-sided sequential impulses.
    Returns whether any did."""
    order, joint_m = tree.order, tree.joint_m
    changed = False
    for t in range(order.shape[0]):
        k = order[t]
        start = joint_row_start[k] + joint_m[k]
        for r in range(start, start + n_limit_rows(joint_type[k])):
            if row_direct[r] == 1 and row_lambda[r] * row_active[r] < 0.0:
                row_direct[r] = -1
                row_lambda[r] = 0.0
                changed = True
    return changed


# ---------------------------------------------------------------------------- friction
@njit(cache=True)
def impulse_norm(row_lambda, start, end):
    """|λ| over the rows start…end−1 (a joint's free rows: its friction impulse)."""
    n = 0.0
    for r in range(start, end):
        n += row_lambda[r] * row_lambda[r]
    return math.sqrt(n)


@njit(cache=True)
def lock_sticking_friction(tree, joint_type, joint_row_start, row_active, row_hi, row_lambda, row_direct):
    """Static friction on the direct path: the free rows in friction of every tree joint
    whose impulse lies strictly inside its Coulomb ball (eq. 16, seed 001: the joint
    sticks) get row_direct = 1, so that select_rows locks the joint in the closing direct
    solve, which then holds it exactly (the sweeps around the direct solve stop at ε).
    Returns whether any joint was locked."""
    order, joint_m = tree.order, tree.joint_m
    locked = False
    for t in range(order.shape[0]):
        k = order[t]
        jt = joint_type[k]
        nf = N_FREE[jt]
        f0 = joint_row_start[k] + joint_m[k] + N_LIMIT[jt]
        if nf == 0 or row_active[f0] != FREE_FRICTION or row_direct[f0] != 0:
            continue
        if impulse_norm(row_lambda, f0, f0 + nf) < row_hi[f0] * (1.0 - 1e-9):
            for r in range(f0, f0 + nf):
                row_direct[r] = 1
            locked = True
    return locked


@njit(cache=True)
def release_slipping_friction(tree, joint_type, joint_row_start, row_hi, row_direct, row_lambda):
    """A joint locked by static friction whose friction impulse came out of its Coulomb
    ball in the direct solve (it slides) is unlocked for the rest of the substep
    (row_direct = −1), its impulse put on the ball (eq. 16, seed 001). Returns whether
    any was."""
    order, joint_m = tree.order, tree.joint_m
    changed = False
    for t in range(order.shape[0]):
        k = order[t]
        jt = joint_type[k]
        nf = N_FREE[jt]
        f0 = joint_row_start[k] + joint_m[k] + N_LIMIT[jt]
        if nf == 0 or row_direct[f0] != 1:
            continue
        n = impulse_norm(row_lambda, f0, f0 + nf)
        if n > row_hi[f0]:
            s = row_hi[f0] / n
            for r in range(f0, f0 + nf):
                row_direct[r] = -1
                row_lambda[r] *= s
            changed = True
    return changed

