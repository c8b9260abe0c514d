"""What part of the document the canvas shows, and the pixel <-> (seconds, Hz)
mapping. Pure Python: the canvas, the rulers and the tests share it."""

import math
from dataclasses import dataclass

LOG_FLOOR_HZ = 20.0  # lowest frequency a log axis shows


@dataclass
class ViewState:
    t0: float = 0.0  # seconds at the left edge
    t1: float = 10.0  # seconds at the right edge
    f_lo: float = 0.0  # Hz at the bottom edge
    f_hi: float = 22050.0  # Hz at the top edge
    log_freq: bool = False
    width: int = 800  # pixels
    height: int = 600
    duration: float = 10.0  # of the document, seconds
    nyquist: float = 22050.0
    content_hz: float | None = None  # the top of what the file holds (app.gui.view.viewfit)

    # -- mapping ---------------------------------------------------------------
    def x_of(self, seconds: float) -> float:
        return (seconds - self.t0) / (self.t1 - self.t0) * self.width

    def t_of(self, x: float) -> float:
        return self.t0 + x / self.width * (self.t1 - self.t0)

    def _unit(self, hz: float) -> float:
        """0 at the bottom edge, 1 at the top."""
        if self.log_freq:
            lo = max(self.f_lo, LOG_FLOOR_HZ)
            return math.log(max(hz, 1e-6) / lo) / math.log(self.f_hi / lo)
        return (hz - self.f_lo) / (self.f_hi - self.f_lo)

    def y_of(self, hz: float) -> float:
        """Pixel row from the top."""
        return (1.0 - self._unit(hz)) * self.height

    def f_of(self, y: float) -> float:
        u = 1.0 - y / self.height
        if self.log_freq:
            lo = max(self.f_lo, LOG_FLOOR_HZ)
            return lo * (self.f_hi / lo) ** u
        return self.f_lo + u * (self.f_hi - self.f_lo)

    @property
    def seconds_per_pixel(self) -> float:
        return (self.t1 - self.t0) / self.width

    # -- navigation ------------------------------------------------------------
    def fit(self) -> None:
        """The whole file, and every frequency up to its content's top."""
        self.t0, self.t1 = 0.0, max(self.duration, 1e-3)
        self.f_lo = LOG_FLOOR_HZ if self.log_freq else 0.0
        self.f_hi = min(self.nyquist, self.content_hz or self.nyquist)

    def keep_inside(self) -> None:
        """The time shown moved within the file (its length changed: a time edit); the
        whole file when the view was wider than zooming out allows (5 % past its end)."""
        if self.t1 - self.t0 > max(self.duration, 1e-3) * 1.05:
            self.t0, self.t1 = 0.0, max(self.duration, 1e-3)
        else:
            self._clamp_time()

    def set_log(self, log_freq: bool) -> None:
        self.log_freq = log_freq
        self.f_lo = max(self.f_lo, LOG_FLOOR_HZ) if log_freq else self.f_lo
        self._clamp_freq()

    def zoom_time(self, factor: float, anchor_x: float | None = None) -> None:
        """``factor`` > 1 zooms in around the time under ``anchor_x``."""
        anchor = self.t_of(self.width / 2 if anchor_x is None else anchor_x)
        span = min(max((self.t1 - self.t0) / factor, 0.01), max(self.duration, 0.01) * 1.05)
        frac = (anchor - self.t0) / (self.t1 - self.t0)
        self.t0 = anchor - frac * span
        self.t1 = self.t0 + span
        self._clamp_time()

    def zoom_freq(self, factor: float, anchor_y: float | None = None) -> None:
        anchor = self.f_of(self.height / 2 if anchor_y is None else anchor_y)
        if self.log_freq:
            lo = max(self.f_lo, LOG_FLOOR_HZ)
            octaves = max(math.log2(self.f_hi / lo) / factor, 0.05)
            frac = math.log2(anchor / lo) / math.log2(self.f_hi / lo)
            self.f_lo = anchor / 2 ** (frac * octaves)
            self.f_hi = self.f_lo * 2 ** octaves
        else:
            span = max((self.f_hi - self.f_lo) / factor, 10.0)
            frac = (anchor - self.f_lo) / (self.f_hi - self.f_lo)
            self.f_lo = anchor - frac * span
            self.f_hi = self.f_lo + span
        self._clamp_freq()

    def pan_pixels(self, dx: float, dy: float) -> None:
        """Move the content by (dx, dy) pixels (drag right = earlier times come in)."""
        dt = dx * self.seconds_per_pixel
        self.t0, self.t1 = self.t0 - dt, self.t1 - dt
        self._clamp_time()
        self.f_lo, self.f_hi = self.f_of(self.height - dy), self.f_of(-dy)
        self._clamp_freq()

    def _clamp_time(self) -> None:
        span = self.t1 - self.t0
        limit = max(self.duration, span)
        if self.t0 < 0:
            self.t0, self.t1 = 0.0, span
        if self.t1 > limit:
            self.t0, self.t1 = limit - span, limit

    def _clamp_freq(self) -> None:
        floor = LOG_FLOOR_HZ if self.log_freq else 0.0
        if self.log_freq:
            ratio = self.f_hi / max(self.f_lo, floor)
            if self.f_lo < floor:
                self.f_lo, self.f_hi = floor, min(floor * ratio, self.nyquist)
            if self.f_hi > self.nyquist:
                self.f_hi, self.f_lo = self.nyquist, max(self.nyquist / ratio, floor)
        else:
            span = min(self.f_hi - self.f_lo, self.nyquist)
            if self.f_lo < 0:
                self.f_lo, self.f_hi = 0.0, span
            if self.f_hi > self.nyquist:
                self.f_lo, self.f_hi = self.nyquist - span, self.nyquist


def format_time(seconds: float) -> str:
    minutes, rest = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes)}:{rest:06.3f}"
