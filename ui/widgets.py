"""ImGui widgets for Params: typed values commit on Enter or when the field loses
focus (never half-typed), sliders and toggles at once; every widget gets its tooltip
and leaves its screen rectangle in `rects` (tests click on widgets by key)."""
from imgui_bundle import imgui

from .params import apply

WARNING = imgui.ImVec4(1.0, 0.78, 0.25, 1.0)
ERROR = imgui.ImVec4(1.0, 0.4, 0.35, 1.0)
MUTED = imgui.ImVec4(0.65, 0.67, 0.7, 1.0)
GOOD = imgui.ImVec4(0.45, 0.85, 0.5, 1.0)


class Widgets:
    def __init__(self, notices):
        self.notices = notices
        self.pending = {}        # key → value typed but not committed yet
        self.rects = {}          # key → (x0, y0, x1, y1) of the widget's frame (no label), top-left origin
        self._frame_width = None

    def _remember(self, key):
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        w = self._frame_width
        self.rects[key] = (a.x, a.y, b.x if w is None else min(b.x, a.x + w), b.y)
        self._frame_width = None

    def _measure(self):
        """Call just before a labelled widget: its frame width (the label comes after it)."""
        self._frame_width = imgui.calc_item_width()

    @staticmethod
    def tooltip(text):
        imgui.set_item_tooltip(text)

    def param(self, p, label=None, width=None):
        """Draw the widget for Param `p`; returns True when a value was applied."""
        if label is None:
            label = f"{p.label} ({p.unit})" if p.unit else p.label
        wid = f"{label}##{p.key}"
        if width is not None:
            imgui.set_next_item_width(width)
        applied = False
        cur = p.get()
        self._measure()
        if p.kind in ("slider", "log_slider"):
            flags = imgui.SliderFlags_.logarithmic if p.kind == "log_slider" else 0
            changed, v = imgui.slider_float(wid, float(cur), float(p.lo), float(p.hi), p.fmt, flags)
            if changed:
                applied = apply(p, v, self.notices)
        else:
            if p.kind == "int":
                changed, v = imgui.input_int(wid, int(cur), 0, 0)
            else:
                changed, v = imgui.input_double(wid, float(cur), 0.0, 0.0, p.fmt)
            if changed:
                self.pending[p.key] = v
            if imgui.is_item_deactivated_after_edit() and p.key in self.pending:
                applied = apply(p, self.pending.pop(p.key), self.notices)
            elif imgui.is_item_deactivated():
                self.pending.pop(p.key, None)
        self._remember(p.key)
        self.tooltip(p.tooltip)
        return applied

    def checkbox(self, key, label, value, tooltip):
        changed, v = imgui.checkbox(f"{label}##{key}", bool(value))
        self._remember(key)
        self.tooltip(tooltip)
        return changed, v

    def combo(self, key, label, current, options, tooltip, width=None):
        """A choice among `options` (strings); returns (changed, chosen string)."""
        idx = options.index(current) if current in options else 0
        if width is not None:
            imgui.set_next_item_width(width)
        self._measure()
        changed, i = imgui.combo(f"{label}##{key}", idx, list(options))
        self._remember(key)
        self.tooltip(tooltip)
        return changed, options[i]

    def button(self, key, label, tooltip, size=None):
        pressed = imgui.button(f"{label}##{key}", size)
        self._remember(key)
        self.tooltip(tooltip)
        return pressed

    def readout(self, label, value, tooltip, color=None):
        if color is None:
            imgui.text(f"{label}: {value}")
        else:
            imgui.text_colored(color, f"{label}: {value}")
        self.tooltip(tooltip)
