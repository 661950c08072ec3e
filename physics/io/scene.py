"""Scene files (TOML) → World, through the public builder API only.

A scene file is data: it cannot run code. It is parsed with tomllib, edited by the
`--set` overrides, checked, then built with World(...), add_body, make_chain,
add_joint, add_load. Every problem raises one `SceneError` whose message is one line
naming the file, the key path and what was expected, e.g.

    scenes/door.toml: joints[0].type: expected one of fixed, spherical, revolute, universal, prismatic, got "hinged"

Unknown keys are errors (they are usually typos), and so are keys that do not apply
(a `radius` on a box, `swing_deg` on a revolute joint). Numbers must be finite (TOML
has `nan` and `inf`) and at most 1e15 in magnitude (MAX_MAGNITUDE); shape dimensions
(size, radius, length) lie between 1e-6 and 1e6 m (physics/shapes.py); vectors are
lists of exactly 3 (or 4) numbers; arrays and tables nest at most 16 deep (MAX_NESTING).

Schema (lengths m, masses kg, times s; angles in degrees where the key ends in
`_deg`, radians in the Python API). Everything is optional unless marked required.

    [world]
    dt = 0.003                     # fixed step, 1e-6 … 0.1
    gravity = [0, 0, -9.81]
    gyroscopic = false             # add the ω×Iω term

    [solver]
    kind = FAMILY                  # a solver family of physics/solvers FAMILIES (default: its first)
    NAME = VALUE                   # any setting of any family, by its name: each family's SETTINGS
                                   # (physics/solvers/FAMILY/settings.py: type, range, unit, meaning)
    # Every solver's settings are kept, so a world can switch solver at any time.

    [contacts]                     # physics/contacts.py
    enabled = true                 # bodies collide with each other and the ground
    margin = 0.02                  # m: contacts are found while the gap is below this
    slop = 0.002                   # m: penetration left to resting contacts
    restitution_threshold = 0.2    # m/s: slower impacts come to rest instead of bouncing

    [view]                         # for the viewer, as world.view = {"eye": …, "target": …}
    eye = [x, y, z]
    target = [x, y, z]

    [[bodies]]
    name = "door"                  # required, unique, not "world"
    shape = "box"                  # required: box | sphere | capsule | cylinder | plane | convex | compound
    size = [0.9, 0.04, 2.0]        # box (required): FULL extents
    radius = 0.1                   # sphere, capsule, cylinder (required)
    length = 0.5                   # capsule: cylindrical part (>= 0); cylinder: height (required)
    mesh = "meshes/rock.obj"       # convex, compound (required): a mesh file (OBJ, STL), found and
                                   # jailed as visual_mesh is; convex: the hull of its vertices;
                                   # compound: one hull per connected part (V-HACD pieces).
                                   # position and orientation then place the mesh's own frame:
                                   # the body sits at the hull's centre of mass, turned to its
                                   # principal axes (physics/shapes.py); velocity is its centre's
    mass = 10.0                    # or density = 1000.0 (kg/m³): exactly one, unless static; masses
                                   # 1e-6 … 1e12 kg, densities 1e-3 … 1e5 kg/m³, the heaviest dynamic
                                   # body at most 1e8 times the lightest (physics/bounds.py says why)
    static = false                 # a plane must be static; mass/density are ignored when static
    position = [0, 0, 1]
    rotation_deg = [0, 0, 90]      # about world x, then y, then z — or orientation = [x, y, z, w]
    velocity = [0, 0, 0]
    angular_velocity = [0, 0, 0]   # rad/s, world frame
    color = [0.8, 0.5, 0.2]        # rgb, 0 … 1
    friction = 0.5                 # contact friction μ (a pair takes √(μa μb))
    restitution = 0.0              # 0 … 1 (a pair takes the larger)
    collide = true                 # false: touches nothing
    visual_mesh = "door.obj"       # a mesh the viewer draws instead of the shape (OBJ, STL): a
                                   # path relative to the scene file's folder, or to the
                                   # project's assets/ (also "assets/…"); it must stay inside
                                   # one of those folders, absolute paths included

    [[chains]]                     # physics.builders.make_chain(world, **keys)
    name = "pendulum"              # required; links are bodies NAME_0 … NAME_{n-1},
                                   # joints NAME_j0 … NAME_j{n-1}
    links = 10                     # 1 … 100000
    joint = "revolute"             # "revolute" | "spherical"
    link_length = 0.1              # centre to centre
    radius = 0.02
    mass = 0.1                     # per link
    origin = [0, 0, 2]             # the first joint
    direction = [1, 0, 0]          # along which the links are laid out
    axis = [0, 1, 0]               # revolute axis
    parent = "world"               # "world" or a body
    color = [0.85, 0.55, 0.2]

    [[joints]]
    name = "hinge"                 # required, unique
    type = "revolute"              # required: fixed | spherical | revolute | universal | prismatic
    parent = "world"               # required: "world" or a body (a chain link too)
    child = "door"                 # required: a body other than the parent
    anchor = [0, 0, 1]             # required, world coordinates at load time
    axis = [0, 0, 1]               # hinge / slide / universal first / spherical twist axis
    axis2 = [0, 1, 0]              # universal only (required there), perpendicular to axis
                                   # (within 1e-3 after normalising; then made exact)
    limits_deg = [-30, 120]        # revolute, universal first axis
    limits2_deg = [-45, 45]        # universal second axis
    limits = [-0.2, 0.3]           # prismatic (m)
    swing_deg = 40                 # spherical cone half-angle, (0, 180]
    twist_deg = [-30, 30]          # spherical twist range
    friction = 20.0                # N·m (N for prismatic), >= 0; not on fixed joints
    damping = 0.0                  # viscous: N·m·s/rad (N·s/m for prismatic), >= 0; not on fixed joints
    motor = "off"                  # revolute, prismatic: "off" | "velocity" | "position"
    motor_target = 0.0             # rad/s, rad, m/s or m — or motor_target_deg (revolute)
    motor_max = 0.0                # N·m or N
    motor_frequency = 20.0         # Hz (position servo)
    motor_damping = 1.0            # damping ratio (position servo)

    [[loads]]                      # a scripted push, World.add_load
    body = "door"                  # required
    force = [0, 0, 0]              # N, world frame
    torque = [0, 0, 0]             # N·m, world frame
    point = [x, y, z]              # where the force acts (world, at load time); default the centre
    start = 0.0
    end = 0.33                     # default: forever

    [[ropes]]                      # a Cosserat rope (seed 002), physics/rope/
    name = "tow"                   # required, unique (not a body's name)
    start = [x, y, z]              # required: the rope is laid straight from start …
    end = [x, y, z]                # … to end (required); its rest length is the distance
    segments = 28                  # 1 … 5000
    radius = 0.015                 # m
    density = 1200.0               # kg/m³
    E = 0.05e6                     # Pa, bending (K11 = K22 = Eπr⁴/4)
    G = 0.1e6                      # Pa, twist (K33 = Gπr⁴/2)
    damping = 0.0                  # s, Kelvin-Voigt retardation time of bending and twist
    friction = 0.5                 # Coulomb μ on the ground (z = 0)
    ground = true                  # contact with the ground on/off
    color = [0.85, 0.75, 0.45]
    start_attach = "robot"         # "world" or a body: the end is pinned there; default free
    end_attach = "cart"
    start_clamp = false            # also hold the end element's orientation (built-in end)
    end_clamp = false

    [[motor_events]]               # a motor program: at `time` set the joint's motor target
    joint = "drive_x"              # required: a revolute or prismatic joint (the ones with a motor)
    time = 4.0                     # required, s
    target = 0.5                   # rad/s, rad, m/s or m — or target_deg (exactly one)
    mode = "velocity"              # optional: also switch the mode

    [[robots]]                     # a URDF robot (physics/io/urdf.py says what is read, and how)
    name = "arm"                   # required, unique; its bodies are ARM/LINK, its joints ARM/JOINT
                                   # (the URDF's names), like any others in --set, CSV and plots
    urdf = "robots/kuka_iiwa/model.urdf"   # required: as visual_mesh (the scene's folder or assets/)
    search_path = ["robots"]       # folders for package:// mesh paths, after the URDF's own (as urdf)
    position = [0, 0, 0]           # the root link's frame
    rotation_deg = [0, 0, 0]       # or orientation = [x, y, z, w]
    fixed_base = true              # the root link (and what is welded to it) is static
    servo = "position"             # "position": each movable joint a position servo holding its
                                   # initial position, limited to the URDF's effort; "off": limp
    servo_frequency = 30.0         # Hz (every servo of the robot)
    servo_damping = 1.0            # damping ratio
    [robots.joints.lbr_iiwa_joint_2]   # per joint, by its URDF name (all keys optional)
    q_deg = 30                     # initial position, degrees — or q (rad, or m on a prismatic joint)
    friction = 1.0                 # N·m or N: instead of the URDF's <dynamics friction>
    damping = 0.5                  # N·m·s/rad or N·s/m: instead of <dynamics damping>
    max_force = 100.0              # N·m or N: the servo's limit instead of the URDF's effort
    servo_frequency = 40.0         # this joint's servo
    servo_damping = 0.7
    [robots.arm]                   # a Cartesian target for the tip (physics/arm_control.py)
    tip = "lbr_iiwa_link_7"        # required: the URDF link that carries the tip
    tip_offset = [0, 0, 0.045]     # the tip point in that link's frame (m)
    gripper = "drive_joint"        # a movable joint that opens and closes (its mimic joints follow)
    gripper_open = 0.0             # its positions (rad or m; default its lower and upper limit)
    gripper_closed = 0.85
    gripper_force = 2.0            # N·m or N: its servo's limit (default its effort)
    period = 0.01                  # s between control ticks
    gain = 20.0                    # 1/s: the tip's error closes at this rate
    damping = 0.05                 # m: λ of the damped least-squares step
    max_speed = 1.0                # m/s: the tip's commanded speed at most
    lookahead = 0.04               # s: the error is the target's from the tip predicted this far ahead (gain·lookahead < 1)
    program_period = 12.0          # s: the program repeats (default: it runs once)
    [[robots.program]]             # the tip's program: at `time` be at `target` (linear between)
    time = 1.0                     # required, s
    target = [0.3, 0.0, 0.3]       # world point (m); a key with only `gripper` moves nothing
    rotation_deg = [180, 0, 0]     # the tip frame's orientation (as a body's; default: free)
    gripper = "closed"             # "open" | "closed": switch the gripper at `time`

Bodies are added in file order, then chains, then robots, then joints (so a joint may
attach to a chain link or a robot's link), then loads, ropes and motor events. Limits need lo <= hi.

A URDF file given instead of a scene (`python app.py robot.urdf`) loads as a default
scene: a floor, the robot on it with its base fixed, named after the URDF's <robot name>
(raised when its moving links reach below the floor at the zero pose, as the xArm's
gripper does, until they clear it by 1 cm).

Overrides (`--set KEY=VALUE`, or `load_scene(path, {"KEY": "VALUE"})`) edit the parsed
file before it is checked; keys name things the way the CSV does:

    world.KEY   solver.KEY   view.KEY   body.NAME.KEY   joint.NAME.KEY   chain.NAME.KEY   rope.NAME.KEY
    robot.NAME.KEY   joint.ROBOT/JOINT.KEY (a [robots.joints.JOINT] key: friction, q_deg, …)

A value is parsed as a TOML value (`[0, 0, -1.62]`, `20`, `true`, `"x"`); when that
fails it is taken as a plain string (`solver.penalty_preset=critical`). A non-string
value in the dict is used as it is. An error about an overridden key names the
override (`--set joint.hinge.limits_deg: …`).
"""
import difflib
import json
import math
import os
import tomllib

