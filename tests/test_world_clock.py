"""The simulated clock: time is the sum of the steps taken, also when Δt changes mid-run,
so timed loads and motor events fire at their times."""
import numpy as np
import pytest

from physics import Sphere, World


def _free_body(dt):
    w = World(dt=dt, gravity=(0.0, 0.0, 0.0), solver="impulse")
    w.add_body("ball", Sphere(0.1), mass=2.0)
    return w


def test_changing_dt_mid_run_keeps_time_counting():
    w = _free_body(0.003)
    w.advance(3.0)
    assert w.time == pytest.approx(3.0, abs=1e-12)
    w.dt = 0.001
    assert w.time == pytest.approx(3.0, abs=1e-12)           # the clock is not rescaled
    w.advance(1.0)
    assert w.time == pytest.approx(4.0, abs=1e-9)
    w.dt = 0.01
    w.advance(0.5)
    assert w.time == pytest.approx(4.5, abs=1e-9)


def test_timed_load_fires_at_its_time_after_a_dt_change():
    """A 10 N push on 2 kg from t = 2.0 to 2.5 s gives Δv = F·0.5/m = 2.5 m/s, all of it
    delivered after Δt changed at t = 1 s, and nothing before 2.0 s."""
    w = _free_body(0.01)
    w.add_load("ball", force=(10.0, 0.0, 0.0), start=2.0, end=2.5)
    w.advance(1.0)
    w.dt = 0.001
    w.advance(0.99)
    assert w.body("ball").velocity[0] == 0.0                 # t = 1.99 s: not yet
    w.advance(1.01)                                          # to t = 3.0 s
    assert w.time == pytest.approx(3.0, abs=1e-9)
    assert w.body("ball").velocity[0] == pytest.approx(2.5, abs=10.0 * w.dt / 2.0)


def test_motor_event_fires_at_its_time_after_a_dt_change():
    w = World(dt=0.01, gravity=(0.0, 0.0, 0.0), solver="impulse")
    w.add_body("wheel", Sphere(0.1), mass=1.0)
    w.add_joint("axle", "revolute", "world", "wheel", anchor=(0, 0, 0), axis=(0, 0, 1))
    w.joint("axle").set_motor("velocity", target=0.0, max_force=100.0)
    w.add_motor_event("axle", time=2.0, target=3.0)
    w.advance(1.0)
    w.dt = 0.002
    w.advance(0.998)
    assert abs(w.joint("axle").rate) < 1e-9                  # t = 1.998 s: still held at 0
    w.advance(0.5)
    assert w.joint("axle").rate == pytest.approx(3.0, rel=1e-6)


def test_save_and_restore_bring_back_the_clock():
    w = _free_body(0.01)
    w.advance(1.0)
    saved = w.save_state()
    w.dt = 0.002
    w.advance(0.5)
    w.restore_state(saved)
    assert w.time == pytest.approx(1.0, abs=1e-12)
    w.dt = 0.01
    w.advance(1.0)
    assert w.time == pytest.approx(2.0, abs=1e-9)
    assert np.isfinite(w.body("ball").position).all()


def test_a_state_saved_under_another_dt_restores_its_time():
    w = _free_body(0.01)
    w.advance(1.0)
    saved = w.save_state()
    w.dt = 0.002
    w.restore_state(saved)
    w.advance(0.5)
    assert w.time == pytest.approx(1.5, abs=1e-9)
