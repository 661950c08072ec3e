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
