"""The world: model (what the user edits) and state (what time changes) as arrays.

Bodies and joints live in contiguous float64 arrays (structure of arrays);
body 0 is the static world. Python builds and edits; the numba kernels step.
"""
from dataclasses import dataclass, field
import math
import time as _time

import numpy as np

from .solvers import impulse, penalty
from .clock import ticks_per_ms
from .integrate import gather_forces, integrate_velocities, is_static
from .joint_rows import (JOINT_TYPE_NAMES, JOINT_TYPES, ROW_EQ, ROW_FREE, ROW_LAYOUT, ROW_LIMIT,
                         TRANSLATIONAL_EQ_ROWS, PRISMATIC, SPHERICAL, UNIVERSAL, REVOLUTE,
                         compute_joint_rates, compute_joint_rows)
from .quat import frame_from_axes, q_conj, q_from_matrix, q_mul, q_rotate
from .shapes import Plane

SOLVERS = ("penalty", "impulse")
STATE_BODY_FIELDS = ("body_pos", "body_quat", "body_vel", "body_omega")
STATE_JOINT_FIELDS = ("joint_q", "joint_qd", "row_lambda")


class SimulationBlowUp(RuntimeError):
    """The state became NaN or ran away; `time` is the simulated time (s) it happened."""

    def __init__(self, time, reason):
        super().__init__(f"simulation blew up at t = {time:.4f} s: {reason}")
        self.time = time
        self.reason = reason


@dataclass
class SolverStats:
    """What the solve did: the last step's iterations, final residual (largest |Δp|,
    N·s), solve time (ms, iterations only for `impulse`, the whole step for `penalty`)
    and whether the time cap cut it; over the last advance, how many steps the cap cut."""
    iterations: int = 0
    residual: float = 0.0
    solve_ms: float = 0.0
    time_capped: bool = False
    capped_steps: int = 0
    steps: int = 0


@dataclass
class BodyInfo:
    name: str
    shape: object
    color: tuple
    mass: float
    visual_mesh: str = None


@dataclass
class JointInfo:
    name: str
    kind: str
    parent: str
    child: str
    anchor: tuple = field(default=(0.0, 0.0, 0.0))
    axis: tuple = None
    axis2: tuple = None


def _vec3(value, what):
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be 3 finite numbers, got {value!r}")
    return arr


class Body:
    """A named view of one body's state and model (world frame, SI units)."""

    def __init__(self, world, index):
        self._w, self.index = world, index

    name = property(lambda self: self._w.body_info[self.index].name)
    shape = property(lambda self: self._w.body_info[self.index].shape)
    mass = property(lambda self: self._w.body_info[self.index].mass)
    inertia = property(lambda self: self._w.body_inertia[self.index].copy())
    is_static = property(lambda self: self._w.body_inv_mass[self.index] == 0.0)

    def _get(self, field):
        return getattr(self._w, field)[self.index].copy()

    def _set(self, field, value, n=3):
        arr = np.asarray(value, dtype=float).reshape(-1)
        if arr.shape != (n,) or not np.all(np.isfinite(arr)):
            raise ValueError(f"{field} needs {n} finite numbers, got {value!r}")
        if n == 4:
            arr = arr / np.linalg.norm(arr)
        getattr(self._w, field)[self.index] = arr
        self._w._refresh_rows()

    position = property(lambda s: s._get("body_pos"), lambda s, v: s._set("body_pos", v))
    orientation = property(lambda s: s._get("body_quat"), lambda s, v: s._set("body_quat", v, 4))
    velocity = property(lambda s: s._get("body_vel"), lambda s, v: s._set("body_vel", v))
    angular_velocity = property(lambda s: s._get("body_omega"), lambda s, v: s._set("body_omega", v))
    force = property(lambda s: s._get("body_force"), lambda s, v: s._set("body_force", v))
    torque = property(lambda s: s._get("body_torque"), lambda s, v: s._set("body_torque", v))

    def point_velocity(self, point):
        """Velocity (m/s) of a world point moving with the body."""
        r = _vec3(point, "point") - self.position
        return self.velocity + np.cross(self.angular_velocity, r)


def impulse_free_dofs(t):
    return {SPHERICAL: 3, UNIVERSAL: 2, REVOLUTE: 1, PRISMATIC: 1}.get(int(t), 0)


