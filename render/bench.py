"""`python -m render.bench`: Python-side CPU time per frame spent drawing (physics
excluded), per scene, offscreen: the thread's CPU time in SceneRenderer.draw
(snapshot, instance uploads, draw calls), averaged over 200 frames.

`python -m render.bench --window [WxH] [--scene NAME] [--frames N] [--mode full light]`:
frames per second of the real window (scene, panel, physics, flip), per rendering
mode (render/quality.py), and the CPU time per frame of all the process's threads
(Python and llvmpipe's rasterizer: less sensitive to other load); needs a display, e.g.
`xvfb-run -a -s "-screen 0 1920x1080x24" python -m render.bench --window 1728x972`."""
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


def window_fps(scene, size=(1728, 972), frames=30, mode="full", warmup=3, scale=None):
    """Frames per second of the window's loop (events, physics, drawing, flip) on `scene`."""
    import pyglet
    pyglet.options["dpi_scaling"] = "stretch"
    from shell.window import ViewerWindow, _warm_up
    from .quality import MODES
    world = physics.load_scene(scene)
    win = ViewerWindow(world, Path(scene).name, *size)
    try:
        q = MODES[mode]
        win.set_quality(q if scale is None else q.with_scale(scale))
        _warm_up(world)
        clock = time.perf_counter()
        t0 = None
        for i in range(frames + warmup):
            if i == warmup:
                win.ctx.finish()
                t0, c0 = time.perf_counter(), time.process_time()
            win.dispatch_events()
            now = time.perf_counter()
            win.driver.update(now - clock)
            clock = now
            win.render_frame()
            win.flip()
        win.ctx.finish()
        cpu_ms = (time.process_time() - c0) / frames * 1e3     # every thread: Python and llvmpipe's
        return frames / (time.perf_counter() - t0), win.gl_renderer, cpu_ms
    finally:
        win.close()


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python -m render.bench")
    p.add_argument("--window", nargs="?", const="1728x972", metavar="WxH",
                   help="measure the real window's frames per second (needs a display)")
    p.add_argument("--scene", default="gallery", help="with --window: the scene (name in scenes/ or a path)")
    p.add_argument("--frames", type=int, default=30)
    p.add_argument("--mode", nargs="+", default=["full", "light"], choices=["full", "light"])
    p.add_argument("--scale", type=float, help="with --window: override the mode's resolution scale")
    args = p.parse_args(argv)
    if args.window:
        w, h = (int(v) for v in args.window.lower().split("x"))
        scene = Path(args.scene)
        if not scene.exists():
            scene = ROOT / "scenes" / f"{args.scene}.toml"
        for mode in args.mode:
            fps, gl, cpu_ms = window_fps(scene, (w, h), args.frames, mode, scale=args.scale)
            scale = f" scale {args.scale:g}" if args.scale else ""
            print(f"{scene.stem:12} {w}x{h} {mode:5}{scale} {fps:6.2f} fps, {cpu_ms:6.0f} ms CPU per frame  ({gl})",
                  flush=True)
        return 0
    for scene in sorted((ROOT / "scenes").glob("*.toml")):
        print(f"{scene.stem:12} {bench_scene(scene):6.2f} ms Python CPU per frame")


if __name__ == "__main__":
    sys.exit(main())
