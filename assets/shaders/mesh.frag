#version 330 core
// Blinn-Phong with one directional light, a PCF-filtered shadow map and a
// procedural grid for the ground (u_grid = 1).
in vec3 v_world;
in vec3 v_normal;
in vec3 v_color;
in vec4 v_light_clip;
uniform vec3 u_light_dir;      // direction the light travels (unit)
uniform vec3 u_eye;
uniform sampler2DShadow u_shadow_map;
uniform float u_shadows;       // 1 on, 0 off
uniform float u_grid;
out vec4 f_color;

float shadow_factor() {
    vec3 p = v_light_clip.xyz / v_light_clip.w * 0.5 + 0.5;
    if (p.x < 0.0 || p.x > 1.0 || p.y < 0.0 || p.y > 1.0 || p.z > 1.0) return 1.0;
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_map, 0));
    float lit = 0.0;
    for (int x = -1; x <= 1; ++x)
        for (int y = -1; y <= 1; ++y)
            lit += texture(u_shadow_map, vec3(p.xy + vec2(x, y) * texel, p.z - 0.0015));
    return lit / 9.0;
}

void main() {
    vec3 n = normalize(v_normal);
    vec3 l = -u_light_dir;
    vec3 v = normalize(u_eye - v_world);
    if (!gl_FrontFacing) n = -n;
    vec3 base = v_color;
    if (u_grid > 0.5) {
        vec2 g = abs(fract(v_world.xy - 0.5) - 0.5) / fwidth(v_world.xy);
        vec2 g10 = abs(fract(v_world.xy / 10.0 - 0.5) - 0.5) / fwidth(v_world.xy / 10.0);
        float line = 1.0 - min(min(g.x, g.y), 1.0);
        float major = 1.0 - min(min(g10.x, g10.y), 1.0);
        base = mix(base, base * 0.72, max(line * 0.6, major));
    }
    float shadow = mix(1.0, shadow_factor(), u_shadows);
    float diffuse = max(dot(n, l), 0.0) * shadow;
    vec3 h = normalize(l + v);
    float specular = pow(max(dot(n, h), 0.0), 48.0) * 0.35 * shadow * (1.0 - u_grid);
    float hemi = 0.5 + 0.5 * n.z;                     // sky above, ground bounce below
    vec3 ambient = base * mix(vec3(0.22, 0.21, 0.2), vec3(0.42, 0.44, 0.48), hemi);
    vec3 color = ambient + base * diffuse * vec3(1.0, 0.97, 0.92) * 0.85 + specular;
    if (u_grid > 0.5) {                               // fade the floor into the background
        float d = length(v_world.xy - u_eye.xy);
        color = mix(color, vec3(0.78, 0.8, 0.84), smoothstep(15.0, 60.0, d));
    }
    f_color = vec4(pow(color, vec3(1.0 / 1.1)), 1.0);
}