import numpy as np

from .. import bounds
from ..builders import make_chain
from ..contacts import CONTACT_SETTINGS
from ..quat import q_from_euler_deg, q_to_matrix
from ..settings import DT, GYROSCOPIC
from ..shapes import MAX_SIZE, MIN_SIZE, Box, Capsule, Cylinder, Plane, Sphere
from ..solvers import DEFAULT_FAMILY, FAMILIES
from ..world import World
from .mesh_shapes import compound_from_mesh, convex_from_mesh

SHAPES = ("box", "sphere", "capsule", "cylinder", "plane", "convex", "compound")
JOINT_TYPES = ("fixed", "spherical", "revolute", "universal", "prismatic")
TABLES = ("world", "solver", "contacts", "view", "bodies", "chains", "robots", "joints", "loads", "ropes",
          "motor_events")
NOT_YET = {}                # planned tables the engine lacks so far
BODY_NOT_YET = {"contact_friction": "no contact_friction (a body's contact friction coefficient is `friction`)"}

WORLD_KEYS = ("dt", "gravity", "gyroscopic")


def solver_keys():
    """The [solver] table's keys: kind, then every registered family's settings."""
    return ("kind",) + tuple(dict.fromkeys(s.name for family in FAMILIES.values() for s in family.SETTINGS))


VIEW_KEYS = ("eye", "target")
BODY_KEYS = ("name", "shape", "size", "radius", "length", "mass", "density", "static", "position",
             "rotation_deg", "orientation", "velocity", "angular_velocity", "color", "visual_mesh", "friction",
             "restitution", "collide", "mesh")
CONTACT_KEYS = tuple(s.name for s in CONTACT_SETTINGS)
CHAIN_KEYS = ("name", "links", "joint", "link_length", "radius", "mass", "origin", "direction", "axis",
              "parent", "color")
MOTOR_KEYS = ("motor", "motor_target", "motor_target_deg", "motor_max", "motor_frequency", "motor_damping")
JOINT_KEYS = (("name", "type", "parent", "child", "anchor", "axis", "axis2", "limits_deg", "limits2_deg",
               "limits", "swing_deg", "twist_deg", "friction", "damping") + MOTOR_KEYS)
LOAD_KEYS = ("body", "force", "torque", "point", "start", "end")
ROPE_KEYS = ("name", "start", "end", "segments", "radius", "density", "E", "G", "damping", "friction", "ground",
             "color", "start_attach", "end_attach", "start_clamp", "end_clamp")
