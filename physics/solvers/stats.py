"""What a solve did, in the same shape for every solver family."""
from dataclasses import dataclass, replace

import numpy as np


@dataclass
class SolverStats:
    """The last step's iterations, final residual (largest |Δp|, N·s), solve time (ms:
    the iterations only for `impulse`, the whole step for `penalty`) and whether the time
    cap cut it; over the last advance, how many steps the cap cut and how many ran. With
    the projection on (seed 004, projection.py), the last step's: largest violation |g_E|
    of the joints' equality rows before and after it (m or rad), and largest |ġ_E| = |J·V|
    before and after it (m/s or rad/s); all 0 with it off."""
    iterations: int = 0
    residual: float = 0.0
    solve_ms: float = 0.0
    time_capped: bool = False
    capped_steps: int = 0
    steps: int = 0
    violation_before: float = 0.0
    violation_after: float = 0.0
    rate_before: float = 0.0
    rate_after: float = 0.0

    COUNTS = ("capped_steps", "steps")      # summed over the kernel calls of an advance (absorb)
    STACKS = ()                             # arrays of rows, stacked likewise

    def absorb(self, later):
        """The stats of an advance made of this call and a later one: the later call's
        last step, this one's counts and rows added to it."""
        out = replace(later)
        for name in self.COUNTS:
            setattr(out, name, getattr(self, name) + getattr(later, name))
        for name in self.STACKS:
            setattr(out, name, np.vstack([getattr(self, name), getattr(later, name)]))
        return out

    def record_projection(self, violation):
        """Keep a projection.Violation (None: the projection did not run)."""
        if violation is not None:
            self.violation_before, self.violation_after = violation.position_before, violation.position_after
            self.rate_before, self.rate_after = violation.velocity_before, violation.velocity_after
