"""The interactive window: `python app.py [SCENE]`.

The 3D view fills the window left of the ImGui panel (ui/panel.py; Tab hides it).
Mouse: left drag on a body pulls it by a soft spring (Shift: in depth), elsewhere it
orbits; right (or middle) drag pans, wheel zooms, double-click a body to focus it,
click a body to select its joint. Keys (ui/help.KEYS, F1 lists them): Space pause /
resume, → single step, Backspace reset the simulation, 1 / 2 penalty / impulse
solver, R reset the view, P or F12 save a screenshot (./screenshots/), F9 record a video
(./videos/, shell/video.py), K compare mode (shell/compare.py), Left / Page Up / Page Down /
End / Enter rewind and replay (shell/history.py), J joint frames,
L limits, C centres of mass, V tint by constraint violation, S shadows, G light
rendering (render/quality.py), Tab panel, F1 help, Escape quit. Over the panel, mouse
and typing go to ImGui, not the scene. The home view frames the scene in the 3D view
beside the panel (render/frame.initial_camera); double-click focuses there too.

The window opens before any physics kernel is compiled: on a first launch it shows
"Compiling physics kernels (first run only)…" while shell/warmup.py fills numba's
disk cache, then loads the scene (run_viewer).

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

from render.frame import RenderTarget, Upscaler, initial_camera, write_png
from render.quality import FULL, LIGHT, default_quality

try:                               # X11 (Linux): to see the window destroyed under the app
    from pyglet.libs.x11 import xlib as _xlib
    from pyglet.window.xlib import XlibEventHandler as _XlibEventHandler
except ImportError:                # pragma: no cover - other platforms
    _xlib = _XlibEventHandler = None

PANEL_MIN_WINDOW = 800          # narrower windows start with the panel hidden (Tab shows it)
PANEL_BG = (0.1, 0.1, 0.11)
LOADING_BG = (0.16, 0.19, 0.24)


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
        from ui.drag import MouseDrag
        from ui.robot import TipDrag
        from ui.imgui_io import ImGuiLayer
        from ui.panel import Panel
        moderngl.init_context()
        self.ctx = moderngl.get_context()
        self.ctx.error                     # clear a stale error left by context creation
        self.closed = False
        self.world = None                  # None while the first launch compiles the kernels
        self.scene_name = scene_name
        self.scene_path = None
        self.loading = None                # shell.warmup.Progress shown while there is no world
        self.loading_rect = None           # its box on screen last frame (top-left origin)
        self.quality, self.quality_reason = default_quality(self.ctx)
        self.gl_renderer = str(self.ctx.info.get("GL_RENDERER", ""))
        self.renderer = None
        self.upscaler = Upscaler(self.ctx)
        self.fps = 0.0                     # frames drawn per wall-clock second (smoothed)
        self._fps_clock = None
        self.target = None
        self.frame = None                  # the whole window: scene + panel, read by screenshots
        self.last_rgb = None
        self.last_screenshot = None        # path of the last P / F12 screenshot
        self.video = None                  # shell.video.SimClockVideo while recording
        self.compare = None                # shell.compare.Compare: the ghost world, when on
        self.video_panel = True            # the panel in the video's frames (else the 3D view alone)
        self.last_video = None
        self._last_click = (0.0, 0, 0)
        self.status = ""
        self.selected_joint = self.selected_body = None
        self.help_visible = False
        self.panel_visible = (width >= PANEL_MIN_WINDOW) if panel is None else bool(panel)
        self.camera = None
        self.driver = None
        self.gui = ImGuiLayer(self, self.ctx)
        self.panel = Panel(self)
        self.drag = MouseDrag(self)
        self.tip_drag = TipDrag(self.drag)   # Ctrl+drag on a robot: its tip target (ui/robot.py)
        self.gui_rects = []                # ImGui windows drawn last frame (x0, y0, x1, y1), top-left origin
        self.gui_error = None              # the last exception raised while drawing the panel
        self._mouse_owner = None           # "gui" or "scene" while a button is held
        self._frame_clock = time.perf_counter()
        from shell.profiler import StageProfiler
        self.profiler = StageProfiler()    # ms per stage of each frame (shell/profiler.py, panel: Profiler)
        if world is not None:
            self.set_world(world, scene_name)

    # ------------------------------------------------------------------ layout
    def panel_width(self):
        """Width of the panel (window units), 0 when hidden."""
        if not self.panel_visible:
            return 0
        return int(min(max(0.34 * self.width, 400), 660, max(self.width - 160, 0)))

    def scene_size(self):
        """(width, height) of the 3D view, window units; it starts at the left edge."""
        return max(self.width - self.panel_width(), 1), max(self.height, 1)

    def scene_aspect(self):
        w, h = self.scene_size()
        return w / h

    def _home_camera(self):
        """The scene's opening view, framed for the visible 3D viewport (left of the panel)."""
        cam = initial_camera(self.world, self._home_snap, self.scene_aspect(), radii=self.renderer.radii)
        self._home_aspect = self.scene_aspect()
        return cam

    def _reframe_if_resized(self):
        """The viewport changed shape (window resized, panel shown or hidden): the home view
        is framed again, and the camera follows it if the user had not moved it."""
        if abs(self.scene_aspect() - self._home_aspect) < 1e-3:
            return
        at_home = self.camera.at_home()
        cam = self._home_camera()
        if at_home:
            self.camera = cam
        else:
            self.camera.home = cam.home

    def ray(self, x, y):
        """World ray (origin, unit direction) through window point (x, y) (pyglet: y up)."""
        w, h = self.scene_size()
        return self.camera.ray(x, self.height - y, w, h)

    def _fb_sizes(self):
        """(window framebuffer, 3D view in it, 3D view as drawn) sizes in pixels; the last
        is smaller than the second by the quality's resolution scale (light mode)."""
        fw, fh = self.get_framebuffer_size()
        fw, fh = max(fw, 1), max(fh, 1)
        scale = fw / max(self.width, 1)
        sw = max(1, min(fw, int(round(self.scene_size()[0] * scale))))
        q = self.quality.scale
        drawn = (max(1, int(round(sw * q))), max(1, int(round(fh * q))))
        return (fw, fh), (sw, fh), drawn

    # ------------------------------------------------------------------ rendering quality
    def set_quality(self, quality):
        """Full or light rendering (render/quality.py), or any Quality (scale, MSAA, shadow map)."""
        self.quality = quality
        if self.renderer is not None:
            self.renderer.set_shadow_size(quality.shadow_size)
        self.target = None                 # made again at the new size and sample count

    def action_light_rendering(self):
        light = self.quality.name != "light"
        self.set_quality(LIGHT if light else FULL)
        self.quality_reason = "chosen in the window"
        self.panel.notices.add(f"{'Light' if light else 'Full'} rendering: {self.quality_text()}", "info")

    def quality_text(self):
        q = self.quality
        return (f"{q.scale * 100:.0f} % resolution, {'MSAA ' + str(q.samples) + '×' if q.samples else 'no MSAA'}, "
                f"shadow map {q.shadow_size}²")

    # ------------------------------------------------------------------ frame
    def _ensure_targets(self):
        full, scene, drawn = self._fb_sizes()
        if self.target is None or self.target.size != drawn:
            # the old one is left to GC (see offscreen.py)
            self.target = RenderTarget(self.ctx, drawn, samples=self.quality.samples)
        if self.frame is None or self.frame.size != full:
            self.frame = self.ctx.framebuffer(color_attachments=[self.ctx.renderbuffer(full, 4)])
        return full, scene, drawn

    def render_frame(self):
        self.switch_to()                   # this window's GL context (offscreen rendering may own the thread)
        if self.world is None:
            self._render_loading()
            return
        prof = self.profiler
        with prof.block("record"):
            self.profiler.hook_world(self.world)     # ropes rebuilt since are timed too
            self.timeline.check_edits(self.world)
        if self.compare is not None:
            with prof.block("compare"):
                self.compare.follow(self.selected_joint)
        with prof.block("render"):
            self._reframe_if_resized()
            full, scene, drawn = self._ensure_targets()
            snap = self.world.snapshot()
            self.renderer.draw(snap, self.camera, drawn, self.target.msaa)
            self.frame.use()
            self.ctx.viewport = (0, 0, full[0], full[1])
            self.frame.clear(*PANEL_BG, 1.0)
            if drawn == scene:                 # resolved (MSAA) straight into the frame
                self.ctx.copy_framebuffer(self.frame, self.target.msaa)
            else:                              # light mode: upscale into the 3D view's part of the frame
                self.upscaler.draw(self.target.texture, self.frame, (0, 0, scene[0], scene[1]))
                self.ctx.viewport = (0, 0, full[0], full[1])
        with prof.block("ui"):
            self.panel.record()
            self._draw_gui(full)
        with prof.block("video"):
            self._video_frame(scene)
        with prof.block("render"):
            self.ctx.copy_framebuffer(self.ctx.screen, self.frame)
        with prof.block("ui"):
            self._count_frame()
            self._update_title()

    def _render_loading(self):
        """No world yet (first launch: the kernels compile): the message and its progress."""
        from ui.overlay import draw_loading
        full = self._fb_sizes()[0]
        if self.frame is None or self.frame.size != full:
            self.frame = self.ctx.framebuffer(color_attachments=[self.ctx.renderbuffer(full, 4)])
        self.frame.use()
        self.ctx.viewport = (0, 0, full[0], full[1])
        self.frame.clear(*LOADING_BG, 1.0)
        now = time.perf_counter()
        self.gui.begin_frame(now - self._frame_clock)
        self._frame_clock = now
        self.loading_rect = draw_loading(self.loading, self.width, self.height) if self.loading else None
        self.gui_rects = [self.loading_rect] if self.loading_rect else []
        self.gui.end_frame(full)
        self.ctx.copy_framebuffer(self.ctx.screen, self.frame)
        self._count_frame()
        title = f"Sharnir — {self.scene_name} — "
        if self.loading is None:
            title += "starting"
        else:
            title += f"{self.loading.title} {self.loading.fraction * 100:.0f} %"
        self.set_caption(title)

    def _count_frame(self):
        now = time.perf_counter()
        if self._fps_clock is not None:
            dt = max(now - self._fps_clock, 1e-6)
            self.fps = 1.0 / dt if self.fps == 0.0 else 0.9 * self.fps + 0.1 / dt
        self._fps_clock = now

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
        from ui.robot import draw_targets
        draw_targets(dl, project, self.world)
        if self.compare is not None:
            from ui.overlay import draw_ghost
            draw_ghost(dl, project, self.compare.ghost)
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
        """Show a world: the scene of a new window, or one picked or reloaded in the panel."""
        from shell.driver import FrameDriver
        from ui.plots import SampledWorld
        from render.scene_renderer import SceneRenderer
        self.switch_to()
        speed, shadows, overlays = 1.0, True, {}
        if self.world is not None:
            self.drag.release(self.world)
            self.tip_drag.release()
            speed = self.driver.speed
        if self.renderer is not None:
            shadows, overlays = self.renderer.shadows, dict(self.renderer.overlays)
            _release_gl(self.renderer)
        self.world = world
        self.loading = self.loading_rect = None
        self.scene_name = scene_name
        self.scene_path = getattr(world, "scene_path", None)
        from shell.history import RecordingWorld, Timeline
        seconds = self.timeline.seconds if getattr(self, "timeline", None) is not None else None
        self.timeline = Timeline() if seconds is None else Timeline(seconds)
        self.timeline.capture(world, force=True)       # t = 0 (or wherever the world is)
        self.driver = FrameDriver(SampledWorld(RecordingWorld(world, self.timeline), self.panel.record),
                                  speed=speed)
        self.compare = None
        self.panel.plots.ghost = None
        self.profiler.clear()
        self.profiler.hook_world(world)
        self.driver.update = self.profiler.timed("update", self.driver.update)
        snap = world.snapshot()
        self.renderer = SceneRenderer(self.ctx, snap, shadow_size=self.quality.shadow_size)
        self.renderer.shadows = shadows
        self.renderer.overlays.update(overlays)
        self._home_snap = snap             # the scene's start, which the home view frames
        self.camera = self._home_camera()
        self.select_joint(self._default_joint())
        self.panel.scene_changed()

    def _default_joint(self):
        """The joint selected when a scene opens: the first whose body is in view (not a
        carriage hidden under the floor), else the first, else None."""
        from render.frame import visible_bodies
        if not self.world.joint_info:
            return None
        shown = set(visible_bodies(self._home_snap, self.renderer.radii))
        for j in range(len(self.world.joint_info)):
            if int(self.world.model.joints.body[j, 1]) in shown:
                return j
        return 0

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
        self.timeline.clear()
        self.timeline.capture(self.world, force=True)
        self.driver.paused = False
        self.panel.restarted()

    # ------------------------------------------------------------------ compare (shell/compare.py)
    def start_compare(self, family=None, **settings):
        """A ghost world from the current state, stepped by `family` (default: the other
        family than the world's) with `settings`."""
        from shell.compare import Compare
        if family is None:
            family = next((f for f in self.world.solvers if f != self.world.solver), self.world.solver)
        try:
            self.compare = Compare(self.world, family, **settings)
        except (ValueError, TypeError) as e:
            self.panel.notices.add(f"Compare: {e}", "error")
            self.compare = None
        return self.compare

    def stop_compare(self):
        self.compare = None
        self.panel.plots.ghost = None

    def action_compare(self):
        if self.compare is None:
            self.start_compare()
        else:
            self.stop_compare()

    # ------------------------------------------------------------------ video (shell/video.py)
    def start_video(self, path=None, fps=None, panel=None):
        """Record the window to an MP4, one frame per 1/fps of simulated time."""
        from shell.video import DEFAULT_FPS, SimClockVideo
        if self.video is not None:
            return self.video.path
        if path is None:
            name = os.path.splitext(os.path.basename(self.scene_name))[0]
            path = unique_path("videos", f"{name}_t{self.world.time:07.3f}", ".mp4")
        if panel is not None:
            self.video_panel = bool(panel)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            self.video = SimClockVideo(path, fps or DEFAULT_FPS)
        except Exception as e:
            self.panel.notices.add(f"Video not started: {path}: {e}", "error")
            return None
        self.driver.limit = lambda: self.video.steps_to_next(self.world.time, self.world.dt) if self.video else 10**9
        self.panel.notices.add(f"Recording {path} (one frame per 1/{self.video.fps:g} s of simulated time)", "info")
        return path

    def stop_video(self):
        if self.video is None:
            return None
        v, self.video = self.video, None
        self.driver.limit = None
        try:
            v.close()
        except Exception as e:
            self.video_error = e
            self.panel.notices.add(f"Video not saved: {v.path}: {getattr(e, 'strerror', None) or e}", "error")
            return None
        self.last_video = v.path
        self.panel.notices.add(f"Saved {v.path} ({v.frames} frames, {v.frames / v.fps:.2f} s)", "info")
        return v.path

    def action_record_video(self):
        if self.video is None:
            self.start_video()
        else:
            self.stop_video()

    def _video_frame(self, scene):
        """The frame just drawn, into the video when its simulated time is due."""
        v = self.video
        if v is None or not v.due(self.world.time):
            return
        w, h = self.frame.size
        data = self.frame.read(components=3, alignment=1)
        rgb = np.frombuffer(data, np.uint8).reshape(h, w, 3)[::-1]
        if not self.video_panel:
            rgb = rgb[:, :scene[0]]
        try:
            v.add(rgb, self.world.time)
        except Exception as e:
            self.video_error = e
            self.panel.notices.add(f"Video stopped: {v.path}: {getattr(e, 'strerror', None) or e}", "error")
            self.video = None
            self.driver.limit = None

    # ------------------------------------------------------------------ rewind (shell/history.py)
    def seek(self, t):
        """Scrub to simulated time t (a recorded state at or before it); pauses."""
        self.drag.release(self.world)
        t = self.timeline.seek(self.world, t)
        self._after_jump()
        return t

    def _after_jump(self):
        self.driver.paused = True
        self.driver.error = None
        self.driver.accumulator = 0.0
        self.panel.plots.history.truncate(self.world.time)

    def action_rewind_step(self):
        """One recorded state (1/60 s) back."""
        self.drag.release(self.world)
        self.timeline.step_back(self.world, 1)
        self._after_jump()

    def action_rewind_second(self):
        self.seek(self.world.time - 1.0)

    def action_forward_second(self):
        if not self.timeline.live:
            self.seek(self.world.time + 1.0)

    def action_return_to_present(self):
        self.drag.release(self.world)
        self.timeline.present(self.world)
        self.driver.error = None
        self.panel.plots.history.truncate(self.world.time)

    def action_resume_here(self):
        """Resume live from the scrubbed state (the recorded future is discarded) and play."""
        self.timeline.resume(self.world)
        self.driver.paused = False

    def action_solver(self, name):
        self.set_solver(name)

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

    def action_overlay_contacts(self):
        self._toggle_overlay("contacts")

    def action_shadows(self):
        self.renderer.shadows = not self.renderer.shadows

    def action_screenshot(self):
        """P / F12: save the window (scene and panel) as screenshots/SCENE_tTIME.png; a press
        that would reuse a name (paused: the same simulated time) gets _2, _3, … so no
        screenshot is ever overwritten. The panel says which file it wrote."""
        name = os.path.splitext(os.path.basename(self.scene_name))[0]
        path = unique_path("screenshots", f"{name}_t{self.world.time:07.3f}", ".png")
        try:
            self.screenshot(path)
        except OSError as e:
            self.panel.notices.add(f"Screenshot not saved: {path}: {e.strerror or e}", "error")
            return None
        self.last_screenshot = path
        self.panel.notices.add(f"Saved {path}", "info")
        return path

    def action_gripper(self):
        from ui.robot import toggle_gripper
        if not toggle_gripper(self.world):
            self.panel.notices.add("No robot here has a gripper (a [robots.arm] gripper joint)", "warning")

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
        if self.world is None and (k is None or k.action != "quit"):
            return                          # still compiling: only Escape (quit) does something
        if k is not None:
            action = getattr(self, f"action_{k.action}")
            action() if k.arg is None else action(k.arg)

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
        if self._mouse_owner == "gui" or self.world is None:
            return
        if self.tip_drag.active and buttons & pyglet.window.mouse.LEFT:
            self.tip_drag.move(x, y)
        elif self.drag.active and buttons & pyglet.window.mouse.LEFT:
            self.drag.move(self.world, x, y, dy, modifiers, self.height)
        elif buttons & pyglet.window.mouse.LEFT:
            self.camera.orbit(dx, -dy)
        elif buttons & (pyglet.window.mouse.RIGHT | pyglet.window.mouse.MIDDLE):
            self.camera.pan(dx, dy, self.height)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.gui.mouse_scroll(x, y, scroll_x, scroll_y)
        if self.world is not None and not self.over_gui(x, y):
            self.camera.zoom(scroll_y)

    def on_mouse_press(self, x, y, button, modifiers):
        over = self.over_gui(x, y)
        self.gui.mouse_button(x, y, button, True)
        if over or self.world is None:
            self._mouse_owner = "gui"
            return
        self._mouse_owner = "scene"
        now = time.perf_counter()
        t, px, py = self._last_click
        if button == pyglet.window.mouse.LEFT and now - t < 0.35 and abs(x - px) < 4 and abs(y - py) < 4:
            self.focus_at(x, y)
        self._last_click = (now, x, y)
        if button == pyglet.window.mouse.LEFT and modifiers & pyglet.window.key.MOD_CTRL:
            i = self.tip_drag.press(self.world, x, y)
            if i is not None:
                self.select_body(i)
                return
        if button == pyglet.window.mouse.LEFT:
            i = self.drag.press(self.world, x, y)
            if i is not None:
                self.select_body(i)
            if self.drag.error:
                self.panel.notices.add(f"Can't grab: {self.drag.error}", "error")

    def on_mouse_release(self, x, y, button, modifiers):
        self.gui.mouse_button(x, y, button, False)
        if button == pyglet.window.mouse.LEFT:
            self.tip_drag.release()
        if button == pyglet.window.mouse.LEFT and self.drag.active and self.world is not None:
            self.drag.release(self.world)
        self._mouse_owner = None

    def pick(self, x, y):
        """Index of the body under window point (x, y) (pyglet: y up), by its shape."""
        found = self.drag.hit(self.world, x, y)
        return None if found is None else found[0]

    def focus_at(self, x, y):
        """Double-click: centre the view on the body (or rope) under the cursor and zoom
        so it is well seen in the visible viewport. Returns the body's index or None."""
        found = self.drag.hit(self.world, x, y)
        i = None if found is None else found[0]
        rope = self.drag.rope_hit(self.world, x, y)
        if rope is not None and (found is None or rope[1] < found[1]):
            p = self.world.ropes[rope[0]].positions
            centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
            self.camera.focus(centre, 0.5 * float(np.linalg.norm(p.max(axis=0) - p.min(axis=0))),
                              self.scene_aspect(), near=1.1, far=1.1)
            return None
        if i is not None:
            self.camera.focus(self.world.state.bodies.pos[i], self.renderer.radii[i], self.scene_aspect())
        return i

    def flip(self):
        t = time.perf_counter()
        super().flip()
        if self.world is not None:
            self.profiler.add("present", time.perf_counter() - t)
            self.profiler.commit()         # a frame ends with its flip

    def on_close(self):
        self.closed = True
        super().on_close()

    if _XlibEventHandler is not None:
        @_XlibEventHandler(_xlib.DestroyNotify)
        def _event_destroynotify(self, ev):
            """The X window was destroyed under the app (`xdotool windowclose`, a window
            manager's kill): the app ends as on a close, without touching the window."""
            if ev.xdestroywindow.window == self._window:
                self.destroyed = True
                self.dispatch_event("on_close")

    def close(self):
        if getattr(self, "video", None) is not None:
            self.stop_video()
        if getattr(self, "gui", None) is not None and not getattr(self, "destroyed", False):
            self.switch_to()
            self.gui.shutdown()
        self.gui = None
        self.closed = True
        super().close()


