"""Scene files (TOML) → World, through the public builder API only.

A scene file is data: it cannot run code. Every error is one `SceneError` naming the
file, the key path and what was expected. Schema (all lengths m, masses kg, angles in
degrees where the key says `_deg`):

    [world]    dt, gravity = [x, y, z], gyroscopic
    [solver]   kind = "penalty" | "impulse"
               penalty_preset = "paper" | "critical", alpha_lin, beta_lin, alpha_rot,
               beta_rot, kappa, zeta                                   (penalty)
               iterations, epsilon, time_cap_ms, warm_start, stabilization
               ("split" | "baumgarte" | "none"), erp, substeps,
               position_iterations                                     (impulse)
    [view]     eye, target (passed to the viewer)
    [[bodies]] name, shape ("box" | "sphere" | "capsule" | "cylinder" | "plane"),
               size = [x, y, z] (box, full extents), radius, length (capsule: the
               cylindrical part; cylinder: height), mass or density, static,
               position, rotation_deg = [rx, ry, rz] (about x, then y, then z) or
               orientation = [x, y, z, w], velocity, angular_velocity, color
    [[chains]] name, links, joint ("revolute" | "spherical"), link_length, radius,
               mass, origin, direction, axis, parent, color  (physics.builders.make_chain;
               links are bodies NAME_i, joints NAME_ji)
    [[joints]] name, type ("fixed" | "spherical" | "revolute" | "universal" |
               "prismatic"), parent ("world" or a body), child, anchor, axis, axis2,
               limits_deg, limits2_deg, limits (prismatic, m), swing_deg, twist_deg,
               friction (N·m, or N for prismatic), motor ("off" | "velocity" |
               "position"), motor_target (rad/s, m/s or m) or motor_target_deg
               (deg or deg/s), motor_max (N·m or N), motor_frequency (Hz),
               motor_damping
    [[loads]]  body, force, torque, point (world, at load time), start, end (s)

`--set KEY=VALUE` overrides edit the parsed file before it is checked: `world.dt`,
`solver.KEY`, `body.NAME.KEY`, `joint.NAME.KEY`, `chain.NAME.KEY`.
"""
import math
import tomllib

from .builders import make_chain
from .quat import q_from_euler_deg
from .shapes import Box, Capsule, Cylinder, Plane, Sphere
from .world import World


class SceneError(Exception):
    """One clear line: FILE: KEY: expected …, got …"""

    def __init__(self, path, key, expected, got=None):
        self.path, self.key, self.expected = str(path), key, expected
        msg = f"{self.path}: {key}: expected {expected}"
        if got is not None:
            msg += f", got {got!r}" if not isinstance(got, str) or len(got) < 80 else f", got {got[:80]!r}…"
        super().__init__(msg)




class _Table:
    """A TOML table read with key checks; `used` catches unknown keys (typos)."""

    def __init__(self, path, where, data):
        if not isinstance(data, dict):
            raise SceneError(path, where, "a table", data)
        self.path, self.where, self.data = path, where, data
        self.used = set()

    def key(self, k):
        return f"{self.where}.{k}" if self.where else k

    def has(self, k):
        return k in self.data

    def get(self, k, kind, default=None, required=False, check=None, what=None):
        self.used.add(k)
        if k not in self.data:
            if required:
                raise SceneError(self.path, self.key(k), f"a value ({what or kind})")
            return default
        v = self.data[k]
        key = self.key(k)
        if kind == "number":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise SceneError(self.path, key, what or "a number", v)
            v = float(v)
            if not math.isfinite(v):
                raise SceneError(self.path, key, what or "a finite number", v)
        elif kind == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                raise SceneError(self.path, key, what or "an integer", v)
        elif kind == "bool":
            if not isinstance(v, bool):
                raise SceneError(self.path, key, "true or false", v)
        elif kind == "str":
            if not isinstance(v, str) or not v:
                raise SceneError(self.path, key, what or "a non-empty string", v)
        elif isinstance(kind, int):  # a vector of `kind` numbers
            if (not isinstance(v, list) or len(v) != kind
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)):
                raise SceneError(self.path, key, what or f"a list of {kind} numbers", v)
            v = [float(x) for x in v]
            if not all(math.isfinite(x) for x in v):
                raise SceneError(self.path, key, what or f"{kind} finite numbers", v)
        if check is not None and not check(v):
            raise SceneError(self.path, key, what, v)
        return v

    def choice(self, k, options, default=None, required=False):
        v = self.get(k, "str", default, required, what="one of " + ", ".join(options))
        if v is not None and v not in options:
            raise SceneError(self.path, self.key(k), "one of " + ", ".join(options), v)
        return v

    def done(self):
        for k in self.data:
            if k not in self.used:
                raise SceneError(self.path, self.key(k), "a known key (" + ", ".join(sorted(self.used)) + ")", k)


