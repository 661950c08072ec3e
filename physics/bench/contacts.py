"""Contact benchmark, whole World steps: `python -m physics.bench.contacts [--n 100]
[--solver impulse lcp penalty] [--scene heap resting pyramid] [--dt 0.003] [--settle 1.5]
[--steps 20] [--repeat 5] [--json]`.

Scenes (boxes of half extent 0.1 m and 1 kg on a static ground plane, every solver at
its defaults, Δt 3 ms):
- `heap`: n boxes dropped into a heap — 4 layers of a square grid 0.21 m apart, every
  other layer shifted by half a cell (a box lands on the corners of four), 1 cm apart
  vertically, each jittered by 1 cm, tilted up to 8° and turned up to 30° (seeded);
  stepped `--settle` seconds (untimed), then timed;
- `resting`: n boxes on a grid 0.3 m apart resting on the ground (4 corner contacts each,
  no box–box pairs), stepped 0.3 s first;
- `pyramid`: a pyramid of r(r + 1)/2 boxes, r rows (the least with at least n boxes: 55 is
  10 rows, 210 is 20), faces touching, stepped 0.3 s first (pyramid_world).
`--dt` steps every scene at that Δt instead of the World's.

Per scene and solver: ms per step — the process CPU time of `--steps` steps (one
`advance_steps` call: detection, contact rows, the solve, integration), the smallest of
`--repeat` runs (the figure to compare on a shared machine); the wall clock of the same
runs (median); the contacts and touching pairs after the run, the highest box (m) and the
fastest box speed (m/s): a settled heap stays put. Kernels are compiled beforehand. A
run that blows up is a row too (when, why, its wall time), and the others go on.
`--stages`: also the CPU ms of one detection (collision) and one writing of the contact rows
(with the warm start's look-up) at the final poses, each the smallest of `--repeat` runs of
`--steps` calls; the rest of a step is the solve (prepare, sweeps, integration).
"""
import argparse
import math
import statistics
import sys
import time

import numpy as np

from ..contacts import find_contacts, write_contact_rows
from ..quat import q_from_euler_deg
from ..shapes import Box, Plane
from ..solvers import FAMILIES
from ..world import SimulationBlowUp, World
from . import print_records

HALF = 0.1
SOLVERS = tuple(FAMILIES)


