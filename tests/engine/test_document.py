"""The document: lossless until touched, the region API, incremental = full."""

import time

import numpy as np
import pytest
import torch

from engine.errors import ParameterError
from engine.measure.metrics import snr_db
from engine.model.document import Document
from engine.model.resynth import Resynthesizer
from engine.region import Rect


def _corpus(rng):
    t = lambda n, sr: np.arange(n) / sr  # noqa: E731
    square = np.sign(np.sin(2 * np.pi * 100 * t(44100, 44100)))
    impulses = np.zeros(30000)
    impulses[[0, 1, 777, 15000, 29999]] = [1.0, -1.0, 0.5, 1.0, -0.7]
    return {
        "mono-44k1": (rng.uniform(-1, 1, (1, 44100)), 44100),
        "stereo-48k": (rng.uniform(-1, 1, (2, 48000)), 48000),
        "6ch-48k": (rng.uniform(-0.5, 0.5, (6, 12345)), 48000),
        "8k": (np.sin(2 * np.pi * 440 * t(8000, 8000))[None], 8000),
        "22k05": (rng.uniform(-1, 1, (2, 22050)), 22050),
        "96k": (rng.uniform(-1, 1, (1, 96001)), 96000),
        "192k": (rng.uniform(-1, 1, (2, 192000)), 192000),
        "odd-length": (rng.uniform(-1, 1, (2, 10007)), 44100),
        "one-sample": (np.array([[0.5]]), 44100),
        "shorter-than-window": (rng.uniform(-1, 1, (2, 700)), 44100),
        "silence": (np.zeros((2, 20000)), 44100),
        "full-scale-square": (square[None], 44100),
        "impulses": (impulses[None], 44100),
    }


CORPUS = list(_corpus(np.random.default_rng(0)))


@pytest.mark.parametrize("name", CORPUS)
def test_untouched_document_resynthesizes_to_its_input(write_audio, rng, name):
    samples, rate = _corpus(rng)[name]
    path = write_audio(f"{name}.wav", samples.astype(np.float32), rate, "FLOAT")
    doc = Document.open(path, device="cpu")
    out = Resynthesizer(doc).full().numpy()
    assert out.shape == samples.shape
    if not samples.any():
        assert not out.any()  # silence stays exactly silent
    else:
        assert snr_db(doc.audio.samples, out) >= 100


def _doc(rng, channels=2, n=44100 * 3, **kw):
    from engine.io.audio import Audio

    return Document(Audio(rng.uniform(-0.5, 0.5, (channels, n)).astype(np.float32), 44100),
                    device="cpu", **kw)


def test_shapes_and_units(rng):
    doc = _doc(rng, n_fft=1024, hop=256)
    assert doc.magnitude.shape == (2, 513, 1 + 44100 * 3 // 256)
    assert doc.magnitude.dtype == doc.phase.dtype == torch.float32
    assert doc.bin_of(1000.0) == pytest.approx(1000 * 1024 / 44100)
    assert doc.frame_of(1.0) == pytest.approx(44100 / 256)


def test_read_write_and_dirty_rect(rng):
    doc = _doc(rng)
    seen = []
    doc.add_listener(lambda rect, chans: seen.append((rect, chans)))
    rect = Rect(10, 50, 100, 140)
    mag, phase = doc.read(rect, channel=1)
    assert mag.shape == phase.shape == (1, 40, 40)
    other = doc.read_complex(rect, channel=0)
    doc.write(rect, mag * 0.5, phase, channel=1)
    # stored as complex coefficients: read back within float32 rounding
    np.testing.assert_allclose(doc.magnitude[1, 10:50, 100:140], mag[0] * 0.5, rtol=1e-6)
    assert torch.equal(doc.read_complex(rect, channel=0), other)  # the other channel untouched
    assert seen == [(rect, (1,))]
    z = doc.read_complex(rect, channel=1) * 1j
    doc.write_complex(rect, z, channel=1)
    assert torch.equal(doc.read_complex(rect, channel=1), z)  # complex in, the same out
    assert torch.equal(doc.coefficients(100, 140)[1, 10:50], z[0])
    doc.write(Rect(0, 5, 0, 5), *doc.read(Rect(0, 5, 0, 5)))
    assert doc.take_dirty() == Rect(0, 50, 0, 140)
    assert doc.take_dirty() is None


def test_rects_are_clipped_to_the_document(rng):
    doc = _doc(rng)
    mag, _ = doc.read(Rect(-5, 3, doc.n_frames - 2, doc.n_frames + 10))
    assert mag.shape == (2, 3, 2)


def test_write_of_the_wrong_shape_is_refused(rng):
    doc = _doc(rng)
    mag, phase = doc.read(Rect(0, 10, 0, 10))
    with pytest.raises(ParameterError, match="does not fit"):
        doc.write(Rect(0, 10, 0, 11), mag, phase)


def test_missing_channel_is_refused(rng):
    with pytest.raises(ParameterError, match="channel 2 does not exist; this document has 2"):
        _doc(rng).read(Rect(0, 1, 0, 1), channel=2)


def test_original_is_kept_after_edits(rng):
    doc = _doc(rng)
    rect = Rect(100, 300, 20, 60)
    before = torch.polar(*doc.read(rect))
    doc.write(rect, *(t * 0 for t in doc.read(rect)))
    torch.testing.assert_close(doc.original(rect), before, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("hop", [512, 300])
def test_incremental_equals_full_resynthesis(rng, hop):
    doc = _doc(rng, hop=hop)
    live = Resynthesizer(doc)
    live.full()
    last = doc.n_frames
    for rect, gain in [(Rect(100, 400, 30, 70), 0.0), (Rect(0, 1025, 200, 203), 3.0),
                       (Rect(5, 6, 0, 2), 0.1), (Rect(500, 900, last - 3, last), 2)]:
        mag, phase = doc.read(rect)
        doc.write(rect, mag * gain, phase + 0.5)
    spans = live.update()
    assert len(spans) == 4
    fresh = Resynthesizer(doc).full()
    assert torch.equal(torch.from_numpy(live.waveform()), fresh)


def test_edit_changes_only_the_samples_it_affects(rng):
    doc = _doc(rng)
    live = Resynthesizer(doc)
    before = live.full().clone()
    rect = Rect(0, doc.n_bins, 100, 110)
    doc.write(rect, *(t * 0 for t in doc.read(rect)))
    ((s0, s1),) = live.update()
    after = torch.from_numpy(live.waveform())
    assert (s0, s1) == doc.transform.samples_affected(100, 110, doc.length)
    assert torch.equal(after[:, :s0], before[:, :s0])
    assert torch.equal(after[:, s1:], before[:, s1:])
    assert not torch.equal(after[:, s0:s1], before[:, s0:s1])


def test_the_analysis_stage_counts_the_analysis_done_a_chunk_a_step():
    """``--stats``' "analysis" is the constructor's analysis (it is now a generator a
    stroke's end can run a chunk a step; timing the generator's creation counted ~0)."""
    from engine.io.audio import Audio
    from engine.runtime import stats

    x = np.random.default_rng(0).standard_normal((2, 20 * 44100)).astype(np.float32)
    before = stats._totals["analysis"]
    start = time.perf_counter()
    Document(Audio(x, 44100), transform="cq", device="cpu")
    took = time.perf_counter() - start
    assert stats._totals["analysis"] - before > 0.5 * took
