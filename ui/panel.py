"""The side panel: Simulation, Solver, Joints, Robot and Ropes (when there are any), Plots.

It edits the model between frames (the window draws it after the physics steps of a
frame and before the next ones), always through the World's public setters and
`params.apply`, so a bad value is clamped or refused with a notice, never raised.
`viewer` is the ViewerWindow: world, driver, camera, selection and the actions that
the keys share (shell/window.py).
"""
import os
from pathlib import Path

import numpy as np
from imgui_bundle import imgui

from physics.contacts import CONTACT_SETTINGS
from physics.io.scene_writer import save_scene
from physics.settings import by_name
from .joints_table import JointsTable
from .params import Notices, Param, apply, guarded
from .plots import Plots
from .robot import arms, draw_robots
from .ropes import draw_ropes
from .widgets import ERROR, GOOD, MUTED, WARNING, Widgets

DEFAULT_SCENES = Path(__file__).resolve().parent.parent / "scenes"
# widget kinds for schema settings shown as sliders (the rest are typed fields)
SLIDERS = {"erp", "lcp_erp"}


def schema_param(world, family, setting):
    """A panel Param for one numeric setting of a solver family (physics/settings.py):
    its label, range, unit and help come from the schema."""
    kind = "int" if setting.kind == "int" else ("slider" if setting.name in SLIDERS else "float")
    fmt = {"int": "%d", "slider": "%.2f"}.get(kind, "%.5g")
    return Param(f"solver.{setting.name}", setting.label or setting.name, setting.help,
                 lambda: world.solver_settings(family)[setting.name],
                 lambda x: world.configure(family, **{setting.name: x}), setting.lo, setting.hi, kind=kind,
                 fmt=fmt, unit="" if setting.unit in ("", "1") else setting.unit)


def scene_files(current=None):
    """The scene (.toml) and robot (.urdf) files next to the current scene (or the shipped
    scenes), sorted."""
    folders = []
    if current:
        folders.append(Path(current).resolve().parent)
    folders.append(DEFAULT_SCENES)
    for folder in folders:
        files = sorted(list(folder.glob("*.toml")) + list(folder.glob("*.urdf")))
        if files:
            return files
    return []


