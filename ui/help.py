"""Every key and mouse action of the viewer, and the F1 overlay that lists them.

KEYS, with the solver families' keys (all_keys), is the one table: the overlay prints it
and the window dispatches key presses through it (`action` names a `ViewerWindow.action_*`
method), so the overlay cannot drift from what the keys do.
"""
from dataclasses import dataclass

from imgui_bundle import imgui
from pyglet.window import key

from physics.solvers import FAMILIES


@dataclass(frozen=True)
class KeyAction:
    label: str          # as printed
    symbols: tuple      # pyglet key symbols
    action: str         # ViewerWindow.action_<action>
    text: str           # what it does
    arg: str = None     # the action's argument, if it takes one (a solver family's name)


def _solver_keys():
    """Keys 1, 2, … switch to the solver families in FAMILIES' order."""
    return tuple(KeyAction(str(i), (getattr(key, f"_{i}"), getattr(key, f"NUM_{i}")), "solver",
                           f"{name} solver: {family.description}", name)
                 for i, (name, family) in enumerate(list(FAMILIES.items())[:9], start=1))


KEYS = (
    KeyAction("Space", (key.SPACE,), "toggle_pause", "play / pause the simulation"),
    KeyAction("Right arrow", (key.RIGHT,), "single_step", "one step of Δt (while paused)"),
    KeyAction("Backspace", (key.BACKSPACE,), "reset", "reset the simulation to its start"),
    KeyAction("Left arrow", (key.LEFT,), "rewind_step", "rewind: one recorded state (1/60 s) back, paused"),
    KeyAction("Page Up", (key.PAGEUP,), "rewind_second", "rewind: 1 s back in the timeline, paused"),
    KeyAction("Page Down", (key.PAGEDOWN,), "forward_second", "replay: 1 s forward in the recorded timeline"),
    KeyAction("End", (key.END,), "return_to_present", "rewind: back to the present (the newest state)"),
    KeyAction("Enter", (key.ENTER, key.NUM_ENTER), "resume_here",
              "resume live from the scrubbed state (the recorded future is dropped)"),
    KeyAction("R", (key.R,), "reset_view", "reset the camera"),
    KeyAction("J", (key.J,), "overlay_joints", "joint frames on / off"),
    KeyAction("L", (key.L,), "overlay_limits", "joint limits on / off"),
    KeyAction("C", (key.C,), "overlay_com", "centres of mass on / off"),
    KeyAction("V", (key.V,), "overlay_violation", "tint bodies by constraint violation"),
    KeyAction("N", (key.N,), "overlay_contacts", "contact points and normals on / off"),
    KeyAction("S", (key.S,), "shadows", "shadows on / off"),
    KeyAction("G", (key.G,), "light_rendering", "light rendering on / off (low resolution, no MSAA)"),
    KeyAction("P / F12", (key.P, key.F12), "screenshot", "save a screenshot in ./screenshots/"),
    KeyAction("O", (key.O,), "gripper", "open / close the robots' grippers"),
    KeyAction("K", (key.K,), "compare", "compare mode on / off: a ghost world stepped by the other solver"),
    KeyAction("F9", (key.F9,), "record_video", "start / stop recording an MP4 in ./videos/ (simulated-time rate)"),
    KeyAction("Tab", (key.TAB,), "toggle_panel", "show / hide the panel"),
    KeyAction("F1", (key.F1,), "toggle_help", "show / hide this help"),
    KeyAction("Escape", (key.ESCAPE,), "quit", "quit"),
)

MOUSE = (
    ("Left drag on a body", "pull it by a soft spring (drawn as a line), in the plane facing you"),
    ("Shift + left drag on a body", "pull it nearer or farther (mouse up: away from you)"),
    ("Ctrl + left drag on a robot", "move its tip target (the arm follows), in the plane facing you"),
    ("Left click on a body", "select it and its joint (Joints table)"),
    ("Left drag elsewhere", "orbit the camera"),
    ("Right or middle drag", "pan the camera"),
    ("Wheel", "zoom"),
    ("Double-click on a body", "centre the camera on it"),
    ("Over the panel", "the mouse and typing go to the panel, not the scene"),
)


def all_keys():
    """KEYS with the solver families' keys (1, 2, …: FAMILIES as registered now) after the
    timeline's."""
    at = next(i for i, k in enumerate(KEYS) if k.action == "resume_here") + 1
    return KEYS[:at] + _solver_keys() + KEYS[at:]


def key_action(symbol):
    """The KeyAction a pyglet key symbol triggers, or None."""
    for k in all_keys():
        if symbol in k.symbols:
            return k
    return None


def draw_help(scene_width, height):
    """The F1 overlay, centred on the scene. Returns its rectangle (x0, y0, x1, y1),
    top-left origin, or None when closed by its button (caller toggles)."""
    imgui.set_next_window_pos((scene_width * 0.5, height * 0.5), imgui.Cond_.always, (0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.92)
    flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
             | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_move)
    imgui.begin("Help (F1)", None, flags)
    closed = False
    table = imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_h
    if imgui.begin_table("keys", 2, table):
        imgui.table_setup_column("Key", imgui.TableColumnFlags_.width_fixed)
        imgui.table_setup_column("Action")
        imgui.table_headers_row()
        for k in all_keys():
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(k.label)
            imgui.table_next_column()
            imgui.text(k.text)
        imgui.end_table()
    imgui.spacing()
    if imgui.begin_table("mouse", 2, table):
        imgui.table_setup_column("Mouse", imgui.TableColumnFlags_.width_fixed)
        imgui.table_setup_column("Action")
        imgui.table_headers_row()
        for gesture, text in MOUSE:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(gesture)
            imgui.table_next_column()
            imgui.text(text)
        imgui.end_table()
    imgui.spacing()
    imgui.text_disabled("Hover over any parameter in the panel for its meaning and units.")
    if imgui.button("Close"):
        closed = True
    pos, size = imgui.get_window_pos(), imgui.get_window_size()
    imgui.end()
    return None if closed else (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
