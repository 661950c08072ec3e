"""Drawn over the 3D view with ImGui: the drag spring, the selected body's outline,
and the blow-up dialog (a message and a reset button)."""
import numpy as np
from imgui_bundle import imgui

from physics.quat import q_rotate
from .picking import BOX_EDGES, bounding_corners

SPRING = imgui.IM_COL32(255, 215, 60, 255)
SPRING_END = imgui.IM_COL32(255, 120, 40, 255)
HIGHLIGHT = imgui.IM_COL32(90, 220, 255, 255)


class Projector:
    """World point → window point (top-left origin) for a camera over the scene area."""

    def __init__(self, camera, width, height):
        self.w, self.h = width, height
        self.m = camera.view_proj(width / max(height, 1))

    def __call__(self, p):
        c = self.m @ np.append(np.asarray(p, float), 1.0)
        if c[3] <= 1e-6:
            return None
        return ((c[0] / c[3]) * 0.5 + 0.5) * self.w, (1.0 - ((c[1] / c[3]) * 0.5 + 0.5)) * self.h


def draw_spring(draw_list, project, grab):
    """The line from the grabbed point to the cursor's target."""
    if grab is None:
        return
    a, b = project(grab["point"]), project(grab["target"])
    if a is None or b is None:
        return
    draw_list.add_line(imgui.ImVec2(*a), imgui.ImVec2(*b), SPRING, 2.5)
    draw_list.add_circle_filled(imgui.ImVec2(*a), 4.5, SPRING_END)
    draw_list.add_circle(imgui.ImVec2(*b), 6.0, SPRING, 0, 2.0)


def draw_outline(draw_list, project, shape, position, orientation, label=None):
    """The selected body's bounding box, as lines, and its name."""
    corners = bounding_corners(shape)
    if corners is None:
        return
    pts = [project(np.asarray(position) + q_rotate(np.asarray(orientation), c * 1.04)) for c in corners]
    for a, b in BOX_EDGES:
        if pts[a] is not None and pts[b] is not None:
            draw_list.add_line(imgui.ImVec2(*pts[a]), imgui.ImVec2(*pts[b]), HIGHLIGHT, 1.5)
    top = [p for p in pts if p is not None]
    if label and top:
        x = min(p[0] for p in top)
        y = min(p[1] for p in top) - 18
        draw_list.add_text(imgui.ImVec2(x, y), HIGHLIGHT, label)


GHOST_FILL = imgui.IM_COL32(120, 200, 255, 80)
GHOST_EDGE = imgui.IM_COL32(150, 215, 255, 190)


def _hull(points):
    """Convex hull (counter-clockwise in screen coordinates) of 2-D points."""
    pts = sorted(set(points))
    if len(pts) < 3:
        return pts

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def draw_ghost(draw_list, project, world):
    """Compare mode: the ghost world's moving bodies as translucent boxes (their bounding
    boxes, filled and outlined) and its ropes as translucent lines."""
    sb = world.state.bodies
    inv_mass = world.model.bodies.inv_mass
    for i, info in enumerate(world.body_info):
        if i == 0 or inv_mass[i] == 0.0:
            continue
        corners = bounding_corners(info.shape)
        if corners is None:
            continue
        pts = [project(sb.pos[i] + q_rotate(sb.quat[i], c)) for c in corners]
        if any(p is None for p in pts):
            continue
        hull = _hull([(float(p[0]), float(p[1])) for p in pts])
        if len(hull) >= 3:
            draw_list.add_convex_poly_filled([imgui.ImVec2(*p) for p in hull], GHOST_FILL)
        for a, b in BOX_EDGES:
            draw_list.add_line(imgui.ImVec2(*pts[a]), imgui.ImVec2(*pts[b]), GHOST_EDGE, 1.0)
    for rope in world.ropes.values():
        pts = [project(p) for p in rope.positions]
        for a, b in zip(pts[:-1], pts[1:]):
            if a is not None and b is not None:
                draw_list.add_line(imgui.ImVec2(*a), imgui.ImVec2(*b), GHOST_EDGE, 3.0)


def draw_blowup(error, scene_width, height):
    """A dialog over the scene after a blow-up. Returns 'reset' when its button is pressed,
    and the dialog's rectangle."""
    imgui.set_next_window_pos((scene_width * 0.5, height * 0.35), imgui.Cond_.always, (0.5, 0.5))
    flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
             | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_move)
    imgui.push_style_color(imgui.Col_.title_bg_active, imgui.ImVec4(0.6, 0.12, 0.1, 1.0))
    imgui.push_style_color(imgui.Col_.title_bg, imgui.ImVec4(0.6, 0.12, 0.1, 1.0))
    imgui.begin("The simulation blew up", None, flags)
    imgui.text(str(error))
    imgui.text("It is paused. Reset, then try a smaller Δt, more substeps or iterations,")
    imgui.text("the stiff penalty preset, or the impulse solver.")
    action = "reset" if imgui.button("Reset (Backspace)") else None
    pos, size = imgui.get_window_pos(), imgui.get_window_size()
    imgui.end()
    imgui.pop_style_color(2)
    return action, (pos.x, pos.y, pos.x + size.x, pos.y + size.y)


LOADING_TEXT = imgui.ImVec4(0.95, 0.96, 0.98, 1.0)


def draw_loading(progress, width, height):
    """The first-launch message, centred in the window: its title (e.g. "Compiling
    physics kernels (first run only)…"), a progress bar with the elapsed time, and what
    runs now. Returns the box's rectangle (x0, y0, x1, y1), top-left origin."""
    imgui.set_next_window_pos((width * 0.5, height * 0.5), imgui.Cond_.always, (0.5, 0.5))
    imgui.set_next_window_size((min(560.0, width - 40.0), 0.0), imgui.Cond_.always)
    flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_move
             | imgui.WindowFlags_.no_inputs | imgui.WindowFlags_.always_auto_resize)
    imgui.begin("Loading", None, flags)
    imgui.push_font(None, imgui.get_font_size() * 1.5)
    imgui.text_colored(LOADING_TEXT, progress.title)
    imgui.pop_font()
    imgui.spacing()
    if progress.detail != "":
        imgui.progress_bar(float(min(max(progress.fraction, 0.0), 1.0)), imgui.ImVec2(-1.0, 0.0),
                           f"{progress.fraction * 100:.0f} %   {progress.elapsed:.0f} s")
        imgui.text_disabled(progress.detail)
        imgui.text_disabled("This happens once: later launches start in a few seconds.")
    pos, size = imgui.get_window_pos(), imgui.get_window_size()
    imgui.end()
    return (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
