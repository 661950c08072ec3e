#version 330 core
// Debug lines (joint frames, limits, centres of mass) in world coordinates.
in vec3 in_position;
in vec3 in_color;
uniform mat4 u_view_proj;
out vec3 v_color;
void main() {
    v_color = in_color;
    gl_Position = u_view_proj * vec4(in_position, 1.0);
}
