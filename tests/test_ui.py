"""The viewer with its panel, driven like a user: pyglet input events dispatched to a
real window (Xvfb via pytest-xvfb), one frame drawn after every event, as ImGui reads
input once per frame. One window serves the module; each test loads its scene."""
import math
import os
from pathlib import Path

import numpy as np
import pytest

SCENES = Path(__file__).resolve().parent.parent / "scenes"
W, H = 1280, 800


@pytest.fixture(scope="module")
def win():
    import pyglet
    pyglet.options["dpi_scaling"] = "stretch"
    import physics
    from shell.window import ViewerWindow
    world = physics.load_scene(SCENES / "door.toml")
    w = ViewerWindow(world, "door.toml", width=W, height=H)
    frame(w)
    yield w
    if not w.closed:
        w.close()


@pytest.fixture
def door(win):
    assert win.load_scene(str(SCENES / "door.toml"))
    win.panel_visible, win.help_visible = True, False
    frame(win)
    return win


# ---------------------------------------------------------------------------- input helpers
def frame(win):
    win.dispatch_events()            # pyglet queues dispatched window events until here
    win.render_frame()
    assert win.gui_error is None, win.gui_error


def key(win, symbol, modifiers=0):
    win.dispatch_event("on_key_press", symbol, modifiers)
    frame(win)
    win.dispatch_event("on_key_release", symbol, modifiers)
    frame(win)


def type_text(win, text):
    from pyglet.window import key as k
    for ch in text:
        symbol = getattr(k, f"_{ch}") if ch.isdigit() else (k.PERIOD if ch == "." else k.MINUS)
        win.dispatch_event("on_key_press", symbol, 0)
        win.dispatch_event("on_text", ch)
        frame(win)
        win.dispatch_event("on_key_release", symbol, 0)


def drag(win, start, end, steps=6, button=None, modifiers=0, between=None, hold=0):
    """Press at `start`, move to `end` in `steps`, release (pyglet coordinates, y up);
    `between()` runs after every move (e.g. physics), and `hold` more times before the
    button is released (the cursor kept still)."""
    from pyglet.window import mouse
    button = mouse.LEFT if button is None else button
    x, y = start
    win.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frame(win)
    win.dispatch_event("on_mouse_press", x, y, button, modifiers)
    frame(win)
    for k in range(1, steps + 1):
        nx = round(start[0] + (end[0] - start[0]) * k / steps)
        ny = round(start[1] + (end[1] - start[1]) * k / steps)
        win.dispatch_event("on_mouse_drag", nx, ny, nx - x, ny - y, button, modifiers)
        x, y = nx, ny
        frame(win)
        if between is not None:
            between()
    for _ in range(hold):
        between()
        frame(win)
    win.dispatch_event("on_mouse_release", x, y, button, modifiers)
    frame(win)


def click(win, point):
    from pyglet.window import mouse
    win.dispatch_event("on_mouse_motion", point[0], point[1], 0, 0)
    frame(win)
    win.dispatch_event("on_mouse_press", point[0], point[1], mouse.LEFT, 0)
    frame(win)
    win.dispatch_event("on_mouse_release", point[0], point[1], mouse.LEFT, 0)
    frame(win)


def screen_point(win, p):
    """Window point (pyglet, y up) where world point p is drawn."""
    sw, sh = win.scene_size()
    x, y = win.camera.project(p, sw, sh)
    return round(x), round(win.height - y)


def widget_point(win, key_, fx=0.5):
    """Window point (pyglet) inside the panel widget `key_` (at fraction fx of its width)."""
    x0, y0, x1, y1 = win.panel.w.rects[key_]
    return round(x0 + fx * (x1 - x0)), round(win.height - 0.5 * (y0 + y1))


def reveal(win, key_):
    """Scroll the panel (mouse wheel over it, as a user would) until widget `key_` shows."""
    cx0, cy0, cx1, cy1 = win.panel.controls_rect
    for _ in range(40):
        # a widget scrolled far out of view may not be drawn at all (table clipping): scroll down
        x0, y0, x1, y1 = win.panel.w.rects.get(key_, (0.0, cy1 + 1.0, 0.0, cy1 + 1.0))
        if y0 >= cy0 and y1 <= cy1:
            return
        x, y = round(0.5 * (cx0 + cx1)), round(win.height - 0.5 * (cy0 + cy1))
        win.dispatch_event("on_mouse_motion", x, y, 0, 0)
        win.dispatch_event("on_mouse_scroll", x, y, 0, -1 if y1 > cy1 else 1)
        frame(win)
        frame(win)
    raise AssertionError(f"{key_} cannot be scrolled into view")


