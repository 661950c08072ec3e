"""Batch building (World.add_bodies / add_joints, used by make_chain and the scene
loader's [[chains]]) gives bit for bit the world that adding one body and one joint at a
time gives: the same model, state, control and work arrays, the same names and infos,
the same rows once written — so the physics cannot tell how a world was built. Bad input
raises add_body's and add_joint's errors and leaves the world as it was."""
import math

import numpy as np
import pytest

from physics import World, load_scene
from physics.builders import make_chain
from physics.shapes import Box, Capsule
from physics.quat import q_from_euler_deg

TABLES = {"model": ("bodies", "joints", "rows", "blocks"), "state": ("bodies", "joints", "rows"),
          "control": ("bodies", "joints", "loads"), "work": ("bodies", "rows")}


def assert_same_world(a, b):
    """Every array of the two worlds equal bit for bit (NaN and −0 included), and their
    names and infos equal; then the same again after the rows are written."""
    for when in ("built", "rows written"):
        for owner, tables in TABLES.items():
            for table in tables:
                ta, tb = getattr(getattr(a, owner), table), getattr(getattr(b, owner), table)
                assert ta.count == tb.count, (when, owner, table)
                for name in ta.names:
                    x, y = getattr(ta, name), getattr(tb, name)
                    assert x.dtype == y.dtype and x.shape == y.shape, (when, owner, table, name)
                    assert x.tobytes() == y.tobytes(), f"{when}: {owner}.{table}.{name} differs"
        assert a.body_info == b.body_info and a.joint_info == b.joint_info
        assert a._body_index == b._body_index and a._joint_index == b._joint_index
        assert a.model.version > 0 and b.model.version > 0
        a._ensure_rows()
        b._ensure_rows()
        for name in ("J", "C", "active"):
            assert getattr(a.work.rows, name).tobytes() == getattr(b.work.rows, name).tobytes(), name
        assert a.state.joints.q.tobytes() == b.state.joints.q.tobytes()


def chain_link_by_link(world, name, links, joint, link_length, radius, mass, origin, direction, axis, parent,
                       color):
    """make_chain as it was before batch building: add_body and add_joint per link."""
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    origin = np.asarray(origin, float)
    z = np.array([0.0, 0.0, 1.0])
    v = np.cross(z, d)
    s, c = np.linalg.norm(v), float(np.dot(z, d))
    if s < 1e-12:
        quat = np.array([0.0, 0.0, 0.0, 1.0]) if c > 0 else np.array([1.0, 0.0, 0.0, 0.0])
    else:
        ang = np.arctan2(s, c)
        quat = np.concatenate([v / s * np.sin(ang / 2), [np.cos(ang / 2)]])
    half = max(0.5 * link_length - radius, 1e-6)
    prev = parent
    for i in range(links):
        centre = origin + d * link_length * (i + 0.5)
        b = world.add_body(f"{name}_{i}", Capsule(radius, half), mass=mass, position=centre, orientation=quat,
                           color=color)
        world.add_joint(f"{name}_j{i}", joint, prev, b.name, anchor=origin + d * link_length * i, axis=axis)
        prev = b.name


CHAINS = [dict(name="c", links=7, link_length=0.13, radius=0.02, mass=0.3, origin=(0.1, -0.2, 1.3),
               direction=(1.0, 0.3, -0.2), axis=(0.2, 1.0, 0.1), parent="world", color=(0.1, 0.2, 0.3)),
          dict(name="d", links=4, link_length=0.1, radius=0.06, mass=0.1, origin=(0.0, 0.0, 0.5),
               direction=(0.0, 0.0, -1.0), axis=(1.0, 0.0, 0.0), parent="c_3", color=(0.9, 0.5, 0.2))]


