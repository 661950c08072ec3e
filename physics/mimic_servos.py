"""MimicServos: a robot's mimic joints under a solver family that does not honour coupling
rows (World.unhonoured names them; the panel shows it).

A URDF <mimic> joint follows its leader through a coupling row, q_f = m·q_l + o
(World.add_coupling: exact in the families whose HONOURS has "couplings"). Under another
family the row is not solved, and a follower would hang limp; this World controller then
makes each follower a position servo on m·q_l + o (within the follower's limits; the
robot's servo settings, limited to its effort), q_l the leader's servo target while the
leader tracks it, else where the leader is (a gripper stalled on an object: the fingers
stay parallel; a target that moves with the leader's measured jitter can shake an arm
held at a joint stop), and turns those servos off again when the
family changes back, so that a live switch keeps the robot working either way.
"""
import math

from .joint_rows import MOTOR_OFF, MOTOR_POSITION

LEAD = 0.05     # rad or m: how far a follower's q_l may be from where its leader is


class MimicServos:
    """Stand-in servos for a robot's mimic followers (module docstring), ticked every
    `period` s by World.add_controller."""

    def __init__(self, world, robot, period=0.01):
        self.world, self.robot, self.period = world, robot, float(period)
        self.followers = [(world.joint(robot.joints[f]).index, world.joint(robot.joints[lead]).index, m, o, f)
                          for f, (lead, m, o) in robot.mimic.items()]
        mj = world.model.joints                             # targets within the follower's limits
        self.lo = [mj.limit_lo[f, 0] if mj.limit_on[f, 0] else -math.inf for f, *_ in self.followers]
        self.hi = [mj.limit_hi[f, 0] if mj.limit_on[f, 0] else math.inf for f, *_ in self.followers]
        self.driven = [f for f, *_ in self.followers]      # motors it sets (World.restore_state restores them)

    def update(self, world=None):
        """One tick: the followers' servos on, at m·q_l + o, or off under couplings."""
        w, robot = self.world, self.robot
        c = w.control.joints
        if "couplings" in w.active_solver.HONOURS:
            for f, _, _, _, name in self.followers:
                if c.motor_mode[f] != MOTOR_OFF:
                    w.joint(robot.joints[name]).set_motor("off")
            return
        w._ensure_rows()
        q = w.state.joints.q
        for (f, lead, m, o, name), lo, hi in zip(self.followers, self.lo, self.hi):
            at = q[lead, 0]
            if c.motor_mode[lead] == MOTOR_POSITION:    # its servo's target, within LEAD of where it is
                at = min(max(c.motor_target[lead], at - LEAD), at + LEAD)
            target = min(max(m * at + o, lo), hi)
            if c.motor_mode[f] == MOTOR_POSITION:
                c.motor_target[f] = target
                continue
            per = robot.servo_joint.get(name, {})
            w.joint(robot.joints[name]).set_motor("position", target, max_force=robot.effort[name],
                                                 frequency=per.get("frequency", robot.servo["frequency"]),
                                                 damping=per.get("damping", robot.servo["damping"]))
