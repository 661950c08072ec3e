"""Rewind and replay (shell/history.py): bit-exact replay, branching, the memory bound,
and the panel's timeline driven by keys and the slider in the real window."""
from pathlib import Path

import numpy as np
import pytest

import physics
from shell.history import Packer, RecordingWorld, Timeline

from window_helpers import frame, window

SCENES = Path(__file__).resolve().parent.parent / "scenes"

# rope_tow (Δt = 15 ms: one state a step): 30 s are 2002 states of 10880 B (+16 B for
# time and step) = 21.8 MB (on wheels: 11 bodies, their joints' rows and the contacts'
# warm start); the stated bound, with room for a few more bodies' bytes:
ROPE_TOW_30S_BOUND = 24e6


def packed(timeline, world):
    row = np.zeros(timeline.packer.nbytes, np.uint8)
    timeline.packer.pack(world.save_state(), row)
    return row


def recorded(scene, seconds):
    world = physics.load_scene(SCENES / scene)
    tl = Timeline()
    tl.capture(world, force=True)
    RecordingWorld(world, tl).advance(seconds)
    return world, tl


def test_packing_round_trips_a_state_exactly():
    world = physics.load_scene(SCENES / "rope_tow.toml")
    world.advance(0.3)
    s = world.save_state()
    p = Packer(s)
    row = np.zeros(p.nbytes, np.uint8)
    p.pack(s, row)
    back = p.unpack(row)
    assert p.fits(back)
    row2 = np.zeros(p.nbytes, np.uint8)
    p.pack(back, row2)
    assert np.array_equal(row, row2)
    world.advance(0.3)
    after = world.save_state()
    world.restore_state(back)
    world.advance(0.3)
    assert all(np.array_equal(a, b) for a, b in zip(world.save_state()["bodies"].values(), after["bodies"].values()))


def test_scrub_to_2s_and_play_to_5s_reproduces_the_recorded_states_bit_for_bit():
    world, tl = recorded("chain.toml", 5.0)
    assert tl.every(world.dt) == 3                              # Δt = 5 ms: one state every 3 steps
    first, last = tl.span()
    assert first == 0.0 and last == pytest.approx(5.0, abs=3 * world.dt)
    i2 = tl.index_at(2.0)
    rows = {tl.step_at(i): tl.rows[tl._slot(i)].copy() for i in range(i2, tl.count)}
    present = tl.rows[tl._slot(tl.count - 1)].copy()
    t = tl.seek(world, 2.0)
    assert abs(t - 2.0) <= 3 * world.dt and not tl.live
    assert np.array_equal(packed(tl, world), rows[world.state.step_count])
    rec = RecordingWorld(world, tl)
    compared = 0
    while world.state.step_count < 1000:                        # t = 5 s
        rec.advance_steps(1)
        if world.state.step_count in rows:
            assert np.array_equal(packed(tl, world), rows[world.state.step_count]), world.time
            compared += 1
    assert compared == len(rows) - 1 and tl.mismatches == 0 and tl.branches == 0
    assert tl.live                                              # caught up with the present
    world2 = physics.load_scene(SCENES / "chain.toml")          # and the last step matches a straight run
    world2.advance(5.0)
    assert world.time == world2.time == 5.0
    assert all(np.array_equal(a, b) for a, b in zip(world.save_state()["bodies"].values(),
                                                    world2.save_state()["bodies"].values()))
    assert present.size == tl.packer.nbytes


def test_resuming_from_2s_with_another_friction_gives_a_different_valid_future():
    world, tl = recorded("chain.toml", 5.0)
    old_end = tl.state_at(tl.count - 1)
    n_before = tl.count
    tl.seek(world, 2.0)
    world.joint(world.joint_info[0].name).friction = 0.05       # N·m on the top hinge
    assert tl.check_edits(world) and tl.live and tl.branches == 1
    assert tl.count < n_before                                  # the recorded future is gone
    RecordingWorld(world, tl).advance_steps(1000 - world.state.step_count)
    assert world.time == pytest.approx(5.0)
    new_end = world.save_state()
    assert not np.array_equal(new_end["bodies"]["pos"], old_end["bodies"]["pos"])
    assert np.isfinite(new_end["bodies"]["pos"]).all() and world.blown_up is None
    assert world.max_constraint_error() < 1e-2
    # the timeline now holds the new branch, continuous in time
    ts = np.array([tl.time_at(i) for i in range(tl.count)])
    assert np.all(np.diff(ts) > 0) and ts[-1] == pytest.approx(5.0, abs=3 * world.dt)


