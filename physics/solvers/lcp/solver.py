"""LcpSolver: the lcp family's settings, its kernel call, its stats (LcpStats); mhat_dense
for tests and tools."""
from dataclasses import dataclass, field

import numpy as np

from ...clock import ticks_per_ms
from ...joint_rows import MOTOR_OFF
from ...settings import checked, defaults
from ..base import SolverBase
from ..projection import Violation, projection_for
from ..stats import SolverStats
from ..tree import articulated_factor, build_tree_plan, make_tree, select_rows, static_bodies
from .settings import (LEMKE, METHODS, N_PARAMS, P_ERP, P_GEOMETRIC, P_IMPACT, P_LEMKE_MAX, P_MAY_ITERATE,
                       P_METHOD, P_PGS_ITERATIONS, P_PGS_TOLERANCE, P_PROJECTION, P_STABILIZATION, P_TICKS_PER_MS,
                       P_TIME_CAP_MS, PGS, SETTINGS, STABILIZATIONS)
from .step import lcp_kernel
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


class LcpSolver(SolverBase):
    """The `lcp` family: settings (SETTINGS), step, stats, and its caches — the tree plan
    of the joint graph and the dense work arrays, rebuilt on `model_changed` and grown on
    demand."""
    name = "lcp"
    description = "One mixed LCP per step (seeds 003, 004): trees eliminated in O(N), Lemke or PGS, impacts."
    HONOURS = frozenset({"limits", "friction", "motors", "contacts", "restitution"})
    SETTINGS = SETTINGS

    def __init__(self):
        self.settings = defaults(SETTINGS)
        self.params = np.zeros(N_PARAMS)
        self.kernel_stats = np.zeros(N_STATS)
        self.stats = LcpStats()
        self._work = None
        self._room = (16, 8)                # U rows, loop rows the work was last sized for
        self._pack()

    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(SETTINGS, values, "solver"))
        self._pack()

    def _pack(self):
        s, p = self.settings, self.params
        p[P_METHOD] = METHODS[s["lcp_method"]]
        p[P_LEMKE_MAX] = s["lemke_max_rows"]
        p[P_PGS_ITERATIONS], p[P_PGS_TOLERANCE] = s["pgs_iterations"], s["pgs_tolerance"]
        p[P_TIME_CAP_MS] = s["lcp_time_cap_ms"]
        p[P_STABILIZATION] = STABILIZATIONS[s["lcp_stabilization"]]
        p[P_ERP] = s["lcp_erp"]
        p[P_IMPACT] = 1.0 if s["impact_lcp"] else 0.0
        p[P_GEOMETRIC] = 1.0 if s["geometric_stiffness"] else 0.0
        if self._work is not None and self._work.lemke.slack.shape[0] < 3 * s["lemke_max_rows"]:
            self._work = None

    def model_changed(self, world):
        """The joint graph or the bodies changed: drop the work arrays."""
        self._work = None

    def tree(self, world):
        """The Tree bundle (tree) the kernel factors the joint tree on: the world's
        projection's (projection.projection_for), so the velocity projection's factor at a
        step's end is the next step's."""
        return projection_for(world).tree

    def free_rows_used(self, world):
        """Per joint, 1 if its free rows are in use (friction or a motor)."""
        m, c = world.model.joints, world.control.joints
        return ((m.friction > 0.0) | (c.motor_mode != MOTOR_OFF)).astype(np.int64)

    def _work_for(self, world, contacts):
        """The work arrays, (re)made when missing or too small for the contact rows."""
        w = self._work
        rc = contacts.rows.J.shape[0]
        nb = world.model.bodies.count
        proj = projection_for(world)
        if w is None or w.c_vn.shape[0] < rc or w.in_tree.shape[0] != nb or w.proj is not proj:
            rows, loops = self._room
            self._work = make_work(nb, rows, loops, rc, self.settings["lemke_max_rows"], proj)
        return self._work

    def step(self, world, n, coupled=False):
        """n steps of Δt (lcp_kernel; with `projection` on, seed 004's projection after
        each step inside it); returns the steps done before a blow-up."""
        tree = self.tree(world)
        m, c = world.model.joints, world.control.joints
        self.params[P_MAY_ITERATE] = 1.0 if (m.limit_on.any() or (m.friction > 0.0).any()
                                             or (c.motor_mode != MOTOR_OFF).any()) else 0.0
        self.params[P_TICKS_PER_MS] = ticks_per_ms()
        self.params[P_PROJECTION] = self.settings["projection_iterations"] if self.settings["projection"] else 0
        env, bodies, loads, joints, drives, rows, work = world.kernel_bundles(self.free_rows_used(world), coupled)
        st = self.kernel_stats
        done, fallbacks, capped, impacts, violation = 0, 0, 0, [], None
        while done < n:
            chunk = n - done
            contacts = world.contact_data()
            lw = self._work_for(world, contacts)
            k = lcp_kernel(chunk, world.dt, world.time + done * world.dt, self.params, st, env, bodies, loads,
                           joints, drives, rows, work, tree, contacts, lw)
            grew = world.contacts_stepped()
            done += k
            fallbacks += int(st[S_FALLBACKS])
            capped += int(st[S_CAPPED_STEPS])
            n_imp = int(st[S_IMPACTS])
            if n_imp:
                impacts.append(lw.impacts[:min(n_imp, IMPACT_CAPACITY)].copy())
            if st[S_NEED_ROWS] > 0 or st[S_NEED_LOOPS] > 0:
                rows_room, loops_room = self._room
                self._room = (max(rows_room, 2 * int(st[S_NEED_ROWS])), max(loops_room, 2 * int(st[S_NEED_LOOPS])))
                self._work = None
                continue
            if k < chunk and not grew:
                break                       # blew up
            if k < chunk:
                continue                    # the contact buffers grew: the rest of the chunk
        if self.params[P_PROJECTION] > 0 and done > 0:
            violation = Violation(*(float(v) for v in st[S_VIOLATION:S_VIOLATION + 4]))
        tpm = self.params[P_TICKS_PER_MS]
        self.stats = LcpStats(
            iterations=int(st[S_PIVOTS] if st[S_METHOD] == LEMKE else st[S_SWEEPS]), residual=float(st[S_RESIDUAL]),
            solve_ms=float(st[S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0, time_capped=bool(st[S_CAPPED]),
            capped_steps=capped, steps=done, method={0: "none", LEMKE: "lemke", PGS: "pgs"}[int(st[S_METHOD])],
            rows=int(st[S_ROWS]), lcp_size=int(st[S_SIZE]), pivots=int(st[S_PIVOTS]), sweeps=int(st[S_SWEEPS]),
            loop_rows=int(st[S_LOOP_ROWS]), loop_rank=int(st[S_LOOP_RANK]), fallbacks=fallbacks,
            impacts=np.vstack(impacts) if impacts else np.zeros((0, IMPACT_COLUMNS)))
        self.stats.record_projection(violation)
        return done


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
