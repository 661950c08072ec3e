"""The app's process lifetime: whatever ends it, its child processes end with it.

- `exit_on_signals()` (the app's main thread, at start): SIGTERM and SIGHUP raise
  SystemExit(128 + signal number), as Ctrl-C raises KeyboardInterrupt, so the `finally`
  blocks run: the window closes, the warm-up subprocesses are killed (shell/warmup.py
  WarmupJob.kill), a video's ffmpeg gets the end of its input.
- `die_with_parent(pid)` (a child process, first thing): on Linux the kernel sends it
  SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG), however the parent died —
  SIGKILL included, which no handler sees; if the parent is already gone, it exits.
"""
import ctypes
import ctypes.util
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1        # linux/prctl.h


def exit_on_signals():
    """SIGTERM and SIGHUP end the process through SystemExit (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, handler)


def die_with_parent(parent_pid):
    """This (child) process is killed when `parent_pid` ends (Linux); exits now if it
    already has. Elsewhere only the check at start is made."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)              # the parent died before the signal was armed
