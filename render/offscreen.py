"""Headless rendering with no display: an EGL context and the window's renderer.

The EGL context shares the thread with any window's GL context (pyglet's GLX context
under X, which stays current after a window closes: pyglet's hidden shadow window).
libglvnd lets only one window-system API own a thread's current context: while a GLX
context is current, eglMakeCurrent fails with EGL_BAD_ACCESS, and glcontext ignores
that, so every "offscreen" call would go to the GLX context, with object names that
mean something else there (a window's frame read back instead of our target).
Entering the context (`with egl_context():`) therefore puts the thread's current
GLX or EGL context aside, checks that ours is current, and puts the old one back
on exit: the thread is left as it was found, for the window too. Meanwhile pyglet
(if loaded) is told its context is not current, so that the garbage collector's
deletions of its objects wait for its context instead of hitting ours.
"""
import ctypes

import moderngl

from .frame import RenderTarget, initial_camera, write_png
from .scene_renderer import SceneRenderer

_CTX = None
_TARGETS = {}     # size → RenderTarget, kept: releasing a bound framebuffer leaves moderngl
                  # rebinding a dead id later (GL_INVALID_OPERATION)

_EGL_DRAW, _EGL_READ = 0x3059, 0x305A
_LIBS = {}


def _lib(kind):
    """libGL (GLX) or libEGL through ctypes, None when the library is not installed."""
    if kind not in _LIBS:
        lib = None
        for name in {"glx": ("libGL.so.1", "libGL.so"), "egl": ("libEGL.so.1", "libEGL.so")}[kind]:
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if lib is not None:
            p, d = ctypes.c_void_p, ctypes.c_ulong
            try:
                if kind == "glx":
                    for f, res in (("glXGetCurrentContext", p), ("glXGetCurrentDisplay", p),
                                   ("glXGetCurrentDrawable", d), ("glXGetCurrentReadDrawable", d)):
                        getattr(lib, f).restype = res
                        getattr(lib, f).argtypes = []
                    lib.glXMakeContextCurrent.argtypes = [p, d, d, p]
                    lib.glXMakeContextCurrent.restype = ctypes.c_int
                else:
                    for f in ("eglGetCurrentContext", "eglGetCurrentDisplay"):
                        getattr(lib, f).restype = p
                        getattr(lib, f).argtypes = []
                    lib.eglGetCurrentSurface.restype = p
                    lib.eglGetCurrentSurface.argtypes = [ctypes.c_int]
                    lib.eglMakeCurrent.argtypes = [p, p, p, p]
                    lib.eglMakeCurrent.restype = ctypes.c_uint
                    lib.eglGetError.restype = ctypes.c_int
                    lib.eglGetError.argtypes = []
            except AttributeError:
                lib = None
        _LIBS[kind] = lib
    return _LIBS[kind]


def current_contexts():
    """The thread's current GL contexts: {"glx": handle or None, "egl": handle or None}."""
    glx, egl = _lib("glx"), _lib("egl")
    return {"glx": glx.glXGetCurrentContext() if glx else None,
            "egl": egl.eglGetCurrentContext() if egl else None}


def _put_aside():
    """Make no context current (GLX and EGL); returns what to give back to `_restore`."""
    saved = {}
    glx, egl = _lib("glx"), _lib("egl")
    if glx is not None and glx.glXGetCurrentContext():
        saved["glx"] = (glx.glXGetCurrentDisplay(), glx.glXGetCurrentDrawable(),
                        glx.glXGetCurrentReadDrawable(), glx.glXGetCurrentContext())
        if not glx.glXMakeContextCurrent(saved["glx"][0], 0, 0, None):
            raise RuntimeError("could not release the thread's GLX context for offscreen rendering")
    if egl is not None and egl.eglGetCurrentContext():
        saved["egl"] = (egl.eglGetCurrentDisplay(), egl.eglGetCurrentSurface(_EGL_DRAW),
                        egl.eglGetCurrentSurface(_EGL_READ), egl.eglGetCurrentContext())
    return saved


def _restore(saved):
    """Make current again what `_put_aside` found (after our EGL context was released)."""
    glx, egl = _lib("glx"), _lib("egl")
    if "egl" in saved:
        egl.eglMakeCurrent(*saved["egl"])
    if "glx" in saved:
        glx.glXMakeContextCurrent(*saved["glx"])


def _check_current(before):
    """Raise unless an EGL context other than the one put aside is current now."""
    egl = _lib("egl")
    if egl is None:
        return
    now = egl.eglGetCurrentContext()
    if not now or now == before.get("egl", (None,) * 4)[3]:
        raise RuntimeError(f"the offscreen EGL context could not be made current "
                           f"(eglGetError 0x{egl.eglGetError():x}); GL calls would go to another context")


class _PygletElsewhere:
    """What pyglet takes for its current context while ours is current. pyglet tracks
    its current context in Python (pyglet.gl.current_context) and deletes the GL objects
    the garbage collector frees (a closed window's shaders) at once when it thinks their
    context is current: glDelete* on our context, by names that are ours there. With
    this object space matching no context of pyglet's, it queues them instead and
    deletes them at its context's next switch_to()."""
    object_space = object()


def _hide_from_pyglet():
    """Point pyglet's current context at _PygletElsewhere (if pyglet is loaded at all:
    render never imports it); returns what to give back to `_show_to_pyglet`."""
    import sys
    gl = sys.modules.get("pyglet.gl")
    if gl is None or getattr(gl, "current_context", None) is None:
        return None
    old, gl.current_context = gl.current_context, _PygletElsewhere()
    return gl, old


def _show_to_pyglet(hidden):
    if hidden is not None:
        gl, old = hidden
        gl.current_context = old


def _enter(ctx):
    """Make `ctx` (the EGL context) current; returns what `_leave` gives back."""
    saved = _put_aside()
    hidden = _hide_from_pyglet()
    try:
        moderngl.Context.__enter__(ctx)
        _check_current(saved)
    except BaseException:
        moderngl.Context.__exit__(ctx, None, None, None)
        _show_to_pyglet(hidden)
        _restore(saved)
        raise
    return saved, hidden


def _leave(ctx, state):
    saved, hidden = state
    moderngl.Context.__exit__(ctx, None, None, None)    # no EGL context current
    _show_to_pyglet(hidden)
    _restore(saved)


class _EGLContext(moderngl.Context):
    """The standalone EGL context; `with ctx:` makes it current as described above."""

    def __enter__(self):
        self.__dict__.setdefault("_entered", []).append(_enter(self))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _leave(self, self.__dict__["_entered"].pop())


def egl_context():
    """One standalone EGL context per process (reused). Use it inside `with ctx:`;
    creating it leaves the thread's current context as it was."""
    global _CTX
    if _CTX is None:
        saved = _put_aside()
        hidden = _hide_from_pyglet()
        try:
            ctx = moderngl.create_standalone_context(backend="egl")   # made current by its creation
            ctx.__class__ = _EGLContext                               # `with ctx:` as above
            _check_current(saved)
            ctx.error    # creating the context leaves a stale GL_INVALID_OPERATION: read it away
            moderngl.Context.__exit__(ctx, None, None, None)
        finally:
            _show_to_pyglet(hidden)
            _restore(saved)
        _CTX = ctx
    return _CTX


def render_world(world, width=1280, height=720, camera=None, shadows=True, overlays=None):
    """Render the world's current state; returns (rgb (h, w, 3) uint8, camera)."""
    ctx = egl_context()
    with ctx:                      # ours current, the thread's (a window's) put aside
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
