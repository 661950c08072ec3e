"""The world: a physics model, its state and its control, stepped at a fixed Δt.

`World` is the public API (names fixed: README): a builder (add_body, add_joint,
add_load, add_rope …), named views (`world.body("door")`, `world.joint("hinge")`),
settings checked against one schema (physics/settings.py and each solver family's
SETTINGS), and the step. Its arrays live in `world.model`, `world.state`,
`world.control` and `world.work` (physics/model.py says which is which); body 0 is the
static world. The active solver family is one object of physics/solvers (FAMILIES);
every family keeps its settings, so switching keeps both and keeps the state.
"""
import contextlib
from dataclasses import dataclass, field
import hashlib
import math
from types import MappingProxyType
import signal
import threading
import time

import numpy as np

from . import bounds
from .joint_rows import MOTOR_MODES, MOTOR_OFF, ROW_EQ, ROW_FREE, ROW_LIMIT, compute_joint_rates, compute_joint_rows
from .joint_types import BY_CODE, JOINT_TYPES, SPHERICAL, UNIVERSAL
from .integrate import body_energy, gather_forces, integrate_velocities
from .contacts import Contacts
from .model import Control, Model, State, Work, bundles, coupling_bundle
from .runaway import RunawayWatch
from .quat import frame_from_axes, q_conj, q_from_matrix, q_mul, q_rotate, q_to_matrix, qmul, rotate
from .settings import DT, GYROSCOPIC
from .shapes import Plane, check_shape
from .solvers import DEFAULT_FAMILY, FAMILIES



class SimulationBlowUp(RuntimeError):
    """The state became NaN or ran away; `time` is the simulated time (s) it happened."""

    def __init__(self, time, reason):
        super().__init__(f"simulation blew up at t = {time:.4f} s: {reason}")
        self.time = time
        self.reason = reason


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


def _contact_property(name, friction, restitution):
    """(μ, e) checked: μ ≥ 0 finite, 0 ≤ e ≤ 1."""
    out = []
    for what, value, hi in (("friction", friction, 1e3), ("restitution", restitution, 1.0)):
        try:
            v = float(value)
        except (TypeError, ValueError):
            v = math.nan
        if isinstance(value, (bool, str)) or not (0.0 <= v <= hi):
            raise ValueError(f"body {name!r}: {what} must be a number between 0 and {hi:g}, got {value!r}")
        out.append(v)
    return out


def _vec3(value, what):
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be 3 finite numbers, got {value!r}")
    return arr


def _vecs3(value, k, what, names=None):
    """One 3-vector for all k entries, or k of them: a checked (k, 3) array, a broadcast
    view for one (_vec3's error; `what` may name the entry as "{name}", from `names`)."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 2 and arr.shape == (k, 3) and k > 1:
        bad = ~np.isfinite(arr).all(axis=1)
        if bad.any():
            j = int(np.argmax(bad))
            raise ValueError(f"{what.format(name=names[j] if names else '')} must be 3 finite numbers, "
                             f"got {value[j]!r}")
        return arr
    return np.broadcast_to(_vec3(value, what.format(name=names[0] if names else '')), (k, 3))


def _per_body(value, k, names, what):
    """One number for all k bodies, or k numbers: a (k,) float array."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or isinstance(value, (bool, str, bytes)):
        raise ValueError(f"body {names[0]!r}: {what} must be a number, got {value!r}")
    if arr.ndim == 0:
        return np.full(k, float(arr))
    if arr.shape != (k,):
        raise ValueError(f"body {names[0]!r}: {what} must be one number or {k}, got {value!r}")
    return arr


def _check_each(values, names, lo, hi, message):
    """A ValueError naming the first of `names` whose value is outside lo … hi."""
    bad = ~((values >= lo) & (values <= hi))
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"body {names[j]!r}: {message(float(values[j]))}")


def _unit_quats(value, k, names):
    """One quaternion (x, y, z, w) for all k bodies, or k of them, each divided by its norm
    (np.linalg.norm of the 4-vector, as for one body, so both round alike): (k, 4)."""
    arr = np.asarray(value, dtype=float)
    rows = [arr] if arr.reshape(-1).shape == (4,) else (list(arr) if arr.shape == (k, 4) else [arr])
    out = []
    for j, q in enumerate(rows):
        q = q.reshape(-1)
        if q.shape != (4,) or not np.all(np.isfinite(q)) or np.linalg.norm(q) == 0:
            raise ValueError(f"body {names[j]!r}: orientation must be a quaternion (x, y, z, w)")
        out.append(q / np.linalg.norm(q))
    return np.broadcast_to(out[0], (k, 4)) if len(out) == 1 else np.array(out)


