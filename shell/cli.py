"""Command line (README.md, Headless use: the public contract); app.py is its thin entry point.

    python app.py [SCENE]                                  the viewer (scenes/gallery.toml by default;
                                                           a .urdf opens its robot in a default scene)
    python app.py SCENE --frames N --screenshot FILE.png   real window, N frames, save the last
    python app.py SCENE --headless --duration SECONDS [--solver FAMILY] [--dt SECONDS]
        [--set KEY=VALUE ...] [--record FILE.csv] [--screenshot FILE.png] [--record-video FILE.mp4]
    python app.py SCENE --frames N --record-video FILE.mp4   the window's frames as an MP4 (shell/video.py)

Exit status: 0 on success; 2 on bad input (one line on stderr, never a traceback) or an
output that cannot be written (with the operating system's reason); 3 if the simulation
blew up (with the simulated time it happened and why); 1 on an unexpected internal error
(one line too); 130 when interrupted (Ctrl-C), 143 on SIGTERM (shell/lifetime.py: the
warm-up's processes end too).

Outputs are checked before anything runs (check_output): a known extension that says
the format written (`.csv` for --record, which also takes an existing device or pipe
such as /dev/stdout; `.mp4` for --record-video; `.png` for --screenshot), a folder that
exists, a file that can be created there (the probe leaves nothing behind), and for a
video at most MAX_FRAMES frames. ffmpeg's messages are shown with --verbose only.

`--set` keys are those of physics/io/scene.py (world.dt, solver.KEY, body.NAME.KEY,
joint.NAME.KEY, chain.NAME.KEY, robot.NAME.KEY, joint.ROBOT/JOINT.KEY); `--solver` and
`--dt` win over the scene and `--set`.
A headless run steps round(duration / dt) fixed steps, checks the joints' constraint
error after every one, and prints a one-line summary on stdout (with the largest
error); `--record` also writes one CSV row per step (physics/io/record.py).

Bounds: --duration 0 … 1e6 s (MAX_DURATION) and at most 1e9 steps (MAX_STEPS, the
Python API's World.advance bound too: physics/bounds.py);
--dt 1e-6 … 0.1 s (World.dt); --frames 1 … 1e6 (MAX_FRAMES); the scene's own numbers
are bounded by physics/io/scene.py. Anything beyond is bad input (exit status 2).
"""
import argparse
import math
import os
import stat
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SCENE = os.path.join(ROOT, "scenes", "gallery.toml")
MAX_FRAMES = 10 ** 6   # viewer frames with --frames (4.6 h at 60 frames/s), video frames (9.3 h at 30)
OUTPUTS = {"record": (".csv", "a CSV table"), "record_video": (".mp4", "an MP4 video"),
           "screenshot": (".png", "a PNG image")}


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
    p.add_argument("--verbose", action="store_true", help="show ffmpeg's own messages while recording a video")
    args = p.parse_args(argv)
    if args.headless:
        if args.duration is None:
            raise UsageError("--headless needs --duration SECONDS")
        if not (math.isfinite(args.duration) and args.duration >= 0):
            raise UsageError(f"--duration must be a number of seconds >= 0, got {args.duration:g}")
        from physics.bounds import MAX_DURATION
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
    for dest in OUTPUTS:
        if getattr(args, dest) is not None:
            check_output(dest, getattr(args, dest))
    if args.record_video and args.headless:
        from shell.video import DEFAULT_FPS, frame_count
        frames = frame_count(args.duration, DEFAULT_FPS)
        if frames > MAX_FRAMES:
            raise UsageError(f"--record-video: --duration {args.duration:g} s is {frames:.3g} frames at "
                             f"{DEFAULT_FPS} per simulated second; a video takes at most {MAX_FRAMES:.0e} "
                             "(shorten --duration)")
    return args


def flag_of(dest):
    return "--" + dest.replace("_", "-")


