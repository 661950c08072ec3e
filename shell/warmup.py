"""First launch: compile the physics kernels once, with something on screen.

The physics kernels are numba functions cached on disk (`cache=True`). On a fresh
clone (or after an edit of a physics file) the first process that steps a world
compiles them (`python -m shell.compile_times` measures it per kernel), during which a
window would show nothing. So the window opens first and runs the warm-up below in
subprocesses, which load the shipped scenes and step each one with every solver family
in FAMILIES (bodies and joints, ropes, the mouse spring: every kernel the app calls)
through physics' public API. That fills numba's on-disk cache; the window shows
"Compiling physics kernels (first run only)…" with a progress bar meanwhile.

The warm-up knows no family by name: it asks FAMILIES. Each family's COMPILE_WEIGHT (CPU
s of its kernels on a cold cache) weighs its first step in the progress plan, its
VARIANT_WEIGHT and ROBOT_VARIANT_WEIGHT the first later scene that asks for its other
feature set or for the robots' features (a step kernel compiled per feature set compiles
again for them), and a family
may expose kernels it shares with others (warm_up_kernels, e.g. the joint tree's) as a
step of their own that another process can compile meanwhile.

On two cores or more the warm-up is two processes (numba compiles on one core per
process; `layout`). The window waits only for what its scene needs (`scene_needs`: its
family, and the rope kernels if it has ropes): the first process starts with the
window's scene itself under its family, the second with the family's shared kernels,
and the other families and rope scenes are spread over both, balanced by weight. Once
the scene's kernels are cached the window loads it
while the rest compiles in the background at a lower priority (a process that compiles
nothing of the scene's runs at that priority from the start). `python -m shell.warmup`
runs it all in one process, `python -m shell.warmup FAMILY` one family's steps.

Whether the cache is cold is decided cheaply: a successful warm-up leaves a marker
beside numba's cache that records the physics sources' sizes and modification times
(what numba itself checks), numba's and Python's versions and the interpreter. If the
marker matches, no warm-up runs. If it does not, the warm-up runs and its message
shows once it has taken more than `SHOW_AFTER` s (a warm cache with a missing marker
finishes in a few seconds).

For the headless command line: `announce(stream)` prints NOTICE (one line) on `stream`
when the cache is cold; `ensure_warm(stream)` does that and waits for the warm-up.

Never imported by physics; imports physics' solver registry to plan, and physics itself
only inside the warm-up.
"""
import functools
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHYSICS = ROOT / "physics"
SCENES = ROOT / "scenes"
TITLE = "Compiling physics kernels (first run only)…"
NOTICE = ("Compiling physics kernels (first run only; a few minutes on 2 cores, "
          "later runs start in seconds)…")
SHOW_AFTER = 0.5          # s: a warm-up quicker than this shows no message
# CPU s (the warm-up's own per-step CPU times, DONE lines; shell/compile_times.py per
# kernel) of the kernels that are no family's: the ones every world uses (collision
# without the hulls' narrow phase, contacts, joint rows), the ropes', and the hulls'
# narrow phase (physics/contacts_warm_up.py), which only the steps that need it compile
# (needs_hulls)
COMMON_WEIGHT = 16.0
ROPES_WEIGHT = 22.0
HULLS_WEIGHT = 34.0
SMALL = 0.3               # a step that compiles nothing new (loads from the cache)
KERNELS = Path("shared kernels")   # the step running a family's warm_up_kernels (not a scene)
HULL_KERNELS = Path("hull narrow phase")   # the step compiling the hulls' narrow phase alone (not a scene)
PROCESSES = 2 if (os.cpu_count() or 1) > 1 else 1

Planned = namedtuple("Planned", "label weight provides")
"""One step of a process's plan: its label, its weight (CPU s it is expected to compile)
and what it leaves compiled ({"family:NAME"}, "ropes")."""


# ---------------------------------------------------------------------------- is the cache warm?
def cache_dir():
    """Where the marker lives: beside numba's cache (physics/caches.py)."""
    from physics.caches import cache_dir as where
    return where()


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
def families():
    """{name: family class} of physics' solver families, in FAMILIES' order."""
    from physics.solvers import FAMILIES
    return FAMILIES


def default_needs():
    """(family, has ropes) assumed when the scene is unknown: the default family's, no ropes."""
    from physics.solvers import DEFAULT_FAMILY
    return DEFAULT_FAMILY, False


def shared_kernels(family):
    """The family's warm_up_kernels function, or None when it has none (SolverBase's)."""
    from physics.solvers import SolverBase
    fn = families()[family].warm_up_kernels
    fn = getattr(fn, "__func__", fn)
    return None if fn is SolverBase.warm_up_kernels else fn


