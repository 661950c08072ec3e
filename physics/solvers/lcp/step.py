"""The lcp kernel (lcp_kernel; kernel_for compiles it with or without the hulls' narrow
phase): steps of Δt, each by the stages of the package docstring."""
from ...jit import kernel

from ...contacts import (S_THRESHOLD, contact_views, detection_overflowed, keep_contact_impulses, prepare_contacts,
                         prepare_contacts_primitive)
from ...integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from ...joint_rows import row_velocity, compute_joint_rates, compute_joint_rows, speculative_limits, write_drive_rows
from ..base import compiled_variants
from ..couplings import write_couplings
from ..damping import damp_joints
from ..impacts import propagate_impacts
from ..projection import project_step
from ..row_ops import world_inverse_inertia
from ..tree import articulated_factor, articulated_targets, augmented_inertia, invert_tree_inertia, select_rows
from .impacts import classify_contacts, kinetic_energy, record_impact
from .rows import IMPACT_PHASE, VELOCITY_PHASE, align_friction, collect_loops, collect_rows, count_rows
from .settings import BAUMGARTE, LIMIT_REACH, NO_STABILIZATION, SPLIT
from .solve import position_pass, solve_lcp
from .system import build_loops, build_system, mark_tree, sparse_lcp
from .velocities import apply_free_bodies, apply_impulses, clear_joint_drive_impulses, free_velocity, gather_impulses, \
    phase_rhs, store_impulses
from .work import S_FALLBACKS, S_IMPACTS, S_LOOP_RANK, S_LOOP_ROWS, S_NEED_LOOPS, S_NEED_ROWS, S_VIOLATION