def test_a_changed_state_during_replay_branches():
    world, tl = recorded("chain.toml", 2.0)
    tl.seek(world, 1.0)
    world.state.bodies.vel[1] += (0.0, 0.5, 0.0)                # as a mouse drag would
    RecordingWorld(world, tl).advance(0.1)
    assert tl.live and tl.mismatches == 1 and tl.branches == 1


def test_the_buffer_is_a_fixed_ring():
    world = physics.load_scene(SCENES / "door.toml")
    tl = Timeline(seconds=0.5)
    tl.capture(world, force=True)
    rows = tl.rows
    RecordingWorld(world, tl).advance(2.0)
    assert tl.rows is rows and tl.count == tl.capacity          # full, nothing allocated since
    first, last = tl.span()
    assert last == pytest.approx(2.0) and last - first == pytest.approx(0.5, abs=3 * world.dt)
    assert tl.memory_bytes == tl.capacity * (tl.bytes_per_state + 16)


def test_memory_for_30s_of_rope_tow_stays_under_the_stated_bound():
    world = physics.load_scene(SCENES / "rope_tow.toml")
    tl = Timeline()                                             # 30 s
    tl.capture(world, force=True)
    rows = tl.rows
    RecordingWorld(world, tl).advance(1.0)
    assert tl.rows is rows                                      # allocated once, for all 30 s
    assert tl.capacity * world.dt * tl.every(world.dt) >= 30.0
    assert tl.memory_bytes == tl.capacity * (tl.bytes_per_state + 16)
    assert tl.memory_bytes < ROPE_TOW_30S_BOUND
    print(f"rope_tow: {tl.capacity} states × ({tl.bytes_per_state} + 16) B = {tl.memory_bytes / 1e6:.1f} MB")


# ---------------------------------------------------------------------------- the window
@pytest.fixture(scope="module")
def win():
    yield from window("chain.toml")


def key(win, symbol):
    win.dispatch_event("on_key_press", symbol, 0)
    frame(win)
    win.dispatch_event("on_key_release", symbol, 0)
    frame(win)


def test_keys_and_the_timeline_slider_in_the_window(win):
    from pyglet.window import key as k
    from pyglet.window import mouse
    frame(win)
    while win.world.time < 3.0 - 1e-9:
        win.driver.update(0.1)
    frame(win)
    tl = win.timeline
    assert tl.live and "timeline.slider" in win.panel.w.rects
    t_now = win.world.time
    key(win, k.PAGEUP)
    assert win.driver.paused and not tl.live
    assert win.world.time == pytest.approx(t_now - 1.0, abs=0.02)
    assert win.panel.plots.history.last_time() <= win.world.time + 1e-9     # the plots went back too
    t = win.world.time
    key(win, k.LEFT)
    assert win.world.time == pytest.approx(t - 3 * win.world.dt)
    # the slider: a click at its left end goes to the oldest state
    x0, y0, x1, y1 = win.panel.w.rects["timeline.slider"]
    x, y = round(x0 + 2), round(win.height - 0.5 * (y0 + y1))
    win.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frame(win)
    win.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    frame(win)
    win.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    frame(win)
    assert win.world.time < 0.05 and not tl.live
    # play forward in replay, at 25 % speed: bit-exact against the recorded states
    win.driver.speed = 0.25
    x, y = 20, win.height - 20                                    # a click on the sky: keys go to the scene
    win.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    frame(win)
    win.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    frame(win)
    key(win, k.SPACE)
    for _ in range(8):
        win.driver.update(0.1)
    assert win.world.time == pytest.approx(0.2, abs=0.02) and not tl.live and tl.mismatches == 0
    win.driver.speed = 1.0
    key(win, k.END)
    assert tl.live and win.world.time == pytest.approx(t_now)
    key(win, k.PAGEUP)
    key(win, k.ENTER)                                             # resume live here: the future goes
    assert tl.live and not win.driver.paused and tl.span()[1] == pytest.approx(t_now - 1.0, abs=0.02)
    win.driver.paused = True
    frame(win)