def run(win, seconds, frame_every=0.1):
    """Advance simulated time through the frame driver (as the app loop does)."""
    t_end = win.world.time + seconds - 1e-9
    while win.world.time < t_end and not win.driver.paused:
        win.driver.update(min(frame_every, t_end - win.world.time + 1e-6))


# ---------------------------------------------------------------------------- mouse
def _door_at_rest(door):
    run(door, 1.0)                                  # pushed, then friction stopped it (t = 0.87 s)
    hinge = door.world.joint("hinge")
    angle0 = hinge.angle
    door.world.advance(0.2)
    assert hinge.angle == pytest.approx(angle0, abs=1e-6)       # friction holds it
    return hinge, angle0


def _drag_door(door, end, modifiers=0):
    """Drag from the door's centre to window point `end`, 0.05 s of physics per move;
    returns the grab_info seen after each move."""
    seen = []

    def physics_between():
        seen.append(door.world.grab_info)
        door.driver.update(0.05)

    centre = door.world.body("door").position
    drag(door, screen_point(door, centre), end, steps=8, modifiers=modifiers, between=physics_between, hold=6)
    assert door.world.grab_info is None                          # released
    assert seen[0]["body"] == "door" and np.linalg.norm(seen[0]["point"] - centre) < 0.2
    return seen


def test_dragging_the_door_pulls_it_toward_the_cursor(door):
    hinge, angle0 = _door_at_rest(door)
    centre = door.world.body("door").position
    radial = np.array([math.cos(angle0), math.sin(angle0), 0.0])
    opening = np.array([-math.sin(angle0), math.cos(angle0), 0.0])
    door.camera.look(centre + 2.5 * (radial - opening) + (0, 0, 0.8), centre)   # the swing crosses the view
    seen = _drag_door(door, screen_point(door, centre + 0.5 * opening))
    p0, target = seen[0]["point"], seen[-1]["target"]
    start_gap = np.linalg.norm(p0 - target)
    end_gap = np.linalg.norm(seen[-1]["point"] - target)
    # the nearest the grabbed point can get: swung about the hinge (z through the origin)
    phi = np.linspace(-math.pi, math.pi, 3601)
    swung = np.stack([p0[0] * np.cos(phi) - p0[1] * np.sin(phi), p0[0] * np.sin(phi) + p0[1] * np.cos(phi),
                      np.full_like(phi, p0[2])], axis=1)
    best = np.linalg.norm(swung - target, axis=1).min()
    assert end_gap < best + 0.02 and end_gap < start_gap - 0.05  # it swung to where the cursor pulls
    assert hinge.angle - angle0 > math.radians(15)
    assert door.selected_joint == 0 and door.selected_body == door.world.body("door").index


def test_shift_drag_pulls_the_door_in_depth(door):
    hinge, angle0 = _door_at_rest(door)
    forward = door.camera.target - door.camera.eye
    opening = np.array([-math.sin(angle0), math.cos(angle0), 0.0])
    assert np.dot(forward, opening) > 0.8 * np.linalg.norm(forward)   # this view looks along the swing
    x, y = screen_point(door, door.world.body("door").position)
    from pyglet.window import key as k
    seen = _drag_door(door, (x, y + 150), modifiers=k.MOD_SHIFT)     # mouse up: away from the camera
    depth = np.dot(seen[-1]["target"] - seen[0]["point"], forward / np.linalg.norm(forward))
    assert depth > 0.3
    assert hinge.angle - angle0 > math.radians(10)               # the door opened, away from us


def test_dragging_empty_space_orbits_the_camera(door):
    yaw, pitch = door.camera.yaw, door.camera.pitch
    start = (40, H - 40)                                         # sky, top left of the scene
    drag(door, start, (start[0] + 120, start[1] - 30))
    assert door.world.grab_info is None
    assert door.camera.yaw != pytest.approx(yaw) and door.camera.pitch != pytest.approx(pitch)


def test_a_drag_over_the_panel_goes_to_imgui_not_the_scene(door):
    frame(door)
    yaw, target = door.camera.yaw, door.camera.target.copy()
    assert door.driver.speed == 1.0
    start = widget_point(door, "sim.speed", 0.9)
    end = widget_point(door, "sim.speed", 0.0)
    drag(door, start, (end[0] - 40, end[1]))                     # the speed slider, to its low end
    assert door.driver.speed == pytest.approx(0.01, rel=0.05)
    assert door.camera.yaw == yaw and np.array_equal(door.camera.target, target)
    assert door.world.grab_info is None
    door.driver.speed = 1.0


