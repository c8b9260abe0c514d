"""Rendering: dB scale, colormaps from cmap, max-pooling against a naive loop."""

import math

import cmap
import numpy as np
import pytest
import torch

from engine.errors import ParameterError
from engine.io.audio import Audio
from engine.io.png import write_png
from engine.model.document import Document
from engine.region import Rect
from engine.transforms.stft import STFT
from engine.view.render import COLORMAPS, colormap_lut, pooled_magnitude, to_unit
from tests.conftest import tone

LINEAR = STFT(8000, n_fft=256)  # any STFT: its bins are evenly spaced in Hz


@pytest.mark.parametrize("name", COLORMAPS)
def test_colormaps_come_from_cmap(name):
    lut = colormap_lut(name).numpy()
    ref = cmap.Colormap(name).lut(256)
    assert lut.shape == (256, 4) and lut.dtype == np.uint8
    assert np.max(np.abs(lut / 255.0 - ref)) <= 0.5 / 255 + 1e-9


def test_unknown_colormap():
    with pytest.raises(ParameterError, match="unknown colormap 'rainbow'; use one of viridis"):
        colormap_lut("rainbow")


def test_db_scale():
    ref = 10.0
    mag = torch.tensor([10.0, 1.0, 1e-4, 0.0, 100.0])  # 0, -20, -100, -inf, +20 dB
    np.testing.assert_allclose(to_unit(mag, ref, top_db=0, range_db=100).numpy(), [1, 0.8, 0, 0, 1],
                               atol=1e-6)
    np.testing.assert_allclose(to_unit(mag, ref, top_db=-20, range_db=60).numpy()[:2], [1, 1],
                               atol=1e-6)


def test_full_scale_sine_reads_zero_db():
    sr = 48000
    doc = Document(Audio(tone(1500, 1.0, sr, amplitude=1.0), sr), n_fft=2048, device="cpu")
    peak_bin = round(1500 * 2048 / sr)  # 1500 Hz sits exactly on bin 64
    mag = doc.magnitude[0, peak_bin, 10:-10]
    assert 20 * math.log10(float(mag.mean()) / doc.full_scale) == pytest.approx(0.0, abs=0.01)


def _naive_pool(x, out_len):
    """Max over source cells [i, i+1) that overlap output cell [j, j+1) * len/out_len."""
    n = len(x)
    out = []
    for j in range(out_len):
        a, b = j * n / out_len, (j + 1) * n / out_len
        first, last = math.floor(a), min(n, math.ceil(b))
        out.append(max(x[first:max(last, first + 1)]))
    return np.array(out)


@pytest.mark.parametrize("frames,width", [(100, 100), (100, 37), (37, 100), (300, 100), (7, 3)])
@pytest.mark.parametrize("bins,height", [(50, 50), (50, 20), (20, 50)])
def test_linear_pooling_matches_a_naive_loop(rng, frames, width, bins, height):
    mag = torch.from_numpy(rng.random((1, frames, bins)).astype(np.float32))
    got = pooled_magnitude(mag, Rect(0, bins, 0, frames), width=width, height=height,
                           transform=LINEAR).numpy()
    x = mag[0].numpy()
    along_time = np.stack([_naive_pool(x[:, b], width) for b in range(bins)])  # [bins, width]
    ref = np.stack([_naive_pool(along_time[:, c], height) for c in range(width)], axis=1)
    np.testing.assert_array_equal(got, ref[::-1])


def test_long_rects_keep_every_peak(rng):
    frames, width = 50_000, 640
    mag = torch.zeros(2, frames, 8)
    spikes = rng.choice(frames, 40, replace=False)
    mag[1, spikes, 3] = 1.0
    got = pooled_magnitude(mag, Rect(0, 8, 0, frames), width=width, height=8, transform=LINEAR)
    columns = set(np.nonzero(got[8 - 1 - 3].numpy())[0])
    assert {int(s * width / frames) for s in spikes} <= columns
    assert len(columns) <= 2 * len(spikes)  # a spike lights its column (or one neighbour) only
    assert got.sum() == len(columns)


def test_tone_lands_on_the_right_row_linear_and_log():
    sr = 32000
    doc = Document(Audio(tone(1000, 2.0, sr), sr), n_fft=1024, device="cpu")
    height = 400
    linear = doc.render(width=50, height=height)
    row = int(np.argmax(linear[:, 25, :3].astype(int).sum(1)))
    assert abs((height - 0.5 - row) / height * (sr / 2) - 1000) < sr / 2 / height + doc.hz_of(1)
    log = doc.render(width=50, height=height, log_freq=True)
    row = int(np.argmax(log[:, 25, :3].astype(int).sum(1)))
    lo, hi = 0.5 * doc.hz_of(1), (doc.n_bins - 0.5) * doc.hz_of(1)
    hz = lo * (hi / lo) ** ((height - 0.5 - row) / height)
    assert abs(math.log2(hz / 1000)) < 0.03  # within a quarter tone


