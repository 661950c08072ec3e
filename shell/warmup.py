"""First launch: compile the physics kernels once, with something on screen.

The physics kernels are numba functions cached on disk (`cache=True`). On a fresh
clone (or after an edit of a physics file) the first process that steps a world
compiles them: about 95 s on 2 cores, during which a window would show nothing. So
the window opens first and runs the warm-up below in subprocesses, which load the
shipped scenes and step each one with both solvers (bodies and joints, ropes, the
mouse spring: every kernel the app calls) through physics' public API. That fills
numba's on-disk cache; the window shows "Compiling physics kernels (first run only)…"
with a progress bar meanwhile, then loads its scene from the cache in about 3 s.
On two cores or more the warm-up is two processes, `python -m shell.warmup impulse`
and `… penalty` (numba compiles on one core per process), which cuts the wait by about
a quarter; `python -m shell.warmup` runs it all in one.

Whether the cache is cold is decided cheaply: a successful warm-up leaves a marker
beside numba's cache that records the physics sources' sizes and modification times
(what numba itself checks), numba's and Python's versions and the interpreter. If the
marker matches, no warm-up runs. If it does not, the warm-up runs and its message
shows once it has taken more than `SHOW_AFTER` s (a warm cache with a missing marker
finishes in a few seconds).

For the headless command line: `announce(stream)` prints NOTICE (one line) on `stream`
when the cache is cold; `ensure_warm(stream)` does that and waits for the warm-up.

Never imported by physics; imports physics only inside the warm-up itself.
"""
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHYSICS = ROOT / "physics"
SCENES = ROOT / "scenes"
TITLE = "Compiling physics kernels (first run only)…"
NOTICE = ("Compiling physics kernels (first run only; a few minutes on 2 cores, "
          "later runs start in seconds)…")
SHOW_AFTER = 0.5          # s: a warm-up quicker than this shows no message
# A cold warm-up's CPU seconds per step, measured here (2 cores; the kernels are compiled
# by the first step that calls them: the penalty solver by chain, the ropes by
# rope_swing, the impulse solver by chain; the other steps load them). Other steps: SMALL.
WEIGHTS = {("chain", "penalty"): 85.0, ("rope_swing", "penalty"): 90.0, ("chain", "impulse"): 140.0}
SMALL = 0.3
# The warm-up runs as two processes on two cores: the impulse solver (the longest
# compile) beside the penalty solver and the ropes; the impulse steps with ropes come
# last, when the other process has cached the rope kernels.
PARTS = ("impulse", "penalty")


