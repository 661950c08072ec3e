"""physics/jit.py: kernels and helpers compile once per argument type, a helper called from
Python still answers, and the quicker flag comparison answers as numba's own."""
import numpy as np

from physics.jit import HelperDispatcher, helper, kernel


@helper(cache=False, error_model="numpy")
def _scaled(a, i, k):
    return a[i] * k


@kernel(cache=False)
def _sum_scaled(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += _scaled(a, i, 2) + _scaled(a, i, i)     # a constant at one site, a variable at the other
    return s


def test_a_helper_called_with_a_constant_and_a_variable_compiles_once():
    a = np.arange(5.0)
    assert _sum_scaled(a) == sum(2 * x + i * x for i, x in enumerate(a))
    assert len(_scaled.signatures) == 1 and "Literal" not in str(_scaled.signatures[0])


def test_a_helper_called_from_python_gives_what_it_gives_a_kernel():
    assert isinstance(_scaled, HelperDispatcher) and _scaled.targetoptions["no_cpython_wrapper"]
    a = np.arange(5.0)
    assert _scaled(a, 3, 2) == 6.0 and _scaled(a, 4, 0.5) == 2.0


def test_the_quicker_flag_comparison_answers_as_numbas_formula():
    from numba.core.compiler import Flags
    one, two = Flags(), Flags()
    for flags in (one, two):
        flags.fastmath = {"contract", "reassoc"}
        flags.error_model = "numpy"
    # numba's definition: every option's value, its default where unset
    assert one.values() == {name: getattr(one, name) for name in one.options}
    assert one == two and one is not two and hash(one) == hash(two)
    two.error_model = "python"
    assert one != two
