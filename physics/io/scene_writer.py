"""World → scene file (TOML): the inverse of physics/io/scene.py.

    data = scene_dict(world, view={"eye": [...], "target": [...]})
    save_scene(world, "scenes/door_edited.toml")

Writes the model as it is now (settings, solver parameters, bodies, robots — their URDF,
base, servos and what differs from the URDF per joint —, joints with their
limits, friction and motors, loads, ropes, motor events) and the state the world had
before its first step (what `reset()` returns to; a joint driven by motor events gets
its motor as it was then, any other its motor as it is now), in the loader's schema, so that
`load_scene` of the file builds the same world. Chains are written as their links
(plain bodies and joints, in the same order), which the loader rebuilds identically.
Angles go out in degrees where the key says `_deg`; quaternions as `orientation`.
"""
import math
import os

import numpy as np

from ..contacts import CONTACT_SETTINGS
from ..quat import q_rotate
from .scene import ROOT

def _f(x):
    return float(x)


def _vec(v):
    return [float(c) for c in np.asarray(v, float).reshape(-1)]


def _initial(world):
    """The state reset() restores: the saved initial state, or the current one before any step."""
    s = getattr(world, "_initial_state", None)
    if s is None:
        s = world.save_state()
    return s


def _world_tables(world, view):
    data = {"world": {"dt": _f(world.dt), "gravity": _vec(world.gravity), "gyroscopic": bool(world.gyroscopic)}}
    solver = {"kind": world.solver}
    for family in world.solvers:        # every family's settings, in its schema's order
        for k, v in world.solver_settings(family).items():
            solver[k] = v if isinstance(v, (bool, str, int)) else _f(v)
    data["solver"] = solver
    defaults = {c.name: c.default for c in CONTACT_SETTINGS}
    contacts = {k: (v if isinstance(v, bool) else _f(v)) for k, v in world.contact_settings.items() if v != defaults[k]}
    if contacts:
        data["contacts"] = contacts
    view = view if view is not None else getattr(world, "view", None)
    if view and "eye" in view and "target" in view:
        data["view"] = {"eye": _vec(view["eye"]), "target": _vec(view["target"])}
    return data


def _shape_keys(shape, folder=None):
    kind = shape.kind
    if kind in ("convex", "compound"):
        if not getattr(shape, "source", None):
            raise ValueError(f"a {kind} shape made in Python (not from a mesh file) cannot be written to a scene")
        return {"shape": kind, "mesh": _mesh_path(shape.source, folder)}
    if kind == "box":
        return {"shape": "box", "size": [2.0 * float(h) for h in shape.half_extents]}
    if kind == "sphere":
        return {"shape": "sphere", "radius": _f(shape.radius)}
    if kind in ("capsule", "cylinder"):
        return {"shape": kind, "radius": _f(shape.radius), "length": 2.0 * float(shape.half_length)}
    return {"shape": kind}


def _mesh_path(mesh, folder):
    """A visual mesh's path as the loader finds it (physics/io/scene.py): relative to the
    scene's folder when the mesh lies inside it, else to the project ("assets/…"); a
    mesh elsewhere keeps its path (the loader refuses paths outside those folders)."""
    mesh = os.path.abspath(mesh)
    for base in ([folder] if folder else []) + [ROOT]:
        rel = os.path.relpath(mesh, base)
        if not rel.startswith(os.pardir + os.sep) and rel != os.pardir and not os.path.isabs(rel):
            return rel.replace(os.sep, "/")
    return mesh


def _robot_parts(world):
    """The names of the bodies and joints that robots built (written as [[robots]])."""
    bodies, joints = set(), set()
    for r in getattr(world, "robots", {}).values():
        bodies.update(r.bodies.values())
        joints.update(r.joints.values())
    return bodies, joints


