"""Time ruler (above the canvas) and frequency ruler (left of it)."""

import math

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QWidget

from app.view import ViewState
from engine.pitch import NOTE_NAMES

BACKGROUND, INK, NOTE_INK = QColor(40, 40, 46), QColor(210, 210, 215), QColor(255, 215, 90)


def nice_step(span: float, count: int) -> float:
    """A 1-2-5 step that gives about ``count`` ticks over ``span``."""
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


class TimeRuler(QWidget):
    """The time axis; dragging in it scrubs (``scrubbed`` with the seconds under the
    pointer, ``scrubEnded`` on release)."""

    scrubbed = Signal(float)
    scrubEnded = Signal()

    def __init__(self, view: ViewState, parent=None):
        super().__init__(parent)
        self.view = view
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
        p = QPainter(self)
        p.fillRect(self.rect(), BACKGROUND)
        p.setPen(INK)
        v = self.view
        step = nice_step(v.t1 - v.t0, max(2, self.width() // 90))
        t = math.ceil(v.t0 / step) * step
        while t <= v.t1:
            x = v.x_of(t) * self.width() / v.width
            p.drawLine(int(x), self.height() - 6, int(x), self.height())
            label = f"{t:.3f}".rstrip("0").rstrip(".") + " s" if step < 1 else \
                f"{int(t // 60)}:{t % 60:04.1f}" if t >= 60 else f"{t:g} s"
            p.drawText(int(x) + 3, self.height() - 8, label)
            t += step
        if self.overlay is not None:
            self.overlay(p, self)
        p.end()


class FrequencyRuler(QWidget):
    """The frequency axis in Hz; with a pitch ``grid``, the key's notes named too."""

    def __init__(self, view: ViewState, parent=None):
        super().__init__(parent)
        self.view = view
        self.grid = None
        self.lanes = 1  # the canvas's lanes, stacked: the axis is drawn in each
        self.setFixedWidth(62)

    def _ticks(self) -> list[float]:
        v = self.view
        if v.log_freq:
            lo = max(v.f_lo, 20.0)
            ticks = [m * 10 ** e for e in range(1, 6) for m in (1, 2, 5)]
            return [f for f in ticks if lo <= f <= v.f_hi]
        step = nice_step(v.f_hi - v.f_lo, max(2, self.height() // 40))
        first = math.ceil(v.f_lo / step) * step
        return [first + k * step for k in range(int((v.f_hi - first) / step) + 1)]

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), BACKGROUND)
        p.setPen(INK)
        v = self.view
        lane = self.height() / self.lanes
        for k in range(self.lanes):
            for f in self._ticks():
                y = k * lane + v.y_of(f) * lane / v.height
                p.drawLine(self.width() - 6, int(y), self.width(), int(y))
                text = f"{f / 1000:g}k" if f >= 1000 else f"{f:g}"
                p.drawText(QRectF(0, y - 8, self.width() - 8, 16),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
            if self.grid is not None:
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
            if last is None or abs(last - y) >= 14:
                p.drawText(QRectF(2, y - 8, 30, 16), Qt.AlignmentFlag.AlignVCenter,
                           f"{key}{midi // 12 - 1}")
                last = y
