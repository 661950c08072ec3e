"""Ropes inside a World (seed 002 coupled with the rigid bodies), the rope scenes, the
motor program and the mouse spring."""
import csv
import math

import numpy as np
import pytest

from physics import Box, Sphere, World, load_scene
from physics.rope import Rope

G = 9.81


@pytest.mark.parametrize("solver", ["penalty", "impulse"])
def test_rope_holds_a_hanging_body_at_rest_with_tension_equal_to_the_weight(solver):
    w = World(dt=0.01, solver=solver)
    w.add_body("weight", Sphere(0.1), mass=2.0, position=(0, 0, 1.0))
    rope = w.add_rope("rope", Rope.straight(start=(0, 0, 3.0), end=(0, 0, 1.1), segments=20))
    w.attach_rope("rope", 0)
    w.attach_rope("rope", -1, body="weight")
    w.advance(3.0)
    # the body hangs still where the rope holds it, the rope keeps its length
    assert np.allclose(w.body("weight").position, (0, 0, 1.0), atol=1e-3)
    assert np.linalg.norm(w.body("weight").velocity) < 1e-3
    assert rope.max_stretch() < 1e-3
    # the top segment carries the body and every node below the fixed one: within 1 %
    below = (2.0 + rope.mass - rope.model.node_mass[0]) * G
    assert rope.segment_tension()[0] == pytest.approx(below, rel=0.01)


def test_rope_pulls_the_body_it_is_attached_to():
    """A body on a frictionless horizontal slider, tied by a rope to a post: released
    with a velocity away from the post, the rope stops it once taut (momentum goes into
    the rope's anchor), so it never gets farther than the rope allows."""
    w = World(dt=0.01, solver="impulse")
    w.add_body("slider", Box((0.2, 0.2, 0.2)), mass=5.0, position=(2.0, 0, 1.0), velocity=(1.0, 0, 0))
    w.add_joint("rail", "prismatic", "world", "slider", anchor=(2.0, 0, 1.0), axis=(1, 0, 0))
    w.add_rope("rope", Rope.straight(start=(0, 0, 1.0), end=(1.9, 0, 1.0), segments=19, ground=False))
    w.attach_rope("rope", 0)
    w.attach_rope("rope", -1, body="slider")
    xs = []
    for _ in range(300):
        w.step()
        xs.append(w.body("slider").position[0])
    assert max(xs) < 2.0 + 0.02          # the taut rope (hanging, so shorter than 1.9 m across) held it
    assert w.body("slider").velocity[0] < 0.5


def test_rope_swing_scene_keeps_its_length_at_15_ms():
    w = load_scene("scenes/rope_swing.toml")
    rope = w.ropes["rope"]
    worst = 0.0
    for _ in range(int(10.0 / w.dt)):
        w.step()
        worst = max(worst, rope.max_stretch())
    assert worst < 1e-3
    assert abs(rope.total_length() - 2.8) < 2.8e-3


def test_rope_tow_runs_60_s_the_cart_follows_and_the_rope_stays_above_the_floor():
    w = load_scene("scenes/rope_tow.toml")
    rope = w.ropes["tow"]
    assert w.dt == pytest.approx(0.015)
    lowest, farthest = math.inf, 0.0
    cart0 = w.body("cart").position
    for _ in range(int(60.0 / w.dt)):
        w.step()
        lowest = min(lowest, float(rope.positions[:, 2].min()))
        gap = np.linalg.norm(w.body("robot").position[:2] - w.body("cart").position[:2])
        farthest = max(farthest, gap)
        assert np.isfinite(rope.positions).all()
    # the rope's centreline never goes below the floor by more than its radius
    assert lowest > -rope.radius
    # the cart followed: it travelled, and never fell farther behind than the rope
    # (2.8 m) plus the robot's and the cart's half-lengths (0.25 + 0.3 m) and a small
    # stretch allowance
    assert np.linalg.norm(w.body("cart").position[:2] - cart0[:2]) > 4.0
    assert farthest < 2.8 + 0.55 + 0.2


