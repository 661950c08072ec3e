"""Fuzzed input through the real command line, in-process (shell.cli.main): the shipped
scenes mutated (keys deleted, types changed, huge / negative / NaN numbers, deep nesting,
unknown keys and tables), fuzzed `--set` values and options, and every input issue 14
names, then issue 27's: output paths (--record, --record-video, --screenshot), tiny and
huge masses and densities, and abusive calls of the Python API. Each run is headless and
short; the exit status must be 0 (ran), 2 (bad input, with exactly one line on stderr)
or 3 (the simulation blew up) — never 1 (an internal error), a warning nor an exception
out of main(); an API call either works or raises one ValueError, the world usable.

The cases are drawn from a fixed seed, so a failure names a case that reproduces:
`pytest tests/test_fuzz.py -k chain-017`.
"""
import contextlib
import copy
import io
import math
import os
import random
import sys
import tomllib
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
import tomli_w

import physics
from physics.rope import Rope
from physics.shapes import Box, Capsule, Cylinder, Sphere, check_shape
from shell.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENES = sorted((ROOT / "scenes").glob("*.toml"))
CHAIN, GALLERY = str(ROOT / "scenes" / "chain.toml"), str(ROOT / "scenes" / "gallery.toml")
SEED = 14                        # issue 14
FILE_CASES_PER_SCENE = 50
SET_CASES = 150
OPTION_CASES = 24

NUMBERS = [1e300, -1e300, 1e200, 1e16, -1e16, -1.0, -0.5, 0, -0.0, math.nan, math.inf, -math.inf,
           10 ** 30, -(10 ** 30), 2 ** 63, 1e-300, -1e-300]
OTHER_TYPES = ["x", "", "revolute", True, False, [], [1, 2], [1, 2, 3, 4, 5], {"a": 1}, 0.5, 3, [[1, 2, 3]],
               ["a", "b", "c"], [True, 0, 0], {}]
UNKNOWN_KEYS = ["colour", "mas", "Name", "bounciness", "contact_friction", "zz", "axis3", "limits_rad"]
DEEP = "__DEEP__"
SET_VALUES = ["1e300", "-1e300", "1e200", "nan", "inf", "-inf", "-1", "0", "-0.0", "1e-300", "[1,2]",
              "[0,0,1e300]", "[nan,0,0]", "true", '"x"', "{a=1}", "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]",
              "[" * 1000 + "]" * 1000, "abc", "", "=", "9" * 400, "-" + "9" * 5000, "0x" + "f" * 4000,
              "[1, 2, 3, 4]", '""', "[[1,2],[3,4]]", "1e16", "{}", "[]", "12345678901234567890",
              # values the schema may accept: the engine must run them or say it blew up
              "1e6", "1e-6", "100", "0.001", "-5", "3", "[0,0,100]", "[1e6,0,0]", "[0,0,-1e4]", '"impulse"',
              '"penalty"', '"critical"', '"paper"', '"direct"', '"iterative"', '"baumgarte"', "1e12", "false"]
SET_KEYS = {"world": ["dt", "gravity", "gyroscopic", "nope"],
            "solver": ["kind", "iterations", "substeps", "epsilon", "erp", "time_cap_ms", "penalty_preset",
                       "alpha_lin", "kappa", "method", "stabilization", "nope"],
            "view": ["eye", "target", "nope"],
            "body": ["mass", "density", "radius", "size", "length", "position", "orientation", "rotation_deg",
                     "velocity", "angular_velocity", "color", "static", "shape", "name", "visual_mesh", "nope"],
            "joint": ["type", "parent", "child", "anchor", "axis", "axis2", "limits_deg", "limits", "swing_deg",
                      "twist_deg", "friction", "motor", "motor_target", "motor_max", "motor_frequency", "nope"],
            "chain": ["links", "radius", "link_length", "mass", "joint", "direction", "axis", "parent", "nope"],
            "rope": ["segments", "radius", "density", "E", "G", "damping", "friction", "start", "end",
                     "start_attach", "end_clamp", "nope"]}
ARRAYS = {"body": "bodies", "joint": "joints", "chain": "chains", "rope": "ropes"}


