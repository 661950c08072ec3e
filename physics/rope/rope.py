"""The rope subsystem (seed 002): an inextensible Cosserat rope of nodes and quaternion elements.

    rope = Rope.straight(start=(0, 0, 2), direction=(1, 0, 0), length=2.8, segments=28,
                         radius=0.015, density=1200.0, E=0.05e6, G=0.1e6)
    top = rope.attach_world(0)                       # fixed point (clamp=True: built-in end)
    hook = rope.attach_body(-1, body=3, local_point=(0, 0, 0.1))
    rope.step(h, gravity, body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia)
    positions, frames = rope.snapshot()
    rope.grab_node(5, target, stiffness=200.0, max_force=50.0)   # viewer drag, every step
    rope.release_node()

Model (rest lengths, masses, inertias, stiffness, rest Darboux vector) and state (node
positions/velocities, element quaternions/angular velocities, accumulated impulses) are
kept apart (`rope.model`, `rope.state`, numba namedtuples from kernels.py); every edit
(a live parameter, an attachment, a box) goes through a method that rebuilds what depends
on it. The step itself is one numba call, O(N); see kernels.py for the stages: the
velocities from one exact block-tridiagonal solve of bending/twist, length and tangent
rows (eq. 10-14, 16-18), then a Gauss-Newton projection of the positions onto length and
tangent (eq. 7, 15) to `tolerance`, which also corrects the velocities.

Coupling with rigid bodies (arrays in the World's layout: body_pos (n,3), body_quat (n,4)
(x, y, z, w), body_vel (n,3), body_omega (n,3), body_inv_mass (n,), body_inv_inertia (n,3)
principal, body frame). The order the caller must follow each step of h:

    1. bodies' external forces and gravity into their velocities (v += h F/m, ω += h I⁻¹τ)
       (and the rigid joints' velocity solve, if any);
    2. rope.step(h, gravity, body_pos, body_quat, body_vel, body_omega, body_inv_mass,
       body_inv_inertia): the rope's own step plus the attachment impulses applied to the
       bodies' (v, ω) — the body feels the rope's pull, the rope follows the body;
    3. integrate the bodies' positions with semi-implicit Euler from the new velocities:
       x += h v, q += h/2 (ω,0)⊗q, normalized (physics/integrate.py integrate_positions).

rope.step reads body_pos/body_quat as the start-of-step pose and puts each anchored node
where step 3 will carry its anchor (its position projection moves node and body together,
the body's share as a velocity change), so nothing may change body velocities between 2
and 3; a small mismatch (another solver running after the rope) is not fatal: it shows as
segment stretch, which the next step's projection removes.
"""
import math
import numbers
from collections import namedtuple

import numpy as np

from .. import bounds
from . import kernels as K
from ..quat import q_conj, q_from_matrix, q_mul, q_rotate
from ..shapes import MAX_SIZE, MIN_SIZE

RopeSnapshot = namedtuple("RopeSnapshot", ["positions", "frames"])
_EMPTY_BODIES = (np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0),
                 np.zeros((0, 3)))
_BODY_ARRAY_SHAPES = ((3,), (4,), (3,), (3,), (), (3,))
_BODY_ARRAY_NAMES = ("body_pos", "body_quat", "body_vel", "body_omega", "body_inv_mass", "body_inv_inertia")


# the rope solver's settings (Rope.set_solver); Rope(...) takes them as keywords too
SOLVER_DEFAULTS = dict(iterations=2, position_iterations=30, tolerance=1e-4, erp=1.0, drift_bias=0.1,
                       warm_start=True, bending="implicit", gyroscopic=True, geometric_stiffness=True,
                       projection_velocity=True)


class _Attachment:
    __slots__ = ("node", "body", "point", "clamp", "frame")

    def __init__(self, node, body, point, clamp, frame):
        self.node, self.body, self.point, self.clamp, self.frame = node, body, point, clamp, frame


def _unit(v, what):
    v = np.asarray(v, float).reshape(3)
    n = np.linalg.norm(v)
    if not (np.isfinite(n) and n > 0.0):
        raise ValueError(f"{what} must be a non-zero finite vector, got {v!r}")
    return v / n


def _rotation_between(a, b):
    """Unit quaternion of the smallest rotation taking unit vector a to unit vector b."""
    c = np.cross(a, b)
    w = 1.0 + float(np.dot(a, b))
    if w < 1e-12:                       # opposite: half turn about any perpendicular axis
        p = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(p) < 1e-6:
            p = np.cross(a, [0.0, 1.0, 0.0])
        p /= np.linalg.norm(p)
        return np.array([p[0], p[1], p[2], 0.0])
    q = np.array([c[0], c[1], c[2], w])
    return q / np.linalg.norm(q)


def _slerp(a, b, t):
    d = float(np.dot(a, b))
    if d < 0.0:
        b, d = -b, -d
    if d > 0.9995:
        q = a + t * (b - a)
        return q / np.linalg.norm(q)
    th = math.acos(min(d, 1.0))
    return (math.sin((1 - t) * th) * a + math.sin(t * th) * b) / math.sin(th)


