"""Ropes drawn as skinned tubes (seed 002: "a skinned mesh, bones along the rope").

One tube mesh per rope, built once (numpy, vectorized) for its number of elements and
rebuilt only when that number changes: rings of vertices around the rope, several rings
per element, hemispherical caps at the ends. The bones are the rope's elements; each
frame their poses go to the GPU as dual quaternions in an RGBA32F texture (three texels
per element, so a rope of thousands of elements needs no large uniform array), and the
vertex shader (assets/shaders/rope_skin.glsl) blends every vertex between its element
and the nearest neighbour with dual-quaternion skinning — rigid blends, so a twisted
rope keeps its thickness (no "candy-wrapper" collapse of linear blend skinning). The
surface is lit by the bodies' fragment shader (mesh.frag: Blinn-Phong, shadow map) and
drawn into the shadow map with shadow.frag, so it looks and shadows like the bodies.

A band of the rope (the faces around the material director d1) takes a second colour,
so the twist of the material frame shows as the band winding round the rope.

Input: the snapshot's "ropes" list, entries {"name", "radius" (m), "color" (r, g, b),
"positions" (N,3), "frames" (N−1,4) quaternions (x, y, z, w) with local z = d3 along
the segment from node j to j+1}; an optional "stripe_color" overrides the band colour.
"""
import re
from pathlib import Path

import moderngl
import numpy as np

SHADERS = Path(__file__).resolve().parent.parent / "assets" / "shaders"
AROUND = 16                # vertices around the tube
STRIPE_FACES = 2           # faces of the d1 band (centred on d1): 2 of 16 → 45°
CAP_RINGS = 4              # rings of each hemispherical end cap
TEXTURE_WIDTH = 1024       # bone texels per texture row
BONE_UNIT = 1              # texture unit of the bone texture (the shadow map is on 0)


def _source(name):
    """A shader's text with `#include "file"` lines replaced by that file's text."""
    text = (SHADERS / name).read_text()
    return re.sub(r'^#include "([^"]+)"[ \t]*$', lambda m: (SHADERS / m.group(1)).read_text(), text, flags=re.M)


def rope_programs(ctx):
    """(lit program, shadow program): skinned vertex shaders with mesh.frag / shadow.frag."""
    lit = ctx.program(vertex_shader=_source("rope.vert"), fragment_shader=_source("mesh.frag"))
    shadow = ctx.program(vertex_shader=_source("rope_shadow.vert"), fragment_shader=_source("shadow.frag"))
    return lit, shadow


def rings_per_element(n_elements):
    """Rings of vertices per element: smooth bends on short ropes, bounded cost on long ones."""
    return 4 if n_elements <= 250 else (2 if n_elements <= 1000 else 1)


def tube(n_elements, rings=None, around=AROUND, stripe_faces=STRIPE_FACES, cap_rings=CAP_RINGS):
    """The bind-pose tube of a rope of `n_elements` elements.

    Returns (vertices (n, 5) float32 = u, offset x, y, dz, stripe; indices (m,) uint32).
    u = j + t places a vertex at fraction t of element j (u = 0 … n_elements); the
    offset is a unit vector in the material frame (x = d1, y = d2, dz along d3, non-zero
    only on the caps) that the shader scales by the radius and also uses as the normal.
    The columns around the tube form two strips, the band (stripe = 1) and the rest,
    with duplicated vertices at their borders so the band has sharp edges.
    """
    if n_elements < 1:
        raise ValueError("a rope has at least one element")
    rings = rings or rings_per_element(n_elements)
    half = stripe_faces // 2
    step = 2.0 * np.pi / around
    band = np.arange(-half, half + 1) * step
    rest = np.arange(half, around - half + 1) * step
    angles = np.concatenate([band, rest])
    stripe = np.concatenate([np.ones(len(band)), np.zeros(len(rest))])
    # rows: (u, radial scale, axial offset): start cap from its pole, the tube, end cap to its pole
    phi = np.arange(cap_rings, 0, -1) / cap_rings * (np.pi / 2)
    u_tube = np.arange(n_elements * rings + 1) / rings
    rows = np.concatenate([
        np.column_stack([np.zeros(cap_rings), np.cos(phi), -np.sin(phi)]),
        np.column_stack([u_tube, np.ones_like(u_tube), np.zeros_like(u_tube)]),
        np.column_stack([np.full(cap_rings, float(n_elements)), np.cos(phi[::-1]), np.sin(phi[::-1])]),
    ])
    n_rows, n_cols = len(rows), len(angles)
    v = np.empty((n_rows, n_cols, 5))
    v[:, :, 0] = rows[:, 0:1]
    v[:, :, 1] = rows[:, 1:2] * np.cos(angles)
    v[:, :, 2] = rows[:, 1:2] * np.sin(angles)
    v[:, :, 3] = rows[:, 2:3]
    v[:, :, 4] = stripe
    cols = np.delete(np.arange(n_cols - 1), len(band) - 1)       # no quad across the band's border
    i, c = np.meshgrid(np.arange(n_rows - 1), cols, indexing="ij")
    a = i * n_cols + c
    b, d = a + 1, a + n_cols
    idx = np.stack([a, b, d + 1, a, d + 1, d], axis=-1).reshape(-1)
    return v.reshape(-1, 5).astype(np.float32), idx.astype(np.uint32)


