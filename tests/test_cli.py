"""The headless command line of the public contract (DESIGN.md)."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _app(*args):
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *args], capture_output=True, text=True, cwd=ROOT)


def test_record_writes_the_documented_columns_one_row_per_step(tmp_path):
    out = tmp_path / "door.csv"
    res = _app("scenes/door.toml", "--headless", "--duration", "0.5", "--record", str(out))
    assert res.returncode == 0, res.stderr
    rows = list(csv.reader(out.open()))
    body = ["x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz"]
    expected = (["t"] + [f"{b}.{c}" for b in ("ground", "frame", "door") for c in body]
                + ["hinge.q", "hinge.qd", "hinge.err", "solver.iterations", "solver.ms"])
    assert rows[0] == expected
    assert len(rows) == 1 + 50
    times = [float(r[0]) for r in rows[1:]]
    assert times[0] == pytest.approx(0.01) and times[-1] == pytest.approx(0.5)


def test_set_changes_the_number_of_chain_links(tmp_path):
    out = tmp_path / "chain.csv"
    res = _app("scenes/chain.toml", "--headless", "--duration", "0.01", "--set", "chain.pendulum.links=3",
               "--record", str(out))
    assert res.returncode == 0, res.stderr
    header = next(csv.reader(out.open()))
    assert [c for c in header if c.endswith(".q")] == ["pendulum_j0.q", "pendulum_j1.q", "pendulum_j2.q"]


def test_blow_up_exits_3_with_the_time(tmp_path):
    # seed 000's own coefficients on a thin horizontal link (small inertia about its
    # long axis): unstable at 3 ms
    scene = tmp_path / "thin.toml"
    scene.write_text('[world]\ndt = 0.003\n[solver]\npenalty_preset = "paper"\n'
                     '[[bodies]]\nname = "rod"\nshape = "capsule"\nradius = 0.01\nlength = 0.3\nmass = 0.1\n'
                     'position = [0.2, 0.0, 0.0]\nrotation_deg = [0, 90, 0]\n'
                     '[[joints]]\nname = "hinge"\ntype = "revolute"\nparent = "world"\nchild = "rod"\n'
                     'anchor = [0, 0, 0]\naxis = [0, 1, 0]\n')
    res = _app(str(scene), "--headless", "--duration", "1")
    assert res.returncode == 3
    assert "blew up at t =" in res.stderr and "Traceback" not in res.stderr


def test_unavailable_solver_is_bad_input():
    res = _app("scenes/chain.toml", "--headless", "--duration", "0.1", "--solver", "lcp")
    assert res.returncode == 2 and "lcp" in res.stderr
