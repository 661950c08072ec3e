"""The interactive window: `python app.py [SCENE]`.

Mouse: left drag orbits, right (or middle) drag pans, wheel zooms, double-click a
body to focus it. Keys: Space pause/resume, → single step, Backspace reset the
simulation, R reset the view, P or F12 save a screenshot (./screenshots/), J joint
frames, L limits, C centres of mass, V tint by constraint violation, S shadows,
Escape quit.

Physics runs at its fixed Δt from a wall-clock accumulator with a cap on steps per
frame (physics.driver.FrameDriver); the title says when the machine can't keep up
or the simulation blew up (it pauses, the window stays). Drawing reads one
world.snapshot() per frame.
"""
import math
import os
import time

import numpy as np
import pyglet

from .frame import RenderTarget, initial_camera, write_png

KEY_OVERLAYS = {"J": "joints", "L": "limits", "C": "com", "V": "violation"}


def _config(samples):
    return pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True, double_buffer=True,
                            depth_size=24, red_size=8, green_size=8, blue_size=8, alpha_size=8,
                            sample_buffers=1 if samples else 0, samples=samples)


class ViewerWindow(pyglet.window.Window):
    def __init__(self, world, scene_name, width=1280, height=800, visible=True):
        config = None
        display = pyglet.display.get_display()
        screen = display.get_default_screen()
        for cfg in (_config(0),):
            try:
                config = screen.get_best_config(cfg)
                break
            except pyglet.window.NoSuchConfigException:
                continue
        super().__init__(width, height, caption="Sharnir", resizable=True, config=config, visible=visible)
        import moderngl
        from physics.driver import FrameDriver
        from .scene_renderer import SceneRenderer
        moderngl.init_context()
        self.ctx = moderngl.get_context()
        self.ctx.error                     # clear a stale error left by context creation
        self.world = world
        self.scene_name = scene_name
        self.driver = FrameDriver(world)
        snap = world.snapshot()
        self.renderer = SceneRenderer(self.ctx, snap)
        self.camera = initial_camera(world, snap)
        self.target = None
        self.last_rgb = None
        self._last_click = (0.0, 0, 0)
        self.status = ""

    # ------------------------------------------------------------------ frame
    def _ensure_target(self):
        size = self.get_framebuffer_size()
        size = (max(size[0], 1), max(size[1], 1))
        if self.target is None or self.target.size != size:
            self.target = RenderTarget(self.ctx, size)      # old one left to GC (see offscreen.py)
        return size

    def render_frame(self):
        self.switch_to()                   # this window's GL context (offscreen rendering may own the thread)
        size = self._ensure_target()
        snap = self.world.snapshot()
        self.renderer.draw(snap, self.camera, size, self.target.msaa)
        self.target.resolve()
        self.ctx.copy_framebuffer(self.ctx.screen, self.target.resolved)
        self._update_title()

    def _update_title(self):
        d = self.driver
        state = "paused" if d.paused else ("running — can't keep up, slowed down" if d.behind else "running")
        if d.error is not None:
            state = f"PAUSED: {d.error} — Backspace resets"
        self.set_caption(f"Sharnir — {self.scene_name} — t = {self.world.time:.2f} s — "
                         f"{self.world.solver} — {state}")

    def screenshot(self, path):
        self.switch_to()
        self.target.resolve()
        rgb = self.target.pixels()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write_png(path, rgb)
        return rgb

    # ------------------------------------------------------------------ input
    def on_key_press(self, symbol, modifiers):
        k = pyglet.window.key
        if symbol == k.ESCAPE:
            self.close()
        elif symbol == k.SPACE:
            self.driver.paused = not self.driver.paused or self.driver.error is not None
        elif symbol == k.RIGHT:
            self.driver.single_step()
        elif symbol == k.BACKSPACE:
            self.driver.reset()
            self.driver.paused = False
        elif symbol == k.R:
            self.camera.reset()
        elif symbol in (k.P, k.F12):
            name = os.path.splitext(os.path.basename(self.scene_name))[0]
            self.screenshot(os.path.join("screenshots", f"{name}_{self.world.time:07.3f}.png"))
        elif symbol == k.S:
            self.renderer.shadows = not self.renderer.shadows
        else:
            label = k.symbol_string(symbol)
            if label in KEY_OVERLAYS:
                o = KEY_OVERLAYS[label]
                self.renderer.overlays[o] = not self.renderer.overlays[o]

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        if buttons & pyglet.window.mouse.LEFT:
            self.camera.orbit(dx, -dy)
        elif buttons & (pyglet.window.mouse.RIGHT | pyglet.window.mouse.MIDDLE):
            self.camera.pan(dx, dy, self.height)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.camera.zoom(scroll_y)

    def on_mouse_press(self, x, y, button, modifiers):
        now = time.perf_counter()
        t, px, py = self._last_click
        if button == pyglet.window.mouse.LEFT and now - t < 0.35 and abs(x - px) < 4 and abs(y - py) < 4:
            self.focus_at(x, y)
        self._last_click = (now, x, y)

    def pick(self, x, y):
        """Index of the body under window point (x, y) (pyglet: y up), by bounding spheres."""
        origin, d = self.camera.ray(x, self.height - y, self.width, self.height)
        pos = self.world.snapshot()["position"]
        best, best_t = None, math.inf
        for i in range(1, len(pos)):
            r = self.renderer.radii[i]
            if r <= 0:
                continue
            oc = origin - pos[i]
            b = np.dot(oc, d)
            c = np.dot(oc, oc) - r * r
            disc = b * b - c
            if disc >= 0:
                t = -b - math.sqrt(disc)
                if 0 < t < best_t:
                    best, best_t = i, t
        return best

    def focus_at(self, x, y):
        i = self.pick(x, y)
        if i is not None:
            self.camera.target = self.world.body_pos[i].copy()
        return i

    def on_close(self):
        self.closed = True
        super().on_close()


def run_viewer(scene_path, overrides=None, frames=None, screenshot=None):
    """Open the window on a scene; with `frames`, run that many frames then exit;
    `screenshot` saves the last frame. Returns 0, or 3 if the simulation blew up."""
    import physics
    pyglet.options["dpi_scaling"] = "stretch"
    world = physics.load_scene(scene_path, overrides)
    win = ViewerWindow(world, os.path.basename(str(scene_path)))
    win.closed = False
    clock = time.perf_counter()
    n = 0
    try:
        while not win.closed and (frames is None or n < frames):
            win.dispatch_events()
            if win.closed:
                break
            now = time.perf_counter()
            win.driver.update(now - clock)
            clock = now
            win.render_frame()
            win.flip()
            n += 1
            if frames is None:
                time.sleep(0.001)
        if screenshot and not win.closed:
            win.screenshot(screenshot)
        status = 3 if win.driver.error is not None else 0
        if win.driver.error is not None:
            import sys
            print(f"{scene_path}: {win.driver.error}", file=sys.stderr)
    finally:
        if not win.closed:
            win.close()
    return status
