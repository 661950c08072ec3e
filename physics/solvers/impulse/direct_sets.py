"""The direct solve's active sets (see direct.py): which rows it takes (choose_direct_rows),
limits in it that let go, servos in it that reach their torque bound, and joints locked in
it by static friction that stick or slip (eq. 16, seed 001)."""
import math

from ...jit import helper

from ...joint_rows import FREE_FRICTION, FREE_MOTOR
from ...joint_types import N_FREE, N_LIMIT
from ..row_ops import plain_k
from ..tree import select_rows


# ---------------------------------------------------------------------------- the rows it takes
@helper(cache=True)
def tree_free_rows(joint_type, joint_row_start, joint_m, k):
    """(first, count) of tree joint k's free rows: after its joint_m[k] equality rows in the
    tree (Tree.joint_m) and its limit rows."""
    jt = joint_type[k]
    return joint_row_start[k] + joint_m[k] + N_LIMIT[jt], N_FREE[jt]


@helper(cache=True)
def choose_direct_rows(tree, joint_type, joint_row_start, rows, bodies, row_direct):
    """The rows of the direct solve (tree.select_rows: equality rows, active limits, joints
    held by static friction), then the position servos solved with their joints: a servo
    is a soft row, J_m V + bias + γλ = 0 while |λ| stays inside its bound, with
    γ = impulse_scale / (mass_scale · J_m M⁻¹ J_mᵀ) — the fixed point of its sequential
    impulses (Box2D's soft step) — so on a joint with a free motion left it joins the
    joint's pivot as an implicit spring-damper (factor._motor_axes) instead of iterating
    around the direct solve, where a chain of servos converges slowly. Not a servo
    released this substep (row_direct −1: it reached its bound) nor a velocity motor (a
    hard row, γ = 0)."""
    order, joint_m, joint_mdir, joint_child = tree.order, tree.joint_m, tree.joint_mdir, tree.joint_child
    joint_motor, joint_soft = tree.joint_motor, tree.joint_soft
    row_J, row_body, row_active, row_lo, row_hi = rows.J, rows.body, rows.active, rows.lo, rows.hi
    row_bias, row_mass_scale, row_impulse_scale = rows.bias, rows.mass_scale, rows.impulse_scale
    # a servo taken last time is not a joint held by friction (select_rows would lock it)
    for t in range(order.shape[0]):
        k = order[t]
        r = joint_motor[k]
        if r >= 0 and row_direct[r] == 1:
            row_direct[r] = 0
        joint_motor[k] = -1
    select_rows(tree, joint_type, joint_row_start, row_active, True, row_direct)
    n_motors = 0
    for t in range(order.shape[0]):
        k = order[t]
        f0, nf = tree_free_rows(joint_type, joint_row_start, joint_m, k)
        if nf == 0 or joint_mdir[k] >= 6 or row_active[f0] != FREE_MOTOR or row_direct[f0] != 0:
            continue
        if row_impulse_scale[f0] <= 0.0 or row_mass_scale[f0] <= 0.0 or not row_lo[f0] < row_hi[f0]:
            continue
        a, b = row_body[f0, 0], row_body[f0, 1]
        kk = plain_k(row_J, f0, a, b, bodies.inv_mass, bodies.inv_inertia, bodies.quat)
        if not kk > 0.0:
            continue
        o = 0 if a == joint_child[k] else 6
        for i in range(6):
            joint_soft[k, i] = row_J[f0, o + i]
        joint_soft[k, 6] = row_mass_scale[f0] / (row_impulse_scale[f0] * kk)      # 1/γ
        joint_soft[k, 7] = row_bias[f0]
        joint_motor[k] = f0
        row_direct[f0] = 1
        n_motors += 1
    tree.motors[0] = n_motors


@helper(cache=True)
def release_saturated_servos(tree, row_lo, row_hi, row_direct, row_lambda):
    """Active set of the servos in the direct solve: one whose impulse came out beyond its
    bound (the torque limit) leaves it for the rest of the substep (row_direct = −1), its
    impulse on the bound, to the sequential impulses' clamp. Returns whether any did."""
    order, joint_motor = tree.order, tree.joint_motor
    changed = False
    for t in range(order.shape[0]):
        k = order[t]
        r = joint_motor[k]
        if r < 0:
            continue
        if row_lambda[r] > row_hi[r] or row_lambda[r] < row_lo[r]:
            row_lambda[r] = min(max(row_lambda[r], row_lo[r]), row_hi[r])
            row_direct[r] = -1
            joint_motor[k] = -1
            changed = True
    return changed


# ---------------------------------------------------------------------------- limits
@helper(cache=True)
def n_limit_rows(t):
    """Limit rows of joint type t (joint_types.py)."""
    return N_LIMIT[t]


@helper(cache=True)
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
@helper(cache=True)
def impulse_norm(row_lambda, start, end):
    """|λ| over the rows start…end−1 (a joint's free rows: its friction impulse)."""
    n = 0.0
    for r in range(start, end):
        n += row_lambda[r] * row_lambda[r]
    return math.sqrt(n)


@helper(cache=True)
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
        f0, nf = tree_free_rows(joint_type, joint_row_start, joint_m, k)
        if nf == 0 or row_active[f0] != FREE_FRICTION or row_direct[f0] != 0:
            continue
        if impulse_norm(row_lambda, f0, f0 + nf) < row_hi[f0] * (1.0 - 1e-9):
            for r in range(f0, f0 + nf):
                row_direct[r] = 1
            locked = True
    return locked


@helper(cache=True)
def release_slipping_friction(tree, joint_type, joint_row_start, row_hi, row_direct, row_lambda):
    """A joint locked by static friction whose friction impulse came out of its Coulomb
    ball in the direct solve (it slides) is unlocked for the rest of the substep
    (row_direct = −1), its impulse put on the ball (eq. 16, seed 001). Returns whether
    any was."""
    order, joint_m = tree.order, tree.joint_m
    changed = False
    for t in range(order.shape[0]):
        k = order[t]
        f0, nf = tree_free_rows(joint_type, joint_row_start, joint_m, k)
        if nf == 0 or row_direct[f0] != 1 or tree.joint_motor[k] >= 0:
            continue
        n = impulse_norm(row_lambda, f0, f0 + nf)
        if n > row_hi[f0]:
            s = row_hi[f0] / n
            for r in range(f0, f0 + nf):
                row_direct[r] = -1
                row_lambda[r] *= s
            changed = True
    return changed

