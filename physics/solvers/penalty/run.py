"""The penalty family's step (penalty_run; kernel_for compiles it with or without the
hulls' narrow phase), by stage:

1. forces — the bodies' forces and scripted loads (integrate.gather_forces); contacts
   found and their rows written (contacts.prepare_contacts, or prepare_contacts_primitive
   without the hulls' narrow phase)
2. the stiff preset (the default): backward Euler on the penalty forces, one linear
   system in the bodies' velocities (assemble.py) with the drives' and contacts' bounded
   rows as active sets (drives.py, contact_springs.py), solved exactly (block_ldl.py);
   then positions and rows. Fast rotation (a whip's tip: ωΔt ≈ 1) and limits reached
   within the step: when the poses the step reached miss the linearized rows by more
   than NEWTON_TOL, the same backward Euler step is solved again from its start,
   linearized at those poses (a Newton iteration, at most Params.newton).
   The paper and critical presets: explicit forces (explicit.py), then velocities —
   through the same system with only the drives' and dampers' rows when a joint has
   them, else semi-implicit Euler — positions and rows
3. seed 004's projection (projection.project_step) when post_projection is on
4. blow-up check
"""
import numpy as np
from ...jit import kernel, helper

from ...contacts import (detection_overflowed, keep_contact_impulses, penalty_contact_forces, prepare_contacts,
                         prepare_contacts_primitive)
from ...integrate import blown_up, gather_forces, gyroscopic_implicit, integrate_positions, integrate_velocities
from ...joint_rows import ROW_FREE, ROW_LIMIT, compute_joint_rates, compute_joint_rows
from ...joint_types import N_EQ
from ..base import compiled_variants
from ..projection import project_step
from ..row_ops import copy2d, fill2d
from .assemble import body_blocks, limit_raw, stiff_rows, store_impulses
from .block_ldl import factor_solve
from ..couplings import write_couplings
from .contact_graph import contact_pair_keys, contact_plan, same_keys
from .contact_springs import (CONTACT_PASSES, FRICTION_PASSES, REFINED, SWITCHED, UNCHANGED, add_contacts,
                              check_contacts, contact_springs, new_springs, relax_contacts, store_contact_impulses)
from .couplings import coupling_nonlinearity, coupling_springs, store_coupling_impulses
from .drives import PASSES, add_dampers, add_drives, any_drive, check_drives, servo_masses, setup_drives
from .explicit import CONTACT_KAPPA, penalty_forces
from .settings import STIFF

NEWTON_TOL = 1e-3       # m or rad: a linearization that missed the reached poses by more is iterated

@helper(cache=True, error_model="numpy", _nrt=False)
def open_system(params, h, relin, gravity, bodies, joints, drives, rows, work, plan, drives_on, couplings):
    """The step's implicit system in plan.diag0, offd0, rhs0: the bodies' blocks
    (body_blocks), the stiff preset's rows (stiff_rows), the couplings between joints
    (couplings.py; None: none), the drives set up (setup_drives, servo_masses: a servo
    sees what its joint's couplings carry) and the joints' dampers (add_dampers); returns
    the number of drives in use."""
    stiff = params.preset == STIFF
    body_blocks(h, stiff, gravity, bodies, joints, rows, work.force_acc, work.torque_acc, plan)
    if stiff:
        stiff_rows(params, h, relin, bodies, joints, rows, plan)
    if couplings is not None:
        coupling_springs(params, h, relin, bodies, couplings, plan)
    n_drives = setup_drives(h, bodies, joints, drives, rows, plan) if drives_on else 0
    if stiff and n_drives > 0:
        servo_masses(h, joints, drives, rows, plan)
    if params.damped:                       # after the servos' masses: they see the arm alone
        add_dampers(h, joints, drives, rows, plan)
    return n_drives


@helper(cache=True, error_model="numpy", _nrt=False)
def write_velocities(bodies, plan, x):
    """The solved velocities x (one row per node) into the bodies."""
    body_vel, body_omega, node_body = bodies.vel, bodies.omega, plan.node_body
    for k in range(node_body.shape[0]):
        i = node_body[k]
        body_vel[i, 0], body_vel[i, 1], body_vel[i, 2] = x[k, 0], x[k, 1], x[k, 2]
        body_omega[i, 0], body_omega[i, 1], body_omega[i, 2] = x[k, 3], x[k, 4], x[k, 5]


