"""The impulse family's settings: the schema the panel, scene files and World check
against, the named tuple its kernels read them from (Params) and the stats vector they
write (S_*)."""
from collections import namedtuple

from ...settings import Setting, contact_tolerance_setting, erp_setting, time_cap_setting
from ..projection import PROJECTION_ITERATIONS

SPLIT, BAUMGARTE, NO_STABILIZATION, SHAKE = 0, 1, 2, 3    # as the kernels see them (Params.stabilization)
STABILIZATIONS = {"split": SPLIT, "baumgarte": BAUMGARTE, "none": NO_STABILIZATION, "shake": SHAKE}
# SHAKE's quasi-Newton iterations stop once every joint's drift is below this (m or rad):
# far below any visible gap (the split impulses take what is left next substep). Each
# iteration shrinks the drift by about ωh (ω: the fastest link's rate) or hands over to
# Newton steps (projection.shake_correction), so 20 take a centimetre below it at ωh = ½
SHAKE_TOLERANCE = 1e-9
SHAKE_ITERATIONS = 20
METHODS = {"auto": 0, "direct": 1, "iterative": 2}     # direct.uses_direct_solve's method
# a limit binds speculatively when its joint could reach it within this many substeps at its
# rate after the external impulses (joint_rows.speculative_limits): the solve may speed it up
LIMIT_REACH = 4.0
# the kernel's stats vector (last step, plus counts over the call)
S_ITERATIONS, S_RESIDUAL, S_SOLVE_TICKS, S_CAPPED, S_CAPPED_STEPS, S_TOTAL_ITERATIONS, S_VIOLATION = range(7)
N_STATS = S_VIOLATION + 4          # the last post-projection's Violation (4 numbers) from S_VIOLATION on

SETTINGS = (
    Setting("iterations", "int", 50, 1, 100000, label="iterations",
            help="Impulse solver: most velocity iterations per substep."),
    Setting("epsilon", "float", 1e-8, 0.0, 1e3, unit="N·s", label="ε",
            help="Impulse solver: stop iterating when every joint row's impulse change |Δp| in a sweep is below ε "
                 "(N·s) and the contacts have converged (contact ε)."),
    contact_tolerance_setting("contact_epsilon", "Impulse solver", "contact ε"),
    time_cap_setting("time_cap_ms", "Impulse solver"),
    Setting("warm_start", "bool", True, label="warm start", help="Start each solve from the last step's impulses."),
    Setting("stabilization", "choice", "split", choices=tuple(STABILIZATIONS), label="drift",
            help="How joint drift is removed: split impulses (a separate position pass), Baumgarte (a velocity "
                 "bias), none, or shake: split impulses, then after each substep the joints are moved back onto "
                 "their constraints by an impulse that also acts on the velocities (SHAKE/RATTLE), so a spinning "
                 "joint keeps its energy."),
    erp_setting("erp"),
    Setting("substeps", "int", 1, 1, 1000, label="substeps",
            help="Impulse solver: substeps per Δt (each of Δt/substeps); more substeps make joints stiffer."),
    Setting("position_iterations", "int", 4, 0, 100000, label="position iterations",
            help="Split impulses: iterations of the position (pseudo-velocity) pass."),
    Setting("method", "choice", "auto", choices=tuple(METHODS), label="trees",
            help="Equality rows of joint trees: direct O(N) solve (Baraff), seed 001's iterations, or auto "
                 "(direct when the iteration budget is below the tree depth squared)."),
    Setting("post_projection", "bool", False, label="projection",
            help="Seed 004's position projection onto the joints' constraint manifold after every step, in the "
                 "step's own mass metric (physics/solvers/projection.py): post-stabilization; the velocities are "
                 "the next step's solve. Off, the impulse solver still projects a step whose joints drifted beyond "
                 "`projection_above`. (lcp's own is `projection`, on by default.)"),
    Setting("projection_above", "float", 9e-4, 0.0, 1.0, unit="m", label="project above",
            help="Impulse: the position projection runs (without post_projection) on a step whose joints drifted "
                 "beyond this (m or rad; 0: only with post_projection): a whipping chain's drift, not the "
                 "round-off of a resting one. Not when a joint has limits (the projection would push a joint "
                 "resting on its stop through it)."),
    PROJECTION_ITERATIONS,
    Setting("keep_energy", "bool", True, label="keep energy",
            help="Energy projection after a step with joints whose work it counts only (no limit or motor on any "
                 "joint; no rope or mouse spring): the velocities of each group of bodies jointed to the ground and "
                 "touching nothing in the step are scaled (by at most 1 % a step) so that its energy is its "
                 "energy when the run started (or was last edited) plus the loads' and the joints' friction's and "
                 "damping's work, never above it. "
                 "Takes back what the drift correction and the velocity solve at the start pose lose (~(ωh)² a step); "
                 "what a step cannot take back at once is owed and taken back over the next steps."),
)

Params = namedtuple("Params", "iterations epsilon contact_epsilon time_cap_ms warm_start stabilization erp substeps "
                              "position_iterations ticks_per_ms dt direct may_iterate projection projection_above "
                              "keep_energy damped collides")
"""What the kernels read: the settings of those names (stabilization as SPLIT, BAUMGARTE,
NO_STABILIZATION or SHAKE), and per step call — ticks_per_ms: the clock's ticks per ms;
dt: the World's Δt (s); direct: the tree's rows are solved directly (direct.uses_direct_solve); may_iterate: some
joint has a limit or a free row in use (friction or a motor), so rows may iterate around
the direct solve; projection: Newton iterations of seed 004's position projection after
a step (0: off); projection_above: it runs only on steps whose joints drifted beyond
this (m or rad; 0: every step); keep_energy: the energy projection after each step
(not coupled to ropes or the mouse spring; with no limit or motor: ImpulseSolver.energy_inactive);
damped: some joint has viscous damping (../damping.py); collides: contacts are detected
(World.collides)."""


def make_params(s, ticks_per_ms, dt, direct, may_iterate, projection, projection_above, keep_energy, damped,
                collides):
    """Params of a settings dict and of what the step call knows (every field of one
    type, so the kernels compile once)."""
    return Params(int(s["iterations"]), float(s["epsilon"]), float(s["contact_epsilon"]), float(s["time_cap_ms"]), bool(s["warm_start"]),
                  STABILIZATIONS[s["stabilization"]], float(s["erp"]), int(s["substeps"]),
                  int(s["position_iterations"]), float(ticks_per_ms), float(dt), bool(direct), bool(may_iterate),
                  int(projection), float(projection_above), bool(keep_energy), bool(damped),
                  bool(collides))
