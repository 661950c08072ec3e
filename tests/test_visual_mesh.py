"""Bodies drawn with visual meshes from OBJ/STL files; bad files fall back to the shape."""
from pathlib import Path

import numpy as np

import physics
from physics import Box, World
from render import visual_mesh
from render.camera import OrbitCamera
from render.offscreen import render_world

W, H = 320, 240
ROOT = Path(__file__).resolve().parent.parent
TORUS = ROOT / "assets" / "meshes" / "torus.obj"      # major radius 0.3 m, tube radius 0.1 m, in xy
RED = (0.9, 0.1, 0.1)


def _world(mesh):
    w = World()
    w.add_body("ground", physics.Plane(), static=True, color=(0.6, 0.6, 0.6))
    w.add_body("thing", Box((0.35, 0.35, 0.1)), mass=1.0, position=(0, 0, 1.0), color=RED,
               visual_mesh=None if mesh is None else str(mesh))
    return w


def _camera():
    cam = OrbitCamera()
    cam.look((0.0, -0.6, 3.5), (0.0, 0.0, 1.0))     # from above
    return cam


def _red(rgb, cam, point):
    x, y = cam.project(point, W, H)
    r, g, b = rgb[int(round(y)), int(round(x))].astype(float)
    return r > 1.8 * g and r > 1.8 * b


def _silhouettes(mesh):
    cam = _camera()
    rgb, _ = render_world(_world(mesh), W, H, camera=cam)
    return [_red(rgb, cam, p) for p in ((0.0, 0.0, 1.1), (0.3, 0.0, 1.1), (-0.3, 0.0, 1.1), (0.33, 0.33, 1.1))], rgb


def test_body_with_a_visual_mesh_draws_the_mesh_not_its_shape():
    box, _ = _silhouettes(None)
    torus, _ = _silhouettes(TORUS)
    assert box == [True, True, True, True]          # the box covers its centre and corners
    assert torus == [False, True, True, False]      # the torus: a hole in the middle, round outside


def test_stl_files_load_too(tmp_path):
    import trimesh
    stl = tmp_path / "torus.stl"
    trimesh.load(str(TORUS), force="mesh").export(str(stl))
    verts, idx = visual_mesh.load(stl)
    assert verts.shape[1] == 6 and len(idx) % 3 == 0
    assert np.allclose(np.linalg.norm(verts[:, 3:], axis=1), 1.0, atol=1e-4)
    assert _silhouettes(stl)[0] == [False, True, True, False]


def test_relative_paths_are_looked_up_from_the_repository_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert visual_mesh.resolve("assets/meshes/torus.obj") == TORUS.resolve()
    assert visual_mesh.resolve("assets/meshes/none.obj") is None
    assert _silhouettes("assets/meshes/torus.obj")[0] == [False, True, True, False]


def test_missing_or_broken_files_fall_back_to_the_shape_with_one_warning(tmp_path, capsys):
    _, box = _silhouettes(None)
    broken = tmp_path / "broken.stl"
    broken.write_bytes(b"solid nothing\n this is not an stl file \x00\x01\x02")
    empty = tmp_path / "empty.obj"
    empty.write_text("# no geometry\n")
    for bad in (tmp_path / "missing.obj", broken, empty):
        for _ in range(2):                               # drawn twice, warned once
            _, rgb = _silhouettes(bad)
            assert np.array_equal(rgb, box)
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(bad) in err[0] and "warning" in err[0]


def test_a_mesh_beside_its_scene_is_drawn_when_run_from_another_directory(tmp_path, monkeypatch):
    folder = tmp_path / "my_scene"
    folder.mkdir()
    (folder / "ring.obj").write_text(TORUS.read_text())
    (folder / "ring.toml").write_text('[[bodies]]\nname = "ground"\nshape = "plane"\nstatic = true\n'
                                      '[[bodies]]\nname = "thing"\nshape = "box"\nsize = [0.7, 0.7, 0.2]\n'
                                      'mass = 1.0\nposition = [0, 0, 1.0]\ncolor = [0.9, 0.1, 0.1]\n'
                                      'visual_mesh = "ring.obj"\n')
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    world = physics.load_scene("../my_scene/ring.toml")
    assert world.body_info[2].visual_mesh == str((folder / "ring.obj").resolve())
    cam = _camera()
    rgb, _ = render_world(world, W, H, camera=cam)
    assert [_red(rgb, cam, p) for p in ((0.0, 0.0, 1.1), (0.3, 0.0, 1.1), (-0.3, 0.0, 1.1), (0.33, 0.33, 1.1))] \
        == [False, True, True, False]                    # the torus, not the box
