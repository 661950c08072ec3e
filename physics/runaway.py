"""The runaway watch: a simulation running away where NaN and the kernels' speed bounds
do not catch it — energy that grows beyond what loads, motors, the mouse and the scene's
potential can supply, a free body shot out faster than anything in the scene could drive
it, a joint pulled apart (RunawayWatch; World runs it after each advance).
"""
import collections
import math

import numpy as np

from .integrate import body_summary
from .joint_rows import MOTOR_OFF
from .quat import q_rotate


def _bounding_radius(shape):
    """The distance (m) from a shape's centre to its farthest point (0 for a plane)."""
    kind = getattr(shape, "kind", None)
    if kind == "box":
        return float(np.linalg.norm(shape.half_extents))
    if kind == "sphere":
        return float(shape.radius)
    if kind == "capsule":
        return float(shape.radius + shape.half_length)
    if kind == "cylinder":
        return float(math.hypot(shape.radius, shape.half_length))
    return 0.0


def _held(world):
    """Per body: True where a joint or a rope attachment holds it."""
    held = np.zeros(world.model.bodies.count, bool)
    held[world.model.joints.body.reshape(-1)] = True
    for rope in world.ropes.values():
        for at in rope.attachments.values():
            if at["body"] >= 0:
                held[at["body"]] = True
    held[0] = False
    return held


def _has_inputs(world):
    """Whether anything can put work in: scripted loads, body forces, motors, the mouse."""
    cb = world.control.bodies
    return bool(world.control.loads.count or world._grab is not None or cb.force.any() or cb.torque.any()
                or (world.control.joints.motor_mode != MOTOR_OFF).any() or world._events)


def _rope_speed(world):
    """The fastest rope node's speed (m/s), 0 without ropes."""
    return max((float(np.linalg.norm(r.state.node_vel, axis=1).max()) for r in world.ropes.values()), default=0.0)