class Joint:
    """A named view of one joint: readouts of its free DOFs and its editable limits."""

    def __init__(self, world, index):
        self._w, self.index = world, index

    name = property(lambda self: self._w.joint_info[self.index].name)
    kind = property(lambda self: self._w.joint_info[self.index].kind)

    @property
    def angle(self):
        """Angle (rad) or slide (m) of the first free DOF; spherical: the swing angle."""
        return float(self._w.joint_q[self.index, 0])

    @property
    def rate(self):
        """Rate (rad/s or m/s) of the first free DOF."""
        return float(self._w.joint_qd[self.index, 0])

    @property
    def q(self):
        return self._w.joint_q[self.index].copy()

    @property
    def qd(self):
        return self._w.joint_qd[self.index].copy()

    @property
    def error(self):
        """Largest constraint violation (m or rad) at the current poses."""
        return float(self._w.joint_err[self.index])

    def limit(self, dof=0):
        """(lo, hi) of a free DOF, or None when unlimited (spherical: dof 0 = swing cone)."""
        if not self._w.joint_limit_on[self.index, dof]:
            return None
        return float(self._w.joint_limit_lo[self.index, dof]), float(self._w.joint_limit_hi[self.index, dof])

    def set_limit(self, lo, hi=None, dof=0):
        """Set (lo, hi) of a free DOF, or None to free it. Spherical dof 0: hi = cone angle."""
        self._w._set_limit(self.index, dof, lo, hi)

    @property
    def friction(self):
        """Maximum friction torque (N·m) or force (N, prismatic) on the free DOFs (seed 001)."""
        return float(self._w.joint_friction[self.index])

    @friction.setter
    def friction(self, value):
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"joint {self.name!r}: friction must be finite and >= 0, got {value!r}")
        self._w.joint_friction[self.index] = value

    def _free_rows(self):
        w, j = self._w, self.index
        end = w.joint_row_start[j] + w.joint_row_count[j]
        return np.arange(end - impulse_free_dofs(w.joint_type[j]), end)

    @property
    def friction_torque(self):
        """Magnitude of the friction (or motor) torque/force applied in the last step (N·m or N)."""
        rows = self._free_rows()
        return float(np.linalg.norm(self._w.row_lambda[rows])) / self._w.substep_dt

    @property
    def friction_torque_vector(self):
        """Friction/motor torque (N·m) or force (N) on the child body, world frame."""
        rows, w = self._free_rows(), self._w
        if len(rows) == 0:
            return np.zeros(3)
        part = slice(6, 9) if w.joint_type[self.index] == PRISMATIC else slice(9, 12)  # child's share
        return (w.row_lambda[rows, None] * w.row_J[rows, part]).sum(axis=0) / w.substep_dt

    @property
    def sliding(self):
        """True when the friction limit binds (Coulomb sliding), False when sticking."""
        w, j = self._w, self.index
        pmax = w.joint_friction[j] * w.substep_dt
        if pmax <= 0.0 or w.joint_motor_mode[j] != impulse.MOTOR_OFF:
            return pmax <= 0.0 and w.joint_motor_mode[j] == impulse.MOTOR_OFF
        return float(np.linalg.norm(w.row_lambda[self._free_rows()])) >= pmax * (1.0 - 1e-9)

    def set_motor(self, mode="off", target=0.0, max_force=0.0, frequency=20.0, damping=1.0):
        """Motor on a 1-DOF joint (revolute, prismatic): mode "off", "velocity" (target
        rad/s or m/s) or "position" (target rad or m; a soft servo of `frequency` Hz and
        damping ratio `damping`), limited to `max_force` N·m or N. Impulse solver only."""
        w, j = self._w, self.index
        if mode not in impulse.MOTOR_MODES:
            raise ValueError(f"motor mode must be one of {', '.join(impulse.MOTOR_MODES)}, got {mode!r}")
        if mode != "off" and impulse_free_dofs(w.joint_type[j]) != 1:
            raise ValueError(f"joint {self.name!r}: motors are for revolute and prismatic joints")
        vals = [float(target), float(max_force), float(frequency), float(damping)]
        if not all(math.isfinite(v) for v in vals) or vals[1] < 0 or vals[2] <= 0 or vals[3] < 0:
            raise ValueError(f"joint {self.name!r}: motor needs finite target, max_force >= 0, "
                             "frequency > 0, damping >= 0")
        w.joint_motor_mode[j] = impulse.MOTOR_MODES[mode]
        w.joint_motor_target[j], w.joint_motor_max[j], w.joint_motor_freq[j], w.joint_motor_damping[j] = vals

    @property
    def motor(self):
        w, j = self._w, self.index
        mode = {v: k for k, v in impulse.MOTOR_MODES.items()}[int(w.joint_motor_mode[j])]
        return {"mode": mode, "target": float(w.joint_motor_target[j]), "max_force": float(w.joint_motor_max[j]),
                "frequency": float(w.joint_motor_freq[j]), "damping": float(w.joint_motor_damping[j])}

    @property
    def limits(self):
        return self.limit(0)

    @limits.setter
    def limits(self, value):
        if value is None:
            self.set_limit(None)
        else:
            self.set_limit(*value)


