"""The Python API at its edges (issue 27, item 4): advance and advance_steps check their
argument against the command line's bound and stop on Ctrl-C between two chunks;
restore_state refuses a state that is not this world's with one ValueError, the world
untouched; `collide` is a checked bool and a Body property; reset() goes back to t = 0."""
import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import physics
from physics import Box, Sphere, World, bounds, load_scene

ROOT = Path(__file__).resolve().parent.parent


def _pendulum(solver="impulse"):
    w = World(dt=0.01, solver=solver)
    w.add_body("bob", Sphere(0.1), mass=1.0, position=(1, 0, 0))
    w.add_joint("hinge", "revolute", "world", "bob", anchor=(0, 0, 0), axis=(0, 1, 0))
    return w


def _fingerprint(w):
    sb = w.state.bodies
    return (w.time, w.step_count, sb.pos.tobytes(), sb.vel.tobytes(), sb.quat.tobytes(), sb.omega.tobytes(),
            w.state.rows.impulse.tobytes())


@pytest.mark.parametrize("call, words", [
    (lambda w: w.advance(1e300), "advance: 1e+300 s at dt = 0.01 s is 1e+302 steps; one call takes at most 1e+09"),
    (lambda w: w.advance(1e12), "is 1e+14 steps; one call takes at most 1e+09"),
    (lambda w: w.advance(math.nan), "advance: duration must be finite and >= 0 s, got nan"),
    (lambda w: w.advance(-1), "advance: duration must be finite and >= 0 s"),
    (lambda w: w.advance("1"), "advance: duration must be a number of seconds, got '1'"),
    (lambda w: w.advance(None), "advance: duration must be a number of seconds, got None"),
    (lambda w: w.advance_steps(2 ** 63), "advance_steps: the number of steps must be between 0 and 1e+09"),
    (lambda w: w.advance_steps(10 ** 9 + 1), "between 0 and 1e+09"),
    (lambda w: w.advance_steps(-1), "between 0 and 1e+09, got -1"),
    (lambda w: w.advance_steps(1.5), "advance_steps: the number of steps must be a whole number, got 1.5"),
    (lambda w: w.advance_steps(math.nan), "must be a whole number, got nan"),
    (lambda w: w.advance_steps("3"), "must be a whole number, got '3'"),
    (lambda w: w.advance_steps(True), "must be a whole number, got True"),
], ids=["1e300 s", "1e12 s", "nan s", "negative s", "string s", "None s", "2**63 steps", "1e9+1 steps",
        "-1 steps", "1.5 steps", "nan steps", "string steps", "bool steps"])
def test_advance_refuses_what_it_cannot_do_with_a_value_error_and_does_not_step(call, words):
    w = _pendulum()
    w.advance(0.05)
    before = _fingerprint(w)
    with pytest.raises(ValueError, match=re.escape(words)):
        call(w)
    assert _fingerprint(w) == before


def test_advance_takes_whole_numbers_of_any_integer_type():
    w = _pendulum()
    assert w.advance_steps(np.int64(3)) is None and w.step_count == 3
    w.advance_steps(2.0)
    assert w.step_count == 5 and w.advance(0.0) == 0 and w.step_count == 5
    assert bounds.MAX_STEPS == 10 ** 9


def test_ctrl_c_stops_a_long_advance_between_two_chunks_with_the_state_whole():
    """advance(1e6) at Δt = 10 ms is 1e8 steps (minutes): SIGINT ends it within a
    chunk's time, as a KeyboardInterrupt, with the clock and the step count agreeing."""
    code = ("import signal, sys, time; sys.path.insert(0, %r)\n"
            # Ctrl-C as at a terminal, even when the suite runs as a background job (which
            # starts its children with SIGINT ignored)
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from physics import World, Sphere\n"
            "w = World(dt=0.01, solver='impulse')\n"
            "w.add_body('bob', Sphere(0.1), mass=1.0, position=(1, 0, 0))\n"
            "w.add_joint('hinge', 'revolute', 'world', 'bob', anchor=(0, 0, 0), axis=(0, 1, 0))\n"
            "w.advance(0.1)\n"
            "print('ready', flush=True)\n"
            "t0 = time.perf_counter()\n"
            "try:\n"
            "    w.advance(1e6)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', w.step_count, repr(w.time), repr(w.step_count * 0.01),\n"
            "          bool(abs(w.time - w.step_count * 0.01) < 1e-6), flush=True)\n"
            "w.advance(0.1)\n"
            "print('still works', w.step_count, flush=True)\n") % str(ROOT)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        latency = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    words = out.split()
    assert words[0] == "interrupted" and int(words[1]) > 20 and words[4] == "True", out
    assert "still works" in out and "Traceback" not in err
    assert latency < 5.0, latency          # a chunk is about World.CHUNK_SECONDS of wall time