EVENT_KEYS = ("joint", "time", "target", "target_deg", "mode")
ROBOT_KEYS = ("name", "urdf", "search_path", "position", "rotation_deg", "orientation", "fixed_base", "servo",
              "servo_frequency", "servo_damping", "joints", "arm", "program")
ARM_KEYS = ("tip", "tip_offset", "gripper", "gripper_open", "gripper_closed", "gripper_force", "period", "gain",
            "damping", "max_speed", "lookahead", "program_period")
PROGRAM_KEYS = ("time", "target", "rotation_deg", "gripper")
ROBOT_JOINT_KEYS = ("q", "q_deg", "friction", "damping", "max_force", "servo_frequency", "servo_damping")
URDF_SUFFIXES = (".urdf",)
MOTOR_JOINTS = ("revolute", "prismatic")

# which shapes / joint types a key applies to
SHAPE_ONLY = {"size": ("box",), "radius": ("sphere", "capsule", "cylinder"), "length": ("capsule", "cylinder"),
              "mesh": ("convex", "compound")}
JOINT_ONLY = {"axis2": ("universal",), "limits_deg": ("revolute", "universal"), "limits2_deg": ("universal",),
              "limits": ("prismatic",), "swing_deg": ("spherical",), "twist_deg": ("spherical",),
              **{k: ("spherical", "revolute", "universal", "prismatic") for k in ("friction", "damping")},
              "motor_target_deg": ("revolute",),
              **{k: ("revolute", "prismatic") for k in MOTOR_KEYS if k != "motor_target_deg"}}
JOINT_HINTS = {("limits_deg", "prismatic"): "limits = [lo, hi] in metres on a prismatic joint",
               ("limits", "revolute"): "limits_deg on a revolute joint (limits in metres are for prismatic joints)",
               ("limits", "universal"): "limits_deg and limits2_deg on a universal joint",
               ("limits_deg", "spherical"): "swing_deg and twist_deg on a spherical joint"}

POSITIVE = "a positive number"
NON_NEGATIVE = "a number >= 0"
MAX_MAGNITUDE = 1e15     # no number in a scene is larger (in absolute value): keeps the arithmetic finite
MAX_NESTING = 16         # arrays and tables nest at most this deep (a scene needs 4)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASSETS = os.path.join(ROOT, "assets")
MESH_SUFFIXES = (".obj", ".stl")


def show(value, limit=80):
    """A value as the scene file would spell it (strings in double quotes), shortened."""
    if isinstance(value, bool):
        s = "true" if value else "false"
    elif isinstance(value, int) and value.bit_length() > 128:
        try:
            digits = str(len(str(abs(value))))
        except ValueError:              # more digits than Python will print
            digits = "thousands of"
        s = f"{'a negative' if value < 0 else 'an'} integer of {digits} digits"
    elif isinstance(value, str):
        s = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, float):
        s = repr(value) if math.isfinite(value) else ("nan" if value != value else ("inf" if value > 0 else "-inf"))
    elif isinstance(value, (list, tuple)):
        s = "[" + ", ".join(show(v, limit) for v in value) + "]"
    elif isinstance(value, dict):
        s = "{ " + ", ".join(f"{k} = {show(v, limit)}" for k, v in value.items()) + " }"
    else:
        s = str(value)
    return s if len(s) <= limit else s[:limit - 1] + "…"


class SceneError(Exception):
    """A problem with a scene file or an override, as one line:
    `FILE: KEY_PATH: expected EXPECTED[, got GOT]`."""

    def __init__(self, path, key, expected, got=None):
        self.path, self.key, self.expected, self.got = str(path), key, expected, got
        msg = f"{self.path}: {key}: expected {expected}"
        if got is not None:
            msg += f", got {show(got)}"
        super().__init__(" ".join(msg.split("\n")))

    def with_key(self, key):
        return SceneError(self.path, key, self.expected, self.got)


def _known_keys(known, got):
    """What an unknown key should have been, for its error: every key the table knows, or,
    when they are many (a [solver] table holds every family's settings), how many there
    are, the ones spelled most like it and where they are all listed (one readable line)."""
    known = list(known)
    if len(known) <= 16:
        return "a known key (" + ", ".join(known) + ")"
    close = difflib.get_close_matches(str(got), known, n=4, cutoff=0.5)
    return (f"a known key (one of {len(known)}, listed in the docstring of physics/io/scene.py"
            + (f"; spelled like it: {', '.join(close)}" if close else "") + ")")


class _Table:
    """A TOML table read with type checks; the keys read are `used`, the rest are errors."""

    def __init__(self, path, where, data, known, not_yet=None):
        if not isinstance(data, dict):
            raise SceneError(path, where, "a table", data)
        self.path, self.where, self.data, self.known = path, where, data, known
        self.used = set()
        for k in data:              # typos first, before any check that depends on other keys
            if k not in known:
                if not_yet and k in not_yet:
                    raise self.error(k, not_yet[k])
                raise self.error(k, _known_keys(known, k), k)

    def key(self, k):
        return f"{self.where}.{k}" if self.where else k

    def has(self, k):
        return k in self.data

    def error(self, k, expected, got=None):
        return SceneError(self.path, self.key(k), expected, got)

    def get(self, k, kind, default=None, required=False, check=None, what=None):
        """kind: "number", "int", "bool", "str" or n (a vector of n numbers)."""
        self.used.add(k)
        if k not in self.data:
            if required:
                raise self.error(k, f"{what or _KIND_WORDS.get(kind, f'a list of {kind} numbers')}; "
                                    "the key is missing")
            return default
        raw = v = self.data[k]
        if kind in ("number", "int"):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind == "int" and not isinstance(v, int)):
                raise self.error(k, what or _KIND_WORDS[kind], raw)
            if kind == "number":
                if not (isinstance(v, int) or math.isfinite(v)):
                    raise self.error(k, what or "a finite number", raw)
                if abs(v) > MAX_MAGNITUDE:
                    self._too_large(k, raw, check, what, _clip(v))
                v = float(v)
        elif kind == "bool":
            if not isinstance(v, bool):
                raise self.error(k, "true or false", raw)
        elif kind == "str":
            if not isinstance(v, str) or not v:
                raise self.error(k, what or "a non-empty string", raw)
        else:  # a vector of `kind` numbers
            if (not isinstance(v, list) or len(v) != kind
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)):
                raise self.error(k, what or f"a list of {kind} numbers", raw)
            if not all(isinstance(x, int) or math.isfinite(x) for x in v):
                raise self.error(k, what or f"a list of {kind} finite numbers", raw)
            if any(abs(x) > MAX_MAGNITUDE for x in v):
                self._too_large(k, raw, check, what or f"a list of {kind} numbers",
                                [_clip(x) for x in v], "each ")
            v = [float(x) for x in v]
        if check is not None and not check(v):
            raise self.error(k, what, raw)
        return v

    def _too_large(self, k, raw, check, what, value, each=""):
        """Refuse a number beyond MAX_MAGNITUDE: with the key's own wording when its check
        fails too (a radius of 1e300 is not between 1e-6 and 1e6), else saying the bound."""
        if check is not None and what and not check(value):
            raise self.error(k, what, raw)
        raise self.error(k, f"{what or 'a number'} {each}at most {MAX_MAGNITUDE:g} in magnitude", raw)

    def choice(self, k, options, default=None, required=False, unavailable=()):
        """A string among `options`; one of `unavailable` is named as not available yet."""
        expected = "one of " + ", ".join(options)
        v = self.get(k, "str", default, required, what=expected)
        if v is not None and v not in options:
            if v in unavailable:
                expected += f" ({v} is not available yet)"
            raise self.error(k, expected, v)
        return v

    def done(self, inapplicable=None):
        """Refuse keys that were not read: typos, or keys that do not apply here."""
        for k in self.data:
            if k in self.used:
                continue
            if inapplicable and k in inapplicable:
                raise self.error(k, inapplicable[k])
            raise self.error(k, _known_keys(self.known, k), k)


