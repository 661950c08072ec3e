"""The contact rows' sweep: a contact block (contacts.py: ≤ 4 normal rows, then 2-3
friction rows at the patch centre) swept on its couplings K = J M⁻¹ Jᵀ, and the sweep's
measure of convergence (the bodies' momentum change)."""
import math

import numpy as np
from ...jit import helper

from ...joint_rows import FREE_CONTACT, block_rows, free_rows
from ...quat import rotate_inv
from ..row_ops import add12, jv12, load12, store12
from .rows import coupling, normal_sum
from .sweeps import PATCH_PASSES, coulomb_block, sweep_velocities

# ---------------------------------------------------------------------------- the blocks' couplings
# A contact block (contacts.py: ≤ 4 normal rows, then 2-3 friction rows at the patch centre)
# is swept with its couplings K = J M⁻¹ Jᵀ computed once per substep (prepare_contact_blocks):
# the rows' speeds J·V are read once per sweep, the normal rows' projected Gauss–Seidel runs
# on K (the same iterates as sweeping the rows one by one on the bodies' velocities: a pass
# costs a few multiplications per row instead of 24), and their impulse changes go onto the
# bodies once. ContactWork.block per block:
CB_NN, CB_FF, CB_W, CB_D = 0, 16, 25, 29    # K_nn 4×4, K_ff 3×3, then scratch: J·V + b, Δλ of the normal rows
MAX_PATCH = 4


@helper(cache=True)
def prepare_contact_blocks(rows, work, block):
    """The couplings of every contact block's rows (J M⁻¹ Jᵀ: normal × normal, friction ×
    friction) into block (CB_* layout) from prepare_rows' M⁻¹Jᵀ; rows not
    in use couple by 0. Returns their number if every one has ≤ MAX_PATCH normal rows, else 0
    (the contacts are then swept row by row, sweep_velocities): a count, not a view, so that
    callers compiled without reference counts can take block[:count]."""
    block_start, block_count, row_kind = rows.block_start, rows.block_count, rows.kind
    row_J, row_minv_jt, row_mass = rows.J, work.minv_jt, work.mass
    nb = block_start.shape[0]
    for k in range(nb):
        start, end, f0, nf = block_rows(block_start, block_count, row_kind, k)
        npt = f0 - start
        if npt > MAX_PATCH or nf > 3:
            return 0
        # (only the entries of rows the block has are read)
        store_couplings(row_J, row_minv_jt, row_mass, start, npt, block, k, np.int64(CB_NN), np.int64(4))
        store_couplings(row_J, row_minv_jt, row_mass, f0, nf, block, k, np.int64(CB_FF), np.int64(3))
    return nb


@helper(cache=True, _nrt=False)
def store_couplings(row_J, row_minv_jt, row_mass, first, count, block, k, col, stride):
    """block[k, col + stride·i + j] = J_i M⁻¹ J_jᵀ for rows first + i, first + j (i, j < count;
    0 for a row without mass): a block's coupling matrix, symmetric, row-major."""
    for i in range(count):
        for j in range(i, count):
            kij = 0.0
            if row_mass[first + i] > 0.0 and row_mass[first + j] > 0.0:
                kij = coupling(row_J, row_minv_jt, first + i, first + j)
            block[k, col + stride * i + j] = kij
            block[k, col + stride * j + i] = kij


