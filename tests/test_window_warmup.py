"""First launch: the window opens at once and shows "Compiling physics kernels (first
run only)…" with a progress bar while the warm-up subprocess runs (here a fake, slow
one), then the scene; the cache-warm marker; the real warm-up's output."""
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
# ImGui's dark style: progress bar fill (Col_.plot_histogram) and the loading background
BAR = np.array([230, 179, 0])
FAKE = ("import time\n"
        "print('PLAN 3 6', flush=True)\n"
        "for i, w in enumerate((1, 2, 3)):\n"
        "    print(f'STEP {i} 3 {w} fake{i} (penalty)', flush=True)\n"
        "    time.sleep({delay})\n"
        "print('OK 1.0', flush=True)\n")


def fake_job(delay=0.6):
    from shell.warmup import WarmupJob
    return WarmupJob([sys.executable, "-c", FAKE.replace("{delay}", repr(delay))])


def _bright_text(rgb, rect):
    x0, y0, x1, y1 = (int(round(c)) for c in rect)
    box = rgb[y0:y1, x0:x1].astype(int)
    return int((box.min(axis=2) > 200).sum())          # near-white text pixels


def test_the_window_shows_the_compiling_message_then_the_scene(tmp_path):
    import pyglet
    pyglet.options["dpi_scaling"] = "stretch"
    from shell.window import ViewerWindow, wait_for_warmup
    from shell.warmup import TITLE
    import physics
    win = ViewerWindow(None, "door.toml", width=1280, height=800)
    seen = []

    def look(w):
        if w.loading is not None and w.loading_rect is not None:
            seen.append((w.loading.fraction, w.loading.detail, w.pixels(), w.loading_rect))

    try:
        job = fake_job(0.6)
        t0 = time.perf_counter()
        wait_for_warmup(win, job, show_after=0.3, on_frame=look, frame_s=0.1)
        assert job.ok and time.perf_counter() - t0 > 1.5
        assert len(seen) >= 5
        fractions = [f for f, *_ in seen]
        assert fractions == sorted(fractions) and 0.0 <= fractions[0] < fractions[-1] <= 0.99
        assert any("fake2 (penalty), step 3 of 3" in d for _, d, *_ in seen)
        frac, detail, rgb, rect = seen[-1]
        # the message box: its title in white text, and the bar's orange fill grows
        assert _bright_text(rgb, rect) > 150
        x0, y0, x1, y1 = (int(round(c)) for c in rect)
        box = rgb[y0:y1, x0:x1].astype(int)
        bar = (np.abs(box - BAR).max(axis=2) < 40).sum()
        first_box = seen[0][2][y0:y1, x0:x1].astype(int)
        assert bar > (np.abs(first_box - BAR).max(axis=2) < 40).sum() + 200
        outside = rgb[:int(y0) - 10].reshape(-1, 3)
        assert len(np.unique(outside, axis=0)) <= 2       # nothing else drawn: the plain background
        assert TITLE.startswith("Compiling physics kernels (first run only)")
        # then the scene: the panel and a sky over the view, no message any more
        win.set_world(physics.load_scene(SCENES / "door.toml"), "door.toml")
        win.dispatch_events()
        win.render_frame()
        assert win.loading is None and win.loading_rect is None
        scene = win.pixels()
        sky = scene[5, 5].astype(int)
        assert sky[2] > sky[0] + 20                        # blue-grey sky, not the loading background
        assert win.panel.rect is not None
        assert win.ctx.error == "GL_NO_ERROR"
    finally:
        win.close()


