#version 330 core
// Depth from the light, for the shadow map.
in vec3 in_position;
in mat4 in_model;
uniform mat4 u_light_view_proj;
void main() {
    gl_Position = u_light_view_proj * in_model * vec4(in_position, 1.0);
}
