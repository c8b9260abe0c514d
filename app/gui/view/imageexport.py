"""The spectrogram as a picture: the whole file, the selection or the view, at a
chosen size, with optional time and frequency axes and a colour bar. Drawn
with QPainter on a QImage (no window needed), so it runs in a worker."""

import math
from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter

from app.gui.view.rulers import nice_step
from engine.errors import OutputError
from engine.io import atomic
from engine.model.document import Document
from engine.region import Rect
from engine.view.render import colormap_lut

AXIS_LEFT, AXIS_BOTTOM, PAD = 70, 44, 12  # pixels for tick labels and titles
BAR_WIDTH, BAR_SPACE = 18, 74  # the colour bar and its labels
BACKGROUND, INK = QColor(255, 255, 255), QColor(30, 30, 30)


@dataclass(frozen=True)
class Picture:
    """What to draw: seconds ``t0``-``t1`` and Hz ``f_lo``-``f_hi`` of ``channel``
    (None: the loudest), ``width`` x ``height`` pixels in all, and the view's style."""

    t0: float
    t1: float
    f_lo: float
    f_hi: float
    width: int
    height: int
    axes: bool = True
    colorbar: bool = True
    colormap: str = "viridis"
    floor_db: float = -100.0
    ceiling_db: float = 0.0
    log_freq: bool = False
    channel: int | None = None

    def plot(self) -> QRect:
        """Where the spectrogram goes in the picture (all of it without decorations)."""
        left, bottom = (AXIS_LEFT, AXIS_BOTTOM) if self.axes else (0, 0)
        top = PAD if (self.axes or self.colorbar) else 0
        right = BAR_SPACE if self.colorbar else (PAD if self.axes else 0)
        return QRect(left, top, max(1, self.width - left - right),
                     max(1, self.height - top - bottom))


def cells(doc: Document, picture: Picture) -> Rect:
    """The document's frames and bins that ``picture`` spans."""
    frames = (max(0, math.floor(doc.frame_of(picture.t0) + 0.5)),
              min(doc.n_frames, math.floor(doc.frame_of(picture.t1) + 0.5) + 1))
    bins = (max(0, math.floor(doc.bin_of(picture.f_lo) + 0.5)),
            min(doc.n_bins, math.floor(doc.bin_of(picture.f_hi) + 0.5) + 1))
    return Rect(bins[0], bins[1], frames[0], frames[1])


def spectrogram_image(doc: Document, picture: Picture) -> QImage:
    rect, plot = cells(doc, picture), picture.plot()
    rgba = doc.render(rect, plot.width(), plot.height(), channel=picture.channel,
                      colormap=picture.colormap, top_db=picture.ceiling_db,
                      range_db=picture.ceiling_db - picture.floor_db,
                      log_freq=picture.log_freq)
    image = QImage(picture.width, picture.height, QImage.Format.Format_RGBA8888)
    image.fill(BACKGROUND)
    data = QImage(rgba.data, rgba.shape[1], rgba.shape[0], rgba.strides[0],
                  QImage.Format.Format_RGBA8888)
    painter = QPainter(image)
    painter.drawImage(plot.topLeft(), data)
    painter.setPen(INK)
    painter.setFont(QFont("DejaVu Sans", 9))
    if picture.axes:
        _time_axis(painter, plot, doc.transform.seconds_of(rect.frame0 - 0.5),
                   doc.transform.seconds_of(rect.frame1 - 0.5))
        lo, hi = doc.hz_of(rect.bin0 - 0.5), doc.hz_of(rect.bin1 - 0.5)
        if picture.log_freq:
            lo = max(lo, doc.hz_of(0.5))
        _frequency_axis(painter, plot, lo, hi, picture.log_freq)
    if picture.colorbar:
        _colour_bar(painter, plot, picture)
    painter.end()
    return image


def save_png(image: QImage, path) -> None:
    """Write atomically: the PNG appears whole or not at all."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OutputError(f"{path}: the picture could not be encoded as PNG")
    buffer.close()
    atomic.write_bytes(path, bytes(data))


def _time_axis(p: QPainter, plot: QRect, t0: float, t1: float) -> None:
    step = nice_step(t1 - t0, max(2, plot.width() // 110))
    y = plot.bottom() + 1
    t = math.ceil(t0 / step) * step
    while t <= t1:
        x = plot.left() + (t - t0) / (t1 - t0) * plot.width()
        p.drawLine(round(x), y, round(x), y + 5)
        label = f"{int(t // 60)}:{t % 60:04.1f}" if t1 >= 120 else f"{t:g}"
        p.drawText(QRect(round(x) - 40, y + 6, 80, 16), Qt.AlignmentFlag.AlignHCenter, label)
        t += step
    p.drawText(QRect(plot.left(), y + 22, plot.width(), 18), Qt.AlignmentFlag.AlignHCenter,
               "time (m:s)" if t1 >= 120 else "time (s)")


def _frequency_axis(p: QPainter, plot: QRect, lo: float, hi: float, log: bool) -> None:
    if log:
        ticks = [m * 10 ** e for e in range(0, 6) for m in (1, 2, 5) if lo <= m * 10 ** e <= hi]
    else:
        step = nice_step(hi - lo, max(2, plot.height() // 50))
        ticks = [k * step for k in range(math.ceil(lo / step), math.floor(hi / step) + 1)]
    x = plot.left() - 1
    for f in ticks:
        u = math.log(f / lo) / math.log(hi / lo) if log else (f - lo) / (hi - lo)
        y = round(plot.bottom() + 1 - u * plot.height())
        p.drawLine(x - 5, y, x, y)
        text = f"{f / 1000:g}k" if f >= 1000 else f"{f:g}"
        p.drawText(QRect(0, y - 8, x - 8, 16),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
    p.save()
    p.translate(12, plot.center().y())
    p.rotate(-90)
    p.drawText(QRect(-60, -8, 120, 16), Qt.AlignmentFlag.AlignHCenter, "frequency (Hz)")
    p.restore()


def _colour_bar(p: QPainter, plot: QRect, picture: Picture) -> None:
    """The colormap from floor (bottom) to ceiling (top), labelled in dB."""
    lut = colormap_lut(picture.colormap).numpy()
    bar = QRect(plot.right() + 12, plot.top(), BAR_WIDTH, plot.height())
    for row in range(bar.height()):
        r, g, b, _ = lut[round((1 - row / max(bar.height() - 1, 1)) * 255)]
        p.fillRect(bar.left(), bar.top() + row, bar.width(), 1, QColor(int(r), int(g), int(b)))
    lo, hi = picture.floor_db, picture.ceiling_db
    step = nice_step(hi - lo, max(2, bar.height() // 40))
    for k in range(math.ceil(lo / step), math.floor(hi / step) + 1):
        db = k * step
        y = round(bar.bottom() - (db - lo) / (hi - lo) * (bar.height() - 1))
        p.drawLine(bar.right() + 1, y, bar.right() + 4, y)
        p.drawText(QRect(bar.right() + 6, y - 8, 48, 16), Qt.AlignmentFlag.AlignVCenter,
                   f"{db:g} dB")
