"""The sliced constant-Q transform: exact, local, equal to nsgt's per-slice frame."""

import math

import numpy as np
import pytest
import torch

from engine.audio import Audio
from engine.document import Document
from engine.errors import ParameterError
from engine.metrics import snr_db
from engine.region import Rect
from engine.resynth import Resynthesizer
from engine.transforms import make
from engine.transforms.cq import FRAMES_PER_SLICE, SlicedCQ, centre_frequencies
from tests.nsgt_compat import numpy_clip_fixed


@pytest.mark.parametrize("sr,seconds", [(44100, 3.3), (48000, 1.0), (22050, 2.0),
                                        (16000, 0.5), (8000, 0.01), (96000, 1.5)])
def test_untouched_audio_round_trips_above_100_db(rng, sr, seconds):
    x = torch.from_numpy((0.3 * rng.standard_normal((2, max(1, int(sr * seconds)))))
                         .astype(np.float32))
    t = SlicedCQ(sr)
    y = t.inverse(t.forward(x), x.shape[-1])
    assert snr_db(x.numpy(), y.numpy()) >= 100


def test_one_sample_and_silence_round_trip():
    t = SlicedCQ(44100)
    one = torch.tensor([[0.5]])
    assert snr_db(one.numpy(), t.inverse(t.forward(one), 1).numpy()) >= 100
    silence = torch.zeros(1, 5000)
    assert torch.equal(t.inverse(t.forward(silence), 5000), silence)


def test_a_span_equals_the_full_inverse_bit_for_bit(rng):
    t = SlicedCQ(22050)
    n = 3 * t.slice_len + 1234
    x = torch.from_numpy(rng.standard_normal((1, n)).astype(np.float32))
    coeffs = t.forward(x)
    full = t.inverse(coeffs, n)
    for s0, s1 in [(0, 10), (t.slice_len - 5, t.slice_len + 5), (40000, 90000), (n - 7, n)]:
        fa, fb = t.frames_needed(s0, s1, n)
        assert torch.equal(t.inverse_span(coeffs[..., fa:fb], fa, s0, s1, n), full[:, s0:s1])


def test_frames_and_bins_of_a_region_equal_the_full_forward(rng):
    t = SlicedCQ(22050)
    x = torch.from_numpy(rng.standard_normal((2, 70000)).astype(np.float32))
    full = t.forward(x)
    part = t.forward_frames(x, 700, 1400, slice(100, 160))
    torch.testing.assert_close(part, full[:, 100:160, 700:1400], rtol=0, atol=1e-5)


def test_incremental_resynthesis_of_an_edit_equals_the_full_one(rng):
    sr = 22050
    x = (0.2 * rng.standard_normal((1, 3 * sr))).astype(np.float32)
    doc = Document(Audio(x, sr), transform="cq", device="cpu")
    synth = Resynthesizer(doc)
    synth.full()
    rect = Rect(int(doc.bin_of(400)), int(doc.bin_of(900)), int(doc.frame_of(1.0)),
                int(doc.frame_of(1.4)))
    mag, phase = doc.read(rect)
    doc.write(rect, mag * 0.1, phase)
    spans = synth.update()
    assert spans and all(b - a <= 2 * doc.transform.slice_len for a, b in spans)
    incremental = synth.waveform().copy()
    assert np.array_equal(incremental, Resynthesizer(doc).full().numpy())


@pytest.mark.parametrize("f", [1000.0, 13750.0])  # log part; linear top (0.2, 0.1 bin off)
def test_a_sinusoid_peaks_on_its_bin_and_advances_as_the_transform_says(f):
    sr = 44100
    t = SlicedCQ(sr)
    n = np.arange(2 * t.slice_len)
    x = torch.from_numpy(np.cos(2 * np.pi * f * n / sr)[None]).float()
    j = 3 * t.frames_per_slice // 2  # mid second slice
    c = t.forward(x)[0, :, j]
    k = int(torch.argmax(c.abs()))
    assert abs(t.hz_of(k) - f) <= t.hz_of(k + 1) - t.hz_of(k)  # within one bin
    assert abs(float(c[k].abs()) / t.full_scale - 1) < 0.25  # ~0 dB for a full-scale sine
    frames = t.forward(x)[0, k, j:j + 2]
    advance = float(torch.angle(frames[1] / frames[0]))
    assert abs(math.remainder(advance - t.phase_advance(f), 2 * math.pi)) < 1e-3


@pytest.mark.parametrize("f,bins,frames,length", [
    (60.0, (0, 60), (0, 512), 300000),  # the low-pass band and the lowest log bands
    (440.0, (200, 240), (100, 700), 300000),  # across a slice edge
    (10000.0, (440, 470), (1000, 1600), 1100 * 128)])  # linear top; the file ends mid-slice
