"""An offscreen render target: multisampled colour + depth, resolved for reading.

Both the window (which then copies it to the screen) and headless rendering draw
here, so screenshots read our own framebuffer, never `ctx.screen` (stack.md).
"""
import zlib
import struct

import numpy as np


class RenderTarget:
    """Draw into `msaa` (multisampled colour + depth, or with samples=0 a plain
    texture + depth), `resolve()`, then read or copy `resolved` (a texture)."""

    def __init__(self, ctx, size, samples=4):
        self.ctx, self.size = ctx, tuple(size)
        self.samples = min(samples, ctx.max_samples) if samples > 1 else 0
        if self.samples:
            self.msaa = ctx.framebuffer(
                color_attachments=[ctx.renderbuffer(self.size, 4, samples=self.samples)],
                depth_attachment=ctx.depth_renderbuffer(self.size, samples=self.samples))
            self.resolved = ctx.framebuffer(color_attachments=[ctx.texture(self.size, 4)])
        else:                                  # no multisampling: draw straight into the texture
            self.resolved = ctx.framebuffer(color_attachments=[ctx.texture(self.size, 4)],
                                            depth_attachment=ctx.depth_renderbuffer(self.size))
            self.msaa = self.resolved

    @property
    def texture(self):
        return self.resolved.color_attachments[0]

    def resolve(self):
        if self.samples:
            self.ctx.copy_framebuffer(self.resolved, self.msaa)

    def pixels(self):
        """RGB image (h, w, 3) uint8, top row first."""
        data = self.resolved.read(components=3, alignment=1)
        img = np.frombuffer(data, np.uint8).reshape(self.size[1], self.size[0], 3)
        return img[::-1].copy()

    def release(self):
        fbos = (self.msaa, self.resolved) if self.samples else (self.resolved,)
        for fbo in fbos:
            for att in list(fbo.color_attachments) + ([fbo.depth_attachment] if fbo.depth_attachment else []):
                att.release()
            fbo.release()


_BLIT_VERT = """#version 330 core
out vec2 v_uv;
void main() {
    vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    v_uv = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
"""
_BLIT_FRAG = """#version 330 core
in vec2 v_uv;
uniform sampler2D u_image;
out vec4 f_color;
void main() { f_color = vec4(texture(u_image, v_uv).rgb, 1.0); }
"""


class Upscaler:
    """Draws a texture over a viewport of the bound framebuffer, linearly filtered:
    the light rendering mode's 3D view, drawn at a fraction of the window's resolution."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.prog = ctx.program(vertex_shader=_BLIT_VERT, fragment_shader=_BLIT_FRAG)
        self.vao = ctx.vertex_array(self.prog, [])

    def draw(self, texture, fbo, viewport):
        import moderngl
        fbo.use()
        self.ctx.viewport = viewport
        self.ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)
        texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
        texture.use(location=0)
        self.prog["u_image"].value = 0
        self.vao.render(moderngl.TRIANGLES, vertices=3)

    def release(self):
        self.vao.release()
        self.prog.release()


def write_png(path, rgb):
    """Write an (h, w, 3) uint8 image as a PNG (zlib; no imaging library needed)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    try:
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
            f.write(chunk(b"IEND", b""))
    except OSError as e:            # a write or the close (a full disk) names no file: name it
        raise OSError(e.errno, e.strerror, str(path)) from None


REFERENCE_ASPECT = 16 / 9          # the aspect a scene's [view] is composed for (docs screenshots)


def visible_bodies(snap, radii=None):
    """Indices of the bodies a scene shows: no planes, none wholly under a ground plane
    (such as a carriage hidden under the floor), and no body given an empty tuple of
    visual parts (a bare URDF link: nothing to draw)."""
    from .meshes import bounding_radius
    shapes = snap["shapes"]
    pos = snap["position"]
    visuals = snap.get("visual_meshes") or [None] * len(shapes)
    if radii is None:
        radii = np.array([bounding_radius(s) for s in shapes])
    has_plane = any(s.kind == "plane" for s in shapes)
    return [i for i in range(1, len(shapes))
            if shapes[i].kind != "plane" and not (has_plane and pos[i][2] + radii[i] < 0.0)
            and not (isinstance(visuals[i], tuple) and len(visuals[i]) == 0)]


def shape_spheres(shape, radius=None):
    """Spheres (body-frame centres (k, 3), radii (k,)) that tightly cover a shape: a box's
    8 corners, a capsule's or cylinder's two end spheres, a sphere itself; or one sphere
    of `radius` (a visual mesh's bounding radius, when it differs from the shape's)."""
    from .meshes import bounding_radius
    kind = shape.kind
    if radius is not None and not np.isclose(radius, bounding_radius(shape)):
        return np.zeros((1, 3)), np.array([float(radius)])
    if kind == "box":
        h = np.asarray(shape.half_extents, float)
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
        return signs * h, np.zeros(8)
    if kind in ("capsule", "cylinder"):
        h = float(shape.half_length)
        return np.array([[0.0, 0.0, -h], [0.0, 0.0, h]]), np.full(2, float(shape.radius))
    return np.zeros((1, 3)), np.array([float(bounding_radius(shape))])


def _rotate(q, v):
    """Rotate the rows of v (k, 3) by the quaternion q = (x, y, z, w)."""
    u, w = np.asarray(q[:3], float), float(q[3])
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def scene_spheres(snap, radii=None):
    """Spheres covering what a scene shows: (centres (n, 3), radii (n,)) over its visible
    bodies (`visible_bodies`; `shape_spheres` posed by each body) and its ropes' nodes."""
    from .meshes import bounding_radius
    shapes, pos, quat = snap["shapes"], snap["position"], snap["orientation"]
    if radii is None:
        radii = np.array([bounding_radius(s) for s in shapes])
    centres, rad = [], []
    for i in visible_bodies(snap, radii):
        c, r = shape_spheres(shapes[i], radii[i])
        centres.append(pos[i] + _rotate(quat[i], c))
        rad.append(r)
    for rope in snap.get("ropes") or ():
        p = np.asarray(rope["positions"], float)
        if len(p) and np.all(np.isfinite(p)):
            centres.append(p)
            rad.append(np.full(len(p), float(rope["radius"])))
    if not centres:
        return np.zeros((0, 3)), np.zeros(0)
    return np.vstack(centres), np.concatenate(rad)


def initial_camera(world, snap, aspect=REFERENCE_ASPECT, radii=None, tight=False):
    """The camera a scene opens with, for a viewport of `aspect` (width / height).

    The scene's [view] sets the direction; its eye and target are kept when every body
    and rope is in view at this aspect, else the eye moves back (and sideways) along
    the same direction until they all are (`OrbitCamera.fit`). `tight`: always fit
    (the docs screenshots: the bodies as large as they fit). Without a [view]: the
    default direction, framing everything."""
    from .camera import OrbitCamera
    cam = OrbitCamera()
    view = getattr(world, "view", None) or {}
    centres, rad = scene_spheres(snap, radii)
    if "eye" in view and "target" in view:
        cam.look(view["eye"], view["target"])
        if tight or not cam.fits(centres, rad, aspect):
            cam.fit(centres, rad, aspect)
    elif len(centres) == 0:
        cam.frame(np.array([0.0, 0.0, 0.5]), 2.0)
    else:
        cam.set(centres.mean(axis=0), 5.0, -60.0, 22.0)
        cam.fit(centres, rad, aspect)
    cam.set_home()
    return cam
