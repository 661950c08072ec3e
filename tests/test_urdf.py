"""URDF import (physics/io/urdf.py): the shipped models load with the file's own
numbers, a URDF with every joint kind loads right and swings with the physical
pendulum's period, broken files are refused naming the element (exit status 2), and
nothing outside the allowed folders is ever opened.

The expected numbers come from this file's own reading of the XML and its own forward
kinematics (rpy → matrix written out below), not from the loader's."""
import builtins
import io
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import physics
from physics.io import urdf as urdf_mod
from physics.io.scene import SceneError, load_scene
from physics.io.urdf import add_robot, read_urdf
from physics.quat import q_to_matrix

ROOT = Path(__file__).resolve().parent.parent
KUKA = ROOT / "assets" / "robots" / "kuka_iiwa" / "model.urdf"
XARM = ROOT / "assets" / "robots" / "xarm6" / "xarm6_with_gripper.urdf"
TOL = 1e-9


# ---------------------------------------------------------------------------- the test's own URDF reading
def rot(rpy):
    """Fixed-axis roll, pitch, yaw as Rz(y) @ Ry(p) @ Rx(r), from the elementary rotations."""
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def frame(el):
    """4×4 of an element's <origin> (identity when absent)."""
    t = np.eye(4)
    o = el.find("origin")
    if o is not None:
        t[:3, :3] = rot([float(v) for v in o.get("rpy", "0 0 0").split()])
        t[:3, 3] = [float(v) for v in o.get("xyz", "0 0 0").split()]
    return t


def joint_motion(kind, axis, q):
    t = np.eye(4)
    a = np.asarray(axis) / np.linalg.norm(axis)
    if kind in ("revolute", "continuous"):
        k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        t[:3, :3] = np.eye(3) + math.sin(q) * k + (1 - math.cos(q)) * k @ k
    elif kind == "prismatic":
        t[:3, 3] = a * q
    return t


def parse(path):
    """links {name: (mass, inertial 4×4, inertia 3×3) or None}, joints {name: dict}, root."""
    root = ET.parse(path).getroot()
    links = {}
    for lk in root.findall("link"):
        i = lk.find("inertial")
        if i is None or float(i.find("mass").get("value")) == 0.0:
            links[lk.get("name")] = None
            continue
        a = {k: float(v) for k, v in i.find("inertia").attrib.items()}
        tensor = np.array([[a["ixx"], a.get("ixy", 0), a.get("ixz", 0)], [a.get("ixy", 0), a["iyy"], a.get("iyz", 0)],
                           [a.get("ixz", 0), a.get("iyz", 0), a["izz"]]])
        links[lk.get("name")] = (float(i.find("mass").get("value")), frame(i), tensor)
    joints = {}
    for j in root.findall("joint"):
        ax = j.find("axis")
        lim = j.find("limit")
        joints[j.get("name")] = dict(
            kind=j.get("type"), parent=j.find("parent").get("link"), child=j.find("child").get("link"),
            origin=frame(j), axis=[float(v) for v in ax.get("xyz").split()] if ax is not None else [1, 0, 0],
            limits=(float(lim.get("lower", 0)), float(lim.get("upper", 0))) if lim is not None
            and j.get("type") in ("revolute", "prismatic") else None)
    children = {j["child"] for j in joints.values()}
    return links, joints, next(n for n in links if n not in children)


def link_poses(links, joints, root, q=None, base=None):
    """World 4×4 of every link, joints at q {name: value} (0 when absent)."""
    q = q or {}
    poses = {root: np.eye(4) if base is None else base}
    while len(poses) < len(links):
        for name, j in joints.items():
            if j["parent"] in poses and j["child"] not in poses:
                poses[j["child"]] = (poses[j["parent"]] @ j["origin"]
                                     @ joint_motion(j["kind"], j["axis"], q.get(name, 0.0)))
    return poses


def world_inertia(world, body):
    b = world.body(body)
    r = q_to_matrix(b.orientation)
    return r @ np.diag(b.inertia) @ r.T


