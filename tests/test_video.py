"""Video (shell/video.py): the CLI's headless MP4, a frame against a screenshot at the
same simulated time, and the window's recording at the simulation clock's rate."""
import math
from pathlib import Path

import numpy as np
import pytest

import physics

from window_helpers import window

import imageio.v2 as imageio            # a dependency (pyproject.toml): never skipped
SCENES = Path(__file__).resolve().parent.parent / "scenes"


def decode(path):
    reader = imageio.get_reader(str(path))
    try:
        return [np.asarray(f) for f in reader]
    finally:
        reader.close()


def test_cli_headless_3s_door_video_decodes_to_90_frames_of_1280x720(tmp_path, capsys):
    from shell.cli import main
    out = tmp_path / "door.mp4"
    assert main([str(SCENES / "door.toml"), "--headless", "--duration", "3", "--record-video", str(out)]) == 0
    assert "90 frames of 1280x720" in capsys.readouterr().out
    frames = decode(out)
    assert len(frames) == 90                                    # one per 1/30 s of simulated time
    assert all(f.shape == (720, 1280, 3) for f in frames)
    assert not np.array_equal(frames[0], frames[20])           # the door moved


def test_cli_refuses_a_video_into_a_missing_folder(tmp_path, capsys):
    from shell.cli import main
    assert main([str(SCENES / "door.toml"), "--headless", "--duration", "1",
                 "--record-video", str(tmp_path / "no" / "x.mp4")]) == 2
    assert "--record-video" in capsys.readouterr().err


def test_frame_k_equals_a_screenshot_at_the_same_simulated_time(tmp_path):
    from render.offscreen import render_world
    from shell.video import record_headless
    out = tmp_path / "door.mp4"
    world = physics.load_scene(SCENES / "door.toml")
    n, camera, size = record_headless(world, out, 3.0)
    assert n == 90 and size == (1280, 720)
    frames = decode(out)
    for k in (12, 24):                                          # t = 0.4 s (pushed), 0.8 s (coasting)
        other = physics.load_scene(SCENES / "door.toml")
        other.advance_steps(math.ceil(k / 30 / other.dt - 1e-9))  # the first step at or after k / 30 s
        shot, _ = render_world(other, 1280, 720, camera=camera)
        diff = np.abs(frames[k].astype(int) - shot.astype(int))
        assert diff.mean() < 2.0 and np.percentile(diff, 99) < 24, (k, diff.mean())
        # and not merely any frame: where the door moves, frame k is the closest of its neighbours
        moving = np.abs(frames[k - 3].astype(int) - frames[k + 3].astype(int)).max(axis=2) > 40
        assert moving.sum() > 500
        err = {j: np.abs(frames[j].astype(int) - shot.astype(int))[moving].mean() for j in range(k - 2, k + 3)}
        assert min(err, key=err.get) == k, err


@pytest.fixture(scope="module")
def win():
    yield from window("door.toml")


def record_window(win, path, speed, seconds=1.0, wall_per_frame=0.05, panel=False):
    assert win.load_scene(str(SCENES / "door.toml"))
    win.panel_visible = True
    win.driver.speed = speed
    win.start_video(str(path), panel=panel)
    while win.world.time < seconds - 1e-9:
        win.dispatch_events()
        win.driver.update(wall_per_frame)
        win.render_frame()
        assert win.gui_error is None
    win.stop_video()
    win.driver.speed = 1.0
    return decode(path)


def test_window_recording_runs_on_the_simulation_clock(win, tmp_path):
    # real time with frames of 50 ms of wall time (5 steps, more than one video frame
    # each: the driver stops at every frame's time), and 10 % slow motion: the same
    # 31 frames for 0 … 1 s of simulated time, 30 per simulated second
    fast = record_window(win, tmp_path / "fast.mp4", 1.0)
    slow = record_window(win, tmp_path / "slow.mp4", 0.1)
    assert len(fast) == len(slow) == 31
    sw = int(round(win.scene_size()[0] * win.get_framebuffer_size()[0] / win.width))
    fw, fh = win.get_framebuffer_size()
    assert fast[0].shape == (fh - fh % 2, sw - sw % 2, 3)       # the 3D view alone
    diff = np.abs(fast[-1].astype(int) - slow[-1].astype(int)).mean()
    assert diff < 2.0                                           # the same moment, whatever the speed
    with_panel = record_window(win, tmp_path / "panel.mp4", 1.0, seconds=0.2, panel=True)
    assert with_panel[0].shape == (fh - fh % 2, fw - fw % 2, 3)


def test_replay_after_a_rewind_is_recorded(win, tmp_path):
    assert win.load_scene(str(SCENES / "door.toml"))
    path = tmp_path / "rewind.mp4"
    win.start_video(str(path), panel=False)
    for target in (0.5, None):
        while win.world.time < 0.5 - 1e-9:
            win.driver.update(0.05)
            win.render_frame()
        if target is not None:
            win.seek(0.2)                                       # back 0.3 s: the replay is filmed too
            win.driver.paused = False
            win.render_frame()
    win.stop_video()
    # 0 … 0.5 s: 16 frames; then 0.2 s … 0.5 s again: 10 more
    assert len(decode(path)) == 16 + 10
