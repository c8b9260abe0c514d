"""Loading GLSL programs from shaders/ and small PyOpenGL helpers."""

from pathlib import Path

from OpenGL import GL

SHADERS = Path(__file__).resolve().parents[3] / "shaders"


class ShaderError(RuntimeError):
    pass


def _compile(kind, path: Path) -> int:
    shader = GL.glCreateShader(kind)
    GL.glShaderSource(shader, path.read_text())
    GL.glCompileShader(shader)
    if not GL.glGetShaderiv(shader, GL.GL_COMPILE_STATUS):
        log = GL.glGetShaderInfoLog(shader).decode(errors="replace")
        raise ShaderError(f"{path.name}: {log}")
    return shader


def load_program(name: str) -> int:
    """Compile and link ``shaders/NAME.vert`` + ``shaders/NAME.frag``."""
    program = GL.glCreateProgram()
    shaders = [_compile(GL.GL_VERTEX_SHADER, SHADERS / f"{name}.vert"),
               _compile(GL.GL_FRAGMENT_SHADER, SHADERS / f"{name}.frag")]
    for s in shaders:
        GL.glAttachShader(program, s)
    GL.glLinkProgram(program)
    for s in shaders:
        GL.glDeleteShader(s)
    if not GL.glGetProgramiv(program, GL.GL_LINK_STATUS):
        raise ShaderError(f"{name}: {GL.glGetProgramInfoLog(program).decode(errors='replace')}")
    return program


class Uniforms:
    """``uniforms.set(name, value)`` with locations looked up once."""

    def __init__(self, program: int):
        self.program, self._loc = program, {}

    def location(self, name: str) -> int:
        if name not in self._loc:
            self._loc[name] = GL.glGetUniformLocation(self.program, name)
        return self._loc[name]

    def set(self, name: str, value) -> None:
        loc = self.location(name)
        if isinstance(value, bool) or isinstance(value, int):
            GL.glUniform1i(loc, int(value))
        elif isinstance(value, float):
            GL.glUniform1f(loc, value)
        elif len(value) == 2:
            GL.glUniform2f(loc, *value)
        else:
            GL.glUniform4f(loc, *value)