# ---------------------------------------------------------------------------- shipped models
@pytest.mark.parametrize("path", [KUKA, XARM], ids=["kuka_iiwa", "xarm6"])
def test_shipped_model_loads_with_the_urdf_masses_inertias_origins_axes_and_limits(path):
    links, joints, root = parse(path)
    world = physics.World(dt=0.001, solver="impulse")
    robot = add_robot(world, read_urdf(path), "r", servo={"mode": "off"})
    poses = link_poses(links, joints, root)
    for name, inert in links.items():
        if inert is None or name == root or robot.bodies[name] != f"r/{name}":
            continue
        if world.body(f"r/{name}").is_static:
            continue
        mass, inertial, tensor = inert
        com = poses[name] @ inertial
        assert abs(world.body(f"r/{name}").mass - mass) <= TOL * mass
        assert np.abs(world.body(f"r/{name}").position - com[:3, 3]).max() <= TOL
        expected = com[:3, :3] @ tensor @ com[:3, :3].T
        assert np.abs(world_inertia(world, f"r/{name}") - expected).max() <= TOL * np.abs(tensor).max()
    snap = world.snapshot()
    anchor = dict(zip(snap["joint_names"], snap["joint_anchor"]))
    axis_of = dict(zip(snap["joint_names"], snap["joint_frame"][:, :, 0]))
    for name, j in joints.items():
        if j["kind"] == "fixed":
            continue
        joint = world.joint(f"r/{name}")
        jf = poses[j["parent"]] @ j["origin"]
        axis = jf[:3, :3] @ (np.array(j["axis"]) / np.linalg.norm(j["axis"]))
        assert np.abs(anchor[f"r/{name}"] - jf[:3, 3]).max() <= TOL
        assert np.abs(axis_of[f"r/{name}"] - axis).max() <= TOL
        assert joint.kind == {"continuous": "revolute"}.get(j["kind"], j["kind"])
        if j["limits"] is None:
            assert joint.limits is None
        else:
            assert joint.limits == pytest.approx(j["limits"], abs=TOL)


@pytest.mark.parametrize("path", [KUKA, XARM], ids=["kuka_iiwa", "xarm6"])
def test_shipped_inertias_are_physical(path):
    """Every moving link: positive definite, principal moments obey A + B >= C."""
    links, _, _ = parse(path)
    for name, inert in links.items():
        if inert is None:
            continue
        w = np.linalg.eigvalsh(inert[2])
        assert w[0] > 0, name
        assert w[0] + w[1] >= w[2] * (1 - 1e-9), name


def test_shipped_model_is_posed_by_initial_joint_positions():
    """Joint readouts equal the initial positions (the engine's positive sense is the
    URDF's), and every body sits where forward kinematics at those positions puts it."""
    links, joints, root = parse(KUKA)
    q = {"lbr_iiwa_joint_2": 0.7, "lbr_iiwa_joint_4": -1.2, "lbr_iiwa_joint_6": 0.4, "lbr_iiwa_joint_7": 2.5}
    world = physics.World(dt=0.001, solver="impulse")
    add_robot(world, read_urdf(KUKA), "r", joint_positions=q, position=(0.3, -0.2, 0.1))
    base = np.eye(4)
    base[:3, 3] = (0.3, -0.2, 0.1)
    poses = link_poses(links, joints, root, q, base)
    for name, value in q.items():
        assert world.joint(f"r/{name}").angle == pytest.approx(value, abs=1e-9)
    for name, inert in links.items():
        if inert is not None and name != root:
            assert np.abs(world.body(f"r/{name}").position - (poses[name] @ inert[1])[:3, 3]).max() <= TOL


