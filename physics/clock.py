"""A wall clock readable inside numba kernels: the CPU's cycle counter.

numba has no clock in nopython mode; LLVM's `readcyclecounter` (rdtsc on x86, the
virtual counter on ARM) costs ~15 ns. Its rate is calibrated once per process against
time.perf_counter, so kernels can stop on a wall-clock budget (seed 001's time cap).
"""
import time

from llvmlite import ir
from numba import types
from .jit import kernel, helper
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def _cycle_counter(typingctx):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@kernel(cache=True, _nrt=False)
def ticks():
    """Cycle counter now (ticks)."""
    return _cycle_counter()


@helper(cache=True, fastmath=False, _nrt=False)
def past_cap(t0, cap):
    """Whether a budget of cap ticks (0: none) started at tick t0 is spent: an iterative
    solve's time cap, checked after each sweep."""
    return cap > 0.0 and ticks() - t0 > cap


_TICKS_PER_MS = None


def ticks_per_ms():
    """Counter ticks per millisecond, measured once (~5 ms) and remembered."""
    global _TICKS_PER_MS
    if _TICKS_PER_MS is None:
        ticks()
        a, t0 = ticks(), time.perf_counter()
        while time.perf_counter() - t0 < 0.005:
            pass
        b, t1 = ticks(), time.perf_counter()
        rate = (b - a) / ((t1 - t0) * 1e3)
        _TICKS_PER_MS = rate if rate > 0 else 0.0   # 0: no counter, the cap is not enforced
    return _TICKS_PER_MS
