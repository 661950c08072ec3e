"""Write a PNG of every scene after 1 s of simulation (rope_tow: 9 s, while it turns) (offscreen EGL renderer, the same
drawing code as the window): `python scripts/screenshots.py [OUT_DIR]`."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import physics  # noqa: E402
from render.offscreen import render_world_png  # noqa: E402


SECONDS = {"rope_tow": 9.0}


def main(out="docs/screenshots"):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for scene in sorted((ROOT / "scenes").glob("*.toml")):
        world = physics.load_scene(scene)
        world.advance(SECONDS.get(scene.stem, 1.0))
        path = out / f"{scene.stem}.png"
        render_world_png(world, path, 960, 540)
        print(path)


if __name__ == "__main__":
    main(*sys.argv[1:2])
