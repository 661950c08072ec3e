"""A broken scene file or override gives one SceneError naming the file and the key
path, never a traceback; through the CLI it is exit status 2 with one line on stderr."""
import subprocess
import sys
from pathlib import Path

import pytest

from physics.io.scene import SceneError, load_scene

ROOT = Path(__file__).resolve().parent.parent
GOOD_BODY = '[[bodies]]\nname = "box"\nshape = "box"\nsize = [1, 1, 1]\nmass = 1.0\n'
GOOD_JOINT = '[[joints]]\nname = "hinge"\ntype = "revolute"\nparent = "world"\nchild = "box"\nanchor = [0, 0, 0]\n'
GOOD_CHAIN = '[[chains]]\nname = "pendulum"\nlinks = 3\n'

# case: (scene text, key path the message must name, another word it must contain)
MALFORMED = {
    "syntax error": ("[[bodies]\nname = 1", "(syntax)", "line 1"),
    "missing key": ('[[bodies]]\nname = "box"\nshape = "box"\nmass = 1.0\n', "bodies[0].size", "missing"),
    "wrong type: string for a number": ('[world]\ndt = "fast"\n', "world.dt", '"fast"'),
    "wrong type: two numbers for a vector": (
        '[[bodies]]\nname = "b"\nshape = "sphere"\nradius = 1\nmass = 1\nposition = [0, 1]\n',
        "bodies[0].position", "3 numbers"),
    "unknown joint type": (GOOD_BODY + GOOD_JOINT.replace("revolute", "hinged"), "joints[0].type",
                           'one of fixed, spherical, revolute, universal, prismatic, got "hinged"'),
    "unknown shape": (GOOD_BODY.replace('"box"\nsize', '"cone"\nsize'), "bodies[0].shape", '"cone"'),
    "parent that is not a body": (GOOD_BODY + GOOD_JOINT.replace('parent = "world"', 'parent = "frame"'),
                                  "joints[0].parent", '"frame"'),
    "child that is not a body": (GOOD_BODY + GOOD_JOINT.replace('child = "box"', 'child = "door"'),
                                 "joints[0].child", '"door"'),
    "non-positive mass": (GOOD_BODY.replace("mass = 1.0", "mass = -2.0"), "bodies[0].mass", "a mass between 1e-06"),
    "NaN mass": (GOOD_BODY.replace("mass = 1.0", "mass = nan"), "bodies[0].mass", "nan"),
    "inf in a vector": (GOOD_BODY.replace("size = [1, 1, 1]", "size = [1, inf, 1]"), "bodies[0].size", "inf"),
    "zero radius": ('[[bodies]]\nname = "b"\nshape = "sphere"\nradius = 0\nmass = 1\n', "bodies[0].radius",
                    "positive"),
    "non-positive dt": ("[world]\ndt = 0.0\n", "world.dt", "between"),
    "both mass and density": (GOOD_BODY + "density = 500.0\n", "bodies[0].mass", "exactly one"),
    "neither mass nor density": (GOOD_BODY.replace("mass = 1.0\n", ""), "bodies[0].mass", "exactly one"),
    "unknown key (typo)": (GOOD_BODY.replace("mass = 1.0", "mas = 1.0"), "bodies[0].mas", "known key"),
    "key that does not apply to the shape": (GOOD_BODY + "radius = 0.2\n", "bodies[0].radius", "box"),
    "key that does not apply to the joint": (GOOD_BODY + GOOD_JOINT + "swing_deg = 30\n", "joints[0].swing_deg",
                                             "spherical"),
    "universal joint without axis2": (GOOD_BODY + GOOD_JOINT.replace("revolute", "universal"),
                                      "joints[0].axis2", "missing"),
    "duplicate body name": (GOOD_BODY + GOOD_BODY, "bodies[1].name", "unique"),
    "duplicate joint name": (GOOD_BODY + GOOD_JOINT + GOOD_JOINT, "joints[1].name", "unique"),
    "limits lo > hi": (GOOD_BODY + GOOD_JOINT + "limits_deg = [30, -30]\n", "joints[0].limits_deg", "lo <= hi"),
    "a plane that is not static": ('[[bodies]]\nname = "g"\nshape = "plane"\nmass = 1.0\n', "bodies[0].static",
                                   "plane"),
    "solver that does not exist": ('[solver]\nkind = "magic"\n', "solver.kind", "penalty, impulse, lcp"),
    "unknown contact setting": ('[contacts]\nname = "r"\n', "contacts.name", "margin"),
    "restitution above 1": (GOOD_BODY + "restitution = 1.5\n", "bodies[0].restitution", "between 0 and 1"),
    "rope without an end": ('[[ropes]]\nname = "r"\nstart = [0, 0, 1]\n', "ropes[0].end", "missing"),
    "rope attached to an unknown body": ('[[ropes]]\nname = "r"\nstart = [0, 0, 1]\nend = [1, 0, 1]\n'
                                         'start_attach = "nobody"\n', "ropes[0].start_attach", "nobody"),
    "rope with a negative modulus": ('[[ropes]]\nname = "r"\nstart = [0, 0, 1]\nend = [1, 0, 1]\nE = -1\n',
                                     "ropes[0].E", ">= 0"),
    "motor event on an unknown joint": ('[[motor_events]]\njoint = "nope"\ntime = 1\ntarget = 0\n',
                                        "motor_events[0].joint", "nope"),
    "motor event on a fixed joint": (GOOD_BODY + GOOD_JOINT.replace("revolute", "fixed")
                                     + '[[motor_events]]\njoint = "hinge"\ntime = 1\ntarget = 0\n',
                                     "motor_events[0].joint", "a fixed joint"),
    "radius that overflows": ('[[bodies]]\nname = "b"\nshape = "sphere"\nradius = 1e200\nmass = 1\n',
                              "bodies[0].radius", "between 1e-06 and 1e+06"),
    "chain radius that overflows": (GOOD_CHAIN + "radius = 1e300\n", "chains[0].radius", "between"),
    "number beyond 1e15": (GOOD_BODY + "velocity = [0, 0, 1e300]\n", "bodies[0].velocity", "at most 1e+15"),
    "mass beyond the engine's bounds": (GOOD_BODY.replace("mass = 1.0", "mass = 1e300"), "bodies[0].mass",
                                        "a mass between 1e-06 and 1e+12 kg"),
    "integer too large for a float": (GOOD_BODY.replace("mass = 1.0", "mass = " + "9" * 400), "bodies[0].mass",
                                      "integer of 400 digits"),
    "arrays nested too deep": ("[world]\ngravity = " + "[" * 20 + "]" * 20 + "\n", "world.gravity",
                               "nested at most 16 deep"),
    "arrays nested too deep to parse": ("[world]\ngravity = " + "[" * 1000 + "]" * 1000 + "\n", "(syntax)",
                                        "nested at most 16 deep"),
}


