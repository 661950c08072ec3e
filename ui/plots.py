"""Rolling plots (ImPlot) of the running simulation, and their CSV export.

Samples are taken every SAMPLE_PERIOD of simulated time (SampledWorld slices the
frame driver's steps), whatever the frame rate, and only when simulated time moved
on (so pausing freezes the plots; a reset, which takes time back, clears them): the
selected joint's angle and rate, the largest constraint violation (and, with the
projection on, the violation it started from), the total energy, and the solver's
iterations and milliseconds per step.
"""
import csv
import math
import os

import numpy as np
from imgui_bundle import imgui, implot

from physics.world import Joint
from .sliced import SlicedWorld

SAMPLE_PERIOD = 1.0 / 120.0      # s of simulated time between samples (at least one step)


class SampledWorld(SlicedWorld):
    """The world as the frame driver sees it: `advance_steps(n)` runs in slices of
    about SAMPLE_PERIOD and calls `sample()` after each (also after a blow-up)."""
    AFTER_ON_ERROR = True

    def __init__(self, world, sample):
        super().__init__(world)
        self.sample = sample

    def slice_steps(self):
        return max(1, int(round(SAMPLE_PERIOD / self.world.dt)))

    def after_slice(self):
        self.sample()


# name, header in the CSV, what it is
COLUMNS = (("t", "t (s)"), ("q", "joint q (deg or m)"), ("qd", "joint q' (deg/s or m/s)"),
           ("violation", "max constraint violation (m or rad)"),
           ("projected", "violation before the projection (m or rad)"), ("energy", "total energy (J)"),
           ("iterations", "solver iterations per step"), ("ms", "solve time per step (ms)"))

LINE = {"q": imgui.ImVec4(0.35, 0.65, 1.0, 1.0), "qd": imgui.ImVec4(1.0, 0.55, 0.2, 1.0),
        "violation": imgui.ImVec4(0.95, 0.35, 0.35, 1.0), "projected": imgui.ImVec4(0.95, 0.65, 0.65, 0.8),
        "energy": imgui.ImVec4(0.45, 0.85, 0.45, 1.0),
        "iterations": imgui.ImVec4(0.75, 0.6, 1.0, 1.0), "ms": imgui.ImVec4(1.0, 0.85, 0.3, 1.0)}


GHOST_LINE = imgui.ImVec4(0.35, 0.95, 0.8, 0.85)      # compare mode: the ghost's q, teal


class History:
    """Fixed-capacity columns of samples (float64), oldest first."""

    def __init__(self, capacity=36000):
        self.capacity = capacity
        self.data = np.full((len(COLUMNS), capacity), np.nan)
        self.n = 0
        self.joint = None           # the joint index q and qd belong to

    def clear(self):
        self.n = 0

    def truncate(self, t):
        """Keep the samples at or before time t (rewind: the plots go back with the world)."""
        if self.n:
            self.n = int(np.searchsorted(self.data[0, :self.n], t + 1e-12, side="right"))

    def column(self, name):
        return self.data[[c for c, _ in COLUMNS].index(name), :self.n]

    def last_time(self):
        return self.data[0, self.n - 1] if self.n else None

    def record(self, world, joint):
        """Add a sample if time moved on since the last one (clear first if it went back)."""
        t = world.time
        last = self.last_time()
        if last is not None and t < last - 1e-12:
            self.clear()
        elif last is not None and t <= last + 1e-12:
            return False
        if joint != self.joint:           # another joint: its past is not this one's
            self.data[1:3, :self.n] = np.nan
            self.joint = joint
        q = qd = np.nan
        if joint is not None and joint < len(world.joint_info):
            j = Joint(world, joint)
            scale = 1.0 if j.kind == "prismatic" else 180.0 / math.pi
            if j.kind != "fixed":
                q, qd = j.angle * scale, j.rate * scale
        stats = world.stats
        before = getattr(stats, "violation_before", 0.0) or np.nan        # NaN: no projection (or nothing to do)
        row = (t, q, qd, world.max_constraint_error(), before, world.energy(), float(stats.iterations),
               float(stats.solve_ms))
        if self.n == self.capacity:                   # drop the oldest half
            keep = self.capacity // 2
            self.data[:, :keep] = self.data[:, self.n - keep:self.n]
            self.n = keep
        self.data[:, self.n] = row
        self.n += 1
        return True

    def window(self, seconds):
        """Index range [i0, n) of the samples in the last `seconds` of simulated time."""
        if self.n == 0:
            return 0, 0
        t = self.data[0, :self.n]
        return int(np.searchsorted(t, t[-1] - seconds, side="left")), self.n

    def export_csv(self, path, seconds=None):
        """Write the samples (the plotted window, or everything) as CSV; returns rows."""
        i0, n = self.window(seconds) if seconds is not None else (0, self.n)
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([h for _, h in COLUMNS])
            for k in range(i0, n):
                w.writerow(["" if math.isnan(v) else repr(float(v)) for v in self.data[:, k]])
        return n - i0