# ---------------------------------------------------------------------------- a URDF written here
RIG = """<?xml version="1.0"?>
<robot name="rig">
  <material name="red"><color rgba="0.8 0.1 0.1 1"/></material>
  <link name="base"/>
  <joint name="slide" type="prismatic">
    <parent link="base"/><child link="carriage"/>
    <origin xyz="0 0 1.5" rpy="0 0 0.3"/>
    <axis xyz="1 0 0"/>
    <limit lower="-0.5" upper="0.4" effort="30" velocity="1.5"/>
    <dynamics friction="0.3" damping="0.1"/>
  </joint>
  <link name="carriage">
    <inertial><origin xyz="0 0 0.05"/><mass value="2"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.025"/></inertial>
    <visual><geometry><box size="0.2 0.1 0.1"/></geometry><material name="red"/></visual>
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.2 0.1 0.1"/></geometry></collision>
  </link>
  <joint name="pivot" type="continuous">
    <parent link="carriage"/><child link="arm"/>
    <origin xyz="0.05 0 0" rpy="0.2 0 0"/>
    <axis xyz="0 1 0"/>
    <dynamics damping="0.02"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0.01 0 -0.3" rpy="0.3 -0.2 0.5"/><mass value="1.2"/>
      <inertia ixx="0.02" ixy="0.002" ixz="-0.001" iyy="0.018" iyz="0.0015" izz="0.006"/></inertial>
    <visual><origin xyz="0 0 -0.3"/><geometry><cylinder radius="0.02" length="0.6"/></geometry></visual>
  </link>
  <joint name="tip_fix" type="fixed">
    <parent link="arm"/><child link="tip"/><origin xyz="0 0 -0.6"/>
  </joint>
  <link name="tip">
    <inertial><mass value="0.5"/><inertia ixx="0.0005" ixy="0" ixz="0" iyy="0.0005" iyz="0" izz="0.0005"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <joint name="tool_fix" type="fixed">
    <parent link="tip"/><child link="tool"/><origin xyz="0 0 -0.05"/>
  </joint>
  <link name="tool">
    <visual><geometry><cylinder radius="0.01" length="0.05"/></geometry>
      <material name="blue"><color rgba="0 0 1 1"/></material></visual>
  </link>
  <joint name="finger" type="revolute">
    <parent link="arm"/><child link="finger"/>
    <origin xyz="0 0.05 -0.5"/>
    <axis xyz="1 0 0"/>
    <limit lower="-0.5" upper="0.5" effort="5" velocity="2"/>
    <mimic joint="pivot" multiplier="0.5" offset="0.1"/>
  </joint>
  <link name="finger">
    <inertial><origin xyz="0 0 -0.04"/><mass value="0.1"/>
      <inertia ixx="0.0001" ixy="0" ixz="0" iyy="0.00012" iyz="0" izz="0.00005"/></inertial>
  </link>
  <transmission name="t"><type>transmission_interface/SimpleTransmission</type></transmission>
  <gazebo reference="arm"/>
</robot>
"""


@pytest.fixture
def rig(tmp_path):
    path = tmp_path / "rig.urdf"
    path.write_text(RIG)
    return path


