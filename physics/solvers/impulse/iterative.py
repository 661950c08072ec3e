"""The iterative path (seed 001 as printed): sweeps of the joints' rows and the couplings
between joints, then the contacts', until every |Δp| < ε (eq. 17), the iteration limit or the wall-clock cap;
then the split-impulse pass on the pseudo-velocities."""
from ...jit import helper

from ...clock import past_cap, ticks
from ..couplings import sweep_couplings
from .contact_sweeps import contact_sweep
from .settings import (BAUMGARTE, S_CAPPED, S_ITERATIONS, S_RESIDUAL, S_SOLVE_TICKS,
                       S_TOTAL_ITERATIONS)
from .sweeps import sweep_positions, sweep_velocities


# ---------------------------------------------------------------------------- a solve's stats
@helper(cache=True, _nrt=False)
def record_solve(stats, iterations, residual, solve_ticks, capped):
    """Write one solve's iterations, final residual, time (ticks) and cap into stats."""
    stats[S_ITERATIONS] = iterations
    stats[S_RESIDUAL] = residual
    stats[S_SOLVE_TICKS] = solve_ticks
    stats[S_CAPPED] = 1.0 if capped else 0.0
    stats[S_TOTAL_ITERATIONS] += iterations


# ---------------------------------------------------------------------------- velocities
@helper(cache=True)
def solve_velocities(params, h, rows, work, bodies, stats, row_direct, crows, cwork, cdirect, cblock, swept, couplings):
    """Sequential impulses until every joint row's and coupling's |Δp| < ε and no body's
    momentum changes by contact ε over the contacts' sweep, the iteration limit or the time
    cap; each sweep the joints' rows, the couplings (../couplings.py; None: none), then the
    contacts' (crows, cwork, cdirect: contact_views; cblock: prepare_contact_blocks)."""
    vel, omega = bodies.vel, bodies.omega
    max_it = params.iterations
    eps, contact_eps = params.epsilon, params.contact_epsilon
    baumgarte = params.stabilization == BAUMGARTE
    erp_rate = params.erp / h
    cap = params.time_cap_ms / params.substeps * params.ticks_per_ms
    t_start = ticks()
    it = 0
    residual = 0.0
    capped = False
    while it < max_it and not capped:
        joints = sweep_velocities(baumgarte, erp_rate, rows, work, vel, omega, row_direct)
        if couplings is not None:
            joints = max(joints, sweep_couplings(couplings, erp_rate if baumgarte else 0.0, couplings.impulse, vel,
                                                 omega))
        contacts = contact_sweep(baumgarte, erp_rate, contact_eps, crows, cwork, bodies, cdirect, cblock, swept)
        residual = max(joints, contacts)
        it += 1
        if joints < eps and contacts <= contact_eps:
            break
        capped = past_cap(t_start, cap)
    record_solve(stats, it, residual, ticks() - t_start, capped)


# ---------------------------------------------------------------------------- positions (split impulses)
@helper(cache=True)
def solve_positions(params, h, rows, work, pvel, pomega, row_direct, crows, cwork, cdirect, couplings):
    """Split impulses: `position_iterations` sweeps of sweep_positions from V* = 0, the
    joints' rows, the couplings, then the contacts'."""
    row_lambda_pos = work.impulse_pos
    pvel[:, :] = 0.0
    pomega[:, :] = 0.0
    row_lambda_pos[:] = 0.0
    cwork.impulse_pos[:] = 0.0
    if couplings is not None:
        couplings.impulse_pos[:] = 0.0
    for it in range(params.position_iterations):
        sweep_positions(params.erp / h, rows, work, pvel, pomega, row_direct)
        if couplings is not None:
            sweep_couplings(couplings, params.erp / h, couplings.impulse_pos, pvel, pomega)
        if crows.block_start.shape[0] > 0:
            sweep_positions(params.erp / h, crows, cwork, pvel, pomega, cdirect)