@pytest.mark.parametrize("joint", ["revolute", "spherical"])      # the chain section's joint types
def test_a_chain_built_at_once_has_the_same_arrays_as_one_built_link_by_link(joint):
    batch, single = World(solver="impulse"), World(solver="impulse")
    for kw in CHAINS:
        make_chain(batch, joint=joint, **kw)
        chain_link_by_link(single, joint=joint, **kw)
    assert_same_world(batch, single)


def test_a_scene_chain_is_the_chain_built_link_by_link():
    world = load_scene("scenes/chain.toml", {"chain.pendulum.links": "12"})
    single = World(dt=world.dt, solver=world.solver)
    single.add_body("ground", world.body("ground").shape, static=True, color=(0.55, 0.57, 0.6))
    chain_link_by_link(single, "pendulum", 12, "revolute", 0.1, 0.02, 0.1, (0.0, 0.0, 2.0), (1.0, 0.0, 0.0),
                       (0.0, 1.0, 0.0), "world", (0.85, 0.55, 0.2))
    assert_same_world(world, single)


def _posts_and_links(world, k):
    """A static post and k boxes in assorted poses; returns the link names."""
    world.add_body("post", Box((0.2, 0.2, 2.0)), static=True, position=(0.0, 0.0, 1.0),
                   orientation=q_from_euler_deg(0, 0, 30))
    rng = np.random.default_rng(7)
    names = [f"b{i}" for i in range(k)]
    pos = rng.normal(size=(k, 3))
    quat = rng.normal(size=(k, 4))
    masses = rng.uniform(0.5, 3.0, k)
    return names, pos, quat, masses


JOINT_CASES = {
    "fixed": dict(),
    "spherical": dict(swing=0.6, twist=(-0.4, 0.3), friction=0.2),
    "revolute": dict(limits=(-1.0, 0.5), friction=1.5),
    "universal": dict(axis2=None, limits=(-0.3, 0.3), limits2=(-0.2, 0.4)),
    "prismatic": dict(limits=(-0.1, 0.2), friction=3.0),
}


@pytest.mark.parametrize("kind", list(JOINT_CASES))
def test_bodies_and_joints_added_at_once_equal_those_added_one_by_one(kind):
    """Per-body masses, poses and colours, per-joint anchors and axes (universal: a second
    axis perpendicular to each), shared limits and friction; parents the post or a body."""
    k = 6
    batch, single = World(), World()
    names, pos, quat, masses = _posts_and_links(batch, k)
    _posts_and_links(single, k)
    colors = np.linspace(0.1, 0.9, 3 * k).reshape(k, 3)
    shape = Box((0.3, 0.2, 0.1))
    batch.add_bodies(names, shape, mass=masses, position=pos, orientation=quat, color=colors,
                     velocity=np.arange(3 * k, dtype=float).reshape(k, 3), angular_velocity=(0.1, 0.2, 0.3))
    for i in range(k):
        single.add_body(names[i], shape, mass=masses[i], position=pos[i], orientation=quat[i], color=colors[i],
                        velocity=np.arange(3 * i, 3 * i + 3, dtype=float), angular_velocity=(0.1, 0.2, 0.3))
    rng = np.random.default_rng(3)
    anchors = rng.normal(size=(k, 3))
    axes = rng.normal(size=(k, 3))
    kw = dict(JOINT_CASES[kind])
    axes2 = None
    if "axis2" in kw:
        axes2 = np.cross(axes, rng.normal(size=(k, 3)))     # perpendicular to each axis
        kw.pop("axis2")
    parents = ["post"] + names[:-1]
    batch.add_joints([f"j{i}" for i in range(k)], kind, parents, names, anchors, axis=axes, axis2=axes2, **kw)
    for i in range(k):
        single.add_joint(f"j{i}", kind, parents[i], names[i], anchors[i], axis=axes[i],
                         axis2=None if axes2 is None else axes2[i], **kw)
    assert_same_world(batch, single)