# ---------------------------------------------------------------------------- edits through the panel
def _stop_time(world, limit=2.0):
    """First time after the push (0.33 s) at which the hinge stops turning (s)."""
    hinge = world.joint("hinge")
    while world.time < limit:
        world.step()
        if world.time > 0.34 and abs(hinge.rate) < 1e-9:
            return world.time
    return math.inf


def test_typing_the_hinge_friction_changes_the_stop_time_as_one_over_tau(door):
    from pyglet.window import key as k
    world = door.world
    base = _stop_time(world)
    # the door's push is 52.73 N·m for 0.33 s: friction τ stops it at t = 0.33 · 52.73 / τ
    assert base == pytest.approx(0.33 * 52.73 / 20.0, abs=1.5 * world.dt)
    reveal(door, "joint.hinge.friction")
    click(door, widget_point(door, "joint.hinge.friction"))
    door.dispatch_event("on_key_press", k.A, k.MOD_CTRL)        # select all, then type over it
    frame(door)
    door.dispatch_event("on_key_release", k.A, k.MOD_CTRL)
    type_text(door, "41")                                        # "1" is a solver key: must not leak
    key(door, k.RETURN)
    assert world.joint("hinge").friction == 41.0
    assert world.solver == "impulse"
    key(door, k.BACKSPACE)                                       # reset (not typing any more)
    assert world.time == 0.0
    faster = _stop_time(world)
    assert faster == pytest.approx(0.33 * 52.73 / 41.0, abs=1.5 * world.dt)
    assert base / faster == pytest.approx(41.0 / 20.0, rel=0.05)


def test_out_of_range_and_refused_values_leave_notices_not_errors(door):
    from ui.joints_table import limit_params
    from ui.params import apply
    panel = door.panel
    assert panel.set("sim.dt", 1000.0)                           # ms: clamped to 100 ms
    assert door.world.dt == pytest.approx(0.1)
    assert "out of range" in panel.notices.last().text
    assert panel.set("solver.iterations", -5) and door.world.solver_settings("impulse")["iterations"] == 1
    assert not panel.set("solver.epsilon", float("nan"))
    assert "not a finite number" in panel.notices.last().text
    hinge = door.world.joint("hinge")
    hinge.set_limit(-0.5, 0.5)
    lo, hi = limit_params(hinge, 0)
    assert not apply(lo, 60.0, panel.notices)                    # lower above upper: the World refuses
    assert panel.notices.last().level == "error" and hinge.limit(0) == (-0.5, 0.5)
    assert apply(hi, 80.0, panel.notices) and hinge.limit(0)[1] == pytest.approx(math.radians(80))
    frame(door)                                                  # notices are drawn, nothing raised


def test_switching_solvers_mid_run_leaves_the_bodies_where_they_were(win):
    from pyglet.window import key as k
    assert win.load_scene(str(SCENES / "gallery.toml"))
    world = win.world
    run(win, 0.3)
    for symbol, name in ((k._1, "penalty"), (k._2, "impulse"), (k._1, "penalty")):
        before = world.state.bodies.pos.copy(), world.state.bodies.quat.copy()
        speed = np.linalg.norm(world.state.bodies.vel, axis=1).max()
        key(win, symbol)
        assert world.solver == name
        assert np.array_equal(world.state.bodies.pos, before[0]) and np.array_equal(world.state.bodies.quat, before[1])
        world.step()
        assert np.abs(world.state.bodies.pos - before[0]).max() < 2.0 * speed * world.dt + 1e-3
    reveal(win, "solver.impulse")
    click(win, widget_point(win, "solver.impulse", 0.1))        # the panel's radio button
    assert world.solver == "impulse"
    reveal(win, "joint.ball.row")                                # a row of the Joints table
    click(win, widget_point(win, "joint.ball.row", 0.3))
    assert win.selected_joint == world.joint("ball").index
    assert win.selected_body == world.body("bob").index          # its body gets the outline


def test_a_blow_up_pauses_with_a_message_and_backspace_resets(win):
    from pyglet.window import key as k
    assert win.load_scene(str(SCENES / "gallery.toml"))
    world = win.world
    world.solver = "penalty"
    world.configure("penalty", penalty_preset="paper")
    world.dt = 0.05
    run(win, 2.0)
    assert win.driver.error is not None and win.driver.paused
    frame(win)
    assert len(win.gui_rects) >= 2                               # the panel and the blow-up dialog
    key(win, k.BACKSPACE)
    assert win.driver.error is None and world.time == 0.0


