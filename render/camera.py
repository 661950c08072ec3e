"""Orbit camera (pyrr for the matrices): orbit, pan, zoom, focus, pick rays. Z up."""
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