def test_batch_building_is_linear_in_the_number_of_links():
    """Doubling the links doubles the rows and blocks; nothing is rebuilt per link (the
    arrays keep their storage, grown by doubling, as in one-by-one building)."""
    world = World()
    make_chain(world, links=300, joint="spherical")
    assert world.model.rows.count == 300 * 8 and world.model.blocks.count == 300
    assert world.model.joints.row_start[-1] == 299 * 8
    assert world.joint("chain_j299").kind == "spherical"
    assert world.body("chain_299").mass == pytest.approx(0.1)


def _counts(world):
    return (world.model.bodies.count, world.model.joints.count, world.model.rows.count,
            len(world.body_info), len(world.joint_info))


@pytest.mark.parametrize("call, message", [
    (lambda w: w.add_bodies(["a", "a"], Box((1, 1, 1)), mass=1.0), "body name must be a new"),
    (lambda w: w.add_bodies(["a", "world"], Box((1, 1, 1)), mass=1.0), "body name must be a new"),
    (lambda w: w.add_bodies(["a", "b"], Box((1, 1, 1)), mass=[1.0, -2.0]), "body 'b': mass must be between 1e-06 and 1e.12 kg, got -2"),
    (lambda w: w.add_bodies(["a", "b"], Box((1, 1, 1)), mass=1.0, density=3.0), "exactly one of mass"),
    (lambda w: w.add_bodies(["a", "b"], Box((1, 1, 1)), mass=1.0, orientation=[(0, 0, 0, 1), (0, 0, 0, 0)]),
     "body 'b': orientation must be a quaternion"),
    (lambda w: w.add_bodies(["a", "b"], Box((1, 1, 1)), mass=1.0, position=[(0, 0, 0), (0, math.nan, 0)]),
     "position must be 3 finite numbers"),
    (lambda w: w.add_joints(["j", "k"], "revolute", "world", ["p", "nope"], (0, 0, 0)),
     "joint 'k': child 'nope' is not a body"),
    (lambda w: w.add_joints(["j", "k"], "revolute", ["world", "p"], ["p", "p"], (0, 0, 0)),
     "joint 'k': parent and child are the same body"),
    (lambda w: w.add_joints(["j", "j"], "revolute", "world", ["p", "q"], (0, 0, 0)), "joint name must be a new"),
    (lambda w: w.add_joints(["j", "k"], "hinge", "world", ["p", "q"], (0, 0, 0)), "type must be one of"),
    (lambda w: w.add_joints(["j", "k"], "revolute", "world", ["p", "q"], (0, 0, 0), axis=[(1, 0, 0), (0, 0, 0)]),
     "joint 'k': axis must not be zero"),
    (lambda w: w.add_joints(["j", "k"], "universal", "world", ["p", "q"], (0, 0, 0), axis=(1, 0, 0),
                            axis2=[(0, 1, 0), (1, 1, 0)]), "joint 'k': axis and axis2 must be perpendicular"),
    (lambda w: w.add_joints(["j", "k"], "revolute", "world", ["p", "q"], (0, 0, 0), limits=(1.0, -1.0)),
     "limits need finite lo <= hi"),
    (lambda w: w.add_joints(["j", "k"], "spherical", "world", ["p", "q"], (0, 0, 0), swing=4.0),
     "swing cone must be in"),
    (lambda w: w.add_joints(["j", "k"], "fixed", "world", ["p", "q"], (0, 0, 0), limits=(0, 1)), "has no limit #0"),
    (lambda w: w.add_joints(["j", "k"], "revolute", "world", ["p", "q"], (0, 0, 0), friction=-1.0),
     "friction must be finite and >= 0"),
])
def test_bad_batches_raise_the_single_add_errors_and_change_nothing(call, message):
    world = World()
    world.add_bodies(["p", "q"], Box((0.1, 0.1, 0.1)), mass=1.0, position=[(0, 0, 1), (0, 0, 2)])
    before = _counts(world)
    with pytest.raises(ValueError, match=message):
        call(world)
    assert _counts(world) == before
