"""Rendering checks pixels: colours where bodies project, shadows, overlays, the window."""
import numpy as np
import pytest

import physics
from physics import Box, Sphere, World
from render.camera import OrbitCamera
from render.offscreen import render_world
from render.scene_renderer import LIGHT_DIR

W, H = 320, 240


def _pixel(rgb, cam, point):
    x, y = cam.project(point, W, H)
    return rgb[int(round(y)), int(round(x))].astype(float)


def _world_with(body_shape, position, color):
    w = World()
    w.add_body("ground", physics.Plane(), static=True, color=(0.6, 0.6, 0.6))
    w.add_body("thing", body_shape, mass=1.0, position=position, color=color)
    return w


def test_body_colour_appears_where_its_centre_projects():
    w = _world_with(Box((0.3, 0.3, 0.3)), (0, 0, 1.0), (0.9, 0.1, 0.1))
    cam = OrbitCamera()
    cam.look((3.0, -3.0, 2.0), (0.0, 0.0, 1.0))
    rgb, _ = render_world(w, W, H, camera=cam)
    r, g, b = _pixel(rgb, cam, (0, 0, 1.0))
    assert r > 1.8 * g and r > 1.8 * b            # red where the box is
    sky = rgb[2, W // 2].astype(float)
    assert sky[2] > sky[0]                         # blue-grey sky at the top


def test_shadow_darkens_the_ground_under_a_raised_body():
    p = np.array([0.0, 0.0, 1.5])
    w = _world_with(Sphere(0.4), p, (0.8, 0.8, 0.8))
    q = p + LIGHT_DIR * (p[2] / -LIGHT_DIR[2])     # where the light ray through the centre lands
    cam = OrbitCamera()
    cam.look(q + np.array([0.0, 4.0, 4.0]), q)
    lit, _ = render_world(w, W, H, camera=cam, shadows=False)
    shaded, _ = render_world(w, W, H, camera=cam, shadows=True)
    under_lit, under_shaded = _pixel(lit, cam, q).sum(), _pixel(shaded, cam, q).sum()
    far = q + np.array([1.5, 0.0, 0.0])
    assert under_shaded < 0.75 * under_lit
    assert _pixel(shaded, cam, far).sum() == pytest.approx(_pixel(lit, cam, far).sum(), rel=0.05)


def test_overlays_draw_joint_frames():
    w = physics.load_scene("scenes/gallery.toml")
    plain, cam = render_world(w, W, H)
    framed, _ = render_world(w, W, H, camera=cam, overlays={"joints": True, "limits": True, "com": True})
    changed = np.any(plain != framed, axis=2).mean()
    assert changed > 0.002


def test_contacts_overlay_draws_the_normals_at_the_contact_points():
    """A box resting on the ground (impulse solver): with the contacts overlay (key N) the
    pixels just above each of its four bottom corners turn magenta, the normal's colour."""
    w = World(dt=0.01, solver="impulse")
    w.add_body("ground", physics.Plane(), static=True, color=(0.6, 0.6, 0.6))
    w.add_body("box", Box((0.3, 0.3, 0.3)), mass=1.0, position=(0, 0, 0.3), color=(0.2, 0.3, 0.9))
    w.advance(0.1)
    points = w.contacts()["point"]
    assert len(points) == 4
    cam = OrbitCamera()
    cam.look((2.5, -3.0, 1.2), (0.0, 0.0, 0.3))
    plain, _ = render_world(w, W, H, camera=cam)
    shown, _ = render_world(w, W, H, camera=cam, overlays={"contacts": True})
    def magenta_near(rgb, point):
        x, y = cam.project(point, W, H)
        x, y = int(round(x)), int(round(y))
        patch = rgb[max(y - 4, 0):y + 5, max(x - 4, 0):x + 5].astype(float)
        r, g, b = patch[..., 0], patch[..., 1], patch[..., 2]
        return bool(np.any((r > 1.6 * g) & (b > 1.4 * g) & (r > 120)))

    lifted = [p + np.array([0.0, 0.0, 0.05]) for p in points]      # halfway up each normal
    assert all(magenta_near(shown, p) for p in lifted)
    assert not any(magenta_near(plain, p) for p in lifted)


def test_violation_tint_turns_bodies_green_when_joints_hold():
    w = _world_with(Box((0.3, 0.3, 0.3)), (0, 0, 1.0), (0.9, 0.1, 0.1))
    w.add_joint("pin", "spherical", "world", "thing", anchor=(0, 0, 1.3))
    cam = OrbitCamera()
    cam.look((3.0, -3.0, 2.0), (0.0, 0.0, 1.0))
    rgb, _ = render_world(w, W, H, camera=cam, overlays={"violation": True})
    r, g, b = _pixel(rgb, cam, (0, 0, 1.0))
    assert g > 1.5 * r


def test_real_window_renders_the_scene_and_keys_toggle_overlays(tmp_path):
    from pyglet.window import key
    from shell.window import ViewerWindow
    world = physics.load_scene("scenes/gallery.toml")
    win = ViewerWindow(world, "gallery", width=W, height=H)
    win.closed = False

    def press(symbol):
        win.dispatch_event("on_key_press", symbol, 0)
        win.dispatch_events()                # pyglet queues window events until here

    try:
        win.dispatch_events()
        win.render_frame()
        first = win.screenshot(str(tmp_path / "a.png"))
        assert len(np.unique(first.reshape(-1, 3), axis=0)) > 50      # a real picture, not a blank
        press(key.J)
        win.render_frame()
        assert np.any(win.screenshot(str(tmp_path / "b.png")) != first)
        press(key.SPACE)
        assert win.driver.paused
        t = world.time
        win.driver.update(0.5)
        assert world.time == t
        press(key.RIGHT)
        assert world.time == pytest.approx(t + world.dt)
        assert win.ctx.error == "GL_NO_ERROR"
        assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        win.close()


def _offscreen_around_a_window(folder):
    """Offscreen renders before, during and after a window of the same size are the same
    image, and the window keeps its GL context. (pyglet's GLX context stays current on
    the thread, after close too: its shadow window's; libglvnd then refuses eglMakeCurrent
    and the offscreen renderer drew into that context, reading back the window's frame.)"""
    from render.frame import write_png
    from render.offscreen import current_contexts
    red_box = _world_with(Box((0.35, 0.35, 0.1)), (0, 0, 1.0), (0.9, 0.1, 0.1))
    cam = OrbitCamera()
    cam.look((0.0, -0.6, 3.5), (0.0, 0.0, 1.0))
    before, _ = render_world(red_box, W, H, camera=cam)        # the target of this size exists now
    r, g, b = _pixel(before, cam, (0.3, 0.0, 1.1))
    assert r > 1.8 * g and r > 1.8 * b
    from shell.window import ViewerWindow                       # pyglet imported only now
    win = ViewerWindow(physics.load_scene("scenes/gallery.toml"), "gallery", width=W, height=H)
    try:
        win.dispatch_events()
        win.render_frame()
        shown = win.pixels()
        glx = current_contexts()["glx"]
        during, _ = render_world(red_box, W, H, camera=cam)    # the window open
        assert current_contexts()["glx"] == glx                 # the window's context given back
        import pyglet
        assert pyglet.gl.current_context is win.context         # (pyglet's record of it too)
        win.render_frame()
        assert np.array_equal(win.pixels(), shown)              # … and the window still draws
        assert win.ctx.error == "GL_NO_ERROR"
    finally:
        win.close()
    after, _ = render_world(red_box, W, H, camera=cam)         # closed: pyglet's shadow context current
    for name, rgb in (("during", during), ("after", after)):
        write_png(str(folder / f"{name}.png"), rgb)
        assert np.array_equal(rgb, before), f"offscreen image {name} the window differs from the one before it: {folder / name}.png"


def test_offscreen_rendering_around_a_window_draws_its_own_image(tmp_path):
    _offscreen_around_a_window(tmp_path)


def test_offscreen_rendering_around_a_window_when_egl_came_first(tmp_path):
    """The order that broke test_visual_mesh after this module: the EGL context made before
    pyglet is imported (else it was made while pyglet's shadow context was current, and
    silently drew there). A fresh interpreter, as the order in this process is not ours."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    code = ("import sys, pathlib; import test_render as t; assert 'pyglet' not in sys.modules; "
            "t._offscreen_around_a_window(pathlib.Path(sys.argv[1]))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(root / "tests"),
                                                       os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]


@pytest.mark.parametrize("aspect", [0.6, 1.17, 16 / 9, 3.0])
def test_camera_fit_frames_spheres_tightly_for_any_aspect(aspect):
    rng = np.random.default_rng(7)
    for _ in range(20):
        centres = rng.normal(size=(12, 3)) * rng.uniform(0.2, 5.0, size=3)
        radii = rng.uniform(0.0, 0.5, size=12)
        cam = OrbitCamera()
        cam.set(centres.mean(axis=0) + rng.normal(size=3), 3.0, rng.uniform(-180, 180), rng.uniform(-30, 70))
        yaw, pitch = cam.yaw, cam.pitch
        cam.fit(centres, radii, aspect)
        assert (cam.yaw, cam.pitch) == (yaw, pitch)                  # the view direction is kept
        assert cam.fits(centres, radii, aspect)                      # all in view …
        assert not cam.fits(centres, radii, aspect, margin=0.92 * 0.97)   # … and no farther than needed
        for c, r in zip(centres, radii):                              # pixels agree with the math
            x, y = cam.project(c, 1000 * aspect, 1000)
            assert 0 <= x <= 1000 * aspect and 0 <= y <= 1000


def test_the_offscreen_camera_fits_the_image_shape():
    w = physics.load_scene("scenes/gallery.toml")
    from render.frame import scene_spheres
    centres, radii = scene_spheres(w.snapshot())
    for size in ((320, 240), (240, 320), (640, 200)):
        _, cam = render_world(w, *size)
        assert cam.fits(centres, radii, size[0] / size[1], margin=1.0)
