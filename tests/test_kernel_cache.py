"""numba's cache index written by code whose types have since moved counts as stale
(physics/kernel_cache.py), instead of failing every kernel of its file."""
import pickle
import sys
import types
from types import SimpleNamespace

import physics  # noqa: F401  (installs the guard)
from numba.core.caching import IndexDataCacheFile


def _index_naming_a_module_that_is_gone(path, version, stamp):
    module = types.ModuleType("sharnir_moved_away")
    exec("class Bundle:\n    pass\n", module.__dict__)
    module.Bundle.__module__ = "sharnir_moved_away"
    sys.modules["sharnir_moved_away"] = module
    try:
        data = pickle.dumps((stamp, {(module.Bundle(),): "entry-1.nbc"}))
    finally:
        del sys.modules["sharnir_moved_away"]
    with open(path, "wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(data)


def test_an_index_naming_a_moved_type_loads_as_empty_and_a_fresh_one_loads(tmp_path):
    index = tmp_path / "kernel.nbi"
    owner = SimpleNamespace(_index_path=str(index), _version="v1", _source_stamp=("stamp", 1))
    _index_naming_a_module_that_is_gone(index, "v1", ("stamp", 1))
    assert IndexDataCacheFile._load_index(owner) == {}          # stale: the kernels compile again
    with open(index, "wb") as f:                                 # an index of types that exist loads as before
        pickle.dump("v1", f, protocol=-1)
        f.write(pickle.dumps((("stamp", 1), {("float64",): "entry-1.nbc"})))
    assert IndexDataCacheFile._load_index(owner) == {("float64",): "entry-1.nbc"}


def test_a_physics_kernel_is_stale_after_an_edit_of_any_physics_file_it_calls_into(monkeypatch):
    """numba stamps a kernel's index with its own file only; the guard adds the digest of
    every physics source, so an edit of a helper's file (physics/quat.py) recompiles the
    kernels of the other files that hold the old helper's code."""
    from numba.core.caching import InTreeCacheLocator
    from physics import kernel_cache, quat
    import pytest as _pytest
    locator = InTreeCacheLocator(quat.rotate.py_func, quat.__file__)
    before = locator.get_source_stamp()
    monkeypatch.setattr(kernel_cache, "_DIGEST", ["as if physics/joint_rows.py had been edited"])
    assert locator.get_source_stamp() != before
    outside = InTreeCacheLocator(_pytest.approx, _pytest.__file__)       # not physics: numba's own stamp
    assert outside.get_source_stamp() == outside.get_source_stamp()
    assert not (isinstance(outside.get_source_stamp(), tuple) and "edited" in str(outside.get_source_stamp()))
