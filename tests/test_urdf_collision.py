"""URDF collision meshes as convex pieces (physics/io/urdf.collision_shape,
physics/io/mesh_shapes.link_pieces): the pieces cover the link's mesh, a robot stands on
the floor on its base's hull, and a robot's own links never touch one another."""
from pathlib import Path

import numpy as np
import pytest

from physics import Compound, World
from physics.io import mesh_shapes
from physics.io.urdf import add_robot, read_urdf
from physics.quat import q_to_matrix
from physics.shapes import Plane

ROOT = Path(__file__).resolve().parent.parent
KUKA = ROOT / "assets" / "robots" / "kuka_iiwa" / "model.urdf"
XARM = ROOT / "assets" / "robots" / "xarm6" / "xarm6_with_gripper.urdf"


def _outside(points, pieces):
    """How far each point lies outside the union of the convex pieces (mesh frame), by the
    largest face-plane excess of the nearest piece (a lower bound of the distance, exact
    in front of a face)."""
    worst = np.full(len(points), np.inf)
    for c in pieces:
        R = q_to_matrix(c.frame[1])
        V = c.vertices @ R.T + c.frame[0]
        excess = np.full(len(points), -np.inf)
        for f in c.faces:
            p = V[f]
            n = np.cross(p[1] - p[0], p[2] - p[0])
            n /= np.linalg.norm(n)
            excess = np.maximum(excess, points @ n - p[0] @ n)
        worst = np.minimum(worst, excess)
    return worst


@pytest.mark.parametrize("path", [KUKA, XARM], ids=["kuka_iiwa", "xarm6"])
def test_link_pieces_cover_every_collision_mesh_vertex_within_7_mm_and_are_made_of_mesh_vertices(path):
    model = read_urdf(path)
    meshes = {g.mesh: g.scale for lk in model.links.values() for g, _ in lk.collisions if g.kind == "mesh"}
    assert len(meshes) >= 8
    for mesh, scale in meshes.items():
        pieces = mesh_shapes.link_pieces(mesh, scale)
        assert all(len(c.vertices) <= mesh_shapes.MAX_LINK_VERTICES for c in pieces)
        points = np.asarray(mesh_shapes._mesh(mesh).vertices, float) * scale
        assert _outside(points, pieces).max() < 7e-3, mesh
        # the pieces' vertices are mesh vertices (so the pieces lie inside the mesh's hull)
        for c in pieces:
            V = c.vertices @ q_to_matrix(c.frame[1]).T + c.frame[0]
            gap = np.linalg.norm(V[:, None, :] - points[None, :, :], axis=2).min(axis=1)
            assert gap.max() < 1e-12


def test_a_v_hacd_obj_becomes_one_piece_per_part():
    mesh = ROOT / "assets/robots/xarm6/xarm_description/meshes/xarm6/collision/link4_vhacd.obj"
    pieces = mesh_shapes.link_pieces(str(mesh))
    assert len(pieces) == 5


def test_link_pieces_are_made_once_then_read_back_equal_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    made = []
    make = mesh_shapes._make_pieces
    monkeypatch.setattr(mesh_shapes, "_make_pieces", lambda *a: made.append(a) or make(*a))
    mesh = ROOT / "assets/robots/xarm6/xarm_description/meshes/xarm6/collision/link4_vhacd.obj"
    first = mesh_shapes.link_pieces(str(mesh), (1.0, 1.0, 1.0))
    again = mesh_shapes.link_pieces(str(mesh), (1.0, 1.0, 1.0))
    assert len(made) == 1 and again == first and again is not first
    assert not again[0].vertices.flags.writeable                    # shapes stay immutable
    mesh_shapes.link_pieces(str(mesh), (2.0, 2.0, 2.0))             # another scale: its own pieces
    assert len(made) == 2
    for f in (tmp_path / "mesh-pieces").iterdir():                  # a damaged cache is made again
        f.write_bytes(b"not a pickle")
    assert mesh_shapes.link_pieces(str(mesh), (1.0, 1.0, 1.0)) == first and len(made) == 3


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_a_kuka_arm_driven_into_the_floor_stops_on_it_and_its_links_never_touch_each_other(solver):
    """The shoulder's servo drives the arm 2.3 rad from upright, which would put the
    flange 0.2 m below the floor: the links' hulls come down on the floor and stay there,
    still, the servo pressing."""
    world = World(dt=0.002, solver=solver)
    world.add_body("floor", Plane(), static=True)
    robot = add_robot(world, read_urdf(KUKA), "arm")
    assert all(isinstance(world.body(b).shape, Compound) for b in robot.bodies.values())
    shoulder = world.joint(robot.joints["lbr_iiwa_joint_2"])
    m = shoulder.motor
    shoulder.set_motor("position", 2.3, max_force=m["max_force"], frequency=m["frequency"], damping=m["damping"])
    bodies = {world.body(b).index for b in robot.bodies.values()}
    floor = world.body("floor").index
    for _ in range(15):
        world.advance(0.2)
        pairs = world.contacts()["bodies"]
        assert not any(a in bodies and b in bodies for a, b in pairs)   # no link against link
    c = world.contacts()
    assert len(c["depth"]) >= 2 and all(floor in p for p in c["bodies"])  # the arm bears on the floor
    assert c["depth"].max() < 5e-3                                      # without sinking into it
    assert 1.7 < shoulder.angle < 2.2                                   # stopped by the floor, short of 2.3
    for b in robot.bodies.values():
        assert np.linalg.norm(world.body(b).velocity) < 1e-2            # at rest, no jitter