class World:
    """A physics world stepped at a fixed Δt. Body 0 is the static world ("world").

    gyroscopic: add the ω×Iω term (implicit, integrate.py). Off by default, as in
    seed 000's equations of motion (eq. 1: J ω̇ = τ); turn it on for fast-spinning
    asymmetric bodies.
    """

    def __init__(self, dt=0.003, gravity=(0.0, 0.0, -9.81), solver="penalty", gyroscopic=False,
                 penalty_preset="paper", max_speed=1.0e3, max_spin=1.0e4):
        self.dt = dt
        self.gravity = gravity
        self.gyroscopic = bool(gyroscopic)
        self.max_speed = float(max_speed)   # runaway bound (m/s)
        self.max_spin = float(max_spin)     # runaway bound (rad/s)
        self.time = 0.0
        self.step_count = 0
        self.stats = SolverStats()
        self.blown_up = None                # SimulationBlowUp once it happened
        self.penalty_params = np.zeros(7)
        self.penalty_preset = penalty_preset
        self.set_penalty_coefficients(**penalty.PAPER_DEFAULTS, **penalty.CRITICAL_DEFAULTS)
        self.impulse_params = np.zeros(impulse.N_PARAMS)
        self.impulse_stats = np.zeros(6)
        self.set_impulse_settings(iterations=50, epsilon=1e-9, time_cap_ms=0.0, warm_start=True,
                                  stabilization="split", erp=0.2, substeps=1, position_iterations=4)
        self._solver = None
        self.solver = solver
        self._alloc_loads()
        self.body_info, self.joint_info = [], []
        self._body_index, self._joint_index = {}, {}
        self._alloc_bodies(0)
        self._alloc_joints(0)
        self._add_body_arrays("world", Plane(), (0.5, 0.5, 0.5), math.inf, np.zeros(3),
                              np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), np.zeros(3), True, None)
        self._initial_state = None
        self.ropes = {}                     # name → physics.rope.Rope, stepped with the bodies
        self._rope_color = {}
        self._grab = None                   # the mouse spring (see grab())
        self._events = []                   # (time, joint index, mode, target), sorted by time
        self._next_event = 0
        self._zero3 = np.zeros(3)
        self._zero_force = np.zeros((0, 3))
        self._no_loads = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)),
                          np.zeros(0, np.int64), np.zeros((0, 2)))

    # ------------------------------------------------------------------ settings
    @property
    def dt(self):
        return self._dt

    @dt.setter
    def dt(self, value):
        value = float(value)
        if not (math.isfinite(value) and 1e-6 <= value <= 0.1):
            raise ValueError(f"dt must be between 1e-6 and 0.1 s, got {value!r}")
        self._dt = value

    @property
    def gravity(self):
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, value):
        self._gravity = _vec3(value, "gravity")

    @property
    def solver(self):
        return self._solver

    @solver.setter
    def solver(self, name):
        if name not in SOLVERS:
            raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {name!r}")
        if name != self._solver and hasattr(self, "row_lambda"):
            self.row_lambda[:] = 0.0     # impulses of another solver mean nothing here
        self._solver = name

    def set_impulse_settings(self, iterations=None, epsilon=None, time_cap_ms=None, warm_start=None,
                             stabilization=None, erp=None, substeps=None, position_iterations=None, method=None):
        """Impulse solver: maximum iterations, ε (N·s: stop when every |Δp| < ε), the
        wall-clock cap per step (ms, 0 = none), warm starting, drift stabilization
        ("split" impulses, "baumgarte" or "none") with its ERP (0-1), substeps per Δt and
        the iterations of the split-impulse position pass; `method` for the equality rows
        of joint trees: "auto" (direct O(N) solve when the iteration budget could not
        converge on the tree's depth), "direct" or "iterative" (seed 001 as written)."""
        p = self.impulse_params
        checks = (
            (impulse.P_ITERATIONS, iterations, lambda v: 1 <= v <= 100000 and v == int(v), "an integer 1-100000"),
            (impulse.P_EPSILON, epsilon, lambda v: 0.0 <= v < math.inf, "finite and >= 0"),
            (impulse.P_TIME_CAP_MS, time_cap_ms, lambda v: 0.0 <= v < math.inf, "finite and >= 0 (0 = no cap)"),
            (impulse.P_ERP, erp, lambda v: 0.0 <= v <= 1.0, "between 0 and 1"),
            (impulse.P_SUBSTEPS, substeps, lambda v: 1 <= v <= 1000 and v == int(v), "an integer 1-1000"),
            (impulse.P_POSITION_ITERATIONS, position_iterations, lambda v: 0 <= v <= 100000 and v == int(v),
             "an integer 0-100000"),
        )
        names = {impulse.P_ITERATIONS: "iterations", impulse.P_EPSILON: "epsilon",
                 impulse.P_TIME_CAP_MS: "time_cap_ms", impulse.P_ERP: "erp", impulse.P_SUBSTEPS: "substeps",
                 impulse.P_POSITION_ITERATIONS: "position_iterations"}
        for i, v, ok, what in checks:
            if v is None:
                continue
            v = float(v)
            if not (math.isfinite(v) or i == impulse.P_EPSILON) or not ok(v):
                raise ValueError(f"solver {names[i]} must be {what}, got {v!r}")
            p[i] = v
        if warm_start is not None:
            p[impulse.P_WARM_START] = 1.0 if warm_start else 0.0
        if stabilization is not None:
            if stabilization not in impulse.STABILIZATIONS:
                raise ValueError(f"stabilization must be one of {', '.join(impulse.STABILIZATIONS)}, "
                                 f"got {stabilization!r}")
            p[impulse.P_STABILIZATION] = impulse.STABILIZATIONS[stabilization]
        if method is not None:
            if method not in impulse.METHODS:
                raise ValueError(f"solver method must be one of {', '.join(impulse.METHODS)}, got {method!r}")
            p[impulse.P_METHOD] = impulse.METHODS[method]

    @property
    def impulse_settings(self):
        p = self.impulse_params
        stab = {v: k for k, v in impulse.STABILIZATIONS.items()}[int(p[impulse.P_STABILIZATION])]
        return {"iterations": int(p[impulse.P_ITERATIONS]), "epsilon": float(p[impulse.P_EPSILON]),
                "time_cap_ms": float(p[impulse.P_TIME_CAP_MS]), "warm_start": bool(p[impulse.P_WARM_START]),
                "stabilization": stab, "erp": float(p[impulse.P_ERP]), "substeps": int(p[impulse.P_SUBSTEPS]),
                "position_iterations": int(p[impulse.P_POSITION_ITERATIONS]),
                "method": {v: k for k, v in impulse.METHODS.items()}[int(p[impulse.P_METHOD])]}

    @property
    def substep_dt(self):
        """The impulse solver's substep h = Δt/substeps (s); Δt for penalty."""
        return self.dt / (self.impulse_params[impulse.P_SUBSTEPS] if self._solver == "impulse" else 1.0)

    @property
    def penalty_preset(self):
        return "paper" if self.penalty_params[0] == penalty.PAPER else "critical"

    @penalty_preset.setter
    def penalty_preset(self, name):
        if name not in penalty.PRESETS:
            raise ValueError(f"penalty preset must be one of {', '.join(penalty.PRESETS)}, got {name!r}")
        self.penalty_params[0] = penalty.PRESETS[name]

    def set_penalty_coefficients(self, alpha_lin=None, beta_lin=None, alpha_rot=None, beta_rot=None,
                                 kappa=None, zeta=None):
        """α*, β* of the paper preset (1/s², 1/s) and κ, ζ of the critical preset."""
        for i, v in ((1, alpha_lin), (2, beta_lin), (3, alpha_rot), (4, beta_rot), (5, kappa), (6, zeta)):
            if v is not None:
                v = float(v)
                if not (math.isfinite(v) and v >= 0.0):
                    raise ValueError(f"penalty coefficient must be finite and >= 0, got {v!r}")
                self.penalty_params[i] = v

    # ------------------------------------------------------------------ building
    def _alloc_bodies(self, n):
        self.body_pos = np.zeros((n, 3))
        self.body_quat = np.zeros((n, 4))
        self.body_vel = np.zeros((n, 3))
        self.body_omega = np.zeros((n, 3))
        self.body_inv_mass = np.zeros(n)
        self.body_inertia = np.zeros((n, 3))
        self.body_inv_inertia = np.zeros((n, 3))
        self.body_force = np.zeros((n, 3))
        self.body_torque = np.zeros((n, 3))
        self._force_acc = np.zeros((n, 3))
        self._torque_acc = np.zeros((n, 3))
        self._body_pvel = np.zeros((n, 3))
        self._body_pomega = np.zeros((n, 3))
        self._body_inv_inertia_world = np.zeros((n, 9))
        self.body_row_ptr = np.zeros(n + 1, np.int64)   # CSR: rows touching each body
        self.body_row_idx = np.zeros((0, 2), np.int64)   # (row, side 0=a / 1=b)

    def _alloc_joints(self, n, nrows=0):
        self.joint_type = np.zeros(n, np.int64)
        self.joint_body = np.zeros((n, 2), np.int64)
        self.joint_anchor_a = np.zeros((n, 3))
        self.joint_anchor_b = np.zeros((n, 3))
        self.joint_frame_a = np.zeros((n, 4))
        self.joint_frame_b = np.zeros((n, 4))
        self.joint_limit_lo = np.zeros((n, 3))
        self.joint_limit_hi = np.zeros((n, 3))
        self.joint_limit_on = np.zeros((n, 3), np.int64)
        self.joint_row_start = np.zeros(n, np.int64)
        self.joint_row_count = np.zeros(n, np.int64)
        self.joint_q = np.zeros((n, 3))
        self.joint_qd = np.zeros((n, 3))
        self.joint_err = np.zeros(n)
        self.joint_friction = np.zeros(n)
        self.joint_motor_mode = np.zeros(n, np.int64)
        self.joint_motor_target = np.zeros(n)
        self.joint_motor_max = np.zeros(n)
        self.joint_motor_freq = np.full(n, 20.0)
        self.joint_motor_damping = np.ones(n)
        self.row_joint = np.zeros(nrows, np.int64)
        self.row_kind = np.zeros(nrows, np.int64)
        self.row_rot = np.zeros(nrows, np.int64)
        self._row_minv_jt = np.zeros((nrows, 12))
        self.row_lambda = np.zeros(nrows)
        self._row_lambda_pos = np.zeros(nrows)
        self._row_mass = np.zeros(nrows)
        self._row_bound = np.zeros(nrows)
        self.row_J = np.zeros((nrows, 12))
        self.row_C = np.zeros(nrows)
        self.row_active = np.zeros(nrows, np.int64)

    def _grow(self, prefix, extra_rows=None):
        """Append one zero entry to every array named prefix_* (builder only, not hot)."""
        for name, arr in list(vars(self).items()):
            if not isinstance(arr, np.ndarray) or name in ("body_row_ptr", "body_row_idx"):
                continue
            if name.startswith(prefix) or (prefix == "body_" and name in ("_force_acc", "_torque_acc", "_body_pvel", "_body_pomega",
                                                      "_body_inv_inertia_world")):
                pad = np.zeros((1,) + arr.shape[1:], arr.dtype)
                setattr(self, name, np.ascontiguousarray(np.concatenate([arr, pad])))
        if extra_rows:
            for name in ("row_joint", "row_kind", "row_rot", "_row_minv_jt", "_row_bound", "row_lambda", "_row_lambda_pos",
                         "_row_mass", "row_J", "row_C", "row_active"):
                arr = getattr(self, name)
                pad = np.zeros((extra_rows,) + arr.shape[1:], arr.dtype)
                setattr(self, name, np.ascontiguousarray(np.concatenate([arr, pad])))

    def _add_body_arrays(self, name, shape, color, mass, pos, quat, vel, omega, static, visual_mesh):
        i = len(self.body_info)
        self._grow("body_")
        self.body_pos[i] = pos
        self.body_quat[i] = quat / np.linalg.norm(quat)
        self.body_vel[i] = vel
        self.body_omega[i] = omega
        if static:
            self.body_inertia[i] = np.inf
        else:
            inertia = shape.principal_inertia(mass)
            self.body_inv_mass[i] = 1.0 / mass
            self.body_inertia[i] = inertia
            self.body_inv_inertia[i] = 1.0 / inertia
        self.body_info.append(BodyInfo(name, shape, tuple(color), mass if not static else math.inf, visual_mesh))
        self._body_index[name] = i
        self._index_body_rows()
        return i

    def add_body(self, name, shape, mass=None, density=None, position=(0, 0, 0),
                 orientation=(0, 0, 0, 1), velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                 static=False, color=(0.7, 0.7, 0.7), visual_mesh=None):
        """Add a rigid body. Give `mass` (kg) or `density` (kg/m³), unless `static`.
        Inertia is the exact tensor of the shape about its centre (shapes.py)."""
        if not isinstance(name, str) or not name or name in self._body_index:
            raise ValueError(f"body name must be a new non-empty string, got {name!r}")
        if shape.kind == "plane" and not static:
            raise ValueError(f"body {name!r}: a plane can only be static")
        if not static:
            if (mass is None) == (density is None):
                raise ValueError(f"body {name!r}: give exactly one of mass and density")
            if mass is None:
                mass = float(density) * shape.volume()
            mass = float(mass)
            if not (math.isfinite(mass) and mass > 0.0):
                raise ValueError(f"body {name!r}: mass must be positive and finite, got {mass!r}")
        quat = np.asarray(orientation, float).reshape(-1)
        if quat.shape != (4,) or not np.all(np.isfinite(quat)) or np.linalg.norm(quat) == 0:
            raise ValueError(f"body {name!r}: orientation must be a quaternion (x, y, z, w)")
        i = self._add_body_arrays(name, shape, color, mass, _vec3(position, "position"), quat,
                                  _vec3(velocity, "velocity"), _vec3(angular_velocity, "angular_velocity"),
                                  static, visual_mesh)
        self._initial_state = None
        if static and getattr(shape, "kind", None) == "box":
            for rope in self.ropes.values():
                rope.add_box(self.body_pos[i], shape.half_extents, self.body_quat[i])
        return Body(self, i)

    def add_joint(self, name, kind, parent, child, anchor, axis=(1.0, 0.0, 0.0), axis2=None,
                  limits=None, limits2=None, swing=None, twist=None, friction=0.0):
        """Join `parent` (a body name or "world") and `child` at a world `anchor` (m).

        axis:   revolute hinge axis, prismatic slide axis, universal first axis (on the
                parent), spherical twist axis — world coordinates.
        axis2:  universal second axis (on the child), perpendicular to `axis`.
        limits: (lo, hi) of the first free DOF (rad, or m for prismatic); limits2 of the
                universal's second; swing: spherical cone half-angle (rad); twist: (lo, hi).
        """
        if not isinstance(name, str) or not name or name in self._joint_index:
            raise ValueError(f"joint name must be a new non-empty string, got {name!r}")
        if kind not in JOINT_TYPES:
            raise ValueError(f"joint {name!r}: type must be one of {', '.join(JOINT_TYPES)}, got {kind!r}")
        for role, b in (("parent", parent), ("child", child)):
            if b not in self._body_index:
                raise ValueError(f"joint {name!r}: {role} {b!r} is not a body")
        a, b = self._body_index[parent], self._body_index[child]
        if a == b:
            raise ValueError(f"joint {name!r}: parent and child are the same body")
        t = JOINT_TYPES[kind]
        anchor = _vec3(anchor, f"joint {name!r} anchor")
        axis = _vec3(axis, f"joint {name!r} axis")
        if np.linalg.norm(axis) < 1e-12:
            raise ValueError(f"joint {name!r}: axis must not be zero")
        if t == UNIVERSAL:
            if axis2 is None:
                raise ValueError(f"joint {name!r}: a universal joint needs axis2")
            axis2 = _vec3(axis2, f"joint {name!r} axis2")
            n0, n1 = axis / np.linalg.norm(axis), axis2 / np.linalg.norm(axis2)
            if abs(np.dot(n0, n1)) > 1e-6:
                raise ValueError(f"joint {name!r}: axis and axis2 must be perpendicular")
            frame = frame_from_axes(n0, n1)
        else:
            frame = frame_from_axes(axis)
        q_frame = q_from_matrix(frame)
        n_eq, n_lim, n_free = ROW_LAYOUT[t]
        nrows = n_eq + n_lim + n_free
        j = len(self.joint_info)
        r0 = self.row_C.shape[0]
        self._grow("joint_", extra_rows=nrows)
        self.joint_type[j] = t
        self.joint_body[j] = (a, b)
        for side, body in ((0, a), (1, b)):
            qc = q_conj(self.body_quat[body])
            local_anchor = q_rotate(qc, anchor - self.body_pos[body])
            local_frame = q_mul(qc, q_frame)
            if side == 0:
                self.joint_anchor_a[j], self.joint_frame_a[j] = local_anchor, local_frame
            else:
                self.joint_anchor_b[j], self.joint_frame_b[j] = local_anchor, local_frame
        self.joint_motor_freq[j] = 20.0
        self.joint_motor_damping[j] = 1.0
        self.joint_row_start[j] = r0
        self.joint_row_count[j] = nrows
        self.row_joint[r0:r0 + nrows] = j
        self.row_kind[r0:r0 + n_eq] = ROW_EQ
        self.row_kind[r0 + n_eq:r0 + n_eq + n_lim] = ROW_LIMIT
        self.row_kind[r0 + n_eq + n_lim:] = ROW_FREE
        self.row_rot[r0:r0 + nrows] = 1
        self.row_rot[r0:r0 + TRANSLATIONAL_EQ_ROWS[t]] = 0
        if t == PRISMATIC:
            self.row_rot[r0 + n_eq:] = 0
        self._index_body_rows()
        self.joint_info.append(JointInfo(name, kind, parent, child, tuple(anchor), tuple(axis),
                                         None if axis2 is None else tuple(axis2)))
        self._joint_index[name] = j
        view = Joint(self, j)
        view.friction = friction
        if t == SPHERICAL:
            if swing is not None:
                self._set_limit(j, 0, 0.0, swing)
            if twist is not None:
                self._set_limit(j, 1, *twist)
        else:
            if limits is not None:
                self._set_limit(j, 0, *limits)
            if limits2 is not None:
                if t != UNIVERSAL:
                    raise ValueError(f"joint {name!r}: limits2 is only for universal joints")
                self._set_limit(j, 1, *limits2)
        if (swing is not None or twist is not None) and t != SPHERICAL:
            raise ValueError(f"joint {name!r}: swing and twist limits are only for spherical joints")
        self._initial_state = None
        self._refresh_rows()
        return view

    def _index_body_rows(self):
        """body_row_ptr/body_row_idx: for each body, the (row, side) pairs of the
        equality and limit rows acting on it."""
        nb = len(self.body_pos)
        solid = np.flatnonzero(self.row_kind != ROW_FREE)
        rows = np.repeat(solid, 2)
        sides = np.tile(np.arange(2), len(solid))
        bodies = self.joint_body[self.row_joint[rows], sides] if len(rows) else np.zeros(0, np.int64)
        order = np.argsort(bodies, kind="stable")
        self.body_row_idx = np.ascontiguousarray(np.column_stack([rows[order], sides[order]]).astype(np.int64))
        self.body_row_ptr = np.zeros(nb + 1, np.int64)
        np.add.at(self.body_row_ptr, bodies + 1, 1)
        self.body_row_ptr = np.cumsum(self.body_row_ptr)

    def _alloc_loads(self):
        self.load_body = np.zeros(0, np.int64)
        self.load_force = np.zeros((0, 3))
        self.load_torque = np.zeros((0, 3))
        self.load_point = np.zeros((0, 3))
        self.load_at_point = np.zeros(0, np.int64)
        self.load_window = np.zeros((0, 2))

    def add_load(self, body, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0), point=None,
                 start=0.0, end=math.inf):
        """A scripted push: a constant world-frame force (N) and torque (N·m) on `body`
        while start ≤ t < end (s). With `point` (world coordinates now), the force acts
        at that point of the body (it moves with the body), adding r × F."""
        if body not in self._body_index or self._body_index[body] == 0:
            raise ValueError(f"load: {body!r} is not a body")
        i = self._body_index[body]
        force, torque = _vec3(force, "load force"), _vec3(torque, "load torque")
        start, end = float(start), float(end)
        if not (math.isfinite(start) and start < end):
            raise ValueError(f"load on {body!r}: needs a finite start < end, got ({start}, {end})")
        local = np.zeros(3)
        if point is not None:
            local = q_rotate(q_conj(self.body_quat[i]), _vec3(point, "load point") - self.body_pos[i])
        self.load_body = np.append(self.load_body, i)
        self.load_force = np.vstack([self.load_force, force])
        self.load_torque = np.vstack([self.load_torque, torque])
        self.load_point = np.vstack([self.load_point, local])
        self.load_at_point = np.append(self.load_at_point, int(point is not None))
        self.load_window = np.vstack([self.load_window, [start, end]])

    def _set_limit(self, j, dof, lo, hi):
        t = self.joint_type[j]
        n_dof = {REVOLUTE: 1, PRISMATIC: 1, UNIVERSAL: 2, SPHERICAL: 2}.get(t, 0)
        name = self.joint_info[j].name
        if dof >= n_dof:
            raise ValueError(f"joint {name!r} ({JOINT_TYPE_NAMES[t]}) has no limit #{dof}")
        if lo is None:
            self.joint_limit_on[j, dof] = 0
            return
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(f"joint {name!r}: limits need finite lo <= hi, got ({lo}, {hi})")
        if t == SPHERICAL and dof == 0 and not (0.0 < hi <= math.pi):
            raise ValueError(f"joint {name!r}: swing cone must be in (0, π] rad, got {hi}")
        self.joint_limit_lo[j, dof] = lo
        self.joint_limit_hi[j, dof] = hi
        self.joint_limit_on[j, dof] = 1
        self._refresh_rows()

    # ------------------------------------------------------------------ ropes
    def add_rope(self, name, rope, color=(0.85, 0.75, 0.45)):
        """Add a physics.rope.Rope (seed 002), stepped with the bodies every Δt; attach its
        ends with attach_rope. Returns the rope."""
        from .rope import Rope
        if not isinstance(name, str) or not name or name in self.ropes or name in self._body_index:
            raise ValueError(f"rope name {name!r} is empty or already used")
        if not isinstance(rope, Rope):
            raise ValueError("add_rope needs a physics.rope.Rope")
        self.ropes[name] = rope
        self._rope_color[name] = tuple(float(c) for c in color)
        for i, info in enumerate(self.body_info):   # the rope lies on static boxes (seed 002 §contact)
            if i > 0 and self.body_inv_mass[i] == 0.0 and getattr(info.shape, "kind", None) == "box":
                rope.add_box(self.body_pos[i], info.shape.half_extents, self.body_quat[i])
        self._initial_state = None
        return rope

    def attach_rope(self, name, node, body="world", point=None, clamp=False):
        """Pin rope node `node` (index, −1 = last) to the world or to a body at the world
        `point` (default: where the node is now), which then moves with the body; both
        feel the attachment. clamp=True also holds the end element's orientation."""
        rope = self.ropes[name]
        p = rope.positions[node].copy() if point is None else _vec3(point, "rope attachment point")
        if body == "world":
            handle = rope.attach_world(node, position=p, clamp=clamp)
        else:
            if not self.has_body(body):
                raise ValueError(f"rope {name!r}: no body named {body!r}")
            i = self._body_index[body]
            local = q_rotate(q_conj(self.body_quat[i]), p - self.body_pos[i])
            handle = rope.attach_body(node, i, local_point=local, body_pos=self.body_pos, body_quat=self.body_quat,
                                      clamp=clamp)
        self._initial_state = None
        return handle

    def rope_energy(self):
        """Kinetic + gravitational + elastic energy of the ropes (J)."""
        return float(sum(r.kinetic_energy() + r.potential_energy(self._gravity) + r.elastic_energy()
                         for r in self.ropes.values()))

    # ------------------------------------------------------------------ motor schedule
    def add_motor_event(self, joint, time, target, mode=None):
        """At simulated `time` (s) set the motor target of `joint` (and its mode if given):
        a piecewise-constant program, e.g. a robot that drives, turns and stops."""
        if not self.has_joint(joint):
            raise ValueError(f"motor event: no joint named {joint!r}")
        if mode is not None and mode not in impulse.MOTOR_MODES:
            raise ValueError(f"motor event: mode must be one of {', '.join(impulse.MOTOR_MODES)}, got {mode!r}")
        time, target = float(time), float(target)
        if not (math.isfinite(time) and time >= 0.0 and math.isfinite(target)):
            raise ValueError("motor event: time must be finite and >= 0, target finite")
        self._events.append((time, self._joint_index[joint], mode, target))
        self._events.sort(key=lambda e: e[0])
        self._next_event = sum(1 for e in self._events if e[0] < self.time - 1e-9)

    # ------------------------------------------------------------------ mouse spring
    GRAB_FREQUENCY = 2.0      # Hz: the spring's natural frequency on the grabbed body's mass
    GRAB_MAX_ACCEL = 30.0     # m/s²: the spring force is bounded by this times the mass

    def grab(self, body, point, target, frequency=None, max_accel=None):
        """Start dragging `body` at world `point` towards world `target` with a soft
        spring, applied every step with any solver: stiffness k = m ω², damping
        c = 2 m ω (critical for the body's mass m, ω = 2π·frequency), |F| ≤ m·max_accel.
        `body` may name a rope: its node nearest to `point` is pulled (Rope.grab_node,
        with k and the bound from the rope's mass)."""
        f = self.GRAB_FREQUENCY if frequency is None else float(frequency)
        a = self.GRAB_MAX_ACCEL if max_accel is None else float(max_accel)
        if not (math.isfinite(f) and f > 0 and math.isfinite(a) and a > 0):
            raise ValueError("grab: frequency and max_accel must be finite and > 0")
        point, target = _vec3(point, "grab point"), _vec3(target, "grab target")
        self.release_grab()
        if body in self.ropes:
            rope = self.ropes[body]
            node = int(np.argmin(np.linalg.norm(rope.positions - point, axis=1)))
            w = 2.0 * math.pi * f
            self._grab = {"rope": body, "node": node, "target": target, "k": rope.mass * w * w,
                          "max_force": rope.mass * a}
            self._apply_rope_grab()
            return
        if not self.has_body(body) or self._body_index[body] == 0:
            raise ValueError(f"grab: {body!r} is not a body or a rope")
        i = self._body_index[body]
        if self.body_inv_mass[i] == 0.0:
            raise ValueError(f"grab: {body!r} is static")
        local = q_rotate(q_conj(self.body_quat[i]), point - self.body_pos[i])
        self._grab = {"body": i, "local": local, "target": target,
                      "omega": 2.0 * math.pi * f, "max_accel": a, "force": np.zeros(3)}

    def _apply_rope_grab(self):
        g = self._grab
        self.ropes[g["rope"]].grab_node(g["node"], g["target"], stiffness=g["k"], max_force=g["max_force"])

    def move_grab(self, target):
        if self._grab is not None:
            self._grab["target"] = _vec3(target, "grab target")
            if "rope" in self._grab:
                self._apply_rope_grab()

    def release_grab(self):
        if self._grab is not None and "rope" in self._grab and self._grab["rope"] in self.ropes:
            self.ropes[self._grab["rope"]].release_node()
        self._grab = None

    @property
    def grab_info(self):
        """None, or the grabbed body's (or rope's) name, the grab point now, the target and
        the force (N)."""
        g = self._grab
        if g is None:
            return None
        if "rope" in g:
            rope = self.ropes[g["rope"]]
            return {"body": g["rope"], "node": g["node"], "point": rope.positions[g["node"]].copy(),
                    "target": g["target"].copy(), "force": rope.grab_force()}
        i = g["body"]
        return {"body": self.body_info[i].name, "point": self.body_pos[i] + q_rotate(self.body_quat[i], g["local"]),
                "target": g["target"].copy(), "force": g["force"].copy()}

    def _add_grab_force(self):
        g = self._grab
        i = g["body"]
        m = 1.0 / self.body_inv_mass[i]
        r = q_rotate(self.body_quat[i], g["local"])
        p = self.body_pos[i] + r
        v = self.body_vel[i] + np.cross(self.body_omega[i], r)
        w = g["omega"]
        f = m * w * w * (g["target"] - p) - 2.0 * m * w * v
        fmax = m * g["max_accel"]
        norm = float(np.linalg.norm(f))
        if norm > fmax:
            f *= fmax / norm
        g["force"] = f
        self._force_acc[i] += f
        self._torque_acc[i] += np.cross(r, f)

    # ------------------------------------------------------------------ access
    def has_body(self, name):
        """True if a body (or "world") of that name exists."""
        return name in self._body_index

    def has_joint(self, name):
        return name in self._joint_index

    def body(self, name):
        if name not in self._body_index:
            raise KeyError(f"no body named {name!r}")
        return Body(self, self._body_index[name])

    def joint(self, name):
        if name not in self._joint_index:
            raise KeyError(f"no joint named {name!r}")
        return Joint(self, self._joint_index[name])

    @property
    def bodies(self):
        """Every body but the world, in creation order."""
        return [Body(self, i) for i in range(1, len(self.body_info))]

    @property
    def joints(self):
        return [Joint(self, j) for j in range(len(self.joint_info))]

    def max_constraint_error(self):
        """Largest joint constraint violation (m or rad) at the current poses."""
        return float(self.joint_err.max()) if self.joint_err.size else 0.0

    def energy(self):
        """Kinetic + gravitational potential energy of the dynamic bodies, plus the ropes'
        energy (rope_energy) (J)."""
        dyn = self.body_inv_mass > 0.0
        m = 1.0 / self.body_inv_mass[dyn]
        ke = 0.5 * np.sum(m * np.sum(self.body_vel[dyn] ** 2, axis=1))
        q = self.body_quat[dyn]
        w = self.body_omega[dyn]
        # body-frame angular velocity: rotate by q⁻¹
        qv, qw = -q[:, :3], q[:, 3:4]
        t = 2.0 * np.cross(qv, w)
        wb = w + qw * t + np.cross(qv, t)
        ke += 0.5 * np.sum(self.body_inertia[dyn] * wb ** 2)
        pe = -np.sum(m * (self.body_pos[dyn] @ self._gravity))
        return float(ke + pe) + (self.rope_energy() if self.ropes else 0.0)

    # ------------------------------------------------------------------ state
    def _refresh_rows(self):
        """Recompute rows and readouts from the current state (after any edit)."""
        compute_joint_rows(self.body_pos, self.body_quat, self.joint_type, self.joint_body,
                           self.joint_anchor_a, self.joint_anchor_b, self.joint_frame_a,
                           self.joint_frame_b, self.joint_limit_lo, self.joint_limit_hi,
                           self.joint_limit_on, self.joint_row_start, self.joint_q, self.joint_err,
                           self.row_J, self.row_C, self.row_active, self._free_rows_used(), True)
        compute_joint_rates(self.joint_type, self.joint_body, self.joint_row_start, self.joint_row_count,
                            self.row_J, self.body_vel, self.body_omega, self.joint_qd)

    def _free_rows_used(self):
        """Per joint, 1 if the solver uses its free rows (impulse friction or motor)."""
        if self._solver != "impulse":
            return np.zeros(len(self.joint_info), np.int64)
        return ((self.joint_friction > 0.0) | (self.joint_motor_mode != 0)).astype(np.int64)

    def save_state(self):
        """A cheap copy of everything time changes."""
        s = {f: getattr(self, f).copy() for f in STATE_BODY_FIELDS + STATE_JOINT_FIELDS}
        s["time"], s["step_count"] = self.time, self.step_count
        s["motors"] = (self.joint_motor_mode.copy(), self.joint_motor_target.copy())
        s["ropes"] = {name: rope.save_state() for name, rope in self.ropes.items()}
        return s

    def restore_state(self, s):
        for f in STATE_BODY_FIELDS + STATE_JOINT_FIELDS:
            getattr(self, f)[:] = s[f]
        self.time, self.step_count = s["time"], s["step_count"]
        if "motors" in s and s["motors"][0].shape == self.joint_motor_mode.shape:
            # joints driven by the motor program start it over; motors edited by hand stay
            for j in {e[1] for e in self._events}:
                self.joint_motor_mode[j], self.joint_motor_target[j] = s["motors"][0][j], s["motors"][1][j]
        for name, saved in s.get("ropes", {}).items():
            if name in self.ropes:
                try:
                    self.ropes[name].restore_state(saved)
                except ValueError:      # the rope was re-discretized since: keep its shape
                    pass
        self._next_event = sum(1 for e in self._events if e[0] < self.time - 1e-9)
        self.blown_up = None
        self.release_grab()
        self._refresh_rows()

    def reset(self):
        """Back to the state the world had before its first step."""
        if self._initial_state is not None:
            self.restore_state(self._initial_state)

    # ------------------------------------------------------------------ stepping
    def step(self):
        """Advance exactly one fixed Δt."""
        self.advance_steps(1)

    def advance(self, duration):
        """Advance by `duration` simulated seconds (rounded to whole steps); returns steps."""
        n = int(round(float(duration) / self.dt))
        self.advance_steps(n)
        return n

    def advance_steps(self, n):
        """Advance n fixed steps. Raises SimulationBlowUp on a blow-up.

        Bodies and joints alone run in one kernel call (split at scheduled motor events);
        with ropes or a mouse grab each step is a short sequence of kernel calls."""
        if self.blown_up is not None:
            raise self.blown_up
        if self._initial_state is None:
            self._initial_state = self.save_state()
        while n > 0:
            self._fire_events()
            chunk = n
            if self._next_event < len(self._events):
                ahead = int(math.ceil((self._events[self._next_event][0] - self.time) / self.dt - 1e-9))
                chunk = max(1, min(n, ahead))
            if self.ropes or self._grab is not None:
                for _ in range(chunk):
                    self._coupled_step()
            else:
                self._run_kernel(chunk)
            n -= chunk

    def _fire_events(self):
        """Apply every scheduled motor event whose time has come."""
        while self._next_event < len(self._events) and self._events[self._next_event][0] <= self.time + 1e-9:
            _, j, mode, target = self._events[self._next_event]
            if mode is not None:
                self.joint_motor_mode[j] = impulse.MOTOR_MODES[mode]
            self.joint_motor_target[j] = target
            self._next_event += 1

    def _coupled_step(self):
        """One Δt with ropes and/or the mouse spring.

        Order (seed 002, rope.py): external forces, gravity and the grab spring go into
        the body velocities first; each rope then steps and applies its attachment
        impulses to the bodies; the joint solver's step follows with nothing left to add
        (no gravity, no forces), integrating positions from the coupled velocities."""
        h = self.dt
        gather_forces(self.time, self.body_pos, self.body_quat, self.body_force, self.body_torque,
                      self.load_body, self.load_force, self.load_torque, self.load_point, self.load_at_point,
                      self.load_window, self._force_acc, self._torque_acc)
        if self._grab is not None and "body" in self._grab:
            self._add_grab_force()
        integrate_velocities(self.body_quat, self.body_vel, self.body_omega, self.body_inv_mass, self.body_inertia,
                             self.body_inv_inertia, self._force_acc, self._torque_acc, self._gravity, False, h)
        for name, rope in self.ropes.items():
            rope.step(h, self._gravity, self.body_pos, self.body_quat, self.body_vel, self.body_omega,
                      self.body_inv_mass, self.body_inv_inertia)
            if not np.isfinite(rope.positions).all():
                self.blown_up = SimulationBlowUp(self.time + h, f"rope {name!r} became NaN")
                raise self.blown_up
        self._run_kernel(1, coupled=True)

    def _run_kernel(self, n, coupled=False):
        """n steps of the active solver's kernel; `coupled`: velocities already hold this
        step's gravity and forces (see _coupled_step)."""
        t0 = _time.perf_counter()
        if self._zero_force.shape != self.body_force.shape:
            self._zero_force = np.zeros_like(self.body_force)
        if coupled:
            gravity, force, torque = self._zero3, self._zero_force, self._zero_force
            loads = self._no_loads
        else:
            gravity, force, torque = self._gravity, self.body_force, self.body_torque
            loads = (self.load_body, self.load_force, self.load_torque, self.load_point, self.load_at_point,
                     self.load_window)
        if self._solver == "penalty":
            done = penalty.penalty_run(
                n, self.dt, self.time, self.penalty_params, gravity, self.gyroscopic, self.max_speed,
                self.max_spin, self.body_pos, self.body_quat, self.body_vel, self.body_omega, self.body_inv_mass,
                self.body_inertia, self.body_inv_inertia, force, torque,
                self._force_acc, self._torque_acc, *loads,
                self.joint_type, self.joint_body, self.joint_anchor_a, self.joint_anchor_b,
                self.joint_frame_a, self.joint_frame_b, self.joint_limit_lo, self.joint_limit_hi,
                self.joint_limit_on, self.joint_row_start, self.joint_row_count,
                self.joint_q, self.joint_qd, self.joint_err, self._free_rows_used(),
                self.row_joint, self.row_kind, self.row_rot, self.row_J, self.row_C, self.row_active,
                self.body_row_ptr, self.body_row_idx, self._row_minv_jt, self._row_bound)
            ms = (_time.perf_counter() - t0) * 1e3 / max(n, 1)
            self.stats = SolverStats(0, 0.0, ms, False, 0, done)
        else:
            self.impulse_params[impulse.P_TICKS_PER_MS] = ticks_per_ms()
            done = impulse.impulse_run(
                n, self.dt, self.time, self.impulse_params, self.impulse_stats, gravity, self.gyroscopic,
                self.max_speed, self.max_spin, self.body_pos, self.body_quat, self.body_vel, self.body_omega,
                self.body_inv_mass, self.body_inertia, self.body_inv_inertia, force, torque,
                self._force_acc, self._torque_acc, self._body_pvel, self._body_pomega,
                self._body_inv_inertia_world, *loads,
                self.joint_type, self.joint_body, self.joint_anchor_a, self.joint_anchor_b,
                self.joint_frame_a, self.joint_frame_b, self.joint_limit_lo, self.joint_limit_hi,
                self.joint_limit_on, self.joint_row_start, self.joint_row_count,
                self.joint_q, self.joint_qd, self.joint_err, self.joint_friction, self.joint_motor_mode,
                self.joint_motor_target, self.joint_motor_max, self.joint_motor_freq, self.joint_motor_damping,
                self._free_rows_used(), self.row_joint, self.row_kind, self.row_J, self.row_C, self.row_active, self.row_lambda,
                self._row_lambda_pos, self._row_minv_jt, self._row_mass)
            st = self.impulse_stats
            tpm = self.impulse_params[impulse.P_TICKS_PER_MS]
            self.stats = SolverStats(int(st[impulse.S_ITERATIONS]), float(st[impulse.S_RESIDUAL]),
                                     float(st[impulse.S_SOLVE_TICKS] / tpm) if tpm > 0 else 0.0,
                                     bool(st[impulse.S_CAPPED]), int(st[impulse.S_CAPPED_STEPS]), done)
        self.step_count += done
        self.time = self.step_count * self.dt
        if done < n:
            self.step_count += 1
            self.time = self.step_count * self.dt
            self.blown_up = SimulationBlowUp(self.time, "a velocity became NaN or exceeded "
                                             f"{self.max_speed:g} m/s / {self.max_spin:g} rad/s")
            raise self.blown_up

    # ------------------------------------------------------------------ for viewers
    def snapshot(self):
        """Everything a viewer draws this frame, copied (never a view into solver state).

        bodies: names, shapes, colours, visual_meshes, position (n,3), orientation (n,4)
        — index 0 is the static world. joints: names, kinds, anchor (m,3) world anchor
        on the parent, frame (m,3,3) world joint frame on the parent (columns n0 n1 n2;
        n0 = hinge/slide/twist axis), child_frame (m,3,3), q (m,3), error (m,), bodies (m,2),
        limit_on/lo/hi (m,3) as in Joint.limit. ropes: per rope name, radius, color,
        positions (N,3) and frames (N−1,4) (element quaternions, local z along the rope).
        grab: grab_info (the mouse spring) or None.
        """
        from .quat import q_mul as _qm, q_rotate as _qr, q_to_matrix as _qmat
        m = len(self.joint_info)
        anchor = np.zeros((m, 3))
        frame = np.zeros((m, 3, 3))
        child_frame = np.zeros((m, 3, 3))
        for j in range(m):  # a few dozen joints per frame, outside the physics step
            a, b = self.joint_body[j]
            anchor[j] = self.body_pos[a] + _qr(self.body_quat[a], self.joint_anchor_a[j])
            frame[j] = _qmat(_qm(self.body_quat[a], self.joint_frame_a[j]))
            child_frame[j] = _qmat(_qm(self.body_quat[b], self.joint_frame_b[j]))
        return {
            "time": self.time,
            "names": [b.name for b in self.body_info], "shapes": [b.shape for b in self.body_info],
            "colors": [b.color for b in self.body_info], "visual_meshes": [b.visual_mesh for b in self.body_info],
            "position": self.body_pos.copy(), "orientation": self.body_quat.copy(),
            "joint_names": [j.name for j in self.joint_info], "joint_kinds": [j.kind for j in self.joint_info],
            "joint_anchor": anchor, "joint_frame": frame, "joint_child_frame": child_frame,
            "joint_q": self.joint_q.copy(), "joint_error": self.joint_err.copy(),
            "joint_bodies": self.joint_body.copy(),
            "joint_limit_on": self.joint_limit_on.copy(), "joint_limit_lo": self.joint_limit_lo.copy(),
            "joint_limit_hi": self.joint_limit_hi.copy(),
            "ropes": [{"name": name, "radius": rope.radius, "color": self._rope_color[name],
                       "positions": rope.positions.copy(), "frames": rope.frames.copy()}
                      for name, rope in self.ropes.items()],
            "grab": self.grab_info,
        }