def _write(tmp_path, text, name="broken.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_scene_raises_one_line_naming_file_and_key(case, tmp_path):
    text, key, word = MALFORMED[case]
    path = _write(tmp_path, text)
    with pytest.raises(SceneError) as err:
        load_scene(path)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}: expected ")
    assert word in message and "\n" not in message


def test_unknown_joint_type_message_reads_as_documented(tmp_path):
    path = _write(tmp_path, GOOD_BODY + GOOD_JOINT.replace("revolute", "hinged"))
    with pytest.raises(SceneError) as err:
        load_scene(path)
    assert str(err.value) == (f'{path}: joints[0].type: expected one of fixed, spherical, revolute, '
                              'universal, prismatic, got "hinged"')


def test_missing_file_is_a_scene_error(tmp_path):
    with pytest.raises(SceneError, match="none.toml: \\(file\\): expected a readable scene file"):
        load_scene(tmp_path / "none.toml")


BAD_OVERRIDES = {
    "joint that is not in the scene": ({"joint.nosuch.limits_deg": "[-10,10]"}, "--set joint.nosuch.limits_deg",
                                       'expected the name of a joint in the scene, got "nosuch"'),
    "unknown top key": ({"gravity.z": "-1"}, "--set gravity.z", "world.KEY"),
    "unknown key in [world]": ({"world.gravty": "[0,0,-1]"}, "--set world.gravty", "known key"),
    "bad value": ({"world.dt": "fast"}, "--set world.dt", '"fast"'),
    "reversed limits": ({"joint.hinge.limits_deg": "[10,-10]"}, "--set joint.hinge.limits_deg", "lo <= hi"),
    "chain link set by its body name": ({"body.pendulum_1.mass": "2"}, "--set body.pendulum_1.mass", "chain.NAME"),
    "rope that is not in the scene": ({"rope.r.segments": "2"}, "--set rope.r.segments", "the name of a rope"),
}


@pytest.mark.parametrize("case", list(BAD_OVERRIDES))
def test_bad_override_raises_naming_the_override(case, tmp_path):
    overrides, key, words = BAD_OVERRIDES[case]
    path = _write(tmp_path, GOOD_BODY + GOOD_CHAIN + GOOD_JOINT, "ok.toml")
    with pytest.raises(SceneError) as err:
        load_scene(path, overrides)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}: expected ") and words in message


