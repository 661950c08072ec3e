"""A broken scene file gives one message naming the file and the key, never a traceback."""
import subprocess
import sys
from pathlib import Path

import pytest

from physics.scene import SceneError, load_scene

ROOT = Path(__file__).resolve().parent.parent
GOOD_BODY = '[[bodies]]\nname = "box"\nshape = "box"\nsize = [1, 1, 1]\nmass = 1.0\n'
GOOD_JOINT = '[[joints]]\nname = "hinge"\ntype = "revolute"\nparent = "world"\nchild = "box"\nanchor = [0, 0, 0]\n'

MALFORMED = {
    "syntax error": ("[[bodies]\nname = 1", "(syntax)"),
    "missing key": ('[[bodies]]\nname = "box"\nshape = "box"\nmass = 1.0\n', "bodies[0].size"),
    "wrong type": ('[world]\ndt = "fast"\n', "world.dt"),
    "vector of two": ('[[bodies]]\nname = "b"\nshape = "sphere"\nradius = 1\nmass = 1\nposition = [0, 1]\n',
                      "bodies[0].position"),
    "unknown joint type": (GOOD_BODY + GOOD_JOINT.replace("revolute", "hinged"), "joints[0].type"),
    "unknown body": (GOOD_BODY + GOOD_JOINT.replace('child = "box"', 'child = "door"'), "joints[0].child"),
    "non-positive mass": (GOOD_BODY.replace("mass = 1.0", "mass = -2.0"), "bodies[0].mass"),
    "NaN mass": (GOOD_BODY.replace("mass = 1.0", "mass = nan"), "bodies[0].mass"),
    "unknown key": (GOOD_BODY.replace("mass = 1.0", "mas = 1.0"), "bodies[0].mas"),
    "duplicate name": (GOOD_BODY + GOOD_BODY, "bodies[1].name"),
    "unknown shape": (GOOD_BODY.replace('"box"\nsize', '"cone"\nsize'), "bodies[0].shape"),
    "limits reversed": (GOOD_BODY + GOOD_JOINT + "limits_deg = [30, -30]\n", "joints[0].limits_deg"),
    "inf in vector": (GOOD_BODY.replace("size = [1, 1, 1]", "size = [1, inf, 1]"), "bodies[0].size"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_scene_is_refused_with_the_key_named(case, tmp_path):
    text, key = MALFORMED[case]
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(SceneError) as err:
        load_scene(path)
    message = str(err.value)
    assert str(path) in message and key in message and "\n" not in message


def test_override_naming_a_missing_joint_is_refused(tmp_path):
    path = tmp_path / "ok.toml"
    path.write_text(GOOD_BODY + GOOD_JOINT)
    with pytest.raises(SceneError, match=r"--set joint\.nosuch\.friction"):
        load_scene(path, {"joint.nosuch.friction": "2"})


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(SceneError, match="readable"):
        load_scene(tmp_path / "none.toml")


@pytest.mark.parametrize("case", ["unknown joint type", "NaN mass", "syntax error"])
def test_cli_exits_2_with_one_line_and_no_traceback(case, tmp_path):
    text, key = MALFORMED[case]
    path = tmp_path / "broken.toml"
    path.write_text(text)
    res = subprocess.run([sys.executable, str(ROOT / "app.py"), str(path), "--headless", "--duration", "0.1"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert key in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
