"""A world as the frame driver sees it, stepped in slices with a hook after each: the
plots sample (plots.SampledWorld) and the timeline records (shell/history.py) this way.
Everything but stepping is the wrapped world's."""


class SlicedWorld:
    """`advance_steps(n)` runs the wrapped world in slices of `slice_steps()` steps and calls
    `after_slice()` after each (also after a slice that raised, if AFTER_ON_ERROR)."""
    AFTER_ON_ERROR = False

    def __init__(self, world):
        self.world = world

    def __getattr__(self, name):
        return getattr(self.world, name)

    def slice_steps(self):
        raise NotImplementedError

    def after_slice(self):
        raise NotImplementedError

    def advance_steps(self, n):
        while n > 0:
            k = min(n, self.slice_steps())
            if self.AFTER_ON_ERROR:
                try:
                    self.world.advance_steps(k)
                finally:
                    self.after_slice()
            else:
                self.world.advance_steps(k)
                self.after_slice()
            n -= k

    def step(self):
        self.advance_steps(1)

    def advance(self, duration):
        """Like World.advance, in slices."""
        n = int(round(float(duration) / self.world.dt))
        self.advance_steps(n)
        return n
