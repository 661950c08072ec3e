"""The impulse family's step (impulse_kernel), per substep h = Δt/substeps, by stage:

1. drive rows: bounds, motor targets and friction radii (joint_rows.write_drive_rows;
   with no limit or free row in use, once per call)
2. contacts at the substep's start (broad and narrow phase, contact rows: contacts.py);
   impacts through groups of touching bodies resolved pair by pair (../impacts.py)
3. forces: the loads gathered, velocities integrated (external impulses, eq. 10); the
   joints' viscous damping (../damping.py); speculative limits (the limits the joint may
   reach)
4. the solve: the couplings between joints at the substep's poses (../couplings.py), then
   the direct path (direct.py) or the iterative one (rows.py prepare_rows and warm_start,
   iterative.py's sweeps until ε), then split impulses
5. positions with V + V* (eq. 11), the rows at the new poses (the SHAKE correction with
   stabilization "shake"); the contacts' impulses kept for the next warm start

then, after a step's substeps: seed 004's position projection, the energy projection
(keep_energy), the blow-up check.
"""
from collections import namedtuple

import numpy as np
from ...jit import kernel

from ...contacts import (N_BLOCKS, N_PREV, N_ROWS, contact_views, detection_overflowed, keep_contact_impulses,
                         prepare_contacts, prepare_contacts_primitive)
from ...integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from ...joint_rows import compute_joint_rates, compute_joint_rows, speculative_limits, write_drive_rows
from .. import projection
from ..base import compiled_variants
from ..couplings import prepare_couplings, warm_start_couplings, write_couplings
from ..damping import add_damper_work, damp_joints
from ..impacts import propagate_impacts
from ..row_ops import world_inverse_inertia
from ..tree import select_rows
from .contact_sweeps import prepare_contact_blocks
from .direct import direct_positions, direct_velocities
from .iterative import solve_positions, solve_velocities
from .rows import prepare_rows, warm_start
from .settings import (LIMIT_REACH, S_CAPPED, S_CAPPED_STEPS, S_SOLVE_TICKS, S_TOTAL_ITERATIONS, S_VIOLATION,
                       SHAKE as SHAKE_CODE, SHAKE_ITERATIONS, SHAKE_TOLERANCE, SPLIT)


Features = namedtuple("Features", "direct project shake energy hulls couplings")
"""Which paths a kernel is compiled with (ImpulseSolver.features): the direct solve (the
iterations always), seed 004's position projection, the SHAKE correction, the energy
projection, the hulls' narrow phase (else contacts.narrow_contacts_primitive) and the
couplings between joints (the kernel then takes a Couplings bundle, else None). Contact
detection is always compiled (params.collides says whether it runs)."""