def test_written_urdf_loads_every_joint_kind_mimic_dynamics_and_fused_link(rig, capsys):
    world = physics.World(dt=0.001, solver="impulse")
    robot = add_robot(world, read_urdf(rig), "rig", joint_positions={"slide": 0.1, "pivot": 0.2})
    err = capsys.readouterr().err
    assert "transmission" in err and "gazebo" in err and err.count("elements not used") == 1
    assert "triangle" not in err
    names = [b.name for b in world.bodies]
    assert names == ["rig/base", "rig/carriage", "rig/arm", "rig/tip", "rig/finger"]   # tool fused
    assert world.body("rig/base").is_static
    kinds = {j.name: j.kind for j in world.joint_info}
    assert kinds == {"rig/slide": "prismatic", "rig/pivot": "revolute", "rig/tip_fix": "fixed",
                     "rig/finger": "revolute"}
    assert world.joint("rig/slide").limits == pytest.approx((-0.5, 0.4))
    assert world.joint("rig/pivot").limits is None                          # continuous
    assert world.joint("rig/finger").limits == pytest.approx((-0.5, 0.5))
    assert world.joint("rig/slide").friction == 0.3                         # <dynamics friction>
    assert robot.damping == {"slide": 0.1, "pivot": 0.02, "finger": 0.0}
    assert [world.joint(f"rig/{j}").damping for j in ("slide", "pivot", "finger")] == [0.1, 0.02, 0.0]
    assert robot.mimic == {"finger": ("pivot", 0.5, 0.1)}
    assert world.couplings() == [("rig/finger", "rig/pivot", 0.5, 0.1)]     # <mimic> → a coupling row
    assert world.joint("rig/finger").motor["mode"] == "off"                   # the coupling carries it
    assert robot.velocity == {"slide": 1.5, "pivot": None, "finger": 2.0}
    motor = world.joint("rig/slide").motor                                  # effort → the servo's limit
    assert motor["mode"] == "position" and motor["max_force"] == 30.0 and motor["target"] == pytest.approx(0.1)
    # initial positions: given, and the mimic follower at m·q_leader + o
    assert world.joint("rig/slide").angle == pytest.approx(0.1, abs=1e-12)
    assert world.joint("rig/pivot").angle == pytest.approx(0.2, abs=1e-12)
    assert world.joint("rig/finger").angle == pytest.approx(0.5 * 0.2 + 0.1, abs=1e-12)
    # collision: a primitive on the centre of mass and principal axes is the body's shape
    assert world.body("rig/carriage").shape == physics.Box((0.1, 0.05, 0.05))
    assert world.body("rig/tip").shape == physics.Sphere(0.05)
    assert world.model.bodies.collide[world.body("rig/tip").index] == 1
    assert world.model.bodies.collide[world.body("rig/arm").index] == 0    # no collision element
    # the fused tool's visual rides on the tip's body, with its own colour, 5 cm below
    tip_parts = world.body_info[world.body("rig/tip").index].visual_mesh
    assert len(tip_parts) == 1 and tip_parts[0].color == (0.0, 0.0, 1.0)
    r = q_to_matrix(world.body("rig/tip").orientation)
    tool_world = world.body("rig/tip").position + r @ np.array(tip_parts[0].position)
    links, joints, root = parse(rig)
    poses = link_poses(links, joints, root, {"slide": 0.1, "pivot": 0.2, "finger": 0.2})
    assert np.abs(tool_world - (poses["tip"] @ joints["tool_fix"]["origin"])[:3, 3]).max() <= TOL
    # the arm: its mass, and its rotated, off-diagonal inertia about the centre of mass
    mass, inertial, tensor = links["arm"]
    com = poses["arm"] @ inertial
    assert world.body("rig/arm").mass == 1.2
    assert np.abs(world.body("rig/arm").position - com[:3, 3]).max() <= TOL
    assert np.abs(world_inertia(world, "rig/arm") - com[:3, :3] @ tensor @ com[:3, :3].T).max() <= TOL * 0.02


def test_pendulum_from_the_written_urdf_swings_with_the_coupled_pendulums_period(rig):
    """The carriage held by joint friction, the arm, its welded tip and the mimic finger
    (q_f = 0.5 q + 0.1, a coupling row) swing on the continuous joint as one degree of
    freedom q: small oscillations about the potential's minimum q* have the period
    T = 2π √(I(q*) / U''(q*)), I(q) = Σ m |∂c/∂q|² + ω_qᵀ I_w ω_q the inertia the links'
    motion per unit q̇ gives (ω_q from ∂R/∂q), U(q) = −Σ m g·c — all from this file's
    reading, by finite differences of its forward kinematics."""
    world = physics.World(dt=0.001, solver="impulse")
    add_robot(world, read_urdf(rig), "rig", joint_positions={"slide": 0.1, "pivot": 0.1}, servo={"mode": "off"},
              friction={"slide": 1e4})
    assert world.couplings() == [("rig/finger", "rig/pivot", 0.5, 0.1)]
    links, joints, root = parse(rig)
    g = np.array([0.0, 0.0, -9.81])
    moving = ("arm", "tip", "finger")

    def frames(q):
        poses = link_poses(links, joints, root, {"slide": 0.1, "pivot": q, "finger": 0.5 * q + 0.1})
        return {name: poses[name] @ links[name][1] for name in moving}      # centre-of-mass frames

    def potential(q):
        return -sum(links[name][0] * g @ f[:3, 3] for name, f in frames(q).items())

    def inertia(q, d=1e-6):
        lo, hi, at = frames(q - d), frames(q + d), frames(q)
        total = 0.0
        for name in moving:
            m, _, tensor = links[name]
            v = (hi[name][:3, 3] - lo[name][:3, 3]) / (2 * d)
            spin = (hi[name][:3, :3] - lo[name][:3, :3]) / (2 * d) @ at[name][:3, :3].T     # [ω_q]×
            w = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
            total += m * v @ v + w @ (at[name][:3, :3] @ tensor @ at[name][:3, :3].T) @ w
        return total

    d = 1e-4
    q = 0.0
    for _ in range(30):                             # Newton on U'(q) = 0
        du = (potential(q + d) - potential(q - d)) / (2 * d)
        ddu = (potential(q + d) - 2 * potential(q) + potential(q - d)) / (d * d)
        q -= du / ddu
    period = 2 * math.pi * math.sqrt(inertia(q) / ddu)
    pivot, finger = world.joint("rig/pivot"), world.joint("rig/finger")
    peaks, last = [], (0.0, pivot.rate)
    worst = 0.0
    while world.time < 4.5 * period:
        world.step()
        worst = max(worst, abs(finger.angle - (0.5 * pivot.angle + 0.1)))
        if last[1] > 0.0 >= pivot.rate:           # a maximum of q: interpolate the rate's zero
            peaks.append(last[0] + world.dt * last[1] / (last[1] - pivot.rate))
        last = (world.time, pivot.rate)
    assert len(peaks) >= 4
    measured = (peaks[-1] - peaks[0]) / (len(peaks) - 1)
    assert measured == pytest.approx(period, rel=0.01)
    assert worst <= 1e-4                                          # the finger follows its coupling
    assert abs(world.joint("rig/slide").angle - 0.1) < 1e-5      # held by its friction (creep of µm)


