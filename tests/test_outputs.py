"""Output files (--record, --record-video, --screenshot) are checked before anything runs
(shell/cli.py check_output) and a failure while writing is exit status 2 with the operating
system's own reason in one line: no traceback, nothing from ffmpeg or imageio, nothing on
stdout, and no file created or changed (issue 27's reproducers)."""
import contextlib
import io
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from shell.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOOR = str(ROOT / "scenes" / "door.toml")
LONG = "a" * 300


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _refused(argv, *words):
    status, out, err = _run(argv)
    assert status == 2 and out == "", (status, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], err
    return lines[0]


def _listing(folder):
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in Path(folder).iterdir())


@pytest.mark.parametrize("flag", ["--record-video", "--screenshot"])
@pytest.mark.parametrize("path, reason", [
    ("/dev/full", "expected a file name ending in"),
    ("DIR", "expected a file name ending in"),
    ("DIR/x.EXT", "Is a directory"),
    ("/sys/x.EXT", "cannot write it: Permission denied"),
    (f"DIR/{LONG}.EXT", "cannot write it: File name too long"),
    ("DIR/missing/x.EXT", "does not exist"),
    ("DIR/x", "expected a file name ending in"),
    ("DIR/x.txt", "expected a file name ending in"),
    ("", "got an empty one"),
], ids=["dev-full", "directory", "directory-with-extension", "sys", "long-name", "no-folder", "no-extension",
        "txt", "empty"])
@pytest.mark.parametrize("mode", ["headless", "viewer"])
def test_a_bad_output_path_is_refused_before_the_run(flag, path, reason, mode, tmp_path):
    if path.startswith("/sys") and not os.path.isdir("/sys"):
        pytest.skip("no /sys (sysfs refuses new files, root included)")
    ext = ".mp4" if flag == "--record-video" else ".png"
    (tmp_path / f"x{ext}").mkdir()
    path = path.replace("DIR", str(tmp_path)).replace(".EXT", ext)
    before = _listing(tmp_path)
    run = ["--headless", "--duration", "0.5"] if mode == "headless" else ["--frames", "3"]
    line = _refused([DOOR, *run, f"{flag}={path}"], flag, reason)
    assert "simulated" not in line and "renderer" not in line and "Broken pipe" not in line
    assert _listing(tmp_path) == before                     # nothing created, nothing changed


def test_an_existing_file_is_not_touched_by_the_check(tmp_path):
    """The check opens an existing file without truncating it; a run refused for another
    reason leaves it as it was."""
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"old")
    _refused([DOOR, "--headless", "--duration", "0.1", "--screenshot", shot, "--dt", "5"], "--dt")
    assert shot.read_bytes() == b"old"


def test_screenshot_with_a_jpeg_name_is_refused_not_written_as_png(tmp_path):
    _refused([DOOR, "--headless", "--duration", "0.1", "--screenshot", tmp_path / "x.jpg"],
             "--screenshot", "expected a file name ending in .png")
    assert not (tmp_path / "x.jpg").exists()


def test_a_video_longer_than_the_frame_bound_is_refused(tmp_path):
    _refused([DOOR, "--headless", "--duration", "1e6", "--record-video", tmp_path / "v.mp4"],
             "--record-video", "3e+07 frames", "at most 1e+06")
    assert not (tmp_path / "v.mp4").exists()


def test_record_needs_a_csv_name_or_a_stream(tmp_path):
    _refused([DOOR, "--headless", "--duration", "0.1", "--record", tmp_path / "r.txt"], "ending in .csv")
    status, out, err = _run([DOOR, "--headless", "--duration", "0.02", "--record", os.devnull])
    assert status == 0 and err == "", err


def _app_with_file_size_limit(args, limit=20000):
    """app.py with RLIMIT_FSIZE: a write past `limit` bytes fails as on a full disk
    (EFBIG, "File too large"; ffmpeg, which the limit kills, is reported the same)."""
    def limit_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, preexec_fn=limit_size, timeout=300)


@pytest.mark.parametrize("flag, name", [("--record-video", "v.mp4"), ("--record", "r.csv"),
                                        ("--screenshot", "s.png")])
def test_a_write_that_fails_midway_is_exit_2_with_the_os_reason(flag, name, tmp_path):
    res = _app_with_file_size_limit([DOOR, "--headless", "--duration", "3", flag, tmp_path / name])
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"error: {flag} {tmp_path / name}: cannot write it: File too large\n"
    if flag != "--screenshot":               # the screenshot is written after the run's summary
        assert res.stdout == ""


def test_ffmpeg_speaks_only_with_verbose(tmp_path):
    """A video run prints its summary and nothing on stderr; --verbose lets ffmpeg talk."""
    quiet = subprocess.run([sys.executable, str(ROOT / "app.py"), DOOR, "--headless", "--duration", "0.1",
                            "--record-video", str(tmp_path / "q.mp4")], capture_output=True, text=True, cwd=ROOT,
                           timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == "" and "video:" in quiet.stdout, quiet.stderr
    loud = subprocess.run([sys.executable, str(ROOT / "app.py"), DOOR, "--headless", "--duration", "0.1",
                           "--record-video", str(tmp_path / "v.mp4"), "--verbose"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert loud.returncode == 0 and "libx264" in loud.stderr, loud.stderr
    assert (tmp_path / "q.mp4").stat().st_size > 1000 and (tmp_path / "v.mp4").stat().st_size > 1000
