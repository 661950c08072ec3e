"""The interactive window: `python app.py [SCENE]`.

The 3D view fills the window left of the ImGui panel (ui/panel.py; Tab hides it).
Mouse: left drag on a body pulls it by a soft spring (Shift: in depth), elsewhere it
orbits; right (or middle) drag pans, wheel zooms, double-click a body to focus it,
click a body to select its joint. Keys (ui/help.KEYS, F1 lists them): Space pause /
resume, → single step, Backspace reset the simulation, 1 / 2 penalty / impulse
solver, R reset the view, P or F12 save a screenshot (./screenshots/), J joint frames,
L limits, C centres of mass, V tint by constraint violation, S shadows, Tab panel,
F1 help, Escape quit. Over the panel, mouse and typing go to ImGui, not the scene.

Physics runs at its fixed Δt from a wall-clock accumulator with a cap on steps per
frame (shell.driver.FrameDriver); the title and the panel say when the machine
can't keep up or the simulation blew up (it pauses, the window stays, a dialog offers
a reset). Drawing reads one world.snapshot() per frame; the panel edits the model
between frames.
"""
import os
import time

import numpy as np
import pyglet

from render.frame import RenderTarget, initial_camera, write_png

PANEL_MIN_WINDOW = 800          # narrower windows start with the panel hidden (Tab shows it)
PANEL_BG = (0.1, 0.1, 0.11)


def _config(samples):
    return pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True, double_buffer=True,
                            depth_size=24, red_size=8, green_size=8, blue_size=8, alpha_size=8,
                            sample_buffers=1 if samples else 0, samples=samples)


def _release_gl(obj):
    """Release a SceneRenderer and the GL objects it holds directly."""
    import moderngl
    obj.release()
    kinds = (moderngl.Program, moderngl.VertexArray, moderngl.Buffer, moderngl.Texture, moderngl.Framebuffer,
             moderngl.Renderbuffer)
    for value in list(vars(obj).values()):
        if isinstance(value, kinds):
            value.release()