# ---------------------------------------------------------------------------- broken files
def _rig_with(old, new, count=1):
    assert RIG.count(old) >= 1
    return RIG.replace(old, new, count)


OUTSIDE_MESH = '<visual><geometry><mesh filename="{}"/></geometry></visual>'
MALFORMED = {
    "bad XML": (RIG.replace("</robot>", ""), "(xml)", "well-formed XML"),
    "missing link": (_rig_with('<parent link="arm"/><child link="tip"/>', '<parent link="arm"/>'),
                     'joint "tip_fix" <child link>', "missing"),
    "joint to an unknown link": (_rig_with('<child link="finger"/>', '<child link="thumb"/>'),
                                 'joint "finger" <child link>', '"thumb"'),
    "cycle": (_rig_with("</robot>", '<joint name="loop" type="fixed"><parent link="finger"/>'
                                    '<child link="base"/></joint></robot>'), 'joint "slide"', "cycle"),
    "cycle off the root": (_rig_with("</robot>", '<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
                                                 'izz="1"/></inertial></link><link name="b"/><joint name="ab" '
                                                 'type="fixed"><parent link="a"/><child link="b"/></joint><joint '
                                                 'name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>'
                                                 '</robot>'), 'joint "', "cycle"),
    "negative mass": (_rig_with('<mass value="1.2"/>', '<mass value="-1.2"/>'), 'link "arm" <inertial> <mass value>',
                      "a mass >= 0"),
    "NaN origin": (_rig_with('<origin xyz="0.05 0 0" rpy="0.2 0 0"/>', '<origin xyz="0.05 nan 0" rpy="0.2 0 0"/>'),
                   'joint "pivot" <origin xyz>', "finite"),
    "mesh outside the folder (..)": (_rig_with("<link name=\"base\"/>", '<link name="base">'
                                               + OUTSIDE_MESH.format("../secret.stl") + "</link>"),
                                     'link "base" <visual>[0] <geometry> <mesh filename>', "may not leave"),
    "mesh outside the folder (absolute)": (_rig_with("<link name=\"base\"/>", '<link name="base">'
                                                     + OUTSIDE_MESH.format("/etc/secret.stl") + "</link>"),
                                           'link "base" <visual>[0] <geometry> <mesh filename>', "may not leave"),
    "mesh outside the folder (package://)": (_rig_with("<link name=\"base\"/>", '<link name="base">'
                                                       + OUTSIDE_MESH.format("package://../secret.stl") + "</link>"),
                                             'link "base" <visual>[0] <geometry> <mesh filename>', "may not leave"),
    "inertia not positive definite": (_rig_with('ixx="0.02" ixy="0.002"', 'ixx="-0.02" ixy="0.002"'),
                                      'link "arm" <inertial> <inertia>', "positive definite"),
    "massless link on a movable joint": (_rig_with('<mass value="0.1"/>', '<mass value="0"/>'),
                                         'link "finger" <inertial>', "positive mass"),
    "floating joint": (_rig_with('type="continuous"', 'type="floating"'), 'joint "pivot" type', "not supported"),
    "revolute joint without limit": (_rig_with('<limit lower="-0.5" upper="0.5" effort="5" velocity="2"/>', ""),
                                     'joint "finger" <limit>', "required"),
    "two roots": (_rig_with("</robot>", '<link name="stray"/></robot>'), 'link "stray"', "one root"),
    "mimic of an unknown joint": (_rig_with('<mimic joint="pivot"', '<mimic joint="wrist"'),
                                  'joint "finger" <mimic joint>', '"wrist"'),
    "entities": ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]>' + RIG.split("?>", 1)[1], "(xml)",
                 "DOCTYPE"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_urdf_exits_2_with_one_line_naming_the_element(case, tmp_path, capsys):
    from shell.cli import main
    text, element, word = MALFORMED[case]
    (tmp_path / "robot").mkdir()
    (tmp_path / "secret.stl").write_text("solid s\nendsolid s\n")
    path = tmp_path / "robot" / "bad.urdf"
    path.write_text(text)
    assert main([str(path), "--headless", "--duration", "0"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("warning:")]
    assert len(err) == 1
    assert err[0].startswith(f"error: {path}: {element}") and word in err[0], err[0]


def test_mesh_through_a_link_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "robot").mkdir()
    (tmp_path / "secret.stl").write_text("solid s\nendsolid s\n")
    os.symlink(tmp_path / "secret.stl", tmp_path / "robot" / "inside.stl")
    path = tmp_path / "robot" / "bad.urdf"
    path.write_text(_rig_with('<link name="base"/>', '<link name="base">' + OUTSIDE_MESH.format("inside.stl")
                              + "</link>"))
    with pytest.raises(SceneError, match="may not leave"):
        read_urdf(path)


