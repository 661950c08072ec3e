#version 330 core
// Instanced body meshes: per-vertex position/normal in the shape's frame,
// per-instance model matrix (body pose) and colour.
in vec3 in_position;
in vec3 in_normal;
in mat4 in_model;
in vec3 in_color;
uniform mat4 u_view_proj;
uniform mat4 u_light_view_proj;
out vec3 v_world;
out vec3 v_normal;
out vec3 v_color;
out vec4 v_light_clip;
void main() {
    vec4 world = in_model * vec4(in_position, 1.0);
    v_world = world.xyz;
    v_normal = mat3(in_model) * in_normal;
    v_color = in_color;
    v_light_clip = u_light_view_proj * world;
    gl_Position = u_view_proj * world;
}