def _stack_with_state():
    w = load_scene(ROOT / "scenes" / "stack.toml")
    w.advance(0.2)
    return w


@pytest.mark.parametrize("make, words", [
    (lambda w: load_scene(ROOT / "scenes" / "door.toml").save_state(),
     "restore_state: the state was saved from a world of another layout"),
    (lambda w: None, "restore_state: expected a state saved by World.save_state\\(\\), got NoneType"),
    (lambda w: b"\x00garbage\xff" * 10, "expected a state saved by World.save_state\\(\\), got bytes"),
    (lambda w: {"bodies": 1}, "this one has no layout"),
    (lambda w: {**w.save_state(), "solvers": {"magic": None}},
     "restore_state: the state names solvers this world does not have: \\['magic'\\]"),
    (lambda w: {**w.save_state(), "clock": (math.nan, 20, 0.0, 0)}, "restore_state: the clock must be finite"),
    (lambda w: {**w.save_state(), "clock": (0.2, 1.5, 0.0, 0)}, "whole step counts"),
    (lambda w: {**w.save_state(), "clock": "now"}, "expected a state saved by World.save_state"),
    (lambda w: {**w.save_state(), "dt": math.inf}, "dt must be a positive number of seconds"),
    (lambda w: {**w.save_state(), "bodies": {**w.save_state()["bodies"], "pos": np.full((2, 3), 1.0)}},
     "pos has the wrong shape"),
    (lambda w: {**w.save_state(), "bodies": {**w.save_state()["bodies"],
                                             "vel": np.full_like(w.state.bodies.vel, np.nan)}},
     "the saved vel is not finite"),
], ids=["another scene", "None", "garbage bytes", "a dict of nothing", "unknown solver", "nan clock",
        "fractional steps", "clock not numbers", "infinite dt", "wrong shape", "nan velocities"])
def test_restore_state_refuses_what_is_not_this_worlds_state_and_changes_nothing(make, words):
    w = _stack_with_state()
    bad = make(w)
    before = _fingerprint(w)
    with pytest.raises(ValueError, match=words):
        w.restore_state(bad)
    assert _fingerprint(w) == before
    w.advance(0.05)                               # and it steps on as before
    assert np.isfinite(w.state.bodies.pos).all()


def test_a_state_saved_before_an_add_body_is_refused_after_it():
    w = _stack_with_state()
    saved = w.save_state()
    w.add_body("late", Box((0.1, 0.1, 0.1)), mass=1.0, position=(3, 3, 0.5))
    before = _fingerprint(w)
    with pytest.raises(ValueError, match=r"another layout \(23 bodies, 0 joints, 0 ropes\); this world has "
                                         r"24 bodies, 0 joints, 0 ropes"):
        w.restore_state(saved)
    assert _fingerprint(w) == before


def test_a_state_restores_into_a_fresh_world_of_the_same_scene_and_its_layout_is_compared():
    a, b = _stack_with_state(), load_scene(ROOT / "scenes" / "stack.toml")
    assert np.array_equal(a.layout(), b.layout()) and a.layout().dtype == np.uint8
    b.restore_state(a.save_state())
    assert _fingerprint(b) == _fingerprint(a)


@pytest.mark.parametrize("value", ["no", "yes", math.nan, 1, 0, None, [True]])
def test_collide_must_be_a_bool(value):
    w = World()
    with pytest.raises(ValueError, match=re.escape(f"body 'b': collide must be true or false, got {value!r}")):
        w.add_body("b", Sphere(0.1), mass=1.0, collide=value)
    assert not w.has_body("b")