def is_scene(path):
    """Whether a step's path is a scene file (not KERNELS or HULL_KERNELS)."""
    return path not in (KERNELS, HULL_KERNELS)


def has_hulls(path):
    """Whether a scene file has convex or compound bodies or robots (whose collision meshes
    are hulls), read with tomllib only (once per path)."""
    return _read(str(path))[1]


def needs_hulls(path, family):
    """Whether a scene's step under `family` compiles the hulls' narrow phase: a scene with
    hulls, or any scene under a family whose kernels always have the robots' features
    (ROBOT_FEATURES_ALWAYS)."""
    return is_scene(path) and (families()[family].ROBOT_FEATURES_ALWAYS or has_hulls(path))


def has_ropes(path):
    """Whether a scene file has ropes ([[ropes]]), read with tomllib only (once per path)."""
    return _read(str(path))[0]


@functools.lru_cache(maxsize=None)
def _read(path):
    """(has ropes, has hulls) of a scene file (a URDF: a robot, hulls); (False, False) if
    it cannot be read."""
    import tomllib
    if path.lower().endswith(".urdf"):
        return False, True
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
        shapes = {str(b.get("shape")) for b in data.get("bodies") or () if isinstance(b, dict)}
        return bool(data.get("ropes")), bool(data.get("robots")) or bool(shapes & {"convex", "compound"})
    except (OSError, ValueError, AttributeError, TypeError):
        return False, False


def _scenes(scenes, family, scene=None):
    """(scenes without ropes or hulls, with hulls, with ropes) of the shipped scenes, as
    steps of `family`; the window's `scene` first in its list (added if it is not shipped)."""
    paths = sorted(Path(scenes).glob("*.toml"), key=lambda p: p.stem)
    if scene is not None:
        scene = Path(scene)
        paths = [scene] + [p for p in paths if p.resolve() != scene.resolve()]
    ropes = {p for p in paths if has_ropes(p)}
    robots = {p for p in paths if p not in ropes and has_hulls(p)}
    return ([(p, family) for p in paths if p not in ropes | robots], [(p, family) for p in paths if p in robots],
            [(p, family) for p in paths if p in ropes])


def steps(scenes=SCENES, family=None, needs=None, scene=None):
    """(scene path, family) pairs of one process: every shipped scene with `family`, or
    with every family, the one `needs` ((family, has ropes): the window's scene, default
    default_needs()) asks for first, the window's `scene` (a path) first of all, else
    its rope scenes first if it has ropes."""
    if family is not None:
        joints, robots, ropes = _scenes(scenes, family)
        return joints + robots + ropes
    first, ropes = needs or default_needs()
    out = []
    for name in [first] + [f for f in families() if f != first]:
        joints, robots, with_ropes = _scenes(scenes, name, scene if name == first else None)
        if name == first and scene is not None:
            out += [(Path(scene), name)] + [s for s in joints + robots + with_ropes if s[0] != Path(scene)]
        else:
            out += with_ropes + joints + robots if name == first and ropes else joints + robots + with_ropes
    return out


def _groups(path, family):
    """{kernel group: CPU s} a step needs compiled: the common kernels, the family's own,
    its shared kernels (keyed by their warm_up_kernels function, so families sharing
    them share the group), the ropes' for a rope scene, the hulls' narrow phase for a
    step that needs it (needs_hulls), and the family's step kernel compiled again: for a
    scene with hulls with the robots' features (ROBOT_VARIANT_WEIGHT; none under
    ROBOT_FEATURES_ALWAYS), for another the other feature set (VARIANT_WEIGHT; weigh counts
    it for the family's scenes after its first); a KERNELS step the shared kernels alone,
    a HULL_KERNELS step the hulls' narrow phase alone."""
    cls = families()[family]
    fn = shared_kernels(family)
    shared = {f"kernels:{fn.__module__}.{fn.__qualname__}": cls.WARM_UP_WEIGHT} if fn else {}
    if path == KERNELS:
        return shared
    if path == HULL_KERNELS:
        return {"hulls": HULLS_WEIGHT}
    own = {f"family:{family}": max(cls.COMPILE_WEIGHT - sum(shared.values()), 0.0)}
    variant = ({f"robot:{family}": cls.ROBOT_VARIANT_WEIGHT} if has_hulls(path) and not cls.ROBOT_FEATURES_ALWAYS
               else {f"variant:{family}": cls.VARIANT_WEIGHT})
    return {"common": COMMON_WEIGHT, **own, **shared, **({"ropes": ROPES_WEIGHT} if has_ropes(path) else {}),
            **({"hulls": HULLS_WEIGHT} if needs_hulls(path, family) else {}), **variant}


