"""ImGui (with ImPlot) on a pyglet window: contexts, input events, frames.

The window forwards its pyglet events here (methods of the window subclass, so no
handler stack can hide them from ImGui), then asks `captures_mouse()` /
`captures_keyboard()` before using them for the scene. ImGui reads input once per
frame: `begin_frame(dt)` … build widgets … `end_frame(fb_size)` draws.
"""
from pathlib import Path

import imgui_bundle
from imgui_bundle import imgui, implot
from pyglet.window import key, mouse

from .imgui_renderer import ImGuiRenderer


def _key_map():
    m = {key.TAB: imgui.Key.tab, key.BACKSPACE: imgui.Key.backspace, key.RETURN: imgui.Key.enter,
         key.ENTER: imgui.Key.enter, key.NUM_ENTER: imgui.Key.keypad_enter, key.ESCAPE: imgui.Key.escape,
         key.DELETE: imgui.Key.delete, key.INSERT: imgui.Key.insert, key.SPACE: imgui.Key.space,
         key.LEFT: imgui.Key.left_arrow, key.RIGHT: imgui.Key.right_arrow, key.UP: imgui.Key.up_arrow,
         key.DOWN: imgui.Key.down_arrow, key.PAGEUP: imgui.Key.page_up, key.PAGEDOWN: imgui.Key.page_down,
         key.HOME: imgui.Key.home, key.END: imgui.Key.end,
         key.LCTRL: imgui.Key.left_ctrl, key.RCTRL: imgui.Key.right_ctrl, key.LSHIFT: imgui.Key.left_shift,
         key.RSHIFT: imgui.Key.right_shift, key.LALT: imgui.Key.left_alt, key.RALT: imgui.Key.right_alt,
         key.MINUS: imgui.Key.minus, key.PERIOD: imgui.Key.period, key.NUM_DECIMAL: imgui.Key.keypad_decimal}
    for i in range(10):
        m[getattr(key, f"_{i}")] = getattr(imgui.Key, f"_{i}")
    for c in "ACVXYZ":                              # copy, paste, cut, select all, undo
        m[getattr(key, c)] = getattr(imgui.Key, c.lower())
    for i in range(1, 13):
        m[getattr(key, f"F{i}")] = getattr(imgui.Key, f"f{i}")
    return m


MODIFIER_KEYS = ((key.MOD_CTRL, imgui.Key.mod_ctrl, (key.LCTRL, key.RCTRL)),
                 (key.MOD_SHIFT, imgui.Key.mod_shift, (key.LSHIFT, key.RSHIFT)),
                 (key.MOD_ALT, imgui.Key.mod_alt, (key.LALT, key.RALT)))
MOUSE_BUTTONS = {mouse.LEFT: 0, mouse.RIGHT: 1, mouse.MIDDLE: 2}


class ImGuiLayer:
    """One ImGui + ImPlot context bound to one window and its moderngl context."""

    def __init__(self, window, ctx, font_scale=1.0):
        self.window = window
        self.context = imgui.create_context()       # (keeps another window's context current)
        self.plot_context = implot.create_context()
        self._activate()
        io = imgui.get_io()
        io.set_ini_filename(None)             # no imgui.ini litter
        io.config_error_recovery_enable_assert = False   # a failed panel frame is recovered, not fatal
        io.display_size = window.get_size()
        font = Path(imgui_bundle.__file__).parent / "assets" / "fonts" / "DroidSans.ttf"
        if font.exists():
            io.fonts.add_font_from_file_ttf(str(font), 15.0 * font_scale)
        imgui.style_colors_dark()
        style = imgui.get_style()
        style.window_rounding = 0.0
        style.frame_rounding = 2.0
        self.renderer = ImGuiRenderer(ctx)
        self.keys = _key_map()
        pio = imgui.get_platform_io()
        pio.platform_get_clipboard_text_fn = self._get_clipboard
        pio.platform_set_clipboard_text_fn = self._set_clipboard

    def _get_clipboard(self, _ctx):
        try:
            return self.window.get_clipboard_text() or ""
        except Exception:                        # no clipboard owner (e.g. a bare X server)
            return ""

    def _set_clipboard(self, _ctx, text):
        try:
            self.window.set_clipboard_text(text)
        except Exception:
            pass

    def _activate(self):
        imgui.set_current_context(self.context)
        implot.set_current_context(self.plot_context)

    # ------------------------------------------------------------------ events
    def _y(self, y):
        return self.window.height - y            # pyglet: y up; ImGui: y down

    def mouse_motion(self, x, y):
        self._activate()
        imgui.get_io().add_mouse_pos_event(float(x), float(self._y(y)))

    def mouse_button(self, x, y, button, down):
        self._activate()
        io = imgui.get_io()
        io.add_mouse_pos_event(float(x), float(self._y(y)))
        if button in MOUSE_BUTTONS:
            io.add_mouse_button_event(MOUSE_BUTTONS[button], down)

    def mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._activate()
        io = imgui.get_io()
        io.add_mouse_pos_event(float(x), float(self._y(y)))
        io.add_mouse_wheel_event(float(scroll_x), float(scroll_y))

    def key_event(self, symbol, modifiers, down):
        self._activate()
        io = imgui.get_io()
        for mod, k, symbols in MODIFIER_KEYS:
            io.add_key_event(k, down if symbol in symbols else bool(modifiers & mod))
        if symbol in self.keys:
            io.add_key_event(self.keys[symbol], down)

    def text(self, text):
        self._activate()
        io = imgui.get_io()
        for ch in text:
            if ch.isprintable():
                io.add_input_character(ord(ch))

    # ------------------------------------------------------------------ state
    def captures_mouse(self):
        self._activate()
        return imgui.get_io().want_capture_mouse

    def captures_keyboard(self):
        """True while ImGui edits text (then keys are not scene shortcuts)."""
        self._activate()
        io = imgui.get_io()
        return io.want_text_input or io.want_capture_keyboard

    # ------------------------------------------------------------------ frames
    def begin_frame(self, dt):
        self._activate()
        io = imgui.get_io()
        w, h = self.window.get_size()
        fw, fh = self.window.get_framebuffer_size()
        io.display_size = (float(w), float(h))
        io.display_framebuffer_scale = (fw / max(w, 1), fh / max(h, 1))
        io.delta_time = min(max(float(dt), 1e-4), 0.25)
        imgui.new_frame()

    def end_frame(self, fb_size):
        self._activate()
        imgui.render()
        self.renderer.render(imgui.get_draw_data(), fb_size)

    def shutdown(self):
        """Renderer first, then the contexts (stack.md: many windows in one process)."""
        self._activate()
        self.renderer.shutdown()
        implot.destroy_context(self.plot_context)
        imgui.destroy_context(self.context)