def heap_world(solver, n=100, seed=0):
    """n boxes dropped into a heap on the ground (module docstring)."""
    w = World(solver=solver)
    w.add_body("ground", Plane(), static=True)
    rng = np.random.default_rng(seed)
    layers = 4
    per = int(math.ceil(n / layers))
    side = int(math.ceil(math.sqrt(per)))
    for k in range(n):
        layer, j = divmod(k, per)
        shift = 0.105 * (layer % 2)
        pos = np.array([0.21 * (j % side) + shift, 0.21 * (j // side) + shift, 0.105 + 0.21 * layer])
        pos += rng.uniform(-0.01, 0.01, 3)
        q = q_from_euler_deg(rng.uniform(-8, 8), rng.uniform(-8, 8), rng.uniform(-30, 30))
        w.add_body(f"box{k}", Box((HALF, HALF, HALF)), mass=1.0, position=tuple(pos), orientation=tuple(q))
    return w


def resting_world(solver, n=100):
    """n boxes on a grid 0.3 m apart, resting on the ground."""
    w = World(solver=solver)
    w.add_body("ground", Plane(), static=True)
    side = int(math.ceil(math.sqrt(n)))
    for k in range(n):
        w.add_body(f"box{k}", Box((HALF, HALF, HALF)), mass=1.0,
                   position=(0.3 * (k % side), 0.3 * (k // side), HALF - 0.001))
    return w


def pyramid_world(solver, rows=10, dt=None):
    """A pyramid of rows (rows + 1)/2 boxes on the ground: `rows` boxes side by side in
    the bottom row along x, one fewer in each row above, each row centred on the one
    below, the faces touching (no gap, no overlap); every box 1 kg; `dt` None: the World's."""
    w = World(solver=solver) if dt is None else World(solver=solver, dt=dt)
    w.add_body("ground", Plane(), static=True)
    k = 0
    for layer in range(rows):
        n = rows - layer
        for j in range(n):
            w.add_body(f"box{k}", Box((HALF, HALF, HALF)), mass=1.0,
                       position=(2 * HALF * (j - (n - 1) / 2), 0.0, HALF + 2 * HALF * layer))
            k += 1
    return w


def time_steps(world, steps, repeat):
    """(smallest CPU ms per step, median wall ms per step) over `repeat` runs of `steps` steps."""
    cpu, wall = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        world.advance_steps(steps)
        wall.append((time.perf_counter() - t0) / steps * 1e3)
        cpu.append((time.process_time() - c0) / steps * 1e3)
    return min(cpu), statistics.median(wall)


def stage_ms(world, steps, repeat):
    """(detection, contact rows) CPU ms per call at the world's poses (smallest of `repeat`)."""
    data, bodies = world.contact_data(), world.kernel_bundles(world.solvers[world.solver].free_rows_used(world))[1]
    out = []
    for call in (lambda: find_contacts(data, bodies), lambda: write_contact_rows(data, bodies, world.dt, m)):
        m = find_contacts(data, bodies)
        best = math.inf
        for _ in range(repeat):
            c0 = time.process_time()
            for _ in range(steps):
                call()
            best = min(best, (time.process_time() - c0) / steps * 1e3)
        out.append(best)
    return out


def pyramid_rows(n):
    """The fewest rows of a pyramid of at least n boxes."""
    return int(math.ceil((math.sqrt(8 * n + 1) - 1) / 2 - 1e-9))


def scene_world(scene, solver, n, dt=None):
    """The bench's world of `scene` (module docstring) on `solver`, at `dt` (None: the World's)."""
    if scene == "pyramid":
        return pyramid_world(solver, pyramid_rows(n), dt)
    world = heap_world(solver, n) if scene == "heap" else resting_world(solver, n)
    if dt is not None:
        world.dt = dt
    return world


def run(scene, solver, n, settle, steps, repeat, stages=False, dt=None):
    """One row: the timings, or where the run blew up (a row too: the others go on)."""
    world = scene_world(scene, solver, n, dt)
    n = world.model.bodies.count - 2             # less the world and the ground
    t0 = time.perf_counter()
    try:
        return _run(world, scene, solver, n, settle, steps, repeat, stages)
    except SimulationBlowUp as e:
        return {"scene": scene, "solver": solver, "bodies": n, "dt": world.dt, "blew_up_at_s": e.time,
                "reason": e.reason, "wall_s": time.perf_counter() - t0}


def _run(world, scene, solver, n, settle, steps, repeat, stages):
    world.step()                                    # compile / load the kernels
    world.advance_steps(max(0, int(round((settle if scene == "heap" else 0.3) / world.dt)) - 1))
    cpu_ms, wall_ms = time_steps(world, steps, repeat)
    c = world.contacts()
    pos, vel = world.state.bodies.pos[2:], world.state.bodies.vel[2:]
    extra = {}
    if stages:
        extra = dict(zip(("detect_ms", "rows_ms"), stage_ms(world, steps, repeat)))
    return {**extra, "scene": scene, "solver": solver, "bodies": n, "dt": world.dt, "cpu_ms_per_step": cpu_ms,
            "wall_ms_per_step": wall_ms, "contacts": int(len(c["depth"])),
            "pairs": int(len({tuple(p) for p in c["bodies"].tolist()})),
            "top_m": float(pos[:, 2].max()), "max_speed": float(np.linalg.norm(vel, axis=1).max())}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m physics.bench.contacts", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100, help="boxes")
    p.add_argument("--solver", nargs="*", choices=SOLVERS, default=list(SOLVERS), help="solver families")
    p.add_argument("--scene", nargs="*", choices=("heap", "resting", "pyramid"), default=["heap", "resting", "pyramid"])
    p.add_argument("--dt", type=float, default=None, help="step (s); default: the World's")
    p.add_argument("--settle", type=float, default=1.5, help="simulated seconds before timing the heap")
    p.add_argument("--steps", type=int, default=20, help="steps per timed run")
    p.add_argument("--repeat", type=int, default=5, help="timed runs; the smallest CPU time is reported")
    p.add_argument("--stages", action="store_true", help="also time detection and the contact rows alone")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    args = p.parse_args(argv)
    records = [run(scene, solver, args.n, args.settle, args.steps, args.repeat, args.stages, args.dt)
               for scene in args.scene for solver in args.solver]
    print_records(records, args.json,
                  f"{'scene':8} {'solver':8} {'bodies':>6} {'cpu ms/step':>11} {'wall ms/step':>12} "
                  f"{'contacts':>8} {'pairs':>6} {'top m':>6} {'max speed':>9}",
                  lambda r: (f"{r['scene']:8} {r['solver']:8} {r['bodies']:6d} blew up at t = {r['blew_up_at_s']:.3f} s "
                             f"(after {r['wall_s']:.1f} s of wall time): {r['reason']}") if "blew_up_at_s" in r else
                            (f"{r['scene']:8} {r['solver']:8} {r['bodies']:6d} {r['cpu_ms_per_step']:11.3f} "
                             f"{r['wall_ms_per_step']:12.3f} {r['contacts']:8d} {r['pairs']:6d} {r['top_m']:6.3f} "
                             f"{r['max_speed']:9.2e}"
                             + (f"  detect {r['detect_ms']:.3f} ms, rows {r['rows_ms']:.3f} ms" if "detect_ms" in r
                                else "")), "records")


if __name__ == "__main__":
    sys.exit(main())
