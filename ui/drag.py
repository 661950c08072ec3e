"""Pulling a body with the mouse: a soft spring from the grabbed point to the cursor.

On press the ray through the cursor is cast against the shapes; a dynamic body that
is hit is grabbed at the hit point (`world.grab`: a critically damped, mass-scaled,
force-bounded spring the world applies every step, whatever the solver). While the
button is held the spring's target is where the cursor's ray meets the plane through
the grab point facing the camera; with Shift, moving the mouse up or down pushes that
plane away from or towards the camera. Release lets go (`world.release_grab`).
"""
import math

import numpy as np
from pyglet.window import key

from .picking import ray_cast

DEPTH_GAIN = 1.0      # with Shift: metres of depth per metre the cursor moves at the plane
ROPE_PICK_RADII = 3.0  # a press this many rope radii from a node grabs the rope


class MouseDrag:
    """The drag gesture over a view: `view.ray(x, y)` gives the (origin, unit direction)
    of a window point, `view.camera` the camera (both may change between drags)."""

    def __init__(self, view):
        self.view = view
        self.plane_point = None      # a point of the drag plane (world)
        self.body = None             # the grabbed body's name
        self.error = None            # why the last grab failed, if it did

    @property
    def camera(self):
        return self.view.camera

    def ray(self, x, y):
        return self.view.ray(x, y)

    @property
    def active(self):
        return self.body is not None

    def _forward(self):
        f = self.camera.target - self.camera.eye
        return f / np.linalg.norm(f)

    def hit(self, world, x, y):
        """(index, distance, point) of the body under window point (x, y), or None."""
        snap_shapes = [b.shape for b in world.body_info]
        origin, d = self.ray(x, y)
        return ray_cast(snap_shapes, world.state.bodies.pos, world.state.bodies.quat, origin, d)

    def rope_hit(self, world, x, y):
        """(rope name, distance along the ray, node position) of the rope node nearest the
        ray through (x, y) — within ROPE_PICK_RADII radii or 3 cm — or None."""
        origin, d = self.ray(x, y)
        best = None
        for name, rope in getattr(world, "ropes", {}).items():
            rel = rope.positions - origin
            along = rel @ d
            off = np.linalg.norm(rel - along[:, None] * d, axis=1)
            off[along <= 0] = np.inf
            k = int(np.argmin(off))
            if off[k] <= max(ROPE_PICK_RADII * rope.radius, 0.03) and (best is None or along[k] < best[1]):
                best = (name, float(along[k]), rope.positions[k].copy())
        return best

    def press(self, world, x, y):
        """Grab the body under (x, y) if it can move. Returns the index of the body
        under the cursor (grabbed or static), or None; `active` says if it was grabbed."""
        self.error = None
        found = self.hit(world, x, y)
        rope = self.rope_hit(world, x, y)
        if rope is not None and (found is None or rope[1] < found[1]):
            name, _, point = rope
            try:
                world.grab(name, point, point)
            except (ValueError, AttributeError) as e:
                self.error = str(e)
                return None
            self.body = name
            self.plane_point = point
            return None
        if found is None:
            return None
        i, _, point = found
        if world.model.bodies.inv_mass[i] == 0.0:
            return i
        name = world.body_info[i].name
        try:
            world.grab(name, point, point)
        except (ValueError, AttributeError) as e:      # AttributeError: a world without grab()
            self.error = str(e)
            return i
        self.body = name
        self.plane_point = np.asarray(point, float).copy()
        return i

    def target_at(self, x, y):
        """Where the cursor's ray meets the drag plane (world), or None when parallel."""
        origin, d = self.ray(x, y)
        n = self._forward()
        denom = float(np.dot(d, n))
        if abs(denom) < 1e-9:
            return None
        t = float(np.dot(self.plane_point - origin, n)) / denom
        if t <= 0:
            return None
        return origin + t * d

    def move(self, world, x, y, dy, modifiers, scene_height):
        """The cursor moved to (x, y) (dy pixels up); Shift pushes the plane in depth."""
        if not self.active:
            return None
        if modifiers & key.MOD_SHIFT:
            n = self._forward()
            depth = max(float(np.dot(self.plane_point - self.camera.eye, n)), 1e-3)
            metres_per_pixel = 2.0 * depth * math.tan(math.radians(self.camera.fov) / 2) / max(scene_height, 1)
            self.plane_point = self.plane_point + n * (dy * metres_per_pixel * DEPTH_GAIN)
        target = self.target_at(x, y)
        if target is not None:
            world.move_grab(target)
        return target

    def release(self, world):
        if self.active:
            world.release_grab()
        self.body = None
        self.plane_point = None
