"""Build bench: `python -m physics.bench.build [--links 1000 5000 10000 20000] [--repeat 3] [--json]`.

Per number of links: the CPU time (process time, the least of `--repeat` runs) to load
scenes/chain.toml with `chain.pendulum.links=N` (TOML, checks and World building through
make_chain: World.add_bodies / add_joints), to build the same chain with make_chain alone,
and to write its rows once (the first readout or step does it; compute_joint_rows, kernel
compiled beforehand). Nothing here is asserted: the tests check what is built, this says
how long it takes.
"""
import argparse
import sys
import time
from pathlib import Path

from ..builders import make_chain
from ..io.scene import load_scene
from ..world import World
from . import columns, print_records

CHAIN = Path(__file__).resolve().parents[2] / "scenes" / "chain.toml"


def cpu(fn, repeat):
    """(least CPU seconds over `repeat` calls of fn, its last result)."""
    best, out = float("inf"), None
    for _ in range(max(int(repeat), 1)):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def run(links, repeat):
    load_s, world = cpu(lambda: load_scene(CHAIN, {"chain.pendulum.links": str(links)}), repeat)

    def chain():
        w = World()
        make_chain(w, links=links)
        return w
    chain_s, _ = cpu(chain, repeat)
    rows_s, _ = cpu(world._refresh_rows, repeat)
    return {"links": links, "load_scene_s": round(load_s, 4), "make_chain_s": round(chain_s, 4),
            "rows_s": round(rows_s, 4), "us_per_link": round(load_s / links * 1e6, 2)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--links", type=int, nargs="+", default=[1000, 5000, 10000, 20000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    warm = World()
    make_chain(warm, links=2)
    warm._refresh_rows()                      # imports, kernels loaded or compiled: not timed
    records = [run(n, args.repeat) for n in args.links]
    print_records(records, args.json, *columns(
        [("links", "links", 7, ""), ("load_scene_s", "load_scene s", 13, ".3f"), ("make_chain_s", "make_chain s", 13, ".3f"),
         ("rows_s", "rows s", 8, ".4f"), ("us_per_link", "µs/link", 8, ".1f")], f"CPU, least of {args.repeat}"), "builds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
