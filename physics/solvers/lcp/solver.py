"""LcpSolver: the lcp family's settings, its kernel call and its stats (LcpStats);
mhat_dense for tests and tools."""
from dataclasses import dataclass, field

import numpy as np

from ...clock import ticks_per_ms
from ..base import Readout, SolverBase
from ..projection import Violation, projection_for
from ..stats import SolverStats
from ..tree import articulated_factor, build_tree_plan, make_tree, select_rows, static_bodies
from ..tree.warm_up import compile_tree_kernels
from .settings import LEMKE, PGS, SETTINGS, make_params
from .step import kernel_for
from .system import clear_column, mark_tree, mhat_column
from .work import (IMPACT_CAPACITY, IMPACT_COLUMNS, N_STATS, S_CAPPED, S_CAPPED_STEPS, S_FALLBACKS, S_IMPACTS,
                   S_LOOP_RANK, S_LOOP_ROWS, S_METHOD, S_NEED_LOOPS, S_NEED_ROWS, S_PIVOTS, S_RESIDUAL, S_ROWS,
                   S_SIZE, S_SOLVE_TICKS, S_SWEEPS, S_VIOLATION, make_work)


@dataclass
class LcpStats(SolverStats):
    """SolverStats plus, for the last step's LCP: method ("lemke", "pgs" or "none"), rows
    (one-sided and bounded rows), lcp_size (Lemke's variables), pivots, sweeps (PGS),
    loop rows and their rank; over the last advance: fallbacks (Lemke failed, PGS ran) and
    impacts — one row per impact (IMPACT_COLUMNS): time of the step's start (s), bodies a
    and b, ġ⁻ and ġ⁺ (m/s, normal velocity before and after the impact LCP), e (= bias/ġ⁻),
    kinetic energy before and after the impact LCP (J; 0 with impact_lcp off), impulse S
    (N·s)."""
    method: str = "none"
    rows: int = 0
    lcp_size: int = 0
    pivots: int = 0
    sweeps: int = 0
    loop_rows: int = 0
    loop_rank: int = 0
    fallbacks: int = 0
    impacts: np.ndarray = field(default_factory=lambda: np.zeros((0, IMPACT_COLUMNS)))

    COUNTS = SolverStats.COUNTS + ("fallbacks",)     # over an advance's kernel calls (absorb)
    STACKS = ("impacts",)



