"""The STFT against librosa and scipy, its inverse, and its span arithmetic."""

import librosa
import numpy as np
import pytest
import scipy.signal
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import ParameterError
from engine.measure.metrics import snr_db
from engine.transforms.stft import STFT, WINDOWS


@pytest.mark.parametrize("n_fft,hop", [(2048, 512), (1024, 256), (512, 128), (256, 100)])
@pytest.mark.parametrize("n", [1, 255, 1000, 22051])
def test_forward_matches_librosa(rng, n_fft, hop, n):
    x = rng.standard_normal((2, n)).astype(np.float32)
    ours = STFT(44100, n_fft, hop=hop).forward(torch.from_numpy(x)).numpy()
    ref = librosa.stft(x, n_fft=n_fft, hop_length=hop, window="hann", center=True,
                       pad_mode="constant")
    assert ours.shape == ref.shape
    # float32 FFTs of the same frames: agree to 1e-5 of the spectrum's scale
    assert np.max(np.abs(ours - ref)) <= 1e-5 * np.max(np.abs(ref)) + 1e-6


@pytest.mark.parametrize("name,scipy_name", [("hann", "hann"), ("hamming", "hamming"),
                                              ("blackman", "blackman"),
                                              ("blackman-harris", "blackmanharris")])
def test_windows_are_scipys_rounded_to_float32(name, scipy_name):
    """Within one float32 step of scipy's float64 window at every sample: computed in
    float64, so a process's window cannot depend on how torch's float32 cosine ran
    (its first call in a process was wrong by up to 7.6e-5 in one process in ten)."""
    ours = WINDOWS[name](2048).numpy()
    ref = scipy.signal.get_window(scipy_name, 2048, fftbins=True).astype(np.float32)
    np.testing.assert_array_max_ulp(ours, ref, maxulp=1)


@pytest.mark.parametrize("window", list(WINDOWS))
@pytest.mark.parametrize("n_fft,hop", [(256, 64), (2048, 512), (4096, 1000), (16384, 8192)])
def test_inverse_round_trip_above_100_db(rng, window, n_fft, hop):
    x = rng.uniform(-1, 1, (2, 30001)).astype(np.float32)
    t = STFT(48000, n_fft, hop=hop, window=window)
    y = t.inverse(t.forward(torch.from_numpy(x)), x.shape[1]).numpy()
    assert y.shape == x.shape
    assert snr_db(x, y) >= 100


def test_inverse_matches_librosa_istft(rng):
    x = rng.standard_normal((1, 10000)).astype(np.float32)
    t = STFT(44100, 1024, hop=256)
    coeffs = t.forward(torch.from_numpy(x))
    coeffs[:, 100:200, 10:20] *= 0.1  # an edited, no longer consistent spectrogram
    ours = t.inverse(coeffs, 10000).numpy()
    ref = librosa.istft(coeffs.numpy(), hop_length=256, n_fft=1024, length=10000)
    assert snr_db(ref, ours) >= 100


