"""Compare mode: a second world (the ghost) stepped by another solver family from the
same state, drawn translucent over the first.

The ghost is a deep copy of the world (model, state, control, ropes) with another
solver family (or the same family with other settings: `configure`). It follows the
primary world's step count: each frame it runs the steps the primary ran; when the
primary's time goes back (reset, rewind) or its layout changes, the ghost starts again
from the primary's state. The model's numbers the user edits in the panel (joint
friction, limits, masses, gravity, Δt) are copied to the ghost when they change, so live
edits apply to both; the mouse spring acts on the primary only. Turning compare off
drops the ghost and keeps the primary.
"""
import copy
import time

import numpy as np

from physics.world import Joint, SimulationBlowUp
from shell.history import model_fingerprint

SAMPLE_PERIOD = 1.0 / 120.0      # s of simulated time between the ghost's plot samples


def _tables(model):
    return {name: val for name, val in vars(model).items() if hasattr(val, "names") and hasattr(val, "count")}


def _unwrap(world):
    """Drop the profiler's per-instance wrappers (shell/profiler.py) the copy took along:
    they call the primary's bound methods."""
    for obj in [world, *world.ropes.values(), *world.solvers.values()]:
        for name, val in list(vars(obj).items()):
            if callable(val) and hasattr(val, "_profiled"):
                delattr(obj, name)


class Compare:
    def __init__(self, world, family, **settings):
        self.world = world
        self.family = family
        self.settings = settings
        self.error = None            # the ghost's SimulationBlowUp, if it blew up
        self.ms_per_step = 0.0       # the ghost's wall-clock time per step (smoothed)
        self.samples = []            # (t, q of the selected joint, violation)
        self.joint = None
        self._fp = None
        self.sync()

    def sync(self):
        """The ghost starts again from the primary's state (and model)."""
        ghost = copy.deepcopy(self.world)
        _unwrap(ghost)
        ghost.solver = self.family
        if self.settings:
            ghost.configure(self.family, **self.settings)
        self.ghost = ghost
        self.error = None
        self._fp = self._model_key()
        self.samples = [s for s in self.samples if s[0] <= ghost.time + 1e-12]

    def _model_key(self):
        w = self.world
        return model_fingerprint(w), w.model.version, len(w.ropes)

    def _copy_edits(self):
        """Numbers edited in the primary's model since the last frame, into the ghost."""
        g, w = self.ghost, self.world
        if g.model.version != w.model.version or len(g.ropes) != len(w.ropes):
            self.sync()                                  # a layout change: start over
            return
        for name, table in _tables(w.model).items():
            gt = getattr(g.model, name)
            for n in table.names:
                a, b = getattr(table, n), getattr(gt, n)
                if a.shape == b.shape:
                    b[...] = a
        if g.dt != w.dt:
            g.dt = w.dt
        if tuple(g.gravity) != tuple(w.gravity):
            g.gravity = w.gravity

    def follow(self, joint=None):
        """Once a frame: run the ghost up to the primary's step; returns steps run."""
        w, g = self.world, self.ghost
        if w.state.step_count < g.state.step_count or w.time < g.time - 1e-9:
            self.sync()
            g = self.ghost
        key = self._model_key()
        if key != self._fp:
            self._copy_edits()
            self._fp = key
            g = self.ghost
        if joint != self.joint:
            self.samples, self.joint = [], joint
        n = w.state.step_count - g.state.step_count
        if n <= 0 or self.error is not None:
            return 0
        every = max(1, int(round(SAMPLE_PERIOD / g.dt)))
        done = 0
        t0 = time.perf_counter()
        try:
            while done < n:
                k = min(every, n - done)
                g.advance_steps(k)
                done += k
                self._sample(g)
        except SimulationBlowUp as e:
            self.error = e
        if done:
            ms = 1000.0 * (time.perf_counter() - t0) / done
            self.ms_per_step = ms if self.ms_per_step == 0.0 else 0.8 * self.ms_per_step + 0.2 * ms
        return done

    def _sample(self, g):
        q = np.nan
        j = self.joint
        if j is not None and j < len(g.joint_info):
            jj = Joint(g, j)
            if jj.kind != "fixed":
                q = jj.angle * (1.0 if jj.kind == "prismatic" else 180.0 / np.pi)
        self.samples.append((g.time, q, g.max_constraint_error()))
        if len(self.samples) > 36000:
            del self.samples[:18000]

    def series(self, seconds=None):
        """(t, q) arrays of the ghost's samples (the last `seconds`)."""
        if not self.samples:
            return np.zeros(0), np.zeros(0)
        a = np.array(self.samples)
        if seconds is not None:
            a = a[a[:, 0] >= a[-1, 0] - seconds]
        return np.ascontiguousarray(a[:, 0]), np.ascontiguousarray(a[:, 1])
