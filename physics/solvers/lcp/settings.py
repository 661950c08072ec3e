"""The lcp family's settings: the schema the panel, scene files and World check against,
the named tuple its kernel reads them from (Params) and the constants of its methods."""
from collections import namedtuple

from ...settings import Setting, contact_tolerance_setting, erp_setting, time_cap_setting
from ..projection import PROJECTION_ITERATIONS

# a limit binds speculatively when its joint could reach it within this many steps at its rate
# at the step's start (joint_rows.speculative_limits; gravity and motors may speed it up)
LIMIT_REACH = 4.0
AUTO, LEMKE, PGS = 0, 1, 2
METHODS = {"auto": AUTO, "lemke": LEMKE, "pgs": PGS}
SPLIT, BAUMGARTE, NO_STABILIZATION = 0, 1, 2
STABILIZATIONS = {"split": SPLIT, "baumgarte": BAUMGARTE, "none": NO_STABILIZATION}
# Lemke's predicted cost, ns per n³ with n = 2 × rows (about its LCP variables), on the high
# side: Lemke cannot be stopped midway, so under a time cap it runs only when this fits
LEMKE_NS_PER_N3 = 2.0
PGS_POSITION_SWEEPS = 50    # the split pass's PGS (a drift correction needs no exact solve)
LEMKE_RESIDUAL = 1e-8       # Lemke's λ is taken when its BLCP residual is below this × max(1, |b|)
LOOP_RANK_TOL = 1e-10       # loop rows whose pivot is below this × the largest are dependent

SETTINGS = (
    Setting("lcp_method", "choice", "auto", choices=tuple(METHODS), label="LCP method",
            help="LCP solver: auto (Lemke up to lemke_max_rows rows and within the time cap, else projected "
                 "Gauss-Seidel), lemke, or pgs. PGS also takes over when Lemke fails."),
    Setting("lemke_max_rows", "int", 64, 1, 400, label="Lemke rows",
            help="Largest number of one-sided and bounded rows solved by Lemke's method (its cost grows as the "
                 "cube); above it, projected Gauss-Seidel."),
    Setting("pgs_iterations", "int", 100, 1, 100000, label="PGS sweeps",
            help="Projected Gauss-Seidel: most sweeps per solve."),
    Setting("pgs_tolerance", "float", 1e-9, 0.0, 1e3, unit="N·s", label="PGS tol.",
            help="Projected Gauss-Seidel stops when every impulse change is below this (N·s) - or, on contacts "
                 "between bodies in no joint tree, when no body's momentum changes by more than the contact "
                 "tolerance over a sweep."),
    contact_tolerance_setting("pgs_contact_tolerance", "LCP solver", "contact tol.",
                              "projected Gauss-Seidel's sweeps of contacts between bodies in no joint tree"),
    time_cap_setting("lcp_time_cap_ms", "LCP solver",
                     "Lemke runs only when its predicted time fits; PGS stops there with what it has."),
    Setting("lcp_stabilization", "choice", "split", choices=tuple(STABILIZATIONS), label="drift",
            help="Joint and contact drift: split (a position-level solve on pseudo-velocities), Baumgarte (a "
                 "velocity bias) or none."),
    erp_setting("lcp_erp"),
    Setting("geometric_stiffness", "bool", False, label="geometric stiffness",
            help="Add h²K of the joint forces to the tree bodies' inertia (as the impulse solver's direct path), "
                 "which steadies long hanging chains at large steps but slows fast mechanisms."),
    Setting("impact_lcp", "bool", True, label="impact LCP",
            help="Impacts as in seed 004: an impact LCP with Newton restitution, then the contact LCP. Off: "
                 "restitution as a velocity target inside the one LCP."),
    Setting("projection", "bool", True, label="projection",
            help="Seed 004's projection onto the joints' constraint manifold after each step (positions, then "
                 "velocities); needs physics/solvers/projection.py."),
    PROJECTION_ITERATIONS,
)

Params = namedtuple("Params", "method lemke_max pgs_iterations pgs_tolerance pgs_contact_tolerance time_cap_ms stabilization erp impact "
                              "geometric projection ticks_per_ms dt may_iterate damped")
"""What the kernel reads: method (AUTO, LEMKE, PGS), lemke_max (most U rows Lemke takes),
pgs_iterations, pgs_tolerance and pgs_contact_tolerance (N·s), time_cap_ms (0: none), stabilization (SPLIT,
BAUMGARTE, NO_STABILIZATION), erp, impact (the impact LCP on), geometric (the geometric
stiffness on), projection (Newton iterations of seed 004's projection after each step; 0:
off); of the call: ticks_per_ms (the clock's; 0: no counter, the cap is not enforced), dt (the
World's Δt, s) and
may_iterate (a limit on or a free row in use: the drive rows are written every step and
limits bind speculatively) and damped (some joint has viscous damping: ../damping.py)."""


def make_params(s, ticks_per_ms, dt, may_iterate, damped):
    """Params of a settings dict and the call's values (every field of one type, so the
    kernel compiles once)."""
    return Params(METHODS[s["lcp_method"]], int(s["lemke_max_rows"]), int(s["pgs_iterations"]),
                  float(s["pgs_tolerance"]), float(s["pgs_contact_tolerance"]), float(s["lcp_time_cap_ms"]), STABILIZATIONS[s["lcp_stabilization"]],
                  float(s["lcp_erp"]), bool(s["impact_lcp"]), bool(s["geometric_stiffness"]),
                  int(s["projection_iterations"]) if s["projection"] else 0, float(ticks_per_ms), float(dt), bool(may_iterate),
                  bool(damped))