def test_package_uri_resolves_against_the_urdf_folder_and_the_search_path(tmp_path):
    robot, extra = tmp_path / "robot", tmp_path / "packages"
    (robot / "pkg_a" / "meshes").mkdir(parents=True)
    (extra / "pkg_b").mkdir(parents=True)
    (robot / "pkg_a" / "meshes" / "a.stl").write_text("solid a\nendsolid a\n")
    (extra / "pkg_b" / "b.obj").write_text("v 0 0 0\n")
    path = robot / "r.urdf"
    path.write_text(_rig_with('<link name="base"/>', '<link name="base">'
                              + OUTSIDE_MESH.format("package://pkg_a/meshes/a.stl")
                              + OUTSIDE_MESH.format("package://pkg_b/b.obj") + "</link>"))
    alone = [g.mesh for g, _, _ in read_urdf(path).links["base"].visuals]
    model = read_urdf(path, search_path=[str(extra)])
    meshes = [g.mesh for g, _, _ in model.links["base"].visuals]
    assert meshes == [str((robot / "pkg_a/meshes/a.stl").resolve()), str((extra / "pkg_b/b.obj").resolve())]
    assert alone[1] == str((robot / "pkg_b/b.obj").resolve())      # not found: inside, for the viewer to report


def test_no_file_outside_the_allowed_folders_is_opened(tmp_path, monkeypatch):
    """Spy on every way Python opens a file while loading each malformed URDF, the shipped
    models and a scene with a robot: only the URDF (and the scene) are read."""
    (tmp_path / "cases").mkdir()
    real_open = builtins.open
    with real_open(tmp_path / "cases" / "secret.stl", "w") as f:
        f.write("solid s\nendsolid s\n")
    physics.load_scene(KUKA)                   # kernels loaded before spying (numba's cache files)
    opened = []
    real_io_open, real_os_open = io.open, os.open

    def spy(opener):
        def f(file, *args, **kwargs):
            if isinstance(file, (str, bytes, os.PathLike)):
                opened.append(os.path.realpath(os.fsdecode(file)))
            return opener(file, *args, **kwargs)
        return f
    monkeypatch.setattr(builtins, "open", spy(real_open))
    monkeypatch.setattr(io, "open", spy(real_io_open))
    monkeypatch.setattr(os, "open", spy(real_os_open))
    urdf_mod._CACHE.clear()
    allowed = [str((ROOT / "assets" / "robots").resolve())]
    for case, (text, _, _) in MALFORMED.items():
        folder = tmp_path / "cases" / case.replace("/", "_")
        folder.mkdir(parents=True)
        path = folder / "bad.urdf"
        with real_open(path, "w") as f:
            f.write(text)
        with pytest.raises(SceneError):
            physics.load_scene(path)
        allowed.append(str(folder.resolve()))
    for path in (KUKA, XARM):
        physics.load_scene(path)
    assert opened
    outside = [p for p in opened if not any(p.startswith(a) for a in allowed)]
    assert outside == []
    assert not any(p.endswith(("secret.stl",)) for p in opened)


