"""The rows of one block as the sweeps see them: the block's two bodies' velocities as a
12-tuple, its free rows, and the rows' preparation for a substep — M⁻¹Jᵀ and effective
mass 1/(J M⁻¹ Jᵀ) of every row in use (prepare_rows), then last step's impulses applied,
each kept feasible (warm_start)."""
import math

from ...jit import helper

from ...joint_rows import FREE_CONTACT, FREE_OFF, ROW_EQ, ROW_LIMIT, block_rows
from ..row_ops import scatter_row


@helper(cache=True)
def coupling(row_J, row_minv_jt, r, s):
    """(J M⁻¹ Jᵀ)_rs for two rows of the same joint (same bodies)."""
    k = 0.0
    for i in range(12):
        k += row_J[r, i] * row_minv_jt[s, i]
    return k


# ---------------------------------------------------------------------------- a block's rows
@helper(cache=True)
def normal_sum(row_lambda, start, f0):
    """Σλ of a contact block's normal rows (they precede its friction rows)."""
    s = 0.0
    for r in range(start, f0):
        s += row_lambda[r]
    return s


@helper(cache=True)
def block_iterates(row_kind, row_active, start, end, row_direct):
    """Whether a block has rows for sequential impulses: a limit in force outside the
    direct solve, or a free row in use (friction or motor)."""
    for r in range(start, end):
        if row_active[r] != 0 and row_direct[r] != 1 and row_kind[r] != ROW_EQ:
            return True
    return False



# ---------------------------------------------------------------------------- prepare rows
@helper(cache=True)
def prepare_rows(rows, bodies, work, row_direct):
    """M⁻¹Jᵀ of each row in use (12 numbers) and its effective mass 1/(J M⁻¹ Jᵀ); rows
    not in use this step (inactive limits, free rows off) get 0. Rows in the direct
    solve (row_direct = 1) are left alone."""
    body_inv_mass = bodies.inv_mass
    row_J, row_active, row_body = rows.J, rows.active, rows.body
    body_inv_inertia_world, row_minv_jt, row_mass = work.inv_inertia_world, work.minv_jt, work.mass
    for r in range(row_J.shape[0]):
        if row_direct[r] == 1:
            continue
        if row_active[r] == 0:
            row_mass[r] = 0.0
            continue
        k = 0.0
        for side in range(2):
            i = row_body[r, side]
            o = 6 * side
            im = body_inv_mass[i]
            jx, jy, jz = row_J[r, o + 3], row_J[r, o + 4], row_J[r, o + 5]
            row_minv_jt[r, o] = im * row_J[r, o]
            row_minv_jt[r, o + 1] = im * row_J[r, o + 1]
            row_minv_jt[r, o + 2] = im * row_J[r, o + 2]
            row_minv_jt[r, o + 3] = (body_inv_inertia_world[i, 0] * jx + body_inv_inertia_world[i, 1] * jy
                                     + body_inv_inertia_world[i, 2] * jz)
            row_minv_jt[r, o + 4] = (body_inv_inertia_world[i, 3] * jx + body_inv_inertia_world[i, 4] * jy
                                     + body_inv_inertia_world[i, 5] * jz)
            row_minv_jt[r, o + 5] = (body_inv_inertia_world[i, 6] * jx + body_inv_inertia_world[i, 7] * jy
                                     + body_inv_inertia_world[i, 8] * jz)
            for c in range(6):
                k += row_J[r, o + c] * row_minv_jt[r, o + c]
        row_mass[r] = 1.0 / k if k > 1e-300 else 0.0



# ---------------------------------------------------------------------------- warm start
@helper(cache=True)
def warm_start(warm, rows, work, vel, omega, row_direct, apply):
    """Apply last step's accumulated impulses (or zero them), keeping every one feasible:
    inactive limits drop theirs, free rows stay in their ball (friction) or bound (motor).
    Rows in the direct solve (row_direct = 1) are skipped (they keep last step's impulse
    for the geometric stiffness, see direct_velocities); `apply` False: only clamp."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_active, row_lambda = rows.active, rows.impulse
    row_hi = rows.hi
    row_minv_jt, row_mass = work.minv_jt, work.mass
    for k in range(block_start.shape[0]):
        start, end, f0, nf = block_rows(block_start, block_count, row_kind, k)
        a = row_body[start, 0]
        b = row_body[start, 1]
        if not warm:
            for r in range(start, end):
                if row_direct[r] != 1:
                    row_lambda[r] = 0.0
            continue
        for r in range(start, f0):
            if row_direct[r] == 1:
                continue
            if row_kind[r] == ROW_LIMIT:
                if row_active[r] == 0 or row_lambda[r] * row_active[r] < 0.0:
                    row_lambda[r] = 0.0
        if nf > 0:
            lim = row_hi[f0] if row_active[f0] != FREE_OFF else 0.0
            if row_active[f0] == FREE_CONTACT:
                lim *= normal_sum(row_lambda, start, f0)
            n = 0.0
            for r in range(f0, end):
                n += row_lambda[r] * row_lambda[r]
            n = math.sqrt(n)
            if n > lim:
                s = lim / n if n > 0.0 else 0.0
                for r in range(f0, end):
                    row_lambda[r] *= s
        for r in range(start, end):
            if row_direct[r] == 1:
                continue
            if row_mass[r] == 0.0:
                row_lambda[r] = 0.0
            elif row_lambda[r] != 0.0 and apply:
                scatter_row(row_minv_jt, r, a, b, row_lambda[r], vel, omega)