class Body:
    """A named view of one body's state and model (world frame, SI units)."""

    def __init__(self, world, index):
        self._w, self.index = world, index

    name = property(lambda self: self._w.model.body_info[self.index].name)
    shape = property(lambda self: self._w.model.body_info[self.index].shape)
    mass = property(lambda self: self._w.model.body_info[self.index].mass)

    @property
    def inertia(self):
        """Principal moments of inertia (kg·m²) about the body's axes."""
        return self._w.model.bodies.inertia[self.index].copy()

    @inertia.setter
    def inertia(self, value):
        """Replace the shape's moments by a model file's own (physics/io/urdf.py): three
        positive finite numbers about the body's axes, which must be the tensor's principal axes."""
        try:
            arr = np.asarray(value, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            arr = np.zeros(0)
        if self.is_static or arr.shape != (3,) or not np.all(np.isfinite(arr) & (arr > 0.0)):
            raise ValueError(f"body {self.name!r}: inertia must be 3 positive finite principal moments (kg·m²) "
                             f"of a moving body, got {value!r}")
        if not np.all((arr >= bounds.INERTIA_MIN) & (arr <= bounds.INERTIA_MAX)):
            raise ValueError(f"body {self.name!r}: inertia moments must be between {bounds.INERTIA_MIN:g} and "
                             f"{bounds.INERTIA_MAX:g} kg·m² (physics/bounds.py), got {value!r}")
        mb = self._w.model.bodies
        mb.inertia[self.index], mb.inv_inertia[self.index] = arr, 1.0 / arr
        self._w._model_changed()
    is_static = property(lambda self: self._w.model.bodies.inv_mass[self.index] == 0.0)

    def _table(self, field):
        return self._w.control.bodies if field in ("force", "torque") else self._w.state.bodies

    def _contact(self, field):
        return float(getattr(self._w.model.bodies, field)[self.index])

    def _set_contact(self, field, value):
        """Set friction or restitution, checked as add_body checks them."""
        mu, e = _contact_property(self.name, *((value, 0.0) if field == "friction" else (0.0, value)))
        getattr(self._w.model.bodies, field)[self.index] = mu if field == "friction" else e
        self._w.contact_model.edits += 1

    friction = property(lambda s: s._contact("friction"), lambda s, v: s._set_contact("friction", v),
                        doc="Coulomb friction coefficient μ of its contacts (a pair takes √(μa μb)).")
    restitution = property(lambda s: s._contact("restitution"), lambda s, v: s._set_contact("restitution", v),
                           doc="Restitution e of its contacts (a pair takes max(ea, eb)).")

    @property
    def collide(self):
        """Whether it touches other bodies and the ground (physics/contacts.py)."""
        return bool(self._w.model.bodies.collide[self.index])

    @collide.setter
    def collide(self, value):
        if isinstance(value, np.bool_):
            value = bool(value)
        if not isinstance(value, bool):
            raise ValueError(f"body {self.name!r}: collide must be True or False, got {value!r}")
        if self.index == 0:
            raise ValueError("the world (body 0) never collides")
        self._w.model.bodies.collide[self.index] = int(value)
        self._w.contact_model.edits += 1

    def _get(self, field):
        return getattr(self._table(field), field)[self.index].copy()

    def _set(self, field, value, n=3):
        arr = np.asarray(value, dtype=float).reshape(-1)
        if arr.shape != (n,) or not np.all(np.isfinite(arr)):
            raise ValueError(f"{field} needs {n} finite numbers, got {value!r}")
        if n == 4:
            arr = arr / np.linalg.norm(arr)
        getattr(self._table(field), field)[self.index] = arr
        self._w._watch = None               # an edited state is the new reference
        self._w._refresh_rows()

    position = property(lambda s: s._get("pos"), lambda s, v: s._set("pos", v))
    orientation = property(lambda s: s._get("quat"), lambda s, v: s._set("quat", v, 4))
    velocity = property(lambda s: s._get("vel"), lambda s, v: s._set("vel", v))
    angular_velocity = property(lambda s: s._get("omega"), lambda s, v: s._set("omega", v))
    force = property(lambda s: s._get("force"), lambda s, v: s._set("force", v))
    torque = property(lambda s: s._get("torque"), lambda s, v: s._set("torque", v))

    def point_velocity(self, point):
        """Velocity (m/s) of a world point moving with the body."""
        r = _vec3(point, "point") - self.position
        return self.velocity + np.cross(self.angular_velocity, r)


class Joint:
    """A named view of one joint: readouts of its free DOFs and its editable limits."""

    def __init__(self, world, index):
        self._w, self.index = world, index

    name = property(lambda self: self._w.model.joint_info[self.index].name)
    kind = property(lambda self: self._w.model.joint_info[self.index].kind)
    type = property(lambda self: JOINT_TYPES[self.kind])

    @property
    def angle(self):
        """Angle (rad) or slide (m) of the first free DOF; spherical: the swing angle."""
        self._w._ensure_rows()
        return float(self._w.state.joints.q[self.index, 0])

    @property
    def rate(self):
        """Rate (rad/s or m/s) of the first free DOF."""
        self._w._ensure_rows()
        return float(self._w.state.joints.qd[self.index, 0])

    @property
    def q(self):
        self._w._ensure_rows()
        return self._w.state.joints.q[self.index].copy()

    @property
    def qd(self):
        self._w._ensure_rows()
        return self._w.state.joints.qd[self.index].copy()

    @property
    def error(self):
        """Largest constraint violation (m or rad) at the current poses."""
        self._w._ensure_rows()
        return float(self._w.state.joints.err[self.index])

    def limit(self, dof=0):
        """(lo, hi) of a free DOF, or None when unlimited (spherical: dof 0 = swing cone)."""
        m = self._w.model.joints
        if not m.limit_on[self.index, dof]:
            return None
        return float(m.limit_lo[self.index, dof]), float(m.limit_hi[self.index, dof])

    def set_limit(self, lo, hi=None, dof=0):
        """Set (lo, hi) of a free DOF, or None to free it. Spherical dof 0: hi = cone angle."""
        self._w._set_limit(self.index, dof, lo, hi)

    @property
    def friction(self):
        """Maximum friction torque (N·m) or force (N, prismatic) on the free DOFs (seed 001)."""
        return float(self._w.model.joints.friction[self.index])

    @friction.setter
    def friction(self, value):
        self._set_coefficient("friction", value)

    @property
    def damping(self):
        """Viscous damping c of the free DOFs: the torque −c·q̇ (N·m·s/rad), or force
        (N·s/m, prismatic), every family applies implicitly (solvers/damping.py)."""
        return float(self._w.model.joints.damping[self.index])

    @damping.setter
    def damping(self, value):
        self._set_coefficient("damping", value)

    def _set_coefficient(self, field, value):
        """model.joints.<field> of this joint := value, refused unless finite and ≥ 0."""
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"joint {self.name!r}: {field} must be finite and >= 0, got {value!r}")
        getattr(self._w.model.joints, field)[self.index] = value

    def _free_rows(self):
        m, j = self._w.model.joints, self.index
        end = m.row_start[j] + m.row_count[j]
        return np.arange(end - self.type.n_free, end)

    @property
    def friction_torque(self):
        """Magnitude of the friction (or motor) torque/force applied in the last step (N·m or N)."""
        return float(np.linalg.norm(self._w.state.rows.impulse[self._free_rows()])) / self._w.substep_dt

    @property
    def friction_torque_vector(self):
        """Friction/motor torque (N·m) or force (N) on the child body, world frame."""
        rows, w = self._free_rows(), self._w
        if len(rows) == 0:
            return np.zeros(3)
        part = slice(6, 9) if self.type.linear_free else slice(9, 12)  # child's share
        return (w.state.rows.impulse[rows, None] * w.work.rows.J[rows, part]).sum(axis=0) / w.substep_dt

    @property
    def sliding(self):
        """True when the friction limit binds (Coulomb sliding), False when sticking."""
        w, j = self._w, self.index
        pmax = w.model.joints.friction[j] * w.substep_dt
        motor_off = w.control.joints.motor_mode[j] == MOTOR_OFF
        if pmax <= 0.0 or not motor_off:
            return pmax <= 0.0 and motor_off
        return float(np.linalg.norm(w.state.rows.impulse[self._free_rows()])) >= pmax * (1.0 - 1e-9)

    def set_motor(self, mode="off", target=0.0, max_force=0.0, frequency=20.0, damping=1.0):
        """Motor on a 1-DOF joint (revolute, prismatic): mode "off", "velocity" (target
        rad/s or m/s) or "position" (target rad or m; a soft servo of `frequency` Hz and
        damping ratio `damping`), limited to `max_force` N·m or N. Both solver families act on it."""
        w, j = self._w, self.index
        if mode not in MOTOR_MODES:
            raise ValueError(f"motor mode must be one of {', '.join(MOTOR_MODES)}, got {mode!r}")
        if mode != "off" and not self.type.motor:
            raise ValueError(f"joint {self.name!r}: motors are for revolute and prismatic joints")
        vals = [float(target), float(max_force), float(frequency), float(damping)]
        if not all(math.isfinite(v) for v in vals) or vals[1] < 0 or vals[2] <= 0 or vals[3] < 0:
            raise ValueError(f"joint {self.name!r}: motor needs finite target, max_force >= 0, "
                             "frequency > 0, damping >= 0")
        m, c = w.model.joints, w.control.joints
        c.motor_mode[j], c.motor_target[j] = MOTOR_MODES[mode], vals[0]
        m.motor_max[j], m.motor_freq[j], m.motor_damping[j] = vals[1:]

    @property
    def motor(self):
        w, j = self._w, self.index
        m, c = w.model.joints, w.control.joints
        mode = {v: k for k, v in MOTOR_MODES.items()}[int(c.motor_mode[j])]
        return {"mode": mode, "target": float(c.motor_target[j]), "max_force": float(m.motor_max[j]),
                "frequency": float(m.motor_freq[j]), "damping": float(m.motor_damping[j])}

    @property
    def limits(self):
        return self.limit(0)

    @limits.setter
    def limits(self, value):
        if value is None:
            self.set_limit(None)
        else:
            self.set_limit(*value)


def _new_names(names, taken, what):
    """names as a list, each a non-empty string new to `taken` and to the others."""
    names = list(names)
    seen = set()
    for name in names:
        if not isinstance(name, str) or not name or name in taken or name in seen:
            raise ValueError(f"{what} name must be a new non-empty string, got {name!r}")
        seen.add(name)
    return names


def _like(value, template, sizes=True):
    """`value` has `template`'s structure: the same nesting of dicts (same keys), tuples
    and lists (same lengths), arrays of the same dtype and dimensions (and shape, with
    `sizes`), numbers where it has numbers (save_state's parts, checked before a restore)."""
    if isinstance(template, np.ndarray):
        return (isinstance(value, np.ndarray) and value.dtype == template.dtype and value.ndim == template.ndim
                and (not sizes or value.shape == template.shape))
    if isinstance(template, dict):
        return (isinstance(value, dict) and set(value) == set(template)
                and all(_like(value[k], template[k], sizes) for k in template))
    if isinstance(template, (tuple, list)):
        return (isinstance(value, (tuple, list)) and len(value) == len(template)
                and all(_like(v, t, sizes) for v, t in zip(value, template)))
    if isinstance(template, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_))
    if isinstance(template, (int, float, np.integer, np.floating)):
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    return template is None and value is None


@contextlib.contextmanager
def _interrupts_between_chunks(active):
    """While a long advance runs (`active`, in the main thread, Python's own Ctrl-C
    handler installed): SIGINT is noted and yields True from the check given, raised as
    KeyboardInterrupt by the caller between two chunks, never in the middle of one."""
    if not active or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield lambda: False
        return
    hit = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hit.append(signum))
    try:
        yield lambda: bool(hit)
    finally:
        signal.signal(signal.SIGINT, previous)


