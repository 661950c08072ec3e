"""Benchmarks: `python -m physics.bench [--n 10 100 1000] [--joint hinge ball]
[--solver penalty:paper penalty:critical] [--dt 0.003] [--duration 1.0] [--json] [--startup]`.

For each chain (N capsule links of 0.1 m, 0.1 kg, released from horizontal) and each
solver (`penalty:paper`, `penalty:critical`, `impulse:ITERATIONSxSUBSTEPS` with ε = 0, so
exactly that many iterations): microseconds per step (wall clock over the whole run, kernel compiled
beforehand) and the largest joint gap (m) after `duration` simulated seconds.
`--startup` also measures the import + first-step time in a fresh interpreter, cold
(empty numba cache) and warm (cache filled by the cold run).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .builders import make_chain
from .world import SimulationBlowUp, World

JOINTS = {"hinge": "revolute", "ball": "spherical"}


def max_gap(world):
    """Largest distance (m) between the two anchor points of any joint."""
    gaps = [np.linalg.norm(world.row_C[s:s + 3]) for s in world.joint_row_start]
    return float(max(gaps)) if gaps else 0.0


def run_chain(n, joint, solver, dt, duration):
    """solver: "penalty:PRESET" or "impulse:ITERATIONSxSUBSTEPS" (e.g. impulse:8x2)."""
    name, _, option = solver.partition(":")
    world = World(dt=dt, solver=name)
    if name == "penalty" and option:
        world.penalty_preset = option
    if name == "impulse" and option:
        iterations, _, substeps = option.partition("x")
        world.set_impulse_settings(iterations=int(iterations), substeps=int(substeps or 1), epsilon=0.0)
    make_chain(world, links=n, joint=JOINTS[joint])
    world.step()                      # compile / load kernels outside the timing
    world.reset()
    steps = int(round(duration / dt))
    record = {"scene": "chain", "n": n, "joint": joint, "solver": solver, "dt": dt}
    t0 = time.perf_counter()
    try:
        world.advance_steps(steps)
        record["max_gap_m"] = max_gap(world)
        record["blew_up_at_s"] = None
    except SimulationBlowUp as e:
        steps = max(int(round(e.time / dt)), 1)
        record["max_gap_m"] = float("nan")
        record["blew_up_at_s"] = round(e.time, 4)
    record["us_per_step"] = (time.perf_counter() - t0) / steps * 1e6
    return record


STARTUP_SNIPPET = (
    "import time; t0 = time.perf_counter(); import physics; from physics.builders import make_chain; "
    "t1 = time.perf_counter(); w = physics.World(penalty_preset='critical'); make_chain(w, links=10); "
    "w.step(); t2 = time.perf_counter(); print(t1 - t0, t2 - t0)")


def startup_times():
    """(import s, import + first step s) in a fresh interpreter, cold then warm cache."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        for label in ("cold", "warm"):
            res = subprocess.run([sys.executable, "-c", STARTUP_SNIPPET], env=env, capture_output=True,
                                 text=True, check=True)
            imp, first = map(float, res.stdout.split())
            out[label] = {"import_s": imp, "first_step_s": first}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m physics.bench", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000], help="chain lengths")
    p.add_argument("--joint", nargs="+", default=["hinge", "ball"], choices=sorted(JOINTS))
    p.add_argument("--solver", nargs="+",
                   default=["penalty:paper", "penalty:critical", "impulse:10x1", "impulse:4x4"],
                   help="penalty:PRESET or impulse:ITERATIONSxSUBSTEPS")
    p.add_argument("--dt", type=float, default=0.003, help="step (s)")
    p.add_argument("--duration", type=float, default=1.0, help="simulated seconds per run")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    p.add_argument("--startup", action="store_true", help="also time import + first step, cold and warm")
    args = p.parse_args(argv)
    records = [run_chain(n, j, s, args.dt, args.duration)
               for s in args.solver for j in args.joint for n in args.n]
    startup = startup_times() if args.startup else None
    if args.json:
        print(json.dumps(records if startup is None else {"chains": records, "startup": startup}, indent=1))
        return 0
    print(f"{'solver':18} {'joint':5} {'N':>5} {'dt (s)':>7} {'us/step':>9} {'max gap (m)':>12}")
    for r in records:
        gap = f"{r['max_gap_m']:.2e}" if r["blew_up_at_s"] is None else f"blew up {r['blew_up_at_s']} s"
        print(f"{r['solver']:18} {r['joint']:5} {r['n']:>5} {r['dt']:>7} {r['us_per_step']:>9.1f} {gap:>12}")
    if startup:
        for label, v in startup.items():
            print(f"start-up {label}: import {v['import_s']:.2f} s, import + first step {v['first_step_s']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