class Panel:
    def __init__(self, viewer):
        self.v = viewer
        self.notices = Notices()
        self.w = Widgets(self.notices)
        self.joints = JointsTable(self.w, self.notices)
        self.plots = Plots()
        self.rect = None                  # the panel's rectangle last frame (top-left origin)
        self.controls_rect = None         # its scrolling part (everything but the plots)
        self.saved_gravity = None         # gravity to restore when it is switched back on
        self.save_path = ""
        self.export_path = ""
        self.confirm_overwrite = None
        self.col2 = 200.0                 # x of the second column of a row of fields
        self.plot_heights = (150.0, 120.0)
        self.capped_steps = 0             # time-cap cuts since the scene was loaded or reset
        self.counted_steps = 0
        self.scene_changed()

    # ------------------------------------------------------------------ model edits
    def restarted(self):
        """The simulation went back to its start: fresh plots and counters."""
        self.plots.history.clear()
        self.capped_steps = self.counted_steps = 0

    def scene_changed(self):
        """A new world: fresh plots, counters and default file names."""
        self.restarted()
        self.plots.history.joint = None
        self.saved_gravity = None
        path = Path(self.v.scene_path) if self.v.scene_path else DEFAULT_SCENES / "scene.toml"
        stem = path.stem
        save = path.with_name(f"{stem}_edited.toml") if self.v.scene_path else Path(f"{stem}_edited.toml")
        try:
            save = save.resolve().relative_to(Path.cwd())      # shorter to read, when it can be
        except ValueError:
            pass
        self.save_path = str(save)
        self.export_path = os.path.join("plots", f"{stem}.csv")

    def sim_params(self):
        v = self.v
        world, driver = v.world, v.driver

        def set_speed(p):
            driver.speed = p / 100.0

        def set_dt(ms):
            world.dt = ms / 1000.0

        params = {p.key: p for p in (
            Param("sim.speed", "speed", "Simulated time per wall-clock time (%): 100 % is real time, less is "
                  "slow motion (down to 1 %).", lambda: driver.speed * 100.0, set_speed, 1.0, 100.0,
                  kind="log_slider", fmt="%.0f %%"),
            Param("sim.dt", "Δt", "Fixed physics step (ms), 0.001 - 100 ms.", lambda: world.dt * 1000.0, set_dt,
                  0.001, 100.0, fmt="%.4g", unit="ms"),
        )}
        solver = world.active_solver
        for name in solver.SIMULATION:
            p = schema_param(world, solver.name, solver.schema()[name])
            p.key = f"sim.{name}"
            params[p.key] = p
        return params

    def solver_params(self):
        """The numeric settings of every solver family, from their schemas."""
        world = self.v.world
        return {p.key: p for family, solver in world.solvers.items() for p in
                (schema_param(world, family, s) for s in solver.SETTINGS if s.kind in ("int", "float"))}

    def contact_params(self):
        """The numeric contact settings (physics/contacts.py CONTACT_SETTINGS)."""
        world = self.v.world
        return {f"contacts.{s.name}": Param(f"contacts.{s.name}", s.label or s.name, s.help,
                                            lambda s=s: world.contact_settings[s.name],
                                            lambda x, s=s: world.configure_contacts(**{s.name: x}), s.lo, s.hi,
                                            kind="float", fmt="%.4g", unit=s.unit)
                for s in CONTACT_SETTINGS if s.kind == "float"}

    def param(self, key):
        """A Param of the Simulation, Solver or Contacts section by key (e.g. "solver.iterations")."""
        return {**self.sim_params(), **self.solver_params(), **self.contact_params()}[key]

    def set(self, key, value):
        """What a widget does when a value is committed (tests use it too)."""
        return apply(self.param(key), value, self.notices)

    def set_gravity(self, on):
        world = self.v.world
        if on:
            g = self.saved_gravity if self.saved_gravity is not None else (0.0, 0.0, -9.81)
            world.gravity = g
        else:
            if any(world.gravity):
                self.saved_gravity = tuple(world.gravity)
            world.gravity = (0.0, 0.0, 0.0)

    def save_scene_as(self, path):
        """Write the edited world (with the current camera as its view) to `path`."""
        path = str(path).strip()
        if not path:
            self.notices.add("Save scene: give a file name", "error")
            return False
        if not path.endswith(".toml"):
            path += ".toml"
        cam = self.v.camera
        view = {"eye": list(cam.eye), "target": list(cam.target)}
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            self.notices.add(f"Save scene: the folder {folder} does not exist", "error")
            return False
        if guarded(self.notices, "Save scene", save_scene, self.v.world, path, view,
                   f"Saved from the Sharnir panel ({self.v.scene_name}).") is None:
            return False
        self.notices.add(f"Saved {path}", "info")
        return True

    def export_plots(self, path):
        rows = guarded(self.notices, "Export CSV", self.plots.history.export_csv, path, self.plots.seconds)
        if rows is not None:
            self.notices.add(f"Wrote {rows} rows to {path}", "info")
        return rows

    def record(self):
        """After every slice of physics steps (plots.SampledWorld) and every drawn frame:
        a plot sample, and the time-cap count of the steps run since the last one."""
        world = self.v.world
        if self.plots.history.record(world, self.v.selected_joint):
            st = world.stats
            self.capped_steps += st.capped_steps
            self.counted_steps += st.steps

    # ------------------------------------------------------------------ drawing
    def draw(self, x, width, height):
        imgui.set_next_window_pos((x, 0), imgui.Cond_.always)
        imgui.set_next_window_size((width, height), imgui.Cond_.always)
        flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_title_bar
                 | imgui.WindowFlags_.no_bring_to_front_on_focus)
        imgui.begin("Sharnir panel", None, flags)
        self.w.rects = {}
        self._header()
        plots_h = self._plots_height(height)
        avail = imgui.get_content_region_avail().y
        if imgui.begin_child("controls", (0, max(avail - plots_h, 120.0))):
            cp, cs = imgui.get_window_pos(), imgui.get_window_size()
            self.controls_rect = (cp.x, cp.y, cp.x + cs.x, cp.y + cs.y)
            self.col2 = imgui.get_content_region_avail().x * 0.5 + 4
            self._simulation()
            self._solver()
            self._compare()
            self._timeline()
            self._joints()
            if arms(self.v.world):
                if imgui.collapsing_header("Robot", imgui.TreeNodeFlags_.default_open):
                    draw_robots(self.w, self.v.world)
            self._contacts()
            ropes = getattr(self.v.world, "ropes", None)
            if ropes:
                if imgui.collapsing_header("Ropes", imgui.TreeNodeFlags_.default_open):
                    draw_ropes(self.w, ropes)
            self._view()
            self._profiler()
        imgui.end_child()
        self._plots()
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        imgui.end()

    def _plots_height(self, height):
        """Height of the plots area: the joint plot and one tabbed plot, ~40 % of the panel."""
        u = max(90.0, min(260.0, (0.42 * height - 80.0) / 2.2))
        self.plot_heights = (1.2 * u, u)
        return sum(self.plot_heights) + 3.6 * imgui.get_frame_height_with_spacing()

    def _pair(self, first, second, width=90):
        """Two Params on one line, the second at the middle of the panel."""
        self.w.param(first, width=width)
        if second is not None:
            imgui.same_line(self.col2)
            self.w.param(second, width=width)

    def _header(self):
        v = self.v
        d = v.driver
        state = "blew up" if d.error is not None else ("paused" if d.paused else "running")
        color = ERROR if d.error is not None else (WARNING if d.paused else GOOD)
        imgui.text(f"{v.scene_name}   t = {v.world.time:.3f} s   ")
        imgui.same_line()
        imgui.text_colored(color, state)
        if d.behind and not d.paused:
            imgui.same_line()
            imgui.text_colored(WARNING, "(slowed)")
            self.w.tooltip("The machine can't run the physics in real time: simulated time runs slower.")
        imgui.same_line(imgui.get_window_width() - 90)
        if self.w.button("help", "Help (F1)", "Every key and mouse action."):
            v.action_toggle_help()
        if d.error is not None:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(ERROR, str(d.error))
            imgui.pop_text_wrap_pos()
            if self.w.button("blowup.reset", "Reset", "Back to the start of the simulation (Backspace)."):
                v.action_reset()
            imgui.same_line()
            imgui.text_disabled("or rewind (Page Up, the timeline) and change something")
        self._timeline_slider()
        for n in self.notices.current()[-2:]:
            color = {"error": ERROR, "warning": WARNING}.get(n.level, MUTED)
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(color, n.text)
            imgui.pop_text_wrap_pos()
        imgui.separator()

    def _simulation(self):
        if not imgui.collapsing_header("Simulation", imgui.TreeNodeFlags_.default_open):
            return
        v, w = self.v, self.w
        d = v.driver
        if w.button("sim.play", "Pause" if not d.paused else "Play ", "Play / pause (Space)."):
            v.action_toggle_pause()
        imgui.same_line()
        if w.button("sim.step", "Step", "One step of Δt (Right arrow)."):
            v.action_single_step()
        imgui.same_line()
        if w.button("sim.reset", "Reset", "Back to the start (Backspace)."):
            v.action_reset()
        imgui.same_line(self.col2)
        params = self.sim_params()
        w.param(params["sim.speed"], width=120)
        beside = [params[f"sim.{name}"] for name in v.world.active_solver.SIMULATION]
        self._pair(params["sim.dt"], beside[0] if beside else None)
        changed, on = w.checkbox("sim.gravity", "gravity", any(v.world.gravity),
                                 "Gravity on (the scene's, default (0, 0, -9.81) m/s²) or off.")
        if changed:
            guarded(self.notices, "gravity", self.set_gravity, on)
        imgui.same_line()
        g = v.world.gravity
        imgui.text_disabled(f"({g[0]:.3g}, {g[1]:.3g}, {g[2]:.3g}) m/s²")
        files = scene_files(v.scene_path)
        names = [f.name for f in files]
        current = Path(v.scene_path).name if v.scene_path else ""
        if names:
            changed, name = w.combo("sim.scene", "scene", current if current in names else names[0], names,
                                    "Open another scene file (edits to this one are lost unless saved).",
                                    width=self.col2 - 8)
            if changed and name != current:
                v.load_scene(str(files[names.index(name)]))
                return
            imgui.same_line()
        if w.button("sim.reload", "Reload", "Load this scene file again, dropping the edits."):
            if v.scene_path:
                v.load_scene(v.scene_path)
                return
        imgui.set_next_item_width(self.col2 - 8)
        changed, text = imgui.input_text("##save_path", self.save_path)
        w._remember("sim.save_path")
        w.tooltip("File to save the edited scene to (TOML; the current camera becomes its view).")
        if changed:
            self.save_path = text
            self.confirm_overwrite = None
        imgui.same_line()
        exists = os.path.exists(self.save_path)
        label = "Overwrite?" if exists and self.confirm_overwrite == self.save_path else "Save scene as"
        if w.button("sim.save", label, "Write the edited world as a scene file (press twice to overwrite)."):
            if exists and self.confirm_overwrite != self.save_path:
                self.confirm_overwrite = self.save_path
                self.notices.add(f"{self.save_path} exists: press Overwrite? to replace it", "warning")
            else:
                self.confirm_overwrite = None
                self.save_scene_as(self.save_path)

    def _compare(self):
        """Compare mode (shell/compare.py): a ghost world stepped by another solver."""
        if not imgui.collapsing_header("Compare", imgui.TreeNodeFlags_.default_open):
            return
        v, w = self.v, self.w
        world = v.world
        c = v.compare
        changed, on = w.checkbox("compare.on", "compare with", c is not None,
                                 "Step a second world (the ghost, drawn translucent) from the current state "
                                 "with another solver family; drags and edits apply to both (K).")
        families = list(world.solvers)
        imgui.same_line()
        current = c.family if c is not None else next((f for f in families if f != world.solver), families[0])
        fam_changed, family = w.combo("compare.family", "##family", current, families,
                                      "The ghost's solver family (its settings: the family's own).", width=110)
        if changed:
            v.start_compare(family) if on else v.stop_compare()
        elif fam_changed and c is not None and family != c.family:
            v.start_compare(family)
        c = v.compare
        if c is None:
            v.panel.plots.ghost = None
            return
        if c.error is not None:
            imgui.text_colored(ERROR, f"ghost: {c.error}")
        g = c.ghost
        j = v.selected_joint
        if imgui.begin_table("compare", 3, imgui.TableFlags_.borders_inner_h):
            imgui.table_setup_column("")
            imgui.table_setup_column(f"world: {world.solver}")
            imgui.table_setup_column(f"ghost: {g.solver}")
            imgui.table_headers_row()
            rows = [("solve ms / step", f"{world.stats.solve_ms:.3f}", f"{g.stats.solve_ms:.3f}"),
                    ("wall ms / step", "", f"{c.ms_per_step:.3f}"),
                    ("max violation", f"{world.max_constraint_error():.2e}", f"{g.max_constraint_error():.2e}"),
                    ("energy (J)", f"{world.energy():.4g}", f"{g.energy():.4g}")]
            if j is not None and j < len(world.joint_info) and world.joint_info[j].kind != "fixed":
                from physics.world import Joint
                scale = 1.0 if world.joint_info[j].kind == "prismatic" else 57.29577951308232
                rows.insert(0, (f"{world.joint_info[j].name} q", f"{Joint(world, j).angle * scale:.3f}",
                                f"{Joint(g, j).angle * scale:.3f}"))
            for label, a, b in rows:
                imgui.table_next_row()
                for text in (label, a, b):
                    imgui.table_next_column()
                    imgui.text(text)
            imgui.end_table()
        ts, qs = c.series(self.plots.seconds)
        self.plots.ghost = (ts, qs, f"ghost ({g.solver})")

    def _timeline_now(self):
        """(the viewer's timeline or None, its recorded (start, end) span or None, the time now)."""
        tl = getattr(self.v, "timeline", None)
        return tl, (tl.span() if tl is not None else None), self.v.world.time

    def _timeline_slider(self):
        """The recorded states as a slider, always in view at the top of the panel."""
        v, w = self.v, self.w
        tl, span, t = self._timeline_now()
        if tl is None:
            return
        lo, hi = span if span else (0.0, 0.0)
        hi = max(hi, lo + 1e-6)
        if tl.live:
            imgui.text_colored(GOOD, "live  ")
        else:
            imgui.text_colored(WARNING, "replay")
        imgui.same_line()
        imgui.set_next_item_width(-1)
        w._measure()
        changed, target = imgui.slider_float("##timeline", float(min(max(t, lo), hi)), float(lo), float(hi),
                                             "timeline: t = %.3f s")
        w._remember("timeline.slider")
        w.tooltip(f"The last {tl.seconds:g} s of simulated time. Drag to scrub back through the recorded "
                  "states (pauses); Space plays forward from there, End returns to the present, Enter "
                  "resumes live from here (Timeline section below).")
        if changed and span:
            v.seek(target)

    def _timeline(self):
        """Rewind and replay (shell/history.py): the recorded states as a slider."""
        if not imgui.collapsing_header("Timeline (rewind)", imgui.TreeNodeFlags_.default_open):
            return
        v, w = self.v, self.w
        tl, span, t = self._timeline_now()
        if tl is None:
            return
        hi = max(span[1] if span else 0.0, 1e-6)
        if w.button("timeline.back", "<< 1 s", "One second back (Page Up); Left arrow: one state back."):
            v.action_rewind_second()
        imgui.same_line()
        if w.button("timeline.present", "Present", "Back to the newest state, live (End)."):
            v.action_return_to_present()
        imgui.same_line()
        if w.button("timeline.resume", "Resume here",
                    "Go on live from this state: the recorded future is dropped (Enter)."):
            v.action_resume_here()
        imgui.same_line()
        if tl.live:
            imgui.text_colored(GOOD, "live")
        else:
            imgui.text_colored(WARNING, f"replay ({hi - t:.2f} s behind)")
        p = Param("timeline.seconds", "length", "How many seconds of simulated time the timeline keeps "
                  "(its memory is fixed: states × bytes per state).", lambda: tl.seconds,
                  lambda s: tl.set_seconds(s, v.world), 1.0, 600.0, kind="log_slider", fmt="%.0f s")
        w.param(p, width=120)
        imgui.same_line(self.col2)
        mb = tl.memory_bytes / 1e6
        w.readout("memory", f"{tl.count}/{tl.capacity} states, {mb:.1f} MB",
                  f"One state every {tl.every(v.world.dt)} step(s) ({tl.bytes_per_state} bytes each); "
                  f"the buffer's size is fixed: {tl.capacity} × ({tl.bytes_per_state} + 16) bytes.", MUTED)

    def _solver(self):
        """The families' radio buttons, then the active family's settings as its PANEL
        lays them out (physics/solvers/base.py), its notes and its readouts."""
        if not imgui.collapsing_header("Solver", imgui.TreeNodeFlags_.default_open):
            return
        v, w = self.v, self.w
        world = v.world
        for key, (name, solver) in enumerate(world.solvers.items(), start=1):
            if imgui.radio_button(f"{name}##solver.{name}", world.solver == name):
                v.set_solver(name)
            w._remember(f"solver.{name}")
            w.tooltip(f"{solver.description} (key {key})")
            imgui.same_line()
        imgui.new_line()
        solver = world.active_solver
        params = self.solver_params()
        for row in solver.panel_rows():
            for i, name in enumerate(row):
                if i:
                    imgui.same_line(self.col2)
                self._setting(solver, name, params)
        for note in solver.notes(world):
            imgui.text_colored(WARNING, note)
        for feature, joints in world.unhonoured():
            if feature == "couplings":
                imgui.text_colored(WARNING, f"the {world.solver} solver does not solve couplings: {len(joints)}")
                imgui.text_colored(WARNING, "(a robot's mimic joints follow by servo instead)")
        for i, line in enumerate(solver.readouts(world.stats, (self.capped_steps, self.counted_steps))):
            if i % 2:
                imgui.same_line(self.col2)
            w.readout(line.label, line.text, line.help, WARNING if line.warn else MUTED)

    def _setting(self, solver, name, params):
        """One setting of the active family: a combo, a checkbox or a number field, from its
        schema (physics/settings.py)."""
        world, w = self.v.world, self.w
        s = solver.schema()[name]
        key = f"solver.{name}"
        if s.kind in ("int", "float"):
            w.param(params[key], width=90)
            return
        value = solver.settings[name]
        if s.kind == "choice":
            changed, new = w.combo(key, s.label or name, value, s.choices, s.help, width=90)
        else:
            changed, new = w.checkbox(key, s.label or name, value, s.help)
        if changed:
            guarded(self.notices, s.label or name, world.configure, solver.name, **{name: new})

    def _joints(self):
        if not imgui.collapsing_header("Joints", imgui.TreeNodeFlags_.default_open):
            return
        v = self.v
        self.joints.draw(v.world, v.selected_joint, v.select_joint)
        self.joints.draw_details(v.world, v.selected_joint)

    def _contacts(self):
        if not imgui.collapsing_header("Contacts", imgui.TreeNodeFlags_.default_open):
            return
        v, w = self.v, self.w
        world = v.world
        s = world.contact_settings
        enabled = by_name(CONTACT_SETTINGS)["enabled"]
        changed, on = w.checkbox("contacts.enabled", "bodies collide", s["enabled"], enabled.help)
        if changed:
            guarded(self.notices, "contacts", world.configure_contacts, enabled=on)
        imgui.same_line(self.col2)
        changed, on = w.checkbox("contacts.overlay", "show (N)", v.renderer.overlays["contacts"],
                                 "Draw each contact point and its normal (key N).")
        if changed:
            v.renderer.overlays["contacts"] = on
        params = self.contact_params()
        self._pair(params["contacts.margin"], params["contacts.slop"])
        w.param(params["contacts.restitution_threshold"], width=90)
        n = len(world.contacts()["depth"])
        imgui.same_line(self.col2)
        w.readout("contacts", f"{n}", "Contact points found in the last step.", MUTED)
        if s["enabled"] and "contacts" not in world.active_solver.HONOURS and world.collides():
            imgui.text_colored(WARNING, f"the {world.solver} solver does not act on contacts:")
            imgui.text_colored(WARNING, "bodies pass through each other")
        for feature, bodies in world.unhonoured():
            if feature == "restitution":
                imgui.text_colored(WARNING, f"the {world.solver} solver does not bounce: restitution")
                imgui.text_colored(WARNING, f"of {len(bodies)} bod{'y' if len(bodies) == 1 else 'ies'} kept for impulse, lcp")

    def view_params(self):
        v = self.v

        def set_scale(pct):
            v.set_quality(v.quality.with_scale(pct / 100.0))

        return {p.key: p for p in (
            Param("view.scale", "resolution", "Resolution of the 3D view, % of the window's (upscaled): "
                  "lower draws faster under software OpenGL.", lambda: v.quality.scale * 100.0, set_scale,
                  25.0, 100.0, kind="slider", fmt="%.0f %%"),
        )}

    def _view(self):
        if not imgui.collapsing_header("View", imgui.TreeNodeFlags_.default_open):
            return
        v, w = self.v, self.w
        light = v.quality.name == "light"
        changed, on = w.checkbox("view.light", "light rendering", light,
                                 "Faster drawing for software OpenGL (G): the 3D view at 50 % resolution, "
                                 "no multisampling, a 1024² shadow map. Chosen by itself under llvmpipe / "
                                 "softpipe / swrast, or with SHARNIR_RENDER=light|full.")
        if changed and on != light:
            v.action_light_rendering()
        imgui.same_line(self.col2)
        changed, on = w.checkbox("view.shadows", "shadows", v.renderer.shadows, "Shadows on / off (S).")
        if changed:
            v.renderer.shadows = on
        w.param(self.view_params()["view.scale"], width=120)
        imgui.same_line(self.col2)
        w.readout("fps", f"{v.fps:.1f}", "Frames drawn per second of wall-clock time.", MUTED)
        rec = v.video
        label = "Record video" if rec is None else f"Stop recording ({rec.frames} frames)"
        if w.button("view.video", label, "Record the window as an MP4 in ./videos/ (F9): one frame every "
                    "1/30 s of simulated time, so slow motion and replay play back at the physics' speed."):
            v.action_record_video()
        imgui.same_line(self.col2)
        changed, on = w.checkbox("view.video_panel", "panel in video", v.video_panel,
                                 "Include the panel in the video's frames (else the 3D view alone); "
                                 "set before starting a recording.")
        if changed and rec is None:
            v.video_panel = on
        if v.last_video and rec is None:
            imgui.text_disabled(f"last video: {v.last_video}")
        imgui.text_disabled(f"{v.quality.name} ({v.quality_reason}): {v.quality_text()}")
        imgui.text_disabled(f"OpenGL renderer: {v.gl_renderer}")

    def _profiler(self):
        """Where each frame's wall time goes (shell/profiler.py), as a rolling plot."""
        from imgui_bundle import implot
        prof = getattr(self.v, "profiler", None)         # shell/profiler.py (ui never imports shell)
        if prof is None or not imgui.collapsing_header("Profiler", imgui.TreeNodeFlags_.default_open):
            return
        STAGES, COLORS = prof.STAGES, prof.COLORS
        mean = self.v.profiler.mean_ms(60)
        total = sum(mean.values())
        imgui.text_disabled(f"ms per frame, mean of the last 60 frames: {total:.1f} ms "
                            f"({1000.0 / total if total > 0 else 0.0:.0f} fps)")
        if imgui.begin_table("stages", 4):
            for i, st in enumerate(STAGES):
                if i % 2 == 0:
                    imgui.table_next_row()
                imgui.table_next_column()
                imgui.text_colored(imgui.ImVec4(*COLORS[st], 1.0), st)
                imgui.table_next_column()
                imgui.text(f"{mean[st]:.2f} ms ({100.0 * mean[st] / total if total > 0 else 0.0:.0f} %)")
            imgui.end_table()
        n = prof.n
        if n == 0:
            return
        xs = np.arange(n, dtype=float) - (n - 1)
        width = imgui.get_content_region_avail().x
        flags = implot.Flags_.no_menus | implot.Flags_.no_box_select
        if implot.begin_plot("Stages per frame##profiler", (width, 160.0), flags):
            implot.setup_axes("frame (0 = now)", "ms (stacked)")
            cum = np.zeros(n)
            top = max(1e-3, float(np.max(np.sum(prof.data[:, :n], axis=0))))
            implot.setup_axis_limits(implot.ImAxis_.x1, float(xs[0]), 0.0, implot.Cond_.always)
            implot.setup_axis_limits(implot.ImAxis_.y1, 0.0, top * 1.1, implot.Cond_.always)
            implot.setup_legend(implot.Location_.north_west, implot.LegendFlags_.horizontal)
            for st in STAGES:
                col = prof.column(st)
                lo, hi = cum.copy(), cum + col
                spec = implot.Spec(fill_color=imgui.ImVec4(*COLORS[st], 1.0), fill_alpha=0.75)
                implot.plot_shaded(st, xs, np.ascontiguousarray(lo), np.ascontiguousarray(hi), spec)
                cum = hi
            p, sz = implot.get_plot_pos(), implot.get_plot_size()
            self.plots.rects["profiler"] = (p.x, p.y, p.x + sz.x, p.y + sz.y)
            implot.end_plot()

    def _plots(self):
        v, w = self.v, self.w
        imgui.separator()
        imgui.text("Plots")
        imgui.same_line()
        p = Param("plots.window", "window", "Length of the rolling window (s of simulated time).",
                  lambda: self.plots.seconds, lambda s: setattr(self.plots, "seconds", s), 0.5, 600.0,
                  kind="log_slider", fmt="window %.1f s")
        w.param(p, label="##window", width=130)
        imgui.same_line()
        if w.button("plots.export", "Export CSV", f"Write the plotted window to {self.export_path} (CSV)."):
            self.export_plots(self.export_path)
        j = v.selected_joint
        label, angular = "no joint selected", True
        if j is not None and j < len(v.world.joint_info):
            info = v.world.joint_info[j]
            label, angular = f"{info.name} ({info.kind})", info.kind != "prismatic"
        self.plots.draw(label, angular, self.plot_heights)
