"""numba's on-disk cache, made safe against code that moved.

numba (`cache=True`) keeps one index per source file: the signatures it compiled (their
types pickled by reference — a named tuple of arrays by its module and name) and a stamp of
the source. It unpickles the index before it compares the stamp, so an index written
before a type's module was renamed or split raises ImportError or AttributeError on
load, and every kernel of that file fails instead of compiling afresh. `guard()` makes an
index that cannot be unpickled count as stale — what numba does with an index whose
stamp differs: the kernels compile again and the index is rewritten.
"""
import pickle


def guard():
    """Wrap numba's index loader once (no-op if numba's internals differ from what it
    expects: then numba's own behaviour stays)."""
    try:
        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return
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
