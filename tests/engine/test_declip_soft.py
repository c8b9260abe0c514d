"""De-clip on soft clipping (engine.repair.declip_soft): real takes through a saturating
curve are found and restored; clean takes and takes a compressor or a limiter rode
are left bit for bit, with a note of what was seen."""

import functools

import numpy as np
import pytest
from scipy.ndimage import minimum_filter1d, uniform_filter1d
from scipy.signal import lfilter

from engine.measure.metrics import si_sdr_db
from engine.repair import declip
from tests import takes

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=takes.missing() or "")
SR = 22050


@functools.cache
def _takes() -> tuple:
    return tuple(takes.clean_takes(sample_rate=SR, seed=6, speech=4, sounds=0, music=2,
                                   music_seconds=6.0))


def saturated(x: np.ndarray, rng, curve: str = "tanh") -> np.ndarray:
    """``x`` through a saturating curve its peak goes 1.5-3.5 deep into (``"tanh"``;
    ``"offset"``: tanh of the input off its centre by 0.1-0.4, one polarity bent more;
    ``"arctan"``: a curve of another shape), then scaled to a peak of -12 to -1 dBFS."""
    v = rng.uniform(1.5, 3.5) * x / np.abs(x).max()
    if curve == "tanh":
        y = np.tanh(v)
    elif curve == "offset":
        bias = rng.uniform(0.1, 0.4)
        y = np.tanh(v + bias) - np.tanh(bias)
    else:
        y = np.arctan(v)
    return y / np.abs(y).max() * 10 ** (rng.uniform(-12, -1) / 20)


def compressed(x: np.ndarray, rng) -> np.ndarray:
    """``x`` through an RMS compressor (4:1 above a threshold 14-26 dB under the peak,
    about 10 ms to follow): legitimate gain riding, no curve."""
    env = np.sqrt(lfilter([0.01], [1, -0.99], x ** 2) + 1e-12)
    threshold = rng.uniform(0.05, 0.2) * np.abs(x).max()
    return x * np.where(env > threshold, (env / threshold) ** -0.75, 1.0)


def limited(x: np.ndarray, rng) -> np.ndarray:
    """``x`` through a look-ahead peak limiter (ceiling 30-70 % of the peak, its gain the
    least within 5 ms either side, smoothed over 5 ms)."""
    ceiling = rng.uniform(0.3, 0.7) * np.abs(x).max()
    gain = np.minimum(1.0, ceiling / np.maximum(np.abs(x), 1e-12))
    n = int(0.005 * SR)
    return x * uniform_filter1d(minimum_filter1d(gain, 2 * n + 1), n)


@pytest.mark.parametrize("curve", ["tanh", "offset", "arctan"])
def test_soft_clipping_is_found_and_restored(curve):
    """Every take (speech and stereo music) through the curve: de-clip says it undid soft
    clipping and gains at least 3 dB SI-SDR (tanh: 10 dB) on each, never raising a
    sample more than the headroom (6 dB). Before, de-clip found nothing in these (no
    runs sit on a level) and changed nothing."""
    rng = np.random.default_rng(3)
    for take in _takes():
        x = take.samples
        y = saturated(x, rng, curve)
        out = declip.run(y, SR)
        assert "soft clipping" in out.summary, (take.name, out.note)
        assert np.isfinite(out.samples).all()
        assert np.all(np.abs(out.samples) <= np.abs(y) * 10 ** (6 / 20) + 1e-12)
        gained = si_sdr_db(x.ravel(), out.samples.ravel()) - si_sdr_db(x.ravel(), y.ravel())
        assert gained >= (10.0 if curve == "tanh" else 3.0), (take.name, gained)


@pytest.mark.slow
def test_soft_clipping_restores_speech_by_pesq():
    """PESQ-WB of the tanh-saturated speech takes rises by at least 1.0 each."""
    from tests import material

    rng = np.random.default_rng(4)
    for take in _takes():
        if take.kind != "speech":
            continue
        x = take.samples[0]
        y = saturated(x, rng)
        out = declip.run(y[None], SR).samples[0]
        assert material.pesq_wb(x, out) >= material.pesq_wb(x, y) + 1.0, take.name


@pytest.mark.parametrize("how", ["clean", "compressed", "limited"])
def test_no_curve_changes_nothing_and_says_what_it_saw(how):
    """Clean takes, and takes a compressor or a limiter rode (their peaks held down by
    gain, not bent by a curve): de-clip returns the source's samples bit for bit, an
    empty summary and a note that it found no clipped runs and no saturating curve."""
    rng = np.random.default_rng(5)
    for take in _takes():
        x = take.samples
        y = x if how == "clean" else np.stack([(compressed if how == "compressed"
                                                else limited)(ch, rng) for ch in x])
        out = declip.run(y, SR)
        assert out.summary == "" and np.array_equal(out.samples, y), (take.name, out.summary)
        assert out.note.startswith("no clipped runs and no saturating curve"), take.name


def test_the_report_says_what_de_clip_saw_when_it_changed_nothing():
    """Through the editor: a clean take's report line carries the note, and the audio is
    the source's bit for bit."""
    from app.session.editor import Editor
    from engine.io.audio import Audio
    from engine.model.document import Document

    x = _takes()[0].samples.astype(np.float32)
    ed = Editor(Document(Audio(x, SR), device="cpu"))
    report = ed.repair("declip")
    assert not report.changed and np.array_equal(ed.audio(), x)
    assert "no saturating curve" in report.line() and report.line().endswith("nothing changed")
