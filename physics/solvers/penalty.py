"""The `penalty` solver (seed 000): each active row becomes a spring-damper.

    F_pen = −Jᵀ(α G + β Ġ)                                  (eq. 9, seed 000)

Two scalings of α and β, chosen per world:

* ``paper`` — exactly seed 000 §5: α = m_eff α*, β = m_eff β* with
  m_eff = 1/(1/m_i + 1/m_j) (masses only), α* = 5000, β* = 25 for translational
  rows and α* = 10000, β* = 10 for rotational rows, tuned for Δt ≈ 3 ms.
* ``critical`` — stiffness from each row's effective mass *and inertia* and the
  step, so that every mode of the coupled rows stays stable and critically damped:
  α_r = ω²/D_r, β_r = 2ζω/D_r with ω = κ/Δt, where D_r bounds the r-th Gershgorin
  row sum of A = J M⁻¹ Jᵀ (over the rows sharing a body with r). Then every
  eigenvalue λ of diag(α)A is ≤ ω², the damping diag(β)A = (2ζ/ω) diag(α)A acts on
  the same modes, and semi-implicit Euler is stable when κ² + 4ζκ < 4 (κ < 0.83 at
  ζ = 1); κ = 0.7 by default. D_r = Σ_{bodies b of r} Σ_{rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|
  (≥ the row sum, by the triangle inequality), from a static list of the rows on each
  body: O(rows × rows per body) per step.
  Explicit penalty cannot be both stiff and stable where a row's effective mass is
  dominated by a small inertia on a long lever (a small bob on a long arm): there
  the row is soft. Use a smaller Δt, or the impulse solver.
"""
import numpy as np
from numba import njit

import time

from ..contacts import penalty_contact_forces, prepare_contacts
from ..integrate import blown_up, gather_forces, integrate_positions, integrate_velocities
from ..joint_rows import ROW_FREE, compute_joint_rates, compute_joint_rows, row_velocity
from ..quat import world_inv_inertia_times
from ..settings import Setting, checked, defaults
from .row_ops import scatter_row
from .stats import SolverStats

PAPER, CRITICAL = 0, 1
# ωΔt of a contact's spring (contacts.penalty_contact_forces): a body resting at Δt sinks
# g(Δt/κ)², 0.35 mm at 3 ms
CONTACT_KAPPA = 0.5
PRESETS = {"paper": PAPER, "critical": CRITICAL}
COEFFICIENTS = ("alpha_lin", "beta_lin", "alpha_rot", "beta_rot", "kappa", "zeta")   # params[1:7]

SETTINGS = (
    Setting("penalty_preset", "choice", "paper", choices=tuple(PRESETS), label="preset",
            help="paper: α, β from the effective mass and α*, β* (seed 000); critical: every row critically "
                 "damped from its effective mass and Δt."),
    Setting("alpha_lin", "float", 5000.0, 0.0, 1e9, unit="1/s²", label="α* lin",
            help="Paper preset: stiffness per unit effective mass of translational rows (1/s²); "
                 "α = m_eff α* (seed 000 eq. 9)."),
    Setting("beta_lin", "float", 25.0, 0.0, 1e7, unit="1/s", label="β* lin",
            help="Paper preset: damping per unit effective mass of translational rows (1/s)."),
    Setting("alpha_rot", "float", 10000.0, 0.0, 1e9, unit="1/s²", label="α* rot",
            help="Paper preset: stiffness per unit effective mass of rotational rows (1/s²)."),
    Setting("beta_rot", "float", 10.0, 0.0, 1e7, unit="1/s", label="β* rot",
            help="Paper preset: damping per unit effective mass of rotational rows (1/s)."),
    Setting("kappa", "float", 0.7, 0.0, 2.0, label="κ",
            help="Critical preset: ωΔt of every row (dimensionless); below 2 for semi-implicit Euler, "
                 "0.7 by default."),
    Setting("zeta", "float", 1.0, 0.0, 100.0, label="ζ", help="Critical preset: damping ratio of every row (1 = critical)."),
)


@njit(cache=True, error_model="numpy")
def gershgorin_bounds(bodies, rows, work):
    """row_bound[r] = Σ_{bodies b of r} Σ_{active rows r' on b} |J_rb M_b⁻¹ J_r'bᵀ|.
    body_row_ptr/body_row_idx list only equality and limit rows (free rows never push)."""
    row_kind, row_J, row_active, row_body = rows.kind, rows.J, rows.active, rows.body
    body_quat, body_inv_mass, body_inv_inertia = bodies.quat, bodies.inv_mass, bodies.inv_inertia
    body_row_ptr, body_row_idx, row_minv_jt, row_bound = work.body_row_ptr, work.body_row_idx, work.minv_jt, work.bound
    # M⁻¹Jᵀ of each side of each active row (zero for inactive rows and static bodies)
    for r in range(row_J.shape[0]):
        on = row_active[r] != 0 and row_kind[r] != ROW_FREE
        for side in range(2):
            i = row_body[r, side]
            o = 6 * side
            if not on:
                for k in range(6):
                    row_minv_jt[r, o + k] = 0.0
                continue
            im = body_inv_mass[i]
            row_minv_jt[r, o] = im * row_J[r, o]
            row_minv_jt[r, o + 1] = im * row_J[r, o + 1]
            row_minv_jt[r, o + 2] = im * row_J[r, o + 2]
            ix, iy, iz = world_inv_inertia_times(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                                 body_inv_inertia[i, 0], body_inv_inertia[i, 1],
                                                 body_inv_inertia[i, 2], row_J[r, o + 3], row_J[r, o + 4],
                                                 row_J[r, o + 5])
            row_minv_jt[r, o + 3] = ix
            row_minv_jt[r, o + 4] = iy
            row_minv_jt[r, o + 5] = iz
        row_bound[r] = 0.0
    # per body: every pair of rows on it adds |J_rb · M⁻¹J_r'bᵀ| to both rows' bounds
    for i in range(body_row_ptr.shape[0] - 1):
        if body_inv_mass[i] == 0.0 and body_inv_inertia[i, 0] == 0.0:
            continue
        for p in range(body_row_ptr[i], body_row_ptr[i + 1]):
            r = body_row_idx[p, 0]
            if row_active[r] == 0:
                continue
            o = 6 * body_row_idx[p, 1]
            for p2 in range(p, body_row_ptr[i + 1]):
                r2 = body_row_idx[p2, 0]
                if row_active[r2] == 0:
                    continue
                o2 = 6 * body_row_idx[p2, 1]
                dot = 0.0
                for k in range(6):
                    dot += row_J[r, o + k] * row_minv_jt[r2, o2 + k]
                dot = abs(dot)
                row_bound[r] += dot
                if p2 != p:
                    row_bound[r2] += dot


