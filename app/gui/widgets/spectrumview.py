"""The Spectrum panel: the level of every bin of the frame under the pointer (an FFT
slice, or a constant-Q one), over the canvas's frequency span and axis (linear or
log), between the View panel's floor and ceiling in dB."""

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPolygonF
from PySide6.QtWidgets import QWidget

from app.gui.view.rulers import BACKGROUND, INK, hz_label, nice_step
from app.gui.view.viewstate import LOG_FLOOR_HZ, ViewState
from engine.model.document import Document
from engine.region import Rect

CURVE = QColor(120, 200, 160)
LEFT, BOTTOM = 34, 16  # the axes' room


class SpectrumView(QWidget):
    def __init__(self, view: ViewState, parent=None):
        super().__init__(parent)
        self.setObjectName("spectrum")
        self.view = view
        self.hz = np.zeros(0)
        self.db = np.zeros(0)
        self.range_db = (-100.0, 0.0)
        self.title = ""
        self._bins: tuple = (None, np.zeros(0))  # a transform and its bins' frequencies
        self.setMinimumHeight(120)

    def show_frame(self, doc: Document, frame: int, channel: int | None,
                   range_db: tuple[float, float], title: str) -> None:
        """Frame ``frame`` of ``doc`` (``channel``, None: the loudest), every bin."""
        mags, _ = doc.read(Rect(0, doc.n_bins, frame, frame + 1), channel)
        level = mags.amax(dim=0)[:, 0].cpu().numpy() / doc.full_scale
        if self._bins[0] is not doc.transform:
            self._bins = doc.transform, np.array([doc.hz_of(b) for b in range(doc.n_bins)])
        self.show_slice(self._bins[1], 20 * np.log10(np.maximum(level, 1e-12)), range_db,
                        title)

    def show_slice(self, hz: np.ndarray, db: np.ndarray, range_db: tuple[float, float],
                   title: str) -> None:
        """The levels ``db`` of the bins at ``hz`` (both increasing in hz), shown between
        ``range_db``; ``title``: where it is from."""
        self.hz, self.db, self.range_db, self.title = hz, db, range_db, title
        self.update()

    def _x(self, hz: np.ndarray, plot: QRectF) -> np.ndarray:
        v = self.view
        if v.log_freq:
            lo = max(v.f_lo, LOG_FLOOR_HZ)
            u = np.log(np.maximum(hz, 1e-6) / lo) / math.log(v.f_hi / lo)
        else:
            u = (hz - v.f_lo) / (v.f_hi - v.f_lo)
        return plot.left() + u * plot.width()

    def _y(self, db: np.ndarray, plot: QRectF) -> np.ndarray:
        floor, ceiling = self.range_db
        u = np.clip((db - floor) / max(ceiling - floor, 1e-3), 0, 1)
        return plot.bottom() - u * plot.height()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), BACKGROUND)
        plot = QRectF(LEFT, 4, max(1, self.width() - LEFT - 4),
                      max(1, self.height() - BOTTOM - 8))
        p.setPen(INK)
        floor, ceiling = self.range_db
        step = nice_step(ceiling - floor, max(2, int(plot.height() // 30)))
        for db in np.arange(math.ceil(floor / step) * step, ceiling + 1e-9, step):
            y = float(self._y(np.array(db), plot))
            p.drawText(QRectF(0, y - 7, LEFT - 4, 14),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{db:g}")
        for hz in _hz_ticks(self.view, plot.width()):
            x = float(self._x(np.array(hz), plot))
            p.drawLine(int(x), int(plot.bottom()), int(x), int(plot.bottom()) + 3)
            p.drawText(int(x) + 2, self.height() - 3, hz_label(hz))
        p.drawText(QRectF(plot.left() + 4, plot.top(), plot.width() - 8, 14),
                   Qt.AlignmentFlag.AlignRight, self.title)
        shown = (self.hz >= self.view.f_lo) & (self.hz <= self.view.f_hi)
        if shown.sum() >= 2:
            xs, ys = self._x(self.hz[shown], plot), self._y(self.db[shown], plot)
            p.setPen(CURVE)
            p.setClipRect(plot)
            p.drawPolyline(QPolygonF([QPointF(x, y) for x, y in zip(xs, ys, strict=True)]))
        p.end()


def _hz_ticks(view: ViewState, width: float) -> list[float]:
    """Round frequencies to mark: decades on a log axis, about one per 60 px on a
    linear one."""
    if view.log_freq:
        lo = max(view.f_lo, LOG_FLOOR_HZ)
        return [10.0 ** e for e in range(1, 6) if lo <= 10 ** e <= view.f_hi]
    step = nice_step(view.f_hi - view.f_lo, max(2, int(width // 60)))
    first = math.ceil(view.f_lo / step) * step
    return [first + k * step for k in range(int((view.f_hi - first) / step) + 1)]