class World:
    """A physics world stepped at a fixed Δt. Body 0 is the static world ("world").

    gyroscopic: add the ω×Iω term (implicit, integrate.py). Off by default, as in
    seed 000's equations of motion (eq. 1: J ω̇ = τ); turn it on for fast-spinning
    asymmetric bodies.
    """

    def __init__(self, dt=DT.default, gravity=(0.0, 0.0, -9.81), solver=DEFAULT_FAMILY, gyroscopic=False,
                 max_speed=1.0e3, max_spin=1.0e4, settings=None):
        self.model = Model(DT.check(dt), _vec3(gravity, "gravity"), GYROSCOPIC.check(gyroscopic),
                           float(max_speed), float(max_spin))
        self.state, self.control, self.work = State(), Control(), Work()
        self.body_info, self.joint_info = self.model.body_info, self.model.joint_info   # names, shapes, colours
        self.solvers = {name: family() for name, family in FAMILIES.items()}
        self._solver = None
        self.solver = solver
        if settings:                        # {setting: value} to every family that has the setting
            by_family = {}
            for key, value in settings.items():
                families = [f for f, sv in self.solvers.items() if key in sv.schema()]
                if not families:
                    raise ValueError(f"no solver family has a setting {key!r}")
                for family in families:
                    by_family.setdefault(family, {})[key] = value
            for family, values in by_family.items():
                self.configure(family, **values)
        self.blown_up = None                # SimulationBlowUp once it happened
        self._watch = None                  # RunawayWatch since the last edit of the state
        self._rows_stale = False            # joints added since the rows were last written
        self._body_index, self._joint_index = {}, {}
        self._rows_indexed = False          # body_row_ptr/idx match the rows
        self.contact_model = Contacts()     # contact settings and the solvers' contact arrays
        self._initial_state = None          # reset's state: before the first step
        self._add_body_arrays(["world"], Plane(), (0.5, 0.5, 0.5), None, np.zeros(3),
                              np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), np.zeros(3), True, None)
        self.model.bodies.collide[0] = 0
        self.ropes = {}                     # name → physics.rope.Rope, stepped with the bodies
        self._rope_color = {}
        self._grab = None                   # the mouse spring (see grab())
        self._advance_stats = None          # the solver's stats of the advance so far
        self._events = []                   # (time, joint index, mode, target), sorted by time
        self.controllers = []               # add_controller's: [controller, next tick time (s)]
        self._next_event = 0
        self._mass_extremes = []            # [(kg, who)] the lightest and heaviest dynamic mass
        self._layout_key = None             # (what it was computed for, layout signature)
        self._pace = None                   # s of wall time per step, measured (None: not yet)

    # ------------------------------------------------------------------ settings
    @property
    def dt(self):
        return self.model.dt

    @dt.setter
    def dt(self, value):
        value = DT.check(value)
        # time keeps counting: the clock restarts its step count from here
        self.state.epoch_time, self.state.epoch_step = self.state.time, self.state.step_count
        self.model.dt = value

    @property
    def gravity(self):
        return self.model.gravity.copy()

    @gravity.setter
    def gravity(self, value):
        self.model.gravity = _vec3(value, "gravity")
        self._watch = None                  # the energy's potential part changed: a new reference

    @property
    def gyroscopic(self):
        return self.model.gyroscopic

    @gyroscopic.setter
    def gyroscopic(self, value):
        self.model.gyroscopic = GYROSCOPIC.check(value)

    time = property(lambda self: self.state.time, doc="Simulated time (s): the sum of the steps taken, whatever "
                                                      "their Δt.")
    step_count = property(lambda self: self.state.step_count, doc="Steps taken since the start.")

    @property
    def solver(self):
        return self._solver

    @solver.setter
    def solver(self, name):
        if name not in self.solvers:
            raise ValueError(f"solver must be one of {', '.join(self.solvers)}, got {name!r}")
        if name != self._solver and self._solver is not None:
            self.state.rows.impulse[:] = 0.0     # impulses of another solver mean nothing here
        self._solver = name

    @property
    def active_solver(self):
        """The object of the active family (physics/solvers)."""
        return self.solvers[self._solver]

    @property
    def stats(self):
        """SolverStats of the active solver's last step."""
        return self.active_solver.stats

    def configure(self, family, **values):
        """Set settings of a solver family (names and ranges: its SETTINGS schema)."""
        if family not in self.solvers:
            raise ValueError(f"solver must be one of {', '.join(self.solvers)}, got {family!r}")
        self.solvers[family].configure(**values)

    def solver_settings(self, family=None):
        """The current settings of a family (default: the active one), read-only (a write
        raises TypeError rather than change nothing: set them with configure)."""
        return MappingProxyType(dict(self.solvers[family or self._solver].settings))

    @property
    def substep_dt(self):
        """The step of one solve (s): Δt, or Δt/substeps for a family that substeps."""
        return self.active_solver.substep(self.dt)

    # ------------------------------------------------------------------ building
    def _model_changed(self):
        """Bodies, joints or rows were added: caches built on the layout are stale."""
        self._watch = None
        self.model.version += 1
        self._rows_indexed = False
        self._extend_initial_state()
        for solver in self.solvers.values():
            solver.model_changed(self)

    def _add_body_arrays(self, names, shape, color, mass, pos, quat, vel, omega, static, visual_mesh):
        """Append k bodies (checked arrays: mass (k,), pos, vel, omega (k, 3), quat (k, 4)
        unit; one shape, color (3,) or (k, 3)); returns the first index."""
        k = len(names)
        i = self.model.bodies.add(k)
        self.state.bodies.add(k)
        self.control.bodies.add(k)
        self.work.bodies.add(k)
        sb, mb, new = self.state.bodies, self.model.bodies, slice(i, i + k)
        sb.pos[new], sb.quat[new], sb.vel[new], sb.omega[new] = pos, quat, vel, omega
        if static:
            mb.inertia[new] = np.inf
        else:
            first = float(mass[0])
            if np.all(mass == first):               # one mass: one inertia (a chain)
                inertia = shape.principal_inertia(first)
            else:
                inertia = np.array([shape.principal_inertia(float(m)) for m in mass])
            mb.inv_mass[new] = 1.0 / mass
            mb.inertia[new] = inertia
            mb.inv_inertia[new] = 1.0 / inertia
        colors = [tuple(color)] * k if np.ndim(color) == 1 else [tuple(c) for c in color]
        masses = [math.inf] * k if static else mass.tolist()
        self.model.body_info.extend(BodyInfo(n, shape, c, m, visual_mesh) for n, c, m in zip(names, colors, masses))
        self._body_index.update(zip(names, range(i, i + k)))
        self._model_changed()
        return i

    def add_body(self, name, shape, mass=None, density=None, position=(0, 0, 0),
                 orientation=(0, 0, 0, 1), velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                 static=False, color=(0.7, 0.7, 0.7), visual_mesh=None, friction=0.5, restitution=0.0,
                 collide=True):
        """Add a rigid body. Give `mass` (kg) or `density` (kg/m³), unless `static`.
        Inertia is the exact tensor of the shape about its centre (shapes.py; a model
        file's own through Body.inertia). `visual_mesh`: a mesh file drawn instead of the
        shape, or a tuple of physics.visual.VisualPart (each posed and coloured). Contacts
        (physics/contacts.py): Coulomb `friction` μ ≥ 0, `restitution` e in [0, 1]
        (the pair takes √(μa μb) and max(ea, eb)); `collide` False: touches nothing."""
        return self.add_bodies([name], shape, mass, density, position, orientation, velocity, angular_velocity,
                               static, color, visual_mesh, friction, restitution, collide)[0]

    def add_bodies(self, names, shape, mass=None, density=None, position=(0, 0, 0),
                   orientation=(0, 0, 0, 1), velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                   static=False, color=(0.7, 0.7, 0.7), visual_mesh=None, friction=0.5, restitution=0.0,
                   collide=True):
        """Add k bodies of one shape at once, as k calls of add_body would (same checks,
        same errors naming the first offending body, the same arrays bit for bit) in
        O(k) numpy work: `names` k new names; `mass`, `density` one value or k;
        `position`, `velocity`, `angular_velocity` one (3,) or (k, 3); `orientation` one
        (4,) or (k, 4); `color` one rgb or k; friction, restitution, collide one value for
        all. Returns the k Body views."""
        names = _new_names(names, self._body_index, "body")
        k = len(names)
        if k == 0:
            return []
        first = names[0]
        try:
            check_shape(shape)
        except ValueError as e:
            raise ValueError(f"body {first!r}: {e}") from None
        if shape.kind == "plane" and not static:
            raise ValueError(f"body {first!r}: a plane can only be static")
        if not static:
            if (mass is None) == (density is None):
                raise ValueError(f"body {first!r}: give exactly one of mass and density")
            if mass is None:
                density = _per_body(density, k, names, "density")
                _check_each(density, names, bounds.DENSITY_MIN, bounds.DENSITY_MAX, bounds.density_error)
                mass = density * shape.volume()
            mass = _per_body(mass, k, names, "mass")
            _check_each(mass, names, bounds.MASS_MIN, bounds.MASS_MAX, bounds.mass_error)
            inertia = np.array([shape.principal_inertia(float(m)) for m in (mass.min(), mass.max())])
            if not np.all((inertia >= bounds.INERTIA_MIN) & (inertia <= bounds.INERTIA_MAX)):
                raise ValueError(f"body {first!r}: its inertia {inertia.min():.3g} … {inertia.max():.3g} kg·m² is "
                                 f"outside {bounds.INERTIA_MIN:g} … {bounds.INERTIA_MAX:g} (mass and shape)")
            extremes = self._mass_extremes_with(mass, names)
        if isinstance(collide, np.bool_):
            collide = bool(collide)
        if not isinstance(collide, bool):
            raise ValueError(f"body {first!r}: collide must be true or false, got {collide!r}")
        quat = _unit_quats(orientation, k, names)
        pos = _vecs3(position, k, "position")
        vel = _vecs3(velocity, k, "velocity")
        omega = _vecs3(angular_velocity, k, "angular_velocity")
        friction, restitution = _contact_property(first, friction, restitution)
        i = self._add_body_arrays(names, shape, color, mass, pos, quat, vel, omega, static, visual_mesh)
        mb = self.model.bodies
        mb.friction[i:i + k], mb.restitution[i:i + k], mb.collide[i:i + k] = friction, restitution, 1 if collide else 0
        if not static:
            self._mass_extremes = extremes
        if static and getattr(shape, "kind", None) == "box":
            for b in range(i, i + k):
                for rope in self.ropes.values():
                    rope.add_box(self.state.bodies.pos[b], shape.half_extents, self.state.bodies.quat[b])
        return [Body(self, b) for b in range(i, i + k)]

    def _mass_extremes_with(self, mass, names):
        """The lightest and heaviest (mass, "body NAME") of the world's dynamic bodies with
        these new ones, or a ValueError naming the new one when they are beyond
        bounds.MASS_RATIO apart."""
        new = [(float(mass[j]), f"body {names[j]!r}") for j in (int(np.argmin(mass)), int(np.argmax(mass)))]
        light, heavy = min(new + self._mass_extremes), max(new + self._mass_extremes)
        if heavy[0] > bounds.MASS_RATIO * light[0]:
            ratio = heavy[0] / light[0]
            if light in new:
                raise ValueError(f"{light[1]}: mass {light[0]:g} kg is {ratio:.3g} times lighter than {heavy[1]} "
                                 f"({heavy[0]:g} kg); the engine accepts a ratio up to {bounds.MASS_RATIO:g}")
            raise ValueError(f"{heavy[1]}: mass {heavy[0]:g} kg is {ratio:.3g} times heavier than {light[1]} "
                             f"({light[0]:g} kg); the engine accepts a ratio up to {bounds.MASS_RATIO:g}")
        return [light, heavy]

    def add_joint(self, name, kind, parent, child, anchor, axis=(1.0, 0.0, 0.0), axis2=None,
                  limits=None, limits2=None, swing=None, twist=None, friction=0.0, damping=0.0):
        """Join `parent` (a body name or "world") and `child` at a world `anchor` (m).

        axis:   revolute hinge axis, prismatic slide axis, universal first axis (on the
                parent), spherical twist axis — world coordinates.
        axis2:  universal second axis (on the child), perpendicular to `axis`.
        limits: (lo, hi) of the first free DOF (rad, or m for prismatic); limits2 of the
                universal's second; swing: spherical cone half-angle (rad); twist: (lo, hi).
        friction: dry friction torque (N·m) or force (N) of the free DOFs (seed 001);
        damping: their viscous damping c (N·m·s/rad or N·s/m; Joint.damping).
        """
        return self.add_joints([name], kind, [parent], [child], anchor, axis, axis2, limits, limits2, swing, twist,
                               friction, damping)[0]

    def add_joints(self, names, kind, parents, children, anchors, axis=(1.0, 0.0, 0.0), axis2=None,
                   limits=None, limits2=None, swing=None, twist=None, friction=0.0, damping=0.0):
        """Add k joints of one type at once, as k calls of add_joint would (same checks,
        same errors naming the first offending joint, the same arrays bit for bit) in O(k)
        numpy work: `names`, `parents`, `children` k names each (a parent may be one name
        for all); `anchors`, `axis`, `axis2` one (3,) or (k, 3) (world coordinates);
        limits, limits2, swing, twist, friction and damping shared. Returns the k Joint views."""
        names = _new_names(names, self._joint_index, "joint")
        k = len(names)
        parents = [parents] * k if isinstance(parents, str) else list(parents)
        children = list(children)
        if k == 0:
            return []
        if len(parents) != k or len(children) != k:
            raise ValueError(f"add_joints: {k} names need {k} parents and {k} children, "
                             f"got {len(parents)} and {len(children)}")
        first = names[0]
        if kind not in JOINT_TYPES:
            raise ValueError(f"joint {first!r}: type must be one of {', '.join(JOINT_TYPES)}, got {kind!r}")
        index = self._body_index
        ab = np.empty((k, 2), np.int64)
        for j, (name, parent, child) in enumerate(zip(names, parents, children)):
            for role, b in (("parent", parent), ("child", child)):
                if not isinstance(b, str) or b not in index:
                    raise ValueError(f"joint {name!r}: {role} {b!r} is not a body")
            ab[j] = index[parent], index[child]
        same = ab[:, 0] == ab[:, 1]
        if same.any():
            raise ValueError(f"joint {names[int(np.argmax(same))]!r}: parent and child are the same body")
        jt = JOINT_TYPES[kind]
        t = jt.code
        anchors = _vecs3(anchors, k, "joint {name!r} anchor", names)
        axes = _vecs3(axis, k, "joint {name!r} axis", names)
        zero = np.linalg.norm(axes[:1] if axes.strides[0] == 0 else axes, axis=1) < 1e-12
        if zero.any():
            raise ValueError(f"joint {names[int(np.argmax(zero))]!r}: axis must not be zero")
        if t == UNIVERSAL:
            if axis2 is None:
                raise ValueError(f"joint {first!r}: a universal joint needs axis2")
            axes2 = _vecs3(axis2, k, "joint {name!r} axis2", names)
        if (swing is not None or twist is not None) and t != SPHERICAL:
            raise ValueError(f"joint {first!r}: swing and twist limits are only for spherical joints")
        if limits2 is not None and t != UNIVERSAL:
            raise ValueError(f"joint {first!r}: limits2 is only for universal joints")
        friction, damping = float(friction), float(damping)
        for what, value in (("friction", friction), ("damping", damping)):
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"joint {first!r}: {what} must be finite and >= 0, got {value!r}")
        # the joint frame (world) of each distinct axis (pair), computed once
        frames = {}
        keyed = zip(axes.tolist(), axes2.tolist()) if t == UNIVERSAL else ((a, None) for a in axes.tolist())
        q_frames = np.empty((k, 4))
        for j, key in enumerate(keyed):
            key = (tuple(key[0]), None if key[1] is None else tuple(key[1]))
            if key not in frames:
                if t == UNIVERSAL:
                    n0, n1 = np.array(key[0]), np.array(key[1])
                    n0, n1 = n0 / np.linalg.norm(n0), n1 / np.linalg.norm(n1)
                    if abs(np.dot(n0, n1)) > 1e-6:
                        raise ValueError(f"joint {names[j]!r}: axis and axis2 must be perpendicular")
                    frames[key] = q_from_matrix(frame_from_axes(n0, n1))
                else:
                    frames[key] = q_from_matrix(frame_from_axes(np.array(key[0])))
            q_frames[j] = frames[key]
        lims = self._check_limits(jt, first, swing, twist, limits, limits2)
        # the anchor and frame in each body's coordinates: the builder's scalar quaternion
        # helpers (quat.py), one call per joint and side, so every path rounds alike
        sb = self.state.bodies
        local_anchor, local_frame = np.empty((2, k, 3)), np.empty((2, k, 4))
        anchor_l, frame_l = anchors.tolist(), q_frames.tolist()
        for side in (0, 1):
            bq, bp = sb.quat[ab[:, side]].tolist(), sb.pos[ab[:, side]].tolist()
            la, lf = local_anchor[side], local_frame[side]
            for j in range(k):
                qx, qy, qz, qw = bq[j]
                px, py, pz = bp[j]
                ax, ay, az = anchor_l[j]
                la[j] = rotate(-qx, -qy, -qz, qw, ax - px, ay - py, az - pz)
                lf[j] = qmul(-qx, -qy, -qz, qw, *frame_l[j])
        nrows = jt.n_rows
        j0 = self.model.joints.add(k)
        self.state.joints.add(k)
        self.control.joints.add(k)
        r0 = self.model.rows.add(k * nrows)
        self.state.rows.add(k * nrows)
        self.work.rows.add(k * nrows)
        m, new = self.model.joints, slice(j0, j0 + k)
        m.type[new] = t
        m.body[new] = ab
        m.anchor_a[new], m.anchor_b[new] = local_anchor
        m.frame_a[new], m.frame_b[new] = local_frame
        m.row_start[new] = r0 + nrows * np.arange(k)
        m.row_count[new] = nrows
        m.friction[new] = friction
        m.damping[new] = damping
        for dof, (lo, hi) in lims.items():
            m.limit_lo[new, dof], m.limit_hi[new, dof], m.limit_on[new, dof] = lo, hi, 1
        b0 = self.model.blocks.add(k)
        self.model.blocks.row_start[b0:b0 + k], self.model.blocks.row_count[b0:b0 + k] = m.row_start[new], nrows
        # the row pattern of one joint of this type, repeated k times
        kind_of_row = np.array([ROW_EQ] * jt.n_eq + [ROW_LIMIT] * jt.n_limit + [ROW_FREE] * jt.n_free, np.int64)
        rot = np.ones(nrows, np.int64)
        rot[:jt.translational_eq] = 0
        if jt.linear_free:
            rot[jt.n_eq:] = 0
        rows, new_rows = self.model.rows, slice(r0, r0 + k * nrows)
        rows.joint[new_rows] = np.repeat(np.arange(j0, j0 + k), nrows)
        rows.body[new_rows] = np.repeat(ab, nrows, axis=0)
        rows.kind[new_rows] = np.tile(kind_of_row, k)
        rows.rot[new_rows] = np.tile(rot, k)
        self.model.joint_info.extend(
            JointInfo(name, kind, parent, child, tuple(anchor), tuple(ax), None if t != UNIVERSAL else tuple(ax2))
            for name, parent, child, anchor, ax, ax2 in zip(names, parents, children, anchors, axes,
                                                            axes2 if t == UNIVERSAL else axes))
        self._joint_index.update(zip(names, range(j0, j0 + k)))
        self._model_changed()
        self._rows_stale = True          # written on first use: building stays O(1) per joint
        return [Joint(self, j) for j in range(j0, j0 + k)]

    @staticmethod
    def _check_limits(jt, name, swing, twist, limits, limits2):
        """{limit slot: (lo, hi)} of add_joint's limit arguments, checked as _set_limit does."""
        if jt.code == SPHERICAL:
            given = {0: None if swing is None else (0.0, swing), 1: twist}
        else:
            given = {0: limits, 1: limits2}
        out = {}
        for dof, value in given.items():
            if value is None:
                continue
            if dof >= jt.n_limit:
                raise ValueError(f"joint {name!r} ({jt.name}) has no limit #{dof}")
            if len(value) != 2:
                raise TypeError(f"joint {name!r}: limits are (lo, hi), got {value!r}")
            lo, hi = float(value[0]), float(value[1])
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(f"joint {name!r}: limits need finite lo <= hi, got ({lo}, {hi})")
            if jt.code == SPHERICAL and dof == 0 and not (0.0 < hi <= math.pi):
                raise ValueError(f"joint {name!r}: swing cone must be in (0, π] rad, got {hi}")
            out[dof] = (lo, hi)
        return out

    def add_coupling(self, follower, leader, ratio=1.0, offset=0.0):
        """Tie joint `follower`'s position to joint `leader`'s: q_f = ratio·q_l + offset (rad
        or m; a URDF <mimic>), a coupling row every family solves with the joints
        (physics/solvers/couplings.py). Both must be 1-DOF joints
        (revolute or prismatic); a joint follows at most one other."""
        names = []
        for role, name in (("follower", follower), ("leader", leader)):
            if not isinstance(name, str) or name not in self._joint_index:
                raise ValueError(f"coupling: {role} {name!r} is not a joint")
            j = self._joint_index[name]
            if not JOINT_TYPES[self.model.joint_info[j].kind].motor:
                raise ValueError(f"coupling: {role} {name!r} is a {self.model.joint_info[j].kind} joint; "
                                 "couplings tie 1-DOF joints (revolute, prismatic)")
            names.append(j)
        f, lead = names
        if f == lead:
            raise ValueError(f"coupling: joint {follower!r} cannot follow itself")
        mc = self.model.couplings
        if f in mc.joint[:, 0]:
            raise ValueError(f"coupling: joint {follower!r} already follows another joint")
        ratio, offset = float(ratio), float(offset)
        if not (math.isfinite(ratio) and math.isfinite(offset)):
            raise ValueError(f"coupling {follower!r} ← {leader!r}: ratio and offset must be finite, "
                             f"got {ratio!r}, {offset!r}")
        c = mc.add()
        self.state.couplings.add()
        self.work.couplings.add()
        mc.joint[c], mc.ratio[c], mc.offset[c] = (f, lead), ratio, offset
        self._model_changed()

    def coupling_data(self, robot=None):
        """The couplings as the kernels take them (model.Couplings, empty without any), or
        None for kernels compiled without them (robot: whether the kernel has the robots'
        features; default robot_features)."""
        robot = self.robot_features() if robot is None else robot
        return coupling_bundle(self.model, self.state, self.work) if robot else None

    def couplings(self):
        """The couplings between joints: [(follower, leader, ratio, offset)] (add_coupling)."""
        mc, info = self.model.couplings, self.model.joint_info
        return [(info[f].name, info[lead].name, float(m), float(o))
                for (f, lead), m, o in zip(mc.joint.tolist(), mc.ratio, mc.offset)]

    def _index_body_rows(self):
        """work.body_row_ptr/body_row_idx: for each body, the (row, side) pairs of the
        equality and limit rows acting on it (CSR)."""
        rows = self.model.rows
        nb = self.model.bodies.count
        solid = np.flatnonzero(rows.kind != ROW_FREE)
        idx = np.repeat(solid, 2)
        sides = np.tile(np.arange(2), len(solid))
        bodies = rows.body[idx, sides] if len(idx) else np.zeros(0, np.int64)
        order = np.argsort(bodies, kind="stable")
        self.work.body_row_idx = np.ascontiguousarray(np.column_stack([idx[order], sides[order]]).astype(np.int64))
        ptr = np.zeros(nb + 1, np.int64)
        np.add.at(ptr, bodies + 1, 1)
        self.work.body_row_ptr = np.cumsum(ptr)
        self._rows_indexed = True

    def add_load(self, body, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0), point=None,
                 start=0.0, end=math.inf):
        """A scripted push: a constant world-frame force (N) and torque (N·m) on `body`
        while start ≤ t < end (s). With `point` (world coordinates now), the force acts
        at that point of the body (it moves with the body), adding r × F."""
        if not isinstance(body, str) or body not in self._body_index or self._body_index[body] == 0:
            raise ValueError(f"load: {body!r} is not a body")
        i = self._body_index[body]
        force, torque = _vec3(force, "load force"), _vec3(torque, "load torque")
        start, end = float(start), float(end)
        if not (math.isfinite(start) and start < end):
            raise ValueError(f"load on {body!r}: needs a finite start < end, got ({start}, {end})")
        local = np.zeros(3)
        if point is not None:
            sb = self.state.bodies
            local = q_rotate(q_conj(sb.quat[i]), _vec3(point, "load point") - sb.pos[i])
        loads = self.control.loads
        k = loads.add()
        loads.body[k], loads.force[k], loads.torque[k], loads.point[k] = i, force, torque, local
        loads.at_point[k], loads.window[k] = int(point is not None), (start, end)

    def _set_limit(self, j, dof, lo, hi, refresh=True):
        m = self.model.joints
        jt = BY_CODE[int(m.type[j])]
        name = self.model.joint_info[j].name
        if dof >= jt.n_limit:
            raise ValueError(f"joint {name!r} ({jt.name}) has no limit #{dof}")
        if lo is None:
            m.limit_on[j, dof] = 0
            return
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(f"joint {name!r}: limits need finite lo <= hi, got ({lo}, {hi})")
        if jt.code == SPHERICAL and dof == 0 and not (0.0 < hi <= math.pi):
            raise ValueError(f"joint {name!r}: swing cone must be in (0, π] rad, got {hi}")
        m.limit_lo[j, dof] = lo
        m.limit_hi[j, dof] = hi
        m.limit_on[j, dof] = 1
        if refresh:
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
        for i, info in enumerate(self.model.body_info):   # the rope lies on static boxes (seed 002 §contact)
            if i > 0 and self.model.bodies.inv_mass[i] == 0.0 and getattr(info.shape, "kind", None) == "box":
                rope.add_box(self.state.bodies.pos[i], info.shape.half_extents, self.state.bodies.quat[i])
        self._extend_initial_state()
        return rope

    def attach_rope(self, name, node, body="world", point=None, clamp=False):
        """Pin rope node `node` (index, −1 = last) to the world or to a body at the world
        `point` (default: where the node is now), which then moves with the body; both
        feel the attachment. clamp=True also holds the end element's orientation."""
        if name not in self.ropes:
            raise ValueError(f"attach_rope: no rope named {name!r} (ropes: {', '.join(self.ropes) or 'none'})")
        rope = self.ropes[name]
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not -len(rope.positions) <= node < len(rope.positions):
            raise ValueError(f"attach_rope: rope {name!r} has nodes 0 … {len(rope.positions) - 1} (or −1 for the last), "
                             f"got {node!r}")
        p = rope.positions[node].copy() if point is None else _vec3(point, "rope attachment point")
        if body == "world":
            handle = rope.attach_world(node, position=p, clamp=clamp)
        else:
            if not self.has_body(body):
                raise ValueError(f"rope {name!r}: no body named {body!r}")
            i = self._body_index[body]
            local = q_rotate(q_conj(self.state.bodies.quat[i]), p - self.state.bodies.pos[i])
            handle = rope.attach_body(node, i, local_point=local, body_pos=self.state.bodies.pos, body_quat=self.state.bodies.quat,
                                      clamp=clamp)
        if self._initial_state is not None:     # reset keeps the rope where it was attached
            self._initial_state["ropes"][name] = rope.save_state()
        return handle

    def rope_energy(self):
        """Kinetic + gravitational + elastic energy of the ropes (J)."""
        return float(sum(r.kinetic_energy() + r.potential_energy(self.model.gravity) + r.elastic_energy()
                         for r in self.ropes.values()))


    # ------------------------------------------------------------------ motor schedule
    def add_motor_event(self, joint, time, target, mode=None):
        """At simulated `time` (s) set the motor target of `joint` (and its mode if given):
        a piecewise-constant program, e.g. a robot that drives, turns and stops."""
        if not self.has_joint(joint):
            raise ValueError(f"motor event: no joint named {joint!r}")
        if mode is not None and mode not in MOTOR_MODES:
            raise ValueError(f"motor event: mode must be one of {', '.join(MOTOR_MODES)}, got {mode!r}")
        time, target = float(time), float(target)
        if not (math.isfinite(time) and time >= 0.0 and math.isfinite(target)):
            raise ValueError("motor event: time must be finite and >= 0, target finite")
        self._events.append((time, self._joint_index[joint], mode, target))
        self._events.sort(key=lambda e: e[0])
        self._next_event = sum(1 for e in self._events if e[0] < self.state.time - 1e-9)


    def add_controller(self, controller):
        """Run `controller.update(world)` every `controller.period` s of simulated time
        (`controller.driven`: the joint indices whose motors it sets, restored with a state)
        (rounded to whole steps; at steps whose count is a multiple of it, so a restored
        state ticks where the first run did), between kernel calls: a robot arm's control
        tick (physics/arm_control.py). The steps are split there, as at motor events."""
        if not (math.isfinite(controller.period) and controller.period > 0.0):
            raise ValueError(f"controller: period must be finite and > 0 s, got {controller.period!r}")
        self.controllers.append([controller, -1])

    def _run_controllers(self):
        """Tick every controller due at this step; steps (>= 1) to the next tick."""
        ahead, now = None, self.state.step_count
        for entry in self.controllers:
            every = max(1, round(entry[0].period / self.dt))
            if now % every == 0 and entry[1] != now:
                entry[0].update(self)
                entry[1] = now
            steps = every - now % every
            ahead = steps if ahead is None else min(ahead, steps)
        return ahead

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
        if self.model.bodies.inv_mass[i] == 0.0:
            raise ValueError(f"grab: {body!r} is static")
        local = q_rotate(q_conj(self.state.bodies.quat[i]), point - self.state.bodies.pos[i])
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
        return {"body": self.model.body_info[i].name, "point": self.state.bodies.pos[i] + q_rotate(self.state.bodies.quat[i], g["local"]),
                "target": g["target"].copy(), "force": g["force"].copy()}

    def _add_grab_force(self):
        g = self._grab
        i = g["body"]
        m = 1.0 / self.model.bodies.inv_mass[i]
        r = q_rotate(self.state.bodies.quat[i], g["local"])
        p = self.state.bodies.pos[i] + r
        v = self.state.bodies.vel[i] + np.cross(self.state.bodies.omega[i], r)
        w = g["omega"]
        f = m * w * w * (g["target"] - p) - 2.0 * m * w * v
        fmax = m * g["max_accel"]
        norm = float(np.linalg.norm(f))
        if norm > fmax:
            f *= fmax / norm
        g["force"] = f
        self.work.bodies.force_acc[i] += f
        self.work.bodies.torque_acc[i] += np.cross(r, f)

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
        return [Body(self, i) for i in range(1, self.model.bodies.count)]

    @property
    def joints(self):
        return [Joint(self, j) for j in range(self.model.joints.count)]

    @property
    def rows(self):
        """The row table as the solvers read it (physics/model.py Rows): per row its owner
        joint, kind, bodies, Jacobian, value, activity and accumulated impulse."""
        self._ensure_rows()
        return self.kernel_bundles(self.active_solver.free_rows_used(self))[5]

    def unhonoured(self):
        """What the active solver does not act on here: [(feature, names)] — "friction",
        "damping", "motors" and "limits" set on joints, "couplings" (the followers of add_coupling),
        "contacts" (the moving colliding bodies) and "restitution" (the colliding bodies
        with e > 0), kept for the families that do."""
        honours, m, c = self.active_solver.HONOURS, self.model.joints, self.control.joints
        mb = self.model.bodies
        driven = {e[1] for e in self._events}
        used = {"friction": m.friction > 0.0, "damping": m.damping > 0.0, "limits": m.limit_on.any(axis=1),
                "motors": (c.motor_mode != MOTOR_OFF) | np.isin(np.arange(m.count), list(driven))}
        out = []
        for feature, mask in used.items():
            if feature not in honours and mask.any():
                out.append((feature, [self.model.joint_info[j].name for j in np.flatnonzero(mask)]))
        if "couplings" not in honours and self.model.couplings.count:
            out.append(("couplings", [f for f, *_ in self.couplings()]))
        if "contacts" not in honours and self.collides():
            movers = [self.model.body_info[i].name for i in range(1, mb.count) if mb.collide[i] and mb.inv_mass[i] > 0]
            out.append(("contacts", movers))
        elif "restitution" not in honours and self.collides():
            bouncy = [self.model.body_info[i].name for i in range(1, mb.count)
                      if mb.collide[i] and mb.restitution[i] > 0.0]
            if bouncy:
                out.append(("restitution", bouncy))
        return out

    # ------------------------------------------------------------------ contacts
    def configure_contacts(self, **values):
        """Contact settings (physics/contacts.py CONTACT_SETTINGS): enabled, margin (m),
        slop (m), restitution_threshold (m/s)."""
        self.contact_model.configure(**values)

    @property
    def contact_settings(self):
        return dict(self.contact_model.settings)

    def contact_data(self, robot=None):
        """The contact arrays the solver kernels take (physics/contacts.py ContactData);
        robot: for a kernel with the robots' features (the hull table; default
        robot_features)."""
        return self.contact_model.data(self, robot)

    def contacts_stepped(self):
        """After a kernel call: grow the contact buffers if they overflowed; returns
        whether they did (the kernel then stopped early, physics/contacts.py
        detection_overflowed, and the solver runs the remaining steps)."""
        return self.contact_model.grow_if_needed(self)

    def contacts(self):
        """The contacts of the last step: bodies (m,2) indices, point, normal (a → b),
        depth (m), normal_impulse (N·s), friction_impulse (m,2) N·s (physics/contacts.py)."""
        return self.contact_model.current(self)

    def keep_apart(self, names):
        """The named bodies never touch one another (a robot's own links, whose meshes
        meet around their joints); each still touches everything else."""
        idx = sorted({self.body(n).index for n in names})
        self.contact_model.apart.extend((i, j) for k, i in enumerate(idx) for j in idx[k + 1:])
        self.contact_model.edits += 1

    def collides(self):
        """Whether any dynamic body can touch something (contacts on and a dynamic
        colliding body beside at least one other colliding body)."""
        mb = self.model.bodies
        if not self.contact_model.settings["enabled"]:
            return False
        on = mb.collide[1:] != 0
        return np.count_nonzero(on) >= 2 and np.count_nonzero(on & (mb.inv_mass[1:] > 0.0)) > 0

    def has_hulls(self):
        """Whether some colliding body is a convex hull or a compound (Convex, Compound)
        (contacts.Contacts.hulls)."""
        return self.contact_model.hulls(self)

    def robot_features(self):
        """Whether the solver kernels compile the hulls' narrow phase and the couplings
        between joints (their HULLS and COUPLINGS features, both or neither): a world with a
        hull or with a coupling gets both (and every world, under a family that compiles them
        always: SolverBase.robot_features). Robots bring both, and each variant compiles a
        family's whole step kernel again, so one variant serves them all; a world without
        couplings then passes an empty Couplings bundle (contacts.Contacts.robot_features)."""
        return self.contact_model.robot_features(self)

    def max_constraint_error(self):
        """Largest joint constraint violation (m or rad) at the current poses."""
        self._ensure_rows()
        err = self.state.joints.err
        return float(err.max()) if err.size else 0.0

    def energy(self):
        """Kinetic + gravitational potential energy of the dynamic bodies, plus the ropes'
        energy (rope_energy) (J)."""
        mb, sb = self.model.bodies, self.state.bodies
        bodies = body_energy(sb.pos, sb.quat, sb.vel, sb.omega, mb.inv_mass, mb.inertia, self.model.gravity)
        return float(bodies) + (self.rope_energy() if self.ropes else 0.0)

    # ------------------------------------------------------------------ state
    def kernel_bundles(self, free_used, coupled=False):
        """The arrays as the kernels take them (physics/model.py bundles)."""
        if not self._rows_indexed:
            self._index_body_rows()
        return bundles(self.model, self.state, self.control, self.work, free_used, coupled)

    def _refresh_rows(self):
        """Recompute rows and readouts from the current state (after any edit)."""
        self._rows_stale = False
        _, bodies, _, joints, _, rows, _ = self.kernel_bundles(self.active_solver.free_rows_used(self))
        compute_joint_rows(bodies, joints, rows, True)
        compute_joint_rates(bodies, joints, rows)

    def _ensure_rows(self):
        """Write the rows and readouts if joints were added since they were last written."""
        if self._rows_stale:
            self._refresh_rows()

    def layout(self):
        """The layout signature (16 bytes as a uint8 array): a hash of the bodies' names and
        shapes, which are static, the joints' names, types and bodies, the row count and
        the ropes' names. A saved state restores only into a world of the same layout."""
        key = (self.model.version, tuple(self.ropes))
        if self._layout_key is None or self._layout_key[0] != key:
            h = hashlib.blake2b(digest_size=16)
            mb, mj = self.model.bodies, self.model.joints
            h.update(repr([(b.name, getattr(b.shape, "kind", None)) for b in self.model.body_info]).encode())
            h.update(np.ascontiguousarray(mb.inv_mass == 0.0).tobytes())
            h.update(repr([j.name for j in self.model.joint_info]).encode())
            h.update(np.ascontiguousarray(mj.type).tobytes() + np.ascontiguousarray(mj.body).tobytes())
            h.update(repr((self.model.rows.count, tuple(self.ropes))).encode())
            h.update(np.ascontiguousarray(self.model.couplings.joint).tobytes())
            self._layout_key = (key, np.frombuffer(h.digest(), np.uint8).copy())
        return self._layout_key[1].copy()

    def _layout_text(self, counts=None):
        """"N bodies, M joints, K ropes" (counts: saved (bodies + the world, joints, ropes))."""
        nb, nj, nr = counts if counts is not None else (self.model.bodies.count, self.model.joints.count,
                                                        len(self.ropes))
        words = ((nb - 1, "body", "bodies"), (nj, "joint", "joints"), (nr, "rope", "ropes"))
        return ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in words)

    def save_state(self):
        """A cheap copy of everything time changes (bodies, joints, row impulses, time,
        ropes), of the motor program's position and of what the solvers carry from step
        to step (the contacts' warm start, the energy budget), with the world's layout:
        restored into this World or a fresh one of the same layout, the run repeats bit
        for bit."""
        self._ensure_rows()
        s = self.state.copy()
        s["layout"] = self.layout()
        s["counts"] = np.array([self.model.bodies.count, self.model.joints.count, len(self.ropes)], np.int64)
        s["dt"] = self.dt
        c = self.control.joints
        s["motors"] = (c.motor_mode.copy(), c.motor_target.copy())
        s["ropes"] = {name: rope.save_state() for name, rope in self.ropes.items()}
        s["contacts"] = self.contact_model.save(self)
        s["solvers"] = {name: sv.save_state(self) for name, sv in self.solvers.items()}
        return s

    def _check_saved(self, s):
        """A ValueError (one line) unless `s` is a state save_state() gave for this layout,
        with finite numbers; checked before anything is changed."""
        what = "restore_state: expected a state saved by World.save_state()"
        if not isinstance(s, dict):
            raise ValueError(f"{what}, got {type(s).__name__}")
        missing = [k for k in ("layout", "bodies", "joints", "rows", "couplings", "clock", "dt", "solvers") if k not in s]
        if missing:
            raise ValueError(f"{what}; this one has no {', '.join(missing)}")
        layout = s["layout"]
        if not (isinstance(layout, np.ndarray) and layout.shape == (16,) and np.array_equal(layout, self.layout())):
            counts = s.get("counts")
            saved = ""
            if isinstance(counts, np.ndarray) and counts.shape == (3,):
                saved = f" ({self._layout_text([int(c) for c in counts])})"
            raise ValueError(f"restore_state: the state was saved from a world of another layout{saved}; this "
                             f"world has {self._layout_text()} — bodies, joints or ropes were added since, or it "
                             "is another scene")
        unknown = [k for k in s["solvers"] if k not in self.solvers] if isinstance(s["solvers"], dict) else ["?"]
        if unknown:
            raise ValueError(f"restore_state: the state names solvers this world does not have: {unknown}")
        try:
            t, steps, epoch_time, epoch_step = s["clock"]
            clock_ok = all(math.isfinite(float(x)) and float(x) >= 0.0 for x in (t, steps, epoch_time, epoch_step))
            clock_ok = clock_ok and float(steps).is_integer() and float(epoch_step).is_integer()
            arrays = [(name, s[table][name], getattr(getattr(self.state, table), name))
                      for table, names in (("bodies", ("pos", "quat", "vel", "omega")), ("joints", ("q", "qd")),
                                           ("rows", self.state.rows.names),
                                           ("couplings", self.state.couplings.names)) for name in names]
            dt = float(s["dt"])
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            raise ValueError(f"{what}: {type(e).__name__}: {e}"[:300]) from None
        if not clock_ok:
            raise ValueError(f"restore_state: the clock must be finite numbers >= 0 and whole step counts, "
                             f"got {s['clock']!r}"[:300])
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"restore_state: dt must be a positive number of seconds, got {s['dt']!r}")
        for name, saved, now in arrays:
            if not (isinstance(saved, np.ndarray) and saved.shape == now.shape):
                raise ValueError(f"{what}: {name} has the wrong shape")
            if not np.isfinite(saved).all():
                raise ValueError(f"restore_state: the saved {name} is not finite (a state of a blown-up run?)")
        c = self.control.joints
        motors = s.get("motors")
        if motors is not None and not (isinstance(motors, (tuple, list)) and len(motors) == 2
                                       and all(_like(m, now) for m, now in zip(motors, (c.motor_mode, c.motor_target)))):
            raise ValueError(f"{what}: its motors are not this world's")
        ropes = s.get("ropes", {})
        if not (isinstance(ropes, dict) and set(ropes) <= set(self.ropes)
                and all(_like(r, self.ropes[name].save_state(), sizes=False) for name, r in ropes.items())):
            raise ValueError(f"{what}: its ropes are not this world's")
        contacts = s.get("contacts")
        if contacts is not None and not _like(contacts, self.contact_model.save(self), sizes=False):
            raise ValueError(f"{what}: its contacts are not this world's")
        for name, saved in s["solvers"].items():
            own = self.solvers[name].save_state(self) if hasattr(self.solvers[name], "save_state") else None
            if saved is not None and not _like(saved, own, sizes=False):
                raise ValueError(f"{what}: its {name} solver's state is not this world's")

    def restore_state(self, s):
        """Back to a state save_state() gave (in this World or another of the same layout);
        a ValueError, the world untouched, for anything else."""
        self._check_saved(s)
        self.state.load(s)
        if s.get("dt") != self.dt:      # saved under another Δt: the clock goes on from here
            self.state.epoch_time, self.state.epoch_step = self.state.time, self.state.step_count
        c = self.control.joints
        if "motors" in s and s["motors"][0].shape == c.motor_mode.shape:
            # joints driven by the motor program or a controller start it over; motors
            # edited by hand stay
            driven = {j for c, _ in self.controllers for j in getattr(c, "driven", ())}
            for j in {e[1] for e in self._events} | driven:
                c.motor_mode[j], c.motor_target[j] = s["motors"][0][j], s["motors"][1][j]
        for name, saved in s.get("ropes", {}).items():
            if name in self.ropes:
                try:
                    self.ropes[name].restore_state(saved)
                except ValueError:      # the rope was re-discretized since: keep its shape
                    pass
        self.contact_model.restore(self, s.get("contacts"))
        for name, saved in s.get("solvers", {}).items():
            self.solvers[name].restore_state(self, saved)
        self._next_event = sum(1 for e in self._events if e[0] < self.time - 1e-9)
        for entry in self.controllers:
            entry[1] = -1
        self.blown_up = None
        self._watch = None
        self.release_grab()
        self._refresh_rows()

    def reset(self):
        """Back to t = 0: the state before the first step; bodies, joints and ropes added
        since are kept, at the poses (and velocities) they were added with."""
        if self._initial_state is not None:
            self.restore_state(self._initial_state)

    def _extend_initial_state(self):
        """After something was added mid-run: the initial state (reset's) gets the new
        bodies, joints and ropes as they are now, the others as they were at t = 0."""
        old = self._initial_state
        if old is None:
            return
        new = self.save_state()
        for table in ("bodies", "joints", "rows", "couplings"):
            for name, arr in old[table].items():
                new[table][name][:len(arr)] = arr
        new["rows"]["impulse"][len(old["rows"]["impulse"]):] = 0.0
        new["couplings"]["impulse"][len(old["couplings"]["impulse"]):] = 0.0
        for k in range(2):
            new["motors"][k][:len(old["motors"][k])] = old["motors"][k]
        new["ropes"].update({name: r for name, r in old["ropes"].items() if name in new["ropes"]})
        new["clock"], new["dt"], new["contacts"] = old["clock"], old["dt"], None
        self._initial_state = new

    # ------------------------------------------------------------------ stepping
    def step(self):
        """Advance exactly one fixed Δt."""
        self.advance_steps(1)

    def advance(self, duration):
        """Advance by `duration` simulated seconds (rounded to whole steps, at most
        bounds.MAX_STEPS); returns steps. A ValueError for anything else."""
        if isinstance(duration, (str, bytes, bool)):
            raise ValueError(f"advance: duration must be a number of seconds, got {duration!r}")
        try:
            duration = float(duration)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"advance: duration must be a number of seconds, got {duration!r}") from None
        if not (math.isfinite(duration) and duration >= 0.0):
            raise ValueError(f"advance: duration must be finite and >= 0 s, got {duration!r}")
        n = round(duration / self.dt)
        if n > bounds.MAX_STEPS:
            raise ValueError(f"advance: {duration:g} s at dt = {self.dt:g} s is {n:.3g} steps; one call takes at "
                             f"most {bounds.MAX_STEPS:.0e}")
        self.advance_steps(n)
        return n

    def advance_steps(self, n):
        """Advance n fixed steps (a whole number, at most bounds.MAX_STEPS; else a
        ValueError). Raises SimulationBlowUp on a blow-up.

        Bodies and joints alone run in kernel calls of many steps, split at scheduled
        motor events and in chunks of about CHUNK_SECONDS of wall time at the measured
        pace: Ctrl-C stops a long advance between two chunks, the state whole (the
        solver's stats cover the whole advance: SolverStats.absorb). With ropes or a mouse
        grab each step is a short sequence of kernel calls."""
        n = bounds.whole_steps(n)
        if self.blown_up is not None:
            raise self.blown_up
        self._ensure_rows()
        if self._initial_state is None:
            self._initial_state = self.save_state()
        if self._watch is None:
            self._watch = RunawayWatch(self)
        self._advance_stats = None
        with _interrupts_between_chunks(n > 1) as interrupted:
            while n > 0:
                self._fire_events()
                ticks = self._run_controllers() if self.controllers else None
                # one kernel call: up to the next motor event, controller tick and runaway
                # check (all at given steps, so a run is checked alike whatever the chunks)
                chunk = min(n, self._chunk_steps(), self._watch.steps_to_check(self.dt), ticks or n)
                if self._next_event < len(self._events):
                    ahead = int(math.ceil((self._events[self._next_event][0] - self.time) / self.dt - 1e-9))
                    chunk = max(1, min(chunk, ahead))
                started = time.perf_counter()
                if self.ropes or self._grab is not None:
                    for _ in range(chunk):
                        self._coupled_step()
                else:
                    self._run_solver(chunk)
                n -= chunk
                self._pace = (time.perf_counter() - started) / chunk
                reason = self._watch.tick(self, chunk * self.dt, sample=n == 0)
                if reason:
                    self.blown_up = SimulationBlowUp(self.time, reason)
                    raise self.blown_up
                if interrupted():
                    raise KeyboardInterrupt

    CHUNK_SECONDS = 0.1         # s of wall time per kernel call in a long advance (Ctrl-C's latency)

    def _chunk_steps(self):
        """Steps of about CHUNK_SECONDS of wall time: at the last call's pace, or before
        any at a guess of a microsecond per body and row (a chain of 100 links: 0.7 ms)."""
        pace = self._pace or 1e-6 * (10 + self.model.bodies.count + self.model.rows.count
                                     + sum(len(r.positions) for r in self.ropes.values()))
        return int(min(max(self.CHUNK_SECONDS / max(pace, 1e-9), 1), 1 << 24))

    def check_runaway(self):
        """Run the runaway watch now (after the last steps of a run that a periodic check
        did not see); raises SimulationBlowUp when the world has run away."""
        if self.blown_up is not None:
            raise self.blown_up
        if self._watch is not None:
            reason = self._watch.tick(self, 0.0, force=True)
            if reason:
                self.blown_up = SimulationBlowUp(self.time, reason)
                raise self.blown_up

    def _fire_events(self):
        """Apply every scheduled motor event whose time has come."""
        c = self.control.joints
        while self._next_event < len(self._events) and self._events[self._next_event][0] <= self.time + 1e-9:
            _, j, mode, target = self._events[self._next_event]
            if mode is not None:
                c.motor_mode[j] = MOTOR_MODES[mode]
            c.motor_target[j] = target
            self._next_event += 1

    def _coupled_step(self):
        """One Δt with ropes and/or the mouse spring.

        Order (seed 002, rope.py): external forces, gravity and the grab spring go into
        the body velocities first; each rope then steps and applies its attachment
        impulses to the bodies; the joint solver's step follows with nothing left to add
        (no gravity, no forces), integrating positions from the coupled velocities."""
        h = self.dt
        env, bodies, loads, _, _, _, work = self.kernel_bundles(self.active_solver.free_rows_used(self))
        gather_forces(self.time, bodies, loads, work.force_acc, work.torque_acc)
        if self._grab is not None and "body" in self._grab:
            self._add_grab_force()
        integrate_velocities(bodies, work.force_acc, work.torque_acc, env.gravity, False, h)
        for name, rope in self.ropes.items():
            rope.step(h, self.model.gravity, bodies.pos, bodies.quat, bodies.vel, bodies.omega, bodies.inv_mass,
                      bodies.inv_inertia)
            if not np.isfinite(rope.positions).all():
                self.blown_up = SimulationBlowUp(self.time + h, f"rope {name!r} became NaN")
                raise self.blown_up
        self._run_solver(1, coupled=True)

    def _run_solver(self, n, coupled=False):
        """n steps of the active solver; `coupled`: velocities already hold this step's
        gravity and forces (see _coupled_step)."""
        solver = self.active_solver
        done = solver.step(self, n, coupled)
        if self._advance_stats is not None:         # the advance's earlier calls: one advance's stats
            solver.stats = self._advance_stats.absorb(solver.stats)
        self._advance_stats = solver.stats
        st = self.state
        st.step_count += done
        st.time = st.epoch_time + (st.step_count - st.epoch_step) * self.dt
        if done < n:
            st.step_count += 1
            st.time = st.epoch_time + (st.step_count - st.epoch_step) * self.dt
            self.blown_up = SimulationBlowUp(self.time, self._runaway_body())
            raise self.blown_up

    def _runaway_body(self):
        """Why a kernel stopped: which body's velocity became NaN or passed the bounds."""
        sb, model = self.state.bodies, self.model
        speed = np.linalg.norm(sb.vel, axis=1)
        spin = np.linalg.norm(sb.omega, axis=1)
        bad = ~np.isfinite(speed) | ~np.isfinite(spin) | ~np.isfinite(sb.pos).all(axis=1)
        for i in np.flatnonzero(bad | (speed > model.max_speed) | (spin > model.max_spin))[:1]:
            name = model.body_info[i].name
            if bad[i]:
                return f"body {name!r}: its velocity or position became NaN"
            return (f"body {name!r} moves at {speed[i]:.3g} m/s and spins at {spin[i]:.3g} rad/s, beyond "
                    f"{model.max_speed:g} m/s / {model.max_spin:g} rad/s")
        return f"a velocity became NaN or exceeded {model.max_speed:g} m/s / {model.max_spin:g} rad/s"

    # ------------------------------------------------------------------ for viewers
    def snapshot(self):
        """Everything a viewer draws this frame, copied (never a view into solver state).

        bodies: names, shapes, colours, visual_meshes, position (n,3), orientation (n,4)
        — index 0 is the static world. joints: names, kinds, anchor (m,3) world anchor
        on the parent, frame (m,3,3) world joint frame on the parent (columns n0 n1 n2;
        n0 = hinge/slide/twist axis), child_frame (m,3,3), q (m,3), error (m,), bodies (m,2),
        limit_on/lo/hi (m,3) as in Joint.limit. ropes: per rope name, radius, color,
        positions (N,3) and frames (N−1,4) (element quaternions, local z along the rope).
        grab: grab_info (the mouse spring) or None. contacts: the last step's contacts
        (World.contacts: bodies, point, normal, depth, normal_impulse, friction_impulse).
        """
        self._ensure_rows()
        mj, sb, sj = self.model.joints, self.state.bodies, self.state.joints
        m = mj.count
        anchor = np.zeros((m, 3))
        frame = np.zeros((m, 3, 3))
        child_frame = np.zeros((m, 3, 3))
        for j in range(m):  # a few dozen joints per frame, outside the physics step
            a, b = mj.body[j]
            anchor[j] = sb.pos[a] + q_rotate(sb.quat[a], mj.anchor_a[j])
            frame[j] = q_to_matrix(q_mul(sb.quat[a], mj.frame_a[j]))
            child_frame[j] = q_to_matrix(q_mul(sb.quat[b], mj.frame_b[j]))
        info, jinfo = self.model.body_info, self.model.joint_info
        return {
            "time": self.time,
            "names": [b.name for b in info], "shapes": [b.shape for b in info],
            "colors": [b.color for b in info], "visual_meshes": [b.visual_mesh for b in info],
            "position": sb.pos.copy(), "orientation": sb.quat.copy(),
            "joint_names": [j.name for j in jinfo], "joint_kinds": [j.kind for j in jinfo],
            "joint_anchor": anchor, "joint_frame": frame, "joint_child_frame": child_frame,
            "joint_q": sj.q.copy(), "joint_error": sj.err.copy(),
            "joint_bodies": mj.body.copy(),
            "joint_limit_on": mj.limit_on.copy(), "joint_limit_lo": mj.limit_lo.copy(),
            "joint_limit_hi": mj.limit_hi.copy(),
            "ropes": [{"name": name, "radius": rope.radius, "color": self._rope_color[name],
                       "positions": rope.positions.copy(), "frames": rope.frames.copy()}
                      for name, rope in self.ropes.items()],
            "grab": self.grab_info,
            "contacts": self.contacts(),
        }