@njit(cache=True, error_model="numpy")
def penalty_forces(params, h, bodies, rows, work):
    """Add −Jᵀ(αC + βĊ) of every active equality and limit row to the body forces."""
    preset = params[0]
    if preset == CRITICAL:
        gershgorin_bounds(bodies, rows, work)
    row_kind, row_rot, row_J, row_C, row_active = rows.kind, rows.rot, rows.J, rows.C, rows.active
    row_body = rows.body
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    row_bound, force_acc, torque_acc = work.bound, work.force_acc, work.torque_acc
    for r in range(row_C.shape[0]):
        if row_active[r] == 0 or row_kind[r] == ROW_FREE:
            continue
        a = row_body[r, 0]
        b = row_body[r, 1]
        if preset == PAPER:
            s = body_inv_mass[a] + body_inv_mass[b]
            if s == 0.0:
                continue
            m_eff = 1.0 / s
            if row_rot[r]:
                alpha, beta = m_eff * params[3], m_eff * params[4]
            else:
                alpha, beta = m_eff * params[1], m_eff * params[2]
        else:
            d = row_bound[r]
            if d <= 0.0:
                continue
            w = params[5] / h
            alpha = w * w / d
            beta = 2.0 * params[6] * w / d
        lam = -(alpha * row_C[r] + beta * row_velocity(row_J, r, a, b, body_vel, body_omega))
        scatter_row(row_J, r, a, b, lam, force_acc, torque_acc)


@njit(cache=True, error_model="numpy")
def penalty_run(n_steps, h, t0, params, env, bodies, loads, joints, rows, work, contacts):
    """Advance n_steps fixed steps. Rows must hold the current poses on entry; they hold
    the final poses on return. Contacts (physics/contacts.py) push as one-sided springs
    (contacts.penalty_contact_forces, κ = CONTACT_KAPPA, ζ = 1). Returns the number of
    steps done before a blow-up (n_steps when none)."""
    force_acc, torque_acc = work.force_acc, work.torque_acc
    gravity, gyroscopic, max_speed, max_spin = env.gravity, env.gyroscopic, env.max_speed, env.max_spin
    for step in range(n_steps):
        gather_forces(t0 + step * h, bodies, loads, force_acc, torque_acc)
        if prepare_contacts(contacts, bodies, h) > 0:
            penalty_contact_forces(contacts, bodies, h, CONTACT_KAPPA, 1.0, force_acc, torque_acc, gravity)
        penalty_forces(params, h, bodies, rows, work)
        integrate_velocities(bodies, force_acc, torque_acc, gravity, gyroscopic, h)
        integrate_positions(bodies, h)
        compute_joint_rows(bodies, joints, rows, step == n_steps - 1)
        if blown_up(bodies, max_speed, max_spin):
            return step
    compute_joint_rates(bodies, joints, rows)
    return n_steps


class PenaltySolver:
    """The `penalty` family: settings (SETTINGS), step, stats. Its only cache is the
    params vector built from the settings."""
    name = "penalty"
    description = "Penalty forces, seed 000: every row a spring-damper."
    HONOURS = frozenset({"limits", "contacts"})     # joint features it acts on (friction and motors: not yet)
    SETTINGS = SETTINGS

    def __init__(self):
        self.settings = defaults(SETTINGS)
        self.params = np.zeros(7)       # [preset, α*_lin, β*_lin, α*_rot, β*_rot, κ, ζ] for the kernel
        self.stats = SolverStats()
        self._pack()

    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(SETTINGS, values, "penalty"))
        self._pack()

    def _pack(self):
        self.params[0] = PRESETS[self.settings["penalty_preset"]]
        self.params[1:7] = [self.settings[k] for k in COEFFICIENTS]

    def model_changed(self, world):
        pass

    def free_rows_used(self, world):
        """Penalty pushes no free rows (no friction, no motors)."""
        return np.zeros(world.model.joints.count, np.int64)

    def step(self, world, n, coupled=False):
        """n steps of Δt; returns the steps done before a blow-up."""
        t0 = time.perf_counter()
        env, bodies, loads, joints, _, rows, work = world.kernel_bundles(self.free_rows_used(world), coupled)
        done = penalty_run(n, world.dt, world.time, self.params, env, bodies, loads, joints, rows, work,
                           world.contact_data())
        world.contacts_stepped()
        ms = (time.perf_counter() - t0) * 1e3 / max(n, 1)
        self.stats = SolverStats(0, 0.0, ms, False, 0, done)
        return done
