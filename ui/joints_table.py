"""The Joints section: one row per joint, live readouts and in-place edits, and an
editor for everything of the selected joint.

Angles show in degrees (the engine's radians converted at the Param), slides in
metres. Friction and motors act with both solver families (impulse: seed 001's
sequential impulses; penalty: bounded implicit rows); a family whose HONOURS lacks
them would be named in the table.
"""
import math

from imgui_bundle import imgui

from physics.world import Joint
from .params import Param, guarded
from .widgets import GOOD, MUTED, WARNING

DEG = 180.0 / math.pi
MOTOR_MODES = ("off", "velocity", "position")
FREE_DOFS = {"fixed": 0, "revolute": 1, "prismatic": 1, "universal": 2, "spherical": 2}


def num(value, decimals):
    """`value` with `decimals` decimals, never "-0.00"."""
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def _units(kind):
    """(scale from SI to shown, position unit, rate unit, friction unit)."""
    if kind == "prismatic":
        return 1.0, "m", "m/s", "N"
    return DEG, "°", "°/s", "N·m"


def limit_params(joint, dof):
    """(lo, hi) Params of one free DOF's limit, in shown units (None when it is off)."""
    scale, unit, _, _ = _units(joint.kind)
    cone = joint.kind == "spherical" and dof == 0
    lo_bound, hi_bound = ((-1e3, 1e3) if joint.kind == "prismatic" else (-360.0, 360.0))
    if joint.kind == "spherical":
        lo_bound, hi_bound = (-180.0, 180.0) if dof == 1 else (0.0, 180.0)
    what = {("universal", 1): "second axis ", ("spherical", 1): "twist "}.get((joint.kind, dof), "")

    def get(k):
        lim = joint.limit(dof)
        return math.nan if lim is None else lim[k] * scale

    def set_(k, v):
        lim = joint.limit(dof)
        lo, hi = (0.0, 0.0) if lim is None else lim
        if k == 0:
            lo = v / scale
        else:
            hi = v / scale
        joint.set_limit(lo, hi, dof=dof)

    hi_tip = ("cone half-angle: how far the twist axis may swing from its rest direction"
              if cone else f"upper {what}limit")
    lo = Param(f"joint.{joint.name}.limit{dof}.lo", f"{what}lower", f"Lower {what}limit ({unit}).",
               lambda: get(0), lambda v: set_(0, v), lo_bound, hi_bound, fmt="%.4g", unit=unit)
    hi = Param(f"joint.{joint.name}.limit{dof}.hi", "cone" if cone else f"{what}upper", f"{hi_tip.capitalize()} ({unit}).",
               lambda: get(1), lambda v: set_(1, v), lo_bound, hi_bound, fmt="%.4g", unit=unit)
    return lo, hi


def friction_param(joint):
    _, _, _, funit = _units(joint.kind)
    what = "force" if joint.kind == "prismatic" else "torque"

    def set_(v):
        joint.friction = v
    return Param(f"joint.{joint.name}.friction", "friction",
                 f"Maximum dry-friction {what} on the free axes ({funit}); the joint sticks while the "
                 f"{what} needed to hold it is below this (Coulomb, seed 001 eq. 15-16).",
                 lambda: joint.friction, set_, 0.0, 1e6, fmt="%.4g", unit=funit)


def damping_param(joint):
    _, unit, _, funit = _units(joint.kind)
    what = "force" if joint.kind == "prismatic" else "torque"

    def set_(v):
        joint.damping = v
    cunit = f"{funit}·s/{unit}" if joint.kind == "prismatic" else f"{funit}·s/rad"
    return Param(f"joint.{joint.name}.damping", "damping",
                 f"Viscous damping c on the free axes ({cunit}): a {what} −c·q' against the joint's motion.",
                 lambda: joint.damping, set_, 0.0, 1e6, fmt="%.4g", unit=cunit)


def motor_params(joint):
    """Params of a 1-DOF joint's motor: target, maximum force, frequency, damping."""
    scale, unit, rate_unit, funit = _units(joint.kind)

    def setm(**kw):
        m = joint.motor
        m.update(kw)
        joint.set_motor(m["mode"], m["target"], m["max_force"], m["frequency"], m["damping"])

    mode = joint.motor["mode"]
    tunit = rate_unit if mode == "velocity" else unit
    return (
        Param(f"joint.{joint.name}.motor.target", "target",
              f"Motor target ({tunit}): a speed in velocity mode, a position in position mode.",
              lambda: joint.motor["target"] * scale, lambda v: setm(target=v / scale), -1e6, 1e6,
              fmt="%.4g", unit=tunit),
        Param(f"joint.{joint.name}.motor.max", "max", f"The most the motor may push ({funit}).",
              lambda: joint.motor["max_force"], lambda v: setm(max_force=v), 0.0, 1e7, fmt="%.4g", unit=funit),
        Param(f"joint.{joint.name}.motor.frequency", "frequency",
              "Position servo: natural frequency of the soft servo spring (Hz).",
              lambda: joint.motor["frequency"], lambda v: setm(frequency=v), 0.01, 1000.0, fmt="%.4g", unit="Hz"),
        Param(f"joint.{joint.name}.motor.damping", "damping",
              "Position servo: damping ratio (1 = critical, no overshoot).",
              lambda: joint.motor["damping"], lambda v: setm(damping=v), 0.0, 100.0, fmt="%.3g"),
    )


