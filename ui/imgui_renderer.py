"""Draws ImGui's draw data with moderngl (no PyOpenGL).

ImGui ≥ 1.92 owns its textures (the font atlas grows as glyphs are needed): every
frame, before drawing, `platform_io.textures` lists textures to create, update or
destroy, and this renderer does it (ImGuiBackendFlags_RendererHasTextures). Texture
ids handed to ImGui are the GL names of moderngl textures.
"""
import ctypes

import moderngl
import numpy as np
from imgui_bundle import imgui

VERTEX_SHADER = """
#version 330
uniform mat4 u_proj;
in vec2 in_pos;
in vec2 in_uv;
in vec4 in_color;
out vec2 v_uv;
out vec4 v_color;
void main() {
    v_uv = in_uv;
    v_color = in_color;
    gl_Position = u_proj * vec4(in_pos, 0.0, 1.0);
}
"""

FRAGMENT_SHADER = """
#version 330
uniform sampler2D u_texture;
in vec2 v_uv;
in vec4 v_color;
out vec4 f_color;
void main() {
    f_color = v_color * texture(u_texture, v_uv);
}
"""


class ImGuiRenderer:
    """Renders `imgui.get_draw_data()` into the bound framebuffer of a moderngl context."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.prog = ctx.program(vertex_shader=VERTEX_SHADER, fragment_shader=FRAGMENT_SHADER)
        self.prog["u_texture"].value = 0
        self.vbo = ctx.buffer(reserve=1 << 16, dynamic=True)
        self.ibo = ctx.buffer(reserve=1 << 16, dynamic=True)
        self.vao = self._vertex_array()
        self.textures = {}          # GL name → moderngl.Texture
        io = imgui.get_io()
        io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
        pio = imgui.get_platform_io()
        size = ctx.info["GL_MAX_TEXTURE_SIZE"]
        pio.renderer_texture_max_width = pio.renderer_texture_max_height = size

    def _vertex_array(self):
        return self.ctx.vertex_array(self.prog, [(self.vbo, "2f 2f 4f1", "in_pos", "in_uv", "in_color")],
                                     self.ibo, index_element_size=imgui.INDEX_SIZE)

    # ------------------------------------------------------------------ textures
    def _update_textures(self):
        for tex in imgui.get_platform_io().textures:
            if tex.status != imgui.ImTextureStatus.ok:
                self._update_texture(tex)

    def _update_texture(self, tex):
        status = tex.status
        if status == imgui.ImTextureStatus.want_create:
            pixels = tex.get_pixels_array()
            t = self.ctx.texture((tex.width, tex.height), 4, np.ascontiguousarray(pixels).tobytes())
            t.filter = (moderngl.LINEAR, moderngl.LINEAR)
            t.repeat_x = t.repeat_y = False
            self.textures[t.glo] = t
            tex.set_tex_id(t.glo)
            tex.status = imgui.ImTextureStatus.ok
        elif status == imgui.ImTextureStatus.want_updates:
            t = self.textures[tex.tex_id]
            pixels = tex.get_pixels_array().reshape(tex.height, tex.width, 4)
            for r in tex.updates:
                block = np.ascontiguousarray(pixels[r.y:r.y + r.h, r.x:r.x + r.w])
                t.write(block.tobytes(), viewport=(r.x, r.y, r.w, r.h))
            tex.status = imgui.ImTextureStatus.ok
        elif status == imgui.ImTextureStatus.want_destroy:
            t = self.textures.pop(tex.tex_id, None)
            if t is not None:
                t.release()
            tex.set_tex_id(0)
            tex.status = imgui.ImTextureStatus.destroyed

    # ------------------------------------------------------------------ draw
    def render(self, draw_data, fb_size):
        """Draw `draw_data` over the bound framebuffer of `fb_size` (w, h) pixels."""
        self._update_textures()
        fb_w, fb_h = fb_size
        if fb_w <= 0 or fb_h <= 0:
            return
        ctx = self.ctx
        l, t = draw_data.display_pos.x, draw_data.display_pos.y
        r, b = l + draw_data.display_size.x, t + draw_data.display_size.y
        sx = fb_w / max(draw_data.display_size.x, 1.0)
        sy = fb_h / max(draw_data.display_size.y, 1.0)
        proj = np.array([[2.0 / (r - l), 0.0, 0.0, 0.0],
                         [0.0, 2.0 / (t - b), 0.0, 0.0],
                         [0.0, 0.0, -1.0, 0.0],
                         [(r + l) / (l - r), (t + b) / (b - t), 0.0, 1.0]], np.float32)
        self.prog["u_proj"].write(proj.tobytes())
        ctx.viewport = (0, 0, fb_w, fb_h)
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA, moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA)
        ctx.blend_equation = moderngl.FUNC_ADD
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        try:
            for cmd_list in draw_data.cmd_lists:
                vtx = ctypes.string_at(cmd_list.vtx_buffer.data_address(), cmd_list.vtx_buffer.size() * imgui.VERTEX_SIZE)
                idx = ctypes.string_at(cmd_list.idx_buffer.data_address(), cmd_list.idx_buffer.size() * imgui.INDEX_SIZE)
                if len(vtx) > self.vbo.size or len(idx) > self.ibo.size:
                    self.vao.release()
                    if len(vtx) > self.vbo.size:
                        self.vbo.orphan(2 * len(vtx))
                    if len(idx) > self.ibo.size:
                        self.ibo.orphan(2 * len(idx))
                    self.vao = self._vertex_array()
                self.vbo.write(vtx)
                self.ibo.write(idx)
                for cmd in cmd_list.cmd_buffer:
                    x0, y0, x1, y1 = cmd.clip_rect
                    x0, x1 = max((x0 - l) * sx, 0.0), min((x1 - l) * sx, fb_w)
                    y0, y1 = max((y0 - t) * sy, 0.0), min((y1 - t) * sy, fb_h)
                    if x1 <= x0 or y1 <= y0:
                        continue
                    ctx.scissor = (int(x0), int(fb_h - y1), int(x1 - x0 + 0.5), int(y1 - y0 + 0.5))
                    tex = self.textures.get(cmd.tex_ref.get_tex_id())
                    if tex is None:
                        continue
                    tex.use(0)
                    self.vao.render(moderngl.TRIANGLES, vertices=cmd.elem_count, first=cmd.idx_offset)
        finally:
            ctx.scissor = None
            ctx.disable(moderngl.BLEND)

    def shutdown(self):
        """Release every GL object and tell ImGui its textures are gone."""
        for tex in imgui.get_platform_io().textures:
            if tex.status != imgui.ImTextureStatus.destroyed:
                tex.set_tex_id(0)
                tex.status = imgui.ImTextureStatus.destroyed
        for t in self.textures.values():
            t.release()
        self.textures.clear()
        for obj in (self.vao, self.vbo, self.ibo, self.prog):
            obj.release()
        imgui.get_io().backend_flags &= ~imgui.BackendFlags_.renderer_has_textures