def label(path, family):
    return str(path) if path == HULL_KERNELS else f"{Path(path).stem} ({family})"


def weigh(parts):
    """Per process, [Planned] of its steps, the processes running side by side (their
    clocks: the weights): a step weighs the kernel groups it needs that are not cached
    when it starts, or SMALL. The family's first scene compiles the family's kernels
    for its own features: the variant groups (_groups) weigh nothing in it, and the
    robots' is cached by it if it has hulls. A group is
    cached once the step that compiles it ends; a
    KERNELS step's from its start: a family's step reaches its shared kernels late (they
    are called deepest), after the other process has compiled them."""
    clock, nxt, cached = [0.0] * len(parts), [0] * len(parts), {}
    out = [[] for _ in parts]
    while True:
        live = [k for k in range(len(parts)) if nxt[k] < len(parts[k])]
        if not live:
            return out
        k = min(live, key=lambda k: (clock[k], parts[k][nxt[k]][0] != KERNELS, k))
        path, family = parts[k][nxt[k]]
        groups = _groups(path, family)
        new = [g for g in groups if cached.get(g, float("inf")) > clock[k]]
        own = set()
        if f"family:{family}" in new:       # the family's first scene: its kernels for its own features
            new = [g for g in new if g != f"variant:{family}"]
            own = {f"robot:{family}"} & set(new)
        weight = sum(groups[g] for g in new if g not in own) or SMALL
        for g in new:
            cached[g] = min(cached.get(g, float("inf")), clock[k] + (0.0 if path == KERNELS else weight))
        gives = {f"family:{family}"} | ({"ropes"} if "ropes" in groups else set()) if is_scene(path) else set()
        out[k].append(Planned(label(path, family), weight, gives))
        clock[k] += weight
        nxt[k] += 1


def _span(parts):
    return max(sum(p.weight for p in plan) for plan in weigh(parts))


def layout(needs=None, processes=PROCESSES, scenes=SCENES, scene=None):
    """Per process, its steps: together every shipped scene with every family once. One
    process: `steps`. More: the first starts with the scene's family (needs: (family, has
    ropes), default default_needs()), with the window's `scene` itself when given (a
    path), and the second with that family's shared kernels (KERNELS) — or, when no
    scene is given and it has ropes, with the rope scenes under the family quickest to
    compile. Then the other shared kernels (one step per warm_up_kernels function),
    the families' scenes without ropes or hulls, with hulls (a unit of their own: their
    family's robots' variant; heaviest or lightest first, the better plan kept), then with
    ropes, heaviest first, each unit appended to the
    process where the whole plan (weigh) ends soonest with the hulls' narrow phase
    placed in it (HULL_KERNELS: one step, so that the steps needing it in every process
    load it; none when the window's scene needs it and compiles it first) where the plan
    ends soonest (_with_hull_step)."""
    if processes <= 1:
        return [steps(scenes, needs=needs, scene=scene)]
    first, ropes = needs or default_needs()
    names = list(families())
    units = {}
    for name in names:
        units[("joints", name)], units[("robots", name)], units[("ropes", name)] = _scenes(
            scenes, name, scene if name == first else None)
    parts = [[] for _ in range(processes)]
    if scene is not None:
        ropes = False                      # the scene's own step compiles its ropes
        parts[0].append((Path(scene), first))
        for key in (("joints", first), ("robots", first), ("ropes", first)):
            units[key] = [s for s in units[key] if s[0] != Path(scene)]
    parts[0] += units.pop(("joints", first))
    if ropes:
        quick = min(names, key=lambda n: (n == first, families()[n].COMPILE_WEIGHT))
        parts[1] += units.pop(("ropes", quick))
    kernels = {}                                   # one KERNELS step per shared-kernels function
    for name in names:
        kernels.setdefault(shared_kernels(name), [(KERNELS, name)])
    kernels.pop(None, None)
    if not ropes and shared_kernels(first):
        parts[1] += kernels.pop(shared_kernels(first))
    hulls = (any(needs_hulls(*step) for u in units.values() for step in u)
             and not (scene is not None and needs_hulls(scene, first)))
    opening = [1] + [len(part) for part in parts[1:]]   # the window's scene; the ropes or shared kernels beside it
    heavy = lambda unit: -sum(sum(_groups(*step).values()) for step in unit)   # noqa: E731
    kinds = {kind: sorted((u for (k, _), u in units.items() if u and k == kind), key=heavy)
             for kind in ("joints", "robots", "ropes")}

    def finished(parts):
        return _with_hull_step(parts, first, opening) if hulls else parts

    def scheduled(order):
        out = [list(p) for p in parts]
        for unit in list(kernels.values()) + order:
            best = min(range(processes), key=lambda k: (
                _span(finished([p + unit if i == k else p for i, p in enumerate(out)])),
                sum(p.weight for p in weigh(out)[k])))
            out[best] += unit
        return finished(out)
    # the robots' units follow their families' (their variants need the family's kernels):
    # heaviest first, or lightest first, whichever plan ends sooner
    return min((scheduled(kinds["joints"] + robots + kinds["ropes"])
                for robots in (kinds["robots"], kinds["robots"][::-1])), key=_span)


