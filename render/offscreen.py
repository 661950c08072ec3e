"""Headless rendering with no display: an EGL context and the window's renderer."""
import moderngl

from .frame import RenderTarget, initial_camera, write_png
from .scene_renderer import SceneRenderer

_CTX = None
_TARGETS = {}     # size → RenderTarget, kept: releasing a bound framebuffer leaves moderngl
                  # rebinding a dead id later (GL_INVALID_OPERATION)


def egl_context():
    """One standalone EGL context per process (reused)."""
    global _CTX
    if _CTX is None:
        _CTX = moderngl.create_standalone_context(backend="egl")
        _CTX.error   # creating the context leaves a stale GL_INVALID_OPERATION: read it away
    return _CTX


def render_world(world, width=1280, height=720, camera=None, shadows=True, overlays=None):
    """Render the world's current state; returns (rgb (h, w, 3) uint8, camera)."""
    ctx = egl_context()
    with ctx:                      # make the EGL context current (a window may own the thread's)
        return _render(ctx, world, width, height, camera, shadows, overlays)


def _render(ctx, world, width, height, camera, shadows, overlays):
    snap = world.snapshot()
    renderer = SceneRenderer(ctx, snap)
    renderer.shadows = shadows
    renderer.overlays.update(overlays or {})
    cam = camera or initial_camera(world, snap, width / height)
    target = _TARGETS.get((width, height))
    if target is None:
        target = _TARGETS[(width, height)] = RenderTarget(ctx, (width, height))
    try:
        renderer.draw(snap, cam, (width, height), target.msaa)
        target.resolve()
        rgb = target.pixels()
        err = ctx.error
        if err != "GL_NO_ERROR":
            raise RuntimeError(f"OpenGL error while rendering: {err}")
    finally:
        renderer.release()
    return rgb, cam


def render_world_png(world, path, width=1280, height=720):
    rgb, _ = render_world(world, width, height)
    write_png(path, rgb)
