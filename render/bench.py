"""`python -m render.bench`: Python-side CPU time per frame spent drawing (physics
excluded), per scene, offscreen: the thread's CPU time in SceneRenderer.draw
(snapshot, instance uploads, draw calls), averaged over 200 frames.
The window's frame rate (scene, panel, physics, flip): `python -m shell.bench`."""
import sys
import time
from pathlib import Path

import physics
from .frame import RenderTarget, initial_camera
from .offscreen import egl_context
from .scene_renderer import SceneRenderer

ROOT = Path(__file__).resolve().parent.parent


def bench_scene(path, frames=200, size=(1280, 720)):
    ctx = egl_context()
    with ctx:
        world = physics.load_scene(path)
        snap = world.snapshot()
        renderer = SceneRenderer(ctx, snap)
        cam = initial_camera(world, snap)
        target = RenderTarget(ctx, size)
        total = 0.0
        for i in range(frames + 10):
            world.step()                          # physics outside the timing
            t0 = time.thread_time()
            renderer.draw(world.snapshot(), cam, size, target.msaa)
            if i >= 10:
                total += time.thread_time() - t0
            ctx.finish()
        renderer.release()
    return total / frames * 1e3


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python -m render.bench")
    p.parse_args(argv)
    for scene in sorted((ROOT / "scenes").glob("*.toml")):
        print(f"{scene.stem:12} {bench_scene(scene):6.2f} ms Python CPU per frame")


if __name__ == "__main__":
    sys.exit(main())
