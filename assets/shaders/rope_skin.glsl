// Dual-quaternion skinning of a rope tube (shared by rope.vert and rope_shadow.vert).
//
// Bones are the rope's elements. u_bones holds three RGBA32F texels per element j,
// laid out row by row in a texture of any width (texel k = 3j + c at (k % width, k / width)):
//   c = 0: real part q_r = the element's unit quaternion (x, y, z, w)
//   c = 1: dual part q_d = ½ (t, 0) ⊗ q_r, t = node_j − R_j (0, 0, s_j)
//   c = 2: (s_j, l_j, 0, 0): arc length at the element's start and its length (m)
// The bind pose is the rope straight along +z with its material frame = identity, so
// (q_r, q_d) maps bind coordinates to the world. A vertex is given by in_u = j + t (the
// element and the fraction t along it) and a unit offset (x, y, dz) in the element's
// material frame (x = d1, y = d2, dz along d3, non-zero on the end caps), scaled by the
// radius. Each vertex is blended between its element and the nearest neighbour with
// linear weights: 1 at an element's middle, ½ at a node, so joints bend smoothly.

uniform sampler2D u_bones;
uniform int u_n_bones;
uniform float u_radius;

vec4 bone_texel(int j, int c) {
    int k = 3 * j + c;
    int w = textureSize(u_bones, 0).x;
    return texelFetch(u_bones, ivec2(k % w, k / w), 0);
}

vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

// Skin a vertex: world position and world normal (of the unit offset direction `n`).
void rope_skin(float u, vec3 offset, out vec3 world, out vec3 normal) {
    int j = clamp(int(floor(u)), 0, u_n_bones - 1);
    float t = u - float(j);
    int k = j;
    float wk = 0.0;
    if (t < 0.5 && j > 0) { k = j - 1; wk = 0.5 - t; }
    else if (t > 0.5 && j < u_n_bones - 1) { k = j + 1; wk = t - 0.5; }
    vec4 sl = bone_texel(j, 2);
    vec3 bind = vec3(u_radius * offset.xy, sl.x + t * sl.y + u_radius * offset.z);
    vec4 r = bone_texel(j, 0) * (1.0 - wk);
    vec4 d = bone_texel(j, 1) * (1.0 - wk);
    vec4 rk = bone_texel(k, 0);
    float s = dot(rk, r) < 0.0 ? -wk : wk;      // blend in one hemisphere (q and −q are one rotation)
    r += rk * s;
    d += bone_texel(k, 1) * s;
    float inv = 1.0 / length(r);
    r *= inv;
    d *= inv;
    vec3 trans = 2.0 * (r.w * d.xyz - d.w * r.xyz + cross(r.xyz, d.xyz));
    world = quat_rotate(r, bind) + trans;
    normal = quat_rotate(r, offset);
}
