"""First launch: compile the physics kernels once, with something on screen.

The physics kernels are numba functions cached on disk (`cache=True`). On a fresh
clone (or after an edit of a physics file) the first process that steps a world
compiles them: about 200 s of CPU in all (`python -m shell.compile_times` measures it
per kernel), during which a window would show nothing. So the window opens first and
runs the warm-up below in subprocesses, which load the shipped scenes and step each one
with both solvers (bodies and joints, ropes, the mouse spring: every kernel the app
calls) through physics' public API. That fills numba's on-disk cache; the window shows
"Compiling physics kernels (first run only)…" with a progress bar meanwhile.

On two cores or more the warm-up is two processes, `python -m shell.warmup impulse` and
`… penalty` (numba compiles on one core per process). The window waits only for what
its scene needs (`scene_needs`: its solver, and the rope kernels if it has ropes): each
process compiles that first, the penalty process starts with the impulse solver's tree
kernels (TREE) so that the impulse process loads them from the cache instead of
compiling them itself, and once the scene's kernels are cached the window loads it
while the rest compiles in the background at a lower priority. `python -m shell.warmup`
runs it all in one process.

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
SOLVERS = ("penalty", "impulse")
# CPU seconds (2 cores, measured with shell/compile_times.py) of the kernels a process
# compiles the first time it needs them: the ones every world uses (joint rows, energy),
# each solver's, the ropes', the impulse solver's tree kernels (TREE; part of "impulse"
# unless another process compiled them first). A step weighs what it compiles first.
GROUP_WEIGHTS = {"common": 9.0, "penalty": 10.0, "impulse": 56.0, "tree": 33.0, "ropes": 70.0}
SMALL = 0.3               # a step that compiles nothing new (loads from the cache)
TREE = Path("tree kernels")   # the step compiling tree's kernels (not a scene)
# The warm-up runs as two processes on two cores: the impulse solver (the longest
# compile) beside the penalty solver, the ropes and the tree kernels.
PARTS = ("impulse", "penalty")
DEFAULT_NEEDS = ("impulse", False)    # the default scene's (gallery): impulse, no ropes


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
def steps(scenes=SCENES, part=None, needs=None):
    """(scene path, solver) pairs: every shipped scene with each solver, or with the one
    solver `part` names; what `needs` ((solver, has ropes): the window's scene, default
    DEFAULT_NEEDS) asks for comes first. The penalty part also runs (TREE, "impulse"):
    first when the scene needs the impulse solver and no ropes (it is then compiled
    beside the impulse part, which loads it), else last."""
    solver, ropes = needs or DEFAULT_NEEDS
    paths = sorted(Path(scenes).glob("*.toml"), key=lambda p: p.stem)
    joints = {s: [(p, s) for p in paths if "rope" not in p.stem] for s in SOLVERS}
    with_ropes = {s: [(p, s) for p in paths if "rope" in p.stem] for s in SOLVERS}
    if part == "impulse":
        return joints["impulse"] + with_ropes["impulse"]
    if part == "penalty":
        if ropes:
            return with_ropes["penalty"] + joints["penalty"] + [(TREE, "impulse")]
        if solver == "penalty":
            return joints["penalty"] + with_ropes["penalty"] + [(TREE, "impulse")]
        return [(TREE, "impulse")] + joints["penalty"] + with_ropes["penalty"]
    other = next(s for s in SOLVERS if s != solver)
    first = with_ropes[solver] + joints[solver] if ropes else joints[solver] + with_ropes[solver]
    return first + joints[other] + with_ropes[other]


def label(path, solver):
    return f"{Path(path).stem} ({solver})"


def plan(todo, elsewhere=()):
    """[(label, weight)] of a process's steps: each weighs the kernel groups it is the
    first of its process to need (GROUP_WEIGHTS), or SMALL; the groups `elsewhere` are
    compiled by the other process before this one needs them (it loads them)."""
    seen, out = set(elsewhere), []
    for path, solver in todo:
        if path == TREE:
            groups = ["tree"]
        else:
            groups = ["common", solver] + (["ropes"] if "rope" in Path(path).stem else [])
            groups += ["tree"] if solver == "impulse" else []
        new = [g for g in groups if g not in seen]
        seen.update(groups)
        out.append((label(path, solver), sum(GROUP_WEIGHTS[g] for g in new) or SMALL))
    return out


def part_plan(part=None, needs=None, scenes=SCENES):
    """(steps, plan) of one part (or of all in one process): on two processes the impulse
    part's rope scenes come after the penalty part's, and the tree kernels are compiled
    by whichever part starts with them."""
    todo = steps(scenes, part, needs)
    elsewhere = set()
    if part == "impulse":
        elsewhere.add("ropes")
        if steps(scenes, "penalty", needs)[0][0] == TREE:
            elsewhere.add("tree")
    elif part == "penalty" and todo[0][0] != TREE:
        elsewhere.add("tree")
    return todo, plan(todo, elsewhere)


def provides(step_label):
    """What a step leaves compiled: {"solver:NAME"} and "ropes" for a rope scene."""
    stem, _, solver = step_label.rpartition(" (")
    if stem == TREE.stem:
        return set()
    return {f"solver:{solver.rstrip(')')}"} | ({"ropes"} if "rope" in stem else set())


def scene_needs(path, overrides=None):
    """(solver, has ropes) of a scene file after `overrides` ({"solver.kind": …}), read
    with tomllib only (nothing compiled; a URDF opens under impulse, physics.io.scene's
    urdf_scene); DEFAULT_NEEDS' solver if the file names none,
    None if it cannot be read (then the window waits for the whole warm-up)."""
    import tomllib
    try:
        if str(path).lower().endswith(".urdf"):        # a robot on its own: physics.io.scene.urdf_scene
            data = {"solver": {"kind": "impulse"}}
        else:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        solver = (overrides or {}).get("solver.kind") or (data.get("solver") or {}).get("kind") or "penalty"
        solver = str(solver).strip().strip("\"'")             # an override may be TOML: "\"penalty\""
        if solver not in SOLVERS:
            return None
        return str(solver), bool(data.get("ropes"))
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def exercise(path, solver, n=3):
    """Load a scene, switch to `solver`, step it, pull a body and a rope with the mouse
    spring, reset: through physics' public API only. A blow-up (a scene that needs its
    own solver) is fine: the kernels it ran are compiled all the same. (TREE: the tree
    kernels of the impulse solver's direct path, through tree's Python entry.)"""
    import physics
    if path == TREE:
        return exercise_tree()
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


def exercise_tree():
    """Solve the equality rows of a 3-link chain by the articulated form
    (tree.solve_joint_rows: the kernels the impulse solver's direct path calls, with
    the argument types it passes), so they are in the cache when the impulse solver
    compiles; then articulated_solve once more as the split-impulse solve calls it, with
    the constant `two = False` (a specialization of its own: faster, compiled apart). The
    rows are made up (random, full rank): writing them would compile the joint-row kernels
    first, which the impulse process compiles meanwhile anyway."""
    import numpy as np
    from numba import njit
    import physics
    from physics.builders import make_chain
    from physics.solvers.tree import (articulated_solve, build_tree_plan, make_tree, solve_joint_rows,
                                            static_bodies)

    @njit
    def positions_solve(tree, joint_body, rate, body_z, vel, omega, body_z2):
        articulated_solve(tree, joint_body, rate, body_z, vel, omega, False, 0.0, body_z2, vel, omega)

    world = physics.World(solver="impulse")
    make_chain(world, links=3)
    m, nb = world.model, world.model.bodies.count
    row_J = np.random.default_rng(0).normal(size=(m.rows.count, 12))
    body_I = np.zeros((nb, 9))
    body_I[:, [0, 4, 8]] = m.bodies.inertia
    body_I[0] = 0.0
    static = static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia)
    solve_joint_rows(m.joints.type, m.joints.body, m.joints.row_start, row_J, world.state.bodies.pos,
                     m.bodies.inv_mass, body_I, static, np.ones(m.rows.count))
    tree = make_tree(build_tree_plan(m.joints.body, m.joints.type, static), m.rows.count)
    vel, omega = np.zeros((nb, 3)), np.zeros((nb, 3))
    positions_solve(tree, np.ascontiguousarray(m.joints.body), 0.0, tree.body_z, vel, omega, tree.body_z2)


def warm_up(out=None, scenes=SCENES, part=None, needs=None):
    """Run the steps (of one `part`, or all; ordered for `needs`) in this process,
    printing `PLAN steps total_weight` first, `STEP i n weight label` before each step and
    `OK seconds` at the end on `out` (the window reads them). A step that fails (a scene
    someone just broke) is reported and skipped. Returns the number of failed steps;
    a whole warm-up without failures leaves the marker."""
    out = sys.stdout if out is None else out
    todo, weights = part_plan(part, needs, scenes)
    print(f"PLAN {len(todo)} {sum(w for _, w in weights):g}", file=out, flush=True)
    t0 = time.perf_counter()
    failed = 0
    for i, ((path, solver), (name, w)) in enumerate(zip(todo, weights)):
        print(f"STEP {i} {len(todo)} {w:g} {name}", file=out, flush=True)
        try:
            exercise(path, solver)
        except Exception as e:       # a bad scene must not stop the warm-up of the others
            failed += 1
            print(f"FAILED {Path(path).name} ({solver}): {type(e).__name__}: {e}", file=out, flush=True)
    print(f"OK {time.perf_counter() - t0:.1f}", file=out, flush=True)
    if not failed and part is None:
        mark_warm()
    return failed


def main(part=None, needs=None, parent=None):
    """`python -m shell.warmup [impulse|penalty]`: exit status 1 if a step failed.
    `parent`: the pid of the app that started it, whose end ends this process too."""
    if parent is not None:
        from shell.lifetime import die_with_parent
        die_with_parent(parent)
    return 1 if warm_up(part=part, needs=needs) else 0


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


def command(part=None, needs=None):
    """The command line of a warm-up subprocess (of one part, or all; ordered for `needs`)."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                  f"from shell.warmup import main; sys.exit(main({part!r}, {needs!r}, {os.getpid()}))"]


