"""Draws a world snapshot with moderngl into the bound framebuffer.

Bodies are instanced per distinct shape (one buffer write per shape batch per frame),
lit by one directional light with a PCF shadow map, over a gradient background and a
grid floor; debug overlays are lines. Shared by the window and offscreen rendering.
Bodies naming a visual mesh file are drawn with it (visual_mesh.py), bodies with visual
parts (a URDF link's meshes and shapes, physics/visual.py) with each part; the snapshot's
ropes, if any, are skinned tubes (rope_mesh.py) lit and shadowed like the bodies.
"""
from pathlib import Path

import moderngl
import numpy as np
from pyrr import matrix44

from physics.visual import is_parts

from . import meshes, visual_mesh
from .rope_mesh import RopeSet

SHADERS = Path(__file__).resolve().parent.parent / "assets" / "shaders"
LIGHT_DIR = np.array([0.35, 0.55, -1.0]) / np.linalg.norm([0.35, 0.55, -1.0])
SKY_TOP, SKY_BOTTOM = (0.42, 0.52, 0.66), (0.80, 0.82, 0.86)
GROUND_COLOR = (0.62, 0.64, 0.67)


def _program(ctx, name):
    return ctx.program(vertex_shader=(SHADERS / f"{name}.vert").read_text(),
                       fragment_shader=(SHADERS / f"{name}.frag").read_text())


def model_matrices(position, orientation):
    """(n, 16) float32 column-major 4×4 pose matrices from positions and (x, y, z, w) quaternions."""
    x, y, z, w = orientation.T
    m = np.zeros((len(position), 4, 4))
    m[:, 0, 0] = 1 - 2 * (y * y + z * z)
    m[:, 0, 1] = 2 * (x * y - z * w)
    m[:, 0, 2] = 2 * (x * z + y * w)
    m[:, 1, 0] = 2 * (x * y + z * w)
    m[:, 1, 1] = 1 - 2 * (x * x + z * z)
    m[:, 1, 2] = 2 * (y * z - x * w)
    m[:, 2, 0] = 2 * (x * z - y * w)
    m[:, 2, 1] = 2 * (y * z + x * w)
    m[:, 2, 2] = 1 - 2 * (x * x + y * y)
    m[:, :3, 3] = position
    m[:, 3, 3] = 1.0
    return m.transpose(0, 2, 1).reshape(-1, 16).astype(np.float32)


class _Batch:
    """One shape's mesh and the instances (bodies) drawn with it, in their colours or
    all in `color` (a visual part's own)."""

    def __init__(self, ctx, programs, mesh, bodies, color=None):
        verts, idx = mesh
        self.bodies = np.asarray(bodies, np.int64)
        self.color = None if color is None else np.asarray(color, np.float32)
        self.vbo = ctx.buffer(verts.tobytes())
        self.ibo = ctx.buffer(idx.tobytes())
        self.inst = ctx.buffer(reserve=len(bodies) * 19 * 4)
        mesh_prog, shadow_prog = programs
        self.vao = ctx.vertex_array(mesh_prog, [(self.vbo, "3f 3f", "in_position", "in_normal"),
                                                (self.inst, "16f 3f/i", "in_model", "in_color")], self.ibo)
        self.shadow_vao = ctx.vertex_array(shadow_prog, [(self.vbo, "3f 12x", "in_position"),
                                                         (self.inst, "16f 12x/i", "in_model")], self.ibo)

    def upload(self, matrices, colors):
        colors = colors[self.bodies] if self.color is None else np.broadcast_to(self.color, (len(self.bodies), 3))
        data = np.hstack([matrices[self.bodies], colors]).astype(np.float32)
        self.inst.write(data.tobytes())

    def release(self):
        for obj in (self.vao, self.shadow_vao, self.vbo, self.ibo, self.inst):
            obj.release()


