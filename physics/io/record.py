"""`--record`: one CSV row per step, in the columns of the public contract (README.md, Headless use).

    t
    per body (creation order, not the world): NAME.x NAME.y NAME.z  NAME.qx NAME.qy NAME.qz NAME.qw
        NAME.vx NAME.vy NAME.vz  NAME.wx NAME.wy NAME.wz      (world frame; m, m/s, rad/s)
    per joint (creation order): NAME.q NAME.qd NAME.err       (Joint.angle, Joint.rate, Joint.error)
    per rope: NAME.length NAME.stretch                        (current total length m, largest
                                                               relative segment stretch)
    solver.iterations solver.ms                               (world.stats)

Floats are written with repr precision (they read back bit for bit), iterations as an
integer.

    with open("run.csv", "w", newline="") as f, Recorder(world, f) as rec:
        rec.header()
        for _ in range(n):
            world.step()
            rec.row()
"""
import csv

BODY_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz")
JOINT_COLUMNS = ("q", "qd", "err")
ROPE_COLUMNS = ("length", "stretch")
SOLVER_COLUMNS = ("solver.iterations", "solver.ms")


def columns(world):
    """The CSV header for `world`, in order."""
    cols = ["t"]
    cols += [f"{b.name}.{c}" for b in world.bodies for c in BODY_COLUMNS]
    cols += [f"{j.name}.{c}" for j in world.joints for c in JOINT_COLUMNS]
    cols += [f"{name}.{c}" for name in world.ropes for c in ROPE_COLUMNS]
    return cols + list(SOLVER_COLUMNS)


class Recorder:
    """Writes the header and one row per call to `row()` (the world's current state)."""

    def __init__(self, world, file):
        self.world = world
        self.file = file
        self.writer = csv.writer(file, lineterminator="\n")
        self.rows = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.flush()
        return False

    def header(self):
        cols = columns(self.world)
        self.writer.writerow(cols)
        return cols

    def values(self):
        """The current row as Python numbers (read-only views of the world's arrays)."""
        w = self.world
        n = len(w.body_info)
        sb = w.state.bodies
        state = [sb.pos[1:n], sb.quat[1:n], sb.vel[1:n], sb.omega[1:n]]
        values = [float(w.time)]
        for i in range(n - 1):
            for arr in state:
                values.extend(float(v) for v in arr[i])
        m, sj = len(w.joint_info), w.state.joints
        for j in range(m):
            values += [float(sj.q[j, 0]), float(sj.qd[j, 0]), float(sj.err[j])]
        for rope in w.ropes.values():
            values += [rope.total_length(), rope.max_stretch()]
        values += [int(w.stats.iterations), float(w.stats.solve_ms)]
        return values

    def row(self):
        self.writer.writerow([repr(v) for v in self.values()])
        self.rows += 1