class _Proc:
    """One warm-up subprocess, its output read by a thread, its steps' weights.
    `plan`: its [(label, weight)] when known in advance (the window's own warm-up)."""

    def __init__(self, cmd, env=None, plan=None, on_exit=None):
        self.plan = plan
        self.on_exit = on_exit
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True, bufsize=1, cwd=str(ROOT), env=env)
        self.lines = []
        self.step = None          # (index, count, weight, label) of the running step
        self.step_started = time.perf_counter()
        self.done_weight = 0.0
        self.total_weight = None
        self.completed = 0        # steps finished
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
                            self.completed += 1
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
            self.completed = max(self.completed, len(self.plan or ()))
            self.finished = time.perf_counter()
        if self.on_exit is not None:
            self.on_exit()

    def progress(self, now, upto=None):
        """(weight done, of total (None before PLAN), running step's label or None); with
        `upto`, of the first `upto` steps of the plan only."""
        with self.lock:
            if upto is not None and self.plan is not None:
                weights = [w for _, w in self.plan[:upto]]
                total, done = sum(weights), sum(weights[:min(self.completed, upto)])
            else:
                total, done = self.total_weight, self.done_weight
            if self.step is not None and (upto is None or self.step[0] < upto):
                i, n, w, label = self.step
                running = now - self.step_started
                # the running step's share approaches its weight, never reaching it before it ends
                done += w * (1.0 - 1.0 / (1.0 + running / max(w, 1.0)))
                return done, total, f"{label}, step {i + 1} of {n}"
            return done, total, None


