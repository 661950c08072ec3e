"""The headless command line of the public contract (README.md, Headless use) and the CSV recorder.

Three tests run app.py as a subprocess (the real entry point, ~1 s each); the others
call shell.cli.main in-process, which is the same code without the start-up cost.
"""
import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import physics
from shell.cli import main
from physics.io.record import Recorder, columns

ROOT = Path(__file__).resolve().parent.parent
BODY = ["x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz"]
TINY = """
[world]
dt = 0.004
[solver]
penalty_preset = "critical"
[[bodies]]
name = "post"
shape = "box"
size = [0.1, 0.1, 1.0]
static = true
position = [0, 0, 0.5]
[[bodies]]
name = "flap"
shape = "box"
size = [0.4, 0.05, 0.3]
mass = 2.0
position = [0.25, 0, 1.0]
[[chains]]
name = "pendulum"
links = 2
origin = [0, 1, 1]
[[joints]]
name = "hinge"
type = "revolute"
parent = "post"
child = "flap"
anchor = [0.05, 0, 1.0]
axis = [0, 0, 1]
"""


def _app(*args):
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def test_record_writes_the_documented_columns_and_one_row_per_step(tiny, tmp_path):
    out = tmp_path / "tiny.csv"
    res = _app(tiny, "--headless", "--duration", "0.2", "--record", out)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "simulated" in res.stdout
    rows = list(csv.reader(out.open()))
    bodies = ("post", "flap", "pendulum_0", "pendulum_1")       # file order, then chains; not the world
    joints = ("pendulum_j0", "pendulum_j1", "hinge")            # chains' joints, then [[joints]]
    expected = (["t"] + [f"{b}.{c}" for b in bodies for c in BODY]
                + [f"{j}.{c}" for j in joints for c in ("q", "qd", "err")] + ["solver.iterations", "solver.ms"])
    assert rows[0] == expected
    assert len(rows) == 1 + 50                                  # 0.2 s / 4 ms
    assert all(len(r) == len(expected) for r in rows)
    times = [float(r[0]) for r in rows[1:]]
    assert times == [(k + 1) * 0.004 for k in range(50)]      # t = steps · dt exactly
    z = [float(r[expected.index("pendulum_1.z")]) for r in rows[1:]]
    assert z[-1] < z[0]                                         # the chain falls


def test_recorder_row_matches_the_public_views(tiny):
    world = physics.load_scene(tiny)
    world.body("flap").angular_velocity = [0.0, 0.0, 3.0]
    world.advance(0.1)
    row = dict(zip(columns(world), Recorder(world, io.StringIO()).values()))
    flap, hinge = world.body("flap"), world.joint("hinge")
    assert [row[f"flap.{c}"] for c in ("x", "y", "z")] == list(flap.position)
    assert [row[f"flap.{c}"] for c in ("qx", "qy", "qz", "qw")] == list(flap.orientation)
    assert [row[f"flap.{c}"] for c in ("wx", "wy", "wz")] == list(flap.angular_velocity)
    assert (row["hinge.q"], row["hinge.qd"], row["hinge.err"]) == (hinge.angle, hinge.rate, hinge.error)
    assert row["t"] == world.time and isinstance(row["solver.iterations"], int)


def test_set_chain_links_changes_the_number_of_bodies(tmp_path, capsys):
    out = tmp_path / "chain.csv"
    assert main(["scenes/chain.toml", "--headless", "--duration", "0.01", "--set", "chain.pendulum.links=5",
                 "--record", str(out)]) == 0
    header = next(csv.reader(out.open()))
    assert [c[:-2] for c in header if c.endswith(".x")] == ["ground"] + [f"pendulum_{i}" for i in range(5)]


def test_blow_up_exits_3_with_the_time_it_happened(tmp_path):
    # seed 000's own coefficients on a thin horizontal link (inertia ~1e-5 kg·m² about
    # its long axis, far below 0.06·m) at dt = 3 ms: unstable within a few steps
    scene = tmp_path / "thin.toml"
    scene.write_text('[world]\ndt = 0.003\n[solver]\npenalty_preset = "paper"\n'
                     '[[bodies]]\nname = "rod"\nshape = "capsule"\nradius = 0.01\nlength = 0.3\nmass = 0.1\n'
                     'position = [0.2, 0.0, 0.0]\nrotation_deg = [0, 90, 0]\n'
                     '[[joints]]\nname = "hinge"\ntype = "revolute"\nparent = "world"\nchild = "rod"\n'
                     'anchor = [0, 0, 0]\naxis = [0, 1, 0]\n')
    res = _app(scene, "--headless", "--duration", "1")
    assert res.returncode == 3
    assert re.search(r"simulation blew up at t = \d+\.\d+ s", res.stderr)
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_lcp_solver_runs_a_scene_from_the_command_line():
    res = _app("scenes/chain.toml", "--headless", "--duration", "0.1", "--solver", "lcp")
    assert res.returncode == 0, res.stderr
    assert "(lcp)" in res.stdout and "Traceback" not in res.stderr


