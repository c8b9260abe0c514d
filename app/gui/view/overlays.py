"""What the canvas draws over its tiles, as GL lines: the pitch grid, the selection's
outline, the Transform tool's box, handles and ghost, the lanes' dividers, the
playhead and the brush outline. The grid is solid
and thinned with the zoom; a selection is dashed light and dark, so the two never
look alike."""

import bisect
import math

import numpy as np
from OpenGL import GL

from app.gui.view.glutil import Uniforms, load_program
from app.gui.view.selecting import DASH_DARK, dashes, outlines, thin
from app.gui.view.viewstate import ViewState
from app.session.selection import Selection
from engine.view.pitch import NOTE_NAMES, PitchGrid

PLAYHEAD = (1.0, 0.3, 0.2, 1.0)
DIVIDER = (0.8, 0.8, 0.85, 1.0)
GRID_NOTE, GRID_KEY = (0.55, 0.55, 0.6, 1.0), (1.0, 0.85, 0.3, 1.0)
OUTLINE_POINTS = 48
GRID_GAP_PX = 8  # no two grid lines closer: the key's notes first, then the others


class OverlayPainter:
    """Line overlays with the ``overlay`` program; made (and used) while the canvas's
    GL context is current. ``vao``/``vbo``: the canvas's, shared with its tiles."""

    def __init__(self, vao: int, vbo: int):
        self.program = load_program("overlay")
        self.uniforms = Uniforms(self.program)
        self.vao, self.vbo = vao, vbo

    def draw(self, view: ViewState, height: float, lanes: int, grid: PitchGrid | None,
             selection: Selection | None, playhead: float | None, outline: list | None,
             tool: list = ()) -> None:
        """Every lane's grid (``grid`` None: not shown), selection, ``tool``'s lines
        ((lane pixels, closed?, colour, dashed?): the Transform tool's box, handles and
        ghost) and divider; then the playhead across all lanes and the brush ``outline``
        (loops of canvas pixels)."""
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
                    self._dashed(thin(points), closed, colour, dy)
            for points, closed, colour, dashed in tool:
                if dashed:
                    self._dashed(points, closed, colour, dy)
                else:
                    self._lines(points, colour, GL.GL_LINE_LOOP if closed else GL.GL_LINE_STRIP,
                                dy)
            if lane:
                self._lines([(0, dy), (view.width, dy)], DIVIDER, GL.GL_LINES)
        if playhead is not None:
            x = view.x_of(playhead)
            self._lines([(x, 0), (x, height)], PLAYHEAD, GL.GL_LINES)
        for loop in outline or ():
            self._lines(loop, (1, 1, 1, 1), GL.GL_LINE_LOOP)

    def _grid(self, view: ViewState, grid: PitchGrid, dy: float) -> None:
        """A line per grid note shown (:func:`grid_rows`), the key's notes brighter."""
        for rows, colour in zip(grid_rows(view, grid), (GRID_KEY, GRID_NOTE), strict=True):
            if rows:
                self._lines([(x, y) for y in rows for x in (0, view.width)], colour,
                            GL.GL_LINES, dy)

    def _dashed(self, points: list, closed: bool, colour, dy: float) -> None:
        light, dark = dashes(points, closed)
        self._lines(dark, DASH_DARK, GL.GL_LINES, dy)
        self._lines(light, colour, GL.GL_LINES, dy)

    def _lines(self, points, colour, mode, dy: float = 0.0) -> None:
        """``points`` in a lane's pixels; ``dy``: the lane's top. Opaque colours: the
        framebuffer's alpha is what the window composes (a line of alpha 0.6 came
        out dark grey)."""
        if not len(points):
            return
        data = np.array(points, np.float32) + np.array([0.0, dy], np.float32)
        self.uniforms.set("line_colour", colour)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, data.nbytes, data, GL.GL_STREAM_DRAW)
        GL.glDrawArrays(mode, 0, len(data))


def grid_rows(view: ViewState, grid: PitchGrid) -> tuple[list[float], list[float]]:
    """The rows (lane pixels) of the grid lines shown: the key's notes, then the other
    notes, none within GRID_GAP_PX of another, so zooming out thins the grid (a
    chromatic grid on a log axis drew a line every 2-4 px, hatching the picture)."""
    lo = max(view.f_lo, 20.0) if view.log_freq else view.f_lo
    notes = [(view.y_of(hz), NOTE_NAMES[midi % 12] == grid.key)
             for hz, midi in grid.notes(lo, view.f_hi)]
    placed: list[float] = []
    shown = ([], [])
    for tier in (True, False):
        for y, is_root in notes:
            if is_root != tier:
                continue
            at = bisect.bisect(placed, y)
            if all(abs(y - placed[k]) >= GRID_GAP_PX for k in (at - 1, at)
                   if 0 <= k < len(placed)):
                placed.insert(at, y)
                shown[0 if tier else 1].append(y)
    return shown


def cross(view: ViewState, seconds: float, hz: float, arm: float = 7.0) -> list[list]:
    """A cross at (``seconds``, ``hz``) (the clone brush's source), as two lines."""
    x, y = view.x_of(seconds), view.y_of(max(hz, 1e-3))
    return [[(x - arm, y), (x + arm, y)], [(x, y - arm), (x, y + arm)]]


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