class RunawayWatch:
    """Catches a simulation running away where NaN and the kernels' speed bounds do not,
    at the end of the first advance and then every PERIOD of simulated time (`World.check_runaway`
    forces a check: the CLI's at the end of a run). Three checks:

    - energy: D = E − 2W, E the total energy (World.energy: kinetic, gravitational, ropes)
      and W an upper bound of the work put in by loads, body forces, motors and the mouse
      spring, W += P·Δt with P = Σ |F|·|v| + |τ|·|ω| over loads and forces, F_max·|q̇| over
      motors, |F|·|v| of the spring, at the largest speeds sampled in the interval (while
      something can put work in, at the end of every advance: each step on the command
      line, each frame in the window); W counts twice (WORK_MARGIN) since a motion between
      two samples does work they do not show. No stable step raises D: a blow-up when it
      rose by more than START_FRACTION·S since the start, or by more than
      WINDOW_FRACTION·S over the last WINDOW seconds (a run whose W has grown large is
      still watched), plus SLACK. S, the energy the scene's motion involves, is
      Σ m|g|(h − h_low) (h: height against gravity; h_low: the ground plane's, else the
      lowest body's minus the scene's size) plus the largest kinetic energy seen so far;
      the window's fraction leaves room for the energy a soft penalty spring holds;
    - speed: a body that no joint or rope holds, moving faster than SPEED_FACTOR times the
      fastest anything could drive it — the fastest body or rope node at the start, a fall
      from the highest one's height down to this body's, a held body's point now (|v| +
      |ω|·r), at least MIN_SPEED — plus √(2W/m) (what loads, motors and the mouse can
      have given it alone). Two bodies colliding with e ≤ 1 give the lighter at most 3×
      the heavier's speed, at the height where they collide: a body rising after such a
      collision (the small ball of a stacked drop) is also allowed the speed
      √(9·2g(h_top − h_low) − 2g(h − h_low)), 3× the fall to the lowest height less its climb;
    - joints: a joint's violation beyond GAP_FRACTION·L (≥ GAP_MIN; L the scene's size).

    Calibration (`python -m physics.bench.runaway --preset`: every shipped scene under
    each family, 20 s, rope_tow 60 s; `margins` keeps each check's largest share of its
    threshold): the default settings reach at most 0.015 of the window's threshold (the
    critical penalty chain 0.14), nothing of the start's, 0.31 of the speed bound (the
    stack's falling ball); the paper and critical presets come apart or pass the kernels'
    speed bounds on several scenes (README: each is stable on some). Issue 27's runaways: the stack with
    restitution 1 gains 13 % of S in 60 s; a box placed in the tower under penalty leaves
    at 3.4 × its speed reference."""
    PERIOD = 0.5            # s of simulated time between checks
    WINDOW = 5.0            # s
    START_FRACTION = 0.05
    WINDOW_FRACTION = 1.0
    SLACK = 0.01            # J
    SPEED_FACTOR = 3.0
    MIN_SPEED = 1.0         # m/s: resolving a small overlap may give this (1 mm in a step of 1 ms)
    WORK_MARGIN = 2.0       # W counted twice: speeds are sampled, a motion between samples is not
    GAP_FRACTION = 0.1
    GAP_MIN = 0.25          # m

    def __init__(self, world):
        mb, sb = world.model.bodies, world.state.bodies
        self.speed, self.spin = np.zeros(mb.count), np.zeros(mb.count)
        mass, kinetic, size = body_summary(sb.pos, sb.vel, sb.omega, mb.inv_mass, self.speed, self.spin)
        for rope in world.ropes.values():
            size = max(size, rope.total_length())
            kinetic += rope.kinetic_energy()
        size = max(size, 1.0)
        g = np.asarray(world.model.gravity, float)
        self.g = float(np.linalg.norm(g))
        self.down = g / self.g if self.g > 0.0 else np.zeros(3)
        self.radius = np.array([_bounding_radius(info.shape) for info in world.model.body_info])
        dynamic = mb.inv_mass > 0.0
        self.mass = np.where(dynamic, 1.0 / np.where(dynamic, mb.inv_mass, 1.0), 0.0)
        self.free = dynamic & ~_held(world)
        height = -(sb.pos @ self.down)
        nodes = [-(r.positions @ self.down) for r in world.ropes.values()]
        top = [height[dynamic].max()] if dynamic.any() else []
        low = [height[dynamic].min()] if dynamic.any() else []
        top += [h.max() for h in nodes]
        low += [h.min() for h in nodes]
        self.h_top = max(top) if top else 0.0
        h_low = (min(low) if low else 0.0) - size
        for i, info in enumerate(world.model.body_info):     # a ground plane below everything
            if i > 0 and mb.collide[i] and getattr(info.shape, "kind", None) == "plane" and low:
                normal = q_rotate(sb.quat[i], np.array([0.0, 0.0, 1.0]))
                if self.g > 0.0 and float(normal @ -self.down) > 0.99 and height[i] <= min(low) + 1e-9:
                    h_low = max(h_low, float(height[i]))
        self.h_low = h_low
        potential = float(np.sum(self.mass[dynamic] * self.g * np.maximum(height[dynamic] - h_low, 0.0)))
        potential += sum(r.mass * self.g * max(float(h.mean()) - h_low, 0.0) for r, h in zip(world.ropes.values(), nodes))
        self.potential = potential
        self.kinetic_max = kinetic
        self.v_start = max(float(np.max(self.speed + self.spin * self.radius, initial=0.0)), _rope_speed(world))
        self.energy0 = world.energy()
        self.gap_limit = max(self.GAP_MIN, self.GAP_FRACTION * size)
        self.work_in = 0.0
        self.rate = None                            # joints' largest |q̇| since the last check
        self.inputs = _has_inputs(world)            # loads, forces, motors or the mouse: sample speeds
        # the largest share of each check's threshold seen (1: flagged); physics.bench.runaway
        self.margins = {"start": 0.0, "window": 0.0, "speed": 0.0, "gap": 0.0}
        self.samples = collections.deque()          # (time, E − W) of the checks in the last WINDOW
        self.pending = 0.0                          # s since the last check
        self.first = True                           # the first advance is checked at its end

    def steps_to_check(self, dt):
        """Steps of dt until the next check is due (at least 1)."""
        return max(1, int(math.ceil((self.PERIOD - self.pending) / dt - 1e-9)))

    def tick(self, world, elapsed, sample=True, force=False):
        """Count `elapsed` simulated seconds; note the speeds now (for the work bound) with
        `sample` (World.advance_steps: at the end of each call, not of its chunks, which
        depend on the wall clock); every PERIOD (or now, if `force` and time passed since
        the last check), check (a reason string once the world has run away, else None)."""
        self.pending += elapsed
        due = (self.pending >= self.PERIOD - 1e-12 or (force and self.pending > 0.0)
               or (self.first and sample))
        if sample and not due and (self.inputs or world._grab is not None):  # no input: W is 0
            self._sample(world)
        if not due:
            return None
        elapsed, self.pending, self.first = self.pending, 0.0, False
        return self.check(world, elapsed)

    def _sample(self, world):
        """The largest body speeds and spins and motor rates since the last check."""
        sb, mb = world.state.bodies, world.model.bodies
        speed, spin = np.empty(mb.count), np.empty(mb.count)
        body_summary(sb.pos, sb.vel, sb.omega, mb.inv_mass, speed, spin)
        np.maximum(self.speed, speed, out=self.speed)
        np.maximum(self.spin, spin, out=self.spin)
        rate = np.abs(world.state.joints.qd[:, 0])
        self.rate = rate if self.rate is None or self.rate.shape != rate.shape else np.maximum(self.rate, rate)
        return speed, spin

    def check(self, world, elapsed):
        """A reason string once the world has run away, else None. `elapsed`: the
        simulated time (s) since the last check."""
        sb, mb = world.state.bodies, world.model.bodies
        speed, spin = self._sample(world)
        kinetic = float(0.5 * np.sum(self.mass * speed * speed))
        kinetic += sum(r.kinetic_energy() for r in world.ropes.values())
        # the largest speeds sampled in the interval (and its ends), every load active in it
        self.work_in += self.power_bound(world, world.time - elapsed, self.speed, self.spin, self.rate) * elapsed
        self.inputs = _has_inputs(world)
        self.speed, self.spin, self.rate = speed, spin, None
        self.kinetic_max = max(self.kinetic_max, kinetic)
        gap = world.max_constraint_error()
        self._margin("gap", gap / self.gap_limit)
        if gap > self.gap_limit:
            return f"a joint came apart by {gap:.3g} m (more than {self.gap_limit:.3g} m)"
        names = world.model.body_info
        if self.free.any():
            held = ~self.free & (mb.inv_mass > 0.0)
            v_held = max(float(np.max((speed + spin * self.radius)[held], initial=0.0)), _rope_speed(world))
            fall = np.sqrt(2.0 * self.g * np.maximum(self.h_top + sb.pos @ self.down, 0.0))
            v_ref = np.maximum(np.maximum(fall, max(self.v_start, v_held)), self.MIN_SPEED)
            climb = np.maximum(-(sb.pos @ self.down) - self.h_low, 0.0)
            bounced = np.sqrt(np.maximum(self.SPEED_FACTOR ** 2 * 2.0 * self.g * max(self.h_top - self.h_low, 0.0)
                                         - 2.0 * self.g * climb, 0.0))
            bound = np.maximum(self.SPEED_FACTOR * v_ref, bounced) + np.sqrt(2.0 * self.work_in / np.where(self.free, self.mass, 1.0))
            self._margin("speed", float(np.max(np.where(self.free, speed / bound, 0.0))))
            over = np.flatnonzero(self.free & (speed > bound))
            if len(over):
                i = int(over[np.argmax(speed[over] / bound[over])])
                return (f"body {names[i].name!r} moves at {speed[i]:.3g} m/s, faster than anything in the scene "
                        f"could drive it (at most {bound[i]:.3g} m/s: {self.SPEED_FACTOR:g}x the fastest start, "
                        "fall or held body, plus what loads, motors and the mouse put in)")
        energy = world.energy()
        drift = energy - self.WORK_MARGIN * self.work_in
        scale = self.potential + self.kinetic_max
        while self.samples and self.samples[0][0] < world.time - self.WINDOW:
            self.samples.popleft()
        low = min((d for _, d in self.samples), default=drift)
        self.samples.append((world.time, drift))
        culprit = int(np.argmax(self.mass * speed * speed)) if mb.count else 0
        who = (f"; the fastest, body {names[culprit].name!r}, moves at {speed[culprit]:.3g} m/s"
               if speed[culprit] > 0.0 else "")
        if not math.isfinite(energy):
            return f"the energy became {energy}{who}"
        self._margin("start", (drift - self.energy0) / (self.START_FRACTION * scale + self.SLACK))
        self._margin("window", (drift - low) / (self.WINDOW_FRACTION * scale + self.SLACK))
        if drift - (self.energy0) > self.START_FRACTION * scale + self.SLACK:
            return (f"energy grew from {self.energy0:.4g} J to {energy:.4g} J, more than the "
                    f"{self.WORK_MARGIN * self.work_in:.3g} J that loads, forces, motors and the mouse can have put "
                    f"in (and {self.START_FRACTION:g} of the {scale:.3g} J the scene's motion involves){who}")
        if drift - low > self.WINDOW_FRACTION * scale + self.SLACK:
            return (f"energy grew by {drift - low:.4g} J within {self.WINDOW:g} s beyond what loads, forces, motors "
                    f"and the mouse can have put in (more than the {scale:.3g} J the scene's motion involves){who}")
        return None

    def _margin(self, check, share):
        self.margins[check] = max(self.margins[check], share)

    @staticmethod
    def power_bound(world, since, speed, spin, rate=None):
        """An upper bound of the power (W) that loads (active since `since`, s), forces,
        motors and the spring put in, given each body's largest speed and spin and each
        joint's largest rate (default: its rate now)."""
        cb, loads = world.control.bodies, world.control.loads
        p = 0.0
        if cb.force.any() or cb.torque.any():
            p += float(np.sum(np.linalg.norm(cb.force, axis=1) * speed + np.linalg.norm(cb.torque, axis=1) * spin))
        if loads.count:
            on = (loads.window[:, 0] <= world.time) & (since < loads.window[:, 1])
            i = loads.body[on]
            arm = np.linalg.norm(loads.point[on], axis=1)
            f = np.linalg.norm(loads.force[on], axis=1)
            p += float(np.sum(f * (speed[i] + spin[i] * arm) + np.linalg.norm(loads.torque[on], axis=1) * spin[i]))
        motors = world.control.joints.motor_mode != MOTOR_OFF
        if motors.any():
            rate = np.abs(world.state.joints.qd[:, 0]) if rate is None or rate.shape != motors.shape else rate
            p += float(np.sum(world.model.joints.motor_max[motors] * rate[motors]))
        grab = world._grab          # the spring's force is bounded (World.grab): use the bound
        if grab is not None and "body" in grab:
            i = grab["body"]
            f_max = grab["max_accel"] / world.model.bodies.inv_mass[i]
            p += float(f_max * (speed[i] + spin[i] * np.linalg.norm(grab["local"])))
        elif grab is not None:
            node_speed = np.linalg.norm(world.ropes[grab["rope"]].state.node_vel, axis=1).max()
            p += float(grab["max_force"] * node_speed)
        return p