class ViewerWindow(pyglet.window.Window):
    def __init__(self, world, scene_name, width=1280, height=800, visible=True, panel=None):
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
        from shell.driver import FrameDriver
        from ui.drag import MouseDrag
        from ui.imgui_io import ImGuiLayer
        from ui.panel import Panel
        from ui.plots import SampledWorld
        from render.scene_renderer import SceneRenderer
        moderngl.init_context()
        self.ctx = moderngl.get_context()
        self.ctx.error                     # clear a stale error left by context creation
        self.closed = False
        self.world = world
        self.scene_name = scene_name
        self.scene_path = getattr(world, "scene_path", None)
        snap = world.snapshot()
        self.renderer = SceneRenderer(self.ctx, snap)
        self.camera = initial_camera(world, snap)
        self.target = None
        self.frame = None                  # the whole window: scene + panel, read by screenshots
        self.last_rgb = None
        self._last_click = (0.0, 0, 0)
        self.status = ""
        self.selected_joint = 0 if world.joint_info else None
        self.selected_body = self._child_of(self.selected_joint)
        self.help_visible = False
        self.panel_visible = (width >= PANEL_MIN_WINDOW) if panel is None else bool(panel)
        self.gui = ImGuiLayer(self, self.ctx)
        self.panel = Panel(self)
        self.driver = FrameDriver(SampledWorld(world, self.panel.record))
        self.drag = MouseDrag(self)
        self.gui_rects = []                # ImGui windows drawn last frame (x0, y0, x1, y1), top-left origin
        self.gui_error = None              # the last exception raised while drawing the panel
        self._mouse_owner = None           # "gui" or "scene" while a button is held
        self._frame_clock = time.perf_counter()

    # ------------------------------------------------------------------ layout
    def panel_width(self):
        """Width of the panel (window units), 0 when hidden."""
        if not self.panel_visible:
            return 0
        return int(min(max(0.34 * self.width, 400), 660, max(self.width - 160, 0)))

    def scene_size(self):
        """(width, height) of the 3D view, window units; it starts at the left edge."""
        return max(self.width - self.panel_width(), 1), max(self.height, 1)

    def ray(self, x, y):
        """World ray (origin, unit direction) through window point (x, y) (pyglet: y up)."""
        w, h = self.scene_size()
        return self.camera.ray(x, self.height - y, w, h)

    def _fb_sizes(self):
        fw, fh = self.get_framebuffer_size()
        fw, fh = max(fw, 1), max(fh, 1)
        scale = fw / max(self.width, 1)
        sw = max(1, min(fw, int(round(self.scene_size()[0] * scale))))
        return (fw, fh), (sw, fh)

    # ------------------------------------------------------------------ frame
    def _ensure_targets(self):
        full, scene = self._fb_sizes()
        if self.target is None or self.target.size != scene:
            self.target = RenderTarget(self.ctx, scene)      # old one left to GC (see offscreen.py)
        if self.frame is None or self.frame.size != full:
            self.frame = self.ctx.framebuffer(color_attachments=[self.ctx.texture(full, 4)])
        return full, scene

    def render_frame(self):
        self.switch_to()                   # this window's GL context (offscreen rendering may own the thread)
        full, scene = self._ensure_targets()
        snap = self.world.snapshot()
        self.renderer.draw(snap, self.camera, scene, self.target.msaa)
        self.target.resolve()
        self.frame.use()
        self.ctx.viewport = (0, 0, full[0], full[1])
        self.frame.clear(*PANEL_BG, 1.0)
        self.ctx.copy_framebuffer(self.frame, self.target.resolved)
        self.panel.record()
        self._draw_gui(full)
        self.ctx.copy_framebuffer(self.ctx.screen, self.frame)
        self._update_title()

    def _draw_gui(self, fb_size):
        from imgui_bundle import imgui
        from ui.help import draw_help
        from ui.overlay import Projector, draw_blowup, draw_outline, draw_spring
        now = time.perf_counter()
        self.gui.begin_frame(now - self._frame_clock)
        self._frame_clock = now
        rects = []
        sw, sh = self.scene_size()
        project = Projector(self.camera, sw, sh)
        dl = imgui.get_background_draw_list()
        dl.push_clip_rect(imgui.ImVec2(0, 0), imgui.ImVec2(sw, sh))
        i = self.selected_body
        if i is not None and i < len(self.world.body_info):
            info = self.world.body_info[i]
            draw_outline(dl, project, info.shape, self.world.state.bodies.pos[i], self.world.state.bodies.quat[i], info.name)
        draw_spring(dl, project, getattr(self.world, "grab_info", None))
        dl.pop_clip_rect()
        if self.panel_visible:
            try:
                self.panel.draw(sw, self.panel_width(), self.height)
            except Exception as e:           # a bug in the panel must not take the simulation down
                self.gui_error = e
                self.panel.notices.add(f"panel error: {e!r}", "error")
            if self.panel.rect is not None:
                rects.append(self.panel.rect)
        if self.help_visible:
            r = draw_help(sw, sh)
            if r is None:
                self.help_visible = False
            else:
                rects.append(r)
        if self.driver.error is not None:
            action, r = draw_blowup(self.driver.error, sw, sh)
            rects.append(r)
            if action == "reset":
                self.action_reset()
        self.gui_rects = rects
        self.gui.end_frame(fb_size)

    def _update_title(self):
        d = self.driver
        state = "paused" if d.paused else ("running — can't keep up, slowed down" if d.behind else "running")
        if d.error is not None:
            state = f"PAUSED: {d.error} — Backspace resets"
        self.set_caption(f"Sharnir — {self.scene_name} — t = {self.world.time:.2f} s — "
                         f"{self.world.solver} — {state}")

    def pixels(self):
        """The last frame as RGB (h, w, 3) uint8, top row first: scene and panel."""
        self.switch_to()
        if self.frame is None:
            self._ensure_targets()
        w, h = self.frame.size
        data = self.frame.read(components=3, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(h, w, 3)[::-1].copy()

    def screenshot(self, path):
        rgb = self.pixels()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write_png(path, rgb)
        return rgb

    # ------------------------------------------------------------------ world
    def set_world(self, world, scene_name):
        """Show another world (a scene picked or reloaded in the panel)."""
        from shell.driver import FrameDriver
        from ui.plots import SampledWorld
        from render.scene_renderer import SceneRenderer
        self.switch_to()
        self.drag.release(self.world)
        speed = self.driver.speed
        self.world = world
        self.scene_name = scene_name
        self.scene_path = getattr(world, "scene_path", None)
        self.driver = FrameDriver(SampledWorld(world, self.panel.record), speed=speed)
        snap = world.snapshot()
        shadows, overlays = self.renderer.shadows, dict(self.renderer.overlays)
        _release_gl(self.renderer)
        self.renderer = SceneRenderer(self.ctx, snap)
        self.renderer.shadows = shadows
        self.renderer.overlays.update(overlays)
        self.camera = initial_camera(world, snap)
        self.selected_joint = 0 if world.joint_info else None
        self.selected_body = self._child_of(self.selected_joint)
        self.panel.scene_changed()

    def load_scene(self, path):
        """Load a scene file into the window; a bad file leaves a notice and the old world."""
        import physics
        from physics.io.scene import SceneError
        try:
            world = physics.load_scene(path)
        except (SceneError, OSError, ValueError) as e:
            self.panel.notices.add(str(e), "error")
            return False
        self.set_world(world, os.path.basename(str(path)))
        self.panel.notices.add(f"Loaded {path}", "info")
        return True

    def set_solver(self, name):
        try:
            self.world.solver = name
        except ValueError as e:
            self.panel.notices.add(str(e), "error")

    def _child_of(self, j):
        return None if j is None or j >= len(self.world.joint_info) else int(self.world.model.joints.body[j, 1])

    def select_joint(self, j):
        self.selected_joint = j
        self.selected_body = self._child_of(j)

    def select_body(self, i):
        """Select body i and the joint that moves it (its joint as a child, else as a parent)."""
        self.selected_body = i
        jb = self.world.model.joints.body
        for side in (1, 0):
            found = np.flatnonzero(jb[:, side] == i) if len(jb) else []
            if len(found):
                self.selected_joint = int(found[0])
                self.panel.joints.scroll_to = self.selected_joint
                return

    # ------------------------------------------------------------------ actions (keys and panel)
    def action_toggle_pause(self):
        self.driver.paused = not self.driver.paused or self.driver.error is not None

    def action_single_step(self):
        self.driver.single_step()

    def action_reset(self):
        self.drag.release(self.world)
        self.driver.reset()
        self.driver.paused = False
        self.panel.restarted()

    def action_solver_penalty(self):
        self.set_solver("penalty")

    def action_solver_impulse(self):
        self.set_solver("impulse")

    def action_reset_view(self):
        self.camera.reset()

    def _toggle_overlay(self, name):
        self.renderer.overlays[name] = not self.renderer.overlays[name]

    def action_overlay_joints(self):
        self._toggle_overlay("joints")

    def action_overlay_limits(self):
        self._toggle_overlay("limits")

    def action_overlay_com(self):
        self._toggle_overlay("com")

    def action_overlay_violation(self):
        self._toggle_overlay("violation")

    def action_shadows(self):
        self.renderer.shadows = not self.renderer.shadows

    def action_screenshot(self):
        name = os.path.splitext(os.path.basename(self.scene_name))[0]
        path = os.path.join("screenshots", f"{name}_{self.world.time:07.3f}.png")
        self.screenshot(path)
        self.panel.notices.add(f"Saved {path}", "info")
        return path

    def action_toggle_panel(self):
        self.panel_visible = not self.panel_visible

    def action_toggle_help(self):
        self.help_visible = not self.help_visible

    def action_quit(self):
        self.close()

    # ------------------------------------------------------------------ input
    def on_key_press(self, symbol, modifiers):
        from ui.help import key_action
        self.gui.key_event(symbol, modifiers, True)
        if self.gui.captures_keyboard():
            return                          # typing in a panel field
        k = key_action(symbol)
        if k is not None:
            getattr(self, f"action_{k.action}")()

    def on_key_release(self, symbol, modifiers):
        self.gui.key_event(symbol, modifiers, False)

    def on_text(self, text):
        self.gui.text(text)

    def over_gui(self, x, y):
        """True when window point (x, y) (pyglet: y up) is on an ImGui window."""
        yt = self.height - y
        if any(r[0] <= x <= r[2] and r[1] <= yt <= r[3] for r in self.gui_rects):
            return True
        return self.gui.captures_mouse()

    def on_mouse_motion(self, x, y, dx, dy):
        self.gui.mouse_motion(x, y)

    def on_mouse_leave(self, x, y):
        self.gui.mouse_motion(-1e6, 1e6)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.gui.mouse_motion(x, y)
        if self._mouse_owner == "gui":
            return
        if self.drag.active and buttons & pyglet.window.mouse.LEFT:
            self.drag.move(self.world, x, y, dy, modifiers, self.height)
        elif buttons & pyglet.window.mouse.LEFT:
            self.camera.orbit(dx, -dy)
        elif buttons & (pyglet.window.mouse.RIGHT | pyglet.window.mouse.MIDDLE):
            self.camera.pan(dx, dy, self.height)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.gui.mouse_scroll(x, y, scroll_x, scroll_y)
        if not self.over_gui(x, y):
            self.camera.zoom(scroll_y)

    def on_mouse_press(self, x, y, button, modifiers):
        over = self.over_gui(x, y)
        self.gui.mouse_button(x, y, button, True)
        if over:
            self._mouse_owner = "gui"
            return
        self._mouse_owner = "scene"
        now = time.perf_counter()
        t, px, py = self._last_click
        if button == pyglet.window.mouse.LEFT and now - t < 0.35 and abs(x - px) < 4 and abs(y - py) < 4:
            self.focus_at(x, y)
        self._last_click = (now, x, y)
        if button == pyglet.window.mouse.LEFT:
            i = self.drag.press(self.world, x, y)
            if i is not None:
                self.select_body(i)
            if self.drag.error:
                self.panel.notices.add(f"Can't grab: {self.drag.error}", "error")

    def on_mouse_release(self, x, y, button, modifiers):
        self.gui.mouse_button(x, y, button, False)
        if button == pyglet.window.mouse.LEFT and self.drag.active:
            self.drag.release(self.world)
        self._mouse_owner = None

    def pick(self, x, y):
        """Index of the body under window point (x, y) (pyglet: y up), by its shape."""
        found = self.drag.hit(self.world, x, y)
        return None if found is None else found[0]

    def focus_at(self, x, y):
        i = self.pick(x, y)
        if i is not None:
            self.camera.target = self.world.state.bodies.pos[i].copy()
        return i

    def on_close(self):
        self.closed = True
        super().on_close()

    def close(self):
        if getattr(self, "gui", None) is not None:
            self.switch_to()
            self.gui.shutdown()
            self.gui = None
        self.closed = True
        super().close()


def default_window_size():
    """80 % of the screen, at least 1280 × 800 where the screen allows, at most 1920 × 1080."""
    try:
        screen = pyglet.display.get_display().get_default_screen()
        sw, sh = screen.width, screen.height
    except Exception:                         # no display information: the classic size
        return 1280, 800
    w = min(max(int(sw * 0.9), 1280), sw, 1920)
    h = min(max(int(sh * 0.9), 800), sh, 1080)
    return w, h


def _warm_up(world):
    """One step and back: the solver's compiled kernels load now, not during the first
    frames (which would otherwise swallow seconds of wall time in one capped frame)."""
    from physics import SimulationBlowUp
    try:
        world.advance_steps(1)
    except SimulationBlowUp:
        pass
    world.reset()


def run_viewer(scene_path, overrides=None, frames=None, screenshot=None):
    """Open the window on a scene; with `frames`, run that many frames then exit;
    `screenshot` saves the last frame (scene and panel). Returns 0, or 3 if the
    simulation blew up."""
    import physics
    pyglet.options["dpi_scaling"] = "stretch"
    world = physics.load_scene(scene_path, overrides)
    win = ViewerWindow(world, os.path.basename(str(scene_path)), *default_window_size())
    _warm_up(world)
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
