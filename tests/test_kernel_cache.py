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


def test_the_digest_covers_every_file_a_kernel_can_hold_code_of_and_no_front_end():
    """The digest's files: every file defining kernels, every physics file one of them
    imports from at module level (helpers, constants, registry arrays), transitively; not
    the front ends that only call kernels, so that editing them compiles nothing."""
    import ast
    from physics import kernel_cache
    root = kernel_cache.PHYSICS
    covered = {p.relative_to(root).as_posix() for p in kernel_cache.kernel_sources()}
    for must in ("quat.py", "joint_rows.py", "joint_types.py", "collision/common.py", "contacts.py",
                 "solvers/tree/factor.py", "solvers/row_ops.py"):
        assert must in covered
    for front in ("world.py", "builders.py", "io/scene.py", "io/urdf.py", "bench/chains.py" if
                  (root / "bench/chains.py").exists() else "bench/build.py"):
        assert front not in covered
    # cross-check with Python's own parser: each module-level relative import of a covered
    # file that names a physics module lands in the covered set
    for rel in sorted(covered):
        path = root / rel
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                target = base.joinpath(*(node.module or "").split(".")) if node.module else base
                for cand in (target.with_suffix(".py"), target / "__init__.py"):
                    if cand.is_file():
                        assert cand.relative_to(root).as_posix() in covered, (rel, node.module)
                for alias in node.names:
                    for cand in ((target / alias.name).with_suffix(".py"), target / alias.name / "__init__.py"):
                        if cand.is_file():
                            assert cand.relative_to(root).as_posix() in covered, (rel, alias.name)
