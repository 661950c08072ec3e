"""Robots in the window: the Robot section of the panel, the tip target's gizmo, and
Ctrl+drag on a robot that moves its tip target (physics/arm_control.py's Arm).

Everything goes through the robot's Arm (world.robots[NAME].arm): its joints, limits,
targets, gripper and torques; nothing here knows a solver family or a robot model.
"""
import math

import numpy as np
from imgui_bundle import imgui

from .params import Param
from .widgets import MUTED, WARNING

TARGET = imgui.IM_COL32(255, 80, 200, 255)
AXES = (imgui.IM_COL32(235, 70, 60, 255), imgui.IM_COL32(80, 210, 90, 255), imgui.IM_COL32(70, 130, 255, 255))
GIZMO = 0.05            # m: the gizmo's axes
NEAR_LIMIT = 0.9        # a torque above this share of its effort limit shows in the warning colour


def arms(world):
    """{robot name: Arm} of the robots that have one."""
    return {name: r.arm for name, r in getattr(world, "robots", {}).items() if r.arm is not None}


def joint_params(name, arm):
    """A slider per joint of the arm: its servo target (degrees, or m on a prismatic joint)."""
    out = []
    for k, jname in enumerate(arm.names):
        rev = bool(arm.revolute[k])
        scale = 180.0 / math.pi if rev else 1.0
        lo = arm.lo[k] if math.isfinite(arm.lo[k]) else -math.pi
        hi = arm.hi[k] if math.isfinite(arm.hi[k]) else math.pi

        def get(k=k, scale=scale):
            return arm.joints[k].motor["target"] * scale

        def set_(v, k=k, scale=scale):
            q = np.array([j.motor["target"] for j in arm.joints])
            q[k] = v / scale
            arm.set_joint_targets(q)

        out.append(Param(f"robot.{name}.{jname}", jname, f"{jname}: its servo's target (the arm's Cartesian "
                         "target and program stop while you set joints).", get, set_, lo * scale, hi * scale,
                         kind="slider", fmt="%.1f°" if rev else "%.3f m"))
    return out


def draw_robots(widgets, world):
    """The Robot section: per arm, joint sliders, Home, the gripper, torques against limits."""
    for name, arm in arms(world).items():
        imgui.push_id(f"robot.{name}")
        x = arm.tip_pose()[0]
        state = "program" if arm.program is not None else ("target" if arm.target is not None else "joints")
        imgui.text(f"{name}: tip ({x[0]:.3f}, {x[1]:.3f}, {x[2]:.3f}) m, following its {state}")
        if arm.target is not None:
            imgui.same_line()
            imgui.text_disabled(f"miss {1000 * np.linalg.norm(arm.target - x):.1f} mm")
        if widgets.button(f"robot.{name}.home", "Home", "Back to the initial joint positions (stops the program)."):
            arm.home()
        if arm.gripper_joint is not None:
            imgui.same_line()
            closed = arm.gripper_closed_now
            if widgets.button(f"robot.{name}.gripper", "Open gripper" if closed else "Close gripper",
                              "Open or close the gripper (key O)."):
                arm.gripper(open=closed)
        imgui.same_line()
        imgui.text_disabled("Ctrl+drag the robot: move its tip")
        torques = arm.torques()
        for p, jname in zip(joint_params(name, arm), arm.names):
            widgets.param(p, width=150)
            tau, limit = torques[jname]
            imgui.same_line(260)
            unit = "N·m" if arm.revolute[arm.names.index(jname)] else "N"
            color = WARNING if limit > 0 and tau > NEAR_LIMIT * limit else MUTED
            imgui.text_colored(color, f"{tau:6.1f} / {limit:g} {unit}")
            widgets.tooltip(f"{jname}: the servo's torque now against its effort limit")
        imgui.pop_id()
        imgui.separator()


def toggle_gripper(world):
    """Key O: open the closed grippers, close the open ones. Returns how many."""
    n = 0
    for arm in arms(world).values():
        if arm.gripper_joint is not None:
            arm.gripper(open=arm.gripper_closed_now)
            n += 1
    return n


def draw_targets(draw_list, project, world):
    """Each arm's tip target: a small frame (its rotation, or the world's axes), a ring,
    and a line from the tip to it."""
    for arm in arms(world).values():
        if arm.target is None:
            continue
        c = project(arm.target)
        tip = project(arm.tip_pose()[0])
        if c is None:
            continue
        R = arm.target_rotation if arm.target_rotation is not None else np.eye(3)
        for k in range(3):
            e = project(arm.target + GIZMO * R[:, k])
            if e is not None:
                draw_list.add_line(imgui.ImVec2(*c), imgui.ImVec2(*e), AXES[k], 2.0)
        draw_list.add_circle(imgui.ImVec2(*c), 7.0, TARGET, 0, 2.0)
        if tip is not None:
            draw_list.add_line(imgui.ImVec2(*tip), imgui.ImVec2(*c), TARGET, 1.0)


class TipDrag:
    """Ctrl+drag on a robot's link: its arm's tip target follows the cursor in the plane
    through the tip facing the camera (the tip frame's orientation is kept)."""

    def __init__(self, mouse_drag):
        self.md = mouse_drag        # ui/drag.MouseDrag: rays, picking, the camera
        self.arm = None
        self.plane_point = None

    @property
    def active(self):
        return self.arm is not None

    def press(self, world, x, y):
        """Start if (x, y) is on a link of a robot with an arm; returns the body index or None."""
        found = self.md.hit(world, x, y)
        if found is None:
            return None
        name = world.body_info[found[0]].name
        for arm in arms(world).values():
            if name in arm.robot.bodies.values():
                self.arm = arm
                tip, R = arm.tip_pose()
                self.rotation = arm.target_rotation if arm.target_rotation is not None else R
                self.plane_point = tip
                arm.set_target(tip, self.rotation)
                return found[0]
        return None

    def move(self, x, y):
        if self.arm is None:
            return
        origin, d = self.md.ray(x, y)
        n = self.md._forward()
        denom = float(np.dot(d, n))
        if abs(denom) < 1e-9:
            return
        t = float(np.dot(self.plane_point - origin, n)) / denom
        if t > 0:
            self.arm.set_target(origin + t * d, self.rotation)

    def release(self):
        self.arm = None