@helper(cache=True, error_model="numpy", _nrt=False)
def close_system(h, stiff, gyroscopic, bodies, joints, rows, plan, couplings):
    """After the last solve: the rows' and couplings' impulses (store_impulses,
    store_coupling_impulses), then the implicit gyroscopic update of the spins."""
    body_quat, body_inertia, body_omega, node_body = bodies.quat, bodies.inertia, bodies.omega, plan.node_body
    store_impulses(h, stiff, bodies, joints, rows, plan)
    if couplings is not None:
        store_coupling_impulses(h, couplings, bodies)
    if gyroscopic:
        for k in range(node_body.shape[0]):
            i = node_body[k]
            wx, wy, wz = gyroscopic_implicit(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                             body_inertia[i, 0], body_inertia[i, 1], body_inertia[i, 2],
                                             body_omega[i, 0], body_omega[i, 1], body_omega[i, 2], h)
            body_omega[i, 0], body_omega[i, 1], body_omega[i, 2] = wx, wy, wz


@helper(cache=True, error_model="numpy", _nrt=False)
def restart_system(plan):
    """One solve's matrix and right side (diag, offd, rhs) from the step's (diag0, offd0,
    rhs0), for the bounded rows of an active-set pass to be added to."""
    copy2d(plan.diag, plan.diag0)
    copy2d(plan.offd, plan.offd0)
    copy2d(plan.rhs, plan.rhs0)


@helper(cache=True, error_model="numpy", _nrt=False)
def joint_velocities(params, h, relin, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, drives_on,
                     couplings):
    """V⁺ from the implicit system of the module docstring with no contact spring (nothing
    touching, or a preset whose contacts push explicitly): the stiff preset's equality and
    limit rows and every drive (friction, motors) as rows of one system, solved exactly;
    the drives' bounds by an active set of at most PASSES solves. `relin`: the rows were
    written at X + Δt V_k, not at X (a Newton iteration of stiff_step). `drives_on`: some
    joint has friction or a motor (any_drive; without, penalty_run has cleared the drives
    once for the whole run). Allocates nothing: compiled without reference counting, as
    everything penalty_run calls per step on a mechanism that touches nothing (passing
    the bundles through a counted call costs each of their arrays two atomic updates)."""
    up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target = (plan.up_ptr, plan.up_node, plan.pair_ptr,
                                                                 plan.pair_lo, plan.pair_hi, plan.pair_target)
    diag0, offd0, rhs0, diag, offd, rhs = plan.diag0, plan.offd0, plan.rhs0, plan.diag, plan.offd, plan.rhs
    n_drives = open_system(params, h, relin, gravity, bodies, joints, drives, rows, work, plan, drives_on, couplings)
    if n_drives == 0:                               # one solve: factor the step's matrix in place
        factor_solve(diag0, offd0, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, rhs0)
        write_velocities(bodies, plan, rhs0)
    else:
        for it in range(PASSES):
            restart_system(plan)
            add_drives(h, joints, rows, plan)
            factor_solve(diag, offd, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, rhs)
            write_velocities(bodies, plan, rhs)
            if it == PASSES - 1 or not check_drives(h, bodies, joints, rows, plan):
                break
    close_system(h, params.preset == STIFF, gyroscopic, bodies, joints, rows, plan, couplings)


@helper(cache=True, error_model="numpy")
def implicit_velocities(params, h, relin, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, contacts,
                        springs, drives_on, couplings):
    """joint_velocities with the stiff preset's contact rows (contact_springs.py: normal
    springs and the patches' friction, `springs` sized for this step's contacts, `plan` laid
    out with the contacts between dynamic bodies: contact_graph) in the same system; the
    drives' bounds, the springs' dead zone and the friction's Coulomb balls by an active
    set of at most CONTACT_PASSES solves, of which at most FRICTION_PASSES only refine
    sliding patches' dampers (the refinement goes on from the next step's start). Contact
    rows stay linearized at X in a Newton iteration."""
    up_ptr, up_node = plan.up_ptr, plan.up_node
    pair_ptr, pair_lo, pair_hi, pair_target = plan.pair_ptr, plan.pair_lo, plan.pair_hi, plan.pair_target
    diag, offd, rhs = plan.diag, plan.offd, plan.rhs
    n_drives = open_system(params, h, relin, gravity, bodies, joints, drives, rows, work, plan, drives_on, couplings)
    contact_springs(h, np.sqrt(gravity[0] ** 2 + gravity[1] ** 2 + gravity[2] ** 2), bodies, contacts, plan, springs)
    refined = 0
    for it in range(CONTACT_PASSES):
        restart_system(plan)
        if n_drives > 0:
            add_drives(h, joints, rows, plan)
        add_contacts(contacts, plan, springs)
        factor_solve(diag, offd, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, rhs)
        write_velocities(bodies, plan, rhs)
        if it == CONTACT_PASSES - 1:
            break
        changed = check_contacts(h, bodies, contacts, springs)
        if n_drives > 0 and check_drives(h, bodies, joints, rows, plan):
            changed = SWITCHED
        if changed == REFINED:
            refined += 1
        if changed == UNCHANGED or (changed == REFINED and refined > FRICTION_PASSES):
            break
    store_contact_impulses(bodies, contacts, springs)
    close_system(h, params.preset == STIFF, gyroscopic, bodies, joints, rows, plan, couplings)


