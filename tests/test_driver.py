"""The fixed-step frame driver keeps physics in step with wall time."""
import pytest

from physics import Sphere, World
from shell.driver import FrameDriver


def _world():
    w = World(dt=0.01, solver="impulse")
    w.add_body("bob", Sphere(0.1), mass=1.0, position=(0.5, 0, 0))
    w.add_joint("pin", "spherical", "world", "bob", anchor=(0, 0, 0))
    return w


def test_driver_steps_whole_dt_and_carries_the_remainder():
    w = _world()
    d = FrameDriver(w)
    assert d.update(0.025) == 2
    assert d.update(0.025) == 3          # 0.005 carried over
    assert w.step_count == 5
    assert w.time == pytest.approx(0.05)


def test_driver_caps_steps_per_frame_and_reports_falling_behind():
    w = _world()
    d = FrameDriver(w, max_steps_per_frame=4)
    assert d.update(1.0) == 4
    assert d.behind
    assert d.update(0.01) == 1 and not d.behind


def test_driver_slow_motion_and_pause():
    w = _world()
    d = FrameDriver(w, speed=0.1)
    assert d.update(0.1) == 1
    d.paused = True
    assert d.update(1.0) == 0


def test_driver_pauses_on_blow_up_instead_of_raising():
    w = _world()
    w.model.max_speed = 1e-3                   # any motion counts as a runaway
    d = FrameDriver(w)
    d.update(0.5)
    assert d.paused and d.error is not None and d.error.time > 0