def test_collide_is_a_body_property_that_the_contacts_follow():
    w = World(solver="impulse")
    w.add_body("ground", physics.Plane(), static=True)
    ball = w.add_body("ball", Sphere(0.1), mass=1.0, position=(0, 0, 0.3), collide=np.bool_(False))
    assert ball.collide is False
    w.advance(0.5)
    assert w.body("ball").position[2] < -0.5                 # fell through the ground
    w.reset()
    ball.collide = True
    assert ball.collide is True
    w.advance(0.5)
    assert abs(w.body("ball").position[2] - 0.1) < 0.01       # rests on it
    for bad in ("no", 1, math.nan):
        with pytest.raises(ValueError, match="collide must be True or False"):
            ball.collide = bad
    assert ball.collide is True
    with pytest.raises(ValueError, match="never collides"):
        w.body("world").collide = True


def test_reset_goes_back_to_t_0_with_bodies_added_since_at_their_initial_poses():
    w = _pendulum()
    start = w.body("bob").position
    w.advance(0.5)
    w.add_body("late", Sphere(0.1), mass=1.0, position=(0, 2, 3), velocity=(1, 0, 0), collide=False)
    w.add_joint("tie", "spherical", "world", "late", anchor=(0, 2, 4))
    w.advance(0.5)
    w.reset()
    assert w.time == 0.0 and w.step_count == 0
    assert np.array_equal(w.body("bob").position, start)
    assert np.array_equal(w.body("late").position, [0, 2, 3]) and np.array_equal(w.body("late").velocity, [1, 0, 0])
    assert w.joint("tie").error < 1e-12
    first = _fingerprint(w)
    w.advance(0.3)
    after_one = _fingerprint(w)
    w.reset()
    assert _fingerprint(w) == first
    w.advance(0.3)
    assert _fingerprint(w) == after_one                    # a reset run repeats


def test_a_setting_several_families_share_is_set_for_each_of_them():
    """World(settings=…) as a scene's [solver] table: a name two families have is theirs both."""
    from physics.solvers import FAMILIES
    w = physics.World(settings={"projection_iterations": 3})
    having = [f for f in FAMILIES if "projection_iterations" in w.solvers[f].schema()]
    assert len(having) >= 2
    assert all(w.solver_settings(f)["projection_iterations"] == 3 for f in having)


@pytest.mark.parametrize("add", [
    lambda w: w.add_body("a", Box((0.1, 0.1, 0.1)), mass=1.0),                    # taken
    lambda w: w.add_bodies(["x", "x"], Box((0.1, 0.1, 0.1)), mass=1.0),           # twice in one call
    lambda w: w.add_body("", Box((0.1, 0.1, 0.1)), mass=1.0),                     # empty
    lambda w: w.add_joint("j", "revolute", "a", "b", (0, 0, 0)),                   # taken
    lambda w: w.add_joints(["k", "k"], "revolute", "a", ["b", "b"], (0, 0, 0)),     # twice in one call
    lambda w: w.add_joint(7, "revolute", "a", "b", (0, 0, 0)),                     # not a string
])
def test_a_body_or_joint_name_must_be_new_and_a_non_empty_string(add):
    w = World()
    w.add_bodies(["a", "b"], Box((0.1, 0.1, 0.1)), mass=1.0)
    w.add_joint("j", "revolute", "a", "b", (0, 0, 0))
    counts = (w.model.bodies.count, len(w.joints))
    with pytest.raises(ValueError, match="name must be a new non-empty string"):
        add(w)
    assert (w.model.bodies.count, len(w.joints)) == counts


@pytest.mark.parametrize("solver", sorted(physics.solvers.FAMILIES))
def test_a_flywheel_turning_6_times_in_2_s_reads_all_its_turns_after_one_advance(solver):
    """A frictionless wheel on a vertical hinge through its centre, spinning at 20 rad/s:
    nothing in a step reads the hinge's angle, which is exact only at the end of each kernel
    call (compute_joint_rows tracks it to within π/8 in between). After 2 s its angle is
    ω·t = 40 rad — six turns and more — to within the wheel's own loss of speed."""
    w = World(dt=0.01, solver=solver)
    w.add_body("wheel", Box((0.3, 0.3, 0.02)), mass=2.0, position=(0, 0, 1))
    w.add_joint("axle", "revolute", "world", "wheel", anchor=(0, 0, 1), axis=(0, 0, 1))
    w.body("wheel").angular_velocity = (0, 0, 20.0)
    w.advance_steps(200)
    axle = w.joint("axle")
    assert abs(axle.rate - 20.0) < 0.2
    assert abs(axle.angle - 40.0) < 0.4
