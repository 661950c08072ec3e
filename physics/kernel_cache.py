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
kernels of every other file would load with the old helpers. `guard()` adds to the stamp
of the physics kernels a digest of every physics source compiled code can hold: the files
that define kernels and every file they import from at module level, transitively (their
helpers, constants, registry arrays). An edit of one of them compiles all physics kernels
again; the Python front ends that only call kernels (world.py, io/, bench/, …: imported
inside functions if at all) are left out, so editing them recompiles nothing.
"""
import hashlib
import os
import pickle
import re
from pathlib import Path

PHYSICS = Path(__file__).resolve().parent
_DIGEST = []
# a relative import at module level: dots, module, the names (one line or parenthesized)
_DEFINES_KERNELS = re.compile(rb"^\s*@(kernel|helper)\(", re.M)
_FROM = re.compile(rb"^from (\.+)([\w.]*) import (\([^)]*\)|[^\n]*)", re.M)


def _imported_files(path, text):
    """The physics files a module imports from at module level (relative imports: the
    module, or each name that is a submodule of a package)."""
    out = set()
    for dots, module, names in _FROM.findall(text):
        base = path.parent
        for _ in range(len(dots) - 1):
            base = base.parent
        target = base.joinpath(*module.decode().split(".")) if module else base
        candidates = [target.with_suffix(".py"), target / "__init__.py"]
        if (target / "__init__.py").is_file():
            for name in names.decode().strip("()").split(","):
                name = name.split("#")[0].split()[0] if name.split("#")[0].split() else ""
                if name.isidentifier():
                    candidates += [(target / name).with_suffix(".py"), target / name / "__init__.py"]
        out.update(c for c in candidates if c.is_file())
    return out


def kernel_sources():
    """The physics files compiled kernels can hold code or constants of: those that
    define kernels (`@kernel`, `@helper`) and, transitively, those they import from at module level."""
    texts = {path: path.read_bytes() for path in PHYSICS.rglob("*.py")}
    found = [path for path, text in texts.items() if _DEFINES_KERNELS.search(text)]
    seen = set(found)
    while found:
        path = found.pop()
        for dep in _imported_files(path, texts[path]):
            if dep in texts and dep not in seen:
                seen.add(dep)
                found.append(dep)
    return {path: texts[path] for path in sorted(seen)}


def physics_digest():
    """SHA-1 (hex) of kernel_sources(): each file's relative path and bytes (once per
    process)."""
    if not _DIGEST:
        h = hashlib.sha1()
        for path, text in kernel_sources().items():
            h.update(str(path.relative_to(PHYSICS)).encode() + b"\0" + text)
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
