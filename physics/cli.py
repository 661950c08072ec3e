"""Command line (DESIGN.md, public contract):

    python app.py [SCENE]                                  the viewer (scenes/gallery.toml by default)
    python app.py SCENE --frames N --screenshot FILE.png   real window, N frames, save the last
    python app.py SCENE --headless --duration SECONDS [--solver penalty|impulse|lcp] [--dt SECONDS]
        [--set KEY=VALUE ...] [--record FILE.csv] [--screenshot FILE.png]

Exit status 0 on success, 2 on bad input (one line on stderr), 3 if the simulation blew
up (with the time it happened), 1 on an unexpected internal error.
"""
import argparse
import math
import os
import sys
import time

DEFAULT_SCENE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenes", "gallery.toml")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    p = _Parser(prog="python app.py", description="Sharnir physics sandbox")
    p.add_argument("scene", nargs="?", default=DEFAULT_SCENE, help="scene file (TOML)")
    p.add_argument("--headless", action="store_true", help="simulate without a window")
    p.add_argument("--duration", type=float, help="simulated seconds (headless)")
    p.add_argument("--solver", help="penalty | impulse | lcp")
    p.add_argument("--dt", type=float, help="fixed step (s)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scene value, e.g. joint.hinge.friction=20 or solver.iterations=30")
    p.add_argument("--record", metavar="FILE.csv", help="write one CSV row per step")
    p.add_argument("--frames", type=int, help="viewer: run N frames then exit")
    p.add_argument("--screenshot", metavar="FILE.png", help="save the last frame as a PNG")
    return p.parse_args(argv)


def _overrides(pairs):
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--set expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def _load(args):
    import physics
    from physics.world import SOLVERS
    overrides = _overrides(args.set)
    world = physics.load_scene(args.scene, overrides)
    if args.solver is not None:
        if args.solver not in SOLVERS:
            known = "penalty, impulse, lcp"
            if args.solver in known.split(", "):
                raise UsageError(f"solver {args.solver!r} is not available yet; available: {', '.join(SOLVERS)}")
            raise UsageError(f"--solver must be one of {known}, got {args.solver!r}")
        world.solver = args.solver
    if args.dt is not None:
        try:
            world.dt = args.dt
        except ValueError as e:
            raise UsageError(f"--dt: {e}") from None
    return world


def run_headless(args):
    from physics import SimulationBlowUp
    from physics.record import Recorder
    if args.duration is None or not math.isfinite(args.duration) or args.duration < 0:
        raise UsageError("--headless needs --duration SECONDS (a number >= 0)")
    world = _load(args)
    steps = int(round(args.duration / world.dt))
    t0 = time.perf_counter()
    try:
        if args.record:
            try:
                f = open(args.record, "w", newline="")
            except OSError as e:
                raise UsageError(f"--record {args.record}: {e.strerror}") from None
            with f:
                rec = Recorder(world, f)
                rec.header()
                for _ in range(steps):
                    world.step()
                    rec.row()
        else:
            done = 0
            while done < steps:
                n = min(1000, steps - done)
                world.advance_steps(n)
                done += n
    except SimulationBlowUp as e:
        print(f"{args.scene}: {e}", file=sys.stderr)
        return 3
    wall = time.perf_counter() - t0
    print(f"{args.scene}: simulated {world.time:.3f} s in {steps} steps of {world.dt:g} s "
          f"({world.solver}), wall {wall:.2f} s, largest constraint error {world.max_constraint_error():.3g}")
    if args.screenshot:
        try:
            from render.offscreen import render_world_png
        except ImportError:
            raise UsageError("--screenshot with --headless needs the offscreen renderer, which is not "
                             "available yet") from None
        render_world_png(world, args.screenshot)
    return 0


def run_viewer(args):
    try:
        from render.viewer import run_viewer as viewer
    except ImportError:
        raise UsageError("the 3D viewer is not available yet; run with --headless --duration SECONDS") from None
    import physics
    physics.load_scene(args.scene, _overrides(args.set))       # report scene errors before a window opens
    return viewer(args.scene, _overrides(args.set), frames=args.frames, screenshot=args.screenshot)


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        return run_headless(args) if args.headless else run_viewer(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # scene errors and anything unexpected: one line, never a traceback
        from physics.scene import SceneError
        if isinstance(e, SceneError):
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
