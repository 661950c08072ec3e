"""PenaltySolver: the penalty family's settings, its kernel call and its stats."""
import time

import numpy as np

from .. import projection
from ..base import SolverBase
from ..stats import SolverStats
from .assemble import build_plan
from .run import kernel_for
from .settings import SETTINGS, make_params


class PenaltySolver(SolverBase):
    """The `penalty` family. Its layout cache: the implicit step's Plan (assemble.build_plan)."""
    name = "penalty"
    description = "Penalty forces, seed 000: every row a spring-damper (stiff: implicit)."
    # no restitution: its contact springs are critically damped (a resting body must not
    # bounce), so contacts do not bounce
    HONOURS = frozenset({"limits", "friction", "damping", "motors", "couplings", "contacts"})
    SETTINGS = SETTINGS
    PANEL = (("penalty_preset",), ("alpha_lin", "beta_lin"), ("alpha_rot", "beta_rot"), ("kappa", "zeta"),
             ("stiff_kappa", "stiff_zeta"), ("post_projection", "projection_iterations"))
    WHEN = {"alpha_lin": ("penalty_preset", ("paper",)), "beta_lin": ("penalty_preset", ("paper",)),
            "alpha_rot": ("penalty_preset", ("paper",)), "beta_rot": ("penalty_preset", ("paper",)),
            "kappa": ("penalty_preset", ("critical",)), "zeta": ("penalty_preset", ("critical",)),
            "stiff_kappa": ("penalty_preset", ("stiff",)), "stiff_zeta": ("penalty_preset", ("stiff",)),
            "projection_iterations": ("post_projection", (True,))}
    COMPILE_WEIGHT = 60.0
    VARIANT_WEIGHT = 0.0
    ROBOT_VARIANT_WEIGHT = 36.0

    def shorthand(self, text):
        """A preset's name (benchmarks: penalty:critical)."""
        if text in self.schema()["penalty_preset"].choices:
            return {"penalty_preset": text}
        return super().shorthand(text)

    def params(self, world, coupled):
        return make_params(self.settings, world.dt, self.drive_use(world).any_damped)

    def plan(self, world):
        """The implicit step's layout and scratch for the world's layout (assemble.Plan)."""
        return self.layout(world, "plan", build_plan)

    def begin(self, world, coupled):
        call = super().begin(world, coupled)
        call["plan"] = self.plan(world)
        call["violation"] = np.zeros(4)
        call["kernel"] = kernel_for(call["robot"], call["robot"])
        call["t0"] = time.perf_counter()
        return call

    def run(self, world, call, n, t0):
        env, bodies, loads, joints, drives, rows, work = call["bundles"]
        return call["kernel"](n, t0, call["params"], env, bodies, loads, joints, drives, rows, work, call["plan"],
                              world.contact_data(call["robot"]), projection.projection_for(world),
                              call["violation"], world.coupling_data(call["robot"]))

    def finish(self, world, call, done):
        ms = (time.perf_counter() - call["t0"]) * 1e3 / max(call["n"], 1)
        stats = SolverStats(0, 0.0, ms, False, 0, done)
        if call["params"].projection > 0 and done > 0:
            stats.record_projection(projection.Violation(*(float(v) for v in call["violation"])))
        return stats