_KIND_WORDS = {"number": "a number", "int": "an integer", "bool": "true or false", "str": "a string"}


def _array(path, data, name):
    v = data.get(name, [])
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise SceneError(path, name, f"an array of tables ([[{name}]])", v)
    return v


def _clip(v):
    """A number as a float, huge integers clipped to ±1e300 (float() would overflow)."""
    return float(v) if abs(v) < 1e300 else (1e300 if v > 0 else -1e300)


def _positive(v):
    return v > 0


MASS = f"a mass between {bounds.MASS_MIN:g} and {bounds.MASS_MAX:g} kg (physics/bounds.py)"
DENSITY = f"a density between {bounds.DENSITY_MIN:g} and {bounds.DENSITY_MAX:g} kg/m³ (physics/bounds.py)"


def _mass(v):
    return bounds.in_range(v, bounds.MASS_MIN, bounds.MASS_MAX)


def _density(v):
    return bounds.in_range(v, bounds.DENSITY_MIN, bounds.DENSITY_MAX)


def _nonneg(v):
    return v >= 0


def _range(v):
    return v[0] <= v[1]


def _nonzero(v):
    return any(v)


def _rgb(v):
    return all(0.0 <= c <= 1.0 for c in v)


def _builder_call(path, key, what, fn, *args, **kwargs):
    """Call the World builder; a ValueError it raises becomes a SceneError at `key`."""
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        raise SceneError(path, key, f"{what} the engine accepts ({e})") from None


def _too_deep(value):
    """The key (the innermost table key, without the array indices below it) of the first
    array or table nested more than MAX_NESTING deep in `value` (parsed TOML), or None.
    Iterative: deep data must not exhaust the stack."""
    stack = [(value, 0, "")]
    while stack:
        v, depth, key = stack.pop()
        if depth >= MAX_NESTING:
            return key or "(top level)"
        for k, x in (v.items() if isinstance(v, dict) else enumerate(v)):
            if isinstance(x, (list, dict)):
                inner = (f"{key}.{k}" if key else str(k)) if isinstance(v, dict) else key
                stack.append((x, depth + 1, inner))
    return None


# ---------------------------------------------------------------------------- overrides
_ARRAYS = {"body": "bodies", "joint": "joints", "chain": "chains", "rope": "ropes", "robot": "robots"}
_TOO_DEEP = object()     # an override value nested too deep to parse


def parse_override_value(raw):
    """`--set` value → Python: a TOML value, or the raw string when it is not one."""
    if not isinstance(raw, str):
        return raw
    try:
        return tomllib.loads("v = " + raw)["v"]
    except (tomllib.TOMLDecodeError, KeyError, ValueError):  # ValueError: an integer of > 4300 digits
        return raw.strip()
    except RecursionError:               # nested too deep to parse: refused as such by _apply_overrides
        return _TOO_DEEP


def _apply_overrides(path, data, overrides):
    """Edit the parsed scene with `--set KEY=VALUE` pairs. Returns {key path in the file
    data: override key} so that errors about those values can name the override."""
    provenance = {}
    for key, raw in (overrides or {}).items():
        where = f"--set {key}"
        value = parse_override_value(raw)
        if value is _TOO_DEEP or _too_deep([value]) is not None:
            raise SceneError(path, where, f"a value whose arrays and tables nest at most {MAX_NESTING - 1} deep")
        parts = key.split(".")
        head = parts[0]
        if head in ("world", "solver", "view") and len(parts) == 2 and parts[1]:
            table = data.setdefault(head, {})
            if not isinstance(table, dict):
                raise SceneError(path, where, f"[{head}] in the scene to be a table", table)
            table[parts[1]] = value
            provenance[f"{head}.{parts[1]}"] = where
        elif head in _ARRAYS and len(parts) >= 3 and all(parts):
            name, k = ".".join(parts[1:-1]), parts[-1]
            array = _ARRAYS[head]
            entries = _array(path, data, array)
            found = [i for i, e in enumerate(entries) if e.get("name") == name]
            robot, _, rjoint = name.partition("/")
            robots = [i for i, e in enumerate(_array(path, data, "robots")) if e.get("name") == robot]
            if not found and rjoint and robots and head == "joint":     # a robot's joint: its [robots.joints.J]
                entry = data["robots"][robots[0]]
                joints = entry.setdefault("joints", {})
                if not isinstance(joints, dict) or not isinstance(joints.setdefault(rjoint, {}), dict):
                    raise SceneError(path, where, f"robots[{robots[0]}].joints to be a table of tables", joints)
                joints[rjoint][k] = value
                provenance[f"robots[{robots[0]}].joints.{rjoint}.{k}"] = where
                continue
            if not found and rjoint and robots and head == "body":
                raise SceneError(path, where, f"the name of a body in the scene (robot {show(robot)}'s links "
                                              "come from its URDF)", name)
            if not found:
                expected = f"the name of a {head} in the scene"
                chains = [c.get("name") for c in _array(path, data, "chains")]
                if head in ("body", "joint") and any(isinstance(c, str) and name.startswith(c + "_")
                                                     for c in chains):
                    expected += " (chain links and their joints are set with chain.NAME.KEY)"
                raise SceneError(path, where, expected, name)
            entries[found[0]][k] = value
            provenance[f"{array}[{found[0]}].{k}"] = where
        else:
            raise SceneError(path, where, "world.KEY, solver.KEY, view.KEY, body.NAME.KEY, joint.NAME.KEY, "
                             "chain.NAME.KEY, rope.NAME.KEY or robot.NAME.KEY", key)
    return provenance


# ---------------------------------------------------------------------------- tables
def _world_and_solver(path, data):
    wt = _Table(path, "world", data.get("world", {}), WORLD_KEYS)
    dt = _setting(wt, DT)
    gravity = wt.get("gravity", 3, [0.0, 0.0, -9.81])
    gyro = _setting(wt, GYROSCOPIC)
    wt.done()
    st = _Table(path, "solver", data.get("solver", {}), solver_keys())
    kind = st.choice("kind", tuple(FAMILIES), DEFAULT_FAMILY)
    world = World(dt=DT.default if dt is None else dt, gravity=gravity, gyroscopic=bool(gyro), solver=kind)
    for family, solver in FAMILIES.items():          # every family's settings (physics/settings.py)
        for s in solver.SETTINGS:
            v = _setting(st, s)
            if v is not None:
                _builder_call(path, f"solver.{s.name}", "a value", world.configure, family, **{s.name: v})
    st.done()
    ct = _Table(path, "contacts", data.get("contacts", {}), CONTACT_KEYS)
    for s in CONTACT_SETTINGS:
        v = _setting(ct, s)
        if v is not None:
            world.configure_contacts(**{s.name: v})
    ct.done()
    return world


