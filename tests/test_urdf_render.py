"""A robot's links drawn from their visual parts (physics/visual.py, render/visual_mesh.py):
each part's pose and scale baked into its mesh, DAE read through trimesh, the URDF's
material colours on screen."""

import numpy as np

import physics
from physics.io.urdf import add_robot, read_urdf
from physics.quat import q_from_axis_angle, q_to_matrix
from physics.visual import VisualPart
from render import visual_mesh
from render.camera import OrbitCamera
from render.offscreen import render_world
from test_urdf import RIG

W, H = 320, 240

def test_visual_part_bakes_pose_and_scale_and_reads_dae(tmp_path):
    import trimesh
    box = trimesh.creation.box(extents=(0.2, 0.4, 0.6))
    path = tmp_path / "box.dae"
    box.export(str(path))
    q = q_from_axis_angle((1.0, 2.0, 0.5), 0.7)
    part = VisualPart(mesh=str(path), position=(0.1, -0.2, 0.3), orientation=tuple(q), scale=(2.0, 1.0, 0.5))
    verts, idx = visual_mesh.part_mesh(part)
    assert len(idx) % 3 == 0 and len(idx) >= 36
    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.2, 0.2) for z in (-0.3, 0.3)])
    expected = corners * (2.0, 1.0, 0.5) @ q_to_matrix(q).T + (0.1, -0.2, 0.3)
    got = verts[:, :3].astype(float)
    for c in expected:                                  # every corner is a vertex of the baked mesh
        assert np.linalg.norm(got - c, axis=1).min() < 1e-6
    assert np.allclose(np.linalg.norm(verts[:, 3:], axis=1), 1.0, atol=1e-5)

def test_robot_links_are_drawn_in_their_material_colours(tmp_path):
    path = tmp_path / "rig.urdf"
    path.write_text(RIG)
    world = physics.World(dt=0.001, solver="impulse")
    add_robot(world, read_urdf(path), "rig")
    cam = OrbitCamera()
    carriage = world.body("rig/carriage").position
    cam.look(carriage + (0.0, -1.2, 0.2), carriage)
    rgb, _ = render_world(world, W, H, camera=cam, shadows=False)
    body = world.body("rig/carriage")
    centre = body.position + q_to_matrix(body.orientation) @ np.array([0.0, 0.0, -0.05])   # the box's centre
    x, y = cam.project(centre, W, H)
    r, g, b = rgb[int(round(y)), int(round(x))].astype(float)
    assert r > 2 * g and r > 2 * b                      # material "red" (0.8, 0.1, 0.1)
    tip = world.body("rig/tip")
    tool = tip.position + q_to_matrix(tip.orientation) @ np.array(
        world.body_info[tip.index].visual_mesh[0].position)
    cam.look(tool + (0.0, -0.3, 0.0), tool)
    rgb, _ = render_world(world, W, H, camera=cam, shadows=False)
    x, y = cam.project(tool, W, H)
    r, g, b = rgb[int(round(y)), int(round(x))].astype(float)
    assert b > 2 * r and b > 2 * g                      # the fused tool's inline colour (0, 0, 1)
