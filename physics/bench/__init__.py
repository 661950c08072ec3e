"""Benchmarks: `python -m physics.bench [--n 10 100 1000] [--joint hinge ball]
[--solver FAMILY[:OPTION,…] …] [--dt 0.003] [--duration 1.0] [--repeat 5] [--json] [--startup]`.

For each chain (N capsule links of 0.1 m, 0.1 kg, released from horizontal) and each
solver (every family at its defaults unless `--solver` names some; an option is a
setting NAME=VALUE or the family's shorthand, e.g. a penalty preset's name or the impulse
family's ITERATIONSxSUBSTEPS with ε = 0: SolverBase.options): microseconds per step (wall
clock over the whole run, kernel compiled beforehand; the median of `--repeat` runs), the
largest joint gap (m) after `duration` simulated seconds and the largest over every step
of the run (an untimed rerun of the same trajectory), and what the family says of how it
ran (SolverBase.describe: e.g. which path). Also the process CPU time per step, the
smallest of the `--repeat` runs (`cpu us`): the figure to compare on a shared machine.
`--startup` also measures the import + first-step time in a fresh interpreter, cold
(empty numba cache) and warm (cache filled by the cold run).
`python -m physics.bench --scenes [options]` runs the scene bench instead
(physics/bench/scenes.py: every scene under every solver family at its defaults).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from ..builders import make_chain
from ..solvers import FAMILIES
from ..world import SimulationBlowUp, World

JOINTS = {"hinge": "revolute", "ball": "spherical"}


def max_gap(world):
    """Largest distance (m) between the two anchor points of any joint."""
    C = world.work.rows.C
    gaps = [np.linalg.norm(C[s:s + 3]) for s in world.model.joints.row_start]
    return float(max(gaps)) if gaps else 0.0


def solver_world(solver, **kwargs):
    """A World on `solver`: "FAMILY" or "FAMILY:OPTION,…" (each option NAME=VALUE or the
    family's shorthand: SolverBase.options), e.g. penalty:critical, impulse:10x1,method=iterative."""
    name, _, option = solver.partition(":")
    world = World(solver=name, **kwargs)
    if option:
        world.configure(name, **world.active_solver.options(option))
    return world


def run_chain(n, joint, solver, dt, duration, repeat=1):
    """solver: a spec of solver_world."""
    world = solver_world(solver, dt=dt)
    make_chain(world, links=n, joint=JOINTS[joint])
    world.step()                      # compile / load kernels outside the timing
    world.reset()
    steps = int(round(duration / dt))
    record = {"scene": "chain", "n": n, "joint": joint, "solver": solver, "dt": dt, **world.active_solver.describe(world)}
    times, cpu = [], []
    for _ in range(max(int(repeat), 1)):
        world.reset()
        c0 = time.process_time()
        t0 = time.perf_counter()
        try:
            world.advance_steps(steps)
            done = steps
            record["max_gap_m"] = max_gap(world)
            record["blew_up_at_s"] = None
        except SimulationBlowUp as e:
            done = max(int(round(e.time / dt)), 1)
            record["max_gap_m"] = float("nan")
            record["blew_up_at_s"] = round(e.time, 4)
        times.append((time.perf_counter() - t0) / done * 1e6)
        cpu.append((time.process_time() - c0) / done * 1e6)
    record["us_per_step"] = float(np.median(times))
    record["cpu_us_per_step"] = float(min(cpu))
    # the same trajectory again, one step at a time: the largest gap over the run
    world.reset()
    worst = 0.0
    try:
        for _ in range(steps):
            world.step()
            worst = max(worst, max_gap(world))
        record["worst_gap_m"] = worst
    except SimulationBlowUp:
        record["worst_gap_m"] = float("nan")
    return record


STARTUP_SNIPPET = (
    "import time; t0 = time.perf_counter(); import physics; from physics.builders import make_chain; "
    "t1 = time.perf_counter(); w = physics.World(); make_chain(w, links=10); "
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


def add_run_arguments(p, duration, repeat, repeat_help):
    """The options every benchmark here takes: --duration, --repeat, --json."""
    p.add_argument("--duration", type=float, default=duration, help="simulated seconds per run")
    p.add_argument("--repeat", type=int, default=repeat, help=repeat_help)
    p.add_argument("--json", action="store_true", help="print a JSON list of records")


def columns(spec, note=""):
    """(header, row) for print_records from column specs (key, title, width, format), e.g.
    ("rows_s", "rows s", 8, ".4f"); `note` ends the header."""
    header = " ".join(f"{title:>{width}}" for _, title, width, _ in spec) + (f"   ({note})" if note else "")

    def row(r):
        return " ".join(f"{r[key]:>{width}{fmt}}" for key, _, width, fmt in spec)
    return header, row


def print_records(records, as_json, header, row, key, **extra):
    """Print the records as JSON (the list; {key: records, **extra} when an extra is not
    None) or as a table: `header`, then `row(record)` for each record."""
    extra = {k: v for k, v in extra.items() if v is not None}
    if as_json:
        print(json.dumps({key: records, **extra} if extra else records, indent=1))
        return
    print(header)
    for r in records:
        print(row(r))


CHAIN_HEADER = (f"{'solver':24} {'joint':5} {'N':>5} {'dt (s)':>7} {'us/step':>9} {'cpu us':>8} {'max gap (m)':>12} "
                f"{'worst gap (m)':>13} {'path':>9}")


def chain_row(r):
    """One line of the chain table."""
    gap = f"{r['max_gap_m']:.2e}" if r["blew_up_at_s"] is None else f"blew up {r['blew_up_at_s']} s"
    worst = f"{r['worst_gap_m']:.2e}" if r["blew_up_at_s"] is None else "-"
    return (f"{r['solver']:24} {r['joint']:5} {r['n']:>5} {r['dt']:>7} {r['us_per_step']:>9.1f} "
            f"{r['cpu_us_per_step']:>8.1f} {gap:>12} "
            f"{worst:>13} {r.get('path', '-'):>9}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--scenes" in argv:                  # the scene bench (physics/bench/scenes.py)
        from .scenes import main as scenes_main
        return scenes_main([a for a in argv if a != "--scenes"])
    p = argparse.ArgumentParser(prog="python -m physics.bench", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000], help="chain lengths")
    p.add_argument("--joint", nargs="+", default=["hinge", "ball"], choices=sorted(JOINTS))
    p.add_argument("--solver", nargs="+",
                   default=list(FAMILIES),
                   help="FAMILY or FAMILY:OPTION,… (options: NAME=VALUE or the family's shorthand); default: every "
                        "family at its defaults")
    p.add_argument("--dt", type=float, default=0.003, help="step (s)")
    add_run_arguments(p, 1.0, 1, "timed runs per case (the median is reported)")
    p.add_argument("--startup", action="store_true", help="also time import + first step, cold and warm")
    args = p.parse_args(argv)
    records = [run_chain(n, j, s, args.dt, args.duration, args.repeat)
               for s in args.solver for j in args.joint for n in args.n]
    startup = startup_times() if args.startup else None
    print_records(records, args.json, CHAIN_HEADER, chain_row, "chains", startup=startup)
    if startup and not args.json:
        for label, v in startup.items():
            print(f"start-up {label}: import {v['import_s']:.2f} s, import + first step {v['first_step_s']:.2f} s")
    return 0

