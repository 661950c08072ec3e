"""Per-stage profiler: where each frame's wall time goes, for the panel's rolling plot.

Measured at the shell level with time.perf_counter around existing calls, nothing in
physics/ changed: the window wraps (on the instances, not the classes) each rope's
`step`, each solver family's `step`, `world.advance_steps`, the frame driver's
`update`, and times its own drawing blocks. Stages of one frame (ms):

- rope      — the ropes' steps (seed 002: inextensibility solve, bending, contact)
- solver    — the joint solver's step (the numba kernel and its Python wrapper)
- physics   — the rest of World.advance_steps in Python (forces into velocities in
              the coupled step, motor events, runaway watch, clock)
- record    — what the shell does around the steps: timeline states (rewind) and
              plot samples (driver.update minus advance_steps)
- compare   — the ghost world's steps (compare mode, shell/compare.py)
- render    — snapshot, the 3D scene's draw calls, compositing and the copy to the screen
- ui        — the ImGui panel and overlays, built and drawn
- video     — reading the frame back and encoding it (only while recording)
- present   — the buffer swap (flip): where a software OpenGL finishes drawing

Each stage is measured, none is a remainder; their sum and the frame's wall time
(update + render_frame + flip) differ only by the glue between the calls
(tests/test_profiler.py checks within 10 %).
"""
import time

import numpy as np

STAGES = ("rope", "solver", "physics", "record", "compare", "render", "ui", "video", "present")
COLORS = {"rope": (0.95, 0.55, 0.25), "solver": (0.35, 0.65, 1.0), "physics": (0.6, 0.8, 0.95),
          "record": (0.7, 0.6, 1.0), "compare": (0.4, 0.9, 0.9), "render": (0.45, 0.85, 0.45), "ui": (1.0, 0.85, 0.3),
          "video": (1.0, 0.4, 0.4), "present": (0.65, 0.67, 0.7)}


class StageProfiler:
    STAGES, COLORS = STAGES, COLORS       # for the panel (ui/ does not import shell/)

    def __init__(self, capacity=600):
        self.capacity = capacity
        self.data = np.zeros((len(STAGES), capacity))     # ms per stage, one column per frame
        self.n = 0
        self.cur = {}                                     # this frame's raw sums (s)
        self.enabled = True

    def add(self, name, seconds):
        self.cur[name] = self.cur.get(name, 0.0) + seconds

    def timed(self, name, fn):
        """fn, timed into stage `name` (marked so it is wrapped once)."""
        if getattr(fn, "_profiled", None) == name:
            return fn

        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(name, time.perf_counter() - t)
        wrapper._profiled = name
        wrapper._inner = fn
        return wrapper

    def block(self, name):
        return _Block(self, name)

    def hook_world(self, world):
        """Wrap the ropes' and solvers' steps and advance_steps of `world` (idempotent:
        ropes added or rebuilt later get wrapped on the next call)."""
        for rope in world.ropes.values():
            rope.step = self.timed("rope", rope.step)
        for solver in world.solvers.values():
            solver.step = self.timed("solver", solver.step)
        world.advance_steps = self.timed("advance", world.advance_steps)

    def stages_ms(self, raw=None):
        """This frame's stages (ms) from the raw sums: physics = advance − rope − solver,
        record = update − advance, plus the window's own timeline check."""
        c = self.cur if raw is None else raw
        ms = {s: 1000.0 * c.get(s, 0.0) for s in STAGES}
        ms["physics"] = 1000.0 * max(0.0, c.get("advance", 0.0) - c.get("rope", 0.0) - c.get("solver", 0.0))
        ms["record"] = 1000.0 * (max(0.0, c.get("update", 0.0) - c.get("advance", 0.0)) + c.get("record", 0.0))
        return ms

    def commit(self):
        """End of a frame: its stages into the rolling columns. Returns them (ms)."""
        ms = self.stages_ms()
        self.cur = {}
        if self.n == self.capacity:
            self.data[:, :-1] = self.data[:, 1:]
            self.n -= 1
        self.data[:, self.n] = [ms[s] for s in STAGES]
        self.n += 1
        return ms

    def column(self, stage):
        return self.data[STAGES.index(stage), :self.n]

    def mean_ms(self, frames=60):
        """Mean ms per stage over the last `frames` frames."""
        k = min(frames, self.n)
        if k == 0:
            return {s: 0.0 for s in STAGES}
        return {s: float(self.data[i, self.n - k:self.n].mean()) for i, s in enumerate(STAGES)}

    def clear(self):
        self.n = 0
        self.cur = {}


class _Block:
    def __init__(self, profiler, name):
        self.p, self.name = profiler, name

    def __enter__(self):
        self.t = time.perf_counter()

    def __exit__(self, *exc):
        self.p.add(self.name, time.perf_counter() - self.t)
        return False
