"""World → TOML → World builds the same world: every shipped scene, and edited ones."""
import math
from pathlib import Path

import numpy as np
import pytest

import physics
from physics.io.scene_writer import save_scene, scene_dict

SCENES = sorted((Path(__file__).resolve().parent.parent / "scenes").glob("*.toml"))
# (owner, table, array) of the world's arrays that must round-trip
ARRAYS = ([("state", "bodies", f) for f in ("pos", "quat", "vel", "omega")]
          + [("model", "bodies", f) for f in ("inv_mass", "inertia")]
          + [("model", "joints", f) for f in ("type", "body", "anchor_a", "anchor_b", "frame_a", "frame_b",
                                               "limit_on", "friction", "damping", "motor_max", "motor_freq", "motor_damping")]
          + [("control", "joints", f) for f in ("motor_mode", "motor_target")]
          + [("control", "loads", f) for f in ("body", "force", "torque", "point", "at_point", "window")])


def _array(world, owner, table, name):
    return getattr(getattr(getattr(world, owner), table), name)


def _close(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, what
    if a.dtype.kind in "if":
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True), what
    else:
        assert np.array_equal(a, b), what


def assert_same_world(w1, w2):
    assert [(b.name, b.shape, b.color, b.visual_mesh) for b in w1.body_info] == \
           [(b.name, b.shape, b.color, b.visual_mesh) for b in w2.body_info]
    assert [(j.name, j.kind, j.parent, j.child) for j in w1.joint_info] == \
           [(j.name, j.kind, j.parent, j.child) for j in w2.joint_info]
    for where in ARRAYS:
        _close(_array(w1, *where), _array(w2, *where), ".".join(where))
    m1, m2 = w1.model.joints, w2.model.joints
    for f in ("limit_lo", "limit_hi"):          # a limit that is off has no range
        _close(getattr(m1, f) * m1.limit_on, getattr(m2, f) * m2.limit_on, f)
    assert (w1.dt, w1.solver, w1.solver_settings("penalty")["penalty_preset"], w1.gyroscopic) == (w2.dt, w2.solver, w2.solver_settings("penalty")["penalty_preset"], w2.gyroscopic)
    _close(w1.gravity, w2.gravity, "gravity")
    assert w1.solver_settings("penalty") == w2.solver_settings("penalty")
    assert w1.solver_settings("impulse") == w2.solver_settings("impulse")
    assert getattr(w1, "view", {}) == getattr(w2, "view", {})
    ropes1, ropes2 = getattr(w1, "ropes", {}), getattr(w2, "ropes", {})
    assert list(ropes1) == list(ropes2)
    for name in ropes1:
        r1, r2 = ropes1[name], ropes2[name]
        for k in ("segments", "radius", "density", "E", "G", "damping", "friction", "ground"):
            assert getattr(r1, k) == pytest.approx(getattr(r2, k), rel=1e-12), f"rope {name}.{k}"
        _close(r1.positions, r2.positions, f"rope {name} positions")
    assert [(e[0], e[1], e[2]) for e in getattr(w1, "_events", [])] == \
           [(e[0], e[1], e[2]) for e in getattr(w2, "_events", [])]
    _close([e[3] for e in getattr(w1, "_events", [])], [e[3] for e in getattr(w2, "_events", [])], "events")


def _round_trip(world, tmp_path, name="out.toml"):
    path = tmp_path / name
    save_scene(world, path)
    return physics.load_scene(path)


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_every_scene_round_trips_to_the_same_world(path, tmp_path):
    w1 = physics.load_scene(path)
    w2 = _round_trip(w1, tmp_path)
    assert_same_world(w1, w2)
    # the same world steps the same way
    n = max(1, int(round(0.1 / w1.dt)))
    w1.advance_steps(n)
    w2.advance_steps(n)
    _close(w1.state.bodies.pos, w2.state.bodies.pos, "positions after stepping")
    _close(w1.state.bodies.quat, w2.state.bodies.quat, "orientations after stepping")


def test_edits_are_written_and_the_state_before_the_first_step(tmp_path):
    world = physics.load_scene("scenes/gallery.toml")
    world.advance(0.2)                       # the file keeps the initial state, not this one
    world.joint("hinge").set_limit(math.radians(-20), math.radians(35))
    world.joint("hinge").friction = 1.5
    world.joint("ball").damping = 0.25
    world.joint("rail").set_limit(-0.05, 0.3)
    world.joint("ball").set_limit(0.0, math.radians(25))           # swing cone
    world.joint("cross").set_limit(None, dof=1)
    world.joint("hinge").set_motor("velocity", target=0.7, max_force=3.0)
    world.solver = "penalty"
    world.configure("penalty", penalty_preset="paper")
    world.configure("penalty", alpha_lin=4000.0, zeta=0.8)
    world.configure("impulse", iterations=17, epsilon=1e-7, time_cap_ms=0.4, warm_start=False,
                               stabilization="baumgarte", erp=0.3, substeps=3)
    world.gravity = (0.0, 0.0, -1.62)
    world.dt = 0.004
    w2 = _round_trip(world, tmp_path)
    world.reset()
    world.joint("hinge").set_motor("velocity", target=0.7, max_force=3.0)   # reset restores motor state
    assert_same_world(world, w2)
    assert w2.joint("cross").limit(1) is None
    assert w2.joint("ball").limit(0)[1] == pytest.approx(math.radians(25))


def test_the_view_given_replaces_the_scene_view(tmp_path):
    world = physics.load_scene("scenes/door.toml")
    data = scene_dict(world, view={"eye": (1, 2, 3), "target": np.array([0.0, 0.5, 1.0])})
    assert data["view"] == {"eye": [1.0, 2.0, 3.0], "target": [0.0, 0.5, 1.0]}
    assert data["joints"][0]["friction"] == 20.0 and data["solver"]["kind"] == "impulse"


def test_a_mesh_beside_its_scene_is_saved_relative_and_reloads_from_another_folder(tmp_path):
    """Save as… writes a visual mesh path the loader finds again: relative to the new file
    when the mesh is beside it, else relative to the project (assets/…)."""
    import shutil
    folder = tmp_path / "scene"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parent.parent / "assets" / "meshes" / "torus.obj", folder / "ring.obj")
    (folder / "s.toml").write_text('[[bodies]]\nname = "a"\nshape = "box"\nsize = [0.2, 0.2, 0.2]\nmass = 1.0\n'
                                   'visual_mesh = "ring.obj"\n[[bodies]]\nname = "b"\nshape = "sphere"\n'
                                   'radius = 0.1\nmass = 1.0\nvisual_mesh = "assets/meshes/torus.obj"\n')
    world = physics.load_scene(folder / "s.toml")
    save_scene(world, folder / "copy.toml")
    text = (folder / "copy.toml").read_text()
    assert 'visual_mesh = "ring.obj"' in text and 'visual_mesh = "assets/meshes/torus.obj"' in text
    again = physics.load_scene(folder / "copy.toml")
    assert [b.visual_mesh for b in again.body_info] == [b.visual_mesh for b in world.body_info]
