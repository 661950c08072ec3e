"""Cold compile time of the physics kernels, per kernel: `python -m shell.compile_times
[--part FAMILY] [--kernels-first] [--scene FILE] [--json FILE]`; or the first launch's
warm-up as the window runs it: `python -m shell.compile_times --launch [--scene FILE]`.

Runs the first-launch warm-up (shell/warmup.py: every shipped scene with every solver
family, or with the one family `--part` names, after its shared kernels with
`--kernels-first`; or, with `--scene`, that one scene under its own family or `--part`'s:
the step the window's first process compiles before the scene can load) in a fresh
interpreter with an empty numba cache, and
reports from numba's "numba:compile" events, in the order they compiled: each kernel
specialization's exclusive CPU time (its own typing, lowering and LLVM work, without the
njit functions it calls that compile as separate dispatchers) and inclusive time, then
kernels compiled more than once (one line per signature: int vs float, readonly vs
writable, C vs A layout arrays each compile again), per warm-up step the CPU seconds, and
the total (process CPU time). Timings are CPU time of the one process, so the other
processes on the machine change them little.

`--launch`: the window's warm-up processes (shell/warmup.py WarmupJob for the scene,
default the app's, with an empty numba cache) without a window: wall-clock seconds until
the scene's kernels are cached (the window would load it) and until all are, and each
process's steps with their planned weight and CPU seconds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cpu_listener():
    """A numba event listener: numba:compile events → [name, signature, exclusive s,
    inclusive s, depth] in start order (`.done`)."""
    from numba.core.event import Listener

    class CpuListener(Listener):
        def __init__(self):
            self.stack, self.done = [], []

        def on_start(self, event):
            d = event.data["dispatcher"]
            name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
            sig = ", ".join(str(a) for a in event.data["args"])
            entry = [name, sig, 0.0, 0.0, len(self.stack)]
            self.done.append(entry)
            self.stack.append([entry, time.process_time(), 0.0])

        def on_end(self, event):
            entry, t0, nested = self.stack.pop()
            total = time.process_time() - t0
            entry[2], entry[3] = total - nested, total
            if self.stack:
                self.stack[-1][2] += total

    return CpuListener()


def measure(part=None, kernels_first=False, scene=None):
    """In this process (its NUMBA_CACHE_DIR should be empty): run the warm-up (of the
    family `part`, after its warm_up_kernels if `kernels_first`; of the one `scene` file)
    with a compile listener; returns a dict (steps, compiles, signatures, total_cpu_s)."""
    from numba.core.event import install_listener
    from shell import warmup
    listener = _cpu_listener()
    t_start = time.process_time()
    steps = []
    with install_listener("numba:compile", listener):
        import physics          # noqa: F401  (imports count as part of the first step)
        if scene is not None:
            part = part or (warmup.scene_needs(scene) or warmup.default_needs())[0]
            todo = [(Path(scene), part)]
        else:
            todo = warmup.steps(family=part)
        if kernels_first and part is not None:
            todo = [(warmup.KERNELS, part)] + todo
        for path, family in todo:
            t0 = time.process_time()
            n0 = len(listener.done)
            warmup.exercise(path, family)
            steps.append({"step": warmup.label(path, family), "cpu_s": round(time.process_time() - t0, 2),
                          "compiles": len(listener.done) - n0})
    total = time.process_time() - t_start
    return {"part": part, "scene": None if scene is None else str(scene), "total_cpu_s": round(total, 1),
            "steps": steps,
            "compiles": [{"kernel": n, "signature": s, "exclusive_s": round(e, 2), "inclusive_s": round(i, 2),
                          "depth": d} for n, s, e, i, d in listener.done],
            "signatures": _signatures()}


def _signatures():
    """{kernel: [signatures]} of every physics dispatcher with more than one."""
    from numba.core.registry import CPUDispatcher
    out = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("physics"):
            continue
        for attr, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == name and len(obj.signatures) > 1:
                out[f"{name}.{attr}"] = [", ".join(str(t) for t in sig) for sig in obj.signatures]
    return out


def report(result, out=sys.stdout):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    what = (f"scene {result['scene']} ({result['part']})" if result.get("scene")
            else f"warm-up part {result['part'] or 'all'}")
    p(f"cold compile, {what}: {result['total_cpu_s']:.1f} s CPU")
    p("\nper step (CPU s, kernels compiled):")
    for s in result["steps"]:
        p(f"  {s['cpu_s']:7.1f}  {s['compiles']:3d}  {s['step']}")
    p("\nper kernel, in compile order (exclusive / inclusive CPU s; indented: compiled inside its caller):")
    for c in result["compiles"]:
        p(f"  {c['exclusive_s']:6.2f} {c['inclusive_s']:6.2f}  {'  ' * c['depth']}{c['kernel']}")
    by_kernel = {}
    for c in result["compiles"]:
        by_kernel.setdefault(c["kernel"], []).append(c)
    p("\nlargest exclusive totals per kernel (CPU s, specializations):")
    tops = sorted(by_kernel.items(), key=lambda kv: -sum(c["exclusive_s"] for c in kv[1]))[:25]
    for k, cs in tops:
        p(f"  {sum(c['exclusive_s'] for c in cs):7.2f}  {len(cs)}  {k}")
    if result["signatures"]:
        p("\nkernels with more than one specialization:")
        for k, sigs in result["signatures"].items():
            p(f"  {k}:")
            for s in sigs:
                p(f"      ({s})")


def launch(scene):
    """The window's warm-up for `scene` on an empty cache, timed; prints the report."""
    from shell import warmup
    scene = Path(scene).resolve()
    with tempfile.TemporaryDirectory(prefix="sharnir-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        t0 = time.perf_counter()
        job = warmup.WarmupJob(env=env, mark=False, needs=warmup.scene_needs(scene), scene=scene)
        ready = None
        try:
            while not job.done:
                if ready is None and job.ready:
                    ready = time.perf_counter() - t0
                time.sleep(0.1)
        finally:
            job.kill()
        total = time.perf_counter() - t0
    print(f"first launch's warm-up for {scene.name} ({len(job.procs)} processes, no window, empty cache)")
    print(f"  the scene's kernels cached after {ready if ready is not None else total:.1f} s wall")
    print(f"  every kernel cached after {total:.1f} s wall ({'ok' if job.ok else 'FAILED'})")
    for k, p in enumerate(job.procs):
        print(f"  process {k}: {sum(cpu for _, _, cpu in p.cpu):.1f} s CPU (planned weight, CPU s):")
        for weight, name, cpu in p.cpu:
            if cpu >= 0.5:
                print(f"    {weight:6.1f} {cpu:6.1f}  {name}")
    return 0 if job.ok else 1


def main(argv=None):
    from shell.warmup import families
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=tuple(families()), default=None, help="one solver family's steps only")
    ap.add_argument("--kernels-first", action="store_true",
                    help="with --part: the family's shared kernels (warm_up_kernels) as a step of their own first")
    ap.add_argument("--scene", help="this scene file alone (under its own family, or --part's)")
    ap.add_argument("--json", help="also write the measurement to this file")
    ap.add_argument("--launch", action="store_true",
                    help="the window's warm-up processes for --scene (default the app's) without a window, timed")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)   # the measuring child
    args = ap.parse_args(argv)
    if args.launch:
        from shell.cli import DEFAULT_SCENE
        return launch(args.scene or DEFAULT_SCENE)
    if args.inside:
        result = measure(args.part, args.kernels_first, args.scene)
        print(json.dumps(result))
        return 0
    with tempfile.TemporaryDirectory(prefix="sharnir-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "shell.compile_times", "--inside"] + (["--part", args.part] if args.part else [])
        cmd += ["--kernels-first"] if args.kernels_first else []
        cmd += ["--scene", str(Path(args.scene).resolve())] if args.scene else []
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=str(ROOT), capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(wall, 1)
    report(result)
    print(f"\nwall clock of the whole process: {wall:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
