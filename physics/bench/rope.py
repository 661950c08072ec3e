"""Rope benchmark: `python -m physics.bench.rope [--segments 10 100 1000] [--dt 0.01 0.015]
[--duration 10] [--repeat 3] [--json] [--profile]`.

The paper's rope (seed 002: L = 2.8 m, r = 1.5 cm, ρ = 1200 kg/m³, E = 0.05 MPa,
G = 0.1 MPa), one end pinned, released horizontally. For each segment count and step:
microseconds per `Rope.step` (each step timed alone; the median step, and the mean, of
the run whose median is the median of `repeat` runs; kernels compiled beforehand), the
largest segment stretch |ℓ/l − 1| at t = 1 s and at the end, the worst over the whole
run, and the mean number of projections per step. `--profile` also times each stage of
one step (kernel calls in isolation, so each includes a few µs of call overhead).
"""
import argparse
import sys
import time

import numpy as np

from ..rope import kernels as K
from ..rope import Rope
from . import add_run_arguments, print_records

PAPER = dict(radius=0.015, density=1200.0, E=0.05e6, G=0.1e6)
GRAVITY = np.array([0.0, 0.0, -9.81])


def make_rope(segments):
    rope = Rope.straight((0.0, 0.0, 3.0), direction=(1.0, 0.0, 0.0), length=2.8, segments=segments, ground=False,
                         **PAPER)
    rope.attach_world(0)
    return rope


def run(segments, dt, duration):
    """One release: per-step times (s), stretch at 1 s, at the end and worst, projections."""
    rope = make_rope(segments)
    steps = int(round(duration / dt))
    at_1s = min(steps, int(round(1.0 / dt)))
    times = np.empty(steps)
    worst = 0.0
    stretch_1s = float("nan")
    projections = 0
    for k in range(steps):
        t0 = time.perf_counter()
        rope.step(dt, GRAVITY)
        times[k] = time.perf_counter() - t0
        s = rope.max_stretch()
        worst = max(worst, s)
        projections += rope.solver_stats["projections"]
        if k + 1 == at_1s:
            stretch_1s = s
        if not np.isfinite(s):
            worst = float("inf")
            break
    return {"segments": segments, "dt": dt, "duration_s": duration, "us_per_step_median": float(np.median(times) * 1e6),
            "us_per_step_mean": float(times.mean() * 1e6), "max_stretch_1s": stretch_1s,
            "max_stretch_end": rope.max_stretch(), "max_stretch_worst": worst,
            "projections_per_step": projections / steps}


def bench(segments, dt, duration, repeat):
    runs = sorted((run(segments, dt, duration) for _ in range(repeat)), key=lambda r: r["us_per_step_median"])
    rec = dict(runs[len(runs) // 2])
    rec["us_per_step_median_of_runs"] = [round(r["us_per_step_median"], 1) for r in runs]
    return rec


def profile(segments, dt, settle=1.0, reps=None):
    """Median µs of each stage of one step, on the state after `settle` s of the release."""
    rope = make_rope(segments)
    for _ in range(int(round(settle / dt))):
        rope.step(dt, GRAVITY)
    saved = rope.save_state()
    s, m, w, L, prm = rope.state, rope.model, rope.work, rope.links, rope.prm
    nb = (np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)))
    reps = reps or max(20, 20000 // segments)

    def clock(f):
        f()
        out = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps):
                f()
            out.append((time.perf_counter() - t0) / reps)
        return float(np.median(out) * 1e6)

    stages = {
        "whole step (Rope.step)": lambda: (rope.restore_state(saved), rope.step(dt, GRAVITY)),
        "  restore_state (not a stage)": lambda: rope.restore_state(saved),
        "rod_frames": lambda: K.rod_frames(s.node_pos, s.elem_quat, m.seg_rest, w.blk),
        "elem_effective_inertia": lambda: K.elem_effective_inertia(s, m, prm, dt, w.blk, w.elem_w),
        "pair_prepare (eq. 12-14)": lambda: K.pair_prepare(s, m, prm, dt, w.blk, w.elem_w, w.bw),
        "coupled_factor (6x6 blocks)": lambda: K.coupled_factor(w.blk, w.bw, w.elem_w, m.seg_rest, m.node_w,
                                                                m.node_batt, w.att, w.tmp),
        "integrate_velocities": lambda: K.integrate_velocities(s, m, L, prm, dt, dt, GRAVITY, w.blk, w.torque),
        "coupled_velocity_pass": lambda: K.coupled_velocity_pass(dt, prm[K.P_DRIFT_BIAS], w.blk, w.bw, w.clamp,
                                                                 w.elem_w, m, s, L, w.att, *nb[1:]),
        "integrate_positions": lambda: K.integrate_positions(s, dt),
        "block_project (one pass)": lambda: K.block_project(s, m, L, w.blk, w.att, 1.0, 0.0, True, dt, *nb[1:]),
    }
    rope.restore_state(saved)
    rope.step(dt, GRAVITY)
    used = rope.solver_stats["projections"]
    return {"segments": segments, "dt": dt, "projections_in_this_step": used,
            "us": {name: clock(f) for name, f in stages.items()}}


ROPE_HEADER = (f"{'N':>5} {'dt (s)':>7} {'us/step med':>12} {'mean':>8} {'stretch 1 s':>12} "
               f"{'at end':>9} {'worst':>9} {'proj/step':>9}")


def rope_row(r):
    """One line of the rope table."""
    return (f"{r['segments']:>5} {r['dt']:>7} {r['us_per_step_median']:>12.1f} {r['us_per_step_mean']:>8.1f} "
            f"{r['max_stretch_1s']:>12.1e} {r['max_stretch_end']:>9.1e} {r['max_stretch_worst']:>9.1e} "
            f"{r['projections_per_step']:>9.2f}")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m physics.bench.rope", description=__doc__.split("\n")[0])
    p.add_argument("--segments", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--dt", type=float, nargs="+", default=[0.01, 0.015], help="steps (s)")
    add_run_arguments(p, 10.0, 3, "runs per case; the median run is reported")
    p.add_argument("--profile", action="store_true", help="also time the stages of one step")
    args = p.parse_args(argv)
    make_rope(4).step(0.01, GRAVITY)                    # compile / load the kernels outside the timing
    records = [bench(n, dt, args.duration, max(1, args.repeat)) for dt in args.dt for n in args.segments]
    profiles = [profile(n, dt) for dt in args.dt for n in args.segments] if args.profile else None
    print_records(records, args.json, ROPE_HEADER, rope_row, "runs", profiles=profiles)
    if not args.json:
        for pr in profiles or ():
            print(f"\nstages, N = {pr['segments']}, dt = {pr['dt']} s ({pr['projections_in_this_step']} "
                  f"projections in this step), µs:")
            for name, us in pr["us"].items():
                print(f"  {name:32} {us:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