def _setting(table, setting):
    """The value of a schema Setting in a table (None when absent), checked against
    its type and range."""
    if setting.kind == "choice":
        return table.choice(setting.name, setting.choices)
    kind = {"float": "number", "int": "int", "bool": "bool"}[setting.kind]
    check = None if setting.kind == "bool" else (lambda v: setting.lo <= v <= setting.hi)
    return table.get(setting.name, kind, check=check, what=setting.expected)


def _view(path, data):
    vt = _Table(path, "view", data.get("view", {}), VIEW_KEYS)
    view = {k: vt.get(k, 3) for k in VIEW_KEYS if vt.has(k)}
    vt.done()
    return view


def _dimension(low, high):
    """Check and wording for a shape dimension between `low` and `high` (m)."""
    return (lambda v: low <= v <= high), f"a positive number between {low:g} and {high:g} (m)"


def _shape(t, scene_path):
    kind = t.choice("shape", SHAPES, required=True)
    lo, hi = MIN_SIZE, MAX_SIZE
    if kind in ("convex", "compound"):
        mesh = _jailed_path(t, "mesh", scene_path, MESH_SUFFIXES, "a mesh file", "an OBJ or STL file", required=True)
        if not os.path.isfile(mesh):
            raise t.error("mesh", "an existing mesh file", t.get("mesh", "str"))
        try:
            shape = (convex_from_mesh if kind == "convex" else compound_from_mesh)(mesh)
        except ValueError as e:
            raise t.error("mesh", f"a mesh whose {'vertices span' if kind == 'convex' else 'parts span'} "
                                  f"a solid ({e})", t.get("mesh", "str")) from None
    elif kind == "box":
        size = t.get("size", 3, required=True, check=lambda v: all(2 * lo <= x <= 2 * hi for x in v),
                     what=f"3 positive numbers between {2 * lo:g} and {2 * hi:g} (m, full extents)")
        shape = Box(tuple(0.5 * s for s in size))
    elif kind == "sphere":
        shape = Sphere(t.get("radius", "number", required=True, check=_dimension(lo, hi)[0],
                             what=_dimension(lo, hi)[1]))
    elif kind == "plane":
        shape = Plane()
    else:
        r = t.get("radius", "number", required=True, check=_dimension(lo, hi)[0], what=_dimension(lo, hi)[1])
        if kind == "capsule":
            length = t.get("length", "number", required=True, check=lambda v: v == 0 or 2 * lo <= v <= 2 * hi,
                           what=f"0 or a number between {2 * lo:g} and {2 * hi:g} (m)")
            shape = Capsule(r, 0.5 * length)
        else:
            length = t.get("length", "number", required=True, check=_dimension(2 * lo, 2 * hi)[0],
                           what=_dimension(2 * lo, 2 * hi)[1])
            shape = Cylinder(r, 0.5 * length)
    inapplicable = {k: f"no {k} on a {kind} ({k} is for {', '.join(s)})"
                    for k, s in SHAPE_ONLY.items() if kind not in s}
    return shape, inapplicable


def _body(path, world, i, entry):
    t = _Table(path, f"bodies[{i}]", entry, BODY_KEYS, BODY_NOT_YET)
    name = t.get("name", "str", required=True)
    if name == "world" or world.has_body(name):
        raise t.error("name", 'a unique body name (not "world")', name)
    shape, inapplicable = _shape(t, path)
    static = t.get("static", "bool", False)
    mass = t.get("mass", "number", check=_mass, what=MASS)
    density = t.get("density", "number", check=_density, what=DENSITY)
    if shape.kind == "plane" and not static:
        raise t.error("static", "true for a plane (planes cannot move)", static if t.has("static") else None)
    if not static and (mass is None) == (density is None):
        raise t.error("mass", "exactly one of mass and density (or static = true)")
    if t.has("rotation_deg") and t.has("orientation"):
        raise t.error("orientation", "either rotation_deg or orientation, not both")
    quat = t.get("orientation", 4, check=_nonzero, what="a quaternion [x, y, z, w], not all zero")
    if quat is None:
        quat = [float(c) for c in q_from_euler_deg(*t.get("rotation_deg", 3, [0.0, 0.0, 0.0]))]
    position = t.get("position", 3, [0.0, 0.0, 0.0])
    if hasattr(shape, "body_pose"):         # the mesh's frame given: the body at the hull's centre
        position, quat = (v.tolist() for v in shape.body_pose(position, quat))
    kw = dict(position=position, orientation=quat,
              velocity=t.get("velocity", 3, [0.0, 0.0, 0.0]),
              angular_velocity=t.get("angular_velocity", 3, [0.0, 0.0, 0.0]),
              color=t.get("color", 3, [0.7, 0.7, 0.7], check=_rgb, what="3 numbers between 0 and 1"),
              static=static, visual_mesh=_visual_mesh(t, path),
              friction=t.get("friction", "number", 0.5, check=lambda v: 0.0 <= v <= 1e3,
                             what="a number between 0 and 1000"),
              restitution=t.get("restitution", "number", 0.0, check=lambda v: 0.0 <= v <= 1.0,
                                what="a number between 0 and 1"),
              collide=t.get("collide", "bool", True))
    t.done(inapplicable)
    _builder_call(path, t.where, "a body", world.add_body, name, shape, mass=None if static else mass,
                  density=None if static else density, **kw)


def _inside(path, folder):
    """Whether the resolved `path` lies inside the resolved `folder`."""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:           # different drives
        return False


def _visual_mesh(t, scene_path):
    """The body's visual_mesh as an absolute path inside the scene file's folder or the
    project's assets/ (_jailed_path), or None."""
    return _jailed_path(t, "visual_mesh", scene_path, MESH_SUFFIXES, "a mesh file", "an OBJ or STL file")


def _jailed_path(t, key, scene_path, suffixes, noun, kind, required=False):
    """The file named by `key` as an absolute path inside the scene file's folder or the
    project's assets/ (symbolic links followed), or None. Relative paths are looked up
    in the scene's folder, then in assets/, then from the project root ("assets/…").
    The first of those that exists decides; if it lies outside both folders (through
    "..", an absolute path or a link) the path is refused before any reader sees it —
    nothing is opened here. A missing file is its reader's to report.
    `suffixes=None` asks for a folder."""
    raw = t.get(key, "str", required=required)
    if raw is None:
        return None
    if "\0" in raw:
        raise t.error(key, "a file path", raw)
    scene_dir = os.path.realpath(os.path.dirname(os.path.abspath(str(scene_path))))
    allowed = (os.path.realpath(ASSETS),) if scene_dir == os.path.dirname(scene_dir) else \
        (scene_dir, os.path.realpath(ASSETS))           # a scene at the file-system root opens nothing but assets/
    if os.path.isabs(raw):
        candidates = [raw]
    else:
        candidates = [os.path.join(scene_dir, raw), os.path.join(ASSETS, raw), os.path.join(ROOT, raw)]
    found = None
    for c in candidates:              # the first that exists decides (stat only, nothing is opened)
        if os.path.lexists(c):
            found = os.path.realpath(c)
            if not any(_inside(found, a) for a in allowed):
                found = None          # it exists, but outside (through "..", an absolute path or a link)
            break
    else:                             # none exists: its reader will say so, if the path stays inside
        found = next((os.path.realpath(c) for c in candidates
                      if any(_inside(os.path.realpath(c), a) for a in allowed)), None)
    if found is None:
        raise t.error(key, f"{noun} inside the scene's folder or the project's assets/ "
                           "(paths may not leave them)", raw)
    if suffixes is not None and os.path.splitext(raw)[1].lower() not in suffixes:
        raise t.error(key, f"the path of {kind} (" + ", ".join(suffixes) + ")", raw)
    return found


