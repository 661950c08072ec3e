"""URDF robot files → bodies and joints of a World.

    model = read_urdf("assets/robots/kuka_iiwa/model.urdf")       # checked, nothing built, no mesh opened
    robot = add_robot(world, model, "arm", position=(0, 0, 0), joint_positions={"lbr_iiwa_joint_2": 0.5})
    world.joint("arm/lbr_iiwa_joint_2").angle, world.body("arm/lbr_iiwa_link_7").position

The reader is a small one on the standard library's xml.etree, not yourdfpy: we need
the file's own numbers and one-line errors naming the element (yourdfpy validates
loosely and logs), a mesh-path jail applied before any file is opened (yourdfpy resolves
and loads meshes through its own handlers), and no lxml (a 5 MB compiled dependency) for
the ~300 lines of URDF we read. A DOCTYPE is refused (no entities are ever expanded).

What is read, and what it becomes (URDF conventions: link frames, joint origin =
the child's frame in the parent's at q = 0, axis in that frame, rpy = fixed-axis
roll-pitch-yaw, R = Rz(y) Ry(p) Rx(r)):

- `<link>` with `<inertial>` (origin, mass, the six inertia numbers) → a body of that mass
  placed at the centre of mass; its axes are the tensor's principal axes (eigenvectors
  in the inertial frame, made right-handed), its inertia the principal moments
  (Body.inertia): bodies here are always centred, with a diagonal inertia.
  A tensor that is not positive definite is refused; one breaking the triangle
  inequality (A + B ≥ C) is loaded with a warning.
- A massless link (no `<inertial>`, or mass 0) welded by a fixed joint is fused into its
  parent (its visuals, collisions and child joints move there); a massless link on a
  movable joint is refused (nothing would carry its motion).
- `fixed_base`: the root link is static, and so is every link welded to it by fixed
  joints (their masses then play no part); otherwise the root moves freely.
- `<joint>` revolute → revolute with limits [lower, upper]; continuous → revolute
  without limits; prismatic → prismatic with limits; fixed → fixed (between two moving
  bodies; two static ones need nothing). Joint anchors and axes go to the World in world
  coordinates at q = 0; `joint_positions` then moves the bodies to the initial pose.
  `<limit effort>` → the servo's force limit (N·m or N), `velocity` kept as data;
  `<dynamics friction>` → the joint's Coulomb friction (seed 001), `<dynamics damping>` →
  its viscous damping (Joint.damping, physics/solvers/damping.py). `<mimic>` (q_b = m q_a + o)
  → a coupling row between the two joints (World.add_coupling, solved by every family);
  the follower gets no servo of its own.
- `<visual>`: meshes (STL, OBJ, DAE) and primitives with their origin, scale and
  material colour (a named `<material>` of the robot or an inline `<color>`) →
  VisualPart tuples the viewer draws (physics/visual.py). A link without visuals is
  drawn with its collision geometry, and a link with neither is not drawn.
- `<collision>`: a single box, sphere, cylinder or capsule centred on the body's centre
  of mass and aligned with its principal axes becomes the body's shape; anything else
  (offset primitives, several pieces, meshes) a Compound in the body frame
  (`collision_shape`): a mesh is read here (trimesh) as convex pieces, one per connected
  part for a V-HACD set of 2 to 16 parts, else the hull of all its vertices, each hull
  thinned to 96 vertices (physics/io/mesh_shapes.link_pieces). A mesh that cannot be read
  leaves its link touching nothing, said in one warning. The links of one robot never
  touch one another (World.keep_apart: their meshes meet around the joints); they touch
  everything else. A link without collision geometry gets a box around the link (its
  origin, its child joints' origins), collide = false: what picking and the outline use.

Mesh paths: relative to the URDF's folder, `package://PKG/…` as FOLDER/PKG/… for FOLDER in
the URDF's folder and then the search path, `file://` as a path. The first that exists
decides; it must lie inside one of those folders (symbolic links followed) or the
URDF is refused — nothing outside is ever opened; only collision meshes are read here (the
viewer reads the visual ones). A mesh that does not exist is the viewer's to report.

Elements this reader does not use (transmission, gazebo, …) are named in one warning
(stderr, `warning: FILE: …`); any broken element raises SceneError (physics/io/scene.py)
naming the file and the element, e.g.
`robot.urdf: joint "elbow" <origin xyz>: expected 3 finite numbers, got "0 nan 0"`.
"""
from dataclasses import dataclass, field
import functools
import math
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np

from ..quat import q_from_matrix, q_to_matrix
from ..shapes import MAX_SIZE, MIN_SIZE, Box, Capsule, Compound, Cylinder, Sphere
from ..visual import MESH_SUFFIXES, VisualPart
from .mesh_shapes import link_pieces
from .scene import SceneError, _inside

JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed")
MOVABLE = ("revolute", "continuous", "prismatic")
MAX_BYTES = 50_000_000          # a URDF larger than this is refused unread
MIN_PROXY = 0.02                # m: the proxy box's smallest half extent
SERVO = {"mode": "position", "frequency": 30.0, "damping": 1.0}    # a robot's servos unless told
_KNOWN = {"robot": {"link", "joint", "material"},
          "link": {"inertial", "visual", "collision"},
          "joint": {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic"}}


# ---------------------------------------------------------------------------- model
@dataclass
class Geometry:
    kind: str                   # box | sphere | cylinder | capsule | mesh
    size: tuple = None          # box: full extents (m)
    radius: float = None
    length: float = None        # cylinder, capsule: full length along z (m)
    mesh: str = None            # absolute path (jailed)
    scale: tuple = (1.0, 1.0, 1.0)


@dataclass
class Link:
    name: str
    mass: float = 0.0
    inertial: np.ndarray = field(default_factory=lambda: np.eye(4))   # inertial frame in the link frame
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about the COM, inertial frame
    visuals: list = field(default_factory=list)      # [(Geometry, 4×4 in the link frame, rgb or None)]
    collisions: list = field(default_factory=list)   # [(Geometry, 4×4 in the link frame)]


@dataclass
class JointSpec:
    name: str
    kind: str                   # revolute | continuous | prismatic | fixed
    parent: str
    child: str
    origin: np.ndarray          # 4×4: the child frame in the parent's at q = 0
    axis: np.ndarray            # unit, in the joint (= child) frame
    lower: float = None
    upper: float = None
    effort: float = None        # N·m or N
    velocity: float = None      # rad/s or m/s
    friction: float = 0.0
    damping: float = 0.0
    mimic: tuple = None         # (leader joint, multiplier, offset)


@dataclass
class RobotModel:
    path: str
    name: str
    links: dict                 # name → Link, in file order
    joints: dict                # name → JointSpec, in file order
    root: str
    warnings: list = field(default_factory=list)


@dataclass
class Robot:
    """A robot built in a World: the names it got and the URDF data the World has no
    place for (the control layer's: mimic, velocity limits) and what it was built with."""
    name: str
    model: RobotModel
    position: tuple
    orientation: tuple
    fixed_base: bool
    search_path: tuple
    bodies: dict                # URDF link → body name (fused links → their carrier's body)
    joints: dict                # URDF joint → World joint name (movable, and fixed between moving bodies)
    initial: dict               # URDF joint → initial position (rad or m)
    effort: dict                # URDF joint → servo force limit (N·m or N)
    friction: dict              # URDF joint → Coulomb friction (N·m or N)
    damping: dict               # URDF joint → viscous damping (N·m·s/rad or N·s/m)
    velocity: dict              # URDF joint → velocity limit (rad/s or m/s)
    mimic: dict                 # follower joint → (leader joint, multiplier, offset)
    servo: dict                 # {"mode", "frequency", "damping"} of the robot's servos
    servo_joint: dict = field(default_factory=dict)   # URDF joint → {"frequency", "damping"} overrides
    arm: object = None          # its Cartesian control (physics/arm_control.attach_arm), if any


# ---------------------------------------------------------------------------- reading
class _Reader:
    def __init__(self, path):
        self.path = path

    def error(self, where, expected, got=None):
        return SceneError(self.path, where, expected, got)

    def numbers(self, el, attr, n, where, default=None, check=None, what=None):
        raw = el.get(attr)
        if raw is None:
            if default is None:
                raise self.error(f"{where} <{el.tag} {attr}>", f"{what or f'{n} numbers'}; the attribute is missing")
            return np.array(default, float)
        try:
            v = np.array([float(x) for x in raw.split()], float)
        except ValueError:
            v = None
        if v is None or v.shape != (n,) or not np.all(np.isfinite(v)) or np.any(np.abs(v) > 1e15):
            raise self.error(f"{where} <{el.tag} {attr}>", what or (f"{n} finite numbers" if n > 1 else
                                                                  "a finite number"), raw)
        if check is not None and not check(v):
            raise self.error(f"{where} <{el.tag} {attr}>", what, raw)
        return v

    def number(self, el, attr, where, default=None, check=None, what=None):
        return float(self.numbers(el, attr, 1, where, None if default is None else [default], check, what)[0])

    def named(self, root, tag):
        """(name, element) of each <tag> child of root, in order, with the name it must have
        and no other of them has."""
        seen = set()
        for el in root.findall(tag):
            name = el.get("name")
            if not name:
                raise self.error(f"<{tag} name>", f"a {tag} name; the attribute is missing")
            if name in seen:
                raise self.error(f'{tag} "{name}"', f"a unique {tag} name", name)
            seen.add(name)
            yield name, el

    def origin(self, parent, where):
        el = parent.find("origin")
        if el is None:
            return np.eye(4)
        xyz = self.numbers(el, "xyz", 3, where, [0.0, 0.0, 0.0])
        rpy = self.numbers(el, "rpy", 3, where, [0.0, 0.0, 0.0])
        return pose(xyz, rpy)


def rpy_matrix(r, p, y):
    """URDF's fixed-axis roll, pitch, yaw: Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def pose(xyz, rpy=(0.0, 0.0, 0.0)):
    t = np.eye(4)
    t[:3, :3] = rpy_matrix(*rpy)
    t[:3, 3] = xyz
    return t


def inverse(t):
    out = np.eye(4)
    out[:3, :3] = t[:3, :3].T
    out[:3, 3] = -t[:3, :3].T @ t[:3, 3]
    return out


def motion(joint, q):
    """The joint's own motion at position q (rad or m), in the joint frame."""
    t = np.eye(4)
    if joint.kind in ("revolute", "continuous"):
        a = joint.axis
        c, s = math.cos(q), math.sin(q)
        k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        t[:3, :3] = np.eye(3) + s * k + (1 - c) * (k @ k)
    elif joint.kind == "prismatic":
        t[:3, 3] = joint.axis * q
    return t


def resolve_mesh(filename, urdf_dir, search_path=()):
    """(absolute path, None) of a mesh reference inside the allowed folders, or
    (None, reason). Nothing is opened: existence is a stat."""
    roots = [os.path.realpath(urdf_dir)] + [os.path.realpath(p) for p in search_path]
    if "\0" in filename:
        return None, "a file path"
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        candidates = [os.path.join(r, rest) for r in roots]
    else:
        if filename.startswith("file://"):
            filename = filename[len("file://"):]
        candidates = [filename if os.path.isabs(filename) else os.path.join(roots[0], filename)]
    found = next((c for c in candidates if os.path.lexists(c)), candidates[0])
    real = os.path.realpath(found)
    if not any(_inside(real, r) for r in roots):
        return None, "a mesh inside the URDF's folder or the search path (paths may not leave them)"
    if os.path.splitext(real)[1].lower() not in MESH_SUFFIXES:
        return None, "an STL, OBJ or DAE mesh (" + ", ".join(MESH_SUFFIXES) + ")"
    return real, None


def _geometry(r, el, where, urdf_dir, search_path):
    g = el.find("geometry")
    if g is None or len(g) == 0:
        raise r.error(f"{where} <geometry>", "one of box, sphere, cylinder, capsule, mesh; the element is missing")
    shape = g[0]
    w = f"{where} <geometry>"
    size_ok = (lambda v: np.all((v >= MIN_SIZE) & (v <= 2 * MAX_SIZE)))
    size_what = f"positive numbers between {MIN_SIZE:g} and {2 * MAX_SIZE:g} (m)"
    if shape.tag == "box":
        return Geometry("box", size=tuple(r.numbers(shape, "size", 3, w, check=size_ok, what="3 " + size_what)))
    if shape.tag == "sphere":
        return Geometry("sphere", radius=r.number(shape, "radius", w, check=size_ok, what="a " + size_what[:-1]))
    if shape.tag in ("cylinder", "capsule"):
        return Geometry(shape.tag, radius=r.number(shape, "radius", w, check=size_ok, what="a " + size_what[:-1]),
                        length=r.number(shape, "length", w, check=size_ok, what="a " + size_what[:-1]))
    if shape.tag == "mesh":
        name = shape.get("filename")
        if not name:
            raise r.error(f"{w} <mesh filename>", "a mesh file name; the attribute is missing")
        path, why = resolve_mesh(name, urdf_dir, search_path)
        if path is None:
            raise r.error(f"{w} <mesh filename>", why, name)
        scale = r.numbers(shape, "scale", 3, w, [1.0, 1.0, 1.0], check=lambda v: np.all(v != 0),
                          what="3 non-zero numbers")
        return Geometry("mesh", mesh=path, scale=tuple(scale))
    raise r.error(w, "one of box, sphere, cylinder, capsule, mesh", shape.tag)


def _color(r, el, where, materials):
    """The rgb of a visual's <material> (inline colour, else the robot's named one), or None."""
    m = el.find("material")
    if m is None:
        return None
    c = m.find("color")
    if c is not None:
        return tuple(r.numbers(c, "rgba", 4, f"{where} <material>", check=lambda v: np.all((v >= 0) & (v <= 1)),
                               what="4 numbers between 0 and 1")[:3])
    return materials.get(m.get("name"))


def _link(r, el, urdf_dir, search_path, materials, unknown):
    name = el.get("name")
    where = f'link "{name}"'
    link = Link(name)
    for child in el:
        if child.tag not in _KNOWN["link"]:
            unknown.append(f"link/{child.tag}")
    inertial = el.find("inertial")
    if inertial is not None:
        wi = f"{where} <inertial>"
        link.inertial = r.origin(inertial, wi)
        m = inertial.find("mass")
        if m is None:
            raise r.error(f"{wi} <mass>", "a mass (kg); the element is missing")
        link.mass = r.number(m, "value", wi, check=lambda v: v[0] >= 0, what="a mass >= 0 (kg)")
        i = inertial.find("inertia")
        if link.mass > 0:
            if i is None:
                raise r.error(f"{wi} <inertia>", "the inertia tensor (ixx ixy ixz iyy iyz izz); the element is missing")
            v = {k: r.number(i, k, wi, 0.0 if k in ("ixy", "ixz", "iyz") else None)
                 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            link.inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                                     [v["ixz"], v["iyz"], v["izz"]]])
            w = np.linalg.eigvalsh(link.inertia)
            if not w[0] > 0:
                raise r.error(f"{wi} <inertia>", "a positive definite inertia tensor",
                              " ".join(f"{k}={v[k]:g}" for k in v))
    for k, vis in enumerate(el.findall("visual")):
        wv = f"{where} <visual>[{k}]"
        link.visuals.append((_geometry(r, vis, wv, urdf_dir, search_path), r.origin(vis, wv),
                             _color(r, vis, wv, materials)))
    for k, col in enumerate(el.findall("collision")):
        wc = f"{where} <collision>[{k}]"
        link.collisions.append((_geometry(r, col, wc, urdf_dir, search_path), r.origin(col, wc)))
    return link


def _joint(r, el, links, unknown):
    name = el.get("name")
    where = f'joint "{name}"'
    kind = el.get("type")
    if kind not in JOINT_KINDS:
        raise r.error(f"{where} type", "one of " + ", ".join(JOINT_KINDS) + " (floating and planar joints are not "
                                       "supported)", kind)
    for child in el:
        if child.tag not in _KNOWN["joint"]:
            unknown.append(f"joint/{child.tag}")
    ends = {}
    for role in ("parent", "child"):
        e = el.find(role)
        if e is None or not e.get("link"):
            raise r.error(f"{where} <{role} link>", "the name of a link; the element is missing")
        if e.get("link") not in links:
            raise r.error(f"{where} <{role} link>", "the name of a link of this robot", e.get("link"))
        ends[role] = e.get("link")
    if ends["parent"] == ends["child"]:
        raise r.error(f"{where} <child link>", "a link other than the parent", ends["child"])
    spec = JointSpec(name, kind, ends["parent"], ends["child"], r.origin(el, where), np.array([1.0, 0.0, 0.0]))
    ax = el.find("axis")
    if ax is not None and kind != "fixed":
        a = r.numbers(ax, "xyz", 3, where, [1.0, 0.0, 0.0], check=lambda v: np.linalg.norm(v) > 1e-12,
                      what="3 finite numbers, not all zero")
        spec.axis = a / np.linalg.norm(a)
    lim = el.find("limit")
    if kind in ("revolute", "prismatic") and lim is None:
        raise r.error(f"{where} <limit>", f"lower, upper, effort and velocity (required on a {kind} joint); "
                                          "the element is missing")
    if lim is not None and kind != "fixed":
        nonneg = dict(check=lambda v: v[0] >= 0, what="a number >= 0")
        spec.effort = r.number(lim, "effort", where, **nonneg)
        spec.velocity = r.number(lim, "velocity", where, **nonneg)
        if kind != "continuous":
            spec.lower = r.number(lim, "lower", where, 0.0)
            spec.upper = r.number(lim, "upper", where, 0.0)
            if spec.lower > spec.upper:
                raise r.error(f"{where} <limit upper>", f"a number >= lower ({spec.lower:g})", lim.get("upper"))
    dyn = el.find("dynamics")
    if dyn is not None and kind != "fixed":
        spec.damping = r.number(dyn, "damping", where, 0.0, check=lambda v: v[0] >= 0, what="a number >= 0")
        spec.friction = r.number(dyn, "friction", where, 0.0, check=lambda v: v[0] >= 0, what="a number >= 0")
    mim = el.find("mimic")
    if mim is not None:
        if not mim.get("joint"):
            raise r.error(f"{where} <mimic joint>", "the name of the joint it follows; the attribute is missing")
        spec.mimic = (mim.get("joint"), r.number(mim, "multiplier", where, 1.0), r.number(mim, "offset", where, 0.0))
    return spec


_CACHE = {}          # (real path, mtime, size, search path) → RobotModel
_WARNED = set()


def warn(path, message):
    """One line on stderr, `warning: FILE: MESSAGE`, once per file and message."""
    if (str(path), message) not in _WARNED:
        _WARNED.add((str(path), message))
        print(f"warning: {path}: {message}", file=sys.stderr)


def read_urdf(path, search_path=()):
    """Read and check a URDF file: a RobotModel (cached per file version). Raises
    SceneError naming the file and the element; prints one warning line for the
    elements it does not use."""
    path = str(path)
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as e:
        raise SceneError(path, "(file)", "a readable URDF file", e.strerror or str(e)) from None
    key = (real, st.st_mtime_ns, st.st_size, tuple(search_path))
    if key in _CACHE:
        return _CACHE[key]
    if st.st_size > MAX_BYTES:
        raise SceneError(path, "(file)", f"a URDF of at most {MAX_BYTES // 1_000_000} MB", f"{st.st_size} bytes")
    try:
        with open(real, "rb") as f:
            text = f.read()
    except OSError as e:
        raise SceneError(path, "(file)", "a readable URDF file", e.strerror or str(e)) from None
    model = _parse(path, text, os.path.dirname(real), tuple(search_path))
    for w in model.warnings:
        warn(path, w)
    _CACHE[key] = model
    return model


def _parse(path, text, urdf_dir, search_path):
    r = _Reader(path)
    if b"<!DOCTYPE" in text or b"<!ENTITY" in text:
        raise r.error("(xml)", "a URDF without a DOCTYPE or entities")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise r.error("(xml)", "well-formed XML", str(e)) from None
    if root.tag != "robot":
        raise r.error(f"<{root.tag}>", "a <robot> element at the top", root.tag)
    unknown = [el.tag for el in root if el.tag not in _KNOWN["robot"]]
    materials = {}
    for m in root.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None:
            materials[m.get("name")] = tuple(r.numbers(c, "rgba", 4, f'material "{m.get("name")}"',
                                                       check=lambda v: np.all((v >= 0) & (v <= 1)),
                                                       what="4 numbers between 0 and 1")[:3])
    links = {}
    for name, el in r.named(root, "link"):
        links[name] = _link(r, el, urdf_dir, search_path, materials, unknown)
    if not links:
        raise r.error("<link>", "at least one link; there is none")
    joints, parent_of = {}, {}
    for name, el in r.named(root, "joint"):
        j = _joint(r, el, links, unknown)
        if j.child in parent_of:
            raise r.error(f'joint "{name}" <child link>', f'a link with one parent joint ("{j.child}" is already '
                                                          f'the child of joint "{parent_of[j.child]}")', j.child)
        parent_of[j.child] = name
        joints[name] = j
    for j in joints.values():
        if j.mimic is not None:
            leader = joints.get(j.mimic[0])
            if leader is None or leader.kind == "fixed" or leader.name == j.name:
                raise r.error(f'joint "{j.name}" <mimic joint>', "the name of another movable joint", j.mimic[0])
    roots = [n for n in links if n not in parent_of]
    if not roots:
        raise r.error(f'joint "{next(iter(joints))}"',
                      "a tree of links (every link is a child: the joints form a cycle)")
    if len(roots) > 1:
        raise r.error(f'link "{roots[1]}"', f'one root link (a tree); "{roots[0]}" and "{roots[1]}" have no parent '
                                            "joint")
    children = _children(joints)
    seen, stack = {roots[0]}, [roots[0]]
    while stack:
        for j in children.get(stack.pop(), ()):
            seen.add(j.child)
            stack.append(j.child)
    if len(seen) != len(links):          # links off the root's tree: they hang on a cycle
        cut = next(n for n in links if n not in seen)
        raise r.error(f'joint "{parent_of[cut]}"', "a tree of links (this joint closes a cycle)")
    warnings = []
    if unknown:
        counts = {}
        for u in unknown:
            counts[u] = counts.get(u, 0) + 1
        warnings.append("elements not used: " + ", ".join(f"{u} (×{n})" if n > 1 else u for u, n in counts.items()))
    bad = [n for n, lk in links.items() if lk.mass > 0 and _triangle_gap(lk.inertia) < 0]
    if bad:
        warnings.append("inertia tensors that break the triangle inequality (A + B >= C): " + ", ".join(bad))
    name = root.get("name") or os.path.splitext(os.path.basename(path))[0]
    return RobotModel(path, name, links, joints, roots[0], warnings)


def _triangle_gap(inertia):
    w = np.linalg.eigvalsh(inertia)
    return w[0] + w[1] - w[2] + 1e-12 * w[2]


def _children(joints):
    out = {}
    for j in joints.values():
        out.setdefault(j.parent, []).append(j)
    return out


# ---------------------------------------------------------------------------- building
def principal_frame(inertia):
    """(R, moments): R's columns the principal axes (a proper rotation), inertia = R diag(moments) Rᵀ."""
    w, v = np.linalg.eigh(inertia)
    if np.linalg.det(v) < 0:
        v[:, 2] = -v[:, 2]
    return v, w


def _fuse(model):
    """The links that carry bodies, after fusing massless links welded by fixed joints
    into their parents: (carrier of each link, {link: [(Geometry, pose in the carrier), …]}
    visuals and collisions, the joints kept, with origins relative to the carriers)."""
    carrier, offset = {model.root: model.root}, {model.root: np.eye(4)}
    kept = []
    order = [model.root]
    children = _children(model.joints)
    for name in order:
        for j in children.get(name, ()):
            child = model.links[j.child]
            if child.mass == 0.0 and j.kind == "fixed":
                carrier[j.child] = carrier[name]
                offset[j.child] = offset[name] @ j.origin
            else:
                if child.mass == 0.0:
                    raise SceneError(model.path, f'link "{j.child}" <inertial>',
                                     f'a positive mass (it moves on {j.kind} joint "{j.name}"; only links welded '
                                     "by a fixed joint may be massless)")
                carrier[j.child] = j.child
                offset[j.child] = np.eye(4)
                kept.append((j, offset[name] @ j.origin))
            order.append(j.child)
    return carrier, offset, kept


def _shape_of(geom):
    if geom.kind == "box":
        return Box(tuple(0.5 * s for s in geom.size))
    if geom.kind == "sphere":
        return Sphere(geom.radius)
    if geom.kind == "cylinder":
        return Cylinder(geom.radius, 0.5 * geom.length)
    if geom.kind == "capsule":
        return Capsule(geom.radius, 0.5 * geom.length)
    return None


def collision_shape(pieces):
    """The body's collision shape from its pieces [(Geometry, 4×4 pose in the body
    frame)]: a single primitive centred on the body frame and aligned with it is itself;
    anything else a Compound in the body frame (meshes as convex pieces: _mesh_pieces).
    ValueError when a mesh cannot be read or spans no solid."""
    if len(pieces) == 1:
        geom, t = pieces[0]
        shape = _shape_of(geom)
        if shape is not None and np.linalg.norm(t[:3, 3]) <= 1e-9 and (
                geom.kind == "sphere" or np.abs(t[:3, :3] - np.eye(3)).max() <= 1e-9):
            return shape
    placed = []
    for geom, t in pieces:
        pose = (t[:3, 3], q_from_matrix(t[:3, :3]))
        if geom.kind == "mesh":
            placed.extend((c, *pose) for c in _mesh_pieces(geom.mesh, tuple(geom.scale)))
        else:
            placed.append((_shape_of(geom), *pose))
    return Compound(placed, frame=((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)))


@functools.lru_cache(maxsize=256)
def _mesh_pieces(path, scale):
    """mesh_shapes.link_pieces, read once per file and scale (the shapes are immutable)."""
    return tuple(link_pieces(path, scale))


def _visual_part(geom, t, rgb):
    """A visual (Geometry at pose t in the body frame, colour) as a VisualPart."""
    kw = dict(position=tuple(float(x) for x in t[:3, 3]),
              orientation=tuple(float(x) for x in q_from_matrix(t[:3, :3])),
              color=None if rgb is None else tuple(float(c) for c in rgb))
    if geom.kind == "mesh":
        return VisualPart(mesh=geom.mesh, scale=tuple(float(s) for s in geom.scale), **kw)
    return VisualPart(shape=_shape_of(geom), **kw)


def _forward(model, kept, carrier, base, joint_positions):
    """World pose (4×4) of every carrier link at the given joint positions."""
    poses = {model.root: base}
    for j, origin in kept:          # parents come first (breadth-first order)
        poses[j.child] = poses[carrier[j.parent]] @ origin @ motion(j, joint_positions.get(j.name, 0.0))
    return poses


def add_robot(world, model, name, position=(0.0, 0.0, 0.0), orientation=(0.0, 0.0, 0.0, 1.0), fixed_base=True,
              joint_positions=None, friction=None, damping=None, max_force=None, servo=None, servo_joint=None,
              search_path=(), color=(0.7, 0.7, 0.7)):
    """Build `model` (read_urdf) in `world` as bodies NAME/LINK and joints NAME/JOINT.

    position, orientation: the root link's frame in the world; fixed_base: the root
    (and what is welded to it) is static. joint_positions {URDF joint: rad or m}: the
    initial pose (a mimic follower not given follows its leader). friction, damping,
    max_force {URDF joint: value}: override the URDF's <dynamics> and effort. servo
    {"mode", "frequency", "damping"} (SERVO's defaults for what is left out): mode
    "position": every movable joint a position servo (World motors) holding its initial
    position, of `frequency` Hz and damping ratio `damping`, limited to the effort
    (servo_joint {URDF joint: {"frequency", "damping"}} per joint); "off": limp.
    Returns the Robot (also in world.robots[name]). Raises SceneError / ValueError."""
    servo = {**SERVO, **(servo or {})}
    if servo["mode"] not in ("position", "off") or not servo["frequency"] > 0 or not servo["damping"] >= 0:
        raise ValueError(f"robot {name!r}: servo needs mode position or off, frequency > 0, damping >= 0, "
                         f"got {servo!r}")
    joint_positions = dict(joint_positions or {})
    friction, damping, max_force = dict(friction or {}), dict(damping or {}), dict(max_force or {})
    servo_joint = {k: dict(v) for k, v in (servo_joint or {}).items()}
    for what, table in (("joint_positions", joint_positions), ("friction", friction), ("damping", damping),
                        ("max_force", max_force), ("servo_joint", servo_joint)):
        for j in table:
            if j not in model.joints or model.joints[j].kind == "fixed":
                raise ValueError(f"robot {name!r}: {what}: {j!r} is not a movable joint of {model.name}")
    for j, spec in model.joints.items():          # mimic followers follow their leader's initial position
        if spec.mimic is not None and j not in joint_positions:
            lead, mult, off = spec.mimic
            joint_positions[j] = mult * joint_positions.get(lead, 0.0) + off
    carrier, offset, kept = _fuse(model)
    static = set()
    if fixed_base:
        static.add(model.root)
        for j, _ in kept:
            if j.kind == "fixed" and carrier[j.parent] in static:
                static.add(j.child)
    elif model.links[model.root].mass == 0.0:
        raise SceneError(model.path, f'link "{model.root}" <inertial>', "a positive mass (the root link moves "
                                                                        "freely without a fixed base)")
    base = np.eye(4)
    base[:3, :3] = q_to_matrix(np.asarray(orientation, float) / np.linalg.norm(orientation))
    base[:3, 3] = position
    zero = _forward(model, kept, carrier, base, {})
    start = _forward(model, kept, carrier, base, joint_positions)
    bodies_of = {}                    # carrier link → (body name, body frame in the link frame)
    pieces = {}
    for link, car in carrier.items():
        lk = model.links[link]
        for geom, t, rgb in lk.visuals:
            pieces.setdefault(car, {"visual": [], "collision": []})["visual"].append((geom, offset[link] @ t, rgb))
        for geom, t in lk.collisions:
            pieces.setdefault(car, {"visual": [], "collision": []})["collision"].append((geom, offset[link] @ t))
    no_contact = []
    child_origins = {}
    for j, origin in kept:
        child_origins.setdefault(carrier[j.parent], []).append(origin)
    for link in [model.root] + [j.child for j, _ in kept]:
        lk = model.links[link]
        body = f"{name}/{link}"
        if link in static:
            frame = np.eye(4)
        else:
            rot, moments = principal_frame(lk.inertia)
            frame = lk.inertial.copy()
            frame[:3, :3] = lk.inertial[:3, :3] @ rot
        to_body = inverse(frame)
        parts = pieces.get(link, {"visual": [], "collision": []})
        drawn = parts["visual"] or [(g, t, None) for g, t in parts["collision"]]
        visual = tuple(_visual_part(g, to_body @ t, rgb) for g, t, rgb in drawn)
        coll = [(g, to_body @ t) for g, t in parts["collision"]]
        try:
            shape = collision_shape(coll) if coll else None
        except (ValueError, OSError) as e:
            shape = None
            no_contact.append(f"{link} ({e})")
        if shape is None:
            points = [to_body[:3, 3]] + [(to_body @ o)[:3, 3] for o in child_origins.get(link, [])]
            half = np.maximum(np.abs(np.array(points)).max(axis=0), MIN_PROXY)
            shape_used, collide = Box(tuple(float(h) for h in half)), False
        else:
            shape_used, collide = shape, True
        w = zero[link] @ frame
        colors = [rgb for _, _, rgb in parts["visual"] if rgb is not None]
        kw = dict(position=w[:3, 3], orientation=q_from_matrix(w[:3, :3]), color=colors[0] if colors else color,
                  visual_mesh=visual, collide=collide)
        if link in static:
            world.add_body(body, shape_used, static=True, **kw)
        else:
            world.add_body(body, shape_used, mass=lk.mass, **kw).inertia = moments
        bodies_of[link] = (body, frame)
    joints = {}
    for j, origin in kept:
        if j.parent in static and j.child in static:
            continue
        parent_body = bodies_of[carrier[j.parent]][0]
        child_body = bodies_of[j.child][0]
        jf = zero[carrier[j.parent]] @ origin
        anchor, axis = jf[:3, 3], jf[:3, :3] @ j.axis
        kind = {"continuous": "revolute"}.get(j.kind, j.kind)
        limits = None if j.lower is None else (j.lower, j.upper)
        jname = f"{name}/{j.name}"
        world.add_joint(jname, kind, parent_body, child_body, anchor=anchor, axis=axis, limits=limits,
                        friction=friction.get(j.name, j.friction), damping=damping.get(j.name, j.damping))
        joints[j.name] = jname
    movable = [j for j in model.joints.values() if j.kind in MOVABLE and j.name in joints]
    for j in movable:
        if j.mimic is not None:
            world.add_coupling(joints[j.name], joints[j.mimic[0]], j.mimic[1], j.mimic[2])
    robot = Robot(name, model, tuple(float(x) for x in position), tuple(float(x) for x in orientation),
                  bool(fixed_base), tuple(search_path), {lk: bodies_of[carrier[lk]][0] for lk in carrier}, joints,
                  {j.name: float(joint_positions.get(j.name, 0.0)) for j in movable},
                  {j.name: float(max_force.get(j.name, j.effort if j.effort is not None else 0.0)) for j in movable},
                  {j.name: float(friction.get(j.name, j.friction)) for j in movable},
                  {j.name: float(damping.get(j.name, j.damping)) for j in movable},
                  {j.name: j.velocity for j in movable},
                  {j.name: j.mimic for j in movable if j.mimic is not None},
                  servo, servo_joint)
    world.keep_apart([b for b, _ in bodies_of.values()])      # no self-collision: links meet at their joints
    _place(world, robot, start, bodies_of)
    set_servos(world, robot)
    if not hasattr(world, "robots"):
        world.robots = {}
    world.robots[name] = robot
    if no_contact:
        warn(model.path, f"collision meshes unusable, these links touch nothing: {'; '.join(no_contact)}")
    return robot


def _lowest(shape, R, p):
    """The lowest world z of a shape turned by R and placed at p (m)."""
    if shape.kind == "compound":
        return min(_lowest(s, R @ q_to_matrix(q), p + R @ c) for s, c, q in shape.pieces)
    if shape.kind == "convex":
        return float(p[2] + (shape.vertices @ R[2]).min())
    if shape.kind == "box":
        return float(p[2] - np.abs(R[2]) @ shape.half_extents)
    if shape.kind == "sphere":
        return float(p[2] - shape.radius)
    w = abs(R[2, 2])                                  # capsule, cylinder: axis along local z
    if shape.kind == "capsule":
        return float(p[2] - w * shape.half_length - shape.radius)
    return float(p[2] - w * shape.half_length - shape.radius * math.sqrt(max(0.0, 1.0 - w * w)))


def lowest_point(world, robot):
    """The lowest world z (m) of the robot's moving colliding links as they stand, +inf if
    none (static links never touch the static floor)."""
    low = math.inf
    for name in set(robot.bodies.values()):
        b = world.body(name)
        if b.collide and not b.is_static:
            low = min(low, _lowest(world.model.body_info[b.index].shape, q_to_matrix(b.orientation), b.position))
    return low


def _place(world, robot, poses, bodies_of):
    """Move the moving bodies to their initial pose, through a state snapshot; joint
    readouts start at the initial positions (so angles beyond ±π unwrap from there)."""
    s = world.save_state()
    for link, (body, frame) in bodies_of.items():
        b = world.body(body)
        if not b.is_static:
            w = poses[link] @ frame
            s["bodies"]["pos"][b.index] = w[:3, 3]
            s["bodies"]["quat"][b.index] = q_from_matrix(w[:3, :3])
    for j, q in robot.initial.items():
        s["joints"]["q"][world.joint(robot.joints[j]).index, 0] = q
    world.restore_state(s)


def set_servos(world, robot):
    """Each movable joint's motor as the robot's servo settings say: a position servo on
    its initial position limited to its effort, or off; a mimic follower's off (its
    coupling row carries it)."""
    for j, jname in robot.joints.items():
        if j not in robot.initial:
            continue
        joint = world.joint(jname)
        if robot.servo["mode"] == "off" or j in robot.mimic:
            joint.set_motor("off")
            continue
        per = robot.servo_joint.get(j, {})
        joint.set_motor("position", robot.initial[j], max_force=robot.effort[j],
                        frequency=per.get("frequency", robot.servo["frequency"]),
                        damping=per.get("damping", robot.servo["damping"]))