def _with_hull_step(parts, family, opening):
    """parts with the HULL_KERNELS step where the plan ends soonest, and of those where it
    compiles the least in all: in any process k, after its `opening[k]` first steps (those
    a window may wait for) and before its first step that needs it (needs_hulls; weigh
    counts the narrow phase again for such a step that starts before it ends)."""
    def first_with_hulls(part):
        return next((i for i, step in enumerate(part) if needs_hulls(*step)), len(part))
    options = [(k, i) for k, part in enumerate(parts) for i in range(opening[k], max(first_with_hulls(part), opening[k]) + 1)]
    def placed(option):
        k, i = option
        return [part[:i] + [(HULL_KERNELS, family)] + part[i:] if j == k else part for j, part in enumerate(parts)]
    def cost(option):
        plans = weigh(placed(option))
        return max(sum(p.weight for p in plan) for plan in plans), sum(p.weight for plan in plans for p in plan), option
    return placed(min(options, key=cost))


def scene_needs(path, overrides=None):
    """(family, has ropes) of a scene file after `overrides` ({"solver.kind": …}), read
    with tomllib only (nothing compiled); the default family if the file names none (a
    URDF opens under it: physics.io.scene's urdf_scene), None if it cannot be read or
    names no family (then the window waits for the whole warm-up)."""
    import tomllib
    from physics.solvers import DEFAULT_FAMILY
    try:
        if str(path).lower().endswith(".urdf"):        # a robot on its own: no [solver], no ropes
            data = {}
        else:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        family = (overrides or {}).get("solver.kind") or (data.get("solver") or {}).get("kind") or DEFAULT_FAMILY
        family = str(family).strip().strip("\"'")             # an override may be TOML: "\"lcp\""
        if family not in families():
            return None
        return family, bool(data.get("ropes"))
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def exercise(path, family, n=3):
    """Load a scene, switch to `family`, step it, pull a body and a rope with the mouse
    spring, reset: through physics' public API only. A blow-up (a scene that needs its
    own solver) is fine: the kernels it ran are compiled all the same. (KERNELS: the
    family's warm_up_kernels; HULL_KERNELS: physics.contacts_warm_up's.)"""
    import physics
    if path == KERNELS:
        return families()[family].warm_up_kernels()
    if path == HULL_KERNELS:
        from physics.contacts_warm_up import compile_hull_contacts
        return compile_hull_contacts()
    world = physics.load_scene(path)
    world.solver = family
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


def _todo(scenes, family, needs, process, scene):
    """(steps, [Planned]) of this process: process (k, n) of layout(needs, n), else steps()."""
    if process is not None:
        k, n = process
        parts = layout(needs, n, scenes, scene)
        return parts[k], weigh(parts)[k]
    todo = steps(scenes, family, needs, scene)
    return todo, weigh([todo])[0]


def warm_up(out=None, scenes=SCENES, family=None, needs=None, process=None, scene=None):
    """Run the steps (of one `family`, of `process` (k, n): the k-th of n processes, or
    all; ordered for `needs` and the window's `scene`) in this process, printing `PLAN
    steps total_weight` first, `STEP i n weight label` before each step, `DONE i cpu_s`
    after it and `OK seconds` at the end on `out` (the window reads them). A step that
    fails (a scene someone just broke) is reported and skipped. Returns the number of
    failed steps; a whole warm-up without failures leaves the marker."""
    out = sys.stdout if out is None else out
    todo, planned = _todo(scenes, family, needs, process, scene)
    print(f"PLAN {len(todo)} {sum(p.weight for p in planned):g}", file=out, flush=True)
    t0 = time.perf_counter()
    failed = 0
    for i, ((path, name), step) in enumerate(zip(todo, planned)):
        print(f"STEP {i} {len(todo)} {step.weight:g} {step.label}", file=out, flush=True)
        cpu = time.process_time()
        try:
            exercise(path, name)
        except Exception as e:       # a bad scene must not stop the warm-up of the others
            failed += 1
            print(f"FAILED {Path(path).name} ({name}): {type(e).__name__}: {e}", file=out, flush=True)
        print(f"DONE {i} {time.process_time() - cpu:.1f}", file=out, flush=True)   # CPU s: to check weights
    print(f"OK {time.perf_counter() - t0:.1f}", file=out, flush=True)
    if not failed and family is None and process is None:
        mark_warm()
    return failed