# ---------------------------------------------------------------------------- mutations
def _paths(data, path=()):
    """Every key path in parsed TOML: table keys and array elements, at every depth."""
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        yield path + (k,)
        yield from _paths(v, path + (k,))


def _parent(data, path):
    for k in path[:-1]:
        data = data[k]
    return data


def _number_paths(data):
    return [p for p in _paths(data) if isinstance(_parent(data, p)[p[-1]], (int, float))
            and not isinstance(_parent(data, p)[p[-1]], bool)]


def _mutate(rng, data):
    """One random edit of the parsed scene, in place; returns its name."""
    paths = list(_paths(data))
    kind = rng.choice(["delete", "type", "number", "number", "scale", "scale", "scale", "deep", "unknown key",
                       "unknown table", "duplicate", "empty"])
    if kind == "number" and _number_paths(data):
        p = rng.choice(_number_paths(data))
        _parent(data, p)[p[-1]] = rng.choice(NUMBERS)
    elif kind == "scale" and _number_paths(data):         # odd values the schema may accept
        p = rng.choice(_number_paths(data))
        v = _parent(data, p)[p[-1]]
        if isinstance(v, int):
            _parent(data, p)[p[-1]] = v * rng.choice([-1, 0, 2, 3])
        else:
            _parent(data, p)[p[-1]] = v * rng.choice([-3.0, -1.0, 0.001, 0.1, 10.0, 1000.0])
    elif kind == "delete" and paths:
        p = rng.choice(paths)
        parent = _parent(data, p)
        del parent[p[-1]]
    elif kind == "type" and paths:
        p = rng.choice(paths)
        _parent(data, p)[p[-1]] = copy.deepcopy(rng.choice(OTHER_TYPES))
    elif kind == "deep" and paths:
        p = rng.choice(paths)
        _parent(data, p)[p[-1]] = DEEP
    elif kind == "unknown key":
        tables = [data] + [_parent(data, p)[p[-1]] for p in paths if isinstance(_parent(data, p)[p[-1]], dict)]
        rng.choice(tables)[rng.choice(UNKNOWN_KEYS)] = rng.choice(NUMBERS + OTHER_TYPES)
    elif kind == "unknown table":
        data[rng.choice(["contacts", "bodys", "camera", "springs"])] = [{"name": "x"}]
    elif kind == "duplicate":
        arrays = [k for k, v in data.items() if isinstance(v, list) and v]
        if arrays:
            a = rng.choice(arrays)
            data[a].append(copy.deepcopy(rng.choice(data[a])))
    elif kind == "empty":
        tables = [p for p in paths if isinstance(_parent(data, p)[p[-1]], dict)]
        if tables:
            p = rng.choice(tables)
            _parent(data, p)[p[-1]] = {}
    return kind


def _toml(rng, data):
    text = tomli_w.dumps(data)
    while f'"{DEEP}"' in text:
        n = rng.choice([17, 40, 400, 1000, 5000])
        text = text.replace(f'"{DEEP}"', "[" * n + "]" * n, 1)
    return text