def _needed(plans, needs):
    """Per process, how many of its first steps must finish before a scene with `needs`
    ((solver, has ropes)) finds its kernels in the cache: for the solver and for the
    ropes, the step that provides it earliest (by the weights before it)."""
    if needs is None:
        return [len(p) for p in plans]
    solver, ropes = needs
    needed = [0] * len(plans)
    for want in [f"solver:{solver}"] + (["ropes"] if ropes else []):
        best = None
        for k, steps_k in enumerate(plans):
            before = 0.0
            for i, (name, w) in enumerate(steps_k):
                before += w
                if want in provides(name):
                    if best is None or before < best[0]:
                        best = (before, k, i)
                    break
        if best is None:
            return [len(p) for p in plans]
        needed[best[1]] = max(needed[best[1]], best[2] + 1)
    return needed


class WarmupJob:
    """The warm-up subprocesses (`commands`: one per part by default, in parallel) and
    their joint progress. `mark`: leave the cache-warm marker when all succeed. `needs`:
    the window's scene's (solver, has ropes): each part compiles that first and `ready`
    turns true once it is cached, before the rest is done (default parts, or given
    commands with their `plans`: per command [(label, weight)] of its steps)."""

    def __init__(self, commands=None, env=None, mark=None, needs=None, plans=None):
        if commands is None:
            parts = PARTS if (os.cpu_count() or 1) > 1 else (None,)
            plans = [part_plan(p, needs)[1] for p in parts]
            commands = [command(p, needs) for p in parts]
            mark = True if mark is None else mark
        elif commands and isinstance(commands[0], str):
            commands = [commands]                      # one command line
        self.mark = bool(mark)
        self._marked = False
        self._lock = threading.Lock()
        self.started = time.perf_counter()
        self.needed = _needed(plans, needs) if plans is not None else None
        self.procs = [_Proc(cmd, env, plan=plans[k] if plans else None, on_exit=self._maybe_mark)
                      for k, cmd in enumerate(commands)]

    def _maybe_mark(self):
        """Leave the marker once every process has succeeded (from their reader threads:
        the window may have stopped watching, the background keeps going)."""
        with self._lock:
            if self.mark and not self._marked and self.ok:
                self._marked = True
                mark_warm()

    @property
    def done(self):
        done = all(p.finished is not None for p in self.procs)
        if done:
            self._maybe_mark()
        return done

    @property
    def ready(self):
        """The window's scene can load: its kernels are cached (or everything is done)."""
        if self.needed is None:
            return self.done
        return self.done or all(p.finished is not None or p.completed >= n for p, n in zip(self.procs, self.needed))

    def background(self):
        """The window goes on: the processes still compiling get a lower priority."""
        for p in self.procs:
            if p.proc.poll() is None and hasattr(os, "setpriority"):
                try:
                    os.setpriority(os.PRIO_PROCESS, p.proc.pid, 10)
                except OSError:
                    pass

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
        shares growing with their time — of the steps the window waits for."""
        if self.ready:
            return Progress(TITLE, "done", 1.0, self.elapsed())
        now = time.perf_counter()
        upto = self.needed or [None] * len(self.procs)
        parts = [p.progress(now, n) for p, n in zip(self.procs, upto)]
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


def start(commands=None, force=False, needs=None):
    """Start the warm-up subprocesses unless the cache is warm (or `force`); returns the
    WarmupJob or None. `needs`: the scene's (solver, has ropes), see WarmupJob."""
    if not force and is_warm():
        return None
    return WarmupJob(commands, needs=needs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
