"""Time ruler (above the canvas) and frequency ruler (left of it)."""

import math

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import QWidget

from app.gui.view.viewstate import ViewState
from engine.view.pitch import NOTE_NAMES

BACKGROUND, INK, NOTE_INK = QColor(40, 40, 46), QColor(210, 210, 215), QColor(255, 215, 90)


def nice_step(span: float, count: int) -> float:
    """A 1-2-5 step that gives about ``count`` ticks over ``span``."""
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def begin_ruler(ruler: QWidget) -> QPainter | None:
    """A painter on ``ruler``'s cleared background with the ink pen, or None (and the
    background drawn) when the ruler is blank: no document, no axis."""
    p = QPainter(ruler)
    p.fillRect(ruler.rect(), BACKGROUND)
    if ruler.blank:
        p.end()
        return None
    p.setPen(INK)
    return p


class TimeRuler(QWidget):
    """The time axis; dragging in it scrubs (``scrubbed`` with the seconds under the
    pointer, ``scrubEnded`` on release)."""

    scrubbed = Signal(float)
    scrubEnded = Signal()

    def __init__(self, view: ViewState, parent=None):
        super().__init__(parent)
        self.view = view
        self.blank = False  # no document: no axis to show
        self.setFixedHeight(22)
        self.overlay = None  # draws more over the ruler: ``overlay(painter, ruler)``
        self.setCursor(Qt.CursorShape.IBeamCursor)
        self.setToolTip("Drag to scrub: hear what is under the pointer")

    def _seconds(self, event) -> float:
        v = self.view
        return v.t_of(event.position().x() * v.width / max(self.width(), 1))

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.scrubbed.emit(self._seconds(event))

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.scrubbed.emit(self._seconds(event))

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.scrubEnded.emit()

    def paintEvent(self, event) -> None:
        p = begin_ruler(self)
        if p is None:
            return
        for t, label in time_ticks(self.view, self.width()):
            x = self.view.x_of(t) * self.width() / self.view.width
            p.drawLine(int(x), self.height() - 6, int(x), self.height())
            p.drawText(int(x) + 3, self.height() - 8, label)
        if self.overlay is not None:
            self.overlay(p, self)
        p.end()


def time_ticks(view: ViewState, pixels: int) -> list[tuple[float, str]]:
    """(seconds, label) of the ticks of a time axis ``pixels`` wide over the view."""
    step = nice_step(view.t1 - view.t0, max(2, pixels // 90))
    ticks, t = [], math.ceil(view.t0 / step) * step
    while t <= view.t1:
        ticks.append((t, f"{t:.3f}".rstrip("0").rstrip(".") + " s" if step < 1 else
                      f"{int(t // 60)}:{t % 60:04.1f}" if t >= 60 else f"{t:g} s"))
        t += step
    return ticks


def hz_label(hz: float) -> str:
    return f"{hz / 1000:g}k" if hz >= 1000 else f"{hz:g}"


class FrequencyRuler(QWidget):
    """The frequency axis in Hz, drawn in each of the canvas's stacked lanes; with a
    pitch ``grid``, the key's notes named too. A label never overlaps another nor
    leaves its lane."""

    def __init__(self, view: ViewState, parent=None):
        super().__init__(parent)
        self.view = view
        self.grid = None
        self.blank = False  # no document: no axis to show
        self.lanes = 1  # the canvas's lanes, stacked: the axis is drawn in each
        self.setFixedWidth(62)

    def _ticks(self, lane: float) -> list[float]:
        v = self.view
        if v.log_freq:
            lo = max(v.f_lo, 20.0)
            ticks = [m * 10 ** e for e in range(1, 6) for m in (1, 2, 5)]
            return [f for f in ticks if lo <= f <= v.f_hi]
        step = nice_step(v.f_hi - v.f_lo, max(2, int(lane // 32)))
        first = math.ceil(v.f_lo / step) * step
        return [first + k * step for k in range(int((v.f_hi - first) / step) + 1)]

    def labels(self) -> list[tuple[float, QRectF, str]]:
        """(tick's y, label's box, text) of every label drawn: in each lane, top down,
        each moved inside its lane and left out where it would touch the last one."""
        v, lane = self.view, self.height() / self.lanes
        tall = QFontMetrics(self.font()).height()
        out = []
        for k in range(self.lanes):
            top, last = k * lane, None
            for f in sorted(self._ticks(lane), reverse=True):
                y = top + v.y_of(f) * lane / v.height
                box_top = min(max(y - tall / 2, top + 1), top + lane - tall - 1)
                if box_top < top or (last is not None and box_top < last + 2):
                    continue  # a lane too short for it, or no room below the last label
                out.append((y, QRectF(0, box_top, self.width() - 8, tall), hz_label(f)))
                last = box_top + tall
        return out

    def paintEvent(self, event) -> None:
        p = begin_ruler(self)
        if p is None:
            return
        for y, box, text in self.labels():
            p.drawLine(self.width() - 6, int(y), self.width(), int(y))
            p.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
        if self.grid is not None:
            lane = self.height() / self.lanes
            for k in range(self.lanes):
                self._note_names(p, k * lane, lane)
        p.end()

    def _note_names(self, p: QPainter, top: float, lane: float) -> None:
        v, key = self.view, self.grid.key
        p.setPen(NOTE_INK)
        last = None
        for hz, midi in self.grid.notes(max(v.f_lo, 20.0) if v.log_freq else v.f_lo, v.f_hi):
            if NOTE_NAMES[midi % 12] != key:
                continue
            y = top + v.y_of(hz) * lane / v.height
            inside = top <= y - 8 and y + 8 <= top + lane  # never across a lane's edge
            if inside and (last is None or abs(last - y) >= 14):
                p.drawText(QRectF(2, y - 8, 30, 16), Qt.AlignmentFlag.AlignVCenter,
                           f"{key}{midi // 12 - 1}")
                last = y