@pytest.mark.parametrize("hop", [512, 300])
@pytest.mark.parametrize("n", [1, 2, 511, 2048, 44101])
def test_any_span_equals_the_full_inverse_bit_for_bit(rng, hop, n):
    t = STFT(44100, 2048, hop=hop)
    coeffs = t.forward(torch.from_numpy(rng.standard_normal((2, n)).astype(np.float32)))
    full = t.inverse(coeffs, n)
    for s0, s1 in [(0, n), (0, 1), (n - 1, n), (n // 3, max(n // 3 + 1, n // 2))]:
        fa, fb = t.frames_needed(s0, s1, n)
        assert torch.equal(t.inverse_span(coeffs[..., fa:fb], fa, sample0=s0, sample1=s1, length=n),
                           full[:, s0:s1])


def test_span_arithmetic_against_brute_force():
    t = STFT(8000, 256, hop=64)
    n = 2000
    frames = t.n_frames(n)
    covers = [set(range(max(0, f * 64 - 128), min(n, f * 64 - 128 + 256))) for f in range(frames)]
    for f0, f1 in [(0, 1), (3, 7), (frames - 2, frames)]:
        s0, s1 = t.samples_affected(f0, f1, n)
        assert set(range(s0, s1)) == set().union(*covers[f0:f1])
    for s0, s1 in [(0, 1), (500, 501), (700, 900), (n - 1, n)]:
        fa, fb = t.frames_needed(s0, s1, n)
        assert [f for f in range(frames) if covers[f] & set(range(s0, s1))] == list(range(fa, fb))


def test_forward_frames_equal_the_full_forward(rng):
    x = torch.from_numpy(rng.standard_normal((2, 9999)).astype(np.float32))
    t = STFT(44100, 1024, hop=256)
    full = t.forward(x)
    for f0, f1 in [(0, 3), (10, 20), (t.n_frames(9999) - 4, t.n_frames(9999))]:
        part = t.forward_frames(x, f0, f1)
        torch.testing.assert_close(part, full[..., f0:f1], rtol=0, atol=1e-5)


@pytest.mark.parametrize("n_fft,hop", [(2048, 512), (512, 100)])
def test_a_document_analysed_in_any_chunk_holds_the_same_coefficients(rng, monkeypatch,
                                                                      n_fft, hop):
    """Each frame's FFT is its own: a stack of channels analysed in short chunks
    (STFT.analysis_chunk) holds the bits of each channel analysed alone, in long ones."""
    from engine.io.audio import Audio
    from engine.model.document import Document

    x = rng.standard_normal((8, 30011)).astype(np.float32)
    alone = [Document(Audio(c[None].copy(), 44100), n_fft=n_fft, hop=hop, device="cpu").mix
             for c in x]
    for chunk in (7, 64, 1000):
        monkeypatch.setattr(STFT, "analysis_chunk", lambda self, channels, c=chunk: c)
        stacked = Document(Audio(x.copy(), 44100), n_fft=n_fft, hop=hop, device="cpu").mix
        assert torch.equal(stacked, torch.cat(alone)), chunk


def test_axes_in_physical_units():
    t = STFT(48000, 2048, hop=480)
    assert t.bin_frequencies()[1].item() == pytest.approx(48000 / 2048)
    assert t.bin_frequencies()[-1].item() == pytest.approx(24000)
    assert t.frame_times(101)[100].item() == pytest.approx(1.0)


@pytest.mark.parametrize("kwargs,words", [
    ({"n_fft": 128}, "FFT size 128"), ({"n_fft": 32768}, "FFT size 32768"),
    ({"n_fft": 1001}, "FFT size 1001 .*, even"),
    ({"hop": 0}, "hop 0"), ({"hop": 1500}, "1 to 1024"),
    ({"window": "kaiser"}, "unknown window 'kaiser'"),
])
def test_bad_parameters_are_refused_clearly(kwargs, words):
    with pytest.raises(ParameterError, match=words):
        STFT(44100, **{"n_fft": 2048, **kwargs})


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(n_fft=st.sampled_from([256, 512, 1024, 2048]), hop_div=st.integers(2, 16),
       n=st.integers(1, 50_000), data=st.data())
def test_span_arithmetic_is_consistent(n_fft, hop_div, n, data):
    """Every frame that frames_needed() returns overlaps the span, the frames just
    outside do not, and samples_affected() of those frames covers the span."""
    t = STFT(44100, n_fft, hop=max(1, n_fft // hop_div))
    s0 = data.draw(st.integers(0, n - 1))
    s1 = data.draw(st.integers(s0 + 1, n))
    fa, fb = t.frames_needed(s0, s1, n)

    def overlaps(f):
        start = f * t.hop - t.pad
        return start < s1 and start + n_fft > s0

    assert 0 <= fa < fb <= t.n_frames(n)
    assert all(overlaps(f) for f in (fa, fb - 1))
    assert fa == 0 or not overlaps(fa - 1)
    assert fb == t.n_frames(n) or not overlaps(fb)
    a0, a1 = t.samples_affected(fa, fb, n)
    assert a0 <= s0 and a1 >= s1