def _array(path, data, name):
    v = data.get(name, [])
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise SceneError(path, name, f"an array of tables ([[{name}]])", v)
    return v


def _apply_overrides(path, data, overrides):
    """Edit the parsed scene with `--set KEY=VALUE` pairs (values parsed as TOML)."""
    for key, raw in (overrides or {}).items():
        where = f"--set {key}"
        try:
            value = tomllib.loads("v = " + raw)["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        parts = key.split(".")
        if len(parts) == 2 and parts[0] in ("world", "solver"):
            data.setdefault(parts[0], {})
            if not isinstance(data[parts[0]], dict):
                raise SceneError(path, where, f"[{parts[0]}] to be a table")
            data[parts[0]][parts[1]] = value
        elif len(parts) == 3 and parts[0] in ("body", "joint", "chain"):
            array = {"body": "bodies", "joint": "joints", "chain": "chains"}[parts[0]]
            entries = [e for e in _array(path, data, array) if e.get("name") == parts[1]]
            if not entries:
                raise SceneError(path, where, f"the name of a {parts[0]} in the scene", parts[1])
            entries[0][parts[2]] = value
        else:
            raise SceneError(path, where, "world.KEY, solver.KEY, body.NAME.KEY, joint.NAME.KEY "
                             "or chain.NAME.KEY", key)


SHAPES = ("box", "sphere", "capsule", "cylinder", "plane")
JOINT_TYPES = ("fixed", "spherical", "revolute", "universal", "prismatic")
POSITIVE = "a positive number"


def _shape(t):
    kind = t.choice("shape", SHAPES, required=True)
    pos = lambda v: v > 0  # noqa: E731
    if kind == "box":
        size = t.get("size", 3, required=True, check=lambda v: min(v) > 0, what="3 positive numbers")
        return Box(tuple(0.5 * s for s in size))
    if kind == "sphere":
        return Sphere(t.get("radius", "number", required=True, check=pos, what=POSITIVE))
    if kind == "plane":
        return Plane()
    r = t.get("radius", "number", required=True, check=pos, what=POSITIVE)
    length = t.get("length", "number", required=True, check=lambda v: v >= 0 if kind == "capsule" else v > 0,
                   what="a number >= 0" if kind == "capsule" else POSITIVE)
    return (Capsule if kind == "capsule" else Cylinder)(r, 0.5 * length)


def _builder_call(path, key, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        raise SceneError(path, key, "a valid value", str(e)) from None


def build_world(path, data):
    """Build a World from parsed scene data (after overrides)."""
    top = _Table(path, "", data)
    for k in ("world", "solver", "view", "bodies", "joints", "chains", "loads"):
        top.used.add(k)
    top.done()
    wt = _Table(path, "world", data.get("world", {}))
    dt = wt.get("dt", "number", 0.003, check=lambda v: 1e-6 <= v <= 0.1, what="a step between 1e-6 and 0.1 s")
    gravity = wt.get("gravity", 3, [0.0, 0.0, -9.81])
    gyro = wt.get("gyroscopic", "bool", False)
    wt.done()
    st = _Table(path, "solver", data.get("solver", {}))
    kind = st.choice("kind", ("penalty", "impulse"), "penalty")
    world = World(dt=dt, gravity=gravity, gyroscopic=gyro, solver=kind)
    world.penalty_preset = st.choice("penalty_preset", ("paper", "critical"), "paper")
    coeff = {k: st.get(k, "number", check=lambda v: v >= 0, what="a number >= 0")
             for k in ("alpha_lin", "beta_lin", "alpha_rot", "beta_rot", "kappa", "zeta")}
    world.set_penalty_coefficients(**coeff)
    imp = {}
    for k, kind_, what in (("iterations", "int", None), ("epsilon", "number", None),
                           ("time_cap_ms", "number", None), ("warm_start", "bool", None),
                           ("erp", "number", None), ("substeps", "int", None),
                           ("position_iterations", "int", None)):
        imp[k] = st.get(k, kind_)
    imp["stabilization"] = st.choice("stabilization", ("split", "baumgarte", "none"))
    for k, v in imp.items():
        if v is not None:
            _builder_call(path, f"solver.{k}", world.set_impulse_settings, **{k: v})
    st.done()
    view = data.get("view", {})
    vt = _Table(path, "view", view)
    world.view = {k: vt.get(k, 3) for k in ("eye", "target") if vt.has(k)}
    vt.done()

    for i, entry in enumerate(_array(path, data, "bodies")):
        t = _Table(path, f"bodies[{i}]", entry)
        name = t.get("name", "str", required=True)
        if name == "world" or name in world._body_index:
            raise SceneError(path, t.key("name"), "a unique body name (not 'world')", name)
        shape = _shape(t)
        static = t.get("static", "bool", False)
        mass = t.get("mass", "number", check=lambda v: v > 0, what=POSITIVE)
        density = t.get("density", "number", check=lambda v: v > 0, what=POSITIVE)
        if not static and (mass is None) == (density is None):
            raise SceneError(path, t.key("mass"), "exactly one of mass and density (or static = true)")
        if shape.kind == "plane" and not static:
            raise SceneError(path, t.key("static"), "true for a plane", False)
        if t.has("rotation_deg") and t.has("orientation"):
            raise SceneError(path, t.key("orientation"), "either rotation_deg or orientation, not both")
        quat = t.get("orientation", 4, check=lambda v: any(v), what="a quaternion [x, y, z, w]")
        if quat is None:
            quat = list(q_from_euler_deg(*t.get("rotation_deg", 3, [0.0, 0.0, 0.0])))
        kw = dict(position=t.get("position", 3, [0.0, 0.0, 0.0]), orientation=quat,
                  velocity=t.get("velocity", 3, [0.0, 0.0, 0.0]),
                  angular_velocity=t.get("angular_velocity", 3, [0.0, 0.0, 0.0]),
                  color=t.get("color", 3, [0.7, 0.7, 0.7], check=lambda v: all(0 <= c <= 1 for c in v),
                              what="3 numbers between 0 and 1"),
                  static=static, visual_mesh=t.get("visual_mesh", "str"))
        t.done()
        _builder_call(path, t.where, world.add_body, name, shape, mass=None if static else mass,
                      density=None if static else density, **kw)

    for i, entry in enumerate(_array(path, data, "chains")):
        t = _Table(path, f"chains[{i}]", entry)
        kw = dict(name=t.get("name", "str", required=True),
                  links=t.get("links", "int", 10, check=lambda v: 1 <= v <= 100000, what="an integer 1-100000"),
                  joint=t.choice("joint", ("revolute", "spherical"), "revolute"),
                  link_length=t.get("link_length", "number", 0.1, check=lambda v: v > 0, what=POSITIVE),
                  radius=t.get("radius", "number", 0.02, check=lambda v: v > 0, what=POSITIVE),
                  mass=t.get("mass", "number", 0.1, check=lambda v: v > 0, what=POSITIVE),
                  origin=t.get("origin", 3, [0.0, 0.0, 0.0]),
                  direction=t.get("direction", 3, [1.0, 0.0, 0.0], check=any, what="a non-zero vector"),
                  axis=t.get("axis", 3, [0.0, 1.0, 0.0], check=any, what="a non-zero vector"),
                  parent=t.get("parent", "str", "world"),
                  color=t.get("color", 3, [0.85, 0.55, 0.2]))
        t.done()
        if kw["parent"] not in world._body_index:
            raise SceneError(path, t.key("parent"), "'world' or the name of a body", kw["parent"])
        _builder_call(path, t.where, make_chain, world, **kw)

    for i, entry in enumerate(_array(path, data, "joints")):
        t = _Table(path, f"joints[{i}]", entry)
        name = t.get("name", "str", required=True)
        if name in world._joint_index:
            raise SceneError(path, t.key("name"), "a unique joint name", name)
        jtype = t.choice("type", JOINT_TYPES, required=True)
        ends = {}
        for role in ("parent", "child"):
            b = t.get(role, "str", required=True)
            if b not in world._body_index:
                raise SceneError(path, t.key(role), "'world' or the name of a body", b)
            ends[role] = b
        rng = lambda v: v[0] <= v[1]  # noqa: E731
        lim = t.get("limits_deg", 2, check=rng, what="[lo, hi] with lo <= hi")
        lim2 = t.get("limits2_deg", 2, check=rng, what="[lo, hi] with lo <= hi")
        lim_m = t.get("limits", 2, check=rng, what="[lo, hi] with lo <= hi (m)")
        swing = t.get("swing_deg", "number", check=lambda v: 0 < v <= 180, what="an angle in (0, 180]")
        twist = t.get("twist_deg", 2, check=rng, what="[lo, hi] with lo <= hi")
        if lim_m is not None and jtype != "prismatic":
            raise SceneError(path, t.key("limits"), "limits_deg (limits in metres are for prismatic joints)")
        if lim is not None and jtype == "prismatic":
            raise SceneError(path, t.key("limits_deg"), "limits = [lo, hi] in metres for a prismatic joint")
        kw = dict(anchor=t.get("anchor", 3, required=True),
                  axis=t.get("axis", 3, [1.0, 0.0, 0.0], check=any, what="a non-zero vector"),
                  axis2=t.get("axis2", 3),
                  limits=lim_m if jtype == "prismatic" else (None if lim is None else [math.radians(x) for x in lim]),
                  limits2=None if lim2 is None else [math.radians(x) for x in lim2],
                  swing=None if swing is None else math.radians(swing),
                  twist=None if twist is None else [math.radians(x) for x in twist],
                  friction=t.get("friction", "number", 0.0, check=lambda v: v >= 0, what="a number >= 0"))
        motor = t.choice("motor", ("off", "velocity", "position"), "off")
        target = t.get("motor_target", "number")
        target_deg = t.get("motor_target_deg", "number")
        if target is not None and target_deg is not None:
            raise SceneError(path, t.key("motor_target_deg"), "either motor_target or motor_target_deg")
        if target is None:
            target = math.radians(target_deg) if target_deg is not None else 0.0
        mkw = dict(max_force=t.get("motor_max", "number", 0.0, check=lambda v: v >= 0, what="a number >= 0"),
                   frequency=t.get("motor_frequency", "number", 20.0, check=lambda v: v > 0, what=POSITIVE),
                   damping=t.get("motor_damping", "number", 1.0, check=lambda v: v >= 0, what="a number >= 0"))
        t.done()
        joint = _builder_call(path, t.where, world.add_joint, name, jtype, ends["parent"], ends["child"], **kw)
        if motor != "off":
            _builder_call(path, t.key("motor"), joint.set_motor, motor, target, **mkw)

    for i, entry in enumerate(_array(path, data, "loads")):
        t = _Table(path, f"loads[{i}]", entry)
        body = t.get("body", "str", required=True)
        if body not in world._body_index or body == "world":
            raise SceneError(path, t.key("body"), "the name of a body", body)
        kw = dict(force=t.get("force", 3, [0.0, 0.0, 0.0]), torque=t.get("torque", 3, [0.0, 0.0, 0.0]),
                  point=t.get("point", 3), start=t.get("start", "number", 0.0),
                  end=t.get("end", "number", math.inf) if t.has("end") else math.inf)
        t.done()
        _builder_call(path, t.where, world.add_load, body, **kw)
    world.scene_path = str(path)
    return world


def load_scene(path, overrides=None):
    """Read, override, check and build a scene file; raises SceneError on any problem."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise SceneError(path, "(file)", "a readable scene file", e.strerror) from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise SceneError(path, "(file)", "UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise SceneError(path, "(syntax)", "valid TOML", str(e)) from None
    _apply_overrides(path, data, overrides)
    return build_world(path, data)