@helper(cache=True, error_model="numpy", _nrt=False)
def nonlinearity(joints, rows, plan):
    """Largest |G(X⁺) − (G_k + Δt J_k (V⁺ − V_k))| over the stiff rows (m or rad): how far
    the rows' linearization missed the poses the step reached; a limit row that was not
    in the linearization and binds at X⁺ counts with its whole |G(X⁺)|."""
    row_C, row_kind, row_active, row_joint = rows.C, rows.kind, rows.active, rows.joint
    joint_type, joint_row_start, joint_q = joints.type, joints.row_start, joints.q
    joint_limit_lo, joint_limit_hi = joints.limit_lo, joints.limit_hi
    row_w, c_lin, engaged = plan.row_w, plan.c_lin, plan.engaged
    worst = 0.0
    for r in range(row_C.shape[0]):
        if row_kind[r] == ROW_FREE:
            continue
        if row_w[r] != 0.0:
            C = row_C[r]
            if row_kind[r] == ROW_LIMIT:
                j = row_joint[r]
                C = limit_raw(joint_q, joint_limit_lo, joint_limit_hi, j, r - joint_row_start[j] - N_EQ[joint_type[j]],
                              engaged[r])
            worst = max(worst, abs(C - c_lin[r]))
        elif row_active[r] != 0:            # a limit reached within the step
            worst = max(worst, abs(row_C[r]))
    return worst


@helper(cache=True, error_model="numpy", _nrt=False)
def begin_newton(bodies, plan, keep_start):
    """A stiff step's start: the poses and velocities kept (pos0 … omega0) for a Newton
    iteration or a second solve to start from (`keep_start`). (vel_k, omega_k are zero
    between steps: end_newton; the first linearization starts the limits' `engaged`:
    stiff_rows.)"""
    if keep_start:
        copy2d(plan.pos0, bodies.pos)
        copy2d(plan.quat0, bodies.quat)
        copy2d(plan.vel0, bodies.vel)
        copy2d(plan.omega0, bodies.omega)


@helper(cache=True, error_model="numpy", _nrt=False)
def end_newton(h, it, newton, bodies, joints, rows, plan, readout, couplings):
    """A stiff step's positions from the velocities solved in Newton iteration `it` (of at
    most `newton` more than the first), and the rows at them; returns True when the step is
    done (the last iteration, or the rows' linearization missed the reached poses by at
    most NEWTON_TOL: nonlinearity), then vel_k, omega_k are zero again (X_k = X: what the
    drives' servos and the next step's first linearization take). Otherwise sets up the
    next iteration, linearized at the poses reached: X_k = X + Δt V_k, from the step's start."""
    integrate_positions(bodies, h)
    compute_joint_rows(bodies, joints, rows, readout)
    missed = 0.0
    if couplings is not None:
        write_couplings(couplings, joints, rows)
        missed = coupling_nonlinearity(couplings)
    if it == newton or max(missed, nonlinearity(joints, rows, plan)) <= NEWTON_TOL:
        if it > 0:
            fill2d(plan.vel_k, 0.0)
            fill2d(plan.omega_k, 0.0)
        return True
    copy2d(plan.vel_k, bodies.vel)
    copy2d(plan.omega_k, bodies.omega)
    copy2d(bodies.pos, plan.pos0)
    copy2d(bodies.quat, plan.quat0)
    copy2d(bodies.vel, plan.vel0)
    copy2d(bodies.omega, plan.omega0)
    return False


@helper(cache=True, error_model="numpy", _nrt=False)
def stiff_joint_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, readout, drives_on,
                     couplings):
    """One step of the stiff preset with nothing touching: the implicit velocities
    linearized at the current poses (joint_velocities), then positions; while the rows'
    linearization missed the reached poses by more than NEWTON_TOL, another Newton
    iteration of the same backward Euler step, linearized at the poses reached (at most
    params.newton more). Without reference counting (joint_velocities)."""
    newton = params.newton
    begin_newton(bodies, plan, newton > 0)
    for it in range(newton + 1):
        joint_velocities(params, h, it > 0, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, drives_on,
                         couplings)
        if end_newton(h, it, newton, bodies, joints, rows, plan, readout, couplings):
            break


