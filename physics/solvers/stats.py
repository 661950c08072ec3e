"""What a solve did, in the same shape for every solver family."""
from dataclasses import dataclass


@dataclass
class SolverStats:
    """The last step's iterations, final residual (largest |Δp|, N·s), solve time (ms:
    the iterations only for `impulse`, the whole step for `penalty`) and whether the time
    cap cut it; over the last advance, how many steps the cap cut and how many ran."""
    iterations: int = 0
    residual: float = 0.0
    solve_ms: float = 0.0
    time_capped: bool = False
    capped_steps: int = 0
    steps: int = 0
