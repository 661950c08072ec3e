"""A solver family added in a test (registered in FAMILIES, nothing else edited) is a
family like the shipped ones: the World, scene files (and their writer), --solver and
--set on the command line, the chain bench, the panel (its radio button, its settings'
widgets, its readouts) and the keys all offer it."""
from collections import namedtuple
import json

import numpy as np
import pytest

import physics
from physics.settings import Setting
from physics.solvers import FAMILIES, Readout, SolverBase
from physics.solvers.stats import SolverStats

from window_helpers import SCENES, frame, open_window

FallParams = namedtuple("FallParams", "drag")


class FreeFall(SolverBase):
    """A toy family: every dynamic body falls under gravity with linear drag (semi-implicit
    Euler, v ← (v + g h)/(1 + c h), x ← x + h v); joints and contacts are ignored."""
    name = "free_fall"
    description = "Bodies fall; joints and contacts are ignored (a test family)."
    HONOURS = frozenset()
    SETTINGS = (Setting("fall_drag", "float", 0.0, 0.0, 10.0, unit="1/s", label="drag", help="Linear drag (1/s)."),
                Setting("fall_note", "bool", False, label="note", help="Say something in the panel."))
    PANEL = (("fall_drag", "fall_note"),)

    def params(self, world, coupled):
        return FallParams(float(self.settings["fall_drag"]))

    def run(self, world, call, n, t0):
        env, bodies = call["bundles"][:2]
        moving = bodies.inv_mass > 0.0
        h, c = world.dt, call["params"].drag
        for _ in range(n):
            bodies.vel[moving] = (bodies.vel[moving] + h * env.gravity) / (1.0 + c * h)
            bodies.pos[moving] += h * bodies.vel[moving]
        return n

    def finish(self, world, call, done):
        return SolverStats(iterations=1, steps=done)

    def readouts(self, stats, capped=(0, 0)):
        return super().readouts(stats, capped) + [Readout("falling", f"{stats.steps} steps", "Steps of the call.",
                                                          False)]

    def notes(self, world):
        return ["free_fall ignores every joint"] if self.settings["fall_note"] and world.joints else []


@pytest.fixture
def with_toy(monkeypatch):
    monkeypatch.setitem(FAMILIES, FreeFall.name, FreeFall)
    yield FreeFall.name


def test_a_body_under_the_toy_family_falls_as_semi_implicit_euler_says(with_toy):
    world = physics.World(dt=0.01, solver=with_toy)
    world.add_body("ball", physics.Sphere(0.1), mass=1.0, position=(0, 0, 10))
    world.advance_steps(100)
    n, h, g = 100, 0.01, 9.81
    assert world.body("ball").position[2] == pytest.approx(10.0 - g * h * h * n * (n + 1) / 2, abs=1e-9)
    assert world.stats.steps == 100 and world.substep_dt == 0.01


def test_a_scene_file_names_the_toy_family_and_its_settings(with_toy, tmp_path):
    from physics.io.scene_writer import save_scene
    path = tmp_path / "fall.toml"
    path.write_text(f'[solver]\nkind = "{with_toy}"\nfall_drag = 0.5\n\n[[bodies]]\nname = "ball"\nshape = "sphere"\n'
                    'radius = 0.1\nmass = 1.0\nposition = [0, 0, 1]\n')
    world = physics.load_scene(path, {"solver.fall_drag": "2"})
    assert world.solver == with_toy and world.solver_settings()["fall_drag"] == 2.0
    save_scene(world, tmp_path / "again.toml")
    again = physics.load_scene(tmp_path / "again.toml")
    assert again.solver == with_toy and again.solver_settings()["fall_drag"] == 2.0
    from physics.io.scene import SceneError
    path.write_text(f'[solver]\nkind = "{with_toy}"\nfall_drag = 50\n')
    with pytest.raises(SceneError, match="fall_drag"):
        physics.load_scene(path)


def test_the_command_line_runs_the_toy_family(with_toy, capsys):
    from shell.cli import main
    assert main([str(SCENES / "chain.toml"), "--headless", "--duration", "0.05", "--solver", with_toy,
                 "--set", "solver.fall_drag=1"]) == 0
    out = capsys.readouterr().out
    assert f"({with_toy})" in out
    assert main([str(SCENES / "chain.toml"), "--headless", "--duration", "0.05", "--solver", "no_such"]) == 2


def test_the_chain_bench_runs_the_toy_family(with_toy, capsys):
    from physics.bench import main
    assert main(["--n", "3", "--joint", "hinge", "--solver", f"{with_toy}:fall_drag=1", "--duration", "0.03",
                 "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["solver"] for r in records] == [f"{with_toy}:fall_drag=1"] and records[0]["blew_up_at_s"] is None


def test_the_panel_and_the_keys_offer_the_toy_family(with_toy):
    from pyglet.window import key
    from ui.help import all_keys
    win = open_window("door.toml")
    try:
        frame(win)
        number = list(FAMILIES).index(with_toy) + 1
        entry = next(k for k in all_keys() if k.arg == with_toy)
        assert entry.label == str(number) and getattr(key, f"_{number}") in entry.symbols
        win.dispatch_event("on_key_press", getattr(key, f"_{number}"), 0)
        frame(win)
        frame(win)
        assert win.world.solver == with_toy
        assert {f"solver.{with_toy}", "solver.fall_drag", "solver.fall_note"} <= set(win.panel.w.rects)
        assert win.panel.set("solver.fall_drag", 3.0) and win.world.solver_settings()["fall_drag"] == 3.0
        win.world.configure(with_toy, fall_note=True)
        win.driver.paused = False
        for _ in range(3):
            win.driver.update(0.05)
            frame(win)
        assert win.world.stats.steps > 0
        lines = win.world.active_solver.readouts(win.world.stats)
        assert lines[-1].label == "falling" and win.world.active_solver.notes(win.world)
        assert np.all(np.isfinite(win.world.state.bodies.pos))
    finally:
        win.close()