def bone_texels(positions, frames):
    """Per element j: dual quaternion (q_r, q_d) of the map bind pose → world, and (s_j, l_j).

    (E, 3, 4) float32: [q_r (x, y, z, w)], [q_d], [s_j, l_j, 0, 0]. The bind pose is the
    rope straight along +z from arc length 0 with an identity material frame; element j
    starts at node j with orientation q_j and runs for its current length l_j.
    """
    p = np.asarray(positions, float)
    q = np.asarray(frames, float)
    q = q / np.linalg.norm(q, axis=1)[:, None]
    seg_len = np.linalg.norm(np.diff(p, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg_len)[:-1]])
    x, y, z, w = q.T
    d3 = np.column_stack([2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y)])
    t = p[:-1] - s[:, None] * d3                    # bind point (0, 0, s_j) must land on node j
    vq = q[:, :3]
    out = np.zeros((len(q), 3, 4), np.float32)
    out[:, 0] = q
    out[:, 1, :3] = 0.5 * (w[:, None] * t + np.cross(t, vq))      # ½ (t, 0) ⊗ q
    out[:, 1, 3] = -0.5 * np.einsum("ij,ij->i", t, vq)
    out[:, 2, 0] = s
    out[:, 2, 1] = seg_len
    return out


def bone_texture_size(n_elements):
    """(width, height) of the bone texture: 3 texels per element, rows of ≤ TEXTURE_WIDTH."""
    texels = 3 * n_elements
    width = min(texels, TEXTURE_WIDTH)
    return width, -(-texels // width)


def stripe_color(color):
    """The band's colour: dark on a light rope, light on a dark one."""
    c = np.asarray(color, float)
    lum = float(c @ (0.3, 0.59, 0.11))
    return tuple(c * 0.22) if lum > 0.3 else tuple(c * 0.3 + 0.7)


class RopeMesh:
    """The GPU side of one rope: its tube (fixed for a number of elements) and bone texture."""

    def __init__(self, ctx, programs, n_elements):
        self.ctx = ctx
        self.n_elements = n_elements
        verts, idx = tube(n_elements)
        self.vbo = ctx.buffer(verts.tobytes())
        self.ibo = ctx.buffer(idx.tobytes())
        lit, shadow = programs
        self.vao = ctx.vertex_array(lit, [(self.vbo, "1f 3f 1f", "in_u", "in_offset", "in_stripe")], self.ibo)
        self.shadow_vao = ctx.vertex_array(shadow, [(self.vbo, "1f 3f 4x", "in_u", "in_offset")], self.ibo)
        width, height = bone_texture_size(n_elements)
        self.texels = np.zeros((width * height, 4), np.float32)
        self.bones = ctx.texture((width, height), 4, dtype="f4")
        self.bones.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.bones.repeat_x = self.bones.repeat_y = False
        self.radius = 0.01
        self.color = (0.8, 0.8, 0.8)
        self.stripe = stripe_color(self.color)

    def upload(self, rope):
        """Take this frame's pose, radius and colours from a snapshot entry."""
        self.texels[:3 * self.n_elements] = bone_texels(rope["positions"], rope["frames"]).reshape(-1, 4)
        self.bones.write(self.texels.tobytes())
        self.radius = float(rope.get("radius", 0.015))
        self.color = tuple(float(c) for c in rope.get("color", (0.8, 0.8, 0.8)))
        stripe = rope.get("stripe_color")
        self.stripe = tuple(float(c) for c in (stripe_color(self.color) if stripe is None else stripe))

    def _bind(self, prog):
        self.bones.use(location=BONE_UNIT)
        prog["u_bones"].value = BONE_UNIT
        prog["u_n_bones"].value = self.n_elements
        prog["u_radius"].value = self.radius

    def draw(self, prog):
        self._bind(prog)
        prog["u_color"].value = self.color
        prog["u_stripe_color"].value = self.stripe
        self.vao.render()

    def draw_shadow(self, prog):
        self._bind(prog)
        self.shadow_vao.render()

    def release(self):
        for obj in (self.vao, self.shadow_vao, self.vbo, self.ibo, self.bones):
            obj.release()


def _valid(rope):
    try:
        p = np.asarray(rope["positions"], float)
        q = np.asarray(rope["frames"], float)
    except (KeyError, TypeError, ValueError):
        return None
    if p.ndim != 2 or p.shape[1] != 3 or len(p) < 2 or q.shape != (len(p) - 1, 4):
        return None
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        return None
    return p, q


class RopeSet:
    """Every rope of the snapshots drawn so far, by name: meshes are created when a rope
    appears, rebuilt when its number of nodes changes and released when it is gone."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.programs = rope_programs(ctx)
        self.meshes = {}
        self.drawn = []            # meshes to draw this frame, in snapshot order
        self.bounds = (np.zeros((0, 3)), np.zeros(0))      # nodes and radii, for the light frustum

    @property
    def lit(self):
        return self.programs[0]

    @property
    def shadow(self):
        return self.programs[1]

    def update(self, ropes):
        """Match the meshes to the snapshot's "ropes" list (None or empty: no ropes)."""
        seen, self.drawn = {}, []
        points, radii = [], []
        for i, rope in enumerate(ropes or ()):
            arrays = _valid(rope)
            if arrays is None:
                continue                        # malformed or non-finite: nothing to draw
            p, q = arrays
            key = str(rope.get("name", i))
            if key in seen:
                key = f"{key}#{i}"
            mesh = self.meshes.get(key)
            if mesh is not None and mesh.n_elements != len(q):
                mesh.release()
                mesh = None
            if mesh is None:
                mesh = self.meshes[key] = RopeMesh(self.ctx, self.programs, len(q))
            mesh.upload({**rope, "positions": p, "frames": q})
            seen[key] = mesh
            self.drawn.append(mesh)
            points.append(p)
            radii.append(np.full(len(p), mesh.radius))
        for key in [k for k in self.meshes if k not in seen]:
            self.meshes.pop(key).release()
        self.bounds = ((np.concatenate(points), np.concatenate(radii)) if points
                       else (np.zeros((0, 3)), np.zeros(0)))

    def draw_shadow(self, light_view_proj):
        if not self.drawn:
            return
        self.shadow["u_light_view_proj"].write(light_view_proj)
        for mesh in self.drawn:
            mesh.draw_shadow(self.shadow)

    def draw(self, uniforms):
        """Draw into the bound framebuffer; `uniforms`: the lit uniforms of mesh.frag and the
        view/light matrices as set on the bodies' program (name → bytes or value)."""
        if not self.drawn:
            return
        prog = self.lit
        for name, value in uniforms.items():
            if isinstance(value, bytes):
                prog[name].write(value)
            else:
                prog[name].value = value
        for mesh in self.drawn:
            mesh.draw(prog)

    def release(self):
        for mesh in self.meshes.values():
            mesh.release()
        self.meshes.clear()
        self.drawn = []
        for prog in self.programs:
            prog.release()