def set_motor_mode(joint, mode):
    m = joint.motor
    joint.set_motor(mode, 0.0 if mode != m["mode"] else m["target"], m["max_force"], m["frequency"], m["damping"])


def state_text(world, joint):
    """'stick', 'slide', 'free', 'motor' or '—', and a tooltip."""
    if FREE_DOFS[joint.kind] == 0:
        return "—", "A fixed joint has no free axis."
    if "friction" not in world.active_solver.HONOURS:
        return "—", f"The {world.solver} solver does not act on joint friction or motors."
    if joint.motor["mode"] != "off":
        return "motor", "Driven by its motor."
    if joint.friction <= 0.0:
        return "free", "No friction on this joint."
    if joint.sliding:
        return "slide", "Sliding: the friction limit binds (Coulomb sliding)."
    return "stick", "Sticking: friction holds the joint still."


COLUMNS = (("Joint", 78), ("Type", 30), ("q", 44), ("q'", 46), ("lower", 48), ("upper", 48),
           ("friction", 48), ("state", 38), ("τ_f", 42), ("motor", 70), ("target", 48))
TYPE_SHORT = {"fixed": "fix", "spherical": "sph", "revolute": "rev", "universal": "uni", "prismatic": "pri"}
COLUMN_TIPS = {
    "Joint": "Joint name; click a row to select it (and highlight its body), or click a body in the scene.",
    "Type": "Joint type: rev(olute), pri(smatic), uni(versal), sph(erical), fix(ed).", "q": "Angle (°) or slide (m) of the first free axis; spherical: swing angle.",
    "q'": "Rate of the first free axis (°/s or m/s).",
    "lower": "Lower limit of the first free axis (° or m); empty when unlimited.",
    "upper": "Upper limit of the first free axis (° or m); spherical: the swing cone half-angle (°).",
    "friction": "Maximum friction torque (N·m) or force (N, prismatic).",
    "state": "stick / slide under friction, free without friction, motor when driven.",
    "τ_f": "Friction (or motor) torque (N·m) or force (N) applied in the last step.",
    "motor": "Motor mode (revolute and prismatic joints).",
    "target": "Motor target: °/s or m/s (velocity mode), ° or m (position mode).",
}