def test_run_viewer_opens_at_once_waits_for_the_warm_up_then_runs_the_scene(tmp_path):
    from shell.window import run_viewer
    frames = []
    t0 = time.perf_counter()

    def on_frame(w):
        frames.append((time.perf_counter() - t0, w.world is not None, w.loading.title if w.loading else None))

    status = run_viewer(SCENES / "gallery.toml", frames=3, screenshot=str(tmp_path / "shot.png"),
                        warmup=fake_job(0.5), on_frame=on_frame)
    assert status == 0
    assert frames[0][0] < 5.0 and not frames[0][1]            # a window within 5 s, before any world
    titles = [t for _, has_world, t in frames if not has_world]
    assert any(t and t.startswith("Compiling physics kernels (first run only)") for t in titles)
    assert titles[-1] == "Loading gallery.toml…"
    assert sum(1 for _, has_world, _ in frames if has_world) == 3
    png = (tmp_path / "shot.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_cache_marker_follows_the_physics_sources(tmp_path, monkeypatch):
    from shell import warmup
    src = tmp_path / "physics"
    src.mkdir()
    (src / "kernels.py").write_text("x = 1\n")
    monkeypatch.setattr(warmup, "PHYSICS", src)
    monkeypatch.setattr(warmup, "ROOT", tmp_path)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert not warmup.is_warm()
    warmup.mark_warm()
    assert warmup.is_warm() and warmup.marker_path().parent == tmp_path / "cache"
    assert warmup.start() is None                            # warm: no subprocess
    (src / "kernels.py").write_text("x = 22\n")              # an edit: numba recompiles, so do we
    assert not warmup.is_warm()
    warmup.mark_warm()
    os.utime(src / "kernels.py", (1, 1))                      # touched (a checkout): numba's stamp
    assert not warmup.is_warm()


def test_the_headless_notice_is_printed_only_when_cold(tmp_path, monkeypatch, capsys):
    from shell import warmup
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert warmup.announce() is True
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Compiling physics kernels (first run only")
    warmup.mark_warm()
    assert warmup.announce() is False
    assert capsys.readouterr().err == ""


def test_the_real_warm_up_steps_every_scene_and_leaves_the_marker(tmp_path, monkeypatch):
    """The subprocesses themselves, on the test session's (warm) numba cache: every
    shipped scene with every solver family (and the families' shared kernels), a grab of
    a body and of a rope, no failure."""
    from shell import warmup
    marker_dir = Path(os.environ.get("NUMBA_CACHE_DIR") or tmp_path)
    job = warmup.WarmupJob()
    while not job.done:
        time.sleep(0.1)
        assert job.elapsed() < 900
    out = job.output_tail(200)
    assert job.ok, out
    assert "FAILED" not in out
    n = sum(len(part) for part in warmup.layout(None))
    assert n >= 27 and out.count("STEP ") == n
    assert sum(line.startswith("OK ") for line in out.splitlines()) == len(job.procs)
    assert job.progress().fraction == 1.0
    if os.environ.get("NUMBA_CACHE_DIR"):
        assert warmup.is_warm() and warmup.marker_path().parent == marker_dir


def test_a_process_that_compiles_nothing_of_the_scenes_waits_behind_it_from_the_start():
    """Before the first frame the processors go to the scene's kernels: a process none of
    whose steps the window waits for runs at a lower priority from its start, the one
    compiling the scene's at the window's own."""
    from shell.warmup import Planned, WarmupJob
    sleeper = "import time\nprint('PLAN 1 1', flush=True)\nprint('STEP 0 1 1 x', flush=True)\ntime.sleep(30)\n"
    plans = [[Planned("gallery (penalty)", 1.0, {"family:penalty"})],
             [Planned("door (impulse)", 1.0, {"family:impulse"})]]
    job = WarmupJob([[sys.executable, "-c", sleeper]] * 2, plans=plans, needs=("penalty", False), mark=False)
    try:
        assert job.needed == [1, 0]
        if hasattr(os, "getpriority"):
            own = os.getpriority(os.PRIO_PROCESS, 0)
            assert os.getpriority(os.PRIO_PROCESS, job.procs[0].proc.pid) == own
            assert os.getpriority(os.PRIO_PROCESS, job.procs[1].proc.pid) >= max(own, 10)
    finally:
        job.kill()


def test_the_window_goes_on_once_its_steps_are_done_and_the_rest_compiles_behind_it():
    """A job ready after the first of its steps (what the scene needs): `ready` long before
    `done`, the progress bar measured on that step alone, then a lower priority."""
    from shell.warmup import Planned, WarmupJob
    slow = ("import time\n"
            "print('PLAN 2 11', flush=True)\n"
            "print('STEP 0 2 1 first (penalty)', flush=True)\n"
            "time.sleep(0.5)\n"
            "print('STEP 1 2 10 rest (impulse)', flush=True)\n"
            "time.sleep(30)\n"
            "print('OK 30.5', flush=True)\n")
    plan = [Planned("first (penalty)", 1.0, {"family:penalty"}), Planned("rest (impulse)", 10.0, {"family:impulse"})]
    job = WarmupJob([[sys.executable, "-c", slow]], plans=[plan], needs=("penalty", False), mark=False)
    try:
        assert job.needed == [1]
        t0 = time.perf_counter()
        seen = []
        while not job.ready:
            seen.append(job.progress().fraction)
            time.sleep(0.05)
            assert time.perf_counter() - t0 < 10
        assert not job.done and 0.4 < time.perf_counter() - t0 < 10
        assert seen and seen == sorted(seen) and seen[-1] <= 0.99
        assert job.progress().fraction == 1.0
        job.background()
        if hasattr(os, "getpriority"):
            assert os.getpriority(os.PRIO_PROCESS, job.procs[0].proc.pid) >= 10
    finally:
        job.kill()