class SceneRenderer:
    """Draw snapshots of one world. Options: shadows, and the overlays `joints`,
    `limits`, `com` (centres of mass), `violation` (tint bodies by joint error)."""

    def __init__(self, ctx, snapshot, shadow_size=2048):
        self.ctx = ctx
        self.mesh_prog = _program(ctx, "mesh")
        self.shadow_prog = _program(ctx, "shadow")
        self.line_prog = _program(ctx, "line")
        self.bg_prog = _program(ctx, "background")
        self.bg_vao = ctx.vertex_array(self.bg_prog, [])
        self.shadow_tex = self.shadow_fbo = None
        self.set_shadow_size(shadow_size)
        self.shadows = True
        self.overlays = {"joints": False, "limits": False, "com": False, "violation": False, "contacts": False}
        self.line_vbo = ctx.buffer(reserve=6 * 4 * 2)
        self.line_vao = None
        self.ropes = RopeSet(ctx)
        self._build(snapshot)

    def _build(self, snap):
        groups = {}
        shapes = snap["shapes"]
        self.radii = np.array([meshes.bounding_radius(s) for s in shapes])
        visuals = snap.get("visual_meshes") or [None] * len(shapes)
        for i, shape in enumerate(shapes):
            if shape.kind == "plane":
                continue
            if is_parts(visuals[i]):            # several meshes and shapes, each posed and coloured
                parts = [(p, visual_mesh.part_mesh(p)) for p in visuals[i]]
                parts = [(p, m) for p, m in parts if m is not None]
                for p, m in parts:
                    groups.setdefault(("part", p), (m, [], p.color))[1].append(i)
                if parts:
                    self.radii[i] = max(visual_mesh.bounding_radius(m) for _, m in parts)
                if parts or not visuals[i]:         # no parts at all: nothing to draw (a bare URDF link)
                    continue
                mesh = None
            else:
                mesh = visual_mesh.mesh_for(visuals[i]) if visuals[i] else None
            if mesh is not None:
                key = ("file", str(visuals[i]))
                if hasattr(shape, "frame"):         # a hull's body frame is not its mesh's: draw in the mesh's
                    mesh = visual_mesh.moved(mesh, *shape.frame)
                    key += (id(shape),)
                groups.setdefault(key, (mesh, [], None))[1].append(i)
                self.radii[i] = visual_mesh.bounding_radius(mesh)
            else:
                groups.setdefault(meshes.shape_key(shape), (meshes.for_shape(shape), [], None))[1].append(i)
        progs = (self.mesh_prog, self.shadow_prog)
        self.batches = [_Batch(self.ctx, progs, mesh, idx, color) for mesh, idx, color in groups.values()]
        self.ground = _Batch(self.ctx, progs, meshes.ground(), [0])
        self.base_colors = np.asarray(snap["colors"], np.float32)
        self.has_plane = any(s.kind == "plane" for s in shapes)

    @property
    def shadow_size(self):
        return self.shadow_tex.size[0]

    def set_shadow_size(self, n):
        """Shadow map of n × n texels (2048 by default, 1024 in the light rendering mode)."""
        n = int(n)
        if self.shadow_tex is not None:
            if self.shadow_tex.size == (n, n):
                return
            self.shadow_fbo.release()
            self.shadow_tex.release()
        self.shadow_tex = self.ctx.depth_texture((n, n))
        self.shadow_tex.compare_func = "<="
        self.shadow_tex.repeat_x = self.shadow_tex.repeat_y = False
        self.shadow_fbo = self.ctx.framebuffer(depth_attachment=self.shadow_tex)

    def release(self):
        for b in self.batches + [self.ground]:
            b.release()
        self.ropes.release()

    # ------------------------------------------------------------------ helpers
    def _light_view_proj(self, snap):
        pos, radii = snap["position"][1:], self.radii[1:len(snap["position"])]
        rope_pos, rope_radii = self.ropes.bounds        # the ropes drawn this frame
        if len(rope_pos):
            pos, radii = np.vstack([pos, rope_pos]), np.concatenate([radii, rope_radii])
        if len(pos) == 0:
            pos, radii = np.zeros((1, 3)), np.zeros(1)
        centre = pos.mean(axis=0)
        centre[2] = max(centre[2], 0.0) * 0.5
        radius = float(np.max(np.linalg.norm(pos - centre, axis=1) + radii, initial=1.0)) + 0.5
        eye = centre - LIGHT_DIR * radius * 3.0
        view = matrix44.create_look_at(eye, centre, (0.0, 0.0, 1.0))
        proj = matrix44.create_orthogonal_projection(-radius, radius, -radius, radius, radius * 0.5, radius * 6.0)
        return (view @ proj).astype(np.float32)     # pyrr row-vector order = GL column-major bytes

    def _colors(self, snap):
        colors = self.base_colors.copy()
        if self.overlays["violation"] and len(snap["joint_error"]):
            err = np.zeros(len(colors))
            for j, (a, b) in enumerate(snap["joint_bodies"]):
                err[a] = max(err[a], snap["joint_error"][j])
                err[b] = max(err[b], snap["joint_error"][j])
            t = np.clip(err / 0.01, 0.0, 1.0)[:, None]      # green → red at 1 cm / 0.01 rad
            colors = ((1 - t) * np.array([0.2, 0.75, 0.3]) + t * np.array([0.9, 0.15, 0.1])).astype(np.float32)
        return colors

    def _lines(self, snap):
        segs = []          # rows: x y z r g b (two rows per segment)

        def seg(p, q, c):
            segs.append(np.concatenate([p, c]))
            segs.append(np.concatenate([q, c]))

        scale = 0.15
        if self.overlays["joints"]:
            for j in range(len(snap["joint_names"])):
                p = snap["joint_anchor"][j]
                for k, c in enumerate(((0.95, 0.2, 0.2), (0.2, 0.85, 0.2), (0.25, 0.4, 1.0))):
                    seg(p, p + snap["joint_frame"][j][:, k] * scale, c)
        if self.overlays["limits"]:
            for j, kind in enumerate(snap["joint_kinds"]):
                if not snap["joint_limit_on"][j, 0]:
                    continue
                p, f = snap["joint_anchor"][j], snap["joint_frame"][j]
                lo, hi = snap["joint_limit_lo"][j, 0], snap["joint_limit_hi"][j, 0]
                if kind in ("revolute", "universal"):
                    ang = np.linspace(lo, hi, 33)
                    pts = p + 0.5 * scale * (np.outer(np.cos(ang), f[:, 1]) + np.outer(np.sin(ang), f[:, 2]))
                    for a, b in zip(pts[:-1], pts[1:]):
                        seg(a, b, (1.0, 0.8, 0.1))
                    seg(p, pts[0], (1.0, 0.5, 0.1))
                    seg(p, pts[-1], (1.0, 0.5, 0.1))
                elif kind == "prismatic":
                    seg(p + f[:, 0] * lo, p + f[:, 0] * hi, (1.0, 0.8, 0.1))
                elif kind == "spherical":
                    cone = hi
                    ang = np.linspace(0, 2 * np.pi, 33)
                    ring = (np.cos(cone) * f[:, 0] + np.sin(cone) * (np.outer(np.cos(ang), f[:, 1])
                                                                      + np.outer(np.sin(ang), f[:, 2])))
                    pts = p + scale * ring
                    for a, b in zip(pts[:-1], pts[1:]):
                        seg(a, b, (1.0, 0.8, 0.1))
        if self.overlays["com"]:
            for i in range(1, len(snap["position"])):
                if snap["shapes"][i].kind == "plane":
                    continue
                c = snap["position"][i]
                r = max(self.radii[i], 0.05) * 1.3
                for k in range(3):
                    e = np.zeros(3)
                    e[k] = r
                    seg(c - e, c + e, (0.05, 0.05, 0.05))
        contacts = snap.get("contacts")
        if self.overlays["contacts"] and contacts is not None:
            # each contact point: a cross on the surface, its normal (a → b) as a 10 cm stick
            for p, n in zip(contacts["point"], contacts["normal"]):
                seg(p, p + 0.1 * n, (1.0, 0.2, 0.85))
                t = np.cross(n, (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0))
                t *= 0.015 / np.linalg.norm(t)
                u = np.cross(n, t)
                seg(p - t, p + t, (1.0, 0.2, 0.85))
                seg(p - u, p + u, (1.0, 0.2, 0.85))
        return np.array(segs, np.float32) if segs else None

    # ------------------------------------------------------------------ draw
    def draw(self, snap, camera, size, target_fbo):
        """Render `snap` from `camera` into `target_fbo` of `size` (w, h) pixels."""
        ctx = self.ctx
        matrices = model_matrices(snap["position"], snap["orientation"])
        colors = self._colors(snap)
        for b in self.batches:
            b.upload(matrices, colors)
        ground = np.hstack([np.eye(4, dtype=np.float32).reshape(1, 16),
                            np.array([GROUND_COLOR], np.float32)])
        self.ground.inst.write(ground.tobytes())
        self.ropes.update(snap.get("ropes"))
        light = self._light_view_proj(snap)
        # 1. shadow map
        if self.shadows:
            self.shadow_fbo.use()
            self.shadow_fbo.clear(depth=1.0)
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.disable(moderngl.CULL_FACE)
            self.shadow_prog["u_light_view_proj"].write(light.tobytes())
            for b in self.batches:
                b.shadow_vao.render(instances=len(b.bodies))
            self.ropes.draw_shadow(light.tobytes())
        # 2. scene
        target_fbo.use()
        ctx.viewport = (0, 0, size[0], size[1])
        target_fbo.clear(*SKY_BOTTOM, 1.0, depth=1.0)
        ctx.disable(moderngl.DEPTH_TEST)
        self.bg_prog["u_top"].value = SKY_TOP
        self.bg_prog["u_bottom"].value = SKY_BOTTOM
        self.bg_vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.enable(moderngl.DEPTH_TEST)
        vp = camera.view_proj(size[0] / size[1]).T.astype(np.float32)   # column-major bytes
        p = self.mesh_prog
        p["u_view_proj"].write(vp.tobytes())
        p["u_light_view_proj"].write(light.tobytes())
        p["u_light_dir"].value = tuple(LIGHT_DIR)
        p["u_eye"].value = tuple(camera.eye)
        p["u_shadows"].value = 1.0 if self.shadows else 0.0
        self.shadow_tex.use(location=0)
        p["u_shadow_map"].value = 0
        p["u_grid"].value = 1.0
        self.ground.vao.render(instances=1)
        p["u_grid"].value = 0.0
        for b in self.batches:
            b.vao.render(instances=len(b.bodies))
        self.ropes.draw({"u_view_proj": vp.tobytes(), "u_light_view_proj": light.tobytes(),
                         "u_light_dir": tuple(LIGHT_DIR), "u_eye": tuple(camera.eye),
                         "u_shadows": 1.0 if self.shadows else 0.0, "u_shadow_map": 0, "u_grid": 0.0})
        lines = self._lines(snap)
        if lines is not None:
            ctx.disable(moderngl.DEPTH_TEST)
            data = lines.tobytes()
            if self.line_vbo.size < len(data):
                self.line_vbo.release()
                self.line_vbo = ctx.buffer(reserve=len(data) * 2)
                self.line_vao = None
            self.line_vbo.write(data)
            if self.line_vao is None:
                self.line_vao = ctx.vertex_array(self.line_prog, [(self.line_vbo, "3f 3f", "in_position", "in_color")])
            self.line_prog["u_view_proj"].write(vp.tobytes())
            self.line_vao.render(moderngl.LINES, vertices=len(lines))
            ctx.enable(moderngl.DEPTH_TEST)