def frames_along(points, d1=None):
    """Element quaternions (E,4) of a polyline by parallel transport: d3 along each segment,
    no twist; d1 of the first element along `d1` projected (default: towards world Z, or X
    for a vertical first segment)."""
    t = np.diff(points, axis=0)
    t = t / np.linalg.norm(t, axis=1)[:, None]
    t0 = t[0]
    ref = np.asarray(d1, float) if d1 is not None else (
        np.array([0.0, 0.0, 1.0]) if abs(t0[2]) < 0.9 else np.array([1.0, 0.0, 0.0]))
    e1 = ref - t0 * np.dot(ref, t0)
    if np.linalg.norm(e1) < 1e-9:
        raise ValueError("d1 must not be parallel to the first segment")
    e1 /= np.linalg.norm(e1)
    q = np.zeros((len(t), 4))
    q[0] = q_from_matrix(np.column_stack([e1, np.cross(t0, e1), t0]))
    for j in range(1, len(t)):
        q[j] = q_mul(_rotation_between(t[j - 1], t[j]), q[j - 1])
        q[j] /= np.linalg.norm(q[j])
        if np.dot(q[j], q[j - 1]) < 0.0:
            q[j] = -q[j]
    return q


def darboux_vectors(quats, pair_rest):
    """u of every element pair (eq. 12), (E−1, 3) in 1/m."""
    u = np.zeros((len(quats) - 1, 3))
    for j in range(len(u)):
        a, b = quats[j], quats[j + 1]
        u[j] = K.darboux(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], pair_rest[j])[:3]
    return u


def _param(index, name, doc):
    """A property over prm[index]: a number >= 0 (ValueError naming `name` otherwise)."""
    return property(lambda self: float(self.prm[index]),
                    lambda self, v: self.prm.__setitem__(index, self._nonneg(v, name)), doc=doc)