def _chain(path, world, i, entry):
    t = _Table(path, f"chains[{i}]", entry, CHAIN_KEYS)
    kw = dict(name=t.get("name", "str", required=True),
              links=t.get("links", "int", 10, check=lambda v: 1 <= v <= 100000, what="an integer 1-100000"),
              joint=t.choice("joint", ("revolute", "spherical"), "revolute"),
              link_length=t.get("link_length", "number", 0.1, check=_dimension(MIN_SIZE, 2 * MAX_SIZE)[0],
                                what=_dimension(MIN_SIZE, 2 * MAX_SIZE)[1]),
              radius=t.get("radius", "number", 0.02, check=_dimension(MIN_SIZE, MAX_SIZE)[0],
                           what=_dimension(MIN_SIZE, MAX_SIZE)[1]),
              mass=t.get("mass", "number", 0.1, check=_mass, what=MASS),
              origin=t.get("origin", 3, [0.0, 0.0, 0.0]),
              direction=t.get("direction", 3, [1.0, 0.0, 0.0], check=_nonzero, what="a non-zero vector"),
              axis=t.get("axis", 3, [0.0, 1.0, 0.0], check=_nonzero, what="a non-zero vector"),
              parent=t.get("parent", "str", "world"),
              color=t.get("color", 3, [0.85, 0.55, 0.2], check=_rgb, what="3 numbers between 0 and 1"))
    t.done()
    if not world.has_body(kw["parent"]):
        raise t.error("parent", '"world" or the name of a body', kw["parent"])
    name, n = kw["name"], kw["links"]
    clash = next((f"{name}_{k}" for k in range(n) if world.has_body(f"{name}_{k}")), None)
    clash = clash or next((f"{name}_j{k}" for k in range(n) if world.has_joint(f"{name}_j{k}")), None)
    if clash is not None:
        raise t.error("name", f"a name whose links {name}_0 … {name}_{n - 1} (and joints {name}_j0 …) "
                              f"are new, but {show(clash)} exists", name)
    _builder_call(path, t.where, "a chain", make_chain, world, **kw)


def _robot(path, world, i, entry):
    from .urdf import MOVABLE, add_robot, read_urdf
    t = _Table(path, f"robots[{i}]", entry, ROBOT_KEYS)
    name = t.get("name", "str", required=True)
    if "/" in name or name in getattr(world, "robots", {}) or world.has_body(name):
        raise t.error("name", 'a unique robot name without "/"', name)
    if not t.has("urdf"):
        raise t.error("urdf", "the path of a URDF file; the key is missing")
    urdf = _jailed_path(t, "urdf", path, URDF_SUFFIXES, "a URDF file", "a URDF file")
    search = t.data.get("search_path", [])
    t.used.add("search_path")
    if not isinstance(search, list):
        raise t.error("search_path", "a list of folders", search)
    folders = []
    for k, raw in enumerate(search):
        sub = _Table(path, t.where, {f"search_path[{k}]": raw}, (f"search_path[{k}]",))
        folders.append(_jailed_path(sub, f"search_path[{k}]", path, None, "a folder", "a folder"))
    if t.has("rotation_deg") and t.has("orientation"):
        raise t.error("orientation", "either rotation_deg or orientation, not both")
    quat = t.get("orientation", 4, check=_nonzero, what="a quaternion [x, y, z, w], not all zero")
    if quat is None:
        quat = [float(c) for c in q_from_euler_deg(*t.get("rotation_deg", 3, [0.0, 0.0, 0.0]))]
    kw = dict(position=t.get("position", 3, [0.0, 0.0, 0.0]), orientation=quat,
              fixed_base=t.get("fixed_base", "bool", True),
              servo={"mode": t.choice("servo", ("position", "off"), "position"),
                     "frequency": t.get("servo_frequency", "number", 30.0, check=_positive, what=POSITIVE),
                     "damping": t.get("servo_damping", "number", 1.0, check=_nonneg, what=NON_NEGATIVE)})
    joints = t.data.get("joints", {})
    t.used.update(("joints", "arm", "program"))      # arm, program: read by _arm
    if not isinstance(joints, dict):
        raise t.error("joints", "a table of joint tables ([robots.joints.JOINT])", joints)
    t.done()
    model = read_urdf(urdf, folders)
    movable = [j for j, spec in model.joints.items() if spec.kind in MOVABLE]
    per = {"joint_positions": {}, "friction": {}, "damping": {}, "max_force": {}, "servo_joint": {}}
    for jname, entry_j in joints.items():
        jt = _Table(path, f"{t.where}.joints.{jname}", entry_j, ROBOT_JOINT_KEYS)
        spec = model.joints.get(jname)
        if spec is None or spec.kind not in MOVABLE:
            raise t.error(f"joints.{jname}", f"the name of a movable joint of {show(model.name)} (one of "
                                             f"{', '.join(movable)})", jname)
        q, q_deg = jt.get("q", "number"), jt.get("q_deg", "number")
        if q is not None and q_deg is not None:
            raise jt.error("q_deg", "either q or q_deg, not both")
        if q_deg is not None and spec.kind == "prismatic":
            raise jt.error("q_deg", "q (m) on a prismatic joint")
        if q_deg is not None:
            q = math.radians(q_deg)
        if q is not None:
            if spec.lower is not None and not spec.lower - 1e-12 <= q <= spec.upper + 1e-12:
                key, lo, hi = ("q", spec.lower, spec.upper) if q_deg is None else \
                    ("q_deg", math.degrees(spec.lower), math.degrees(spec.upper))
                raise jt.error(key, f"a position within the joint's limits [{lo:g}, {hi:g}]",
                               q if q_deg is None else q_deg)
            per["joint_positions"][jname] = q
        for k, check, what in (("friction", _nonneg, NON_NEGATIVE), ("damping", _nonneg, NON_NEGATIVE),
                               ("max_force", _nonneg, NON_NEGATIVE)):
            v = jt.get(k, "number", check=check, what=what)
            if v is not None:
                per[k][jname] = v
        gains = {k: jt.get(f"servo_{k}", "number", check=c, what=w)
                 for k, c, w in (("frequency", _positive, POSITIVE), ("damping", _nonneg, NON_NEGATIVE))}
        gains = {k: v for k, v in gains.items() if v is not None}
        if gains:
            per["servo_joint"][jname] = gains
        jt.done()
    robot = _builder_call(path, t.where, "a robot", add_robot, world, model, name, search_path=tuple(folders),
                          **kw, **per)
    if "arm" in entry or "program" in entry:
        _arm(path, world, t.where, robot, entry)


