#version 330 core
#include "rope_skin.glsl"
// A rope as a skinned tube, lit by mesh.frag like the bodies. in_stripe = 1 on the
// band along the d1 side of the material frame, which shows the twist.
in float in_u;
in vec3 in_offset;
in float in_stripe;
uniform mat4 u_view_proj;
uniform mat4 u_light_view_proj;
uniform vec3 u_color;
uniform vec3 u_stripe_color;
out vec3 v_world;
out vec3 v_normal;
out vec3 v_color;
out vec4 v_light_clip;
void main() {
    vec3 world, normal;
    rope_skin(in_u, in_offset, world, normal);
    v_world = world;
    v_normal = normal;
    v_color = mix(u_color, u_stripe_color, in_stripe);
    v_light_clip = u_light_view_proj * vec4(world, 1.0);
    gl_Position = u_view_proj * vec4(world, 1.0);
}
