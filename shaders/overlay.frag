#version 330 core
out vec4 colour;
uniform vec4 line_colour;

void main() {
    colour = line_colour;
}
