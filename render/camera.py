"""Orbit camera (pyrr for the matrices): orbit, pan, zoom, focus, pick rays. Z up.

`fit` frames a set of spheres (bodies, rope nodes) in a viewport of a given aspect
ratio: it keeps the view direction and moves the eye back along it, and sideways,
until every sphere lies inside the frustum with a margin (both the horizontal and the
vertical field of view count, so a narrow viewport beside the panel is framed as well
as a wide one).
"""
import math

import numpy as np
from pyrr import matrix44


class OrbitCamera:
    def __init__(self, target=(0.0, 0.0, 1.0), distance=5.0, yaw=-60.0, pitch=25.0, fov=45.0):
        self.home = None
        self.set(target, distance, yaw, pitch)
        self.fov = fov
        self.home = (self.target.copy(), self.distance, self.yaw, self.pitch)

    def set(self, target, distance, yaw, pitch):
        self.target = np.asarray(target, float)
        self.distance = float(distance)
        self.yaw, self.pitch = float(yaw), float(pitch)

    def look(self, eye, target):
        """Place the camera at `eye` looking at `target`."""
        d = np.asarray(eye, float) - np.asarray(target, float)
        dist = max(np.linalg.norm(d), 1e-3)
        self.set(target, dist, math.degrees(math.atan2(d[1], d[0])), math.degrees(math.asin(d[2] / dist)))
        self.home = (self.target.copy(), self.distance, self.yaw, self.pitch)

    def frame(self, centre, radius):
        """Look at a sphere of `radius` around `centre` from the default direction."""
        dist = max(radius, 0.2) / math.tan(math.radians(self.fov) / 2) * 1.1
        self.set(centre, dist, -60.0, 22.0)
        self.home = (self.target.copy(), self.distance, self.yaw, self.pitch)

    def basis(self):
        """(right, up, forward) unit vectors of the view."""
        fwd = self.target - self.eye
        fwd = fwd / max(np.linalg.norm(fwd), 1e-12)
        right = np.cross(fwd, (0.0, 0.0, 1.0))
        n = np.linalg.norm(right)
        right = right / n if n > 1e-9 else np.array([1.0, 0.0, 0.0])
        return right, np.cross(right, fwd), fwd

    def half_angles(self, aspect):
        """(horizontal, vertical) half fields of view (radians) for `aspect` = width / height."""
        v = math.radians(self.fov) / 2
        return math.atan(math.tan(v) * aspect), v

    def fits(self, centres, radii, aspect, margin=0.92):
        """True when every sphere is in front of the eye and inside `margin` of the field of view."""
        centres, radii = np.atleast_2d(np.asarray(centres, float)), np.asarray(radii, float)
        if len(centres) == 0:
            return True
        right, up, fwd = self.basis()
        rel = centres - self.eye
        z = rel @ fwd
        near = max(self.distance * 0.01, 0.01)
        if np.any(z - radii < near):
            return False
        for axis, half in zip((right, up), self.half_angles(aspect)):
            t = math.tan(half) * margin
            c = math.cos(math.atan(t))
            # distance of the sphere's centre inside each side plane must exceed its radius
            if np.any((z * t - np.abs(rel @ axis)) * c < radii - 1e-9 * (np.abs(z) + 1.0)):
                return False
        return True

    def fit(self, centres, radii, aspect, margin=0.92, min_radius=0.2):
        """Keep the view direction; place the eye so every sphere (centres (n, 3), radii (n,))
        fills the viewport of `aspect` (width / height) within `margin` of its field of
        view. The target goes to the middle depth of the spheres."""
        centres = np.atleast_2d(np.asarray(centres, float))
        radii = np.maximum(np.asarray(radii, float).reshape(-1), 0.0)
        if len(centres) == 0:
            return
        right, up, fwd = self.basis()
        spread = float(np.max(np.linalg.norm(centres - centres.mean(axis=0), axis=1) + radii))
        if spread < min_radius:                      # a tiny scene: frame at least min_radius
            radii = radii + (min_radius - spread)
        eye_f = []
        eye_side = []
        for axis, half in zip((right, up), self.half_angles(aspect)):
            a = math.atan(math.tan(half) * margin)
            s, c = math.sin(a), math.cos(a)
            # inward normals of the two side planes; the eye E satisfies n·E <= min(n·centre - r)
            k_lo = float(np.min((centres @ axis) * c + (centres @ fwd) * s - radii))
            k_hi = float(np.min(-(centres @ axis) * c + (centres @ fwd) * s - radii))
            eye_f.append((k_lo + k_hi) / (2 * s))
            eye_side.append((k_lo - k_hi) / (2 * c))
        f = min(eye_f)                                 # the farther back of the two axes
        eye = eye_side[0] * right + eye_side[1] * up + f * fwd
        # the component of the eye off the (right, up, fwd) basis is zero by construction
        depth = float(np.median(centres @ fwd)) - f
        depth = max(depth, float(np.min(centres @ fwd - radii)) - f, 0.05)
        self.target = eye + fwd * depth
        self.distance = depth

    def set_home(self):
        self.home = (self.target.copy(), self.distance, self.yaw, self.pitch)

    def at_home(self):
        if self.home is None:
            return False
        t, d, y, p = self.home
        return (np.allclose(t, self.target) and math.isclose(d, self.distance)
                and math.isclose(y, self.yaw) and math.isclose(p, self.pitch))

    def focus(self, centre, radius, aspect, near=1.5, far=4.0):
        """Centre the view on a sphere (a body); zoom so it spans between 1/far and
        1/near of the viewport's smaller field of view, keeping the distance if it does."""
        half = min(self.half_angles(aspect))
        r = max(float(radius), 0.02)
        lo, hi = near * r / math.sin(half), far * r / math.sin(half)
        self.target = np.asarray(centre, float).copy()
        self.distance = min(max(self.distance, lo), hi)

    def reset(self):
        if self.home is not None:
            t, d, y, p = self.home
            self.set(t.copy(), d, y, p)

    @property
    def eye(self):
        y, p = math.radians(self.yaw), math.radians(self.pitch)
        return self.target + self.distance * np.array([math.cos(p) * math.cos(y), math.cos(p) * math.sin(y), math.sin(p)])

    def orbit(self, dx, dy):
        """Drag by (dx, dy) pixels: yaw about Z and pitch."""
        self.yaw -= dx * 0.3
        self.pitch = min(89.0, max(-89.0, self.pitch - dy * 0.3))

    def pan(self, dx, dy, height):
        """Drag by pixels: move the target in the view plane so the scene follows the mouse."""
        fwd = self.target - self.eye
        fwd /= np.linalg.norm(fwd)
        right = np.cross(fwd, (0.0, 0.0, 1.0))
        right /= max(np.linalg.norm(right), 1e-9)
        up = np.cross(right, fwd)
        scale = 2.0 * self.distance * math.tan(math.radians(self.fov) / 2) / max(height, 1)
        self.target = self.target - right * dx * scale - up * dy * scale

    def zoom(self, clicks):
        self.distance = min(1e4, max(0.05, self.distance * 0.88 ** clicks))

    def view(self):
        """4×4 view matrix, column-vector convention."""
        return matrix44.create_look_at(self.eye, self.target, (0.0, 0.0, 1.0)).T

    def projection(self, aspect):
        near = max(self.distance * 0.01, 0.01)
        return matrix44.create_perspective_projection(self.fov, aspect, near, near * 1e4).T

    def view_proj(self, aspect):
        return self.projection(aspect) @ self.view()

    def project(self, point, width, height):
        """Pixel (x right, y down from the top-left) of a world point."""
        p = self.view_proj(width / height) @ np.append(np.asarray(point, float), 1.0)
        ndc = p[:3] / p[3]
        return (ndc[0] * 0.5 + 0.5) * width, (1.0 - (ndc[1] * 0.5 + 0.5)) * height

    def ray(self, x, y, width, height):
        """World ray (origin, unit direction) through pixel (x, y) from the top-left."""
        inv = np.linalg.inv(self.view_proj(width / height))
        ndc = np.array([2.0 * x / width - 1.0, 1.0 - 2.0 * y / height])
        a = inv @ np.array([ndc[0], ndc[1], -1.0, 1.0])
        b = inv @ np.array([ndc[0], ndc[1], 1.0, 1.0])
        a, b = a[:3] / a[3], b[:3] / b[3]
        d = b - a
        return a, d / np.linalg.norm(d)
