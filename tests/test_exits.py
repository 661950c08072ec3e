"""However the app ends, nothing of it is left running (issue 27, item 5): SIGTERM during
the first launch's warm-up (shell/lifetime.py: a handler that ends through the `finally`
blocks, and the warm-up processes armed to die with their parent), and a window
destroyed under the app (what `xdotool windowclose` does: XDestroyWindow), which ends it
as a close does. The app runs as a subprocess on the tests' X server (pytest-xvfb)."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOOR = ROOT / "scenes" / "door.toml"


def _children(pid):
    """{pid: command line} of the live processes descending from `pid` (from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        for child, parent in parents.items():
            if parent == p and child not in out:
                out[child] = _cmdline(child)
                todo.append(child)
    return out


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def _alive(pid, cmdline):
    """The process is still running (not gone, not a zombie, not a new one with the pid)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and _cmdline(pid) == cmdline


def _cold_app(tmp_path):
    """The windowed app on the door with an empty kernel cache: it starts the warm-up."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"), SHARNIR_RENDER="light")
    return subprocess.Popen([sys.executable, str(ROOT / "app.py"), str(DOOR)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _warmup_children(app, timeout=60.0):
    """The app's warm-up processes, once they run."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = {p: c for p, c in _children(app.pid).items() if c and "shell.warmup" in c}
        if kids:
            return kids
        assert app.poll() is None, app.communicate()
        time.sleep(0.1)
    pytest.fail("the app started no warm-up process")


def _assert_all_gone(app, kids, within=5.0):
    try:
        app.wait(timeout=within)
    except subprocess.TimeoutExpired:
        app.kill()
        for p, c in kids.items():
            if _alive(p, c):
                os.kill(p, signal.SIGKILL)
        pytest.fail(f"the app still runs {within} s later")
    end = time.monotonic() + within
    while time.monotonic() < end and any(_alive(p, c) for p, c in kids.items()):
        time.sleep(0.1)
    left = {p: c for p, c in kids.items() if _alive(p, c)}
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, f"left running: {left}"


def test_sigterm_during_a_cold_warm_up_leaves_no_process(tmp_path):
    app = _cold_app(tmp_path)
    try:
        kids = _warmup_children(app)
        time.sleep(1.0)                          # compiling
        kids.update({p: c for p, c in _children(app.pid).items() if c})
        app.send_signal(signal.SIGTERM)
        _assert_all_gone(app, kids)
    finally:
        if app.poll() is None:
            app.kill()
    out, err = app.communicate()
    assert app.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err


def test_sigkill_of_the_app_takes_its_warm_up_with_it(tmp_path):
    """No handler sees SIGKILL: the warm-up processes die by the parent-death signal."""
    app = _cold_app(tmp_path)
    try:
        kids = _warmup_children(app)
        app.kill()
        _assert_all_gone(app, kids)
    finally:
        if app.poll() is None:
            app.kill()
    app.communicate()


def _xdotool(*args):
    if shutil.which("xdotool") is None:
        pytest.fail("xdotool is needed (apt-get install xdotool; .ci/run installs it)")
    return subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=20)


def _sharnir_windows():
    res = _xdotool("search", "--name", "^Sharnir")
    return set(res.stdout.split())


def _new_window(app, before, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        new = _sharnir_windows() - before
        if new:
            return new.pop()
        assert app.poll() is None, app.communicate()
        time.sleep(0.2)
    pytest.fail("the app's window did not appear")


def test_a_window_destroyed_during_the_warm_up_ends_the_app_and_its_warm_up(tmp_path):
    before = _sharnir_windows()
    app = _cold_app(tmp_path)
    try:
        window = _new_window(app, before)
        kids = _warmup_children(app)
        assert _xdotool("windowclose", window).returncode == 0
        _assert_all_gone(app, kids)
    finally:
        if app.poll() is None:
            app.kill()
    out, err = app.communicate()
    assert app.returncode == 0 and "Traceback" not in err, err


def test_a_window_destroyed_while_the_scene_runs_ends_the_app():
    """With the session's kernel cache: the door loads and runs, then its window goes."""
    before = _sharnir_windows()
    env = dict(os.environ, SHARNIR_RENDER="light")
    app = subprocess.Popen([sys.executable, str(ROOT / "app.py"), str(DOOR)], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        window = _new_window(app, before)
        end = time.monotonic() + 300                    # the scene on screen: its title shows the time
        while "t = " not in _xdotool("getwindowname", window).stdout:
            assert time.monotonic() < end and app.poll() is None, "the scene did not load"
            time.sleep(0.5)
        kids = {p: c for p, c in _children(app.pid).items() if c}
        assert _xdotool("windowclose", window).returncode == 0
        _assert_all_gone(app, kids)
    finally:
        if app.poll() is None:
            app.kill()
    out, err = app.communicate()
    assert app.returncode == 0 and "Traceback" not in err, err
