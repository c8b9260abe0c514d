"""The canvas with the waveform overview lane, its rulers and scroll bars, kept in
step with the view."""

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollBar, QWidget

from app.gui.view.canvas import SpectrogramCanvas
from app.gui.view.overviewlane import OverviewLane
from app.gui.view.rulers import FrequencyRuler, TimeRuler

EMPTY = "No document open.\n\nFile > Open audio… (Ctrl+O), or drop a sound file here."


class CanvasArea(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.canvas = SpectrogramCanvas()
        self.overview = OverviewLane(self.canvas.view)
        self.time_ruler = TimeRuler(self.canvas.view)
        self.freq_ruler = FrequencyRuler(self.canvas.view)
        self.hscroll = QScrollBar(Qt.Orientation.Horizontal)
        self.vscroll = QScrollBar(Qt.Orientation.Vertical)
        for bar in (self.hscroll, self.vscroll):
            bar.setRange(0, 0)
            bar.valueChanged.connect(self._scrolled)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(0)
        grid.addWidget(self.overview, 0, 1)
        grid.addWidget(self.time_ruler, 1, 1)
        grid.addWidget(self.freq_ruler, 2, 0)
        grid.addWidget(self.canvas, 2, 1)
        grid.addWidget(self.vscroll, 2, 2)
        grid.addWidget(self.hscroll, 3, 1)
        self.empty = QLabel(EMPTY, self.canvas)
        self.empty.setObjectName("empty-state")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setStyleSheet("color: #c8c8d0; font-size: 15px;")
        self.canvas.viewChanged.connect(self._follow_view)
        self.overview.moved.connect(self.centre_on)

    def show_empty(self, empty: bool, opening: str | None = None) -> None:
        """The empty state over a blank canvas, with blank rulers: what to do, or
        (``opening``) the name of the file being opened."""
        self.empty.setText(f"Opening {opening}…" if opening else EMPTY)
        self.empty.setVisible(empty)
        self.empty.resize(self.canvas.size())
        for ruler in (self.time_ruler, self.freq_ruler):
            ruler.blank = empty
            ruler.update()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.empty.resize(self.canvas.size())

    def centre_on(self, seconds: float) -> None:
        """Move the view (its zoom kept) to show ``seconds`` in its middle."""
        v = self.canvas.view
        span = v.t1 - v.t0
        v.t0 = min(max(seconds - span / 2, 0.0), max(v.duration - span, 0.0))
        v.t1 = v.t0 + span
        self.canvas.viewChanged.emit()

    def view_changed(self) -> None:
        """The view was changed (a jump, a project's view): whatever follows the canvas's
        view hears it (the rulers, the scroll bars, the nnAudio view)."""
        self.canvas.viewChanged.emit()

    def _follow_view(self) -> None:
        self._sync_scrollbars()
        self._redraw()

    def _redraw(self) -> None:
        for widget in (self.overview, self.time_ruler, self.freq_ruler, self.canvas):
            widget.update()

    def _sync_scrollbars(self) -> None:
        """Scroll bars in milliseconds and in hundredths of the frequency axis unit
        (Hz, or cents on a log axis), counted from the top."""
        v = self.canvas.view
        top, span = self._freq_axis()
        for bar, maximum, page, value in (
                (self.hscroll, v.duration - (v.t1 - v.t0), v.t1 - v.t0, v.t0),
                (self.vscroll, top - span, span, top - span - self._freq_pos())):
            bar.blockSignals(True)
            bar.setRange(0, max(0, round(maximum * 1000)))
            bar.setPageStep(max(1, round(page * 1000)))
            bar.setValue(round(value * 1000))
            bar.blockSignals(False)

    def _freq_axis(self) -> tuple[float, float]:
        """(length of the whole axis, length shown), in kHz or in octaves."""
        v = self.canvas.view
        if v.log_freq:
            return math.log2(v.nyquist / 20.0), math.log2(v.f_hi / max(v.f_lo, 20.0))
        return v.nyquist / 1000, (v.f_hi - v.f_lo) / 1000

    def _freq_pos(self) -> float:
        v = self.canvas.view
        return math.log2(max(v.f_lo, 20.0) / 20.0) if v.log_freq else v.f_lo / 1000

    def _scrolled(self) -> None:
        v = self.canvas.view
        span_t = v.t1 - v.t0
        v.t0 = self.hscroll.value() / 1000
        v.t1 = v.t0 + span_t
        top, span = self._freq_axis()
        pos = top - span - self.vscroll.value() / 1000
        if v.log_freq:
            v.f_lo = 20.0 * 2 ** pos
            v.f_hi = v.f_lo * 2 ** span
        else:
            v.f_lo, v.f_hi = pos * 1000, (pos + span) * 1000
        self.canvas.viewChanged.emit()

