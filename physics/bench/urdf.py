"""URDF load bench: `python -m physics.bench.urdf [--repeat 5] [--json]`.

Per shipped robot (assets/robots): the wall time, least of `--repeat` runs, to read and
check the URDF (read_urdf, its cache emptied first: the file is read and parsed each
time), to build it in a World (add_robot), and to load it as `python app.py ROBOT.urdf`
does (load_scene: the default scene, reading included) — warm: imports done and the
kernels the building calls loaded once before timing, the collision meshes' convex
pieces cached (urdf._mesh_pieces); `pieces s`: one build with that cache emptied (the
collision meshes read and their hulls made). The visual meshes are the viewer's to read
and are not included. Nothing is asserted here.
"""
import argparse
import sys
import time
from pathlib import Path

from ..io import urdf
from ..io.scene import load_scene
from ..world import World
from . import columns, print_records

ROBOTS = Path(__file__).resolve().parents[2] / "assets" / "robots"
MODELS = {"kuka_iiwa": ROBOTS / "kuka_iiwa" / "model.urdf", "xarm6": ROBOTS / "xarm6" / "xarm6_with_gripper.urdf"}


def wall(fn, repeat, before=None):
    """(least wall seconds over `repeat` calls of fn, its last result); `before` runs untimed first."""
    best, out = float("inf"), None
    for _ in range(max(int(repeat), 1)):
        if before is not None:
            before()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run(name, path, repeat):
    read_s, model = wall(lambda: urdf.read_urdf(path), repeat, urdf._CACHE.clear)
    build_s, _ = wall(lambda: urdf.add_robot(World(), model, name), repeat)
    load_s, world = wall(lambda: load_scene(path), repeat, urdf._CACHE.clear)
    pieces_s, _ = wall(lambda: urdf.add_robot(World(), model, name), 1, urdf._mesh_pieces.cache_clear)
    return {"robot": name, "links": len(model.links), "joints": len(model.joints), "bodies": len(world.bodies),
            "read_s": round(read_s, 5), "build_s": round(build_s, 5), "load_scene_s": round(load_s, 5),
            "pieces_s": round(pieces_s, 4)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    for path in MODELS.values():              # imports, kernels loaded or compiled, warnings said: not timed
        load_scene(path)
    records = [run(name, path, args.repeat) for name, path in MODELS.items()]
    print_records(records, args.json, *columns(
        [("robot", "robot", 10, ""), ("links", "links", 6, ""), ("joints", "joints", 7, ""), ("read_s", "read s", 8, ".4f"),
         ("build_s", "build s", 8, ".4f"), ("load_scene_s", "load_scene s", 13, ".4f"), ("pieces_s", "pieces s", 9, ".3f")],
        f"wall, least of {args.repeat}, warm"), "robots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