def unique_path(folder, stem, ext):
    """folder/stem+ext, or folder/stem_2+ext, _3, … : the first that does not exist."""
    path = os.path.join(folder, stem + ext)
    n = 2
    while os.path.exists(path):
        path = os.path.join(folder, f"{stem}_{n}{ext}")
        n += 1
    return path


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


def run_viewer(scene_path, overrides=None, frames=None, screenshot=None, warmup=None, on_frame=None,
               render=None, record_video=None):
    """Open the window on a scene; with `frames`, run that many frames of the scene then
    exit; `screenshot` saves the last frame (scene and panel). Returns 0, or 3 if the
    simulation blew up; a bad scene raises physics' SceneError (after the window closed).

    The window opens before anything is compiled. If the physics kernels are not in
    numba's disk cache yet (first launch), the warm-up subprocesses (shell/warmup.py)
    compile them while the window shows a progress message; the scene loads as soon as
    the kernels it needs (its solver's, the ropes') are cached, and the rest goes on
    compiling in the background at a lower priority.
    `warmup`: a started WarmupJob to wait for instead (tests), or False for none;
    `on_frame(win)` is called after every frame drawn (tests); `render`: "light" or "full"
    rendering instead of the automatic choice (render/quality.py); `record_video`: an MP4
    path, recorded from the scene's start until the last frame (shell/video.py)."""
    from shell import warmup as wu
    pyglet.options["dpi_scaling"] = "stretch"
    name = os.path.basename(str(scene_path))
    win = ViewerWindow(None, name, *default_window_size())
    if render is not None:
        from render.quality import MODES
        win.set_quality(MODES[render])
        win.quality_reason = f"asked for: {render}"
    job = None
    try:
        _show(win, on_frame)                   # the window is up before anything compiles
        job = (wu.start(needs=wu.scene_needs(scene_path, overrides), scene=scene_path) if warmup is None
               else (warmup or None))
        if job is not None:
            wait_for_warmup(win, job, on_frame=on_frame)
            if win.closed:
                return 0
            job.background()
            if job.done and not job.ok:
                import sys
                print(f"warning: the kernel warm-up failed (exit {job.returncode}); compiling in the window:\n"
                      f"{job.output_tail()}", file=sys.stderr)
        win.loading = wu.Progress(f"Loading {name}…", "", 1.0, 0.0)
        _show(win, on_frame)
        import physics
        world = physics.load_scene(scene_path, overrides)
        win.set_world(world, name)
        _warm_up(world)
        if record_video:
            if win.start_video(record_video) is None:
                raise OSError(win.panel.notices.last().text)
        try:
            status = _run_frames(win, frames, screenshot, scene_path, on_frame)
        finally:
            if record_video and not win.closed:
                win.stop_video()
        if record_video and getattr(win, "video_error", None) is not None:
            raise win.video_error              # the CLI says why (exit status 2)
        return status
    finally:
        if job is not None:
            job.kill()
        if not win.closed or getattr(win, "destroyed", False):
            win.close()


