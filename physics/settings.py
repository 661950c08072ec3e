"""One schema for every setting a user can change: name, type, range, unit, default, help.

The World's setters check values with it, the scene loader and writer read and write
the same keys, `--set` goes through the loader, and the panel builds its widgets,
ranges and tooltips from it. World settings are here; each solver family declares its
own `SETTINGS` tuple (physics/solvers/) with the same `Setting` entries.
"""
from dataclasses import dataclass
import math


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str                   # "float", "int", "bool" or "choice"
    default: object
    lo: float = -math.inf       # numbers: the accepted range, inclusive
    hi: float = math.inf
    choices: tuple = ()         # "choice": the accepted names
    unit: str = ""
    label: str = ""             # short name for the panel (defaults to name)
    help: str = ""
    log: bool = False           # the panel edits it on a logarithmic scale

    @property
    def expected(self):
        """What a valid value is, in words (for error messages)."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        what = "an integer" if self.kind == "int" else "a number"
        unit = f" {self.unit}" if self.unit and self.unit != "1" else ""
        if math.isfinite(self.lo) and math.isfinite(self.hi):
            return f"{what} between {self.lo:g} and {self.hi:g}{unit}"
        if math.isfinite(self.lo):
            return f"{what} >= {self.lo:g}{unit}"
        return f"finite {what}"

    def check(self, value, owner=""):
        """The value converted to its type, or ValueError naming the setting."""
        where = f"{owner}{' ' if owner else ''}{self.name}"
        if self.kind == "bool":
            if isinstance(value, bool) or value in (0, 1):
                return bool(value)
        elif self.kind == "choice":
            if value in self.choices:
                return value
        elif not isinstance(value, (bool, str)):
            try:
                v = float(value)
            except (TypeError, ValueError):
                v = math.nan
            if math.isfinite(v) and self.lo <= v <= self.hi and (self.kind != "int" or v == int(v)):
                return int(v) if self.kind == "int" else v
        raise ValueError(f"{where} must be {self.expected}, got {value!r}")


def checked(settings, values, owner):
    """{name: value} checked against a schema (all of them before any is applied);
    None values are skipped. ValueError names the setting and what it must be."""
    schema = by_name(settings)
    out = {}
    for key, value in values.items():
        if key not in schema:
            raise ValueError(f"{owner} has no setting {key!r} (settings: {', '.join(schema)})")
        if value is not None:
            out[key] = schema[key].check(value, owner)
    return out


def defaults(settings):
    return {s.name: s.default for s in settings}


def by_name(settings):
    return {s.name: s for s in settings}


def time_cap_setting(name, solver, stop="The solve stops there with what it has."):
    """A family's time cap: the wall-clock budget of one solve (ms, 0: none), the same
    setting in every family that has one (SolverStats counts the steps it cut)."""
    return Setting(name, "float", 0.0, 0.0, 1000.0, unit="ms", label="time cap",
                   help=f"{solver}: wall-clock budget of one solve (ms); 0 = no cap. {stop}")


def erp_setting(name):
    """A family's error reduction parameter: the share of the drift (joints, contacts) that a
    step corrects by split impulses or Baumgarte, the same setting in every family that has
    one."""
    return Setting(name, "float", 0.2, 0.0, 1.0, label="ERP",
                   help="Error reduction per step (0-1): the share of joint and contact drift corrected each step "
                        "by the split pass or Baumgarte.")


def contact_tolerance_setting(name, solver, label, where="the contacts' sweeps"):
    """A family's stop for its contact sweeps: the largest change of a body's momentum over a
    sweep, looser than its rows' own tolerance (a pile's normal impulses are not unique and
    Gauss–Seidel keeps shifting them without moving anything), the same setting in every
    family that sweeps contacts."""
    return Setting(name, "float", 2e-7, 0.0, 1e3, unit="N·s", label=label,
                   help=f"{solver}: {where} stop when no body's momentum changes by more than this over a sweep "
                        "(N·s; a 1 kg body's speed to 2e-7 m/s). Tighter, a tall stack sweeps to its limit every "
                        "step; looser, a settled heap keeps creeping by micrometres.")


DT = Setting("dt", "float", 0.003, 1e-6, 0.1, unit="s", label="Δt",
             help="Fixed physics step (s).")
GYROSCOPIC = Setting("gyroscopic", "bool", False, help="Add the ω×Iω term (implicit), for fast-spinning bodies.")
WORLD_SETTINGS = (DT, GYROSCOPIC)
