"""The OpenGL spectrogram view: tiles, zoom and pan, painting input, overlays.

The canvas knows pixels and the view; it reports pen input in seconds and
Hz (``strokePoint``) and never edits the document itself.
"""

import time

import numpy as np
from OpenGL import GL
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QLabel

from app.gui.view.damage import Damage, around, cells_box, scissor, union
from app.gui.view.glutil import Uniforms, load_program
from app.gui.view.overlays import OverlayPainter, brush_outline, cross
from app.gui.view.selecting import TOOLS, SelectionDrag
from app.gui.view.tiles import TINT_COLOURS, TileCache, level_for
from app.gui.view.transforming import TransformDrag, grab, handles
from app.gui.view.viewstate import ViewState
from app.session.selection import Selection
from engine.model.document import Document
from engine.view.pitch import PitchGrid
from engine.view.render import colormap_lut

PRESS, MOVE, RELEASE = 0, 1, 2
TILE_BUDGET_S = 0.025  # seconds of tile work per frame; the rest waits for the next frame
WHEEL_ZOOM = 1.25
CLICK_PX = 4  # a press released within this many pixels is a click: it paints nothing
DRAGS = ("paint", "select", "transform")  # drags that stay in their lane and may be clicks


class SpectrogramCanvas(QOpenGLWidget):
    strokePoint = Signal(float, float, float, int)  # seconds, Hz, pressure, PRESS/MOVE/RELEASE
    cursorMoved = Signal(float, float)  # seconds, Hz
    viewChanged = Signal()
    selectionChanged = Signal(object)  # a app.session.selection.Selection, or None
    sourcePicked = Signal(float, float)  # Alt+click: the clone brush's source, seconds, Hz
    playToggled = Signal()
    playheadPlaced = Signal(float)  # a click (no drag) at these seconds
    transformDropped = Signal(object)  # the Transform tool's drag released: a TransformDrag
    lanePressed = Signal(int)  # the index of the lane a left press landed in
    transformRefused = Signal()  # the Transform tool pressed with no selection to move
    transformDragged = Signal(object)  # the TransformDrag, at each move of the pointer
    framePresented = Signal(float)  # perf_counter() when a frame was finished

    def __init__(self, parent=None):
        super().__init__(parent)
        self.view = ViewState()
        self.lanes: list[int | None] = [None]  # the channel each lane shows (None: loudest)
        self.layer_view: int | str | None = None  # app.gui.view.tiles.TileCache.layer_view
        self.lane_tiles = [TileCache()]
        self.lane_labels: list[QLabel] = []
        self.press_lane = 0  # the lane the last stroke or selection began in
        self.channel_names: list[str] = []
        self.doc: Document | None = None
        self.floor_db, self.ceiling_db, self.gamma = -100.0, 0.0, 1.0
        self.colormap = "viridis"
        # or a selection tool: "select" (rectangle), "lasso", "harmonic"; or "transform"
        self.tool = "paint"
        self.brush_radius = (0.05, 200.0)  # seconds, Hz: the outline under the cursor
        self.brush_cents = 0.0
        self.brush_harmonics = 1  # outlines drawn: the harmonic brush paints at k * f
        # the clone brush's source, marked with a cross: (seconds, Hz, relative to the
        # pointer?), or None
        self.clone_marker: tuple[float, float, bool] | None = None
        self.playhead: float | None = None
        self.selection: Selection | None = None
        self.harmonic = (8, 50.0)  # the harmonic tool's partials and width in cents
        self._selecting: SelectionDrag | None = None
        self._transforming: TransformDrag | None = None
        self.grid, self.show_grid, self.snap = PitchGrid(), False, False
        self._cursor: QPointF | None = None
        self._modifiers = Qt.KeyboardModifier.NoModifier
        self._drag: str | None = None  # "paint", "pan", "select", "transform"
        self._last = self._pressed_at = QPointF()
        # a drag has gone CLICK_PX from where it was pressed (else it is still a click)
        self._moved = False
        self._press_modifiers = Qt.KeyboardModifier.NoModifier
        self._space_down = self._space_panned = False
        self._gl_ready = False
        self._lut_dirty = True
        self.damage = Damage()
        self._drawn: tuple = (None, None)  # the outline's and the playhead's boxes last drawn
        self.redrawn: tuple = (True, None)  # the last frame's: (everything?, else its box)
        self.complete = False
        self.setUpdateBehavior(QOpenGLWidget.UpdateBehavior.PartialUpdate)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(320, 200)

    # -- model -----------------------------------------------------------------
    @property
    def tiles(self) -> TileCache:
        return self.lane_tiles[0]

    def set_document(self, doc: Document | None, view_channel=None, names=(),
                     fit: bool = True) -> None:
        """``view_channel``: see :meth:`set_view_channel`; ``names``: one per channel;
        ``fit``: show the whole file (else keep the view: a re-analysis)."""
        if self.doc is not None:
            self.doc.remove_listener(self._edited)
        self.doc = doc
        if doc is not None:
            doc.add_listener(self._edited)
        self.channel_names = list(names)
        self.set_view_channel(view_channel)
        if doc is not None:
            self.view.duration = doc.length / doc.sample_rate
            self.view.nyquist = doc.sample_rate / 2
            if fit:
                self.view.fit()
            else:  # a view past a shorter file's end drew nothing (and crashed llvmpipe)
                self.view.keep_inside()
        self.update()

    def set_view_channel(self, channel) -> None:
        """Show one channel, None (the loudest of all at each point), or "lanes":
        every channel stacked in its own lane, named. Keeps the view."""
        count = self.doc.channels if self.doc is not None else 1
        self._reset_tiles(list(range(count)) if channel == "lanes" and count > 1 else [channel])
        self.update()

    def _reset_tiles(self, lanes: list[int | None]) -> None:
        """Drop every tile; they are made again for the document and lanes shown."""
        if self._gl_ready:
            self.makeCurrent()
        for cache in self.lane_tiles:
            cache.set_document(None, None)  # its textures freed, its listener removed
        self.lanes = lanes
        self.lane_tiles = [TileCache() for _ in lanes]
        for cache, channel in zip(self.lane_tiles, lanes, strict=True):
            cache.layer_view = self.layer_view
            if self._gl_ready:
                cache.set_document(self.doc, channel)
            else:
                cache.doc, cache.channel = self.doc, channel
        if self._gl_ready:
            self.doneCurrent()
        self._label_lanes()

    def set_layer_view(self, layer_view: int | str | None) -> None:
        """Show the mix (None), one layer (its id) or every layer tinted ("tinted")."""
        self.layer_view = layer_view
        self._reset_tiles(self.lanes)
        self.damage.everything()
        self.update()

    def _label_lanes(self) -> None:
        for label in self.lane_labels:
            label.hide()
            label.deleteLater()
        self.lane_labels = []
        if len(self.lanes) > 1:
            names = self.channel_names or [str(c + 1) for c in self.lanes]
            for i, channel in enumerate(self.lanes):
                label = QLabel(names[channel], self)
                label.setObjectName(f"lane-{i}")
                label.setStyleSheet("color: white; background: rgba(0, 0, 0, 120); "
                                    "padding: 1px 4px;")
                label.show()
                self.lane_labels.append(label)
        self._place_labels()

    def _place_labels(self) -> None:
        for i, label in enumerate(self.lane_labels):
            label.move(6, round(i * self.lane_height()) + 4)

    def lane_height(self) -> float:
        return max(self.height(), 1) / len(self.lanes)

    def lane_at(self, y: float) -> int:
        return min(max(int(y // self.lane_height()), 0), len(self.lanes) - 1)

    def set_style(self, *, floor_db=None, ceiling_db=None, gamma=None, colormap=None) -> None:
        """Uniforms and the colormap table only: no tile is re-rendered."""
        if floor_db is not None:
            self.floor_db = floor_db
        if ceiling_db is not None:
            self.ceiling_db = ceiling_db
        if gamma is not None:
            self.gamma = gamma
        if colormap is not None and colormap != self.colormap:
            self.colormap, self._lut_dirty = colormap, True
        self.update()

    def set_grid(self, grid: PitchGrid, show: bool, snap: bool) -> None:
        """The pitch grid, whether it is drawn, and whether the pen snaps to it
        (Ctrl held while painting does the opposite)."""
        self.grid, self.show_grid, self.snap = grid, show, snap
        self.update()

    def _snaps(self, modifiers) -> bool:
        """Whether the pen snaps to the grid: the View panel's snap, Ctrl the opposite."""
        return self.snap != bool(modifiers & Qt.KeyboardModifier.ControlModifier)

    def _snapped(self, hz: float, modifiers) -> float:
        return self.grid.snap(hz) if self._snaps(modifiers) else hz

    # -- what to redraw ------------------------------------------------------------
    def update(self, *args) -> None:
        """Redraw everything on the next frame (anything may have changed)."""
        self.damage.everything()
        super().update(*args)

    def repaint_changes(self) -> None:
        """Redraw only what changed since the last frame: the cells edited since, the
        brush outline and the playhead where they were and where they are."""
        super().update()

    def set_playhead(self, seconds: float | None) -> None:
        self.playhead = seconds
        self.repaint_changes()

    def _edited(self, rect, channels) -> None:
        """Document listener: the edited cells are redrawn, in each lane showing them."""
        for lane, channel in enumerate(self.lanes):
            if channel is None or channel in channels:
                self.damage.add(cells_box(self.view, self.doc, rect, lane * self.view.height))
        super().update()

    def _cursor_outline(self) -> list | None:
        """The brush outline in canvas pixels (in the pointer's lane, flattened at its
        edges: a lane's stroke paints its own channel), if it is shown: a loop of points,
        one for each harmonic the brush paints."""
        if self.doc is None or self._cursor is None or self.tool != "paint":
            return None
        dy = self.lane_at(self._cursor.y()) * self.view.height
        loops = self._outlines()
        if self.clone_marker is not None:
            t, hz, relative = self.clone_marker
            if relative:
                at, f = self._at(self._cursor)
                t, hz = at + t, f + hz
            loops += cross(self.view, t, hz)
        top, bottom = dy, dy + self.view.height - 1
        return [[(x, min(max(y + dy, top), bottom)) for x, y in loop] for loop in loops]

    def _overlay_boxes(self, outline: list | None) -> tuple:
        """The boxes of the brush ``outline`` and the playhead as this frame draws them."""
        playhead = None
        if self.playhead is not None:
            x = self.view.x_of(self.playhead)
            playhead = around([(x, 0.0), (x, float(self.height()))])
        return around([p for loop in outline for p in loop] if outline else None), playhead

    def _partial_box(self, box, drawn: tuple):
        """``box`` with the overlays that moved since the last frame: where they were and
        where they are now."""
        for before, now in zip(self._drawn, drawn, strict=True):
            if before != now:
                box = union(box, union(before, now))
        return box

    # -- GL ----------------------------------------------------------------------
    def initializeGL(self) -> None:
        self.program = load_program("spectrogram")
        self.uniforms = Uniforms(self.program)
        self.vao = GL.glGenVertexArrays(1)
        self.vbo = GL.glGenBuffers(1)
        self.overlays = OverlayPainter(self.vao, self.vbo)
        self.lut = GL.glGenTextures(1)
        self._gl_ready = True
        self.damage.everything()
        for cache, channel in zip(self.lane_tiles, self.lanes, strict=True):
            cache.set_document(self.doc, channel)
        self._upload_lut()  # now, not in a document's first frame: the first costs ~120 ms

    def _upload_lut(self) -> None:
        lut = colormap_lut(self.colormap).numpy()
        GL.glBindTexture(GL.GL_TEXTURE_2D, self.lut)
        for name, value in ((GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST),
                            (GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST),
                            (GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE)):
            GL.glTexParameteri(GL.GL_TEXTURE_2D, name, value)
        GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_RGBA8, 256, 1, 0, GL.GL_RGBA,
                        GL.GL_UNSIGNED_BYTE, np.ascontiguousarray(lut))
        self._lut_dirty = False

    def resizeGL(self, w: int, h: int) -> None:
        self.damage.everything()  # a new framebuffer: nothing kept
        self.view.width, self.view.height = max(self.width(), 1), self.lane_height()
        self._place_labels()

    def paintGL(self) -> None:
        """Each lane: its tiles, then the overlays (the view's height is a lane's); all of
        them, or only inside the box of what changed (:mod:`app.gui.view.damage`)."""
        self.view.width, self.view.height = max(self.width(), 1), self.lane_height()
        full, box = self.damage.take()
        outline = self._cursor_outline()
        drawn = self._overlay_boxes(outline) if self.doc is not None else (None, None)
        if not full:
            box = self._partial_box(box, drawn)
        self.redrawn = full, box
        if full:
            GL.glDisable(GL.GL_SCISSOR_TEST)
        else:
            GL.glEnable(GL.GL_SCISSOR_TEST)
            GL.glScissor(*(scissor(box, self.width(), self.height(), self.devicePixelRatioF())
                           if box else (0, 0, 0, 0)))
        self._drawn = drawn
        GL.glClearColor(0.08, 0.08, 0.1, 1.0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT)
        if self.doc is None:
            GL.glDisable(GL.GL_SCISSOR_TEST)
            return
        if self._lut_dirty:
            self._upload_lut()
        budget_end = time.perf_counter() + TILE_BUDGET_S
        missing = False
        for lane, cache in enumerate(self.lane_tiles):
            missing |= self._draw_tiles(cache, lane, budget_end)
        self.complete = not missing  # every visible tile was drawn, up to date, this frame
        self.overlays.draw(self.view, self.height(), len(self.lanes),
                           self.grid if self.show_grid else None, self.selection,
                           self.playhead, outline, self._tool_lines())
        GL.glBindVertexArray(0)
        GL.glDisable(GL.GL_SCISSOR_TEST)
        self.framePresented.emit(time.perf_counter())
        if missing:  # the same again on the next frame (marked now: a grab may come first)
            if full:
                self.damage.everything()
            else:
                self.damage.add(box)
            QTimer.singleShot(0, self.repaint_changes)

    def _draw_tiles(self, cache: TileCache, lane: int, budget_end: float) -> bool:
        doc, view = self.doc, self.view
        top_px = lane * view.height
        hop_s = doc.transform.hop / doc.sample_rate
        level = level_for(view.seconds_per_pixel / hop_s)
        frames = (view.t0 / hop_s - 1, view.t1 / hop_s + 1)
        bins = (doc.bin_of(max(view.f_lo, 0)) - 1, doc.bin_of(view.f_hi) + 1)
        dpr = self.devicePixelRatioF()
        GL.glUseProgram(self.program)
        u = self.uniforms
        u.set("viewport", (float(view.width), float(self.height())))
        self._set_frequency_axis(doc.transform)
        u.set("view_bottom", float((self.height() - top_px - view.height) * dpr))
        u.set("view_height", float(view.height * dpr))
        lo = max(view.f_lo, 20.0) if view.log_freq else view.f_lo
        u.set("f_lo", float(lo))
        u.set("f_hi", float(view.f_hi))
        u.set("log_freq", int(view.log_freq))
        u.set("floor_db", float(self.floor_db))
        u.set("ceiling_db", float(max(self.ceiling_db, self.floor_db + 1e-3)))
        u.set("gamma", float(self.gamma))
        u.set("tinted", int(self.layer_view == "tinted"))
        GL.glUniform3fv(u.location("tints"), len(TINT_COLOURS), TINT_COLOURS)
        u.set("levels", 0)
        u.set("colormap", 1)
        GL.glActiveTexture(GL.GL_TEXTURE1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self.lut)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindVertexArray(self.vao)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glEnableVertexAttribArray(0)
        GL.glEnableVertexAttribArray(1)
        GL.glVertexAttribPointer(0, 2, GL.GL_FLOAT, False, 12, None)
        GL.glVertexAttribPointer(1, 1, GL.GL_FLOAT, False, 12, GL.ctypes.c_void_p(8))
        missing = False
        end = view.x_of(view.duration)  # the file's end: a constant-Q document has frames
        # after it (its atoms' reach, 0.62 s at 44.1 kHz), drawn nowhere
        for key in cache.visible(level, frames, bins):
            tile = cache.get(key, budget_end)
            if tile is None:
                missing = True
                continue
            missing |= tile.pending is not None  # drawn as it was before an edit
            r = tile.rect
            x0 = view.x_of((r.frame0 - 0.5) * hop_s)
            x1 = view.x_of((r.frame0 + tile.cols * tile.factor - 0.5) * hop_s)
            if x0 >= end:
                continue
            u1 = min((end - x0) / (x1 - x0), 1.0)  # the share of the tile's frames drawn
            x1 = min(x1, end)
            top = min(doc.hz_of(r.bin1 - 0.5), view.f_hi)
            bottom = max(doc.hz_of(r.bin0 - 0.5), lo)
            if top <= bottom:
                continue
            y0, y1 = top_px + view.y_of(top), top_px + view.y_of(bottom)
            quad = np.array([x0, y0, 0, x1, y0, u1, x0, y1, 0, x1, y1, u1], np.float32)
            u.set("tile_bin0", float(r.bin0))
            u.set("tile_bins", float(tile.rows))
            GL.glBindTexture(GL.GL_TEXTURE_2D, tile.texture)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, quad.nbytes, quad, GL.GL_STREAM_DRAW)
            GL.glDrawArrays(GL.GL_TRIANGLE_STRIP, 0, 4)
        GL.glDisableVertexAttribArray(1)
        return missing

    def _set_frequency_axis(self, transform) -> None:
        """The shader's copy of the transform's bin_of (linear or constant-Q)."""
        u = self.uniforms
        u.set("cq", int(transform.kind == "cq"))
        if transform.kind == "cq":
            for name, value in transform.axis().items():
                u.set("cq_" + name, value)
        else:
            u.set("bin_hz", float(transform.hz_of(1)))

    def _tool_lines(self) -> list:
        """The Transform tool's box and handles around the selection, and while it is
        dragged the ghost of where the content will land."""
        if self.tool != "transform" or self.selection is None:
            return []
        ghost = self._transforming.lines() if self._transforming and self._moved else []
        return handles(self.selection, self.view) + ghost

    def _outline(self, harmonic: int = 1) -> list[tuple[float, float]]:
        """The brush outline around the pointer, or around its ``harmonic``-th harmonic
        (see :func:`app.gui.view.overlays.brush_outline`)."""
        t, f = self._at(self._cursor)
        return brush_outline(self.view, t, harmonic * self._snapped(f, self._modifiers),
                             self.brush_radius, self.brush_cents,
                             self.doc.transform if self.doc else None)

    def _outlines(self) -> list[list[tuple[float, float]]]:
        """The outline at every harmonic the brush paints that the view shows (the
        harmonic brush: k = 1..harmonics; any other: the pointer's alone)."""
        f = self._snapped(self._at(self._cursor)[1], self._modifiers)
        top = min(self.view.f_hi, self.view.nyquist)
        return [self._outline(k) for k in range(1, self.brush_harmonics + 1)
                if k == 1 or k * f <= top]

    # -- input ---------------------------------------------------------------------
    def pointer_seconds(self) -> float | None:
        """The time under the mouse pointer, if it is over the canvas."""
        return None if self._cursor is None else self.view.t_of(self._cursor.x())

    def pointer_at(self) -> tuple[float, float] | None:
        """(seconds, Hz) under the mouse pointer, if it is over the canvas."""
        return None if self._cursor is None else self._at(self._cursor)

    def _at(self, pos: QPointF) -> tuple[float, float]:
        """(seconds, Hz) under ``pos``, in the lane it is in (a drag: its first lane)."""
        lane = self.press_lane if self._drag in DRAGS else self.lane_at(pos.y())
        y = pos.y() - lane * self.lane_height()
        return self.view.t_of(pos.x()), self.view.f_of(y)

    def pointer_channel(self) -> int | None:
        """The channel of the lane under the pointer (None: the loudest)."""
        return self.lanes[self.lane_at(self._cursor.y())] if self._cursor else self.lanes[0]

    def mousePressEvent(self, event) -> None:
        """A press starts a pan, a selection or a stroke; a stroke is painted from the
        first move, so that a click (released where it was pressed) places the playhead
        and paints nothing, with any tool (:meth:`mouseReleaseEvent`)."""
        self._last = self._pressed_at = event.position()
        self._moved = False
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (button == Qt.MouseButton.LeftButton
                                                     and self._space_down):
            self._drag, self._space_panned = "pan", True
        elif button == Qt.MouseButton.LeftButton and self.doc is not None:
            t, f = self._at(event.position())
            self.press_lane = self.lane_at(event.position().y())
            self.lanePressed.emit(self.press_lane)
            if self.tool == "paint" and event.modifiers() & Qt.KeyboardModifier.AltModifier:
                self.sourcePicked.emit(t, f)  # where the clone brush copies from
            elif self.tool in TOOLS:
                self._drag = "select"
                self._selecting = SelectionDrag(self.tool, t, f, *self.harmonic, self.view)
                self.selection = None
            elif self.tool == "transform":
                self._press_transform(event.position(), t, f)
            else:
                self._drag, self._press_modifiers = "paint", event.modifiers()
        self._repaint_for_drag()

    def mouseMoveEvent(self, event) -> None:
        pos = event.position()
        self._cursor, self._modifiers = pos, event.modifiers()
        t, f = self._at(pos)
        if self._drag == "paint":
            f = self._snapped(f, event.modifiers())
        self.cursorMoved.emit(t, f)
        self._check_moved(pos)
        if self._drag == "pan":
            self.view.pan_pixels(pos.x() - self._last.x(), pos.y() - self._last.y())
            self.viewChanged.emit()
        elif self._drag == "paint" and self._moved:
            self.strokePoint.emit(t, f, 1.0, MOVE)
        elif self._drag == "select" and self._moved:
            self._selecting.move(t, f, self.view)
            self.selection = self._selecting.selection()
        elif self._drag == "transform" and self._moved and self._transforming is not None:
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self._transforming.move(t, f, snap=self._snaps(event.modifiers()), keep_axis=shift)
            self.transformDragged.emit(self._transforming)
        elif self._drag is None:
            self._hover_transform(pos)
        self._last = pos
        self._repaint_for_drag()

    def _check_moved(self, pos: QPointF) -> None:
        """A drag that has gone CLICK_PX from its press is no longer a click: a stroke
        begins, where it was pressed."""
        if self._drag in DRAGS and not self._moved:
            self._moved = (pos - self._pressed_at).manhattanLength() >= CLICK_PX
            if self._moved and self._drag == "paint":
                t, f = self._at(self._pressed_at)
                self.strokePoint.emit(t, self._snapped(f, self._press_modifiers), 1.0, PRESS)

    def mouseReleaseEvent(self, event) -> None:
        self._check_moved(event.position())
        if self._drag in DRAGS and not self._moved:  # a click
            self.playheadPlaced.emit(self.view.t_of(self._pressed_at.x()))
            if self._drag == "select":  # and no selection
                self._selecting = None
                self.selectionChanged.emit(None)
                self.update()
        elif self._drag == "paint":
            t, f = self._at(event.position())
            self.strokePoint.emit(t, self._snapped(f, event.modifiers()), 1.0, RELEASE)
        elif self._drag == "select":
            self._selecting.move(*self._at(event.position()), self.view)
            self.selection, self._selecting = self._selecting.selection(), None
            self.selectionChanged.emit(self.selection)
            self.update()
        elif self._drag == "transform" and self._transforming is not None:
            # (a selection changed or cleared meanwhile, as Esc does, cancels it)
            if self._transforming.changed and self.selection == self._transforming.selection:
                self.transformDropped.emit(self._transforming)
        if self._drag == "transform":
            self._transforming = None
            self.update()
        self._drag = None
        self.repaint_changes()

    def _press_transform(self, pos: QPointF, t: float, hz: float) -> None:
        """The Transform tool pressed: inside the selection's box or on an edge handle, a
        drag begins (a click is still a click); with no selection, it says so."""
        self._drag = "transform"
        sel = self.selection
        if sel is None or sel.inverted:
            self.transformRefused.emit()
            return
        part = grab(sel, self.view, pos.x(), pos.y() - self.press_lane * self.lane_height())
        if part is not None:
            self._transforming = TransformDrag(sel, part, t, hz, self.view)

    def _hover_transform(self, pos: QPointF) -> None:
        """The pointer's shape over the Transform tool's box: a move inside, a resize on
        its edges; an arrow elsewhere and with the other tools."""
        sel = self.selection if self.tool == "transform" else None
        part = None if sel is None else grab(
            sel, self.view, pos.x(), pos.y() - self.lane_at(pos.y()) * self.lane_height())
        shape = {"move": Qt.CursorShape.SizeAllCursor, "left": Qt.CursorShape.SizeHorCursor,
                 "right": Qt.CursorShape.SizeHorCursor}.get(part, Qt.CursorShape.ArrowCursor)
        if self.cursor().shape() != shape:
            self.setCursor(shape)

    def tabletEvent(self, event) -> None:
        """Pen input with pressure; the mouse events Qt synthesizes are then ignored."""
        t, f = self._at(event.position())
        f = self._snapped(f, event.modifiers())
        kind = event.type()
        if self.tool != "paint" or self.doc is None:
            return
        if kind == event.Type.TabletPress:
            self._drag = "paint"
            self.press_lane = self.lane_at(event.position().y())
            self.lanePressed.emit(self.press_lane)
            self.strokePoint.emit(t, f, event.pressure(), PRESS)
        elif kind == event.Type.TabletMove and self._drag == "paint":
            self.strokePoint.emit(t, f, event.pressure(), MOVE)
        elif kind == event.Type.TabletRelease and self._drag == "paint":
            self.strokePoint.emit(t, f, event.pressure(), RELEASE)
            self._drag = None
        event.accept()
        self.repaint_changes()

    def leaveEvent(self, event) -> None:
        self._cursor = None
        self.repaint_changes()

    def _repaint_for_drag(self) -> None:
        """A pan or a selection changes what every pixel shows; painting and hovering,
        only the edited cells and the outline."""
        if self._drag in ("pan", "select", "transform"):
            self.update()
        else:
            self.repaint_changes()

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120
        if steps == 0:
            return
        pos = event.position()
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.view.zoom_freq(WHEEL_ZOOM ** steps, pos.y())
        else:
            self.view.zoom_time(WHEEL_ZOOM ** steps, pos.x())
        self.viewChanged.emit()
        self.update()

    def event(self, event) -> bool:
        """Space is the window's play shortcut; the canvas takes it itself (a tap plays,
        Space+drag pans)."""
        if event.type() == event.Type.ShortcutOverride and event.key() == Qt.Key.Key_Space \
                and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_down, self._space_panned = True, False
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(2.0)
        elif key == Qt.Key.Key_Minus:
            self.zoom(0.5)
        else:
            super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_down = False
            if not self._space_panned:  # a tap, not Space+drag: play or pause
                self.playToggled.emit()
        else:
            super().keyReleaseEvent(event)

    def zoom(self, factor: float) -> None:
        """Zoom time around the playhead where the view shows it (it keeps its pixel),
        else around the middle."""
        at, v = self.playhead, self.view
        self.view.zoom_time(factor, v.x_of(at) if at is not None and v.t0 <= at <= v.t1
                            else None)
        self.viewChanged.emit()
        self.update()

    def fit(self) -> None:
        self.view.fit()
        self.viewChanged.emit()
        self.update()