def test_motor_events_change_the_target_at_their_time():
    w = load_scene("scenes/rope_tow.toml")
    drive = w.joint("wheel_left")
    w.advance(0.99)
    assert drive.motor["target"] == 0.0
    w.advance(0.03)
    assert drive.motor["target"] == pytest.approx(6.0)          # 0.6 m/s on wheels of r = 0.1 m
    w.reset()
    assert drive.motor["target"] == 0.0


def test_recorded_csv_has_rope_length_and_stretch(tmp_path):
    from shell.cli import main
    out = tmp_path / "swing.csv"
    assert main(["scenes/rope_swing.toml", "--headless", "--duration", "0.3", "--record", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert "rope.length" in rows[0] and "rope.stretch" in rows[0]
    assert float(rows[-1]["rope.length"]) == pytest.approx(2.8, rel=1e-3)


@pytest.mark.parametrize("solver", ["penalty", "impulse"])
def test_grab_spring_pulls_a_body_to_the_target_and_releases(solver):
    w = World(dt=0.005, solver=solver, gravity=(0, 0, 0))
    w.add_body("box", Box((0.2, 0.2, 0.2)), mass=3.0, position=(0, 0, 1))
    w.grab("box", (0.0, 0.0, 1.0), (0.5, 0.0, 1.0))
    w.advance(2.0)
    # critically damped at 2 Hz: settled within 2 s, at the target
    assert np.allclose(w.grab_info["point"], (0.5, 0, 1), atol=5e-3)
    assert np.linalg.norm(w.body("box").velocity) < 0.02
    w.release_grab()
    assert w.grab_info is None


def test_grab_force_is_bounded_by_mass_times_max_accel():
    w = World(dt=0.005, gravity=(0, 0, 0))
    w.add_body("box", Box((0.2, 0.2, 0.2)), mass=3.0, position=(0, 0, 1))
    w.grab("box", (0, 0, 1), (100.0, 0, 1))
    w.step()
    assert np.linalg.norm(w.grab_info["force"]) == pytest.approx(3.0 * World.GRAB_MAX_ACCEL)


def test_grab_pulls_the_rope_node_nearest_the_point_towards_the_target():
    w = load_scene("scenes/rope_swing.toml")
    rope = w.ropes["rope"]
    w.grab("rope", point=(1.4, 0.0, 3.0), target=(0.8, 0.0, 3.5))
    assert w.grab_info["node"] == rope.n_nodes - 1
    w.advance(3.0)
    # pinned at the post and held up by the spring against its weight: the free end
    # hangs a little below the target, never farther than the weight over k
    k = rope.mass * (2 * math.pi * World.GRAB_FREQUENCY) ** 2
    sag = rope.mass * G / k
    end = rope.positions[-1]
    assert np.linalg.norm(end - (0.8, 0.0, 3.5)) < 2.0 * sag + 0.02
    assert rope.max_stretch() < 1e-3
    w.release_grab()
    assert w.grab_info is None and rope.grabbed_node is None


def test_mouse_ray_near_a_rope_grabs_the_rope():
    from ui.drag import MouseDrag

    class View:
        camera = None

        def ray(self, x, y):        # a ray straight down through (x, y)
            return np.array([x, y, 10.0]), np.array([0.0, 0.0, -1.0])

    w = load_scene("scenes/rope_swing.toml")
    drag = MouseDrag(View())
    drag.press(w, 0.0, 0.01)        # 1 cm from the rope's middle node, above it
    assert drag.active and w.grab_info["body"] == "rope"
    assert w.grab_info["node"] == 14
    drag.release(w)
    drag.press(w, 0.0, 0.5)         # 50 cm away: nothing
    assert not drag.active


def test_rope_dropped_on_a_static_box_of_the_world_rests_on_its_top():
    w = World(dt=0.01)
    w.add_body("table", Box((0.5, 0.5, 0.25)), static=True, position=(0, 0, 0.25))
    rope = w.add_rope("rope", Rope.straight(start=(-0.3, 0, 0.7), end=(0.3, 0, 0.7), segments=12))
    w.advance(2.0)
    # on the table top (z = 0.5), one radius up, not through it
    assert np.allclose(rope.positions[:, 2], 0.5 + rope.radius, atol=2e-3)
