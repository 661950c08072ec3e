"""Command line (README.md, Headless use: the public contract); app.py is its thin entry point.

    python app.py [SCENE]                                  the viewer (scenes/gallery.toml by default;
                                                           a .urdf opens its robot in a default scene)
    python app.py SCENE --frames N --screenshot FILE.png   real window, N frames, save the last
    python app.py SCENE --headless --duration SECONDS [--solver FAMILY] [--dt SECONDS]
        [--set KEY=VALUE ...] [--record FILE.csv] [--screenshot FILE.png] [--record-video FILE.mp4]
    python app.py SCENE --frames N --record-video FILE.mp4   the window's frames as an MP4 (shell/video.py)

Exit status: 0 on success; 2 on bad input (one line on stderr, never a traceback);
3 if the simulation blew up (with the simulated time it happened); 1 on an unexpected
internal error (one line too); 130 when interrupted.

`--set` keys are those of physics/io/scene.py (world.dt, solver.KEY, body.NAME.KEY,
joint.NAME.KEY, chain.NAME.KEY, robot.NAME.KEY, joint.ROBOT/JOINT.KEY); `--solver` and
`--dt` win over the scene and `--set`.
A headless run steps round(duration / dt) fixed steps, checks the joints' constraint
error after every one, and prints a one-line summary on stdout (with the largest
error); `--record` also writes one CSV row per step (physics/io/record.py).

Bounds: --duration 0 … 1e6 s (MAX_DURATION) and at most 1e9 steps (MAX_STEPS);
--dt 1e-6 … 0.1 s (World.dt); --frames 1 … 1e6 (MAX_FRAMES); the scene's own numbers
are bounded by physics/io/scene.py. Anything beyond is bad input (exit status 2).
"""
import argparse
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SCENE = os.path.join(ROOT, "scenes", "gallery.toml")
MAX_DURATION = 1e6     # s of simulated time in one headless run (11.6 days)
MAX_STEPS = 10 ** 9    # fixed steps in one headless run
MAX_FRAMES = 10 ** 6   # viewer frames with --frames (4.6 h at 60 frames/s)


class UsageError(Exception):
    """Bad input on the command line: one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    p = _Parser(prog="python app.py", description="Sharnir: a real-time 3D physics sandbox",
                epilog="exit status: 0 ok, 2 bad input, 3 the simulation blew up, 1 internal error")
    p.add_argument("scene", nargs="?", default=DEFAULT_SCENE,
                   help="scene file (TOML) or robot (URDF); default scenes/gallery.toml")
    p.add_argument("--headless", action="store_true", help="simulate without a window")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="simulated seconds (headless)")
    p.add_argument("--solver", metavar="FAMILY", help="the constraint solver family (physics/solvers: FAMILIES)")
    p.add_argument("--dt", type=float, metavar="SECONDS", help="fixed step (s)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scene value, e.g. joint.hinge.limits_deg=[-10,10] or chain.pendulum.links=50")
    p.add_argument("--record", metavar="FILE.csv", help="headless: write one CSV row per step")
    p.add_argument("--frames", type=int, metavar="N", help="viewer: run N frames, then exit")
    p.add_argument("--screenshot", metavar="FILE.png", help="save the last frame as a PNG")
    p.add_argument("--record-video", metavar="FILE.mp4",
                   help="write an MP4, one frame per 1/30 s of simulated time (with --frames N, or "
                        "--headless --duration SECONDS: the offscreen renderer, 1280x720)")
    args = p.parse_args(argv)
    if args.headless:
        if args.duration is None:
            raise UsageError("--headless needs --duration SECONDS")
        if not (math.isfinite(args.duration) and args.duration >= 0):
            raise UsageError(f"--duration must be a number of seconds >= 0, got {args.duration:g}")
        if args.duration > MAX_DURATION:
            raise UsageError(f"--duration must be at most {MAX_DURATION:g} s, got {args.duration:g}")
        if args.frames is not None:
            raise UsageError("--frames is for the viewer; a headless run takes --duration SECONDS")
    else:
        for flag, value in (("--duration", args.duration), ("--record", args.record)):
            if value is not None:
                raise UsageError(f"{flag} is for a headless run; add --headless")
        if args.frames is not None and not 1 <= args.frames <= MAX_FRAMES:
            raise UsageError(f"--frames must be between 1 and {MAX_FRAMES:g}, got {args.frames:g}")
    if args.solver is not None:
        from physics.solvers import FAMILIES
        if args.solver not in FAMILIES:
            raise UsageError(f"--solver must be one of {', '.join(FAMILIES)}, got {args.solver!r}")
    if args.dt is not None and not math.isfinite(args.dt):
        raise UsageError(f"--dt must be a finite number of seconds, got {args.dt!r}")
    for flag, value in (("--screenshot", args.screenshot), ("--record-video", args.record_video)):
        if value is not None:
            folder = os.path.dirname(os.path.abspath(value))
            if not os.path.isdir(folder):
                raise UsageError(f"{flag} {value}: the folder {folder} does not exist")
    return args


def overrides_from(pairs):
    """["KEY=VALUE", ...] → {KEY: VALUE} (later pairs win)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def _apply_solver_and_dt(world, args):
    if args.solver is not None:
        world.solver = args.solver
    if args.dt is not None:
        try:
            world.dt = args.dt
        except ValueError as e:
            raise UsageError(f"--dt: {e}") from None