class LcpSolver(SolverBase):
    """The `lcp` family. Beyond the World's state it keeps its work arrays (LcpWork: made
    for the world's bodies, contact rows and projection, grown when a step needs more U or
    loop rows) and the kernel's stats vector (S_*). The joint tree it factors is the
    world's projection's (tree)."""
    name = "lcp"
    description = "One mixed LCP per step (seeds 003, 004): trees eliminated in O(N), Lemke or PGS, impacts."
    HONOURS = frozenset({"limits", "friction", "damping", "motors", "couplings", "contacts", "restitution"})
    SETTINGS = SETTINGS
    PANEL = (("lcp_method", "lemke_max_rows"), ("pgs_iterations", "pgs_tolerance"),
             ("pgs_contact_tolerance", "lcp_time_cap_ms"), ("lcp_erp", "lcp_stabilization"),
             ("impact_lcp", "projection"), ("geometric_stiffness", "projection_iterations"))
    WHEN = {"projection_iterations": ("projection", (True,))}
    COMPILE_WEIGHT = 84.0
    WARM_UP_WEIGHT = 9.5
    VARIANT_WEIGHT = 0.0
    ROBOT_FEATURES_ALWAYS = True
    warm_up_kernels = staticmethod(compile_tree_kernels)       # the tree kernels it shares with impulse

    def __init__(self):
        super().__init__()
        self.stats = LcpStats()
        self.kernel_stats = np.zeros(N_STATS)   # S_* (the last projection's numbers carry over calls)
        self._work = None
        self._room = (16, 8)                    # U rows, loop rows the work is sized for

    def settings_changed(self):
        """Lemke's work is sized for lemke_max_rows: made anew when that grew."""
        if self._work is not None and self._work.lemke.slack.shape[0] < 3 * self.settings["lemke_max_rows"]:
            self._work = None

    def tree(self, world):
        """The Tree bundle (tree) the kernel factors the joint tree on: the world's
        projection's (projection.projection_for), so the velocity projection's factor at a
        step's end is the next step's."""
        return projection_for(world).tree

    def _work_for(self, world, contacts):
        """The work arrays, made anew when missing, too small for the contact rows, or made
        for another layout (a new layout has a new Projection)."""
        w = self._work
        rc = contacts.rows.J.shape[0]
        nb = world.model.bodies.count
        proj = projection_for(world)
        if w is None or w.c_vn.shape[0] < rc or w.in_tree.shape[0] != nb or w.proj is not proj:
            rows, loops = self._room
            self._work = make_work(nb, rows, loops, rc, self.settings["lemke_max_rows"], proj)
        return self._work

    # ------------------------------------------------------------------ the step (SolverBase.step)
    def params(self, world, coupled):
        """Params of the settings; may_iterate: a limit on, or a free row in use; damped: a
        joint's viscous damping."""
        use = self.drive_use(world)
        may_iterate = use.limits or use.any_free
        return make_params(self.settings, ticks_per_ms(), world.dt, may_iterate, use.any_damped)

    def begin(self, world, coupled):
        call = super().begin(world, coupled)
        call.update(tree=self.tree(world), fallbacks=0, capped=0, impacts=[],
                    kernel=kernel_for(call["robot"], call["robot"]))
        return call

    def run(self, world, call, n, t0):
        """One lcp_kernel call (with `projection` on, seed 004's projection after each step
        inside it)."""
        env, bodies, loads, joints, drives, rows, work = call["bundles"]
        contacts = world.contact_data(call["robot"])
        lw = call["lw"] = self._work_for(world, contacts)
        return call["kernel"](n, t0, call["params"], self.kernel_stats, env, bodies, loads, joints, drives, rows, work,
                              call["tree"], contacts, lw, world.coupling_data(call["robot"]))

    def after_run(self, world, call, k):
        """Add up the call's fallbacks, capped steps and impacts; a step that needed more U
        or loop rows than the work has: twice that room, and the kernel is called again."""
        st = self.kernel_stats
        call["fallbacks"] += int(st[S_FALLBACKS])
        call["capped"] += int(st[S_CAPPED_STEPS])
        n_imp = int(st[S_IMPACTS])
        if n_imp:
            call["impacts"].append(call["lw"].impacts[:min(n_imp, IMPACT_CAPACITY)].copy())
        if st[S_NEED_ROWS] > 0 or st[S_NEED_LOOPS] > 0:
            rows, loops = self._room
            self._room = (max(rows, 2 * int(st[S_NEED_ROWS])), max(loops, 2 * int(st[S_NEED_LOOPS])))
            self._work = None
            return True
        return False

    def finish(self, world, call, done):
        st, params = self.kernel_stats, call["params"]
        tpm = params.ticks_per_ms
        stats = LcpStats(
            iterations=int(st[S_PIVOTS] if st[S_METHOD] == LEMKE else st[S_SWEEPS]), residual=float(st[S_RESIDUAL]),
            solve_ms=float(st[S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0, time_capped=bool(st[S_CAPPED]),
            capped_steps=call["capped"], steps=done, method={0: "none", LEMKE: "lemke", PGS: "pgs"}[int(st[S_METHOD])],
            rows=int(st[S_ROWS]), lcp_size=int(st[S_SIZE]), pivots=int(st[S_PIVOTS]), sweeps=int(st[S_SWEEPS]),
            loop_rows=int(st[S_LOOP_ROWS]), loop_rank=int(st[S_LOOP_RANK]), fallbacks=call["fallbacks"],
            impacts=np.vstack(call["impacts"]) if call["impacts"] else np.zeros((0, IMPACT_COLUMNS)))
        if params.projection > 0 and done > 0:
            stats.record_projection(Violation(*(float(v) for v in st[S_VIOLATION:S_VIOLATION + 4])))
        return stats

    # ------------------------------------------------------------------ the panel
    def readouts(self, stats, capped=(0, 0)):
        """The last step's LCP and the advance's fallbacks, then the solve time."""
        work = f"{stats.pivots} pivots" if stats.method == "lemke" else f"{stats.sweeps} sweeps"
        return [Readout("LCP", f"{stats.method}, {stats.rows} rows, {work}",
                        "The last step's LCP: method, one-sided and bounded rows, Lemke pivots or PGS sweeps.", False),
                Readout("fallbacks", f"{stats.fallbacks}", "Steps of the last advance where Lemke failed and PGS ran.",
                        stats.fallbacks > 0)] + super().readouts(stats, capped)


def mhat_dense(world):
    """M̂ (6n × 6n, per body v then ω) of the world's joint tree at the current poses, each
    column M̂ e_k by the same tree solve the step uses (mhat_column) — for tests and
    tools. Bodies of no tree get M⁻¹; loop joints' rows are not in it."""
    from ...reference import world_inertia
    world._ensure_rows()
    m = world.model
    plan = build_tree_plan(m.joints.body, m.joints.type, static_bodies(m.bodies.inv_mass, m.bodies.inv_inertia))
    tree = make_tree(plan, m.rows.count)
    _, bodies, _, joints, _, rows, _ = world.kernel_bundles(world.active_solver.free_rows_used(world))
    nb = m.bodies.count
    select_rows(tree, joints.type, joints.row_start, rows.active, False, tree.row_direct)
    body_I = np.ascontiguousarray(world_inertia(world))
    articulated_factor(tree, joints.type, joints.body, rows.J, rows.C, bodies.pos, bodies.inv_mass, body_I, False,
                       False)
    inv_I = np.zeros((nb, 9))
    for i in range(nb):
        if bodies.inv_mass[i] > 0.0:
            inv_I[i] = np.linalg.inv(body_I[i].reshape(3, 3)).ravel()
    in_tree = np.zeros(nb, np.int64)
    mark_tree(tree, in_tree)
    out = np.zeros((6 * nb, 6 * nb))
    J, zc, yv, yw = np.zeros((1, 12)), np.zeros((nb, 6)), np.zeros((nb, 3)), np.zeros((nb, 3))
    for i in range(nb):
        if bodies.inv_mass[i] == 0.0:
            continue
        for k in range(6):
            J[:] = 0.0
            J[0, k] = 1.0
            live = mhat_column(J, 0, i, 0, tree, joints.body, in_tree, bodies.inv_mass, inv_I, zc, yv, yw)
            col = np.hstack([yv, yw])
            if not live:
                col[in_tree == 1] = 0.0
            out[:, 6 * i + k] = col.ravel()
            clear_column(i, 0, in_tree, yv, yw)
    return out
