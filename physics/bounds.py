"""The numbers a world accepts at its edge (the builder, the scene loader, the command
line and `World.advance`), with the reason for each bound. Checked once, where the
number comes in; the kernels then never see a value they cannot divide by.

Masses (kg) of bodies (given, or a density times the shape's volume):
    MASS_MIN … MASS_MAX. The solvers divide by masses and inertias and multiply those
    inverses together (effective masses J M⁻¹ Jᵀ, a row's impulse on both bodies): at
    1e-300 kg an inertia underflows and 1/I overflows (ZeroDivisionError in a kernel).
    At the lower bound, the impulse solver's stopping threshold ε (1e-8 N·s by default)
    still gives a body's velocity to 1 cm/s.
Mass ratio, between the heaviest and the lightest dynamic body: at most MASS_RATIO. A row between two bodies weighs their inverse masses together;
    the solvers stop at relative tolerances of about 1e-8, so beyond this ratio the
    heavier body's share of a row is below what they resolve (it sees the light one
    through round-off only). Ratios that are accepted may still run away: the runaway
    watch (physics/runaway.py) reports it.
Densities (kg/m³) of bodies and ropes: DENSITY_MIN … DENSITY_MAX, from a thousandth of
    air's to about four times osmium's: no material is outside it. A body's mass that
    follows is checked too; a rope's radius lies within the shapes' sizes, so its nodes'
    masses stay far from underflow (1e-300 kg/m³ gave numpy overflow warnings).
Inertias (kg·m², principal moments): INERTIA_MIN … INERTIA_MAX. A shape's follow from
    the mass bounds and the shapes' sizes (1e-6 … 1e6 m, physics/shapes.py); they are
    checked all the same, and so are a model file's own (Body.inertia: URDF), since the
    solvers divide by them.
Steps: one `World.advance` / `advance_steps` call, and one headless run, take at most
    MAX_STEPS steps (1e9: hours of compute for the smallest world) and a headless run
    at most MAX_DURATION simulated seconds (11.6 days).
"""
import math

MASS_MIN = 1e-6            # kg: a milligram
MASS_MAX = 1e12            # kg: a mountain
MASS_RATIO = 1e8           # heaviest / lightest dynamic body in one world
DENSITY_MIN = 1e-3         # kg/m³
DENSITY_MAX = 1e5          # kg/m³
INERTIA_MIN = 1e-20        # kg·m²: a milligram sphere of radius 1e-6 m has 4e-19
INERTIA_MAX = 1e30         # kg·m²: MASS_MAX on a shape 1e6 m long has about 1e24
MAX_STEPS = 10 ** 9
MAX_DURATION = 1e6         # s


def in_range(value, lo, hi):
    """True for a real number lo <= value <= hi (False for NaN, a bool, a string)."""
    if isinstance(value, (bool, str, bytes)):
        return False
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return lo <= v <= hi


def mass_error(value):
    """None, or what is wrong with a mass (kg): for a ValueError's message."""
    if not in_range(value, MASS_MIN, MASS_MAX):
        return f"mass must be between {MASS_MIN:g} and {MASS_MAX:g} kg, got {_show(value)}"
    return None


def density_error(value):
    """None, or what is wrong with a density (kg/m³)."""
    if not in_range(value, DENSITY_MIN, DENSITY_MAX):
        return f"density must be between {DENSITY_MIN:g} and {DENSITY_MAX:g} kg/m³, got {_show(value)}"
    return None


def whole_steps(n, what="advance_steps"):
    """n as an int 0 … MAX_STEPS (an int, a numpy integer or a float with a whole value),
    else a ValueError naming `what`."""
    if isinstance(n, (bool, str, bytes)) or not (isinstance(n, float) or hasattr(n, "__index__")):
        raise ValueError(f"{what}: the number of steps must be a whole number, got {n!r}")
    if isinstance(n, float) and not (math.isfinite(n) and n.is_integer()):
        raise ValueError(f"{what}: the number of steps must be a whole number, got {n!r}")
    n = int(n)
    if not 0 <= n <= MAX_STEPS:
        raise ValueError(f"{what}: the number of steps must be between 0 and {MAX_STEPS:.0e}, got {n:.4g}")
    return n


def _show(value):
    return f"{value:g}" if isinstance(value, float) else repr(value)
