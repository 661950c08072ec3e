"""The runaway watch's margins (physics/runaway.py RunawayWatch): `python -m physics.bench.runaway
[--duration 20] [--scene …] [--solver FAMILY[:OPTION,…] …] [--json]`.

Every scene in scenes/ under every solver family at its defaults (or the solvers named:
a family's options as in python -m physics.bench, e.g. a penalty preset), advanced 1/60 s
at a time as the window does, for
`--duration` simulated seconds (rope_tow: its 60 s program). Per run, the largest share of
each check's threshold it reached (1 = flagged): energy since the start, energy over the
sliding window, a free body's speed, a joint's gap; and when and why it was flagged. A
shipped scene near 1 would be a false alarm waiting to happen: the watch's tolerances
are set from this table (the class docstring gives the figures).
"""
import argparse
import sys
from pathlib import Path

from ..io.scene import load_scene
from ..solvers import FAMILIES
from ..world import SimulationBlowUp
from . import print_records

SCENES = Path(__file__).resolve().parents[2] / "scenes"
FRAME_S = 1.0 / 60.0
LONG = {"rope_tow": 60.0}       # scenes whose program runs longer


def run(path, solver, duration):
    """One record: scene, solver (FAMILY or FAMILY:OPTION,…: physics.bench.solver_world), margins
    (start, window, speed, gap), flagged (t, why)."""
    family, _, option = solver.partition(":")
    world = load_scene(path, {"solver.kind": f'"{family}"'})
    if option:
        world.configure(family, **world.active_solver.options(option))
    record = {"scene": Path(path).stem, "solver": solver, "flagged_at_s": None, "why": ""}
    steps = max(1, int(round(FRAME_S / world.dt)))
    end = LONG.get(Path(path).stem, duration)
    try:
        while world.time < end - 1e-9:
            world.advance_steps(steps)
        world.check_runaway()
    except SimulationBlowUp as e:
        record.update(flagged_at_s=round(e.time, 3), why=e.reason)
    record.update(world._watch.margins if world._watch is not None else {})
    return record


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m physics.bench.runaway", description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=20.0, help="simulated seconds per scene")
    p.add_argument("--scene", nargs="*", help="scene files (default: every scene in scenes/)")
    p.add_argument("--solver", nargs="*", help="FAMILY or FAMILY:OPTION,… (as python -m physics.bench; "
                                               "default: every family at its defaults)")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    args = p.parse_args(argv)
    paths = sorted(SCENES.glob("*.toml")) if not args.scene else [Path(s) for s in args.scene]
    records = [run(path, solver, args.duration) for path in paths for solver in (args.solver or FAMILIES)]
    print_records(records, args.json,
                  f"{'scene':10} {'solver':17} {'start':>6} {'window':>6} {'speed':>6} {'gap':>6}  flagged",
                  lambda r: (f"{r['scene']:10} {r['solver']:17} {r.get('start', 0):6.3f} {r.get('window', 0):6.3f} "
                             f"{r.get('speed', 0):6.3f} {r.get('gap', 0):6.3f}  "
                             + (f"at {r['flagged_at_s']} s: {r['why']}" if r["flagged_at_s"] is not None else "-")),
                  "records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
