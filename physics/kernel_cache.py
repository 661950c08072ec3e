"""numba's on-disk cache, made safe against code that moved or changed.

numba (`cache=True`) keeps one index per source file: the signatures it compiled (their
types pickled by reference — a named tuple of arrays by its module and name) and a stamp of
the source. It unpickles the index before it compares the stamp, so an index written
before a type's module was renamed or split raises ImportError or AttributeError on
load, and every kernel of that file fails instead of compiling afresh. `guard()` makes an
index that cannot be unpickled count as stale — what numba does with an index whose
stamp differs: the kernels compile again and the index is rewritten.

numba's stamp is of the kernel's own file alone, while a kernel's compiled code holds the
helpers it calls from other files: after an edit of physics/quat.py (or a `git pull`) the
kernels of every other file would load with the old helpers. `guard()` adds a digest of
every physics source to the stamp of the physics kernels, so any change of physics
compiles them all again.
"""
import hashlib
import os
import pickle
from pathlib import Path

PHYSICS = Path(__file__).resolve().parent
_DIGEST = []


def physics_digest():
    """SHA-1 (hex) of every physics source's relative path and bytes (once per process)."""
    if not _DIGEST:
        h = hashlib.sha1()
        for path in sorted(PHYSICS.rglob("*.py")):
            h.update(str(path.relative_to(PHYSICS)).encode() + b"\0" + path.read_bytes())
        _DIGEST.append(h.hexdigest())
    return _DIGEST[0]


def _with_physics_digest(get_source_stamp):
    def stamped(self):
        stamp = get_source_stamp(self)
        try:
            inside = Path(os.path.abspath(self._py_file)).is_relative_to(PHYSICS)
        except (AttributeError, TypeError, ValueError):
            inside = False
        return (stamp, physics_digest()) if inside else stamp
    stamped.guarded = True
    return stamped


def guard():
    """Wrap numba's index loader and source stamps once (no-op if numba's internals differ
    from what it expects: then numba's own behaviour stays)."""
    try:
        from numba.core import caching
        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return
    for cls in vars(caching).values():
        own = getattr(cls, "__dict__", {}).get("get_source_stamp") if isinstance(cls, type) else None
        if own is not None and not getattr(own, "guarded", False):
            cls.get_source_stamp = _with_physics_digest(own)
    load = getattr(IndexDataCacheFile, "_load_index", None)
    if load is None or getattr(load, "guarded", False):
        return

    def _load_index(self):
        try:
            return load(self)
        except (ImportError, AttributeError, EOFError, pickle.UnpicklingError, TypeError, ValueError):
            return {}

    _load_index.guarded = True
    IndexDataCacheFile._load_index = _load_index
