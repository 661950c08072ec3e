"""Rendering quality: "full" (the default on a GPU) and "light" (software OpenGL).

Under a software rasterizer (Mesa's llvmpipe, softpipe, swrast) nearly all of a frame's
time is filling pixels: at 1728 × 972 with 4× MSAA, a 2048² shadow map and a 3 × 3 PCF
filter on every pixel of the floor it draws about 3 frames per second. The light mode
draws the 3D view at a fraction of the window's resolution (upscaled with linear
filtering), without multisampling, with a 1024² shadow map.

The mode is chosen when a window opens: `SHARNIR_RENDER=light` or `=full` in the
environment if set, else light when the GL renderer is a software one. The panel
(View) and the G key switch it at any time.
"""
import os
from dataclasses import dataclass, replace

SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast", "software rasterizer")
ENV = "SHARNIR_RENDER"


@dataclass(frozen=True)
class Quality:
    name: str
    scale: float          # 3D view resolution / window resolution (0.25 … 1)
    samples: int          # MSAA samples of the 3D view (0: none)
    shadow_size: int      # shadow map texels per side

    def with_scale(self, scale):
        return replace(self, scale=min(max(float(scale), 0.25), 1.0))


FULL = Quality("full", 1.0, 4, 2048)
LIGHT = Quality("light", 0.5, 0, 1024)
MODES = {"full": FULL, "light": LIGHT}


def gl_renderer(ctx):
    try:
        return str(ctx.info.get("GL_RENDERER", ""))
    except Exception:                  # a context without info (fakes in tests)
        return ""


def is_software(ctx):
    """True when the context draws with a software rasterizer."""
    name = gl_renderer(ctx).lower()
    return any(s in name for s in SOFTWARE_RENDERERS)


def default_quality(ctx, environ=None):
    """The mode a new window starts in, and why (a short phrase for the panel)."""
    environ = os.environ if environ is None else environ
    forced = environ.get(ENV, "").strip().lower()
    if forced in MODES:
        return MODES[forced], f"{ENV}={forced}"
    if is_software(ctx):
        return LIGHT, "software OpenGL"
    return FULL, "hardware OpenGL"