def main(family=None, needs=None, parent=None, process=None, scene=None):
    """`python -m shell.warmup [FAMILY]`: exit status 1 if a step failed, 2 if FAMILY is
    not a solver family. `parent`: the pid of the app that started it, whose end ends
    this process too; `process`: (k, n), the k-th of the window's n processes; `scene`:
    the window's scene (see layout)."""
    if family is not None and family not in families():
        print(f"shell.warmup: {family!r} is not a solver family (expected one of: {', '.join(families())})",
              file=sys.stderr)
        return 2
    if parent is not None:
        from shell.lifetime import die_with_parent
        die_with_parent(parent)
    return 1 if warm_up(family=family, needs=needs, process=process, scene=scene) else 0


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


def command(family=None, needs=None, process=None, scene=None):
    """The command line of a warm-up subprocess (of one family, of process (k, n) of the
    layout, or all; ordered for `needs` and the window's `scene`)."""
    scene = None if scene is None else str(scene)
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); from shell.warmup import main; "
                                  f"sys.exit(main({family!r}, {needs!r}, {os.getpid()}, {process!r}, {scene!r}))"]


class _Proc:
    """One warm-up subprocess, its output read by a thread, its steps' weights.
    `plan`: its [Planned] when known in advance (the window's own warm-up)."""

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
        self.cpu = []             # (weight, label, CPU s) of each finished step, from its DONE line
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
                    elif words[0] == "DONE" and self.step is not None and int(words[1]) == self.step[0]:
                        self.cpu.append((self.step[2], self.step[3], float(words[2])))
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
                weights = [step.weight for step in self.plan[:upto]]
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
    ((family, has ropes)) finds its kernels in the cache: for the family and for the
    ropes, the step that provides it earliest (by the weights before it)."""
    if needs is None:
        return [len(p) for p in plans]
    family, ropes = needs
    needed = [0] * len(plans)
    for want in [f"family:{family}"] + (["ropes"] if ropes else []):
        best = None
        for k, steps_k in enumerate(plans):
            before = 0.0
            for i, step in enumerate(steps_k):
                before += step.weight
                if want in step.provides:
                    if best is None or before < best[0]:
                        best = (before, k, i)
                    break
        if best is None:
            return [len(p) for p in plans]
        needed[best[1]] = max(needed[best[1]], best[2] + 1)
    return needed


def _lower_priority(proc):
    """A warm-up process (subprocess.Popen) still running yields the processors to the
    window and to the processes it waits for (nice 10)."""
    if proc.poll() is None and hasattr(os, "setpriority"):
        try:
            os.setpriority(os.PRIO_PROCESS, proc.pid, 10)
        except OSError:
            pass


class WarmupJob:
    """The warm-up subprocesses (`commands`: by default one per process of `layout`, in
    parallel) and their joint progress. `mark`: leave the cache-warm marker when all
    succeed. `needs`: the window's scene's (family, has ropes): the processes compile
    that first and `ready` turns true once it is cached, before the rest is done (default
    processes, or given commands with their `plans`: per command [Planned] of its steps);
    a process with none of the steps `ready` waits for runs at a lower priority from the
    start, so that before the first frame the processors go to the scene's kernels and
    the window; `scene`: the window's scene file, compiled first (layout)."""

    def __init__(self, commands=None, env=None, mark=None, needs=None, plans=None, processes=PROCESSES, scene=None):
        if commands is None:
            scene = scene if needs is not None else None
            parts = layout(needs, processes, scene=scene)
            plans = weigh(parts)
            commands = [command(needs=needs, process=(k, len(parts)), scene=scene) for k in range(len(parts))]
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
        for p, n in zip(self.procs, self.needed or ()):
            if n == 0:                 # nothing of it before the scene's first frame: background from the start
                _lower_priority(p.proc)

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
            _lower_priority(p.proc)

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


def start(commands=None, force=False, needs=None, scene=None):
    """Start the warm-up subprocesses unless the cache is warm (or `force`); returns the
    WarmupJob or None. `needs`: the scene's (family, has ropes), `scene` its file, see
    WarmupJob."""
    if not force and is_warm():
        return None
    return WarmupJob(commands, needs=needs, scene=scene)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