def test_save_scene_as_and_csv_export(door, tmp_path):
    import physics
    door.world.joint("hinge").friction = 7.5
    assert door.panel.save_scene_as(str(tmp_path / "edited.toml"))
    assert physics.load_scene(tmp_path / "edited.toml").joint("hinge").friction == 7.5
    run(door, 0.5)
    frame(door)
    rows = door.panel.export_plots(str(tmp_path / "plots.csv"))
    lines = (tmp_path / "plots.csv").read_text().splitlines()
    assert rows > 20 and len(lines) == rows + 1 and lines[0].startswith("t (s),joint q")
    assert not door.panel.save_scene_as(str(tmp_path / "no" / "such" / "folder.toml"))


def test_ropes_get_a_section_only_when_the_world_has_ropes(win, tmp_path):
    from ui.params import apply
    from ui.ropes import rope_params
    assert win.load_scene(str(SCENES / "rope_swing.toml"))
    frame(win)
    rope = win.world.ropes["rope"]
    assert "rope.rope.E" in win.panel.w.rects and "rope.rope.segments" in win.panel.w.rects
    params = {p.key: p for p in rope_params("rope", rope)}
    assert apply(params["rope.rope.E"], 1e5, win.panel.notices) and rope.E == 1e5
    assert apply(params["rope.rope.segments"], 40, win.panel.notices) and rope.segments == 40
    assert apply(params["rope.rope.radius"], -1.0, win.panel.notices) and rope.radius == 1e-4
    assert "out of range" in win.panel.notices.last().text
    run(win, 0.2)
    frame(win)
    bad = tmp_path / "bad.toml"
    bad.write_text("[[bodies]]\nname = 3\n")
    assert not win.load_scene(str(bad))                          # a notice, and the old world stays
    assert win.world.ropes and "bodies[0].name" in win.panel.notices.last().text
    assert win.load_scene(str(SCENES / "door.toml"))
    frame(win)
    assert not any(k.startswith("rope.") for k in win.panel.w.rects)