# ---------------------------------------------------------------------------- scenes
SCENE = """
[world]
dt = 0.002
[solver]
kind = "impulse"
[[bodies]]
name = "floor"
shape = "plane"
static = true
[[robots]]
name = "arm"
urdf = "{urdf}"
position = [0.5, 0, 0]
rotation_deg = [0, 0, 90]
servo_frequency = 25.0
[robots.joints.lbr_iiwa_joint_2]
q_deg = 30
friction = 1.5
[robots.joints.lbr_iiwa_joint_4]
q = -0.8
max_force = 120.0
servo_damping = 0.7
[[motor_events]]
joint = "arm/lbr_iiwa_joint_1"
time = 0.5
target_deg = 20
"""


@pytest.fixture
def robot_scene(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(SCENE.format(urdf="robots/kuka_iiwa/model.urdf"))     # found in the project's assets/
    return path


def test_robots_table_builds_named_bodies_and_joints_with_its_settings(robot_scene):
    world = load_scene(robot_scene, {"joint.arm/lbr_iiwa_joint_6.friction": "0.25"})
    assert world.has_body("arm/lbr_iiwa_link_3") and world.has_joint("arm/lbr_iiwa_joint_7")
    assert world.joint("arm/lbr_iiwa_joint_2").angle == pytest.approx(math.radians(30), abs=1e-12)
    assert world.joint("arm/lbr_iiwa_joint_4").angle == pytest.approx(-0.8, abs=1e-12)
    assert world.joint("arm/lbr_iiwa_joint_2").friction == 1.5
    assert world.joint("arm/lbr_iiwa_joint_6").friction == 0.25            # --set joint.ROBOT/JOINT.friction
    m = world.joint("arm/lbr_iiwa_joint_4").motor
    assert (m["mode"], m["max_force"], m["frequency"], m["damping"]) == ("position", 120.0, 25.0, 0.7)
    assert world.joint("arm/lbr_iiwa_joint_1").motor["max_force"] == 300.0          # the URDF's effort
    base = world.body("arm/lbr_iiwa_link_0")
    assert base.is_static and np.abs(base.position - (0.5, 0, 0)).max() < 1e-12
    world.advance(0.6)                                          # the motor program reaches robot joints
    assert world.joint("arm/lbr_iiwa_joint_1").motor["target"] == pytest.approx(math.radians(20))


def test_robot_joints_are_csv_columns(robot_scene, tmp_path):
    from physics.io.record import Recorder
    world = load_scene(robot_scene)
    out = io.StringIO()
    rec = Recorder(world, out)
    rec.header()
    columns = out.getvalue().splitlines()[0].split(",")
    assert "arm/lbr_iiwa_joint_2.q" in columns and "arm/lbr_iiwa_link_7.x" in columns


def test_robot_scene_round_trips_through_the_writer(robot_scene, tmp_path):
    from physics.io.scene_writer import save_scene
    world = load_scene(robot_scene, {"joint.arm/lbr_iiwa_joint_6.friction": "0.25"})
    world.joint("arm/lbr_iiwa_joint_3").friction = 0.75                    # an edit, as in the panel
    saved = save_scene(world, tmp_path / "saved.toml")
    again = load_scene(saved)
    assert [b.name for b in again.bodies] == [b.name for b in world.bodies]
    for b in world.bodies:
        assert np.abs(again.body(b.name).position - b.position).max() < 1e-12
        assert np.abs(again.body(b.name).orientation - b.orientation).max() < 1e-12
    for j in world.joint_info:
        a, b = world.joint(j.name), again.joint(j.name)
        assert (a.angle, a.friction, a.motor) == (pytest.approx(b.angle, abs=1e-12), b.friction, b.motor)
    text = Path(saved).read_text()
    assert "[[robots]]" in text and "[[joints]]" not in text and "lbr_iiwa_link" not in text


ROBOT_ERRORS = {
    "no urdf": ('[[robots]]\nname = "a"\n', "robots[0].urdf", "missing"),
    "urdf outside the folders": ('[[robots]]\nname = "a"\nurdf = "/etc/x.urdf"\n', "robots[0].urdf", "may not leave"),
    "not a urdf": ('[[robots]]\nname = "a"\nurdf = "robots/kuka_iiwa/meshes/link_0.stl"\n', "robots[0].urdf",
                   ".urdf"),
    "name with a slash": ('[[robots]]\nname = "a/b"\nurdf = "robots/kuka_iiwa/model.urdf"\n', "robots[0].name",
                          "without"),
    "unknown joint": ('[[robots]]\nname = "a"\nurdf = "robots/kuka_iiwa/model.urdf"\n[robots.joints.elbow]\nq = 1\n',
                      "robots[0].joints.elbow", "lbr_iiwa_joint_1"),
    "position beyond the limits": ('[[robots]]\nname = "a"\nurdf = "robots/kuka_iiwa/model.urdf"\n'
                                   '[robots.joints.lbr_iiwa_joint_2]\nq_deg = 150\n',
                                   "robots[0].joints.lbr_iiwa_joint_2.q_deg", "within the joint's limits"),
    "bad servo": ('[[robots]]\nname = "a"\nurdf = "robots/kuka_iiwa/model.urdf"\nservo = "torque"\n',
                  "robots[0].servo", "position, off"),
    "unknown key": ('[[robots]]\nname = "a"\nurdf = "robots/kuka_iiwa/model.urdf"\nfixed = true\n',
                    "robots[0].fixed", "known key"),
    "negative friction": ('[[robots]]\nname = "a"\nurdf = "robots/kuka_iiwa/model.urdf"\n'
                          '[robots.joints.lbr_iiwa_joint_2]\nfriction = -1\n',
                          "robots[0].joints.lbr_iiwa_joint_2.friction", ">= 0"),
}


@pytest.mark.parametrize("case", list(ROBOT_ERRORS))
def test_broken_robots_entry_is_one_line_naming_file_and_key(case, tmp_path):
    text, key, word = ROBOT_ERRORS[case]
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(SceneError) as err:
        load_scene(path)
    assert str(err.value).startswith(f"{path}: {key}: expected ") and word in str(err.value), str(err.value)


def test_robot_override_turns_its_servos_off(robot_scene):
    world = load_scene(robot_scene, {"robot.arm.servo": "off"})
    assert {world.joint(f"arm/lbr_iiwa_joint_{i}").motor["mode"] for i in range(1, 8)} == {"off"}


def test_robot_joint_override_of_an_unknown_robot_is_named(robot_scene):
    with pytest.raises(SceneError, match="--set joint.hand/j1.friction"):
        load_scene(robot_scene, {"joint.hand/j1.friction": "1"})
    with pytest.raises(SceneError, match="--set joint.arm/lbr_iiwa_joint_2.friction: expected a number >= 0"):
        load_scene(robot_scene, {"joint.arm/lbr_iiwa_joint_2.friction": "-1"})


def test_urdf_on_the_command_line_runs_headless(capsys):
    from shell.cli import main
    assert main([str(XARM), "--headless", "--duration", "0.05", "--set",
                 "joint.xarm6_with_gripper/joint2.q_deg=-20"]) == 0
    out = capsys.readouterr().out
    assert "simulated 0.05 s" in out
