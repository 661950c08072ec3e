"""Where Sharnir keeps what it computes once and reuses across runs: numba's compiled
kernels (with the warm-up's marker beside them) and the convex pieces of robot links'
collision meshes (io/mesh_shapes.link_pieces)."""
import os
from pathlib import Path

PHYSICS = Path(__file__).resolve().parent


def cache_dir():
    """NUMBA_CACHE_DIR if set, else physics/__pycache__ (numba's default place), else a
    per-user cache folder when that is not writable."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    default = PHYSICS / "__pycache__"
    try:
        default.mkdir(exist_ok=True)
        if os.access(default, os.W_OK):
            return default
    except OSError:
        pass
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sharnir"