# ---------------------------------------------------------------------------- keys
def test_every_key_in_the_help_overlay_does_what_it_says(door, tmp_path, monkeypatch):
    import physics
    from shell.window import ViewerWindow
    from ui.help import all_keys
    monkeypatch.chdir(tmp_path)
    win = door
    world = win.world

    def toggles(get):
        def check(press):
            before = get()
            press()
            assert get() != before
            press()
            assert get() == before
        return check

    def pause(press):
        win.driver.paused = False
        press()
        assert win.driver.paused
        t = world.time
        run_frames = win.driver.update(0.1)
        assert run_frames == 0 and world.time == t
        press()
        assert not win.driver.paused

    def step(press):
        win.driver.paused = True
        t = world.time
        press()
        assert world.time == pytest.approx(t + world.dt)
        win.driver.paused = False

    def reset(press):
        run(win, 0.2)
        press()
        assert world.time == 0.0

    def solver(press):
        name = press.arg
        world.solver = next(other for other in world.solvers if other != name)
        press()
        assert world.solver == name

    def reset_view(press):
        home = (win.camera.yaw, win.camera.distance)
        win.camera.orbit(50, 20)
        win.camera.zoom(3)
        press()
        assert (win.camera.yaw, win.camera.distance) == pytest.approx(home)

    def screenshot(press):
        win.driver.paused = True                 # the same simulated time for every press
        names = []
        for _ in range(3):
            press()
            names.append(win.last_screenshot)
            assert win.panel.notices.last().text == f"Saved {win.last_screenshot}"
        win.driver.paused = False
        shots = sorted((tmp_path / "screenshots").glob("*.png"))
        assert len(shots) == 3 and len(set(names)) == 3                 # none overwritten
        assert all(s.read_bytes()[:4] == b"\x89PNG" for s in shots)
        for s in shots:
            s.unlink()

    def panel(press):
        press()
        assert not win.panel_visible and win.scene_size()[0] == W
        press()
        assert win.panel_visible and win.scene_size()[0] < W

    def help_(press):
        press()
        assert win.help_visible and len(win.gui_rects) == 2      # panel + help
        press()
        assert not win.help_visible and len(win.gui_rects) == 1

    def quit_(press):
        other = ViewerWindow(physics.load_scene(SCENES / "door.toml"), "door", width=400, height=300)
        frame(other)
        other.dispatch_event("on_key_press", press.symbol, 0)
        other.dispatch_pending_events()          # (X events of a closed window can't be read)
        assert other.closed
        win.switch_to()

    def back(press):                         # rewind keys (shell/history.py, tests/test_rewind.py)
        win.driver.paused = False
        run(win, 0.5)
        t = world.time
        press()
        assert world.time < t and not win.timeline.live and win.driver.paused
        win.action_return_to_present()
        assert world.time == t and win.timeline.live
        win.driver.paused = False

    def forward(press):
        run(win, 1.5)
        t = world.time
        win.seek(t - 1.5)
        press()
        assert world.time == pytest.approx(t - 0.5, abs=0.03)
        win.action_return_to_present()
        win.driver.paused = False

    def present(press):
        run(win, 0.3)
        t = world.time
        win.seek(t - 0.2)
        press()
        assert world.time == t and win.timeline.live
        win.driver.paused = False

    def resume(press):
        run(win, 0.3)
        win.seek(world.time - 0.2)
        t = world.time
        press()
        assert win.timeline.live and not win.driver.paused and win.timeline.span()[1] == t

    def video(press):
        win.driver.paused = False
        press()
        assert win.video is not None
        for _ in range(6):                   # recording: the driver stops at each frame's time
            win.driver.update(0.05)          # until that frame is drawn
            frame(win)
        assert win.video.frames >= 5
        press()
        assert win.video is None and win.last_video.endswith(".mp4") and os.path.getsize(win.last_video) > 0

    def compare(press):
        press()
        assert win.compare is not None and win.compare.family != world.solver
        press()
        assert win.compare is None

    def gripper(press):                      # the door has no robot: a notice says so
        press()
        assert "gripper" in win.panel.notices.last().text and win.panel.notices.last().level == "warning"

    checks = {
        "compare": compare, "gripper": gripper,
        "record_video": video,
        "rewind_step": back, "rewind_second": back, "forward_second": forward,
        "return_to_present": present, "resume_here": resume,
        "toggle_pause": pause, "single_step": step, "reset": reset,
        "solver": solver,
        "reset_view": reset_view,
        "overlay_joints": toggles(lambda: win.renderer.overlays["joints"]),
        "overlay_limits": toggles(lambda: win.renderer.overlays["limits"]),
        "overlay_com": toggles(lambda: win.renderer.overlays["com"]),
        "overlay_violation": toggles(lambda: win.renderer.overlays["violation"]),
        "overlay_contacts": toggles(lambda: win.renderer.overlays["contacts"]),
        "shadows": toggles(lambda: win.renderer.shadows), "screenshot": screenshot,
        "light_rendering": toggles(lambda: (win.quality.name, win.renderer.shadow_size)),
        "toggle_panel": panel, "toggle_help": help_, "quit": quit_,
    }
    assert {k.action for k in all_keys()} == set(checks)
    for entry in all_keys():
        for symbol in entry.symbols:
            def press(symbol=symbol):
                key(win, symbol)
            press.symbol, press.arg = symbol, entry.arg
            checks[entry.action](press)
    world.solver = "impulse"


# ---------------------------------------------------------------------------- pixels
def test_the_panel_and_the_door_plot_are_drawn(door):
    from pyglet.window import key as k
    run(door, 1.0)
    frame(door)
    with_panel = door.pixels()
    px0, py0, px1, py1 = (int(round(c)) for c in door.panel.rect)
    x0, y0, x1, y1 = (int(round(c)) for c in door.panel.plots.rects["joint"])
    key(door, k.TAB)
    scene_only = door.pixels()
    key(door, k.TAB)
    panel_region = (slice(py0, py1), slice(px0, px1))
    assert np.any(with_panel[panel_region] != scene_only[panel_region], axis=2).mean() > 0.5
    plot = with_panel[y0:y1, x0:x1].astype(int)
    orange = np.abs(plot - np.array([255, 140, 51])).max(axis=2) < 40      # q' line (plots.LINE)
    blue = np.abs(plot - np.array([89, 166, 255])).max(axis=2) < 40        # q line
    assert orange.sum() > 100 and blue.sum() > 100
    cols = np.flatnonzero(orange.any(axis=0))
    assert cols.max() - cols.min() > 0.5 * (x1 - x0)             # the ramp spans the plot
    # paused: the plots freeze
    n = door.panel.plots.history.n
    key(door, k.SPACE)
    door.driver.update(0.2)
    frame(door)
    assert door.panel.plots.history.n == n
    key(door, k.SPACE)
