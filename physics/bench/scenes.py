"""Scene bench: every scene in scenes/ under every solver family, at the scene's own Δt and
default settings: `python -m physics.bench.scenes [--duration 10] [--json]`.

Per scene and solver: µs per step (wall clock, median of chunks of CHUNK steps), the
physics share of a 60 Hz frame (1/60 s of simulated time per frame), the worst joint gap
(largest constraint violation, sampled after every chunk) and whether it blew up.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from ..io.scene import load_scene
from ..solvers import FAMILIES
from ..world import SimulationBlowUp

SCENES = Path(__file__).resolve().parents[2] / "scenes"
CHUNK = 10              # steps timed together
FRAME_S = 1.0 / 60.0


def run_scene(path, solver, duration):
    """One record: scene, solver, dt, us_per_step, frame_share, worst_gap_m, blew_up_at_s."""
    world = load_scene(path, {"solver.kind": solver})
    record = {"scene": Path(path).stem, "solver": solver, "dt": world.dt, "blew_up_at_s": None}
    world.step()                                    # compile / load the kernels first
    world.reset()
    times, worst = [], world.max_constraint_error()
    steps = int(round(duration / world.dt))
    try:
        for _ in range(0, steps, CHUNK):
            t0 = time.perf_counter()
            world.advance_steps(CHUNK)
            times.append((time.perf_counter() - t0) / CHUNK * 1e6)
            worst = max(worst, world.max_constraint_error())
    except SimulationBlowUp as e:
        record["blew_up_at_s"] = round(e.time, 4)
    us = statistics.median(times) if times else float("nan")
    record.update(us_per_step=us, frame_share=us * 1e-6 * (FRAME_S / world.dt) / FRAME_S, worst_gap_m=worst)
    return record


def run_all(duration, scenes=None, solvers=None):
    paths = sorted(SCENES.glob("*.toml")) if not scenes else [Path(s) for s in scenes]
    return [run_scene(p, s, duration) for p in paths for s in (solvers or FAMILIES)]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m physics.bench.scenes", description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=10.0, help="simulated seconds per scene")
    p.add_argument("--scene", nargs="*", help="scene files (default: every scene in scenes/)")
    p.add_argument("--solver", nargs="*", choices=sorted(FAMILIES), help="solver families (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    args = p.parse_args(argv)
    records = run_all(args.duration, args.scene, args.solver)
    if args.json:
        print(json.dumps(records, indent=1))
        return 0
    print(f"{'scene':12} {'solver':8} {'dt (s)':>7} {'us/step':>9} {'60 Hz frame':>11} {'worst gap (m)':>13}  blew up")
    for r in records:
        blew = "-" if r["blew_up_at_s"] is None else f"at {r['blew_up_at_s']} s"
        print(f"{r['scene']:12} {r['solver']:8} {r['dt']:>7g} {r['us_per_step']:>9.1f} {r['frame_share']:>10.1%} "
              f"{r['worst_gap_m']:>13.2e}  {blew}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