class Rope:
    """An inextensible elastic rope (seed 002): N nodes, N−1 quaternion elements.

    points: (N,3) initial centreline (m), N ≥ 2; its segment lengths are the rest lengths.
    radius r (m), density ρ (kg/m³), E Young's modulus (bending, Pa), G shear modulus
    (twist, Pa): K11 = K22 = Eπr⁴/4, K33 = Gπr⁴/2 (N·m²).
    damping: Kelvin-Voigt retardation time τ (s) of bending and twist — the bending/twist
      moment is K(u − û) + τ K u̇; between two neighbouring elements this is a damping
      torque c·Δω with c = τ K/l̄ (N·m·s/rad); a mode of angular frequency ω gets the
      damping ratio ζ = ωτ/2.
    drag: linear air drag rate (1/s) on node velocities and element spins.
    rest_shape: "straight" (û = 0, the paper's choice) or "initial" (û of the given shape
      and frames).
    frames: optional (N−1,4) initial element quaternions (default: parallel transport).
    friction: Coulomb μ of the rope on the ground and boxes. ground: contact with the
      plane z = ground_z on/off.
    Solver (set_solver): iterations (Gauss-Seidel sweeps over contacts, body attachments,
      interior clamps and the grab spring, each ending with the exact coupled solve of the
      rope's own rows; one sweep when none of those is active), position_iterations (cap on
      the Gauss-Newton projections per step), tolerance (the projection stops when
      max_j |C_j|/l_j < tolerance, C_j = r_{j+1} − r_j − l_j d3: stretch and |n − d3|/2 are
      below it), erp (0-1, of each projection), drift_bias (Baumgarte rate on the violation
      found at the start of a step), warm_start, bending "implicit" (soft rows in the exact
      solve, stable at any h) or "explicit" (eq. 14 torques applied directly, as in the
      paper: needs h ≲ l²√(ρA/EI)), gyroscopic (ω × Iω of the elements), geometric_stiffness
      (the tension's stiffness in the velocity solve), projection_velocity (the projection
      also corrects the velocities, an implicit step: stable when transverse waves cross
      many segments per step; off = split impulses, stable only while they cross less than
      about one segment per step).
    Clamps at the rope's ends are exact (in the coupled solve); a clamp at an interior node
    is a Gauss-Seidel row on its element, much weaker on light elements (l ≫ r).
    """

    def __init__(self, points, radius=0.015, density=1200.0, E=0.05e6, G=0.1e6, damping=0.0, drag=0.0,
                 rest_shape="straight", frames=None, friction=0.5, ground=True, ground_z=0.0, **solver):
        points = np.array(points, float)
        if points.ndim != 2 or points.shape[1] != 3 or len(points) < 2 or not np.all(np.isfinite(points)):
            raise ValueError("points must be a finite (N,3) array with N >= 2")
        seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
        if np.any(seg <= 1e-9):
            raise ValueError("consecutive rope points must be distinct")
        if rest_shape not in ("straight", "initial"):
            raise ValueError(f"rest_shape must be 'straight' or 'initial', got {rest_shape!r}")
        self.prm = np.zeros(K.N_PARAMS)
        self._radius = self._density = self._E = self._G = 0.0
        self._radius = self._radius_checked(radius)
        self._density = self._density_checked(density)
        self._E = self._nonneg(E, "E")
        self._G = self._nonneg(G, "G")
        self._rest_shape = rest_shape
        self._loads = {}                 # node → extra point mass (kg)
        self._attachments = {}           # handle → _Attachment
        self._next_handle = 0
        self._boxes = np.zeros((0, K.BOX_COLS))
        self.h_last = 0.0
        self.prm[K.P_GRAB_NODE] = -1.0
        self.set_solver(**{**SOLVER_DEFAULTS, **solver})
        self.damping = damping
        self.drag = drag
        self.friction = friction
        self.ground = ground
        self.ground_z = ground_z
        quats = frames_along(points) if frames is None else np.array(frames, float).reshape(len(points) - 1, 4)
        quats = quats / np.linalg.norm(quats, axis=1)[:, None]
        for j in range(1, len(quats)):
            if np.dot(quats[j], quats[j - 1]) < 0.0:
                quats[j] = -quats[j]
        self._set_shape(points, seg, quats, np.zeros_like(points), np.zeros((len(quats), 3)))
        if rest_shape == "initial":
            self._u0[:] = darboux_vectors(quats, self.model.pair_rest)

    @classmethod
    def straight(cls, start, end=None, direction=None, length=None, segments=28, **kw):
        """A straight rope from `start` to `end`, or from `start` along `direction` for
        `length` m, cut into `segments` equal segments (segments + 1 nodes)."""
        start = np.asarray(start, float).reshape(3)
        if end is not None:
            end = np.asarray(end, float).reshape(3)
        else:
            if direction is None or length is None:
                raise ValueError("give end, or direction and length")
            end = start + _unit(direction, "direction") * cls._positive(length, "length")
        segments = int(segments)
        if segments < 1:
            raise ValueError(f"segments must be >= 1, got {segments}")
        return cls(start + np.linspace(0.0, 1.0, segments + 1)[:, None] * (end - start), **kw)

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _positive(v, what):
        v = float(v)
        if not (math.isfinite(v) and v > 0.0):
            raise ValueError(f"{what} must be finite and > 0, got {v!r}")
        return v

    @staticmethod
    def _radius_checked(v):
        """A radius within the shapes' sizes, MIN_SIZE … MAX_SIZE (m): a rope's node masses
        and inertias follow from it (physics/bounds.py)."""
        if not bounds.in_range(v, MIN_SIZE, MAX_SIZE):
            raise ValueError(f"radius must be between {MIN_SIZE:g} and {MAX_SIZE:g} m, got {v!r}")
        return float(v)

    @staticmethod
    def _density_checked(v):
        """A density within physics/bounds.py's DENSITY_MIN … DENSITY_MAX (kg/m³)."""
        error = bounds.density_error(v)
        if error:
            raise ValueError(error)
        return float(v)

    @staticmethod
    def _nonneg(v, what):
        v = float(v)
        if not (math.isfinite(v) and v >= 0.0):
            raise ValueError(f"{what} must be finite and >= 0, got {v!r}")
        return v

    def _node(self, node):
        """A node index (negative: from the end) as 0 … n−1; ValueError if it is not one."""
        n = self.n_nodes
        if isinstance(node, bool) or not isinstance(node, numbers.Integral):
            raise ValueError(f"rope node must be an integer index (0 … {n - 1}, or -1 for the last), "
                             f"got {node!r}"[:200])
        i = int(node)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise ValueError(f"rope node {int(node)} is out of range: this rope has {n} nodes, "
                             f"0 … {n - 1} (or -{n} … -1 from the end)")
        return i

    # ------------------------------------------------------------------ building
    def _set_shape(self, points, seg_rest, quats, vel, omega):
        """(Re)allocate everything for a rope of len(points) nodes."""
        N = len(points)
        E = N - 1
        self._seg_rest = np.ascontiguousarray(seg_rest, float)
        if not hasattr(self, "_u0") or len(self._u0) != max(E - 1, 0):
            self._u0 = np.zeros((max(E - 1, 0), 3))
        A = len(self._attachments)
        self.state = K.RopeState(
            node_pos=np.ascontiguousarray(points, float), node_vel=np.ascontiguousarray(vel, float),
            elem_quat=np.ascontiguousarray(quats, float), elem_omega=np.ascontiguousarray(omega, float),
            seg_lam=np.zeros((E, 3)), pair_lam=np.zeros((max(E - 1, 0), 3)), clamp_lam=np.zeros((A, 3)),
            att_lam=np.zeros((A, 3)), contact_lam=np.zeros((N, 2, 4)), contact_box=np.full(N, -1, np.int64),
            grab_lam=np.zeros(3))
        self.work = K.RopeWork(
            blk=np.zeros((E, K.BLK_COLS)), elem_w=np.zeros((E, 3)),
            clamp=np.zeros((A, K.PAIR_COLS)), bw=np.zeros((E + 1, K.BW_COLS)), tmp=np.zeros(36),
            att=np.zeros((A, K.ATT_WORK_COLS)),
            contact=np.zeros((N, 2, K.CONTACT_COLS)), grab=np.zeros(K.GRAB_COLS), torque=np.zeros((E, 3)))
        self._rebuild()

    def _rebuild(self):
        """Model and link arrays from the parameters, loads and attachments (not hot)."""
        N = self.state.node_pos.shape[0]
        r, rho = self._radius, self._density
        area = math.pi * r * r
        l = self._seg_rest
        node_mass = np.zeros(N)
        node_mass[:-1] += 0.5 * rho * area * l
        node_mass[1:] += 0.5 * rho * area * l
        for i, m in self._loads.items():
            node_mass[i] += m
        elem_m = rho * area * l
        i11 = elem_m * r * r / 4.0
        elem_inertia = np.column_stack([i11, i11, 2.0 * i11])
        node_w = 1.0 / node_mass
        node_w_pos = node_w.copy()
        node_batt = np.full(N, -1, np.int64)
        handles = list(self._attachments)
        A = len(handles)
        att_int = np.zeros((A, 3), np.int64)
        att_f = np.zeros((A, 7))
        for a, hd in enumerate(handles):
            at = self._attachments[hd]
            att_int[a] = (at.node, at.body, 1 if at.clamp else 0)
            att_f[a, :3] = at.point
            att_f[a, 3:] = at.frame
            if at.body < 0:
                node_w[at.node] = 0.0
                node_w_pos[at.node] = 0.0
            else:
                node_w_pos[at.node] = 0.0
                node_batt[at.node] = a
        self._handles = handles
        self.model = K.RopeModel(
            seg_rest=self._seg_rest, pair_rest=np.ascontiguousarray(0.5 * (l[:-1] + l[1:])),
            pair_u0=self._u0, node_mass=node_mass, node_w=node_w, node_w_pos=node_w_pos, node_batt=node_batt,
            elem_inertia=np.ascontiguousarray(elem_inertia), elem_inv_inertia=np.ascontiguousarray(1.0 / elem_inertia))
        if self.state.att_lam.shape[0] != A:
            self.state = self.state._replace(att_lam=np.zeros((A, 3)), clamp_lam=np.zeros((A, 3)))
            self.work = self.work._replace(att=np.zeros((A, K.ATT_WORK_COLS)), clamp=np.zeros((A, K.PAIR_COLS)))
        self.links = K.RopeLinks(att_int=att_int, att_f=att_f, boxes=self._boxes)
        p = self.prm
        p[K.P_RADIUS] = r
        p[K.P_K1] = p[K.P_K2] = self._E * math.pi * r ** 4 / 4.0
        p[K.P_K3] = self._G * math.pi * r ** 4 / 2.0
        # the model changed under the attachment work rows: refresh them (frames used by readouts)
        if A:
            self._refresh_attachment_work()

    def _refresh_attachment_work(self, body_quat=None):
        att = self.work.att
        for a, hd in enumerate(self._handles):
            at = self._attachments[hd]
            f = at.frame if at.body < 0 or body_quat is None else q_mul(body_quat[at.body], at.frame)
            att[a, K.AW_FRAME:K.AW_FRAME + 4] = f

    # ------------------------------------------------------------------ sizes and shape
    @property
    def n_nodes(self):
        return self.state.node_pos.shape[0]

    @property
    def n_elements(self):
        return self.n_nodes - 1

    @property
    def segments(self):
        """Number of segments (elements); setting it re-discretizes the current shape."""
        return self.n_nodes - 1

    @segments.setter
    def segments(self, n):
        n = int(n)
        if n < 1:
            raise ValueError(f"segments must be >= 1, got {n}")
        self._resample(n, self.rest_length)

    @property
    def rest_length(self):
        """Rest length of the rope (m)."""
        return float(self._seg_rest.sum())

    @property
    def length(self):
        """Rest length (m); setting it keeps node 0 and the shape along the rope: a longer
        rope is extended straight along its last element, a shorter one is cut."""
        return self.rest_length

    @length.setter
    def length(self, value):
        self._resample(self.segments, self._positive(value, "length"))

    def _resample(self, n, length):
        """Re-discretize to n segments of a rope of rest length `length`, keeping the
        current centreline (piecewise linear in the material coordinate s), the frames
        (slerp between element centres, then turned onto the new tangents), velocities,
        the rest Darboux vector (as a function of s), attachments and loads (nearest node)."""
        st = self.state
        s_old = np.concatenate([[0.0], np.cumsum(self._seg_rest)])
        L_old = s_old[-1]
        s_new = np.linspace(0.0, length, n + 1)
        x_old, v_old = st.node_pos, st.node_vel
        tail = x_old[-1] - x_old[-2]
        tail /= np.linalg.norm(tail)
        x = np.empty((n + 1, 3))
        v = np.empty((n + 1, 3))
        for c in range(3):
            x[:, c] = np.interp(s_new, s_old, x_old[:, c])
            v[:, c] = np.interp(s_new, s_old, v_old[:, c])
        beyond = s_new > L_old
        x[beyond] = x_old[-1] + (s_new[beyond] - L_old)[:, None] * tail
        # the material coordinates of old and new nodes, to move attachments and loads
        def remap(i):
            if i == len(s_old) - 1:
                return n
            return int(min(n, max(0, round(s_old[i] / length * n))))
        new_att = {hd: remap(at.node) for hd, at in self._attachments.items()}
        if len(set(new_att.values())) != len(new_att):
            raise ValueError(f"{n} segments would put two attachments on the same node")
        # frames at the new element centres
        c_old = 0.5 * (s_old[:-1] + s_old[1:])
        c_new = 0.5 * (s_new[:-1] + s_new[1:])
        q_old = st.elem_quat
        q = np.empty((n, 4))
        w = np.empty((n, 3))
        t = np.diff(x, axis=0)
        t /= np.linalg.norm(t, axis=1)[:, None]
        for j, c in enumerate(c_new):
            k = int(np.searchsorted(c_old, c))
            if k <= 0:
                qj = q_old[0]
            elif k >= len(c_old):
                qj = q_old[-1]
            else:
                f = (c - c_old[k - 1]) / (c_old[k] - c_old[k - 1])
                qj = _slerp(q_old[k - 1], q_old[k], f)
            d3 = q_rotate(qj, [0.0, 0.0, 1.0])
            qj = q_mul(_rotation_between(d3, t[j]), qj)
            qj /= np.linalg.norm(qj)
            if j > 0 and np.dot(qj, q[j - 1]) < 0.0:
                qj = -qj
            q[j] = qj
        for c in range(3):
            w[:, c] = np.interp(c_new, c_old, st.elem_omega[:, c])
        # rest Darboux vector as a function of s (at interior nodes)
        u0 = np.zeros((max(n - 1, 0), 3))
        if self._rest_shape == "initial" and len(self._u0) > 0 and n > 1:
            for c in range(3):
                u0[:, c] = np.interp(s_new[1:-1], s_old[1:-1], self._u0[:, c])
        loads = {}
        for i, m in self._loads.items():
            k = remap(i)
            loads[k] = loads.get(k, 0.0) + m
        for hd, at in self._attachments.items():
            at.node = new_att[hd]
        self._loads = loads
        self._u0 = u0
        h_prev = self.prm[K.P_H_PREV]
        self.prm[K.P_GRAB_NODE] = -1.0
        self._set_shape(x, np.full(n, length / n), q, v, w)
        self.prm[K.P_H_PREV] = h_prev

    # ------------------------------------------------------------------ live parameters
    radius = property(lambda s: s._radius, lambda s, v: s._set_material("_radius", s._radius_checked(v)),
                      doc="Rope radius r (m): mass, inertia, stiffness and contact.")
    density = property(lambda s: s._density,
                       lambda s, v: s._set_material("_density", s._density_checked(v)),
                       doc="Density ρ (kg/m³).")
    E = property(lambda s: s._E, lambda s, v: s._set_material("_E", s._nonneg(v, "E")),
                 doc="Young's modulus (Pa): bending stiffness K11 = K22 = Eπr⁴/4.")
    G = property(lambda s: s._G, lambda s, v: s._set_material("_G", s._nonneg(v, "G")),
                 doc="Shear modulus (Pa): twist stiffness K33 = Gπr⁴/2.")

    def _set_material(self, name, value):
        setattr(self, name, value)
        if hasattr(self, "state"):
            self._rebuild()

    damping = _param(K.P_RETARDATION, "damping",
                     "Kelvin-Voigt retardation time τ (s) of bending and twist (see the class doc).")
    drag = _param(K.P_DRAG, "drag", "Linear air-drag rate (1/s) on node velocities and element spins.")
    friction = _param(K.P_FRICTION, "friction", "Coulomb friction coefficient μ with the ground and boxes.")

    @property
    def ground(self):
        return bool(self.prm[K.P_GROUND_ON])

    @ground.setter
    def ground(self, on):
        self.prm[K.P_GROUND_ON] = 1.0 if on else 0.0

    @property
    def ground_z(self):
        return float(self.prm[K.P_GROUND_Z])

    @ground_z.setter
    def ground_z(self, z):
        z = float(z)
        if not math.isfinite(z):
            raise ValueError("ground_z must be finite")
        self.prm[K.P_GROUND_Z] = z

    @property
    def stiffness(self):
        """(K11, K22, K33) in N·m²."""
        return tuple(float(self.prm[k]) for k in (K.P_K1, K.P_K2, K.P_K3))

    def set_solver(self, iterations=None, position_iterations=None, tolerance=None, erp=None, drift_bias=None,
                   warm_start=None, bending=None, gyroscopic=None, geometric_stiffness=None,
                   projection_velocity=None):
        """Change solver settings (see the class docstring); None keeps a setting."""
        p = self.prm
        for idx, v, lo, hi, name, integer in (
                (K.P_ITERATIONS, iterations, 1, 100000, "iterations", True),
                (K.P_POSITION_ITERATIONS, position_iterations, 0, 100000, "position_iterations", True),
                (K.P_TOLERANCE, tolerance, 0.0, 1.0, "tolerance", False),
                (K.P_ERP, erp, 0.0, 1.0, "erp", False),
                (K.P_DRIFT_BIAS, drift_bias, 0.0, 1.0, "drift_bias", False)):
            if v is None:
                continue
            v = float(v)
            if not (lo <= v <= hi) or (integer and v != int(v)):
                raise ValueError(f"{name} must be {'an integer ' if integer else ''}between {lo} and {hi}, got {v!r}")
            p[idx] = v
        if bending is not None:
            if bending not in ("implicit", "explicit"):
                raise ValueError(f"bending must be 'implicit' or 'explicit', got {bending!r}")
            p[K.P_BENDING_EXPLICIT] = 1.0 if bending == "explicit" else 0.0
        for idx, v in ((K.P_WARM_START, warm_start), (K.P_GYROSCOPIC, gyroscopic),
                       (K.P_GEOMETRIC, geometric_stiffness), (K.P_PROJECTION_VELOCITY, projection_velocity)):
            if v is not None:
                p[idx] = 1.0 if v else 0.0

    @property
    def solver_settings(self):
        p = self.prm
        return {"iterations": int(p[K.P_ITERATIONS]), "position_iterations": int(p[K.P_POSITION_ITERATIONS]),
                "tolerance": float(p[K.P_TOLERANCE]), "erp": float(p[K.P_ERP]),
                "drift_bias": float(p[K.P_DRIFT_BIAS]), "warm_start": bool(p[K.P_WARM_START]),
                "bending": "explicit" if p[K.P_BENDING_EXPLICIT] else "implicit",
                "gyroscopic": bool(p[K.P_GYROSCOPIC]), "geometric_stiffness": bool(p[K.P_GEOMETRIC]),
                "projection_velocity": bool(p[K.P_PROJECTION_VELOCITY])}

    @property
    def solver_stats(self):
        """Of the last step: projections used and the largest |C_j|/l_j the last one found."""
        return {"projections": int(self.prm[K.P_PROJECTIONS_USED]), "violation": float(self.prm[K.P_VIOLATION])}

    # ------------------------------------------------------------------ loads, obstacles
    def set_point_mass(self, node, mass):
        """Hang an extra point mass (kg) on a node (0 removes it)."""
        i = self._node(node)
        m = self._nonneg(mass, "mass")
        if m == 0.0:
            self._loads.pop(i, None)
        else:
            self._loads[i] = m
        self._rebuild()

    def add_box(self, center, half_extents, quat=(0.0, 0.0, 0.0, 1.0)):
        """A static box obstacle (centre m, half extents m, orientation (x, y, z, w)); returns its index."""
        c = np.asarray(center, float).reshape(3)
        he = np.asarray(half_extents, float).reshape(3)
        q = np.asarray(quat, float).reshape(4)
        if not (np.all(np.isfinite(c)) and np.all(he > 0) and np.all(np.isfinite(he)) and np.linalg.norm(q) > 0):
            raise ValueError("box needs a finite centre, positive half extents and a non-zero quaternion")
        row = np.concatenate([c, he, q / np.linalg.norm(q)])[None]
        self._boxes = np.ascontiguousarray(np.concatenate([self._boxes, row]))
        self.links = self.links._replace(boxes=self._boxes)
        self.state.contact_box[:] = -1
        return len(self._boxes) - 1

    def clear_boxes(self):
        self._boxes = np.zeros((0, K.BOX_COLS))
        self.links = self.links._replace(boxes=self._boxes)
        self.state.contact_box[:] = -1
        self.state.contact_lam[:, 1] = 0.0

    # ------------------------------------------------------------------ attachments
    def _new_attachment(self, at):
        for other in self._attachments.values():
            if other.node == at.node:
                raise ValueError(f"node {at.node} is already attached")
        hd = self._next_handle
        self._next_handle += 1
        self._attachments[hd] = at
        self._rebuild()
        return hd

    def attach_world(self, node, position=None, clamp=False, orientation=None):
        """Pin a node to a world point (default: where it is). clamp=True also holds the
        orientation of the adjacent element (a built-in end): an elastic pair with the
        rope's own K over half an element, l̄ = l/2, so it is the clamped boundary
        condition of the continuous rod. orientation: the clamp frame (x, y, z, w),
        default the element's current frame. Returns a handle; the point can be moved
        (kinematically) with move_attachment."""
        i = self._node(node)
        p = self.state.node_pos[i] if position is None else np.asarray(position, float).reshape(3)
        frame = self._end_element_quat(i) if orientation is None else np.asarray(orientation, float).reshape(4)
        frame = frame / np.linalg.norm(frame)
        self.state.node_pos[i] = p
        self.state.node_vel[i] = 0.0
        return self._new_attachment(_Attachment(i, -1, p.copy(), bool(clamp), frame))

    def attach_body(self, node, body, local_point=None, body_pos=None, body_quat=None, clamp=False):
        """Attach a node to rigid body `body` (an index into the body arrays) at a
        body-local point (m). local_point None: the node's current position, which needs
        body_pos and body_quat (the World's arrays). clamp=True also ties the adjacent
        element's orientation to the body (needs body_quat): the relative orientation
        at this moment is kept elastically, as in attach_world. Returns a handle."""
        i = self._node(node)
        b = int(body)
        if b < 0:
            raise ValueError("body must be a body index >= 0 (use attach_world for the world)")
        if local_point is None or clamp:
            if body_quat is None or (local_point is None and body_pos is None):
                raise ValueError("attach_body needs body_pos/body_quat to find the local point or clamp frame")
            qb = np.asarray(body_quat, float)[b]
        if local_point is None:
            pb = np.asarray(body_pos, float)[b]
            local = q_rotate(q_conj(qb), self.state.node_pos[i] - pb)
        else:
            local = np.asarray(local_point, float).reshape(3)
        frame = q_mul(q_conj(qb), self._end_element_quat(i)) if clamp else np.array([0.0, 0.0, 0.0, 1.0])
        return self._new_attachment(_Attachment(i, b, local, bool(clamp), frame / np.linalg.norm(frame)))

    def _end_element_quat(self, i):
        j = min(i, self.n_elements - 1)
        return self.state.elem_quat[j].copy()

    def move_attachment(self, handle, position=None, orientation=None):
        """New target of a world attachment (m; reached at the end of the next step, with
        the velocity that takes it there), and/or its clamp orientation (x, y, z, w)."""
        at = self._attachment(handle)
        if at.body >= 0:
            raise ValueError("only world attachments can be moved; move the body instead")
        a = self._handles.index(handle)
        if position is not None:
            at.point = np.asarray(position, float).reshape(3).copy()
            self.links.att_f[a, :3] = at.point
        if orientation is not None:
            q = np.asarray(orientation, float).reshape(4)
            at.frame = q / np.linalg.norm(q)
            self.links.att_f[a, 3:] = at.frame
            self.work.att[a, K.AW_FRAME:K.AW_FRAME + 4] = at.frame

    def detach(self, handle):
        self._attachment(handle)
        del self._attachments[handle]
        self._rebuild()

    def _attachment(self, handle):
        if handle not in self._attachments:
            raise KeyError(f"no attachment with handle {handle!r}")
        return self._attachments[handle]

    @property
    def attachments(self):
        """{handle: dict(node, body (−1 = world), point, clamp)}."""
        return {hd: {"node": at.node, "body": at.body, "point": at.point.copy(), "clamp": at.clamp}
                for hd, at in self._attachments.items()}

    # ------------------------------------------------------------------ grab (interactive drag)
    def grab_node(self, node, target, stiffness=200.0, damping=None, max_force=50.0):
        """Pull `node` towards `target` (m, world) with a spring applied every step until
        release_node(): force k(target − r) − c v, at most max_force (N) in size. It is a soft
        constraint solved with the rope's own rows (implicit: stable for any k and h).
        stiffness k (N/m); damping c (N·s/m), None: critical for the rope's mass,
        c = 2√(k m_rope). Call again every frame to move the target (the same node keeps
        its spring impulse). A node pinned to the world does not move. Returns the node."""
        i = self._node(node)
        t = np.asarray(target, float).reshape(3)
        if not np.all(np.isfinite(t)):
            raise ValueError("target must be a finite point")
        k = self._positive(stiffness, "stiffness")
        c = 2.0 * math.sqrt(k * self.mass) if damping is None else self._nonneg(damping, "damping")
        fmax = self._positive(max_force, "max_force")
        p = self.prm
        if int(p[K.P_GRAB_NODE]) != i:
            self.state.grab_lam[:] = 0.0
        p[K.P_GRAB_NODE] = i
        p[K.P_GRAB_X], p[K.P_GRAB_Y], p[K.P_GRAB_Z] = t
        p[K.P_GRAB_K], p[K.P_GRAB_C], p[K.P_GRAB_FMAX] = k, c, fmax
        return i

    def release_node(self):
        """Stop the grab spring."""
        self.prm[K.P_GRAB_NODE] = -1.0
        self.state.grab_lam[:] = 0.0

    @property
    def grabbed_node(self):
        """The node held by grab_node, or None."""
        i = int(self.prm[K.P_GRAB_NODE])
        return None if i < 0 else i

    def grab_force(self):
        """Force (N) the grab spring put on its node in the last step."""
        if self.h_last <= 0.0 or self.grabbed_node is None:
            return np.zeros(3)
        return self.state.grab_lam / self.h_last

    # ------------------------------------------------------------------ stepping
    def _body_arrays(self, arrays):
        if all(a is None for a in arrays):
            if any(at.body >= 0 for at in self._attachments.values()):
                raise ValueError("the rope is attached to bodies: pass the six body arrays to step()")
            return _EMPTY_BODIES
        n = None
        for a, shape, name in zip(arrays, _BODY_ARRAY_SHAPES, _BODY_ARRAY_NAMES):
            if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous
                    and a.shape[1:] == shape):
                raise TypeError(f"{name} must be a C-contiguous float64 array of shape (n,{','.join(map(str, shape))})")
            if n is None:
                n = a.shape[0]
            elif a.shape[0] != n:
                raise ValueError("the body arrays must all have the same length")
        for at in self._attachments.values():
            if at.body >= n:
                raise IndexError(f"attachment to body {at.body}, but only {n} bodies were passed")
        return arrays

    def step(self, h, gravity=(0.0, 0.0, -9.81), body_pos=None, body_quat=None, body_vel=None, body_omega=None,
             body_inv_mass=None, body_inv_inertia=None):
        """Advance the rope by h seconds and apply the attachment impulses to body_vel and
        body_omega (in place). Body positions are read, not moved: integrate them next
        (see the module docstring for the order). gravity (m/s²)."""
        h = float(h)
        if not (math.isfinite(h) and h > 0.0):
            raise ValueError(f"h must be finite and > 0, got {h!r}")
        g = gravity if (isinstance(gravity, np.ndarray) and gravity.dtype == np.float64
                        and gravity.shape == (3,)) else np.asarray(gravity, float).reshape(3)
        bodies = self._body_arrays((body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inv_inertia))
        K.rope_step(h, g, self.prm, self.model, self.state, self.links, self.work, *bodies)
        self.h_last = h

    def advance(self, duration, h, gravity=(0.0, 0.0, -9.81)):
        """Steps of h for `duration` s (no bodies attached); returns the number of steps."""
        n = int(round(duration / h))
        for _ in range(n):
            self.step(h, gravity)
        return n

    def save_state(self):
        """A copy of the dynamic state (positions, velocities, frames, impulses, anchor targets)."""
        return ({k: np.copy(v) for k, v in self.state._asdict().items()}, float(self.prm[K.P_H_PREV]),
                self.links.att_f.copy(), self.h_last)

    def restore_state(self, saved):
        arrays, h_prev, att_f, h_last = saved
        if arrays["node_pos"].shape != self.state.node_pos.shape or att_f.shape != self.links.att_f.shape:
            raise ValueError("saved state is from a rope of another size or other attachments")
        for k, v in arrays.items():
            getattr(self.state, k)[...] = v
        self.prm[K.P_H_PREV] = h_prev
        self.links.att_f[...] = att_f
        for a, hd in enumerate(self._handles):
            at = self._attachments[hd]
            at.point = att_f[a, :3].copy()
            at.frame = att_f[a, 3:].copy()
        self.h_last = h_last

    # ------------------------------------------------------------------ readouts
    @property
    def positions(self):
        """Node positions (N,3), a view (do not write)."""
        return self.state.node_pos

    def node_index(self, node):
        """`node` (an int, negative from the end) as an index 0 … N−1; ValueError naming
        the valid range otherwise (an attachment's node is checked with it)."""
        return self._node(node)

    def node_position(self, node):
        """A copy of node `node`'s position (m); ValueError if there is no such node."""
        return self.state.node_pos[self._node(node)].copy()

    @property
    def frames(self):
        """Element quaternions (N−1,4) (x, y, z, w), a view."""
        return self.state.elem_quat

    def snapshot(self):
        """What a viewer draws: RopeSnapshot(positions (N,3), frames (N−1,4)), copies."""
        return RopeSnapshot(self.state.node_pos.copy(), self.state.elem_quat.copy())

    def total_length(self):
        """Current length of the centreline polyline (m)."""
        return float(np.linalg.norm(np.diff(self.state.node_pos, axis=0), axis=1).sum())

    def segment_stretch(self):
        """|r_{i+1} − r_i|/l_i − 1 per segment."""
        return np.linalg.norm(np.diff(self.state.node_pos, axis=0), axis=1) / self._seg_rest - 1.0

    def max_stretch(self):
        """Largest relative segment stretch |ℓ/l − 1|."""
        return float(np.abs(self.segment_stretch()).max())

    def tangent_violation(self):
        """max_j |n_j − d3(q_j)| of eq. 15 (dimensionless, ≈ the angle in rad)."""
        return float(K.tangent_violation(self.state.node_pos, self.state.elem_quat))

    def elastic_energy(self):
        """Bending + twist energy ½ Σ l̄ K_kk (u_k − û_k)² (eq. 13), clamps included (J).
        A clamp on a body uses the body's orientation at the start of the last step."""
        return float(K.elastic_energy(self.state.elem_quat, self.model.pair_rest, self.model.pair_u0, self.prm,
                                      self.links, self.work.att, self._seg_rest))

    def darboux(self):
        """Current Darboux vector u (E−1, 3) (1/m), material frame of element j."""
        return darboux_vectors(self.state.elem_quat, self.model.pair_rest)

    def kinetic_energy(self):
        """Σ ½ m v² of the movable nodes + Σ ½ ωᵀIω of the elements (J)."""
        m = self.model
        return float(K.kinetic_energy(self.state.node_vel, m.node_mass, m.node_w, self.state.elem_quat,
                                      self.state.elem_omega, m.elem_inertia))

    def potential_energy(self, gravity=(0.0, 0.0, -9.81)):
        """−Σ m g·r of the movable nodes (J), zero at the origin."""
        m = self.model
        movable = m.node_w > 0
        return float(-(m.node_mass[movable, None] * self.state.node_pos[movable] * np.asarray(gravity)).sum())

    @property
    def mass(self):
        """Total mass (kg), point loads included."""
        return float(self.model.node_mass.sum())

    def segment_tension(self):
        """Tension (N) of every segment in the last step: −λ_j·d3/h from the impulses of the
        rows C_j (eq. 10-11, 17); positive = pulled."""
        if self.h_last <= 0.0:
            return np.zeros(self.n_elements)
        q = self.state.elem_quat
        d3 = np.column_stack([2.0 * (q[:, 0] * q[:, 2] + q[:, 1] * q[:, 3]),
                              2.0 * (q[:, 1] * q[:, 2] - q[:, 0] * q[:, 3]),
                              1.0 - 2.0 * (q[:, 0] ** 2 + q[:, 1] ** 2)])
        return -np.einsum("ij,ij->i", self.state.seg_lam, d3) / self.h_last

    def tension(self, node):
        """Tension (N) at a node: the mean of its segments' tensions (one at an end)."""
        i = self._node(node)
        t = self.segment_tension()
        if i == 0:
            return float(t[0])
        if i == self.n_nodes - 1:
            return float(t[-1])
        return float(0.5 * (t[i - 1] + t[i]))

    def attachment_force(self, handle):
        """Force (N, world) the rope exerted on what it is attached to during the last
        step: the attachment impulse / h on a body; on a world anchor, the impulse of the
        rows C_j (eq. 7 + 15) on the pinned node / h. (Clamp moments are not included.)"""
        at = self._attachment(handle)
        a = self._handles.index(handle)
        if self.h_last <= 0.0:
            return np.zeros(3)
        if at.body >= 0:
            return self.state.att_lam[a] / self.h_last
        i = at.node
        lam = self.state.seg_lam
        imp = np.zeros(3)
        if i > 0:
            imp += lam[i - 1]
        if i < self.n_elements:
            imp -= lam[i]
        return imp / self.h_last
