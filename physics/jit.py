"""The two kinds of compiled function: kernels, which Python calls, and helpers, which only
kernels call.

numba compiles two entry points beside the machine code of every function it compiles: a
CPython wrapper (unboxes Python arguments, boxes the result) and a C-ABI wrapper (for
first-class function values). Both are lowered, optimized and code-generated with the
function, whether or not anything uses them. So:

- `kernel(**options)`: numba's `njit(**options)` without the C-ABI wrapper (nothing in
  Sharnir passes compiled functions as values).
- `helper(**options)`: the same without the CPython wrapper either: a function only
  kernels call (numba links its code into theirs). Called from Python (a test does), a
  helper compiles a twin with the entry point, uncached — a compile, no crash: the disk
  cache holds one build per function, and the helper's has no entry point to jump to.

Both compile one specialization per argument type (KernelDispatcher: an integer constant
at a call site types as an integer). The options are numba's (`cache`, `fastmath`,
`error_model`, `_nrt`, `inline`, …).
"""
import numba
from numba.core import types
from numba.core.registry import CPUDispatcher

_NO_C_ABI = {"no_cfunc_wrapper": True}


def _plain(t):
    """An integer constant's type as its plain integer type (int64 for a Python int)."""
    return types.unliteral(t) if isinstance(t, types.IntegerLiteral) else t


class KernelDispatcher(CPUDispatcher):
    """numba's dispatcher, one specialization per argument type: a kernel calling this
    function with an integer constant types it as an integer, not as the constant's value
    (numba would compile a copy per constant: `emit(…, 0)` beside `emit(…, k)`). Boolean
    constants stay literal: they are the compile-time flags that prune branches."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_plain(a) for a in args),
                                         {k: _plain(v) for k, v in kws.items()})


class HelperDispatcher(KernelDispatcher):
    """A dispatcher compiled without a CPython entry point: kernels call it; a call from
    Python goes to its twin (the same function and options with the entry point,
    compiled on first use, not cached)."""

    def __call__(self, *args, **kwargs):
        twin = self.__dict__.get("_twin")
        if twin is None:
            options = {k: v for k, v in self.targetoptions.items()
                       if k not in ("nopython", "no_cpython_wrapper")}
            twin = self._twin = numba.njit(**options)(self.py_func)
        return twin(*args, **kwargs)


def _compiled(cls, options):
    cache = options.pop("cache", False)
    targetoptions = dict(options, nopython=True, **_NO_C_ABI)

    def make(func):
        dispatcher = cls(py_func=func, locals={}, targetoptions=targetoptions)
        if cache:
            dispatcher.enable_caching()
        return dispatcher
    return make


def kernel(**options):
    """Decorator: a compiled function that Python calls (numba's njit, no C-ABI wrapper)."""
    return _compiled(KernelDispatcher, options)


def helper(**options):
    """Decorator: a compiled function that only kernels call (no CPython entry point)."""
    return _compiled(HelperDispatcher, dict(options, no_cpython_wrapper=True))


def _quicker_flag_comparisons():
    """numba keys its cache of @overload implementations (array indexing, min, np.empty, …)
    by the compiling function's flags, and compares two flag sets through a property per
    option at every lookup, a good part of a cold compile. Here the same comparison reads
    a table of the options' defaults, and a flag set equals itself at once. Skipped
    (numba's own stays) unless it answers as numba's on flag sets with options set."""
    from numba.core.compiler import Flags
    from numba.core.targetconfig import TargetConfig
    numba_values, numba_eq = TargetConfig.values, TargetConfig.__eq__
    if getattr(numba_values, "quick", False):
        return
    defaults = {}

    def values(self):
        table = defaults.get(type(self))
        if table is None:
            table = defaults[type(self)] = {name: option.default for name, option in self.options.items()}
        own = self._values
        return {name: own.get(name, default) for name, default in table.items()}

    def eq(self, other):
        return self is other or numba_eq(self, other)

    values.quick = True
    try:
        probe = Flags()
        probe.fastmath = {"contract"}
        probe.error_model = "numpy"
        probe.no_cpython_wrapper = True
        same = values(probe) == numba_values(probe) and values(Flags()) == numba_values(Flags())
    except (AttributeError, TypeError, ValueError):
        same = False
    if same:
        TargetConfig.values, TargetConfig.__eq__ = values, eq


_quicker_flag_comparisons()
