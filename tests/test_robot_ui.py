"""Robots in the window (ui/robot.py), driven like a user: the Robot section's joint
sliders and torques, Home, the gripper's button and key O, Ctrl+drag on the arm moving
its tip target while the arm follows."""
from pathlib import Path

import numpy as np
import pytest

from test_ui import click, drag, frame, key, reveal, screen_point, widget_point

SCENES = Path(__file__).resolve().parent.parent / "scenes"
W, H = 1280, 800


@pytest.fixture(scope="module")
def pick():
    import pyglet
    pyglet.options["dpi_scaling"] = "stretch"
    import physics
    from shell.window import ViewerWindow
    w = ViewerWindow(physics.load_scene(SCENES / "xarm_pick.toml"), "xarm_pick.toml", width=W, height=H)
    w.driver.paused = True
    frame(w)
    yield w
    if not w.closed:
        w.close()


def test_the_robot_section_has_a_slider_per_joint_home_and_the_gripper(pick):
    arm = pick.world.robots["xarm"].arm
    reveal(pick, "robot.xarm.joint6")
    assert all(f"robot.xarm.{j}" in pick.panel.w.rects for j in arm.names)
    assert {"robot.xarm.home", "robot.xarm.gripper"} <= set(pick.panel.w.rects)
    # the slider drags joint 1's servo target; the program stops
    start = widget_point(pick, "robot.xarm.joint1", 0.5)
    drag(pick, start, (start[0] + 40, start[1]))
    assert arm.program is None and arm.target is None
    assert arm.joints[0].motor["target"] > 0.05
    reveal(pick, "robot.xarm.home")
    click(pick, widget_point(pick, "robot.xarm.home"))
    assert np.allclose([j.motor["target"] for j in arm.joints], arm.home_q)


def test_key_o_and_the_button_open_and_close_the_gripper(pick):
    from pyglet.window import key as k
    arm = pick.world.robots["xarm"].arm
    drive = pick.world.joint("xarm/drive_joint")
    arm.gripper(open=True)
    click(pick, (40, H - 40))                 # on the scene's sky: the panel lets go of the keyboard
    key(pick, k.O)
    assert arm.gripper_closed_now and drive.motor["target"] == pytest.approx(arm.gripper_closed)
    reveal(pick, "robot.xarm.gripper")
    click(pick, widget_point(pick, "robot.xarm.gripper"))
    assert not arm.gripper_closed_now
    pick.world.advance(0.5)                 # it opens at the drive joint's velocity limit, 2 rad/s
    assert drive.motor["target"] == pytest.approx(arm.gripper_open)


def test_ctrl_drag_on_the_arm_moves_its_tip_target_and_the_arm_follows(pick):
    from pyglet.window import key as k
    arm = pick.world.robots["xarm"].arm
    pick.world.reset()
    arm.home()
    pick.driver.paused = False
    pick.camera.look(np.array([0.3, -1.2, 0.5]), np.array([0.3, 0.0, 0.35]))   # looking along +y
    frame(pick)
    tip = arm.tip_pose()[0]
    start = screen_point(pick, pick.world.body("xarm/link6").position)
    end = (start[0] + 60, start[1] + 60)                      # to the right and up: +x, +z

    def physics():
        pick.driver.update(0.05)

    drag(pick, start, end, steps=6, modifiers=k.MOD_CTRL, between=physics, hold=20)
    assert pick.world.grab_info is None                        # no spring: the arm was moved
    moved = arm.target - tip
    assert moved[0] > 0.03 and moved[2] > 0.03 and abs(moved[1]) < 0.05
    # the arm followed: most of the way there 1 s after the drag (its speed is capped)
    went = arm.tip_pose()[0] - tip
    assert went @ moved > 0.8 * (moved @ moved) and np.linalg.norm(arm.tip_pose()[0] - arm.target) < 0.03