def _file_cases():
    rng = random.Random(SEED)
    cases = []
    for scene in SCENES:
        base = tomllib.loads(scene.read_text())
        for k in range(FILE_CASES_PER_SCENE):
            data = copy.deepcopy(base)
            kinds = [_mutate(rng, data) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
            cases.append(pytest.param(_toml(rng, data), rng.choice([0.01, 0.02, 0.05]),
                                      id=f"{scene.stem}-{k:03d}-{'+'.join(kinds).replace(' ', '_')}"))
    return cases


def _names(data, array):
    return [e["name"] for e in data.get(array, []) if isinstance(e, dict) and isinstance(e.get("name"), str)]


def _set_cases():
    rng = random.Random(SEED + 1)
    cases = []
    for k in range(SET_CASES):
        scene = rng.choice(SCENES)
        data = tomllib.loads(scene.read_text())
        head = rng.choice(list(SET_KEYS))
        if head in ARRAYS:
            names = _names(data, ARRAYS[head]) or ["nosuch"]
            key = f"{head}.{rng.choice(names)}.{rng.choice(SET_KEYS[head])}"
        else:
            key = f"{head}.{rng.choice(SET_KEYS[head])}"
        value = rng.choice(SET_VALUES)
        cases.append(pytest.param(scene, f"{key}={value}", id=f"set-{k:03d}-{key}"))
    return cases


def _option_cases():
    rng = random.Random(SEED + 2)
    options = {"--duration": ["1e300", "1e7", "nan", "inf", "-1", "abc", "", "1000001"],
               "--dt": ["1e300", "0", "-1", "nan", "1e-300", "0.5", "x"],
               "--solver": ["lcp", "magic", "", "PENALTY"],
               "--set": ["x", "=1", "world=1", "world.dt", "a.b.c.d=1"],
               "--record": ["/dev/full", "/nonexistent-folder/x.csv", "/", "/proc/version"]}
    cases = []
    for k in range(OPTION_CASES):
        scene = rng.choice(SCENES)
        flag = rng.choice(list(options))
        value = rng.choice(options[flag])
        argv = [str(scene), "--headless", "--duration", "0.02", flag, value]
        cases.append(pytest.param(argv, id=f"option-{k:03d}-{flag}{value[:12]}"))
    return cases


# ---------------------------------------------------------------------------- running
@pytest.fixture(autouse=True)
def no_viewer(monkeypatch):
    """No case may open a window: the viewer is a stub that says it ran."""
    module = types.ModuleType("shell.window")
    module.run_viewer = lambda *a, **kw: 0
    monkeypatch.setitem(sys.modules, "shell.window", module)


def _run(argv):
    """main(argv) in-process: (status, stdout, stderr); any exception out of main fails,
    and so does a warning (numpy's overflow warnings are stray output)."""
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _check(status, err, argv):
    assert status in (0, 2, 3), f"exit {status} for {argv}: {err}"
    assert "Traceback" not in err and "internal error" not in err, err
    if status == 2:
        # one line for the error (a robot's model may have warned while it loaded: those
        # lines are its own, said once per process)
        lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
        assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) < 600, err
    if status == 3:
        assert "blew up" in err, err


@pytest.mark.parametrize("text, duration", _file_cases())
def test_mutated_scene(text, duration, tmp_path):
    path = tmp_path / "mutated.toml"
    path.write_text(text)
    argv = [path, "--headless", "--duration", duration]
    status, _, err = _run(argv)
    _check(status, err, argv)


@pytest.mark.parametrize("scene, pair", _set_cases())
def test_fuzzed_set(scene, pair):
    argv = [scene, "--headless", "--duration", "0.02", "--set", pair]
    status, _, err = _run(argv)
    _check(status, err, argv)


@pytest.mark.parametrize("argv", _option_cases())
def test_fuzzed_option(argv):
    status, _, err = _run(argv)
    _check(status, err, argv)


# ---------------------------------------------------------------------------- issue 14, case by case
def _bad(argv, *words):
    status, _, err = _run(argv)
    _check(status, err, argv)
    assert status == 2, err
    for w in words:
        assert w in err, err
    return err


def test_huge_chain_radius_is_refused():
    _bad([CHAIN, "--headless", "--duration", "0.01", "--set", "chain.pendulum.radius=1e300"],
         "--set chain.pendulum.radius", "1e+300")


def test_huge_body_radius_is_refused():
    _bad([GALLERY, "--headless", "--duration", "0.01", "--set", "body.bob.radius=1e200"],
         "--set body.bob.radius", "1e+200")