def check_output(dest, path):
    """Refuse (UsageError) an output path that cannot take what is written there:
    an empty name, an extension other than the format's, a missing folder, a file that
    cannot be created or opened for writing (the operating system's reason). Creates
    nothing: a probe file made to ask the OS is removed at once, an existing file is
    opened without truncating it."""
    flag, (ext, what) = flag_of(dest), OUTPUTS[dest]
    if not path:
        raise UsageError(f"{flag}: expected a file name ending in {ext}, got an empty one")
    stream = False
    try:
        mode = os.stat(path).st_mode
        stream = stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)
    except (OSError, ValueError):
        pass
    if not (stream and dest == "record") and os.path.splitext(path)[1].lower() != ext:
        raise UsageError(f"{flag} {path}: expected a file name ending in {ext} ({what} is written there)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path}: the folder {folder} does not exist")
    try:
        if os.path.lexists(path):
            os.close(os.open(path, os.O_WRONLY))
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            os.unlink(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{flag} {path}: cannot write it: {getattr(e, 'strerror', None) or e}") from None


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
    render_world = None
    if args.screenshot:
        try:
            from render.offscreen import render_world
        except (ImportError, AttributeError) as e:
            raise UsageError(f"--screenshot with --headless needs the offscreen renderer "
                             f"(render.offscreen.render_world), which is not available: {e}") from None
    steps = int(round(args.duration / world.dt))
    from physics.bounds import MAX_STEPS
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
            from shell.video import VideoWriteError, record_headless
            try:
                video = record_headless(world, args.record_video, args.duration, on_step=after_step)
            except (SimulationBlowUp, VideoWriteError):
                raise
            except OSError as e:
                if e.filename not in (args.record_video, None) or not e.strerror:
                    raise
                raise VideoWriteError(e.errno, e.strerror, args.record_video) from None
            except Exception as e:       # no EGL, no ffmpeg: say so, no traceback
                print(f"error: --record-video {args.record_video}: {type(e).__name__}: {e}", file=sys.stderr)
                return 1
        else:
            for _ in range(steps):
                world.step()
                after_step()
        world.check_runaway()             # the steps since the last periodic check
    except SimulationBlowUp as e:
        print(f"{args.scene}: {e}", file=sys.stderr)
        status = 3
    except OSError as e:          # writing the record or the video: the disk is full, …
        from shell.video import VideoWriteError
        if isinstance(e, VideoWriteError):
            if record is not None:
                record.close()
            raise UsageError(f"--record-video {args.record_video}: cannot write it: {e.strerror}") from None
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
    if render_world is not None:
        try:
            rgb, _ = render_world(world, width=1280, height=720)
        except Exception as e:  # no GL context on this machine, …: say so, no traceback
            print(f"error: --screenshot {args.screenshot}: the offscreen renderer failed: "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
            return 1
        write_screenshot(args.screenshot, rgb)
    return 0


def write_screenshot(path, rgb):
    """The PNG, or a UsageError with the operating system's reason it cannot be written."""
    from render.frame import write_png
    try:
        write_png(path, rgb)
    except OSError as e:
        raise UsageError(f"--screenshot {path}: cannot write it: {e.strerror or e}") from None


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
    except OSError as e:          # writing the screenshot or the video
        for dest in ("screenshot", "record_video"):
            path = getattr(args, dest)
            if path and e.filename == path and e.strerror:
                raise UsageError(f"{flag_of(dest)} {path}: cannot write it: {e.strerror}") from None
        raise
    except Exception as e:
        if type(e).__name__ == "NoSuchDisplayException":      # pyglet's, without importing pyglet here
            raise UsageError(f"the 3D viewer needs a display ({e}); run under xvfb-run, "
                             "or with --headless") from None
        raise


def main(argv=None):
    """Run the command line; returns the exit status."""
    from shell.lifetime import exit_on_signals
    exit_on_signals()
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        if args.verbose:
            import shell.video
            shell.video.VERBOSE = True
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
