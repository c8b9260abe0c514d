"""The waveform overview lane above the time ruler: the whole file's waveform (its
edits included), the span the canvas shows outlined; a click or drag there moves
the view to the time under the pointer, as in RX's overview.

Peaks are kept per block of BLOCK samples (min and max of every channel), found
for the whole file in a thread (a 10-minute stereo file: about 50 ms) and redone
only for the blocks an edit touched, once its sound has been spliced in."""

import threading

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from app.gui.viewstate import ViewState

BLOCK = 512  # samples a block
WAVE, SPAN, BACK = QColor(120, 200, 160), QColor(255, 255, 255), QColor(28, 28, 34)
REFRESH_MS = 300  # after the last edit: its sound is spliced in by then (else later)


class OverviewLane(QWidget):
    moved = Signal(float)  # the time the view should centre on, seconds
    computed = Signal(object, object)  # the whole file's peaks, the session they are of

    def __init__(self, view: ViewState, parent=None):
        super().__init__(parent)
        self.view = view
        self.session = None
        self.peaks: np.ndarray | None = None  # [2, blocks]: min and max over channels
        self.stale: set[int] = set()  # blocks whose samples an edit changed
        self.setFixedHeight(30)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("The whole file: click or drag to move the view there")
        self.timer = QTimer(self, singleShot=True, interval=REFRESH_MS, timeout=self._refresh)
        self.computed.connect(self._computed)
        self.computing = False

    def set_session(self, session) -> None:
        """Follow ``session``'s document (None: no document); its waveform is read when
        it is ready."""
        if self.session is not None:
            self.session.doc.remove_listener(self._edited)
        self.session, self.peaks, self.stale = session, None, set()
        if session is not None:
            session.doc.add_listener(self._edited)
            self.timer.start()
        self.update()

    def _edited(self, rect, channels) -> None:
        doc = self.session.doc
        s0, s1 = doc.transform.samples_affected(rect.frame0, rect.frame1, doc.length)
        self.stale.update(range(s0 // BLOCK, -(-s1 // BLOCK)))
        self.timer.start()

    def _refresh(self) -> None:
        """The peaks of the whole file (once its waveform exists), or of the blocks
        edits touched once their sound is in; else try again in a moment."""
        session = self.session
        if session is None:
            return
        if not session.synth.ready or session.synth.behind:
            self.timer.start()
            return
        n = session.doc.length
        if self.peaks is None:
            if not self.computing:
                self.computing = True
                wave = session.synth.cached(0, n, copy=False)  # read in place, for a picture
                threading.Thread(target=lambda: self.computed.emit(block_peaks(wave), session),
                                 daemon=True).start()
            return
        if self.stale:
            blocks = sorted(self.stale)
            b0, b1 = blocks[0], min(blocks[-1] + 1, self.peaks.shape[1])
            part = session.synth.cached(b0 * BLOCK, min(n, b1 * BLOCK))
            self.peaks[:, b0:b1] = block_peaks(part)
        self.stale = set()
        self.update()

    def _computed(self, peaks: np.ndarray, session) -> None:
        self.computing = False
        if session is self.session:
            self.peaks = peaks
            self.update()
        self.timer.start()  # edits made meanwhile, or another document's turn

    def mousePressEvent(self, event) -> None:
        self._move(event)

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move(event)

    def _move(self, event) -> None:
        if self.session is not None:
            self.moved.emit(event.position().x() / max(self.width(), 1) * self.view.duration)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), BACK)
        if self.peaks is not None and self.view.duration > 0:
            low, high = columns(self.peaks, self.width())
            mid, half = self.height() / 2, self.height() / 2 - 1
            p.setPen(WAVE)
            for x, (a, b) in enumerate(zip(low, high, strict=True)):
                p.drawLine(x, round(mid - b * half), x, round(mid - a * half))
        if self.session is not None:
            v, scale = self.view, self.width() / max(self.view.duration, 1e-9)
            p.setPen(QPen(SPAN, 1))
            p.drawRect(QRectF(v.t0 * scale, 0.5, (v.t1 - v.t0) * scale, self.height() - 1.5))
        p.end()


def block_peaks(samples: np.ndarray) -> np.ndarray:
    """``[2, blocks]``: the lowest and highest sample of every channel in each block of
    BLOCK samples of float ``[channels, n]``, clipped to full scale."""
    n = samples.shape[1]
    whole = n // BLOCK * BLOCK
    parts = [samples[:, :whole].reshape(samples.shape[0], -1, BLOCK)]
    if whole < n:
        tail = np.zeros((samples.shape[0], 1, BLOCK), samples.dtype)
        tail[:, 0, :n - whole] = samples[:, whole:]
        parts.append(tail)
    blocks = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
    return np.clip(np.stack([blocks.min(axis=(0, 2)), blocks.max(axis=(0, 2))]), -1, 1)


def columns(peaks: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest of the blocks each of ``width`` columns covers."""
    count = peaks.shape[1]
    edges = np.minimum((np.arange(width) * count) // max(width, 1), count - 1)
    return np.minimum.reduceat(peaks[0], edges), np.maximum.reduceat(peaks[1], edges)
