"""The nnAudio view's picture, drawn under the canvas in the canvas's own time axis
(the same span at the same x, whatever the docks' widths), with a frequency axis
(the view's rows are mel or log spaced) left of it and a time axis under it."""

import math

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRectF, Qt
from PySide6.QtGui import QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QWidget

from app.gui.view.canvas import SpectrogramCanvas
from app.gui.view.rulers import BACKGROUND, INK, hz_label, time_ticks

TICKS_HZ = [m * 10 ** e for e in range(1, 6) for m in (1, 2, 5)]
AXIS_PX = 16  # the time axis under the picture


class ViewStrip(QWidget):
    def __init__(self, canvas: SpectrogramCanvas, parent=None):
        super().__init__(parent)
        self.canvas = canvas
        self.picture: QImage | None = None
        self.span = (0.0, 0.0)  # seconds the picture shows
        self.rows_hz = np.zeros(0)  # the frequency of each of its rows, lowest first
        self.setMinimumHeight(60)  # the window decides; a first run gives it 150 px
        canvas.installEventFilter(self)  # the canvas resized or moved: follow it

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Move):
            self.update()
        return False

    def show_picture(self, image: np.ndarray, span: tuple[float, float],
                     rows_hz: np.ndarray) -> None:
        h, w = image.shape[:2]
        self.picture = QImage(image.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()
        self.span, self.rows_hz = span, rows_hz
        self.update()

    def plot(self) -> QRectF:
        """Where the canvas's time axis lies in this widget, above the time axis."""
        left = self.mapFromGlobal(self.canvas.mapToGlobal(QPoint(0, 0))).x()
        return QRectF(left, 0, self.canvas.width(), max(1, self.height() - AXIS_PX))

    def picture_size(self, span: tuple[float, float]) -> tuple[int, int]:
        """Pixels of a picture of ``span`` drawn in the canvas's time axis."""
        view, plot = self.canvas.view, self.plot()
        width = (view.x_of(span[1]) - view.x_of(span[0])) * plot.width() / view.width
        return max(64, round(width)), max(32, round(plot.height()))

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), BACKGROUND)
        plot, view = self.plot(), self.canvas.view
        scale = plot.width() / view.width
        if self.picture is not None:
            x0, x1 = (plot.left() + view.x_of(t) * scale for t in self.span)
            p.setClipRect(plot)
            p.drawImage(QRectF(x0, plot.top(), x1 - x0, plot.height()), self.picture)
            p.setClipping(False)
            self._frequency_axis(p, plot)
        else:
            p.setPen(INK)
            p.drawText(plot, Qt.AlignmentFlag.AlignCenter,
                       "Choose a view above to see the visible span through nnAudio")
        p.setPen(INK)
        for t, label in time_ticks(view, int(plot.width())):
            x = plot.left() + view.x_of(t) * scale
            p.drawLine(int(x), int(plot.bottom()), int(x), int(plot.bottom()) + 4)
            p.drawText(int(x) + 3, self.height() - 3, label)
        p.end()

    def _frequency_axis(self, p: QPainter, plot: QRectF) -> None:
        """Ticks at round frequencies, where the view's rows put them."""
        rows = self.rows_hz
        if len(rows) < 2:
            return
        p.setPen(INK)
        tall, last = QFontMetrics(self.font()).height(), -math.inf
        for hz in TICKS_HZ:
            if not rows[0] <= hz <= rows[-1]:
                continue
            row = np.interp(hz, rows, np.arange(len(rows)))
            y = plot.bottom() - (row + 0.5) / len(rows) * plot.height()
            if abs(y - last) < tall:
                continue
            p.drawLine(int(plot.left()) - 4, int(y), int(plot.left()), int(y))
            p.drawText(QRectF(0, y - tall / 2, plot.left() - 6, tall),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, hz_label(hz))
            last = y
