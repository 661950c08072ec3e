"""Write a PNG of every scene (offscreen EGL renderer, the same drawing code as the
window): `python scripts/screenshots.py [OUT_DIR]`.

Each scene is shot at a moment that shows what it is about (SHOTS: the rope of
rope_swing whipping down at 0.5 s, before it hangs along its post; rope_tow at 9 s, the
robot turning with the rope taut behind it), from its [view]'s direction, framed
tightly on its bodies and ropes at that moment (render.frame.initial_camera, tight)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import physics  # noqa: E402
from render.frame import initial_camera, write_png  # noqa: E402
from render.offscreen import render_world  # noqa: E402

WIDTH, HEIGHT = 960, 540
SECONDS = 1.0                                  # the default moment
SHOTS = {"rope_swing": 0.5, "rope_tow": 9.0, "door": 0.8, "door_push": 0.2, "stack": 1.6, "four_bar": 0.5, "rocks": 1.5,
         "newtons_cradle": 0.6, "ball_drop": 0.62, "door_robot": 1.65, "xarm_pick": 4.6}


def shoot(scene, path, seconds=None, size=(WIDTH, HEIGHT)):
    world = physics.load_scene(scene)
    world.advance(SHOTS.get(Path(scene).stem, SECONDS) if seconds is None else seconds)
    cam = initial_camera(world, world.snapshot(), size[0] / size[1], tight=True)
    rgb, _ = render_world(world, size[0], size[1], camera=cam)
    write_png(path, rgb)
    return rgb


def main(out="docs/screenshots"):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for scene in sorted((ROOT / "scenes").glob("*.toml")):
        path = out / f"{scene.stem}.png"
        shoot(scene, path)
        print(path)


if __name__ == "__main__":
    main(*sys.argv[1:2])