@pytest.mark.parametrize("width", [64, 3000])  # reduced by 2^k before pooling; not reduced
def test_a_document_renders_its_complex_store_in_chunks_as_its_magnitude(rng, width):
    """The store is complex and turned into magnitude a chunk of frames at a time: the
    image must equal the one pooled from the whole magnitude at once (chunk edges too)."""
    from engine.view import render

    doc = Document(Audio(rng.uniform(-1, 1, (2, 128 * 9000)).astype(np.float32), 8000),
                   device="cpu", n_fft=256, hop=128)  # 9001 frames: more than two chunks
    assert doc.n_frames > 2 * render.CHUNK_FRAMES
    rect = Rect(3, 30, 7, doc.n_frames - 5)  # chunks start off the store's chunk grid
    got = doc.render(rect, width, 27, colormap="gray")
    whole = render.render(doc.magnitude.transpose(1, 2), rect, width=width, height=27,
                          ref=doc.full_scale,
                          transform=doc.transform, colormap="gray")
    np.testing.assert_array_equal(got, whole)
    levels = doc.level_tile_db(rect, 8)
    x = doc.magnitude[:, 3:30, 7:doc.n_frames - 5].amax(0)
    x = torch.nn.functional.max_pool1d(x[None], 8, ceil_mode=True)[0]
    np.testing.assert_allclose(levels, 20 * torch.log10(x / doc.full_scale).numpy(), atol=1e-4)


def test_overviews_come_from_block_maxima_kept_up_to_date_with_edits(rng):
    """Zoomed out, a document draws from its kept block maxima (engine.view.overview): the
    same pixels as from the whole magnitude, before and after an edit."""
    from engine.view import render

    doc = Document(Audio(rng.uniform(-1, 1, (2, 128 * 9000)).astype(np.float32), 8000),
                   device="cpu", n_fft=256, hop=128)
    rect = Rect(0, doc.n_bins, 16, doc.n_frames)  # on block edges; 200 px: 16 frames a column

    def direct():
        return render.render(doc.magnitude.transpose(1, 2), rect, width=200, height=64,
                             ref=doc.full_scale,
                             transform=doc.transform)

    np.testing.assert_array_equal(doc.render(rect, 200, 64), direct())
    assert doc._overview._blocks is not None  # drawn from the blocks
    mag, phase = doc.read(Rect(10, 40, 3001, 3100))
    doc.write(Rect(10, 40, 3001, 3100), mag * 0, phase)
    # only those bins are redone (and the frames before the rect, never drawn, are not built)
    assert doc._overview._stale == [(0, 16, 0, doc.n_bins), (3001, 3100, 10, 40)]
    np.testing.assert_array_equal(doc.render(rect, 200, 64), direct())
    tile = Rect(0, doc.n_bins, 2048, 4096)
    x = torch.nn.functional.max_pool1d(doc.magnitude[:, :, 2048:4096].amax(0)[None], 32)[0]
    np.testing.assert_allclose(doc.level_tile_db(tile, 32),
                               20 * torch.log10(x.clamp(min=1e-12 * doc.full_scale)
                                                / doc.full_scale).numpy(), atol=1e-4)


def test_tile_at_full_resolution_and_png_round_trip(tmp_path, rng):
    from PySide6.QtGui import QImage

    doc = Document(Audio(rng.uniform(-1, 1, (2, 44100)).astype(np.float32), 44100), device="cpu")
    tile = doc.render(Rect(100, 356, 10, 74), colormap="gray")
    assert tile.shape == (256, 64, 4)
    expected = to_unit(doc.magnitude[:, 100:356, 10:74].amax(0), doc.full_scale)
    np.testing.assert_array_equal(tile[::-1, :, 0], (expected * 255).round().numpy())
    write_png(tile, tmp_path / "t.png")
    image = QImage(str(tmp_path / "t.png")).convertToFormat(QImage.Format.Format_RGBA8888)
    assert (image.width(), image.height()) == (64, 256)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(256, image.bytesPerLine() // 4, 4)
    np.testing.assert_array_equal(pixels[:, :64], tile)


def test_packed_texture(rng):
    doc = Document(Audio(rng.uniform(-1, 1, (1, 8000)).astype(np.float32), 8000), device="cpu")
    rect = Rect(0, 64, 0, 16)
    tex = doc.packed_texture(rect)
    assert tex.shape == (64, 16, 4)
    phase = doc.phase[0, 0:64, 0:16].numpy()[::-1]
    np.testing.assert_allclose(tex[..., 1] / 255.0, (phase + np.pi) / (2 * np.pi), atol=0.5 / 255)
    assert (tex[..., 2] == 0).all() and (tex[..., 3] == 255).all()


def test_bad_sizes_and_rects(rng):
    doc = Document(Audio(rng.uniform(-1, 1, (1, 8000)).astype(np.float32), 8000), device="cpu")
    with pytest.raises(ParameterError, match="image size 0x10 is not valid"):
        doc.render(width=0, height=10)
    with pytest.raises(ParameterError, match="lies outside the document"):
        doc.render(Rect(0, 10, 10_000, 10_010))
