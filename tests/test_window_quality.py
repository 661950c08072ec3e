"""The light rendering mode (render/quality.py): chosen for software OpenGL, switched by
G and by the panel's checkbox; the 3D view is drawn at a lower resolution without MSAA
and with a smaller shadow map, upscaled into the same place, and still shows the scene."""
from pathlib import Path

import numpy as np
import pytest

from window_helpers import frame, window

SCENES = Path(__file__).resolve().parent.parent / "scenes"
W, H = 1280, 800


class _Ctx:
    def __init__(self, renderer):
        self.info = {"GL_RENDERER": renderer}


@pytest.mark.parametrize("renderer, light", [("llvmpipe (LLVM 15.0.6, 256 bits)", True),
                                             ("softpipe", True), ("Mesa X11 swrast", True),
                                             ("NVIDIA GeForce RTX 3060/PCIe/SSE2", False),
                                             ("AMD Radeon RX 6600 (radeonsi, navi23, LLVM 15.0.6)", False)])
def test_software_renderers_get_the_light_mode(renderer, light):
    from render.quality import default_quality
    q, why = default_quality(_Ctx(renderer), environ={})
    assert (q.name == "light") == light
    assert ("software OpenGL" in why) == light


def test_the_environment_setting_wins():
    from render.quality import default_quality
    assert default_quality(_Ctx("llvmpipe"), environ={"SHARNIR_RENDER": "full"})[0].name == "full"
    assert default_quality(_Ctx("NVIDIA"), environ={"SHARNIR_RENDER": "light"})[0].name == "light"
    assert default_quality(_Ctx("llvmpipe"), environ={"SHARNIR_RENDER": "bogus"})[0].name == "light"


@pytest.fixture(scope="module")
def win():
    yield from window("gallery.toml", W, H)


def test_this_machine_software_gl_starts_light(win, monkeypatch):
    from render.quality import is_software
    if not is_software(win.ctx):
        pytest.skip(f"hardware OpenGL here: {win.gl_renderer}")
    assert win.quality.name == "light" and "software OpenGL" in win.quality_reason


def test_light_mode_draws_the_same_scene_at_lower_cost(win):
    from pyglet.window import key
    from render.quality import FULL
    win.set_quality(FULL)
    win.driver.paused = True
    frame(win)
    full = win.pixels()
    assert win.target.samples >= 2 and win.renderer.shadow_size == 2048
    sw, sh = win.scene_size()
    assert win.target.size == (sw, sh)
    win.dispatch_event("on_key_press", key.G, 0)                 # G: light rendering
    frame(win)
    assert win.quality.name == "light"
    assert win.target.samples == 0 and win.renderer.shadow_size == 1024
    assert win.target.size == (round(sw * win.quality.scale), round(sh * win.quality.scale))
    light = win.pixels()
    assert "Light rendering" in win.panel.notices.last().text
    view = (slice(0, sh), slice(0, sw))
    # the same picture, softer: small mean difference over the 3D view, nothing blank
    diff = np.abs(full[view].astype(int) - light[view].astype(int)).mean()
    assert diff < 12
    assert len(np.unique(light[view].reshape(-1, 3), axis=0)) > 500
    # every body is where it was: its colour at its projected centre
    for body in win.world.bodies:
        x, y = win.camera.project(body.position, sw, sh)
        if 2 < x < sw - 2 and 2 < y < sh - 2:
            a = full[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].astype(int).mean(axis=(0, 1))
            b = light[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].astype(int).mean(axis=(0, 1))
            assert np.abs(a - b).max() < 60, body.name
    win.dispatch_event("on_key_press", key.G, 0)
    frame(win)
    assert win.quality.name == "full" and win.target.samples >= 2
    assert win.ctx.error == "GL_NO_ERROR"
    win.driver.paused = False


def test_the_panel_checkbox_and_resolution_slider(win):
    from render.quality import FULL
    win.set_quality(FULL)
    frame(win)
    panel = win.panel
    assert "view.light" in panel.w.rects and "view.scale" in panel.w.rects
    panel_checkbox = panel.w.rects["view.light"]
    assert panel_checkbox[0] >= panel.rect[0]
    from ui.params import apply
    p = panel.view_params()["view.scale"]
    assert apply(p, 70.0, panel.notices) and win.quality.scale == pytest.approx(0.7)
    frame(win)
    sw, sh = win.scene_size()
    assert win.target.size == (round(sw * 0.7), round(sh * 0.7))
    assert apply(p, 5.0, panel.notices) and win.quality.scale == pytest.approx(0.25)   # clamped
    assert "out of range" in panel.notices.last().text
    win.action_light_rendering()
    assert win.quality.name == "light"
    frame(win)
    win.action_light_rendering()
    assert win.quality.name == "full" and win.quality.scale == 1.0
