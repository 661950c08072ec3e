"""Every shipped scene loads and runs, and the door reproduces seed 001's numbers."""
import math
from pathlib import Path

import numpy as np
import pytest

import physics

SCENES = sorted((Path(__file__).resolve().parent.parent / "scenes").glob("*.toml"))
# Largest joint error (m or rad) over the first 2 s, sampled every step, with each
# scene's own solver settings. Measured: gallery 6.1e-4 (the ball joint's anchor), chain
# 1.1e-3, door 2.1e-4, door_robot and xarm_pick (the robots' joints; issue 29 asks 2 mm)
# below. Limits bind speculatively (joint_rows.speculative_limits): before, gallery's rail
# overshot its stop by 4.0e-3 m. A scene not listed: 1 cm.
ERROR_BOUND = {"gallery": 1e-3, "chain": 0.01, "door": 0.01, "door_robot": 2e-3, "xarm_pick": 2e-3}
# the same under lcp (one step of Δt, no substeps, limits speculated from the step's start
# velocities): gallery 4.5e-10; the robots below
LCP_ERROR_BOUND = {"gallery": 1e-6, "door_robot": 2e-3, "xarm_pick": 2e-3}


def _run_worst(world, duration):
    worst = 0.0
    for _ in range(int(round(duration / world.dt))):
        world.step()
        worst = max(worst, world.max_constraint_error())
    return worst


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_scene_loads_and_runs_two_seconds_with_small_constraint_error(path):
    world = physics.load_scene(path)
    assert isinstance(world.view, dict) and world.scene_path == str(path)
    assert _run_worst(world, 2.0) < ERROR_BOUND.get(path.stem, 0.01)
    assert np.all(np.isfinite(world.state.bodies.pos)) and world.time == pytest.approx(round(2.0 / world.dt) * world.dt)


@pytest.mark.parametrize("path", [p for p in SCENES if p.stem in LCP_ERROR_BOUND], ids=lambda p: p.stem)
def test_scene_with_joint_limits_keeps_them_under_lcp(path):
    world = physics.load_scene(path, {"solver.kind": "lcp"})
    assert _run_worst(world, 2.0) < LCP_ERROR_BOUND[path.stem]


@pytest.mark.parametrize("path", [p for p in SCENES if p.stem in ("gallery", "chain")], ids=lambda p: p.stem)
def test_scene_runs_ten_seconds_on_the_critical_penalty_preset(path):
    # seed 000's solver: measured over 10 s, every step: gallery 2.8e-2 (the ball's
    # swing cone, rad), chain 3.4e-2 m
    world = physics.load_scene(path, {"solver.kind": "penalty", "solver.penalty_preset": "critical",
                                      "world.dt": "0.003"})
    assert _run_worst(world, 10.0) < 0.05


def test_chain_scene_takes_fifty_links():
    world = physics.load_scene(Path(__file__).resolve().parent.parent / "scenes" / "chain.toml",
                               {"chain.pendulum.links": "50"})
    assert [b.name for b in world.bodies][-1] == "pendulum_49" and len(world.joints) == 50
    assert _run_worst(world, 0.5) < 0.01


def test_door_scene_stops_when_and_where_seed_001_says():
    world = physics.load_scene(Path(__file__).resolve().parent.parent / "scenes" / "door.toml")
    hinge = world.joint("hinge")
    t_stop = None
    while world.time < 1.5:
        world.step()
        if t_stop is None and world.time > 0.4 and hinge.rate <= 1e-12:
            t_stop = world.time
    assert t_stop == pytest.approx(0.87, abs=0.02)
    assert math.degrees(hinge.angle) == pytest.approx(37.62, abs=0.5)


def test_door_coasts_with_linear_omega_and_quadratic_angle():
    world = physics.load_scene(Path(__file__).resolve().parent.parent / "scenes" / "door.toml")
    hinge = world.joint("hinge")
    ts, qs, ws = [], [], []
    while world.time < 0.8:
        world.step()
        if world.time > 0.34:
            ts.append(world.time), qs.append(hinge.angle), ws.append(hinge.rate)
    # Linear to 0.1 % of ω0: semi-implicit Euler in maximal coordinates takes a share
    # ∝ (ωΔt)² of the rotation each step when it projects the hinge's point rows
    # (measured: deceleration 0.5 % above τΔt/I at ω = 1.5 rad/s, falling with ω²).
    ws_fit = np.polyval(np.polyfit(ts, ws, 1), ts)
    qs_fit = np.polyval(np.polyfit(ts, qs, 2), ts)
    assert np.max(np.abs(ws - ws_fit)) < 1.5e-3
    assert np.max(np.abs(qs - qs_fit)) < 1e-4


def test_friction_override_changes_the_door_stop_time():
    path = Path(__file__).resolve().parent.parent / "scenes" / "door.toml"
    stops = []
    for friction in ("20", "30"):
        world = physics.load_scene(path, {"joint.hinge.friction": friction})
        while world.joint("hinge").rate > 1e-12 or world.time < 0.4:
            world.step()
        stops.append(world.time)
    assert stops[1] < stops[0]