class Plots:
    """Draws the plots of a History over the last `seconds` of simulated time."""

    def __init__(self, history=None, seconds=10.0, height=150.0):
        self.history = history or History()
        self.seconds = seconds
        self.height = height
        self.rects = {}                     # plot name → (x0, y0, x1, y1) of its plot area
        self.ghost = None                   # compare mode: (t, q, label) of the ghost's joint angle

    def _x_limits(self, t):
        t1 = t[-1] if len(t) else 0.0
        t0 = t[0] if len(t) else 0.0
        return t0, max(t1, t0 + 1e-3)

    def _line(self, label, xs, ys, name):
        spec = implot.Spec(line_color=LINE[name], line_weight=2.0)
        implot.plot_line(label, xs, ys, spec)

    @staticmethod
    def _y_limits(ys):
        """Limits that fit the plotted values, with a margin (this frame's data: no lag)."""
        ys = ys[np.isfinite(ys)]
        if len(ys) == 0:
            return -1.0, 1.0
        lo, hi = float(ys.min()), float(ys.max())
        pad = 0.08 * (hi - lo) if hi > lo else max(abs(hi) * 0.1, 1e-9)
        return lo - pad, hi + pad

    def _begin(self, title, t, ylabel, y2label=None, height=None, y1=None, y2=None):
        """Begin a plot over times t; y1, y2: the values on each y axis (to fit them)."""
        width = imgui.get_content_region_avail().x
        flags = implot.Flags_.no_menus | implot.Flags_.no_box_select
        if not implot.begin_plot(title, (width, height or self.height), flags):
            return False
        implot.setup_axes("t (s)", ylabel)
        implot.setup_axis_format(implot.ImAxis_.y1, "%.3g")
        implot.setup_axis_limits(implot.ImAxis_.y1, *self._y_limits(y1), implot.Cond_.always)
        if y2label is not None:
            implot.setup_axis(implot.ImAxis_.y2, y2label, implot.AxisFlags_.opposite)
            implot.setup_axis_format(implot.ImAxis_.y2, "%.3g")
            implot.setup_axis_limits(implot.ImAxis_.y2, *self._y_limits(y2), implot.Cond_.always)
        x0, x1 = self._x_limits(t)
        implot.setup_axis_limits(implot.ImAxis_.x1, x0, x1, implot.Cond_.always)
        implot.setup_legend(implot.Location_.north_east)
        return True

    def _end(self, name):
        p, s = implot.get_plot_pos(), implot.get_plot_size()
        self.rects[name] = (p.x, p.y, p.x + s.x, p.y + s.y)
        implot.end_plot()

    def draw(self, joint_label, angular=True, heights=None):
        """The selected joint's plot, then the others in tabs; `heights` (px) of the two."""
        hj, ho = heights or (self.height, self.height)
        h = self.history
        i0, n = h.window(self.seconds)
        t = h.column("t")[i0:n]
        col = lambda name: np.ascontiguousarray(h.column(name)[i0:n])  # noqa: E731
        unit, rate_unit = ("°", "°/s") if angular else ("m", "m/s")
        qs = col("q")
        if self.ghost is not None and len(self.ghost[1]):
            qs = np.concatenate([qs, self.ghost[1][self.ghost[0] >= (t[0] if len(t) else -np.inf)]])
        if self._begin(f"{joint_label}##joint", t, f"q ({unit})", f"q' ({rate_unit})", hj, qs, col("qd")):
            implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)
            self._line(f"q ({unit})", t, col("q"), "q")
            if self.ghost is not None and len(self.ghost[0]):
                gt, gq, glabel = self.ghost
                keep = gt >= (t[0] if len(t) else -np.inf)
                spec = implot.Spec(line_color=GHOST_LINE, line_weight=2.0)
                implot.plot_line(f"q ({unit}) {glabel}", np.ascontiguousarray(gt[keep]),
                                 np.ascontiguousarray(gq[keep]), spec)
            implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
            self._line(f"q' ({rate_unit})", t, col("qd"), "qd")
            self._end("joint")
        if not imgui.begin_tab_bar("plot tabs"):
            return
        for tab, title, ylabel, y2label, lines in (
                ("violation", "Constraint violation", "m or rad", None, (("max |G|", "violation", 1),
                                                                         ("before projection", "projected", 1))),
                ("energy", "Total energy", "J", None, (("E", "energy", 1),)),
                ("solver", "Solver per step", "iterations", "ms", (("iterations", "iterations", 1),
                                                                    ("solve ms", "ms", 2)))):
            if not imgui.begin_tab_item_simple(tab):
                continue
            y1 = np.concatenate([col(name) for _, name, axis in lines if axis == 1])
            y2 = np.concatenate([col(name) for _, name, axis in lines if axis == 2] or [y1])
            if self._begin(f"{title}##{tab}", t, ylabel, y2label, ho, y1, y2):
                for label, name, axis in lines:
                    implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1 if axis == 1 else implot.ImAxis_.y2)
                    self._line(label, t, col(name), name)
                self._end(tab)
            imgui.end_tab_item()
        imgui.end_tab_bar()
