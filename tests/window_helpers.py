"""Helpers for the tests that drive the real window (pyglet is imported only when a window
opens: pytest-xvfb must start the display first)."""
from pathlib import Path

SCENES = Path(__file__).resolve().parent.parent / "scenes"


def open_window(scene, width=1280, height=800):
    """A ViewerWindow on scenes/SCENE (a file name), as the app opens it."""
    import pyglet
    pyglet.options["dpi_scaling"] = "stretch"
    import physics
    from shell.window import ViewerWindow
    return ViewerWindow(physics.load_scene(SCENES / scene), scene, width=width, height=height)


def window(scene, width=1280, height=800, setup=None):
    """Body of a module-scoped window fixture: `yield from window("door.toml")`."""
    w = open_window(scene, width, height)
    if setup is not None:
        setup(w)
    yield w
    if not w.closed:
        w.close()


def frame(win):
    """One frame of the app's loop: events, then drawing (ImGui reads input once per frame)."""
    win.dispatch_events()
    win.render_frame()
    assert win.gui_error is None, win.gui_error
