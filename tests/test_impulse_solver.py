"""The impulse family's solver object (physics/solvers/impulse/solver.py): the settings
reach its kernel as one Params type (one compile), the feature sets the shipped scenes
compile it for, the time cap's count over a call, and
what it tells the panel (rows, readouts, notes)."""
import math
from pathlib import Path

import numpy as np
import pytest

from physics import Box, World, load_scene
from physics.builders import make_chain
from physics.solvers.impulse import SETTINGS, ImpulseSolver, make_params
from physics.solvers.impulse import step

ROOT = Path(__file__).resolve().parent.parent


def _arm(limits=None, friction=0.0):
    w = World(dt=0.01, solver="impulse")
    w.add_body("arm", Box((0.5, 0.03, 0.03)), mass=2.0, position=(0.5, 0, 0))
    w.add_joint("hinge", "revolute", "world", "arm", anchor=(0, 0, 0), axis=(0, 1, 0), limits=limits,
                friction=friction)
    return w


def test_params_have_one_type_whatever_the_settings_so_the_kernel_compiles_once():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=5)
    variants = [dict(), dict(erp=1, epsilon=0, time_cap_ms=5), dict(stabilization="baumgarte", warm_start=False),
                dict(stabilization="shake", substeps=3), dict(method="iterative", position_iterations=0),
                dict(post_projection=True, keep_energy=False), dict(stabilization="none", projection_above=0)]
    types = set()
    for values in variants:
        w.reset()
        w.configure("impulse", **{**{s.name: s.default for s in SETTINGS}, **values})
        solver = w.solvers["impulse"]
        types.add(tuple(type(v) for v in solver.params(w, False)))
        types.add(tuple(type(v) for v in solver.params(w, True)))
        w.advance_steps(3)
    # numbers as they may come (ints for floats, numpy scalars) convert to the same types
    raw = {**{s.name: s.default for s in SETTINGS}, "erp": 1, "epsilon": 0, "contact_epsilon": 0, "time_cap_ms": np.int64(2),
           "iterations": np.int64(9), "substeps": 2.0, "position_iterations": np.float64(3), "warm_start": np.bool_(1)}
    types.add(tuple(type(v) for v in make_params(raw, 3, np.int64(1), np.bool_(True), 1, np.int64(2), 0, np.bool_(False),
                                                   np.bool_(True), np.bool_(False))))
    assert len(types) == 1
    assert step.kernel_for.made and all(len(kernel.signatures) == 1 for kernel in step.kernel_for.made.values())


def test_a_projecting_world_keeps_its_kernel_when_friction_switches_the_energy_projection_off():
    # the energy projection is compiled in with the position projection: a joint given
    # friction (keep_energy then stops acting) steps on the same compiled kernel
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=3)
    solver = w.solvers["impulse"]
    w.configure("impulse", post_projection=True)
    w.advance_steps(2)
    before = solver.features(w, solver.params(w, False))
    assert before.project and before.energy
    w.joint("chain_j0").friction = 0.1
    after = solver.features(w, solver.params(w, False))
    assert after == before and solver.params(w, False).may_iterate
    w.advance_steps(2)


def test_the_shipped_scenes_compile_three_feature_sets_and_the_default_scene_the_leanest():
    # each feature set compiles the whole kernel again: none of the paths (the default
    # scene: iterations without projection), all of them, all with the robots' features
    sets = {}
    for path in sorted((ROOT / "scenes").glob("*.toml")):
        w = load_scene(path)
        w.solver = "impulse"
        solver = w.solvers["impulse"]
        sets.setdefault(solver.features(w, solver.params(w, False)), []).append(path.stem)
    assert len(sets) == 3, sets
    lean = step.Features(False, False, False, False, False, False)
    assert "gallery" in sets[lean]
    robots = [names for f, names in sets.items() if f.hulls]
    assert len(robots) == 1 and {"door_robot", "xarm_pick"} <= set(robots[0])


def test_a_time_cap_below_one_sweep_cuts_every_step_and_each_counts_once():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=20)
    w.configure("impulse", method="iterative", iterations=100000, epsilon=0.0, time_cap_ms=1e-6, substeps=3)
    w.advance_steps(7)
    st = w.stats
    assert st.time_capped and st.capped_steps == 7 and st.steps == 7
    assert 1 <= st.iterations < 100000


def test_position_iterations_are_shown_only_with_split_impulses():
    s = ImpulseSolver()
    names = {n for row in s.PANEL for n in row} | set(s.SIMULATION)
    assert names <= {x.name for x in SETTINGS}
    assert ("stabilization", "position_iterations") in s.panel_rows()
    s.configure(stabilization="baumgarte")
    assert ("stabilization",) in s.panel_rows()
    assert all("position_iterations" not in row for row in s.panel_rows())


def test_readouts_are_iterations_residual_solve_time_and_the_cap_count():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=5)
    w.advance_steps(2)
    solver = w.solvers["impulse"]
    lines = solver.readouts(w.stats, (0, 40))
    assert [r.label for r in lines] == ["iterations", "residual", "solve", "time cap cut"]
    assert lines[0].text == str(w.stats.iterations) and not any(r.warn for r in lines)
    assert lines[3].text == "0 / 40 steps (0.0 %)"
    cut = solver.readouts(w.stats, (3, 40))[3]
    assert cut.warn and cut.text == "3 / 40 steps (7.5 %)"


@pytest.mark.parametrize("limits,friction,keep,noted", [
    (None, 0.0, True, False),                    # ideal joint: the energy projection acts
    ((-math.pi / 4, math.pi / 4), 0.0, True, True),
    (None, 5.0, True, False),                    # friction: its work is counted
    ((-math.pi / 4, math.pi / 4), 0.0, False, False),   # keep_energy off: nothing to explain
])
def test_keep_energy_note_names_why_the_energy_projection_cannot_act(limits, friction, keep, noted):
    w = _arm(limits, friction)
    w.configure("impulse", keep_energy=keep)
    notes = w.solvers["impulse"].notes(w)
    assert bool(notes) == noted
    if noted:
        assert notes == ["keep energy does not act here: a joint has a limit"]