@compiled_variants
def kernel_for(HULLS, COUPLINGS):    # noqa: N803 (compile-time constants)
    @kernel(cache=True)
    def lcp_kernel(n_steps, t0, params, stats, env, bodies, loads, joints, drives, rows, work, tree, contacts, lw,
                   couplings):
        """Advance n_steps steps of params.dt (package docstring). Rows hold the current poses on
        entry and the final ones on return. couplings (model.Couplings, None: compiled without): rows
        tying joints to others, solved as loop rows (../couplings.py writes them). Returns the
        steps done: fewer than n_steps after a blow-up, or when a step needs more room than lw
        has (stats S_NEED_ROWS/LOOPS > 0: the caller grows lw and calls again from there)."""
        body_pos, body_quat, body_vel, body_omega = bodies.pos, bodies.quat, bodies.vel, bodies.omega
        body_inv_mass, body_inv_inertia = bodies.inv_mass, bodies.inv_inertia
        joint_type, joint_body, joint_row_start = joints.type, joints.body, joints.row_start
        row_J, row_C, row_active, row_lambda = rows.J, rows.C, rows.active, rows.impulse
        force_acc, torque_acc, pvel, pomega = work.force_acc, work.torque_acc, work.pvel, work.pomega
        inv_I = work.inv_inertia_world
        order, roots, joint_child, row_direct, body_I = tree.order, tree.roots, tree.joint_child, tree.row_direct, \
            tree.body_I
        gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
        c_vn, c_imp, c_S, impacts = lw.c_vn, lw.c_imp, lw.c_S, lw.impacts
        h = params.dt
        stab = params.stabilization
        erp = params.erp
        rate_v = erp / h if stab == BAUMGARTE else 0.0
        rate_p = erp / h if stab == SPLIT else 0.0
        use_k = params.geometric
        targets = stab != NO_STABILIZATION
        may_iterate = params.may_iterate
        impact_lcp = params.impact
        n_project = params.projection
        proj = lw.proj
        proj.fresh[0] = 0                       # the poses may have been edited since the last call
        threshold = contacts.shapes.settings[S_THRESHOLD]
        has_tree = order.shape[0] + roots.shape[0] > 0
        for q in range(S_VIOLATION):            # the last projection's numbers are kept
            if q != S_FALLBACKS:
                stats[q] = 0.0
        stats[S_FALLBACKS] = 0.0
        n_impacts = 0
        select_rows(tree, joint_type, joint_row_start, row_active, False, row_direct)
        mark_tree(tree, lw.in_tree)
        write_drive_rows(joints, drives, rows, h)
        for step in range(n_steps):
            t = t0 + step * h
            if may_iterate and step > 0:
                write_drive_rows(joints, drives, rows, h)
            if may_iterate:
                speculative_limits(bodies, joints, rows, h, LIMIT_REACH)   # limits reached within the step
            n_blocks = (prepare_contacts(contacts, bodies, h) if HULLS
                        else prepare_contacts_primitive(contacts, bodies, h))
            if detection_overflowed(contacts):
                return step                     # nothing moved yet: redone with grown buffers
            crows, cwork, cdirect = contact_views(contacts, work, n_blocks)
            n_need = count_rows(joints, rows, crows, body_inv_mass)
            pgs_likely = sparse_lcp(params, n_need, 0, lw)
            if n_need > lw.u_row.shape[0]:
                stats[S_NEED_ROWS] = n_need
                return step
            # inertia (with the geometric stiffness of last step's joint impulses, as the
            # impulse solver's direct path) and the tree factor (pass 1 and 2)
            augmented_inertia(h, use_k, tree, joints, rows, bodies)
            world_inverse_inertia(body_quat, body_inv_inertia, inv_I)
            invert_tree_inertia(order, roots, joint_child, body_I, inv_I)
            if has_tree:
                if proj.fresh[0] == 1 and not use_k:
                    # the last step's velocity projection factored these rows at these poses
                    # with the same inertia (the tree is the projection's): this step's factor
                    if targets:
                        articulated_targets(tree, row_J, row_C)
                else:
                    articulated_factor(tree, joint_type, joint_body, row_J, row_C, body_pos, body_inv_mass, body_I,
                                       targets, False)
            proj.fresh[0] = 0
            if COUPLINGS:                       # the couplings' rows at the step's poses
                write_couplings(couplings, joints, rows)
            nl = collect_loops(joints, rows, tree, body_inv_mass, lw, couplings)
            if nl > lw.l_row.shape[0]:
                stats[S_NEED_LOOPS] = nl
                return step
            rank = build_loops(nl, tree, joint_body, body_inv_mass, inv_I, lw) if nl > 0 else 0
            stats[S_LOOP_ROWS] = nl
            stats[S_LOOP_RANK] = rank
            if n_blocks > 1:                    # impacts through touching bodies, pair by pair (../impacts.py)
                propagate_impacts(contacts, crows, bodies, h, 0.5)
            n_imp = classify_contacts(threshold, h, contacts, crows, body_vel, body_omega, c_vn, c_imp, lw.c_gap)
            for r in range(crows.J.shape[0]):
                c_S[r] = 0.0
            # impacts (seed 004 eq. 8-14): impact LCP from the step's start velocities
            if impact_lcp and n_imp > 0:
                ke0 = kinetic_energy(bodies)
                free_velocity(0.0, bodies, joint_body, tree, body_I, lw)
                align_friction(crows, bodies, lw.fv, lw.fw, pgs_likely)
                nu = collect_rows(IMPACT_PHASE, 0.0, bodies, joints, rows, crows, lw)
                sparse = sparse_lcp(params, nu, nl, lw)
                build_system(nu, nl, rank, sparse, tree, joint_body, body_inv_mass, inv_I, lw)
                phase_rhs(nu, nl, rank, 0.0, lw)
                solve_lcp(params, stats, nu, sparse, lw)
                gather_impulses(nu, nl, lw.x, lw)
                apply_impulses(0.0, False, 0.0, bodies, joint_body, tree, body_I, row_J, row_lambda, pvel, pomega, lw)
                apply_free_bodies(bodies, inv_I, body_vel, body_omega, lw)
                ke1 = kinetic_energy(bodies)
                for u in range(nu):
                    if lw.u_tab[u] == 1 and lw.u_mu[u] == 0.0:
                        r = lw.u_row[u]
                        c_S[r] = lw.x[u]
                        if c_imp[r] == 1:
                            n_impacts = record_impact(impacts, n_impacts, t, r, crows, c_vn, body_vel, body_omega,
                                                      ke0, ke1, lw.x[u])
                            # from here it keeps the separation speed the impact gave (ġ ≥ ġ⁺, or
                            # ġ ≥ −gap/h if slower): the step's forces do not take it back
                            crows.bias[r] = min(-row_velocity(crows.J, r, crows.body[r, 0], crows.body[r, 1], body_vel,
                                                              body_omega), lw.c_gap[r] / h)
            # forces, then the contact LCP of the step
            gather_forces(t, bodies, loads, force_acc, torque_acc)
            integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
            if params.damped:                   # the joints' viscous damping (../damping.py)
                damp_joints(bodies, joints, drives, rows, h, proj.row_work[1], proj.grounded, proj.energy, False)
            nu = 0
            sparse = False
            if n_need > 0 or nl > 0:            # else the tree solve below is the whole step
                free_velocity(rate_v, bodies, joint_body, tree, body_I, lw)
                align_friction(crows, bodies, lw.fv, lw.fw, pgs_likely)
                nu = collect_rows(VELOCITY_PHASE, rate_v, bodies, joints, rows, crows, lw)
                sparse = sparse_lcp(params, nu, nl, lw)
                build_system(nu, nl, rank, sparse, tree, joint_body, body_inv_mass, inv_I, lw)
                phase_rhs(nu, nl, rank, rate_v, lw)
            solve_lcp(params, stats, nu, sparse, lw)
            clear_joint_drive_impulses(joints, rows)
            gather_impulses(nu, nl, lw.x, lw)
            store_impulses(nu, nl, lw.x, c_S, rows, crows, lw, couplings)
            pvel[:, :] = 0.0
            pomega[:, :] = 0.0
            apply_impulses(rate_v, rate_p != 0.0 and has_tree, rate_p, bodies, joint_body, tree, body_I, row_J,
                           row_lambda, pvel, pomega, lw)
            apply_free_bodies(bodies, inv_I, body_vel, body_omega, lw)
            if not impact_lcp:
                for u in range(nu):
                    if lw.u_tab[u] == 1 and lw.u_mu[u] == 0.0 and c_imp[lw.u_row[u]] == 1:
                        n_impacts = record_impact(impacts, n_impacts, t, lw.u_row[u], crows, c_vn, body_vel, body_omega,
                                                  0.0, 0.0, lw.x[u])
            # drift: split impulses, positions moved with V + V^p
            if rate_p != 0.0:
                position_pass(params, nu, nl, rank, rate_p, sparse, bodies, joint_body, tree, inv_I, pvel, pomega, lw)
                body_vel += pvel
                body_omega += pomega
            integrate_positions(bodies, h)
            if rate_p != 0.0:
                body_vel -= pvel
                body_omega -= pomega
            last = step == n_steps - 1
            compute_joint_rows(bodies, joints, rows, last and n_project == 0)
            if n_project > 0:                   # seed 004 eqs. 15-18
                project_step(n_project, bodies, joints, rows, proj, stats[S_VIOLATION:S_VIOLATION + 4], last)
                proj.fresh[0] = 1               # its velocity step's factor is at the final poses
            keep_contact_impulses(contacts, n_blocks)
            stats[S_IMPACTS] = n_impacts
            if blown_up(bodies, max_speed, max_spin):
                return step
        compute_joint_rates(bodies, joints, rows)
        return n_steps

    return lcp_kernel
