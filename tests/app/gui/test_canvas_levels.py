"""What the canvas draws for each pixel row: the loudest bin it spans, however
many bins that is (the tile textures are pyramids over bins)."""

import math

import numpy as np
import pytest

from app.gui.view.canvas import SpectrogramCanvas
from app.gui.view.tiles import PYRAMID_ROWS, TEXTURE_TILE, bin_pyramid
from engine.region import Rect
from engine.view.render import colormap_lut
from tests.conftest import document, tone


@pytest.mark.parametrize("rows", [TEXTURE_TILE, 200, 3, 1])
def test_the_bin_pyramid_holds_the_max_of_every_aligned_run_of_bins(rows, rng):
    db = rng.normal(-60, 20, (rows, 7)).astype(np.float32)
    pyramid = bin_pyramid(db)
    assert pyramid.shape == (PYRAMID_ROWS, 7) and pyramid.dtype == np.float32
    for k in range(int(math.log2(TEXTURE_TILE)) + 1):
        size, offset = 1 << k, PYRAMID_ROWS - (PYRAMID_ROWS >> k)
        for i in range(-(-rows // size)):
            np.testing.assert_array_equal(pyramid[offset + i],
                                          db[i * size:(i + 1) * size].max(axis=0))


def _lut_index(colours: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """The colormap entry of each pixel (RGB), which must be exactly one of them."""
    distance = np.abs(colours[:, None, :3].astype(int) - lut[None, :, :3].astype(int)).sum(-1)
    found = distance.argmin(axis=1)
    assert (distance[np.arange(len(found)), found] == 0).all()
    return found


def test_each_pixel_row_shows_the_loudest_bin_it_spans_when_zoomed_out(qtbot, tmp_path):
    """A log axis over a 16384-point analysis: the top rows span 20 to 90 bins each.
    Tones (one a few bins wide each) must show at their level in the rows they fall in,
    never skipped, and no row may show more than what lies within its own span of it."""
    rate = 22050
    mix = sum(tone(hz, 2.0, rate, amplitude=0.05) for hz in (2503.0, 4111.7, 6789.1, 9876.5))
    doc = document(mix.reshape(1, -1), rate, n_fft=16384)
    canvas = SpectrogramCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(300, 240)
    canvas.show()
    qtbot.waitExposed(canvas)
    canvas.view.log_freq = True
    canvas.set_document(doc)
    for _ in range(50):
        image = canvas.grabFramebuffer()
        if canvas.complete:
            break
    image = image.convertToFormat(image.Format.Format_RGBA8888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.bytesPerLine() // 4, 4)[:, :image.width()]
    view, x = canvas.view, image.width() // 2
    frame = round(view.t_of(x + 0.5) * rate / doc.transform.hop)
    levels = doc.level_tile_db(Rect(0, doc.n_bins, frame, frame + 1))[:, 0]
    shown = _lut_index(pixels[:, x], colormap_lut("viridis").numpy())
    def entry(db):  # the colormap entry of a level (floor, ceiling, gamma 1)
        return np.clip((db - canvas.floor_db) / (canvas.ceiling_db - canvas.floor_db) * 255,
                       0, 255)

    checked = 0
    for y in range(image.height()):
        lo = doc.transform.bin_of(view.f_of(y + 1))  # the row's bottom and top edges
        hi = doc.transform.bin_of(view.f_of(y))
        first, last = math.floor(lo + 0.5), math.floor(hi + 0.5)
        if hi - lo < 20 or first // TEXTURE_TILE != last // TEXTURE_TILE:
            continue  # rows that split one tile's bins only (tiles draw apart)
        reach = math.ceil(hi - lo)
        least = levels[first:last + 1].max()
        most = levels[max(first - reach, 0):last + reach + 1].max()
        assert entry(least) - 1 <= shown[y] <= entry(most) + 1, (y, least, most)
        checked += 1
    assert checked > 40
    canvas.set_document(None)
