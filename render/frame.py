"""An offscreen render target: multisampled colour + depth, resolved for reading.

Both the window (which then copies it to the screen) and headless rendering draw
here, so screenshots read our own framebuffer, never `ctx.screen` (stack.md).
"""
import zlib
import struct

import numpy as np


class RenderTarget:
    def __init__(self, ctx, size, samples=4):
        self.ctx, self.size = ctx, tuple(size)
        samples = min(samples, ctx.max_samples)
        self.msaa = ctx.framebuffer(color_attachments=[ctx.renderbuffer(self.size, 4, samples=samples)],
                                    depth_attachment=ctx.depth_renderbuffer(self.size, samples=samples))
        self.resolved = ctx.framebuffer(color_attachments=[ctx.texture(self.size, 4)])

    def resolve(self):
        self.ctx.copy_framebuffer(self.resolved, self.msaa)

    def pixels(self):
        """RGB image (h, w, 3) uint8, top row first."""
        data = self.resolved.read(components=3, alignment=1)
        img = np.frombuffer(data, np.uint8).reshape(self.size[1], self.size[0], 3)
        return img[::-1].copy()

    def release(self):
        for fbo in (self.msaa, self.resolved):
            for att in list(fbo.color_attachments) + ([fbo.depth_attachment] if fbo.depth_attachment else []):
                att.release()
            fbo.release()


def write_png(path, rgb):
    """Write an (h, w, 3) uint8 image as a PNG (zlib; no imaging library needed)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def initial_camera(world, snap):
    """The scene's [view] if it has one, else a view framing every body."""
    from .camera import OrbitCamera
    from .meshes import bounding_radius
    cam = OrbitCamera()
    view = getattr(world, "view", None) or {}
    if "eye" in view and "target" in view:
        cam.look(view["eye"], view["target"])
        return cam
    pos = snap["position"][1:]
    if len(pos) == 0:
        cam.frame(np.array([0.0, 0.0, 0.5]), 2.0)
        return cam
    centre = pos.mean(axis=0)
    radius = max(np.linalg.norm(p - centre) + bounding_radius(s)
                 for p, s in zip(pos, snap["shapes"][1:]) if s.kind != "plane") if len(pos) else 1.0
    cam.frame(centre, radius)
    return cam
