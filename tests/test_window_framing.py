"""What the window shows: every scene framed in the 3D view left of the panel (pixels:
each body's silhouette lies wholly inside the view), the framing follows the panel
(Tab) and double-click focuses a body in the visible view; the selected joint's outline
sits on a visible body."""
from pathlib import Path

import numpy as np
import pytest

from window_helpers import frame, window

SCENES = Path(__file__).resolve().parent.parent / "scenes"
W, H = 1728, 972                  # the default window on a 1920 × 1080 screen
MARGIN = 2                        # pixels a silhouette must stay off the view's edges


@pytest.fixture(scope="module")
def win():
    yield from window("gallery.toml", W, H, setup=_full_quality_no_shadows)


def _full_quality_no_shadows(w):
    from render.quality import FULL
    w.set_quality(FULL)
    w.renderer.shadows = False     # silhouettes only


_TARGETS = {}        # size → RenderTarget, kept (releasing a bound framebuffer upsets moderngl)


def _view_pixels(win, snap):
    """The 3D view as the window draws it (its camera, size and renderer), for `snap`."""
    from render.frame import RenderTarget
    _, scene, _ = win._fb_sizes()
    key = (id(win.ctx), scene)
    if key not in _TARGETS:
        _TARGETS[key] = RenderTarget(win.ctx, scene, samples=0)
    target = _TARGETS[key]
    win.renderer.draw(snap, win.camera, scene, target.msaa)
    rgb = target.pixels()
    assert win.ctx.error == "GL_NO_ERROR"
    return rgb


def _silhouettes(win):
    """{name: (x0, y0, x1, y1) or None}: where each visible body and rope is drawn in the
    3D view, found by drawing the scene without it and diffing."""
    from render.frame import visible_bodies
    snap = win.world.snapshot()
    base = _view_pixels(win, snap)
    out = {}
    items = [(snap["names"][i], i) for i in visible_bodies(snap, win.renderer.radii)]
    items += [(r["name"], ("rope", k)) for k, r in enumerate(snap.get("ropes") or [])]
    for name, what in items:
        s = dict(snap)
        if isinstance(what, tuple):
            s["ropes"] = [r for k, r in enumerate(snap["ropes"]) if k != what[1]]
        else:
            s["position"] = snap["position"].copy()
            s["position"][what] = (0.0, 0.0, -1e4)        # far under the floor: not drawn
        diff = np.any(np.abs(_view_pixels(win, s).astype(int) - base) > 8, axis=2)
        ys, xs = np.nonzero(diff)
        out[name] = None if len(xs) < 4 else (xs.min(), ys.min(), xs.max(), ys.max())
    return out, base.shape


def _assert_all_inside(win, scene):
    shapes, (h, w, _) = _silhouettes(win)
    assert shapes, scene
    for name, box in shapes.items():
        assert box is not None, f"{scene}: {name} is not drawn at all"
        x0, y0, x1, y1 = box
        assert x0 >= MARGIN and y0 >= MARGIN and x1 <= w - 1 - MARGIN and y1 <= h - 1 - MARGIN, \
            f"{scene}: {name} drawn at {box}, cut by the edge of the {w}x{h} view"
    return shapes


@pytest.mark.parametrize("scene", sorted(p.stem for p in SCENES.glob("*.toml")))
def test_every_scene_opens_with_every_body_inside_the_view_left_of_the_panel(win, scene):
    assert win.load_scene(str(SCENES / f"{scene}.toml"))
    win.panel_visible = True
    frame(win)
    sw, sh = win.scene_size()
    assert sw == W - win.panel_width() and win.panel.rect[0] == pytest.approx(sw, abs=1)
    _assert_all_inside(win, scene)


def test_gallery_first_and_last_bodies_are_in_view_and_large_enough(win):
    assert win.load_scene(str(SCENES / "gallery.toml"))
    win.panel_visible = True
    frame(win)
    shapes = _assert_all_inside(win, "gallery")
    xs = [b[0] for b in shapes.values()] + [b[2] for b in shapes.values()]
    sw = win.scene_size()[0]
    assert max(xs) - min(xs) > 0.7 * sw              # the row of bodies spans the view: framed, not tiny


