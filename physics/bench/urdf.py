"""URDF load bench: `python -m physics.bench.urdf [--repeat 5] [--json]`.

Per shipped robot (assets/robots): the wall time, least of `--repeat` runs, to read and
check the URDF (read_urdf, its cache emptied first: the file is read and parsed each
time), to build it in a World (add_robot), and to load it as `python app.py ROBOT.urdf`
does (load_scene: the default scene, reading included) — warm: imports done and the
kernels the building calls loaded once before timing, the collision meshes' convex
pieces cached (urdf._mesh_pieces); `disk s`: one build with that cache emptied, the pieces
read from their disk cache (as in a later run of the app: mesh_shapes.link_pieces);
`pieces s`: one build with neither cache (the collision meshes read and their hulls made:
the first run). The visual meshes are the viewer's to read and are not included.
Nothing is asserted here.
"""
import argparse
import os
import sys
import tempfile
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
    disk_s, _ = wall(lambda: urdf.add_robot(World(), model, name), 1, urdf._mesh_pieces.cache_clear)
    with tempfile.TemporaryDirectory() as empty:
        os.environ["NUMBA_CACHE_DIR"], before = empty, os.environ.get("NUMBA_CACHE_DIR")
        try:
            pieces_s, _ = wall(lambda: urdf.add_robot(World(), model, name), 1, urdf._mesh_pieces.cache_clear)
        finally:
            if before is None:
                del os.environ["NUMBA_CACHE_DIR"]
            else:
                os.environ["NUMBA_CACHE_DIR"] = before
    return {"robot": name, "links": len(model.links), "joints": len(model.joints), "bodies": len(world.bodies),
            "read_s": round(read_s, 5), "build_s": round(build_s, 5), "load_scene_s": round(load_s, 5),
            "disk_s": round(disk_s, 4), "pieces_s": round(pieces_s, 4)}


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
         ("build_s", "build s", 8, ".4f"), ("load_scene_s", "load_scene s", 13, ".4f"), ("disk_s", "disk s", 8, ".3f"),
         ("pieces_s", "pieces s", 9, ".3f")],
        f"wall, least of {args.repeat}, warm"), "robots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