# ---------------------------------------------------------------------------- is the cache warm?
def cache_dir():
    """Where the marker lives: NUMBA_CACHE_DIR if set, else physics/__pycache__ (numba's
    default place), else a per-user cache folder when that is not writable."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    default = PHYSICS / "__pycache__"
    try:
        default.mkdir(exist_ok=True)
        if os.access(default, os.W_OK):
            return default
    except OSError:
        pass
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sharnir"


def stamp():
    """What the cache depends on: every physics source's size and mtime (numba's own
    staleness check), the numba and Python versions, the interpreter, the cache folder."""
    try:
        import importlib.metadata as md
        numba_version = md.version("numba")
    except Exception:
        numba_version = "?"
    files = {}
    for path in sorted(PHYSICS.rglob("*.py")):
        st = path.stat()
        files[str(path.relative_to(ROOT))] = [st.st_size, st.st_mtime]
    return {"files": files, "numba": numba_version, "python": sys.version, "executable": sys.executable,
            "root": str(ROOT), "cache": os.environ.get("NUMBA_CACHE_DIR", "")}


def marker_path():
    key = hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]
    return cache_dir() / f"sharnir-warmup-{key}.json"


def is_warm():
    """True when a warm-up finished for exactly these physics sources (a few ms)."""
    try:
        return json.loads(marker_path().read_text()) == stamp()
    except (OSError, ValueError):
        return False


def mark_warm():
    path = marker_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(stamp()))
        os.replace(tmp, path)
    except OSError:
        pass                 # no marker: the next launch runs the (then quick) warm-up again


# ---------------------------------------------------------------------------- the warm-up
def steps(scenes=SCENES, part=None):
    """(scene path, solver) pairs: every shipped scene with each solver, or with the one
    solver `part` names; scenes without ropes first."""
    paths = sorted(Path(scenes).glob("*.toml"), key=lambda p: ("rope" in p.stem, p.stem))
    return [(path, solver) for solver in ("penalty", "impulse") if part in (None, solver) for path in paths]


def weight(path, solver):
    return WEIGHTS.get((Path(path).stem, solver), SMALL)


def exercise(path, solver, n=3):
    """Load a scene, switch to `solver`, step it, pull a body and a rope with the mouse
    spring, reset: through physics' public API only. A blow-up (a scene that needs its
    own solver) is fine: the kernels it ran are compiled all the same."""
    import physics
    world = physics.load_scene(path)
    world.solver = solver
    grabs = [(b.name, b.position) for b in world.bodies if not b.is_static][:1]
    grabs += [(name, rope.positions[len(rope.positions) // 2].copy())
              for name, rope in getattr(world, "ropes", {}).items()][:1]
    for name, p in [(None, None)] + grabs:
        try:
            if name is not None:
                world.grab(name, p, p + (0.0, 0.0, 0.05))
            for _ in range(n):
                world.step()
        except physics.SimulationBlowUp:
            pass
        world.release_grab()
        world.reset()


def warm_up(out=None, scenes=SCENES, part=None):
    """Run the steps (of one `part`, or all) in this process, printing
    `PLAN steps total_weight` first, `STEP i n weight label` before each step and
    `OK seconds` at the end on `out` (the window reads them). A step that fails (a scene
    someone just broke) is reported and skipped. Returns the number of failed steps;
    a whole warm-up without failures leaves the marker."""
    out = sys.stdout if out is None else out
    todo = steps(scenes, part)
    print(f"PLAN {len(todo)} {sum(weight(p, s) for p, s in todo):g}", file=out, flush=True)
    t0 = time.perf_counter()
    failed = 0
    for i, (path, solver) in enumerate(todo):
        print(f"STEP {i} {len(todo)} {weight(path, solver):g} {path.stem} ({solver})", file=out, flush=True)
        try:
            exercise(path, solver)
        except Exception as e:       # a bad scene must not stop the warm-up of the others
            failed += 1
            print(f"FAILED {path.name} ({solver}): {type(e).__name__}: {e}", file=out, flush=True)
    print(f"OK {time.perf_counter() - t0:.1f}", file=out, flush=True)
    if not failed and part is None:
        mark_warm()
    return failed


def main(part=None):
    """`python -m shell.warmup [impulse|penalty]`: exit status 1 if a step failed."""
    return 1 if warm_up(part=part) else 0


# ---------------------------------------------------------------------------- for the CLI
def announce(stream=None):
    """Print NOTICE on `stream` (stderr) if the kernels are not compiled yet; True if so.
    The headless command line calls this before it loads a scene."""
    if is_warm():
        return False
    print(NOTICE, file=sys.stderr if stream is None else stream, flush=True)
    return True


def ensure_warm(stream=None):
    """Headless: if the cache is cold, say so on `stream` (NOTICE, one line) and wait for
    the warm-up (the same subprocesses as the window's, in parallel), so the marker is
    left and later runs are quiet. Returns True if it ran. A failed warm-up is not an
    error: the caller's own kernels then compile as they are called."""
    if not announce(stream):
        return False
    job = WarmupJob()
    try:
        while not job.done:
            time.sleep(0.2)
    finally:
        job.kill()
    return True


# ---------------------------------------------------------------------------- the window's side
@dataclass
class Progress:
    """What the window shows while the kernels compile."""
    title: str
    detail: str
    fraction: float          # 0 … 1, estimated
    elapsed: float           # s since the warm-up started


def command(part=None):
    """The command line of a warm-up subprocess (of one part, or all)."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                  f"from shell.warmup import main; sys.exit(main({part!r}))"]


class _Proc:
    """One warm-up subprocess, its output read by a thread, its steps' weights."""

    def __init__(self, cmd, env=None):
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True, bufsize=1, cwd=str(ROOT), env=env)
        self.lines = []
        self.step = None          # (index, count, weight, label) of the running step
        self.step_started = time.perf_counter()
        self.done_weight = 0.0
        self.total_weight = None
        self.finished = None
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            with self.lock:
                self.lines.append(line)
                del self.lines[:-200]
                words = line.split(" ", 4)
                try:
                    if words[0] == "PLAN":
                        self.total_weight = float(words[2])
                    elif words[0] == "STEP":
                        if self.step is not None:
                            self.done_weight += self.step[2]
                        i, n, w = int(words[1]), int(words[2]), float(words[3])
                        if self.total_weight is None:          # no PLAN line: every step alike
                            self.total_weight = float(n)
                        self.step = (i, n, w, words[4] if len(words) > 4 else "")
                        self.step_started = time.perf_counter()
                except (IndexError, ValueError):
                    pass
        self.proc.wait()
        with self.lock:
            if self.step is not None:
                self.done_weight += self.step[2]
                self.step = None
            self.finished = time.perf_counter()

    def progress(self, now):
        """(weight done, of total (None before PLAN), running step's label or None)."""
        with self.lock:
            done = self.done_weight
            if self.step is not None:
                i, n, w, label = self.step
                running = now - self.step_started
                # the running step's share approaches its weight, never reaching it before it ends
                done += w * (1.0 - 1.0 / (1.0 + running / max(w, 1.0)))
                return done, self.total_weight, f"{label}, step {i + 1} of {n}"
            return done, self.total_weight, None