@compiled_variants
def kernel_for(DIRECT, PROJECT, SHAKE, ENERGY, HULLS, COUPLINGS):    # noqa: N803 (compile-time constants)
    @kernel(cache=True)
    def impulse_kernel(n_steps, t0, params, stats, env, bodies, loads, joints, drives, rows, work, tree, contacts, proj,
                       couplings):
        """Advance n_steps steps of params.dt from time t0, each in `substeps` substeps. Rows must hold the current
        poses on entry and hold the final ones on return. params (settings.Params): with
        params.direct the equality rows of the tree (order, …: tree.TreePlan) are solved
        directly; params.may_iterate: some joint has a limit or a free row in use. With
        params.collides, contacts (physics/contacts.py ContactData) are found at the start of
        each substep and their rows swept after the joints'. proj (projection.Projection):
        the SHAKE correction's factor (stabilization "shake"), the energy projection's
        groups and budget. couplings
        (model.Couplings, None: compiled without): rows tying joints to others (../couplings.py).
        Returns the steps done before a blow-up (n_steps when none)."""
        body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
        body_inv_inertia = bodies.inv_inertia
        joint_type = joints.type
        joint_row_start = joints.row_start
        row_active = rows.active
        force_acc, torque_acc, body_pvel, body_pomega = work.force_acc, work.torque_acc, work.pvel, work.pomega
        body_inv_inertia_world = work.inv_inertia_world
        row_direct = tree.row_direct
        gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
        substeps = params.substeps
        dt = params.dt
        h = dt / substeps
        warm = params.warm_start
        split = params.stabilization == SPLIT or (SHAKE and params.stabilization == SHAKE_CODE)
        may_iterate = params.may_iterate
        n_project = params.projection if PROJECT else 0
        direct = DIRECT and params.direct
        collides = params.collides
        # the energy projection: only with joints whose work it counts (ideal ones, and friction:
        # its impulses' work, add_friction_work; not a limit's impact or a motor, ImpulseSolver
        # says) and the loads' work known (not with ropes or the mouse spring)
        keep_energy = ENERGY and params.keep_energy
        grounded, energy = proj.grounded, proj.energy
        rate0, damp = proj.row_work[0], proj.row_work[1]     # friction's speeds, the dampers' impulses
        stats[S_CAPPED_STEPS] = 0.0
        stats[S_TOTAL_ITERATIONS] = 0.0
        proj.fresh[0] = 0                   # the poses may have been edited since the last call
        solve_ticks = 0.0
        if direct and not may_iterate:
            tree.joint_motor[:] = -1        # no servo in use (choose_direct_rows takes them)
            tree.motors[0] = 0
            select_rows(tree, joint_type, joint_row_start, row_active, False, row_direct)
        # bounds and drives of the limit and free rows; with no limit, friction or motor
        # anywhere once (it switches every free row off), else every substep
        write_drive_rows(joints, drives, rows, h)
        crows0, cwork0, cdirect0 = contact_views(contacts, work, np.int64(0))   # not a literal: one compile
        for step in range(n_steps):
            solve_ticks = 0.0
            cut = False                         # the time cap cut one of the step's solves
            if ENERGY and keep_energy:          # E_n per grounded group; the loads' work from 0
                if step == 0:
                    projection.group_energies(bodies, gravity, h, grounded, energy, 0)
                    projection.open_energy_budget(energy)
                else:                           # as the last step's energy projection left it
                    energy[:, 0] = energy[:, projection.E_AFTER]
                energy[:, 1] = 0.0
                energy[:, 5] = 1.0              # no contact on the group yet
            for sub in range(substeps):
                t = t0 + step * dt + sub * h
                if may_iterate and (step > 0 or sub > 0):
                    write_drive_rows(joints, drives, rows, h)
                # contacts at the poses of the substep's start, ġ⁻ from its velocities
                n_contacts = 0                  # blocks: touching pairs
                if collides:
                    n_contacts = (prepare_contacts(contacts, bodies, h) if HULLS
                                  else prepare_contacts_primitive(contacts, bodies, h))
                    if detection_overflowed(contacts) and sub == 0:
                        return step             # nothing moved yet: redone with grown buffers
                else:                           # (prepare_contacts writes the counts itself)
                    contacts.buffers.n[N_ROWS] = 0
                    contacts.buffers.n[N_BLOCKS] = 0
                if n_contacts > 0:
                    crows, cwork, cdirect = contact_views(contacts, work, n_contacts)
                    if n_contacts > 1:          # impacts through touching bodies, pair by pair (../impacts.py)
                        propagate_impacts(contacts, crows, bodies, h, 0.0)
                else:                           # the empty views, made once per call
                    crows, cwork, cdirect = crows0, cwork0, cdirect0
                gather_forces(t, bodies, loads, force_acc, torque_acc)
                if ENERGY and keep_energy:      # the loads', friction's, dampers' work: the trapezoid over the substep
                    projection.mark_touching(grounded, energy, crows)
                    projection.add_load_work(bodies, force_acc, torque_acc, grounded, energy, 1, 0.5 * h)
                    if may_iterate:
                        projection.friction_rates(bodies, joints, drives, rows, rate0)
                integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
                if params.damped:               # the joints' viscous damping and its work (../damping.py)
                    damp_joints(bodies, joints, drives, rows, h, damp, grounded, energy, ENERGY and keep_energy)
                if may_iterate:
                    speculative_limits(bodies, joints, rows, h, LIMIT_REACH)   # limits the joint may reach
                if COUPLINGS:
                    write_couplings(couplings, joints, rows)
                if direct:
                    n_iter = direct_velocities(params, h, stats, may_iterate, bodies, joints, rows, work, tree, crows, cwork,
                                               cdirect, contacts.work.block, contacts.work.swept, couplings)
                    solve_ticks += stats[S_SOLVE_TICKS]
                    cut = cut or stats[S_CAPPED] != 0.0
                    if split and (n_iter > 0 or params.position_iterations == 0):
                        direct_positions(params, h, joints, rows, work, tree, crows, cwork, cdirect, couplings)
                else:
                    world_inverse_inertia(body_quat, body_inv_inertia, body_inv_inertia_world)
                    prepare_rows(rows, bodies, work, row_direct)
                    warm_start(warm, rows, work, body_vel, body_omega, row_direct, True)
                    if COUPLINGS:
                        prepare_couplings(couplings, bodies.inv_mass, body_inv_inertia_world)
                        warm_start_couplings(warm, couplings, body_vel, body_omega, True)
                    cblock = contacts.work.block[:0]
                    if n_contacts > 0:
                        prepare_rows(crows, bodies, cwork, cdirect)
                        cblock = contacts.work.block[:prepare_contact_blocks(crows, cwork, contacts.work.block)]
                        warm_start(warm, crows, cwork, body_vel, body_omega, cdirect, True)
                    solve_velocities(params, h, rows, work, bodies, stats, row_direct, crows, cwork, cdirect, cblock,
                                     contacts.work.swept, couplings)
                    solve_ticks += stats[S_SOLVE_TICKS]
                    cut = cut or stats[S_CAPPED] != 0.0
                    if split:
                        solve_positions(params, h, rows, work, body_pvel, body_pomega, row_direct, crows, cwork, cdirect,
                                        couplings)
                if ENERGY and keep_energy and may_iterate:
                    projection.add_friction_work(joints, rows, grounded, energy, 1, rate0)
                if SHAKE and params.stabilization == SHAKE_CODE:
                    projection.shake_prepare(proj, bodies, joints, rows)     # the rows at q_n
                if split:
                    body_vel += body_pvel
                    body_omega += body_pomega
                integrate_positions(bodies, h)
                if split:
                    body_vel -= body_pvel
                    body_omega -= body_pomega
                readout = step == n_steps - 1 and sub == substeps - 1 and n_project == 0
                shake = SHAKE and params.stabilization == SHAKE_CODE
                compute_joint_rows(bodies, joints, rows, readout and not shake)
                if SHAKE and shake:
                    projection.shake_correction(h, SHAKE_TOLERANCE, SHAKE_ITERATIONS, bodies, joints, rows, proj, readout)
                if n_contacts > 0:
                    keep_contact_impulses(contacts, n_contacts)
                else:                           # nothing touched: no warm start (and no call for it)
                    contacts.buffers.n[N_PREV] = 0
                if ENERGY and keep_energy:
                    energy[:, 2] = 0.0
                    projection.add_load_work(bodies, force_acc, torque_acc, grounded, energy, 2, 0.5 * h)
                    if may_iterate:
                        projection.friction_rates(bodies, joints, drives, rows, rate0)
                        projection.add_friction_work(joints, rows, grounded, energy, 2, rate0)
                    if params.damped:
                        add_damper_work(bodies, joints, drives, rows, damp, grounded, energy, 2)
                    if sub < substeps - 1:
                        energy[:, 1] += energy[:, 2]
            if PROJECT and n_project > 0:       # post-stabilization: seed 004 eqs. 15-16
                projection.project_positions_step(h, n_project, params.projection_above, bodies, joints, rows, proj,
                                                  stats[S_VIOLATION:S_VIOLATION + 4])
                proj.fresh[0] = 0
            if ENERGY and keep_energy:          # to E_n + the loads', friction's, dampers' work (Dinev, Liu & Kavan 2018)
                projection.energy_projection(bodies, gravity, h, grounded, energy)
            stats[S_SOLVE_TICKS] = solve_ticks
            if blown_up(bodies, max_speed, max_spin):
                return step
            if cut:
                stats[S_CAPPED_STEPS] += 1.0
            if collides and detection_overflowed(contacts):
                compute_joint_rates(bodies, joints, rows)
                return step + 1                 # a later substep overflowed: grow before the next step
        if PROJECT and n_project > 0 and n_steps > 0:
            projection.projection_readout(bodies, joints, rows, stats[S_VIOLATION:S_VIOLATION + 4])
        compute_joint_rates(bodies, joints, rows)
        return n_steps

    return impulse_kernel