def test_overrides_are_parsed_as_toml_values_or_plain_strings(tmp_path):
    path = _write(tmp_path, GOOD_BODY + GOOD_CHAIN + GOOD_JOINT, "ok.toml")
    world = load_scene(path, {"world.gravity": "[0,0,-1.62]", "solver.penalty_preset": "critical",
                              "body.box.mass": "20", "chain.pendulum.links": "5",
                              "joint.hinge.limits_deg": "[-10, 10]", "view.eye": "[1, 2, 3]"})
    assert list(world.gravity) == [0.0, 0.0, -1.62]
    assert world.solver_settings("penalty")["penalty_preset"] == "critical"
    assert world.body("box").mass == 20.0
    assert len(world.bodies) == 1 + 5
    assert world.joint("hinge").limits == pytest.approx((-0.17453292519943295, 0.17453292519943295))
    assert world.view == {"eye": [1.0, 2.0, 3.0]}
    assert world.scene_path == str(path)


@pytest.mark.parametrize("case", ["unknown joint type", "NaN mass", "syntax error"])
def test_cli_exits_2_with_one_line_naming_the_key_and_no_traceback(case, tmp_path):
    text, key, _ = MALFORMED[case]
    path = _write(tmp_path, text)
    res = subprocess.run([sys.executable, str(ROOT / "app.py"), str(path), "--headless", "--duration", "0.1"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert key in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- visual mesh paths
MESH_BODY = '[[bodies]]\nname = "b"\nshape = "box"\nsize = [1, 1, 1]\nmass = 1.0\nvisual_mesh = "{}"\n'
TRIANGLE = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"


def test_visual_mesh_resolves_against_the_scene_folder_from_any_directory(tmp_path, monkeypatch):
    (tmp_path / "scene" / "parts").mkdir(parents=True)
    (tmp_path / "scene" / "parts" / "tri.obj").write_text(TRIANGLE)
    _write(tmp_path / "scene", MESH_BODY.format("parts/tri.obj"), "s.toml")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    world = load_scene("../scene/s.toml")
    assert world.body_info[1].visual_mesh == str((tmp_path / "scene" / "parts" / "tri.obj").resolve())


def test_visual_mesh_falls_back_to_the_project_assets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    torus = str((ROOT / "assets" / "meshes" / "torus.obj").resolve())
    for mesh in ("meshes/torus.obj", "assets/meshes/torus.obj", torus):
        world = load_scene(_write(tmp_path, MESH_BODY.format(mesh), "s.toml"))
        assert world.body_info[1].visual_mesh == torus


@pytest.mark.parametrize("mesh", ["../../../../etc/passwd", "/proc/self/environ", "../outside/secret.obj",
                                  "OUTSIDE", "link.obj"])
@pytest.mark.parametrize("mode", ["headless", "viewer"])
def test_visual_mesh_outside_the_scene_folder_is_refused_and_never_opened(mesh, mode, tmp_path, monkeypatch,
                                                                         capsys):
    import builtins
    import io
    import os
    import types
    from shell.cli import main
    secret = tmp_path / "outside" / "secret.obj"
    secret.parent.mkdir()
    secret.write_text(TRIANGLE)
    (tmp_path / "scene").mkdir()
    (tmp_path / "scene" / "link.obj").symlink_to(secret)       # a link inside that points outside
    mesh = str(secret) if mesh == "OUTSIDE" else mesh
    scene = _write(tmp_path / "scene", MESH_BODY.format(mesh), "s.toml")
    opened, real_open, real_os_open = [], builtins.open, os.open

    def spy(file, *a, **kw):
        opened.append(os.path.realpath(file) if isinstance(file, (str, os.PathLike)) else file)
        return real_open(file, *a, **kw)

    def os_spy(file, *a, **kw):
        opened.append(os.path.realpath(file))
        return real_os_open(file, *a, **kw)
    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)
    monkeypatch.setattr(os, "open", os_spy)
    viewer_calls = []
    window = types.ModuleType("shell.window")
    window.run_viewer = lambda *a, **kw: viewer_calls.append(a) or 0
    monkeypatch.setitem(sys.modules, "shell.window", window)
    argv = [str(scene), "--headless", "--duration", "0.01"] if mode == "headless" else [str(scene), "--frames", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bodies[0].visual_mesh" in err[0] and "may not leave" in err[0]
    assert not viewer_calls
    assert not {str(secret.resolve()), "/etc/passwd", "/proc/self/environ"} & {str(p) for p in opened}
