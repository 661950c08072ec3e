"""Compare mode (shell/compare.py): the door under impulse with a penalty ghost; both
follow their own solver's run exactly, the ghost is drawn translucent, the plot shows
both curves, edits reach both, and turning it off keeps the primary world."""
from pathlib import Path

import numpy as np
import pytest

import physics

from window_helpers import frame, window

SCENES = Path(__file__).resolve().parent.parent / "scenes"


@pytest.fixture(scope="module")
def win():
    yield from window("door.toml")


def run(win, seconds):
    t_end = win.world.time + seconds - 1e-9
    while win.world.time < t_end:
        win.driver.update(min(0.1, t_end - win.world.time + 1e-6))
        frame(win)


def own_run(family, steps):
    w = physics.load_scene(SCENES / "door.toml")
    w.solver = family
    w.advance_steps(steps)
    return w


def stop_step(angles):
    """First step after which the angle no longer changes (None if it keeps moving)."""
    d = np.abs(np.diff(angles)) < 1e-12
    for i in range(len(d)):
        if d[i:].all():
            return i + 1
    return None


def test_impulse_against_a_penalty_ghost_on_the_door(win):
    assert win.load_scene(str(SCENES / "door.toml"))
    frame(win)
    assert win.world.solver == "impulse"
    win.start_compare("penalty")
    frame(win)
    ghost = win.compare.ghost
    assert ghost.solver == "penalty" and ghost is not win.world
    ours, theirs = [], []
    while win.world.time < 1.5 - 1e-9:
        win.driver.update(0.01)                                  # one step a frame: a sample a step
        frame(win)
        ours.append(win.world.joint("hinge").angle)
        theirs.append(ghost.joint("hinge").angle)
        assert ghost.state.step_count == win.world.state.step_count
    steps = win.world.state.step_count
    # both doors move, on two different trajectories, and each is exactly its solver's own
    # run from the same start
    assert abs(ours[-1]) > 0.3 and abs(theirs[-1]) > 0.3 and ours != theirs
    assert win.world.joint("hinge").angle == own_run("impulse", steps).joint("hinge").angle
    assert ghost.joint("hinge").angle == own_run("penalty", steps).joint("hinge").angle
    # the stop times, to the step: impulse stops on its friction hinge (0.87 s), as in its
    # own run; the penalty ghost acts on the friction too and stops (to 1e-12 rad a step,
    # its hinge springs settling last) within two steps of it
    alone = physics.load_scene(SCENES / "door.toml")
    solo = []
    for _ in range(steps):
        alone.step()
        solo.append(alone.joint("hinge").angle)
    assert stop_step(ours) == stop_step(solo) and 0.8 < stop_step(ours) * alone.dt < 0.95
    assert stop_step(theirs) is not None and abs(stop_step(theirs) - stop_step(ours)) <= 2
    # the plot holds the ghost's curve beside the world's
    t, q = win.compare.series()
    assert len(t) > 100 and win.panel.plots.ghost is not None
    assert q[-1] == pytest.approx(np.degrees(theirs[-1]))


def test_the_ghost_is_drawn_translucent(win):
    assert win.load_scene(str(SCENES / "door.toml"))
    win.start_compare("penalty")
    run(win, 0.6)                                               # the two doors moving
    win.driver.paused = True
    frame(win)
    with_ghost = win.pixels().astype(int)
    ghost = win.compare
    win.stop_compare()
    frame(win)
    without = win.pixels().astype(int)
    sw = int(win.scene_size()[0])
    diff = np.abs(with_ghost[:, :sw] - without[:, :sw]).max(axis=2)
    changed = diff > 6
    assert changed.sum() > 2000                                 # the ghost door covers an area
    # translucent: under the ghost, the scene still shows (its shading carries through)
    a, b = with_ghost[:, :sw][changed][:, 1], without[:, :sw][changed][:, 1]
    assert np.corrcoef(a, b)[0, 1] > 0.5
    assert np.all(with_ghost[:, :sw][changed][:, 2] >= without[:, :sw][changed][:, 2] - 2)   # tinted blue
    assert ghost.ghost.time == win.world.time
    win.driver.paused = False


def test_edits_reach_the_ghost_and_off_keeps_the_primary(win):
    assert win.load_scene(str(SCENES / "door.toml"))
    win.start_compare("impulse", iterations=50)                 # the same family, other settings
    frame(win)
    win.world.joint("hinge").friction = 40.0                    # a live edit
    run(win, 0.3)
    g = win.compare.ghost
    assert g.joint("hinge").friction == 40.0 and g.solver_settings("impulse")["iterations"] == 50
    primary = win.world
    win.action_compare()                                        # K: off
    assert win.compare is None and win.world is primary
    win.action_compare()                                        # on again: from the current state
    frame(win)
    assert win.compare.ghost.time == primary.time
    win.stop_compare()