def _bodies(world, state, folder=None):
    out = []
    skip = _robot_parts(world)[0]
    for i in range(1, len(world.body_info)):
        info = world.body_info[i]
        if info.name in skip:
            continue
        b = {"name": info.name, **_shape_keys(info.shape, folder)}
        static = world.model.bodies.inv_mass[i] == 0.0
        if static:
            b["static"] = True
        else:
            b["mass"] = _f(info.mass)
        pos, q = state["bodies"]["pos"][i], state["bodies"]["quat"][i]
        if hasattr(info.shape, "source_pose"):          # a mesh's shape: its own frame's pose
            pos, q = info.shape.source_pose(pos, q)
        if info.shape.kind != "plane" or np.any(pos):
            b["position"] = _vec(pos)
        if not np.allclose(q, (0.0, 0.0, 0.0, 1.0), rtol=0.0, atol=0.0):
            b["orientation"] = _vec(q)
        for key, field in (("velocity", "vel"), ("angular_velocity", "omega")):
            if np.any(state["bodies"][field][i]):
                b[key] = _vec(state["bodies"][field][i])
        b["color"] = _vec(info.color)
        mb = world.model.bodies
        if mb.friction[i] != 0.5:
            b["friction"] = _f(mb.friction[i])
        if mb.restitution[i] != 0.0:
            b["restitution"] = _f(mb.restitution[i])
        if not mb.collide[i]:
            b["collide"] = False
        if info.visual_mesh:
            b["visual_mesh"] = _mesh_path(info.visual_mesh, folder)
        out.append(b)
    return out


def _deg(lo_hi):
    return [math.degrees(lo_hi[0]), math.degrees(lo_hi[1])]


def _joints(world, state):
    out = []
    motors = state.get("motors")
    programmed = {e[1] for e in getattr(world, "_events", [])}
    skip = _robot_parts(world)[1]
    for j, info in enumerate(world.joint_info):
        if info.name in skip:
            continue
        joint = world.joint(info.name)
        kind = info.kind
        d = {"name": info.name, "type": kind, "parent": info.parent, "child": info.child,
             "anchor": _vec(info.anchor), "axis": _vec(info.axis)}
        if kind == "universal":
            d["axis2"] = _vec(info.axis2)
        lim0 = joint.limit(0) if kind != "fixed" else None
        lim1 = joint.limit(1) if kind in ("universal", "spherical") else None
        if kind == "revolute" and lim0:
            d["limits_deg"] = _deg(lim0)
        elif kind == "universal":
            if lim0:
                d["limits_deg"] = _deg(lim0)
            if lim1:
                d["limits2_deg"] = _deg(lim1)
        elif kind == "prismatic" and lim0:
            d["limits"] = [float(lim0[0]), float(lim0[1])]
        elif kind == "spherical":
            if lim0:
                d["swing_deg"] = math.degrees(lim0[1])
            if lim1:
                d["twist_deg"] = _deg(lim1)
        if kind != "fixed" and joint.friction > 0.0:
            d["friction"] = joint.friction
        if kind != "fixed" and joint.damping > 0.0:
            d["damping"] = joint.damping
        if kind in ("revolute", "prismatic"):
            m = joint.motor
            mode, target = m["mode"], m["target"]
            if j in programmed and motors is not None and len(motors[0]) == len(world.joint_info):
                mode = {0: "off", 1: "velocity", 2: "position"}.get(int(motors[0][j]), mode)
                target = float(motors[1][j])
            if mode != "off":
                d.update(motor=mode, motor_target=target, motor_max=m["max_force"],
                         motor_frequency=m["frequency"], motor_damping=m["damping"])
        out.append(d)
    return out


def _robots(world, state, folder=None):
    """[[robots]] entries: the URDF, base, servo settings and, per joint, what differs
    from the URDF (initial position, friction, damping, servo limit and gains)."""
    out = []
    for name, r in getattr(world, "robots", {}).items():
        d = {"name": name, "urdf": _mesh_path(r.model.path, folder)}
        if r.search_path:
            d["search_path"] = [_mesh_path(p, folder) for p in r.search_path]
        d.update(position=_vec(r.position), orientation=_vec(r.orientation), fixed_base=r.fixed_base,
                 servo=r.servo["mode"], servo_frequency=_f(r.servo["frequency"]),
                 servo_damping=_f(r.servo["damping"]))
        joints = {}
        for j, jname in r.joints.items():
            if j not in r.initial:
                continue
            spec, joint = r.model.joints[j], world.joint(jname)
            e = {}
            if r.initial[j] != 0.0:             # as asked (the state's readout differs by round-off)
                e["q"] = _f(r.initial[j])
            if joint.friction != spec.friction:
                e["friction"] = joint.friction
            if joint.damping != spec.damping:
                e["damping"] = joint.damping
            if r.effort[j] != (spec.effort or 0.0):
                e["max_force"] = _f(r.effort[j])
            for k, v in r.servo_joint.get(j, {}).items():
                e[f"servo_{k}"] = _f(v)
            if e:
                joints[j] = e
        if joints:
            d["joints"] = joints
        if r.arm is not None:
            d["arm"] = {k: (_vec(v) if k == "tip_offset" else v) for k, v in r.arm.settings.items()}
            if r.arm.program_period is not None:
                d["arm"]["program_period"] = _f(r.arm.program_period)
            if r.arm.program_source:
                d["program"] = [{k: v for k, v in (("time", _f(t)), ("target", p and _vec(p)),
                                                   ("rotation_deg", rot and _vec(rot)), ("gripper", g))
                                 if v is not None} for t, p, rot, g in r.arm.program_source]
        out.append(d)
    return out