def _arm(path, world, where, robot, entry):
    from ..arm_control import attach_arm
    at = _Table(path, f"{where}.arm", entry.get("arm", {}), ARM_KEYS)
    tip = at.get("tip", "str", required=True, what="the name of a link of the robot")
    if tip not in robot.model.links:
        raise at.error("tip", f"the name of a link of {show(robot.model.name)}", tip)
    kw = {"tip_offset": at.get("tip_offset", 3, [0.0, 0.0, 0.0])}
    gripper = at.get("gripper", "str")
    if gripper is not None:
        if gripper not in robot.initial:
            raise at.error("gripper", f"the name of a movable joint of {show(robot.model.name)}", gripper)
        kw["gripper"] = gripper
    for k in ("gripper_open", "gripper_closed"):
        v = at.get(k, "number")
        if v is not None:
            if gripper is None:
                raise at.error(k, "a gripper joint first (gripper = JOINT)")
            kw[k] = v
    v = at.get("gripper_force", "number", check=_nonneg, what=NON_NEGATIVE)
    if v is not None:
        kw["gripper_force"] = v
    for k in ("period", "gain", "damping", "max_speed", "lookahead"):
        v = at.get(k, "number", check=_positive, what=POSITIVE)
        if v is not None:
            kw[k] = v
    period = at.get("program_period", "number", check=_positive, what=POSITIVE)
    at.done()
    program = entry.get("program", [])
    if not isinstance(program, list):
        raise SceneError(path, f"{where}.program", "an array of tables ([[robots.program]])", program)
    keys = []
    for k, raw in enumerate(program):
        pt = _Table(path, f"{where}.program[{k}]", raw, PROGRAM_KEYS)
        time = pt.get("time", "number", required=True, check=_nonneg, what=NON_NEGATIVE)
        target = pt.get("target", 3)
        rot = pt.get("rotation_deg", 3)
        if rot is not None and target is None:
            raise pt.error("rotation_deg", "a target with it (a rotation goes with a point)")
        grip = pt.choice("gripper", ("open", "closed"))
        if grip is not None and gripper is None:
            raise pt.error("gripper", "a gripper joint in the arm table (gripper = JOINT)")
        if target is None and grip is None:
            raise pt.error("target", "a target or a gripper command; both are missing")
        pt.done()
        R = None if rot is None else q_to_matrix(q_from_euler_deg(*rot))
        keys.append((time, target, R, grip, rot))
    if period is not None and keys and not period > max(k[0] for k in keys):
        raise at.error("program_period", "a period longer than the program's last time", period)
    arm = _builder_call(path, f"{where}.arm", "an arm", attach_arm, world, robot, tip,
                        program=[k[:4] for k in keys] or None, program_period=period, **kw)
    arm.program_source = [(k[0], k[1], k[4], k[3]) for k in keys]      # as written (Save scene as…)


def _joint(path, world, i, entry):
    t = _Table(path, f"joints[{i}]", entry, JOINT_KEYS)
    name = t.get("name", "str", required=True)
    if world.has_joint(name):
        raise t.error("name", "a unique joint name", name)
    jtype = t.choice("type", JOINT_TYPES, required=True)
    for k in t.data:
        if k in JOINT_ONLY and jtype not in JOINT_ONLY[k]:
            t.used.add(k)
            raise t.error(k, JOINT_HINTS.get((k, jtype),
                                             f"no {k} on a {jtype} joint ({k} is for {', '.join(JOINT_ONLY[k])})"))
    ends = {}
    for role in ("parent", "child"):
        b = t.get(role, "str", required=True)
        if not world.has_body(b):
            raise t.error(role, '"world" or the name of a body', b)
        ends[role] = b
    if ends["parent"] == ends["child"]:
        raise t.error("child", "a body other than the parent", ends["child"])
    lim = t.get("limits_deg", 2, check=_range, what="[lo, hi] with lo <= hi")
    lim2 = t.get("limits2_deg", 2, check=_range, what="[lo, hi] with lo <= hi")
    lim_m = t.get("limits", 2, check=_range, what="[lo, hi] (m) with lo <= hi")
    swing = t.get("swing_deg", "number", check=lambda v: 0 < v <= 180, what="an angle in (0, 180]")
    twist = t.get("twist_deg", 2, check=_range, what="[lo, hi] with lo <= hi")
    axis = t.get("axis", 3, [1.0, 0.0, 0.0], check=_nonzero, what="a non-zero vector")
    if jtype == "universal" and not t.has("axis2"):
        raise t.error("axis2", "a second axis [x, y, z], perpendicular to axis (a universal joint needs one); "
                               "the key is missing")
    axis2 = t.get("axis2", 3, check=_nonzero, what="a non-zero vector")
    if axis2 is not None:
        n0 = np.asarray(axis) / np.linalg.norm(axis)
        n1 = np.asarray(axis2) / np.linalg.norm(axis2)
        if abs(n0 @ n1) > 1e-3:
            raise t.error("axis2", f"a vector perpendicular to axis {show(axis)}", t.data["axis2"])
        n1 = n1 - (n0 @ n1) * n0
        axis2 = list(n1 / np.linalg.norm(n1))
    rad = lambda v: None if v is None else [math.radians(x) for x in v]  # noqa: E731
    kw = dict(anchor=t.get("anchor", 3, required=True), axis=axis, axis2=axis2,
              limits=lim_m if jtype == "prismatic" else rad(lim), limits2=rad(lim2),
              swing=None if swing is None else math.radians(swing), twist=rad(twist),
              friction=t.get("friction", "number", 0.0, check=_nonneg, what=NON_NEGATIVE),
              damping=t.get("damping", "number", 0.0, check=_nonneg, what=NON_NEGATIVE))
    motor = t.choice("motor", ("off", "velocity", "position"), "off")
    target = t.get("motor_target", "number")
    target_deg = t.get("motor_target_deg", "number")
    if target is not None and target_deg is not None:
        raise t.error("motor_target_deg", "either motor_target or motor_target_deg, not both")
    if target is None:
        target = math.radians(target_deg) if target_deg is not None else 0.0
    mkw = dict(max_force=t.get("motor_max", "number", 0.0, check=_nonneg, what=NON_NEGATIVE),
               frequency=t.get("motor_frequency", "number", 20.0, check=_positive, what=POSITIVE),
               damping=t.get("motor_damping", "number", 1.0, check=_nonneg, what=NON_NEGATIVE))
    t.done()
    joint = _builder_call(path, t.where, "a joint", world.add_joint, name, jtype, ends["parent"], ends["child"],
                          **kw)
    if motor != "off":
        _builder_call(path, t.key("motor"), "a motor", joint.set_motor, motor, target, **mkw)


