"""ImpulseSolver: the impulse family's settings, its caches of the joint graph, the
kernel call and its stats."""
import numpy as np

from ...clock import ticks_per_ms
from .. import projection
from ..base import Readout, SolverBase
from ..stats import SolverStats
from ..tree import build_tree_plan, make_tree, static_bodies
from ..tree.warm_up import compile_tree_kernels
from .direct import uses_direct_solve
from .settings import (METHODS, N_STATS, S_CAPPED, S_CAPPED_STEPS, S_ITERATIONS, S_RESIDUAL, S_SOLVE_TICKS,
                       S_VIOLATION, SETTINGS, make_params)
from .settings import SHAKE
from .step import Features, kernel_for


def build_tree(world):
    """(TreePlan, Tree bundle, the same bundle with no row in the direct solve) of the
    world's joint graph."""
    m = world.model
    plan = build_tree_plan(m.joints.body, m.joints.type, static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia))
    tree = make_tree(plan, m.rows.count)
    return plan, tree, tree._replace(row_direct=np.zeros(m.rows.count, np.int64))


class ImpulseSolver(SolverBase):
    """The `impulse` family. Its layout cache: the tree plan and direct-path arrays of the
    joint graph (build_tree); between steps it carries keep_energy's budget."""
    name = "impulse"
    description = "Sequential impulses with joint friction, seed 001."
    HONOURS = frozenset({"limits", "friction", "damping", "motors", "couplings", "contacts", "restitution"})
    SETTINGS = SETTINGS
    PANEL = (("warm_start",), ("iterations", "epsilon"), ("contact_epsilon", "time_cap_ms"), ("erp",),
             ("stabilization", "position_iterations"), ("method", "keep_energy"))
    WHEN = {"position_iterations": ("stabilization", ("split",))}
    SIMULATION = ("substeps",)
    COMPILE_WEIGHT = 35.0
    WARM_UP_WEIGHT = 9.5
    VARIANT_WEIGHT = 45.0
    ROBOT_VARIANT_WEIGHT = 36.0
    warm_up_kernels = staticmethod(compile_tree_kernels)       # its direct path's, shared with lcp

    def __init__(self):
        super().__init__()
        self.kernel_stats = np.zeros(N_STATS)   # S_* layout, written by the kernel

    def substep(self, dt):
        """The substep h = Δt/substeps (s)."""
        return dt / self.settings["substeps"]

    # ------------------------------------------------------------------ the joint graph
    def tree(self, world):
        """(TreePlan, Tree bundle, the same bundle with no row in the direct solve)."""
        return self.layout(world, "tree", build_tree)

    def uses_direct(self, world):
        """Whether the direct path runs for this joint graph and these settings."""
        s = self.settings
        return uses_direct_solve(self.tree(world)[0], s["iterations"], s["time_cap_ms"], s["substeps"],
                                 METHODS[s["method"]])

    def may_iterate(self, world):
        """Whether a joint has a limit or a free row in use (friction or a motor): rows that
        may iterate on some step, and that dissipate or drive."""
        use = self.drive_use(world)
        return use.limits or use.any_free

    # ------------------------------------------------------------------ the step
    def params(self, world, coupled):
        # the projection (post-stabilization, seed 004) runs inside the kernel after each step
        # on every step (post_projection) or on those drifting beyond projection_above — not
        # with limits: the projection holds the equality rows only and would push a joint
        # resting on its stop through it
        s = self.settings
        drift = s["projection_above"] > 0 and not self.drive_use(world).limits
        return make_params(s, ticks_per_ms(), world.dt, self.uses_direct(world), self.may_iterate(world),
                           s["projection_iterations"] if s["post_projection"] or drift else 0,
                           0.0 if s["post_projection"] else s["projection_above"],
                           s["keep_energy"] and not coupled and self.energy_inactive(world) is None,
                           self.drive_use(world).any_damped, world.collides())

    def features(self, world, params, robot=None):
        """The paths this world's kernel is compiled with (step.Features), in three sets, since
        each set compiles the whole kernel again: none of them (the iterations alone, for a
        world that takes neither the direct solve nor a projection), the direct solve with
        both projections (the energy one rides with the position one: the kernel decides per
        call whether it runs, keep_energy), and those with the robots' features
        (robot_features; `robot`: the call's answer, when it has one). A world compiles the
        second set if it uses one of its paths; the kernel decides per call which of them run
        (params)."""
        robot = self.robot_features(world) if robot is None else robot
        rich = bool(params.direct) or params.projection > 0 or robot
        return Features(rich, rich, params.stabilization == SHAKE, rich, robot, robot)

    def begin(self, world, coupled):
        call = super().begin(world, coupled)
        _, tree, no_direct = self.tree(world)
        if not call["params"].direct:
            tree.row_direct[:] = 0
        call["tree"] = tree if call["params"].direct else no_direct
        call["kernel"] = kernel_for(*self.features(world, call["params"], call["robot"]))
        call["couplings"] = world.coupling_data(call["robot"])     # None for a kernel without them
        call["capped"] = 0
        return call

    def run(self, world, call, n, t0):
        env, bodies, loads, joints, drives, rows, work = call["bundles"]
        return call["kernel"](n, t0, call["params"], self.kernel_stats, env, bodies, loads, joints, drives,
                              rows, work, call["tree"], world.contact_data(call["robot"]),
                              projection.projection_for(world), call["couplings"])

    def after_run(self, world, call, k):
        call["capped"] += int(self.kernel_stats[S_CAPPED_STEPS])
        return False

    def finish(self, world, call, done):
        st, tpm = self.kernel_stats, call["params"].ticks_per_ms
        stats = SolverStats(int(st[S_ITERATIONS]), float(st[S_RESIDUAL]),
                            float(st[S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0,
                            bool(st[S_CAPPED]), call["capped"], done)
        if call["params"].projection > 0 and done > 0:
            stats.record_projection(projection.Violation(*(float(v) for v in st[S_VIOLATION:S_VIOLATION + 4])))
        return stats

    # ------------------------------------------------------------------ state between steps
    def save_state(self, world):
        """What the step carries over beyond the world's state: the energy each grounded
        group is owed and its energy after the last step (keep_energy's budget)."""
        return projection.projection_for(world).energy[:, projection.E_OWED:projection.E_AFTER + 1].copy()

    def restore_state(self, world, saved):
        """Back to a saved budget (World.restore_state); a budget of another layout is
        dropped (the next step starts afresh)."""
        energy = projection.projection_for(world).energy
        if saved is not None and saved.shape == energy[:, projection.E_OWED:projection.E_AFTER + 1].shape:
            energy[:, projection.E_OWED:projection.E_AFTER + 1] = saved

    # ------------------------------------------------------------------ benchmarks
    def shorthand(self, text):
        """ITERATIONSxSUBSTEPS (benchmarks: impulse:8x2, impulse:50): exactly that many
        iterations per substep (ε = contact ε = 0)."""
        iterations, x, substeps = text.partition("x")
        if iterations.isdigit() and (substeps.isdigit() or not x):
            return {"iterations": int(iterations), "substeps": int(substeps or 1), "epsilon": 0.0,
                    "contact_epsilon": 0.0}
        return super().shorthand(text)

    def describe(self, world):
        """Which path runs: the direct solve of the joint tree, or seed 001's iterations."""
        return {"path": "direct" if self.uses_direct(world) else "iterative"}

    # ------------------------------------------------------------------ the panel
    def readouts(self, stats, capped=(0, 0)):
        k, n = capped
        pct = 100.0 * k / n if n else 0.0
        return [Readout("iterations", f"{stats.iterations}", "Iterations the last solve used.", False),
                Readout("residual", f"{stats.residual:.2e} N·s",
                        "Largest |Δp| of the last iteration (N·s): a joint row's impulse change, or a body's "
                        "momentum change over the contacts' sweep.", False),
                *super().readouts(stats, capped),
                Readout("time cap cut", f"{k} / {n} steps ({pct:.1f} %)",
                        "How often the time cap stopped the solve early, since load or reset.", k > 0)]

    def energy_inactive(self, world):
        """Why keep_energy cannot act in this world (a short reason for the panel), or None:
        a joint's limit (its impacts) or motor dissipates or drives, which the energy
        projection does not count (friction's work it counts: projection.add_friction_work)."""
        use = self.drive_use(world)
        if use.limits:
            return "a joint has a limit"
        if use.motors:
            return "a joint has a motor"
        return None

    def notes(self, world):
        why = self.energy_inactive(world) if self.settings["keep_energy"] else None
        return [f"keep energy does not act here: {why}"] if why else []
