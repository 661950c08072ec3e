"""`--record`: one CSV row per step, in the columns of the public contract (DESIGN.md).

t; per body NAME.x y z qx qy qz qw vx vy vz wx wy wz; per joint NAME.q NAME.qd NAME.err;
then solver.iterations and solver.ms.
"""
import csv

BODY_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz")
JOINT_COLUMNS = ("q", "qd", "err")


class Recorder:
    def __init__(self, world, file):
        self.world = world
        self.writer = csv.writer(file, lineterminator="\n")

    def header(self):
        w = self.world
        cols = ["t"]
        cols += [f"{b.name}.{c}" for b in w.bodies for c in BODY_COLUMNS]
        cols += [f"{j.name}.{c}" for j in w.joints for c in JOINT_COLUMNS]
        cols += ["solver.iterations", "solver.ms"]
        self.writer.writerow(cols)
        return cols

    def row(self):
        w = self.world
        values = [w.time]
        for i in range(1, len(w.body_info)):
            values += list(w.body_pos[i]) + list(w.body_quat[i]) + list(w.body_vel[i]) + list(w.body_omega[i])
        for j in range(len(w.joint_info)):
            values += [w.joint_q[j, 0], w.joint_qd[j, 0], w.joint_err[j]]
        values += [w.stats.iterations, w.stats.solve_ms]
        self.writer.writerow([repr(float(v)) for v in values])