@pytest.mark.parametrize("depth", [17, 1000, 100000])
def test_deeply_nested_array_is_refused(depth, tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("[world]\ngravity = " + "[" * depth + "]" * depth + "\n")
    _bad([path, "--headless", "--duration", "0.01"], str(path), "nested at most")


def test_deeply_nested_set_value_is_refused():
    _bad([CHAIN, "--headless", "--duration", "0.01", "--set",
          "world.gravity=" + "[" * 1000 + "]" * 1000], "--set world.gravity", "nest at most")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_record_on_a_full_disk_is_refused():
    _bad([CHAIN, "--headless", "--duration", "0.05", "--record", "/dev/full"],
         "--record /dev/full", "No space left on device")


@pytest.mark.parametrize("args, words", [
    (["--duration", "1e300"], "--duration must be at most 1e+06 s"),
    (["--duration", "1000001"], "--duration must be at most 1e+06 s"),
    (["--duration", "1e6", "--dt", "1e-6"], "at most 1e+09"),
    (["--duration", "0.1", "--dt", "1e300"], "--dt: dt must be a number between 1e-06 and 0.1 s"),
    (["--duration", "0.1", "--dt", "1e-300"], "--dt: dt must be a number between 1e-06 and 0.1 s"),
])
def test_numbers_beyond_the_stated_bounds_are_refused(args, words):
    _bad([CHAIN, "--headless", *args], words)


def test_too_many_frames_are_refused():
    _bad([CHAIN, "--frames", "10000001"], "--frames must be between 1 and 1e+06")


def test_motor_event_on_a_fixed_joint_is_refused(tmp_path):
    path = tmp_path / "weld.toml"
    path.write_text('[[bodies]]\nname = "b"\nshape = "box"\nsize = [1, 1, 1]\nmass = 1.0\n'
                    '[[joints]]\nname = "weld"\ntype = "fixed"\nparent = "world"\nchild = "b"\nanchor = [0, 0, 0]\n'
                    '[[motor_events]]\njoint = "weld"\ntime = 1.0\ntarget = 0.5\n')
    _bad([path, "--headless", "--duration", "0.01"], "motor_events[0].joint", "revolute or prismatic", "fixed")


@pytest.mark.parametrize("mesh", ["../../../../etc/passwd", "/proc/self/environ", "../outside/secret.obj",
                                  "OUTSIDE_ABS"])
def test_visual_mesh_outside_the_scene_folder_and_assets_is_refused(mesh, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    mesh = str(tmp_path / "outside" / "secret.obj") if mesh == "OUTSIDE_ABS" else mesh
    (tmp_path / "scene").mkdir()
    path = tmp_path / "scene" / "s.toml"
    path.write_text(f'[[bodies]]\nname = "b"\nshape = "box"\nsize = [1, 1, 1]\nmass = 1.0\nvisual_mesh = "{mesh}"\n')
    _bad([path, "--headless", "--duration", "0.01"], "bodies[0].visual_mesh", "may not leave")


def test_largest_constraint_error_does_not_depend_on_record(tmp_path):
    argv = [CHAIN, "--headless", "--duration", "0.3", "--solver", "penalty", "--set",
            "solver.penalty_preset=critical"]
    summaries = []
    for extra in ([], ["--record", tmp_path / "chain.csv"]):
        status, out, err = _run(argv + extra)
        assert status == 0, err
        summaries.append(out.split("largest constraint error ")[1])
    assert summaries[0] == summaries[1] and summaries[0].strip().endswith("(every step)")
    rows = (tmp_path / "chain.csv").read_text().splitlines()
    header = rows[0].split(",")
    errs = [max(float(r.split(",")[i]) for i, c in enumerate(header) if c.endswith(".err")) for r in rows[1:]]
    assert float(summaries[0].split()[0]) == pytest.approx(max(errs), rel=1e-2)


# ---------------------------------------------------------------------------- the Python API
@pytest.mark.parametrize("make, words", [
    (lambda: Sphere(-1), "Sphere: radius must be positive"),
    (lambda: Sphere(0), "Sphere: radius must be positive"),
    (lambda: Sphere(math.nan), "Sphere: radius must be finite"),
    (lambda: Sphere(math.inf), "Sphere: radius must be finite"),
    (lambda: Sphere(1e200), "Sphere: radius must be between"),
    (lambda: Sphere("0.1"), "Sphere: radius must be a number"),
    (lambda: Box((0, 0, 0)), "Box: half_extents[0] must be positive"),
    (lambda: Box((1, 1)), "Box: half_extents must be 3 numbers"),
    (lambda: Box(0.5), "Box: half_extents must be 3 numbers"),
    (lambda: Box((1, math.nan, 1)), "Box: half_extents[1] must be finite"),
    (lambda: Capsule(0.1, -0.2), "Capsule: half_length must be >= 0"),
    (lambda: Cylinder(0.1, 0), "Cylinder: half_length must be positive"),
    (lambda: check_shape("sphere"), "not its name"),
    (lambda: check_shape(None), "shape must be one of physics.Box"),
], ids=["sphere -1", "sphere 0", "sphere nan", "sphere inf", "sphere 1e200", "sphere str", "box 0",
        "box 2 numbers", "box scalar", "box nan", "capsule negative", "cylinder 0", "string shape", "None shape"])
def test_bad_shapes_raise_value_error_with_a_clear_message(make, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        make()


def test_good_shapes_still_work():
    assert Box((0.5, 0.25, 1)).half_extents == (0.5, 0.25, 1.0)
    assert Capsule(0.1, 0).half_length == 0.0
    assert check_shape(Sphere(0.1)) == Sphere(0.1) and check_shape(physics.Plane()).kind == "plane"


@pytest.mark.parametrize("node, words", [(999, "rope node 999 is out of range: this rope has 5 nodes"),
                                         (-6, "rope node -6 is out of range"),
                                         (1.5, "rope node must be an integer index"),
                                         ("0", "rope node must be an integer index")])
def test_rope_node_out_of_range_is_a_value_error(node, words):
    rope = Rope.straight((0, 0, 1), (1, 0, 1), segments=4)
    for attach in (lambda: rope.attach_world(node), lambda: rope.attach_body(node, 1, local_point=(0, 0, 0)),
                   lambda: rope.node_position(node)):
        with pytest.raises(ValueError, match=words):
            attach()
    assert rope.node_index(-1) == 4 and list(rope.node_position(0)) == [0.0, 0.0, 1.0]


# ---------------------------------------------------------------------------- issue 27: outputs, masses, the API
OUTPUT_CASES = 36
MASS_CASES = 40
API_CASES = 60
OUTPUT_FLAGS = {"--record": ".csv", "--record-video": ".mp4", "--screenshot": ".png"}
BAD_PATHS = ["", "/", "/dev/full", "/dev/null", "/sys/x{ext}", "/proc/version", "/proc/x{ext}", "{tmp}",
             "{tmp}/d{ext}", "{tmp}/" + "n" * 300 + "{ext}", "{tmp}/missing/x{ext}", "{tmp}/x", "{tmp}/x.txt",
             "{tmp}/x{ext}.bak", "{tmp}/X{EXT}", "{tmp}/ok{ext}", "{tmp}/" + "é" * 40 + "{ext}", "{tmp}/a b{ext}",
             "{tmp}/x\n{ext}"]
MASS_VALUES = ["1e-300", "1e-200", "1e-100", "1e-7", "1e-6", "1e12", "1e13", "5e-324", "1e15", "0.001",
               "1e6", "-1e-300"]


def _output_cases():
    rng = random.Random(SEED + 3)
    cases = []
    for k in range(OUTPUT_CASES):
        flag = rng.choice(list(OUTPUT_FLAGS))
        path = rng.choice(BAD_PATHS)
        mode = rng.choice(["headless", "headless", "viewer"])
        if flag == "--record":
            mode = "headless"
        cases.append(pytest.param(flag, path, mode, id=f"output-{k:03d}-{flag[2:]}-{mode}"))
    return cases


@pytest.mark.parametrize("flag, path, mode", _output_cases())
def test_fuzzed_output_path(flag, path, mode, tmp_path):
    ext = OUTPUT_FLAGS[flag]
    (tmp_path / f"d{ext}").mkdir()
    path = path.replace("{tmp}", str(tmp_path)).replace("{ext}", ext).replace("{EXT}", ext.upper())
    before = sorted(p.name for p in tmp_path.iterdir())
    run = ["--headless", "--duration", "0.02"] if mode == "headless" else ["--frames", "2"]
    argv = [GALLERY, *run, f"{flag}={path}"]
    status, out, err = _run(argv)
    _check(status, err, argv)
    after = sorted(p.name for p in tmp_path.iterdir())
    if status == 2:
        assert out == "" and flag in err, err
        assert after == before                          # a refused output creates nothing
    else:
        assert os.path.splitext(path)[1].lower() == ext or os.path.exists(path) and not os.path.isfile(path)


def _mass_cases():
    rng = random.Random(SEED + 4)
    keys = [(CHAIN, "chain.pendulum.mass"), (GALLERY, "body.bob.mass"), (str(ROOT / "scenes" / "door.toml"),
                                                                        "body.door.mass"),
            (str(ROOT / "scenes" / "stack.toml"), "body.steel_ball.mass"),
            (str(ROOT / "scenes" / "rope_swing.toml"), "rope.rope.density"),
            (str(ROOT / "scenes" / "rope_swing.toml"), "rope.rope.radius"),
            (str(ROOT / "scenes" / "stack.toml"), "body.rubber_ball.mass")]
    cases = []
    for k in range(MASS_CASES):
        scene, key = rng.choice(keys)
        value = rng.choice(MASS_VALUES)
        cases.append(pytest.param(scene, f"{key}={value}", id=f"mass-{k:03d}-{key}={value}"))
    return cases


@pytest.mark.parametrize("scene, pair", _mass_cases())
def test_fuzzed_mass(scene, pair):
    argv = [scene, "--headless", "--duration", "0.05", "--set", pair]
    status, _, err = _run(argv)
    _check(status, err, argv)
    value = float(pair.split("=")[1])
    if "mass" in pair and not (1e-6 <= value <= 1e12):
        assert status == 2 and "expected a mass between 1e-06 and 1e+12 kg" in err, err


JUNK = [None, "3", b"x", True, math.nan, math.inf, -1, 1.5, 2 ** 63, 1e300, -0.0, [1], {"a": 1}, object(),
        10 ** 9 + 1, np.float64(2.0), np.int32(3), "", (), 1e-300]


def _api_cases():
    rng = random.Random(SEED + 5)
    calls = ["advance", "advance_steps", "restore_state", "add_body_mass", "add_body_collide", "collide",
             "add_body_density", "restore_mangled"]
    return [pytest.param(rng.choice(calls), rng.randrange(len(JUNK)), rng.randrange(1 << 30),
                         id=f"api-{k:03d}") for k in range(API_CASES)]


@pytest.mark.parametrize("call, j, seed", _api_cases())
def test_fuzzed_api_call(call, j, seed):
    """A junk argument: the call works or raises one ValueError; the world steps on."""
    junk = JUNK[j]
    w = physics.World(dt=0.01, solver=random.Random(seed).choice(["penalty", "impulse", "lcp"]))
    w.add_body("ground", physics.Plane(), static=True)
    w.add_body("bob", Sphere(0.1), mass=1.0, position=(0, 0, 0.5))
    w.advance(0.05)
    saved = w.save_state()
    actions = {
        "advance": lambda: w.advance(junk),
        "advance_steps": lambda: w.advance_steps(junk),
        "restore_state": lambda: w.restore_state(junk),
        "add_body_mass": lambda: w.add_body("x", Sphere(0.1), mass=junk, position=(2, 0, 1)),
        "add_body_density": lambda: w.add_body("x", Sphere(0.1), density=junk, position=(2, 0, 1)),
        "add_body_collide": lambda: w.add_body("x", Sphere(0.1), mass=1.0, collide=junk, position=(2, 0, 1)),
        "collide": lambda: setattr(w.body("bob"), "collide", junk),
        "restore_mangled": lambda: w.restore_state(_mangled(saved, junk, random.Random(seed))),
    }
    if call in ("advance", "advance_steps") and isinstance(junk, (int, float)) and not isinstance(junk, bool) \
            and math.isfinite(junk) and 0 <= junk <= 200:
        junk = min(junk, 20)                   # a real advance, kept short
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            actions[call]()
        except ValueError as e:
            assert "\n" not in str(e) and len(str(e)) < 400, e
        except physics.SimulationBlowUp:
            pass
        if w.has_body("x"):                    # added: the saved state is of another layout now
            w.reset()
            w.advance(0.1)
        else:
            w.restore_state(saved)
            w.advance(0.05)
    assert np.isfinite(w.state.bodies.pos).all() and w.time == pytest.approx(0.1)


def _mangled(saved, junk, rng):
    """A saved state with one entry replaced by junk (or a key dropped)."""
    s = dict(saved)
    key = rng.choice(sorted(s))
    if rng.random() < 0.2:
        del s[key]
    else:
        s[key] = junk
    return s
