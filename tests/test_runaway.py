"""Blow-up detection beyond NaN and speed bounds: energy that grows far past what forces
and motors put in, or joints that come apart, pause the simulation (SimulationBlowUp)."""
import numpy as np
import pytest

from physics import Box, SimulationBlowUp, Sphere, World
from physics.builders import make_chain
from physics.world import RunawayWatch


def test_energy_runaway_without_any_input_counts_as_a_blow_up():
    """A pendulum whose state is pumped by hand each step gains energy no force put in."""
    w = World(dt=0.01, solver="impulse")
    w.add_body("bob", Sphere(0.1), mass=1.0, position=(1, 0, 0))
    w.add_joint("hinge", "revolute", "world", "bob", anchor=(0, 0, 0), axis=(0, 1, 0))
    with pytest.raises(SimulationBlowUp, match="energy grew"):
        for _ in range(400):
            w.advance(0.1)
            w.state.bodies.vel[1] *= 1.5             # energy appears from nowhere
            w.state.bodies.omega[1] *= 1.5
    assert w.blown_up is not None


def test_a_joint_pulled_apart_counts_as_a_blow_up():
    w = World(dt=0.003, solver="penalty", settings={"penalty_preset": "critical"})
    make_chain(w, links=5)
    w.advance(0.05)
    watch = RunawayWatch(w)
    assert watch.check(w, 0.0) is None
    link = w.body("chain_3")
    link.position = link.position + (0.0, 0.0, 3.0)  # tear a link off behind the solver's back
    assert "came apart by 3" in watch.check(w, 0.0)


def test_a_pushed_body_gaining_the_work_of_its_load_is_not_a_runaway():
    """100 N for 2 s on 1 kg, no gravity: 20 kJ of kinetic energy, all of it put in by the load."""
    w = World(dt=0.01, gravity=(0, 0, 0), solver="impulse")
    w.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0)
    w.add_load("box", force=(100.0, 0, 0), start=0.0, end=2.0)
    w.advance(3.0)
    assert w.body("box").velocity[0] == pytest.approx(200.0, rel=1e-9)


def test_a_motor_spinning_up_a_wheel_is_not_a_runaway():
    w = World(dt=0.01, gravity=(0, 0, 0), solver="impulse")
    w.add_body("wheel", Sphere(0.3), mass=5.0)
    w.add_joint("axle", "revolute", "world", "wheel", anchor=(0, 0, 0), axis=(0, 0, 1))
    w.joint("axle").set_motor("velocity", target=200.0, max_force=50.0)
    w.advance(5.0)
    assert w.joint("axle").rate == pytest.approx(200.0, rel=1e-6)


def test_a_long_chain_swinging_for_10_s_stays_within_its_energy():
    w = World(dt=0.01, solver="impulse")
    make_chain(w, links=30)
    e0 = w.energy()
    w.advance(10.0)
    assert w.energy() <= e0 + 1e-6 and np.isfinite(w.state.bodies.pos).all()


def test_the_critical_penalty_chain_that_runs_away_is_stopped_and_reported():
    """A 100-link hinge chain under the critical penalty preset at Δt = 3 ms gains many times
    its energy with joints metres apart within 10 s (no NaN, no speed bound hit): reported."""
    w = World(dt=0.003, solver="penalty", settings={"penalty_preset": "critical"})
    make_chain(w, links=100)
    with pytest.raises(SimulationBlowUp) as err:
        for _ in range(20):                          # as the viewer and the CLI advance: in pieces
            w.advance(0.5)
    assert "energy grew" in str(err.value) or "came apart" in str(err.value)
    assert err.value.time <= 10.0