# ---------------------------------------------------------------------------- the blocks' sweep
@helper(cache=True, _nrt=False)
def sweep_contacts(baumgarte, erp_rate, tol, rows, work, vel, omega, block):
    """One sweep of sequential impulses over the contact blocks on their couplings (block,
    prepare_contact_blocks); the same rows and clamps as sweep_velocities: the normal rows
    (one-sided) by projected Gauss–Seidel on K_nn, up to PATCH_PASSES passes or until a
    pass changes no impulse by more than tol, then the friction rows' coupled solve (eq. 15)
    and Coulomb ball (eq. 16, ball_metric_clamp). Returns the largest change of a row's
    impulse (normal rows) or of a block's friction impulse (its norm) in this sweep."""
    block_start, block_count, row_body, row_kind = rows.block_start, rows.block_count, rows.body, rows.kind
    row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
    row_lo, row_hi, row_bias = rows.lo, rows.hi, rows.bias
    row_minv_jt, row_mass = work.minv_jt, work.mass
    rate = erp_rate if baumgarte else 0.0
    residual = 0.0
    for k in range(block_start.shape[0]):
        start = block_start[k]
        end = start + block_count[k]
        a = row_body[start, 0]
        b = row_body[start, 1]
        f0, nf = free_rows(row_kind, start, end)
        npt = f0 - start
        v = load12(a, b, vel, omega)
        for i in range(npt):
            r = start + i
            block[k, CB_D + i] = 0.0
            w = 0.0
            if row_active[r] != 0 and row_mass[r] != 0.0:
                w = jv12(row_J, r, v) + rate * row_C[r] + row_bias[r]
            block[k, CB_W + i] = w
        # the normal rows: projected Gauss–Seidel on K_nn (their system has rank 3 for four
        # points — the slowest part of Gauss–Seidel on a stack — hence several passes)
        for _ in range(PATCH_PASSES if npt > 2 else 1):
            largest = 0.0
            for i in range(npt):
                r = start + i
                if row_active[r] == 0 or row_mass[r] == 0.0:
                    continue
                old = row_lambda[r]
                new = min(max(old - row_mass[r] * block[k, CB_W + i], row_lo[r]), row_hi[r])
                dl = new - old
                if dl == 0.0:
                    continue
                row_lambda[r] = new
                block[k, CB_D + i] += dl
                for j in range(npt):
                    block[k, CB_W + j] += block[k, CB_NN + 4 * j + i] * dl
                largest = max(largest, abs(dl))
            if largest <= tol:
                break
        for i in range(npt):
            d = block[k, CB_D + i]
            if d != 0.0:
                v = add12(row_minv_jt, start + i, d, v)
                residual = max(residual, abs(d))
        if nf == 0 or row_active[f0] != FREE_CONTACT:
            store12(a, b, v, vel, omega)
            continue
        pmax = row_hi[f0] * normal_sum(row_lambda, start, f0)     # a contact's ball: μ Σλ_n
        # friction: eq. 15 on the block's coupling, then the ball clamp of eq. 16
        k00 = block[k, CB_FF]
        k01 = block[k, CB_FF + 1] if nf > 1 else 0.0
        k11 = block[k, CB_FF + 4] if nf > 1 else 1.0
        k02 = block[k, CB_FF + 2] if nf > 2 else 0.0
        k12 = block[k, CB_FF + 5] if nf > 2 else 0.0
        k22 = block[k, CB_FF + 8] if nf > 2 else 1.0
        v, dp = coulomb_block(row_J, row_minv_jt, row_lambda, f0, nf, k00, k01, k02, k11, k12, k22, pmax, True, v)
        residual = max(residual, dp)
        store12(a, b, v, vel, omega)
    return residual


# ---------------------------------------------------------------------------- one sweep of the contacts
@helper(cache=True, _nrt=False)
def contact_sweep(baumgarte, erp_rate, eps, crows, cwork, bodies, cdirect, cblock, swept):
    """One sweep of the contact rows: by blocks on their couplings (sweep_contacts) when
    prepare_contact_blocks made them, else row by row (sweep_velocities). Returns the
    largest change of a body's momentum |m Δv| (N·s) or angular momentum |I Δω| (N·m·s)
    over the sweep: how far the contacts still move the bodies. (Not the rows' own |Δλ|:
    the normal impulses of a statically indeterminate pile — a box on four corners, a
    box on four others — are not unique, and Gauss–Seidel keeps shifting them among the
    supports sweep after sweep in a settled heap without moving anything.)"""
    n = crows.block_start.shape[0]
    if n == 0:
        return 0.0
    vel, omega = bodies.vel, bodies.omega
    for i in range(vel.shape[0]):
        for q in range(3):
            swept[i, q] = vel[i, q]
            swept[i, 3 + q] = omega[i, q]
    if cblock.shape[0] == n:
        sweep_contacts(baumgarte, erp_rate, eps, crows, cwork, vel, omega, cblock)
    else:
        sweep_velocities(baumgarte, erp_rate, crows, cwork, vel, omega, cdirect)
    return momentum_change(bodies, swept)


@helper(cache=True, _nrt=False)
def momentum_change(bodies, swept):
    """max over moving bodies of |m Δv| and |I Δω| (body frame: |diag(I) Rᵀ Δω|), Δ from swept."""
    vel, omega, quat, inv_mass, inertia = bodies.vel, bodies.omega, bodies.quat, bodies.inv_mass, bodies.inertia
    largest = 0.0
    for i in range(vel.shape[0]):
        if inv_mass[i] == 0.0:
            continue
        dx, dy, dz = vel[i, 0] - swept[i, 0], vel[i, 1] - swept[i, 1], vel[i, 2] - swept[i, 2]
        largest = max(largest, math.sqrt(dx * dx + dy * dy + dz * dz) / inv_mass[i])
        wx, wy, wz = rotate_inv(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3], omega[i, 0] - swept[i, 3],
                                omega[i, 1] - swept[i, 4], omega[i, 2] - swept[i, 5])
        lx, ly, lz = inertia[i, 0] * wx, inertia[i, 1] * wy, inertia[i, 2] * wz
        largest = max(largest, math.sqrt(lx * lx + ly * ly + lz * lz))
    return largest

