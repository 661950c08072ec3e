"""ImpulseSolver: the impulse family's settings, its caches of the joint graph, the
kernel call and its stats."""
import numpy as np

from ...clock import ticks_per_ms
from ...joint_rows import MOTOR_OFF
from ...settings import checked, defaults
from .. import projection
from ..base import SolverBase
from ..stats import SolverStats
from ..tree import build_tree_plan, make_tree, static_bodies
from .direct import uses_direct_solve
from .settings import (METHODS, N_PARAMS, N_STATS, P_DIRECT, P_EPSILON, P_ERP, P_ITERATIONS, P_KEEP_ENERGY,
                       P_MAY_ITERATE, P_METHOD, P_POSITION_ITERATIONS, P_PROJECTION, P_PROJECTION_ABOVE,
                       P_STABILIZATION, P_SUBSTEPS, P_TICKS_PER_MS, P_TIME_CAP_MS, P_WARM_START, S_CAPPED,
                       S_CAPPED_STEPS, S_ITERATIONS, S_RESIDUAL, S_SOLVE_TICKS, S_VIOLATION, SETTINGS,
                       STABILIZATIONS)
from .step import impulse_kernel


class ImpulseSolver(SolverBase):
    """The `impulse` family: settings (SETTINGS), step, stats, and its caches — the tree
    plan and direct-path arrays of the joint graph, rebuilt on `model_changed`."""
    name = "impulse"
    description = "Sequential impulses with joint friction, seed 001."
    HONOURS = frozenset({"limits", "friction", "motors", "contacts", "restitution"})
    SETTINGS = SETTINGS

    def __init__(self):
        self.settings = defaults(SETTINGS)
        self.params = np.zeros(N_PARAMS)    # the settings as the kernel reads them (P_* layout)
        self.kernel_stats = np.zeros(N_STATS)   # S_* layout
        self.stats = SolverStats()
        self._tree = None                   # (plan, Tree bundle, Tree bundle without direct rows)
        self._pack()

    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(SETTINGS, values, "solver"))
        self._pack()

    def _pack(self):
        s, p = self.settings, self.params
        p[P_ITERATIONS], p[P_EPSILON], p[P_TIME_CAP_MS] = s["iterations"], s["epsilon"], s["time_cap_ms"]
        p[P_WARM_START] = 1.0 if s["warm_start"] else 0.0
        p[P_STABILIZATION] = STABILIZATIONS[s["stabilization"]]
        p[P_ERP], p[P_SUBSTEPS] = s["erp"], s["substeps"]
        p[P_POSITION_ITERATIONS] = s["position_iterations"]
        p[P_METHOD] = METHODS[s["method"]]

    def substep(self, dt):
        """The substep h = Δt/substeps (s)."""
        return dt / self.settings["substeps"]

    def model_changed(self, world):
        """The joint graph changed: drop the tree plan (rebuilt on the next step)."""
        self._tree = None

    def tree(self, world):
        """(TreePlan, Tree bundle, the same bundle with no row in the direct solve)."""
        if self._tree is None:
            m = world.model
            plan = build_tree_plan(m.joints.body, m.joints.type, static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia))
            tree = make_tree(plan, m.rows.count)
            self._tree = (plan, tree, tree._replace(row_direct=np.zeros(m.rows.count, np.int64)))
        return self._tree

    def uses_direct(self, world):
        """Whether the direct path runs for this joint graph and these settings."""
        s = self.settings
        return uses_direct_solve(self.tree(world)[0], s["iterations"], s["time_cap_ms"], s["substeps"],
                                 METHODS[s["method"]])

    def save_state(self, world):
        """What the step carries over beyond the world's state: the energy each grounded
        group is owed and its energy after the last step (keep_energy's budget)."""
        return projection.projection_for(world).energy[:, projection.E_OWED:].copy()

    def restore_state(self, world, saved):
        """Back to a saved budget (World.restore_state); a budget of another layout is
        dropped (the next step starts afresh)."""
        energy = projection.projection_for(world).energy
        if saved is not None and saved.shape == energy[:, projection.E_OWED:].shape:
            energy[:, projection.E_OWED:] = saved

    def energy_inactive(self, world):
        """Why keep_energy cannot act in this world (a short reason for the panel), or None:
        a joint with a limit, friction or a motor dissipates or drives, which the energy
        projection does not count."""
        m, c = world.model.joints, world.control.joints
        if m.limit_on.any() or (m.friction > 0.0).any() or (c.motor_mode != MOTOR_OFF).any():
            return "a joint has a limit, friction or a motor"
        return None

    def free_rows_used(self, world):
        """Per joint, 1 if its free rows are in use (friction or a motor)."""
        m, c = world.model.joints, world.control.joints
        return ((m.friction > 0.0) | (c.motor_mode != MOTOR_OFF)).astype(np.int64)

    def step(self, world, n, coupled=False):
        """n steps of Δt (impulse_kernel), on the direct path when uses_direct_solve says
        so; returns the steps done before a blow-up."""
        _, tree, no_direct = self.tree(world)
        direct = self.uses_direct(world)
        m, c = world.model.joints, world.control.joints
        # a joint with a limit, friction or a motor may have rows to iterate on some step
        may_iterate = bool(m.limit_on.any() or (m.friction > 0.0).any() or (c.motor_mode != MOTOR_OFF).any())
        if not direct:
            tree.row_direct[:] = 0
        self.params[P_TICKS_PER_MS] = ticks_per_ms()
        self.params[P_DIRECT] = 1.0 if direct else 0.0
        self.params[P_MAY_ITERATE] = 1.0 if may_iterate else 0.0
        env, bodies, loads, joints, drives, rows, work = world.kernel_bundles(self.free_rows_used(world), coupled)
        # the projection (post-stabilization, seed 004) runs inside the kernel after each step
        # on every step (post_projection) or on those drifting beyond projection_above — not
        # with limits: the projection holds the equality rows only and would push a joint
        # resting on its stop through it
        s = self.settings
        drift = s["projection_above"] > 0 and not m.limit_on.any()
        self.params[P_PROJECTION] = s["projection_iterations"] if s["post_projection"] or drift else 0
        self.params[P_PROJECTION_ABOVE] = 0.0 if s["post_projection"] else s["projection_above"]
        self.params[P_KEEP_ENERGY] = 1.0 if self.settings["keep_energy"] and not coupled else 0.0
        done, capped = 0, 0
        while done < n:
            chunk = n - done
            k = impulse_kernel(chunk, world.dt, world.time + done * world.dt, self.params, self.kernel_stats, env,
                               bodies, loads, joints, drives, rows, work, tree if direct else no_direct,
                               world.contact_data(), projection.projection_for(world))
            grew = world.contacts_stepped()
            done += k
            capped += int(self.kernel_stats[S_CAPPED_STEPS])
            if k < chunk and not grew:
                break                       # blew up
            if k < chunk:
                continue                    # the contact buffers grew: the rest of the chunk
        st, tpm = self.kernel_stats, self.params[P_TICKS_PER_MS]
        self.stats = SolverStats(int(st[S_ITERATIONS]), float(st[S_RESIDUAL]),
                                 float(st[S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0,
                                 bool(st[S_CAPPED]), capped, done)
        if self.params[P_PROJECTION] > 0 and done > 0:
            self.stats.record_projection(projection.Violation(*(float(v) for v in st[S_VIOLATION:S_VIOLATION + 4])))
        return done