def _load(path, world, i, entry):
    t = _Table(path, f"loads[{i}]", entry, LOAD_KEYS)
    body = t.get("body", "str", required=True)
    if not world.has_body(body) or body == "world":
        raise t.error("body", "the name of a body", body)
    start = t.get("start", "number", 0.0)
    end = t.get("end", "number", check=lambda v: v > start, what=f"a time after start ({start:g} s)")
    kw = dict(force=t.get("force", 3, [0.0, 0.0, 0.0]), torque=t.get("torque", 3, [0.0, 0.0, 0.0]),
              point=t.get("point", 3), start=start, end=math.inf if end is None else end)
    t.done()
    _builder_call(path, t.where, "a load", world.add_load, body, **kw)


def _rope(path, world, i, entry):
    from ..rope import Rope
    t = _Table(path, f"ropes[{i}]", entry, ROPE_KEYS)
    name = t.get("name", "str", required=True)
    if name in world.ropes or world.has_body(name):
        raise t.error("name", "a unique name (not a body's)", name)
    start = t.get("start", 3, required=True)
    end = t.get("end", 3, required=True)
    if np.linalg.norm(np.subtract(end, start)) < 1e-6:
        raise t.error("end", "a point away from start", t.data["end"])
    kw = dict(segments=t.get("segments", "int", 28, check=lambda v: 1 <= v <= 5000, what="an integer 1-5000"),
              radius=t.get("radius", "number", 0.015, check=_dimension(MIN_SIZE, MAX_SIZE)[0],
                           what=_dimension(MIN_SIZE, MAX_SIZE)[1]),
              density=t.get("density", "number", 1200.0, check=_density, what=DENSITY),
              E=t.get("E", "number", 0.05e6, check=_nonneg, what="a modulus >= 0 (Pa)"),
              G=t.get("G", "number", 0.1e6, check=_nonneg, what="a modulus >= 0 (Pa)"),
              damping=t.get("damping", "number", 0.0, check=_nonneg, what="a time >= 0 (s)"),
              friction=t.get("friction", "number", 0.5, check=_nonneg, what=NON_NEGATIVE),
              ground=t.get("ground", "bool", True))
    color = t.get("color", 3, [0.85, 0.75, 0.45], check=_rgb, what="3 numbers between 0 and 1")
    ends = []
    for end_name, node in (("start", 0), ("end", -1)):
        body = t.get(f"{end_name}_attach", "str")
        clamp = t.get(f"{end_name}_clamp", "bool", False)
        if body is not None and not world.has_body(body):
            raise t.error(f"{end_name}_attach", '"world" or the name of a body', body)
        if clamp and body is None:
            raise t.error(f"{end_name}_clamp", f"{end_name}_attach (only an attached end can be clamped)")
        ends.append((end_name, node, body, clamp))
    t.done()
    rope = _builder_call(path, t.where, "a rope", Rope.straight, start, end, **kw)
    world.add_rope(name, rope, color=color)
    for end_name, node, body, clamp in ends:
        if body is not None:
            _builder_call(path, t.key(f"{end_name}_attach"), "an attachment", world.attach_rope, name, node,
                          body=body, clamp=clamp)


def _motor_event(path, world, i, entry):
    t = _Table(path, f"motor_events[{i}]", entry, EVENT_KEYS)
    joint = t.get("joint", "str", required=True)
    if not world.has_joint(joint):
        raise t.error("joint", "the name of a joint", joint)
    kind = world.joint(joint).kind
    if kind not in MOTOR_JOINTS:
        raise t.error("joint", f"a revolute or prismatic joint (the kinds with a motor), got {show(joint)}, "
                               f"a {kind} joint")
    time = t.get("time", "number", required=True, check=_nonneg, what="a time >= 0 (s)")
    target, target_deg = t.get("target", "number"), t.get("target_deg", "number")
    if (target is None) == (target_deg is None):
        raise t.error("target", "exactly one of target and target_deg")
    mode = t.choice("mode", ("off", "velocity", "position"))
    t.done()
    _builder_call(path, t.where, "a motor event", world.add_motor_event, joint, time,
                  math.radians(target_deg) if target is None else target, mode=mode)


def build_world(path, data):
    """Build a World from parsed scene data (after overrides); raises SceneError."""
    for k in data:
        if k not in TABLES:
            if k in NOT_YET:
                raise SceneError(path, k, f"one of the tables {', '.join(TABLES)}; "
                                          f"{NOT_YET[k]} are not supported yet")
            raise SceneError(path, k, f"one of the tables {', '.join(TABLES)}", k)
    world = _world_and_solver(path, data)
    view = _view(path, data)
    for array, add in (("bodies", _body), ("chains", _chain), ("robots", _robot), ("joints", _joint),
                       ("loads", _load), ("ropes", _rope), ("motor_events", _motor_event)):
        for i, entry in enumerate(_array(path, data, array)):
            add(path, world, i, entry)
    world.view = view
    world.scene_path = str(path)
    return world


def urdf_scene(path):
    """The scene data of a URDF opened on its own: a floor, the robot (named after its
    <robot name>, base fixed, servos holding its zero pose) and a view from the front
    left; the default solver family at Δt = 2 ms. A robot whose links reach below its
    base at the zero pose (the xArm's gripper points down past it) stands raised until
    they clear the floor by 1 cm: otherwise the floor would push them against the servos."""
    from .urdf import add_robot, lowest_point, read_urdf
    model = read_urdf(path)
    name = model.name.replace("/", "_")
    scratch = World()
    low = lowest_point(scratch, add_robot(scratch, model, name))
    robot = {"name": name, "urdf": os.path.abspath(str(path))}
    if low < 0.0:
        robot["position"] = [0.0, 0.0, round(0.01 - low, 4)]
    return {"world": {"dt": 0.002}, "solver": {"kind": DEFAULT_FAMILY},
            "view": {"eye": [1.6, -2.2, 1.3], "target": [0.0, 0.0, 0.5]},
            "bodies": [{"name": "floor", "shape": "plane", "static": True}],
            "robots": [robot]}


def load_scene(path, overrides=None):
    """Read a scene file, apply `overrides` ({KEY: VALUE}, as `--set`), check it and
    build the World. Raises SceneError (one line naming file and key) on any problem.
    A URDF file loads as a default scene (urdf_scene)."""
    if str(path).lower().endswith(URDF_SUFFIXES):
        return _built(path, urdf_scene(path), overrides)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise SceneError(path, "(file)", "a readable scene file", e.strerror or str(e)) from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise SceneError(path, "(file)", "UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise SceneError(path, "(syntax)", "valid TOML", str(e)) from None
    except RecursionError:
        raise SceneError(path, "(syntax)", f"arrays and tables nested at most {MAX_NESTING} deep "
                                           "(this file nests them too deep to read)") from None
    except ValueError as e:              # e.g. an integer of more than 4300 digits
        raise SceneError(path, "(syntax)", "valid TOML", str(e)) from None
    deep = _too_deep(data)
    if deep is not None:
        raise SceneError(path, deep, f"arrays and tables nested at most {MAX_NESTING} deep")
    return _built(path, data, overrides)


def _built(path, data, overrides):
    """The World of the scene data with `overrides` applied; an error in an overridden
    value names the --set key that gave it."""
    provenance = _apply_overrides(path, data, overrides)
    try:
        return build_world(path, data)
    except SceneError as e:
        if e.key in provenance:
            raise e.with_key(provenance[e.key]) from None
        raise
