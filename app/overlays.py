"""What the canvas draws over its tiles, as GL lines: the pitch grid, the selection's
outline, the lanes' dividers, the playhead and the brush outline."""

import math

import numpy as np
from OpenGL import GL

from app.glutil import Uniforms, load_program
from app.selecting import outlines, thin
from app.view import ViewState
from brushes.selection import Selection
from engine.pitch import NOTE_NAMES, PitchGrid

PLAYHEAD = (1.0, 0.3, 0.2, 1.0)
DIVIDER = (0.8, 0.8, 0.85, 1.0)
GRID_NOTE, GRID_KEY = (0.55, 0.55, 0.6, 1.0), (1.0, 0.85, 0.3, 1.0)
OUTLINE_POINTS = 48


class OverlayPainter:
    """Line overlays with the ``overlay`` program; made (and used) while the canvas's
    GL context is current. ``vao``/``vbo``: the canvas's, shared with its tiles."""

    def __init__(self, vao: int, vbo: int):
        self.program = load_program("overlay")
        self.uniforms = Uniforms(self.program)
        self.vao, self.vbo = vao, vbo

    def draw(self, view: ViewState, height: float, lanes: int, grid: PitchGrid | None,
             selection: Selection | None, playhead: float | None, outline: list | None) -> None:
        """Every lane's grid (``grid`` None: not shown), selection and divider; then the
        playhead across all lanes and the brush ``outline`` (canvas pixels)."""
        GL.glUseProgram(self.program)
        self.uniforms.set("viewport", (float(view.width), float(height)))
        GL.glBindVertexArray(self.vao)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glVertexAttribPointer(0, 2, GL.GL_FLOAT, False, 8, None)
        for lane in range(lanes):
            dy = lane * view.height
            if grid is not None:
                self._grid(view, grid, dy)
            if selection is not None:
                for points, closed, colour in outlines(selection, view):
                    self._lines(thin(points), colour,
                                GL.GL_LINE_LOOP if closed else GL.GL_LINE_STRIP, dy)
            if lane:
                self._lines([(0, dy), (view.width, dy)], DIVIDER, GL.GL_LINES)
        if playhead is not None:
            x = view.x_of(playhead)
            self._lines([(x, 0), (x, height)], PLAYHEAD, GL.GL_LINES)
        if outline is not None:
            self._lines(outline, (1, 1, 1, 1), GL.GL_LINE_LOOP)

    def _grid(self, view: ViewState, grid: PitchGrid, dy: float) -> None:
        """A line per grid note; the key's notes brighter. Notes closer than 3 pixels
        are left out (but never the key's)."""
        lo = max(view.f_lo, 20.0) if view.log_freq else view.f_lo
        roots, others, last_y = [], [], None
        for hz, midi in grid.notes(lo, view.f_hi):
            y = view.y_of(hz)
            is_root = NOTE_NAMES[midi % 12] == grid.key
            if not is_root and last_y is not None and abs(last_y - y) < 3:
                continue
            (roots if is_root else others).extend([(0, y), (view.width, y)])
            last_y = y
        for points, colour in ((others, GRID_NOTE), (roots, GRID_KEY)):
            if points:
                self._lines(points, colour, GL.GL_LINES, dy)

    def _lines(self, points, colour, mode, dy: float = 0.0) -> None:
        """``points`` in a lane's pixels; ``dy``: the lane's top. Opaque colours: the
        framebuffer's alpha is what the window composes (a line of alpha 0.6 came
        out dark grey)."""
        data = np.array(points, np.float32) + np.array([0.0, dy], np.float32)
        self.uniforms.set("line_colour", colour)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, data.nbytes, data, GL.GL_STREAM_DRAW)
        GL.glDrawArrays(mode, 0, len(data))


def brush_outline(view: ViewState, seconds: float, hz: float, radius: tuple[float, float],
                  cents: float, transform=None) -> list[tuple[float, float]]:
    """The brush at its true size, its outline (where its effect is half): an ellipse
    in seconds x Hz around (``seconds``, ``hz``), in a lane's pixels. ``radius``:
    (seconds, Hz), or ``cents`` > 0 for a width that follows the pitch; never under
    what ``transform`` resolves, as brushes.dab.Footprint."""
    rt, rf = radius
    if cents > 0:
        rf = hz * (2 ** (cents / 1200) - 1)
    if transform is not None:
        rt = max(rt, transform.seconds_of(1))
        rf = max(rf, transform.resolution_hz(max(hz, 0.0)))
    points = []
    for k in range(OUTLINE_POINTS):
        a = 2 * math.pi * k / OUTLINE_POINTS
        points.append((view.x_of(seconds + rt * math.cos(a)),
                       view.y_of(max(hz + rf * math.sin(a), 1e-3))))
    return points
