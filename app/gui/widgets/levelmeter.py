"""The level meter: the peak of each output channel while playing, in dBFS, with
the ballistics of a peak programme meter (instant rise, a fall of FALL_DB_S) and
a peak hold; a sample at or over full scale lights the clip mark until it is
clicked."""

import math
import time

import numpy as np
from PySide6.QtCore import QRectF, QTimer
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QWidget

FLOOR_DB = -60.0
FALL_DB_S = 24.0  # dB a second the bar falls
HOLD_S = 2.0  # the peak mark stays this long
BAR, HOLD, CLIP, BACK = QColor(90, 200, 120), QColor(240, 240, 240), QColor(230, 60, 50), \
    QColor(28, 28, 34)


class LevelMeter(QWidget):
    """Reads ``player.levels`` 30 times a second from :meth:`start` until the player
    has stopped and the bars have fallen to the floor."""

    def __init__(self, player, parent=None):
        super().__init__(parent)
        self.player = player
        self.timer = QTimer(self, interval=33, timeout=self._read)
        self.setObjectName("level-meter")
        self.setFixedSize(160, 22)
        self.setToolTip("Output level, dBFS (peak). Click to clear the clip mark.")
        self.shown_db = np.full(2, -math.inf)  # the bars
        self.hold_db = np.full(2, -math.inf)  # the peak marks
        self.held_at = np.zeros(2)
        self.clipped = False
        self.channels = 1
        self._last = time.perf_counter()

    def start(self) -> None:
        self.player.levels.take()  # what an earlier play left
        self.timer.start()

    def _read(self) -> None:
        self.tick(self.player.levels.take())
        if not self.player.playing and not (self.shown_db > FLOOR_DB).any():
            self.timer.stop()  # fallen: the peak marks go too
            self.hold_db[:] = -math.inf
            self.update()

    def tick(self, peaks: np.ndarray) -> None:
        """New peaks (linear, one per output channel; empty: nothing played since)."""
        now = time.perf_counter()
        fall, self._last = FALL_DB_S * (now - self._last), now
        self.shown_db -= fall
        if len(peaks):
            self.channels = min(len(peaks), 2)
            db = 20 * np.log10(np.maximum(peaks[:2], 1e-10))
            db = np.pad(db, (0, 2 - len(db)), constant_values=-math.inf)
            self.shown_db = np.maximum(self.shown_db, db)
            newer = (db >= self.hold_db) | (now - self.held_at > HOLD_S)
            self.hold_db = np.where(newer, db, self.hold_db)
            self.held_at = np.where(newer, now, self.held_at)
            self.clipped |= bool((peaks >= 1.0).any())
        self.update()

    def mousePressEvent(self, event) -> None:
        self.clipped = False
        self.hold_db[:] = -math.inf
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), BACK)
        width = self.width() - 8  # the clip mark at the right end
        tall = (self.height() - 3) / self.channels
        for c in range(self.channels):
            top = 1 + c * (tall + 1)
            p.fillRect(QRectF(0, top, width * _unit(self.shown_db[c]), tall), BAR)
            x = width * _unit(self.hold_db[c])
            if x > 0:
                p.fillRect(QRectF(x - 1, top, 2, tall), HOLD)
        p.fillRect(QRectF(width + 2, 1, 6, self.height() - 2),
                   CLIP if self.clipped else BACK.lighter(150))
        p.end()


def _unit(db: float) -> float:
    """0 at FLOOR_DB (and below), 1 at full scale."""
    return min(max((db - FLOOR_DB) / -FLOOR_DB, 0.0), 1.0) if math.isfinite(db) else 0.0