def load_world(args):
    """The scene with --set, --solver and --dt applied (raises SceneError / UsageError)."""
    import physics
    world = physics.load_scene(args.scene, overrides_from(args.set))
    _apply_solver_and_dt(world, args)
    return world


def run_headless(args):
    from physics import SimulationBlowUp
    from physics.io.record import Recorder
    if sys.stderr.isatty():               # a person at a terminal: say why the first run is slow
        from shell.warmup import announce
        announce(sys.stderr)
    world = load_world(args)
    render_world_png = None
    if args.screenshot:
        try:
            from render.offscreen import render_world_png
        except (ImportError, AttributeError) as e:
            raise UsageError(f"--screenshot with --headless needs the offscreen renderer "
                             f"(render.offscreen.render_world_png), which is not available: {e}") from None
    steps = int(round(args.duration / world.dt))
    if steps > MAX_STEPS:
        raise UsageError(f"--duration {args.duration:g} s at dt = {world.dt:g} s is {steps:.3g} steps; "
                         f"a run takes at most {MAX_STEPS:.0e} (raise --dt or shorten --duration)")
    worst = world.max_constraint_error()
    record = rec = None
    if args.record:
        try:
            record = open(args.record, "w", newline="")
        except OSError as e:
            raise UsageError(f"--record {args.record}: {e.strerror or e}") from None
    t0 = time.perf_counter()
    status, write_error = 0, None
    video = None
    try:
        if record is not None:
            rec = Recorder(world, record)
            rec.header()

        def after_step():
            nonlocal worst
            worst = max(worst, world.max_constraint_error())    # every step, with or without --record
            if rec is not None:
                rec.row()

        if args.record_video:
            from shell.video import record_headless
            try:
                video = record_headless(world, args.record_video, args.duration, on_step=after_step)
            except SimulationBlowUp:
                raise
            except Exception as e:       # no EGL, no ffmpeg: say so, no traceback
                print(f"error: --record-video {args.record_video}: {type(e).__name__}: {e}", file=sys.stderr)
                return 1
        else:
            for _ in range(steps):
                world.step()
                after_step()
    except SimulationBlowUp as e:
        print(f"{args.scene}: {e}", file=sys.stderr)
        status = 3
    except OSError as e:          # writing the record: the disk is full, …
        write_error = e
    if record is not None:
        try:
            record.close()        # flushes: a full disk may show only here
        except OSError as e:
            write_error = write_error or e
    if write_error is not None and status == 0:
        raise UsageError(f"--record {args.record}: cannot write it: {write_error.strerror or write_error}")
    if status:
        return status
    wall = time.perf_counter() - t0
    print(f"{args.scene}: simulated {world.time:.4g} s in {steps} steps of {world.dt:g} s ({world.solver}), "
          f"wall {wall:.3g} s, largest constraint error {worst:.3g} (every step)")
    if video is not None:
        frames, _, (vw, vh) = video
        print(f"video: {args.record_video}: {frames} frames of {vw}x{vh} at 30 frames per simulated second")
    for feature, joints in world.unhonoured():      # settings this solver cannot honour: said once
        shown = ", ".join(joints[:5]) + (f" and {len(joints) - 5} more" if len(joints) > 5 else "")
        what = {"contacts": "contacts: bodies pass through each other",
                "restitution": "restitution: contacts do not bounce"}.get(feature, f"joint {feature}")
        print(f"note: the {world.solver} solver does not act on {what} ({shown}); "
              f"they are kept for the solvers that do")
    if render_world_png is not None:
        try:
            render_world_png(world, args.screenshot, width=1280, height=720)
        except Exception as e:  # no GL context on this machine, …: say so, no traceback
            print(f"error: --screenshot {args.screenshot}: the offscreen renderer failed: "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
            return 1
    return 0


def _import_viewer():
    try:
        from shell.window import run_viewer as viewer
    except ModuleNotFoundError as e:
        if e.name and (e.name in ("render", "shell") or e.name.startswith(("render.", "shell."))):
            raise UsageError("the 3D viewer is not available yet; run with --headless") from None
        raise UsageError(f"the 3D viewer cannot start: {e}; run with --headless") from None
    except (ImportError, AttributeError):
        raise UsageError("the 3D viewer is not available yet; run with --headless") from None
    return viewer


def run_viewer(args):
    overrides = overrides_from(args.set)
    load_world(args)                      # scene errors before a window opens (building compiles nothing)
    if args.solver is not None:
        overrides["solver.kind"] = args.solver
    if args.dt is not None:
        overrides["world.dt"] = repr(float(args.dt))
    try:
        kwargs = {"record_video": args.record_video} if args.record_video else {}
        return _import_viewer()(args.scene, overrides, frames=args.frames, screenshot=args.screenshot, **kwargs)
    except Exception as e:
        if type(e).__name__ == "NoSuchDisplayException":      # pyglet's, without importing pyglet here
            raise UsageError(f"the 3D viewer needs a display ({e}); run under xvfb-run, "
                             "or with --headless") from None
        raise


def main(argv=None):
    """Run the command line; returns the exit status."""
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        return run_headless(args) if args.headless else run_viewer(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # scene errors, and anything unexpected: one line, never a traceback
        from physics.io.scene import SceneError
        if isinstance(e, SceneError):
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