class JointsTable:
    def __init__(self, widgets, notices):
        self.w = widgets
        self.notices = notices
        self.scroll_to = None            # joint index to bring into view once

    def draw(self, world, selected, select):
        """Draw the table; `select(j)` is called when the user picks a row."""
        n = len(world.joint_info)
        if n == 0:
            imgui.text_disabled("This scene has no joints.")
            return
        flags = (imgui.TableFlags_.borders | imgui.TableFlags_.row_bg | imgui.TableFlags_.scroll_x
                 | imgui.TableFlags_.scroll_y | imgui.TableFlags_.sizing_fixed_fit)
        row_h = imgui.get_frame_height_with_spacing()
        height = min(n, 8) * row_h + row_h + 8
        if not imgui.begin_table("joints", len(COLUMNS), flags, (0, height)):
            return
        imgui.table_setup_scroll_freeze(1, 1)
        for name, width in COLUMNS:
            imgui.table_setup_column(name, imgui.TableColumnFlags_.width_fixed, width)
        imgui.table_next_row(imgui.TableRowFlags_.headers)
        for c, (name, _) in enumerate(COLUMNS):
            imgui.table_set_column_index(c)
            imgui.table_header(name)
            self.w.tooltip(COLUMN_TIPS[name])
        clipper = imgui.ListClipper()
        clipper.begin(n)
        if self.scroll_to is not None and self.scroll_to < n:
            clipper.include_item_by_index(self.scroll_to)
        while clipper.step():                  # only the rows in view (chains have thousands)
            for j in range(clipper.display_start, clipper.display_end):
                self._row(world, Joint(world, j), j == selected, select)
        imgui.end_table()

    def _row(self, world, joint, selected, select):
        j = joint.index
        imgui.table_next_row()
        imgui.table_next_column()
        imgui.push_id(j)
        sel_flags = imgui.SelectableFlags_.span_all_columns | imgui.SelectableFlags_.allow_overlap
        clicked, _ = imgui.selectable(joint.name, selected, sel_flags)
        self.w._remember(f"joint.{joint.name}.row")
        if clicked:
            select(j)
        if self.scroll_to == j:
            imgui.set_scroll_here_y(0.5)
            self.scroll_to = None
        scale, unit, rate_unit, funit = _units(joint.kind)
        dofs = FREE_DOFS[joint.kind]
        imgui.table_next_column()
        imgui.text(TYPE_SHORT.get(joint.kind, joint.kind))
        self.w.tooltip(joint.kind)
        imgui.table_next_column()
        imgui.text(num(joint.angle * scale, 1) if dofs else "—")
        imgui.table_next_column()
        imgui.text(num(joint.rate * scale, 2) if dofs else "—")
        for k in (0, 1):
            imgui.table_next_column()
            if dofs and joint.limit(0) is not None and not (joint.kind == "spherical" and k == 0):
                imgui.set_next_item_width(-1)
                self.w.param(limit_params(joint, 0)[k], label="")
            elif dofs and joint.kind == "spherical" and k == 0 and joint.limit(0) is not None:
                imgui.text_disabled("cone")
            else:
                imgui.text_disabled("none" if dofs else "—")
        imgui.table_next_column()
        if dofs:
            imgui.set_next_item_width(-1)
            self.w.param(friction_param(joint), label="")
        else:
            imgui.text_disabled("—")
        imgui.table_next_column()
        text, tip = state_text(world, joint)
        color = {"stick": GOOD, "slide": WARNING}.get(text, MUTED)
        imgui.text_colored(color, text)
        self.w.tooltip(tip)
        imgui.table_next_column()
        imgui.text(f"{joint.friction_torque:.2f}" if dofs and "friction" in world.active_solver.HONOURS else "—")
        imgui.table_next_column()
        if dofs == 1:
            changed, mode = self.w.combo(f"joint.{joint.name}.motor.mode", "", joint.motor["mode"], MOTOR_MODES,
                                         COLUMN_TIPS["motor"], width=-1)
            if changed:
                guarded(self.notices, f"{joint.name} motor", set_motor_mode, joint, mode)
            imgui.table_next_column()
            if joint.motor["mode"] != "off":
                imgui.set_next_item_width(-1)
                self.w.param(motor_params(joint)[0], label="")
            else:
                imgui.text_disabled("—")
        else:
            imgui.text_disabled("—")
            imgui.table_next_column()
            imgui.text_disabled("—")
        imgui.pop_id()

    def draw_details(self, world, j):
        """Everything editable of joint j: all limits, friction, damping, the motor."""
        if not world.joint_info:
            return
        if j is None or j >= len(world.joint_info):
            imgui.text_disabled("Select a joint (click its row, or its body in the scene).")
            return
        joint = Joint(world, j)
        info = world.joint_info[j]
        scale, unit, rate_unit, funit = _units(joint.kind)
        imgui.text(f"{joint.name}: {joint.kind}, {info.parent} - {info.child}")
        dofs = FREE_DOFS[joint.kind]
        if dofs:
            imgui.text(f"q = {num(joint.angle * scale, 3)} {unit}   q' = {num(joint.rate * scale, 3)} {rate_unit}   "
                       f"error = {joint.error:.2e}")
        for dof in range(dofs):
            lo_p, hi_p = limit_params(joint, dof)
            lim = joint.limit(dof)
            name = {("universal", 1): "second axis limit", ("spherical", 0): "swing cone",
                    ("spherical", 1): "twist limit"}.get((joint.kind, dof), "limit")
            changed, on = self.w.checkbox(f"joint.{joint.name}.limit{dof}.on", name, lim is not None,
                                          f"Limit the {name.replace(' limit', '')} ({unit}).")
            if changed:
                default = (0.0, 45.0 / DEG) if joint.kind == "spherical" and dof == 0 else (-45.0 / DEG, 45.0 / DEG)
                if joint.kind == "prismatic":
                    default = (-0.1, 0.1)
                bounds = default if on else (None, None)
                guarded(self.notices, f"{joint.name} {name}", joint.set_limit, *bounds, dof=dof)
            if lim is not None:
                imgui.same_line()
                if not (joint.kind == "spherical" and dof == 0):
                    self.w.param(lo_p, width=70)
                    imgui.same_line()
                self.w.param(hi_p, width=70)
        if dofs:
            for name, param in (("friction", friction_param(joint)), ("damping", damping_param(joint))):
                self.w.param(param, width=90)
                if name not in world.active_solver.HONOURS:
                    imgui.same_line()
                    imgui.text_disabled(f"(not acted on by {world.solver})")
        if dofs == 1:
            changed, mode = self.w.combo(f"joint.{joint.name}.motor.mode.details", "motor", joint.motor["mode"],
                                         MOTOR_MODES, "Motor mode: off, velocity (drive at a speed) or position "
                                                      "(a soft servo to an angle or slide).",
                                         width=110)
            if changed:
                guarded(self.notices, f"{joint.name} motor", set_motor_mode, joint, mode)
            if joint.motor["mode"] != "off":
                params = motor_params(joint)
                shown = params if joint.motor["mode"] == "position" else params[:2]
                for k, p in enumerate(shown):
                    if k % 2:
                        imgui.same_line()
                    self.w.param(p, width=80)