class WarmupJob:
    """The warm-up subprocesses (`commands`: one per part by default, in parallel) and
    their joint progress. `mark`: leave the cache-warm marker when all succeed."""

    def __init__(self, commands=None, env=None, mark=None):
        if commands is None:
            parts = PARTS if (os.cpu_count() or 1) > 1 else (None,)
            commands = [command(p) for p in parts]
            mark = True if mark is None else mark
        elif commands and isinstance(commands[0], str):
            commands = [commands]                      # one command line
        self.mark = bool(mark)
        self.started = time.perf_counter()
        self.procs = [_Proc(cmd, env) for cmd in commands]
        self._marked = False

    @property
    def done(self):
        done = all(p.finished is not None for p in self.procs)
        if done and self.mark and not self._marked and self.ok:
            self._marked = True
            mark_warm()
        return done

    @property
    def returncode(self):
        """0 when every process succeeded, else the first failure's status; None while running."""
        if not all(p.finished is not None for p in self.procs):
            return None
        codes = [p.proc.returncode for p in self.procs]
        return next((c for c in codes if c != 0), 0)

    @property
    def ok(self):
        return self.returncode == 0

    def elapsed(self):
        ends = [p.finished for p in self.procs]
        end = max(ends) if all(e is not None for e in ends) else time.perf_counter()
        return end - self.started

    def output_tail(self, n=5):
        lines = []
        for p in self.procs:
            with p.lock:
                lines += p.lines[-n:]
        return "\n".join(lines)

    def progress(self):
        """A Progress for the window: the finished steps' weights, and the running steps'
        shares growing with their time."""
        if self.done:
            return Progress(TITLE, "done", 1.0, self.elapsed())
        now = time.perf_counter()
        parts = [p.progress(now) for p in self.procs]
        if any(total is None for _, total, _ in parts):
            return Progress(TITLE, "starting Python and numba", 0.0, self.elapsed())
        done = sum(d for d, _, _ in parts)
        total = sum(t for _, t, _ in parts)
        labels = [label for _, _, label in parts if label]
        frac = min(done / total, 0.99) if total > 0 else 0.0
        return Progress(TITLE, "; ".join(labels) or "finishing", frac, self.elapsed())

    def kill(self):
        for p in self.procs:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()


def start(commands=None, force=False):
    """Start the warm-up subprocesses unless the cache is warm (or `force`); returns the
    WarmupJob or None."""
    if not force and is_warm():
        return None
    return WarmupJob(commands)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
