"""Fixed-step frame driver: physics in step with wall time (the viewer's data flow).

Each frame adds the elapsed wall time (scaled by `speed`, e.g. 0.01 for slow motion)
to an accumulator and runs as many whole Δt steps as it holds, at most
`max_steps_per_frame`. When the machine can't keep up, the surplus is dropped and
`behind` is set, so the simulation slows down instead of spiralling.
"""
from physics.world import SimulationBlowUp


class FrameDriver:
    def __init__(self, world, max_steps_per_frame=32, speed=1.0):
        self.world = world
        self.max_steps_per_frame = int(max_steps_per_frame)
        self.speed = float(speed)
        self.accumulator = 0.0    # simulated seconds not yet stepped
        self.paused = False
        self.behind = False       # the last frame hit the cap and dropped time
        self.error = None         # the SimulationBlowUp that paused the driver, if any
        self.limit = None         # callable → most steps this frame (video: stop at the next frame's time)

    def update(self, wall_elapsed):
        """Advance the world for `wall_elapsed` seconds of wall time; returns steps run."""
        if self.paused or self.error is not None:
            self.accumulator = 0.0
            return 0
        dt = self.world.dt
        self.accumulator += max(0.0, float(wall_elapsed)) * self.speed
        steps = int(self.accumulator / dt + 1e-9)
        self.behind = steps > self.max_steps_per_frame
        if self.behind:
            steps = self.max_steps_per_frame
            self.accumulator = 0.0
        else:
            self.accumulator -= steps * dt
        if self.limit is not None and steps > self.limit():
            steps = self.limit()       # the surplus is dropped: simulated time waits for the frame
            self.accumulator = 0.0
        if steps:
            try:
                self.world.advance_steps(steps)
            except SimulationBlowUp as e:
                self.error = e
                self.paused = True
        return steps

    def single_step(self):
        """One Δt now, paused or not (the viewer's → key)."""
        if self.error is None:
            try:
                self.world.step()
            except SimulationBlowUp as e:
                self.error = e
                self.paused = True

    def reset(self):
        self.world.reset()
        self.accumulator = 0.0
        self.error = None