def _show(win, on_frame=None):
    win.dispatch_events()
    if not win.closed:
        win.render_frame()
        if on_frame is not None:
            on_frame(win)
        win.flip()


LOADING_FRAME_S = 0.25     # the compiling message is redrawn 4 times a second: its window
                           # must not take a core from the compilers (llvmpipe draws on the CPU)


def wait_for_warmup(win, job, show_after=None, on_frame=None, frame_s=LOADING_FRAME_S):
    """Draw the window (the compiling message once the job has run `show_after` s) until
    the warm-up job is ready (the scene's kernels cached) or the window is closed; events
    are read every 50 ms."""
    from shell.warmup import SHOW_AFTER
    show_after = SHOW_AFTER if show_after is None else show_after
    drawn = -1e9
    while not job.ready and not win.closed:
        now = time.perf_counter()
        if now - drawn >= frame_s:
            win.loading = job.progress() if job.elapsed() >= show_after else None
            _show(win, on_frame)
            drawn = now
        else:
            win.dispatch_events()
        time.sleep(0.05)
    if win.closed:
        job.kill()


def _run_frames(win, frames, screenshot, scene_path, on_frame=None):
    clock = time.perf_counter()
    n = 0
    while not win.closed and (frames is None or n < frames):
        win.dispatch_events()
        if win.closed:
            break
        now = time.perf_counter()
        win.driver.update(now - clock)
        clock = now
        win.render_frame()
        if on_frame is not None:
            on_frame(win)
        if screenshot and frames is not None and n == frames - 1:
            win.screenshot(screenshot)         # before flip: the frame just drawn
            screenshot = None
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
    return status