@pytest.mark.parametrize("args, words", [
    (["--set", "joint.nosuch.limits_deg=[-10,10]"], "--set joint.nosuch.limits_deg: expected the name of a joint"),
    (["--set", "noequals"], "--set expects KEY=VALUE"),
    (["--solver", "magic"], "--solver must be one of penalty, impulse, lcp"),
    (["--dt", "0.5"], "--dt: dt must be a number between"),
    (["--dt", "nan"], "--dt must be a finite number"),
    (["--record", "/nonexistent-folder/x.csv"], "--record /nonexistent-folder/x.csv"),
    (["--screenshot", "/nonexistent-folder/x.png"], "the folder /nonexistent-folder does not exist"),
], ids=["bad --set", "--set without =", "unknown solver", "dt out of range", "dt nan", "record path", "screenshot path"])
def test_bad_input_exits_2_with_one_line(args, words, capsys):
    assert main(["scenes/chain.toml", "--headless", "--duration", "0.1", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words", [
    (["--headless"], "--headless needs --duration"),
    (["--headless", "--duration", "-1"], "--duration must be a number of seconds >= 0"),
    (["--duration", "1"], "--duration is for a headless run"),
    (["--headless", "--duration", "1", "--frames", "3"], "--frames is for the viewer"),
])
def test_options_in_the_wrong_mode_exit_2(args, words, capsys):
    assert main(["scenes/chain.toml", *args]) == 2
    assert words in capsys.readouterr().err


def test_headless_run_prints_a_summary_with_the_largest_error(capsys):
    assert main(["scenes/chain.toml", "--headless", "--duration", "0.5", "--solver", "penalty", "--dt", "0.002",
                 "--set", "solver.penalty_preset=critical"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"simulated 0\.5 s in 250 steps of 0\.002 s \(penalty\), wall [\d.e+-]+ s, "
                     r"largest constraint error [\d.e+-]+", out)


def _fake_module(monkeypatch, name, **attrs):
    import types
    module = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(module, k, v)
    monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.parametrize("viewer", ["missing", "without run_viewer"])
def test_viewer_that_is_not_there_exits_2_saying_so(viewer, monkeypatch, capsys):
    if viewer == "missing":
        monkeypatch.setitem(sys.modules, "shell.window", None)
    else:
        _fake_module(monkeypatch, "shell.window")
    assert main(["scenes/chain.toml", "--frames", "1"]) == 2
    assert "the 3D viewer is not available yet; run with --headless" in capsys.readouterr().err


def test_viewer_gets_the_scene_and_overrides_with_solver_and_dt(monkeypatch):
    calls = []
    _fake_module(monkeypatch, "shell.window", run_viewer=lambda *a, **kw: calls.append((a, kw)) or 0)
    assert main(["scenes/chain.toml", "--frames", "4", "--screenshot", "shot.png", "--set", "world.dt=0.004",
                 "--solver", "penalty", "--dt", "0.002"]) == 0
    assert calls == [(("scenes/chain.toml", {"world.dt": "0.002", "solver.kind": "penalty"}),
                      {"frames": 4, "screenshot": "shot.png"})]


def test_headless_screenshot_without_the_offscreen_renderer_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "render.offscreen", None)
    assert main(["scenes/chain.toml", "--headless", "--duration", "0.01", "--screenshot",
                 str(tmp_path / "x.png")]) == 2
    assert "offscreen renderer" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_a_setting_the_solver_cannot_honour_is_reported_once(capsys, monkeypatch):
    """A joint feature the chosen solver does not act on is not dropped silently: one note
    names it (a family without friction, made here by hand: both families act on it)."""
    from physics.solvers import PenaltySolver
    monkeypatch.setattr(PenaltySolver, "HONOURS", frozenset({"limits"}))
    assert main(["scenes/door.toml", "--headless", "--duration", "0.05", "--solver", "penalty"]) == 0
    out = capsys.readouterr().out
    assert out.count("note: the penalty solver does not act on joint friction (hinge)") == 1
    monkeypatch.undo()
    for solver in ("penalty", "impulse"):
        assert main(["scenes/door.toml", "--headless", "--duration", "0.05", "--solver", solver]) == 0
        assert "note:" not in capsys.readouterr().out
