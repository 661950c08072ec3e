"""Editable parameters and the one path every edit takes: check, clamp, set, tell.

A `Param` says how to read and write one value (in the units the panel shows), its
range and its tooltip. `apply(param, value, notices)` is what a widget calls when the
user commits a value: non-numbers are refused, values out of range are clamped, and
a ValueError from the World's setters (or any other error) is caught; each case
leaves a visible notice.
Nothing typed reaches the engine unchecked, and nothing typed can raise.
"""
from dataclasses import dataclass, field
import math
import time
from typing import Callable


@dataclass
class Notice:
    text: str
    level: str          # "info", "warning" or "error"
    at: float = field(default_factory=time.monotonic)


class Notices:
    """Recent messages for the panel (newest last); each shows for `lifetime` s."""

    def __init__(self, lifetime=8.0, keep=6):
        self.lifetime, self.keep = lifetime, keep
        self.items = []

    def add(self, text, level="info"):
        self.items.append(Notice(text, level))
        del self.items[:-self.keep]

    def current(self):
        now = time.monotonic()
        return [n for n in self.items if now - n.at < self.lifetime]

    def last(self):
        return self.items[-1] if self.items else None


@dataclass
class Param:
    key: str                        # unique id (tests, widget ids)
    label: str
    tooltip: str                    # meaning and units
    get: Callable[[], float]
    set: Callable[[float], None]
    lo: float = -math.inf           # range, in the units shown
    hi: float = math.inf
    kind: str = "float"             # "float", "int", "slider", "log_slider"
    fmt: str = "%.6g"
    unit: str = ""

    def value(self):
        return self.get()


def _fmt(param, v):
    try:
        return (param.fmt % v) + (f" {param.unit}" if param.unit else "")
    except (TypeError, ValueError):
        return str(v)


def apply(param, value, notices):
    """Set `param` to `value` (shown units). Returns True if the engine took a value."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        notices.add(f"{param.label}: {value!r} is not a number; unchanged", "error")
        return False
    if not math.isfinite(v):
        notices.add(f"{param.label}: {value!r} is not a finite number; unchanged", "error")
        return False
    if param.kind == "int" and v != int(v):
        v = float(round(v))
    if v < param.lo or v > param.hi:
        clamped = min(max(v, param.lo), param.hi)
        notices.add(f"{param.label}: {_fmt(param, v)} is out of range [{_fmt(param, param.lo)}, "
                    f"{_fmt(param, param.hi)}]; set to {_fmt(param, clamped)}", "warning")
        v = clamped
    try:
        param.set(int(v) if param.kind == "int" else v)
    except Exception as e:          # the World's setters raise ValueError; nothing typed may crash the app
        notices.add(f"{param.label}: {e}", "error")
        return False
    return True


def guarded(notices, what, fn, *args, **kwargs):
    """Run a panel action; a ValueError (or the like) becomes an error notice."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:          # ValueError from the World, OSError from files, anything else
        notices.add(f"{what}: {e}", "error")
        return None
