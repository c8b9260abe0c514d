#version 330 core
// Lines drawn over the spectrogram (playhead, selection, brush outline), in pixels.
layout(location = 0) in vec2 position;
uniform vec2 viewport;

void main() {
    gl_Position = vec4(position.x / viewport.x * 2.0 - 1.0, 1.0 - position.y / viewport.y * 2.0,
                       0.0, 1.0);
}