@helper(cache=True, error_model="numpy")
def stiff_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, readout, contacts, drives_on,
               couplings):
    """stiff_joint_step with this step's contacts as rows of the implicit system
    (implicit_velocities; `plan` laid out with the contacts between dynamic bodies), then,
    at the poses reached, no separating rate left where a contact still penetrates
    (contact_springs.relax_contacts)."""
    springs = new_springs(contacts)
    newton = params.newton
    begin_newton(bodies, plan, newton > 0)
    for it in range(newton + 1):
        implicit_velocities(params, h, it > 0, gravity, gyroscopic, bodies, joints, drives, rows, work, plan, contacts,
                            springs, drives_on, couplings)
        if end_newton(h, it, newton, bodies, joints, rows, plan, readout, couplings):
            break
    relax_contacts(h, bodies, contacts, plan, springs)


@compiled_variants
def kernel_for(HULLS, COUPLINGS):    # noqa: N803 (compile-time constants)
    @kernel(cache=True, error_model="numpy")
    def penalty_run(n_steps, t0, params, env, bodies, loads, joints, drives, rows, work, plan, contacts, proj, violation,
                    couplings):
        """Advance n_steps fixed steps. Rows must hold the current poses on entry; they hold
        the final poses on return. With params.projection > 0, seed 004's projection ends
        each step (projection.project_step with that many Newton iterations; proj its
        Projection, violation (4,) its last Violation numbers). couplings (model.Couplings,
        None for none): rows tying joints to others, springs of the implicit system in every
        preset (couplings.py). Contacts (physics/contacts.py) push as one-sided springs:
        implicit under the stiff preset (module docstring, "Contacts"), explicit under the
        others (contacts.penalty_contact_forces, κ = CONTACT_KAPPA, ζ = 1). Returns the number
        of steps done before a blow-up (n_steps when none)."""
        h = params.dt
        force_acc, torque_acc = work.force_acc, work.torque_acc
        gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
        stiff = params.preset == STIFF
        drives_on = any_drive(joints)
        coupled = COUPLINGS and couplings.joint.shape[0] > 0
        implicit = stiff or drives_on or coupled
        n_project = params.projection
        cplan, contact_keys, joint_body = plan, np.empty(0, np.int64), joints.body
        if not drives_on:                       # no friction or motor for the whole run: clear the drives once
            setup_drives(h, bodies, joints, drives, rows, plan)
        for step in range(n_steps):
            if coupled:                         # the couplings' rows at the step's poses (../couplings.py)
                write_couplings(couplings, joints, rows)
            gather_forces(t0 + step * h, bodies, loads, force_acc, torque_acc)
            n_contacts = (prepare_contacts(contacts, bodies, h) if HULLS
                          else prepare_contacts_primitive(contacts, bodies, h))
            if detection_overflowed(contacts):
                return step                     # nothing moved yet: redone with grown buffers
            if n_contacts > 0 and not stiff:
                penalty_contact_forces(contacts, bodies, h, CONTACT_KAPPA, 1.0, force_acc, torque_acc, gravity)
            if stiff and n_contacts > 0:
                keys = contact_pair_keys(contacts, plan.body_node)
                if not same_keys(keys, contact_keys):       # the touching pairs changed: lay the system out again
                    contact_keys = keys
                    cplan = contact_plan(plan, joint_body, keys, couplings) if keys.shape[0] > 0 else plan
                stiff_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, cplan, step == n_steps - 1,
                           contacts, drives_on, couplings)
                keep_contact_impulses(contacts, n_contacts)
            elif stiff:
                stiff_joint_step(params, h, gravity, gyroscopic, bodies, joints, drives, rows, work, plan,
                                 step == n_steps - 1, drives_on, couplings)
            else:
                penalty_forces(params, h, bodies, rows, work)
                if implicit:
                    # relin = stiff, False here: a typed bool, not the literal False (numba would
                    # compile joint_velocities a second time for the literal)
                    joint_velocities(params, h, stiff, gravity, gyroscopic, bodies, joints, drives, rows, work, plan,
                                     drives_on, couplings)
                else:
                    integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
                integrate_positions(bodies, h)
                compute_joint_rows(bodies, joints, rows, step == n_steps - 1)
            if n_project > 0:                   # post-stabilization: seed 004 eqs. 15-18
                project_step(n_project, bodies, joints, rows, proj, violation, step == n_steps - 1)
            if blown_up(bodies, max_speed, max_spin):
                return step
        compute_joint_rates(bodies, joints, rows)
        return n_steps

    return penalty_run