def test_hiding_the_panel_reframes_an_untouched_view_and_keeps_a_moved_one(win):
    from pyglet.window import key
    assert win.load_scene(str(SCENES / "gallery.toml"))
    win.panel_visible = True
    frame(win)
    narrow = win.camera.distance
    win.dispatch_event("on_key_press", key.TAB, 0)
    frame(win)
    assert not win.panel_visible
    assert win.camera.distance < narrow               # a wider view: nearer, bodies bigger
    _assert_all_inside(win, "gallery, no panel")
    win.camera.orbit(40, 0)                          # the user moves the camera …
    yaw = win.camera.yaw
    win.dispatch_event("on_key_press", key.TAB, 0)   # … then shows the panel again: kept
    frame(win)
    assert win.panel_visible and win.camera.yaw == yaw
    win.dispatch_event("on_key_press", key.R, 0)     # R: the home view, framed for this width
    frame(win)
    assert win.camera.distance == pytest.approx(narrow)
    _assert_all_inside(win, "gallery, home again")


def test_double_click_focuses_the_last_gallery_body_in_the_visible_view(win):
    from pyglet.window import mouse
    assert win.load_scene(str(SCENES / "gallery.toml"))
    win.panel_visible = True
    frame(win)
    world = win.world
    last = max(world.bodies, key=lambda b: b.position[0] if not b.is_static else -1e9)
    sw, sh = win.scene_size()
    x, y = win.camera.project(last.position, sw, sh)
    assert 0 < x < sw
    px, py = round(x), round(win.height - y)
    win.dispatch_event("on_mouse_motion", px, py, 0, 0)
    frame(win)
    for _ in range(2):          # a double-click: two clicks within 0.35 s (no slow frame between)
        win.dispatch_event("on_mouse_press", px, py, mouse.LEFT, 0)
        win.dispatch_event("on_mouse_release", px, py, mouse.LEFT, 0)
    frame(win)
    world.release_grab()
    assert np.allclose(win.camera.target, last.position)
    cx, cy = win.camera.project(last.position, sw, sh)
    assert cx == pytest.approx(sw / 2, abs=2) and cy == pytest.approx(sh / 2, abs=2)
    # the body fills a good part of the view, and all of it is inside
    shapes, (h, w, _) = _silhouettes(win)
    x0, y0, x1, y1 = shapes[last.name]
    assert x0 > 0 and y0 > 0 and x1 < w - 1 and y1 < h - 1
    assert max(x1 - x0, y1 - y0) > 0.2 * min(w, h)


def test_rope_tow_selects_a_visible_body_and_outlines_it(win):
    assert win.load_scene(str(SCENES / "rope_tow.toml"))
    win.panel_visible = True
    frame(win)
    world = win.world
    body = win.selected_body
    assert body is not None and world.state.bodies.pos[body][2] > 0            # a body in view
    assert world.joint_info[win.selected_joint].name == "wheel_left"         # the first joint
    assert world.body_info[body].name == "wheel_l"
    rgb = win.pixels()
    cyan = np.all(np.abs(rgb.astype(int) - np.array([90, 220, 255])) < 30, axis=2)   # overlay.HIGHLIGHT
    sw = win.scene_size()[0]
    ys, xs = np.nonzero(cyan[:, :sw])
    assert len(xs) > 40
    shapes, _ = _silhouettes(win)
    bx0, by0, bx1, by1 = shapes["wheel_l"]
    # the outline hugs the wheel: its lines lie around the wheel's silhouette
    assert bx0 - 30 <= np.median(xs) <= bx1 + 30 and by0 - 40 <= np.median(ys) <= by1 + 30


def test_rope_tow_keeps_robot_cart_and_rope_in_the_opening_view_for_its_whole_course(win):
    from render.frame import scene_spheres
    assert win.load_scene(str(SCENES / "rope_tow.toml"))
    win.panel_visible = True
    frame(win)
    world, cam, aspect = win.world, win.camera, win.scene_aspect()
    seen = 0
    while world.time < 60.0:
        world.advance(3.0)
        centres, radii = scene_spheres(world.snapshot(), win.renderer.radii)
        assert cam.fits(centres, radii, aspect, margin=1.0), f"t = {world.time:.1f} s"
        seen += 1
    assert seen >= 20
