"""`python -m shell.bench [WxH] [--scene NAME] [--frames N] [--mode full light] [--scale S]`:
frames per second of the real window (scene, panel, physics, flip), per rendering mode
(render/quality.py), and the CPU time per frame of all the process's threads (Python
and llvmpipe's rasterizer: less sensitive to other load); needs a display, e.g.
`xvfb-run -a -s "-screen 0 1920x1080x24" python -m shell.bench 1728x972`."""
import sys
import time
from pathlib import Path

import physics

ROOT = Path(__file__).resolve().parent.parent


def window_fps(scene, size=(1728, 972), frames=30, mode="full", warmup=3, scale=None):
    """Frames per second of the window's loop (events, physics, drawing, flip) on `scene`."""
    import pyglet
    pyglet.options["dpi_scaling"] = "stretch"
    from shell.window import ViewerWindow, _warm_up
    from render.quality import MODES
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
    p = argparse.ArgumentParser(prog="python -m shell.bench")
    p.add_argument("size", nargs="?", default="1728x972", metavar="WxH", help="window size")
    p.add_argument("--scene", default="gallery", help="the scene (name in scenes/ or a path)")
    p.add_argument("--frames", type=int, default=30)
    p.add_argument("--mode", nargs="+", default=["full", "light"], choices=["full", "light"])
    p.add_argument("--scale", type=float, help="override the mode's resolution scale")
    args = p.parse_args(argv)
    w, h = (int(v) for v in args.size.lower().split("x"))
    scene = Path(args.scene)
    if not scene.exists():
        scene = ROOT / "scenes" / f"{args.scene}.toml"
    for mode in args.mode:
        fps, gl, cpu_ms = window_fps(scene, (w, h), args.frames, mode, scale=args.scale)
        scale = f" scale {args.scale:g}" if args.scale else ""
        print(f"{scene.stem:12} {w}x{h} {mode:5}{scale} {fps:6.2f} fps, {cpu_ms:6.0f} ms CPU per frame  ({gl})",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
