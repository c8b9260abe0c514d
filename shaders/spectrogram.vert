#version 330 core
// One tile: a quad in pixel coordinates; u runs across the tile's frames.
layout(location = 0) in vec2 position;  // pixels, origin top-left
layout(location = 1) in float u;
uniform vec2 viewport;                  // canvas size in pixels
out float v_u;

void main() {
    vec2 ndc = vec2(position.x / viewport.x * 2.0 - 1.0, 1.0 - position.y / viewport.y * 2.0);
    gl_Position = vec4(ndc, 0.0, 1.0);
    v_u = u;
}