def _loads(world, state):
    out = []
    loads = world.control.loads
    for k in range(loads.count):
        i = int(loads.body[k])
        d = {"body": world.body_info[i].name, "force": _vec(loads.force[k]), "torque": _vec(loads.torque[k])}
        if loads.at_point[k]:
            d["point"] = _vec(state["bodies"]["pos"][i] + q_rotate(state["bodies"]["quat"][i], loads.point[k]))
        start, end = loads.window[k]
        d["start"] = _f(start)
        if math.isfinite(end):
            d["end"] = _f(end)
        out.append(d)
    return out


def _ropes(world, state):
    out = []
    saved = state.get("ropes", {})
    colors = getattr(world, "_rope_color", {})
    for name, rope in getattr(world, "ropes", {}).items():
        nodes = saved[name][0]["node_pos"] if name in saved else rope.positions
        d = {"name": name, "start": _vec(nodes[0]), "end": _vec(nodes[-1]), "segments": int(rope.segments),
             "radius": _f(rope.radius), "density": _f(rope.density), "E": _f(rope.E), "G": _f(rope.G),
             "damping": _f(rope.damping), "friction": _f(rope.friction), "ground": bool(rope.ground)}
        if name in colors:
            d["color"] = _vec(colors[name])
        last = rope.n_nodes - 1
        for at in getattr(rope, "_attachments", {}).values():
            end = "start" if at.node == 0 else ("end" if at.node == last else None)
            if end is None:
                raise ValueError(f"rope {name!r}: node {at.node} is attached, and scene files attach ends only")
            d[f"{end}_attach"] = "world" if at.body < 0 else world.body_info[at.body].name
            if at.clamp:
                d[f"{end}_clamp"] = True
        out.append(d)
    return out


def _motor_events(world):
    out = []
    for time, j, mode, target in getattr(world, "_events", []):
        d = {"joint": world.joint_info[j].name, "time": _f(time), "target": _f(target)}
        if mode is not None:
            d["mode"] = mode
        out.append(d)
    return out


def scene_dict(world, view=None, folder=None):
    """The scene file's data for `world` (plain dicts, lists, numbers and strings).
    `view`: {"eye", "target"} to store instead of world.view (e.g. the current camera);
    `folder`: where the file will be (visual mesh paths are written relative to it)."""
    robot_joints = _robot_parts(world)[1]
    loose = [f for f, *_ in world.couplings() if f not in robot_joints]
    if loose:
        raise ValueError(f"joint {loose[0]!r} follows another through a coupling made in Python (not a URDF "
                         "<mimic>): it cannot be written to a scene")
    state = _initial(world)
    data = _world_tables(world, view)
    for key, items in (("bodies", _bodies(world, state, folder)), ("robots", _robots(world, state, folder)),
                       ("joints", _joints(world, state)),
                       ("loads", _loads(world, state)), ("ropes", _ropes(world, state)),
                       ("motor_events", _motor_events(world))):
        if items:
            data[key] = items
    return data


def scene_text(world, view=None, header=None, folder=None):
    """The scene file as TOML text, with an optional comment header."""
    import tomli_w
    text = tomli_w.dumps(scene_dict(world, view, folder))
    if header:
        text = "".join(f"# {line}\n" for line in header.splitlines()) + "\n" + text
    return text


def save_scene(world, path, view=None, header=None):
    """Write `world` as a scene file at `path` (see scene_dict); returns the path."""
    text = scene_text(world, view, header, os.path.dirname(os.path.abspath(path)))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path