def test_a_tone_s_coefficients_in_closed_form_equal_the_analysis_of_its_samples(f, bins, frames,
                                                                                 length):
    """What the tone brush adds: the slices' spectra in closed form against the
    transform's own forward of the synthesized, zero-padded samples (float32)."""
    t = SlicedCQ(44100)
    ours = t.sinusoid(f, 0.3, 0.7, range(*bins), *frames, length)
    start, stop = t.frame_span(*frames)
    n = np.arange(start, stop)
    wave = np.where(n < length, 0.3 * np.cos(2 * np.pi * f / 44100 * n + 0.7), 0.0)
    analysed = t.forward_segment(torch.from_numpy(wave[None]).float(), *frames, slice(*bins))[0]
    assert ours.shape == analysed.shape
    assert float((ours - analysed).abs().max() / analysed.abs().max()) < 2e-5  # measured 5e-6


def test_bin_of_and_hz_of_are_inverse_and_log_spaced():
    t = SlicedCQ(44100, bins_per_octave=24, fmin=50.0)
    for hz in (10.0, 50.0, 100.0, 440.0, 5000.0, 21000.0, 22050.0):
        assert t.hz_of(t.bin_of(hz)) == pytest.approx(hz, rel=1e-9)
    assert t.bin_of(200.0) - t.bin_of(100.0) == pytest.approx(24.0)
    for k in range(t.n_bins):  # every band's centre is its bin, log or linear part
        assert t.bin_of(float(t.bin_frequencies()[k])) == pytest.approx(k, abs=1e-9)
    assert t.resolution_hz(60.0) < t.resolution_hz(6000.0)


def test_settings_are_checked_and_kept():
    with pytest.raises(ParameterError, match="bins per octave"):
        SlicedCQ(44100, bins_per_octave=1000)
    with pytest.raises(ParameterError, match="lowest frequency"):
        SlicedCQ(44100, fmin=0.0)
    t = make(44100, "cq", bins_per_octave=36, n_fft=999)  # other kinds' settings are ignored
    assert t.settings() == {"transform": "cq", "bins_per_octave": 36, "fmin": 32.7}


def _nsgt_slice(x: np.ndarray, t: SlicedCQ):
    """nsgt 0.19's own sliced-frame code on one slice, float64, matrix form."""
    from nsgt.fscale import OctScale
    from nsgt.nsgfwin_sl import nsgfwin
    from nsgt.nsgtf import nsgtf_sl
    from nsgt.util import calcwinrange

    hz, q, n_log = centre_frequencies(t.sample_rate, t.bpo, t.fmin,
                                      FRAMES_PER_SLICE / 2 * t.sample_rate / t.slice_len)
    np.testing.assert_allclose(hz, t.bin_frequencies().numpy()[1:-1], rtol=1e-12)
    # the log part is nsgt's own scale (its band count rounds up, so ask a hair below the top)
    scale = OctScale(t.fmin, float(hz[n_log - 1]) * (1 - 1e-12), t.bpo)
    np.testing.assert_allclose(scale.F(), hz[:n_log], rtol=1e-9)
    np.testing.assert_allclose(q[:n_log], scale.Q(), rtol=1e-9)
    with numpy_clip_fixed():
        g, rfbas, _ = nsgfwin(hz, q, t.sample_rate, t.slice_len, sliced=True, min_win=16)
    wins, nn = calcwinrange(g, rfbas, t.slice_len)
    m = np.full(len(g), t.frames_per_slice)
    return next(nsgtf_sl([x], g, wins, nn, m, real=True)), rfbas


@pytest.mark.parametrize("sr", [22050, 44100])  # all log bands; a linear top above 11.8 kHz
def test_coefficients_equal_nsgt_sliced_frame(rng, sr):
    pytest.importorskip("nsgt", reason="nsgt 0.19 is installed by `make test` (setup.sh)")
    t = SlicedCQ(sr)
    x = rng.standard_normal(t.slice_len)
    ours = t.forward(torch.from_numpy(x[None]).double().float())[0].numpy().astype(np.complex128)
    theirs, centres = _nsgt_slice(x, t)
    j = np.arange(t.frames_per_slice)
    worst = 0.0
    # the bands up to the top one; the bands at 0 Hz and Nyquist and the top one, which reach
    # past 0 or Nyquist, keep only their positive-frequency half here (all a real signal needs)
    for k in range(1, t.n_bins - 2):
        demodulated = ours[k] * np.exp(-2j * np.pi * centres[k] * j / t.frames_per_slice)
        ref = np.asarray(theirs[k])
        worst = max(worst, np.max(np.abs(demodulated - ref)) / np.max(np.abs(ref)))
    print(f"max relative coefficient error against nsgt: {worst:.2e}")
    assert worst < 1e-4  # float32 against float64
