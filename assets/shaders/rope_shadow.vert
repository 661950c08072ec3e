#version 330 core
#include "rope_skin.glsl"
// Depth of a skinned rope from the light, for the shadow map (with shadow.frag).
in float in_u;
in vec3 in_offset;
uniform mat4 u_light_view_proj;
void main() {
    vec3 world, normal;
    rope_skin(in_u, in_offset, world, normal);
    gl_Position = u_light_view_proj * vec4(world, 1.0);
}
