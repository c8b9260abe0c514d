"""Each kernel against a naive re-derivation, on a one-dab stroke.

Document: 8 kHz, n_fft 512, hop 128, so a bin is 15.625 Hz and a frame 16 ms.
"""

import math

import numpy as np
import pytest
import scipy.ndimage
import torch

from brushes.path import StrokePoint
from brushes.stroke import paint
from engine.region import Rect
from tests.conftest import document

BIN, FRAME = 15.625, 0.016


@pytest.fixture
def doc(rng):
    return document(rng.uniform(-0.5, 0.5, (2, 8000)), n_fft=512, hop=128)


def naive_mask(doc, t, f, radius_ms, radius_hz, hardness):
    cb, cf = f / BIN, t / FRAME
    rb, rf = radius_hz / BIN, radius_ms / 1000 / FRAME
    mask = np.zeros((doc.n_bins, doc.n_frames))
    for b in range(doc.n_bins):
        for m in range(doc.n_frames):
            d = math.hypot((b - cb) / rb, (m - cf) / rf)
            if hardness >= 1:
                mask[b, m] = d <= 1
            elif d < 2 - hardness:  # documented: half at the outline (d = 1)
                u = max(0.0, (d - hardness) / (2 * (1 - hardness)))
                mask[b, m] = 0.5 * (1 + math.cos(math.pi * u))
    return mask


def dab(doc, brush, t=0.5, f=1000.0, **params):
    before = doc.magnitude.clone(), doc.phase.clone()
    params = {"radius_ms": 80.0, "radius_hz": 200.0, "hardness": 1.0, **params}
    paint(doc, brush, [StrokePoint(t, f)], params=params)
    mask = naive_mask(doc, t, f, params["radius_ms"], params["radius_hz"], params["hardness"])
    return before, mask * params.get("opacity", 1.0)


def complex_of(mag, phase):
    return torch.polar(mag, phase).numpy()


@pytest.mark.parametrize("gain_db,hardness,opacity", [(-12.0, 0.0, 1.0), (6.0, 0.5, 0.7),
                                                      (-math.inf, 1.0, 1.0)])
def test_gain(doc, gain_db, hardness, opacity):
    (mag, phase), cov = dab(doc, "gain", gain_db=gain_db, hardness=hardness, opacity=opacity)
    g = 0.0 if math.isinf(gain_db) else 10 ** (gain_db / 20)
    expected = mag.numpy() * (1 + cov * (g - 1))
    np.testing.assert_allclose(doc.magnitude.numpy(), expected, rtol=1e-5, atol=1e-7)
    kept = np.broadcast_to(expected > 0, expected.shape)  # phase is kept wherever sound is
    turned = np.angle(np.exp(1j * (doc.phase.numpy() - phase.numpy())))
    np.testing.assert_allclose(turned[kept], 0.0, atol=1e-6)
    untouched = np.broadcast_to(cov == 0, expected.shape)
    np.testing.assert_array_equal(doc.magnitude.numpy()[untouched], mag.numpy()[untouched])
    np.testing.assert_array_equal(doc.phase.numpy()[untouched], phase.numpy()[untouched])


@pytest.mark.parametrize("frames", [2.0, 12.0])  # 13 taps by direct convolution; 73 by FFT
def test_blur_matches_scipy_gaussian_filter(doc, frames):
    # sigma 16 ms a frame and 31.25 Hz = 2 bins: scipy's truncate=3 taps match exactly
    (mag, _), cov = dab(doc, "blur", sigma_ms=16.0 * frames, sigma_hz=31.25)
    ref = scipy.ndimage.gaussian_filter1d(mag.numpy(), 2.0, axis=1, mode="nearest", truncate=3)
    ref = scipy.ndimage.gaussian_filter1d(ref, frames, axis=2, mode="nearest", truncate=3)
    inside = np.broadcast_to(cov > 0, ref.shape)
    np.testing.assert_allclose(doc.magnitude.numpy()[inside], ref[inside], rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(doc.magnitude.numpy()[~inside], mag.numpy()[~inside])


def test_filter_matches_numpy_fft(doc):
    (mag, _), cov = dab(doc, "filter", mode="lowpass", cutoff=0.3)
    rect = Rect(math.ceil(1000 / BIN - 200 / BIN), math.floor(1000 / BIN + 200 / BIN) + 1,
                math.ceil(0.5 / FRAME - 5), math.floor(0.5 / FRAME + 5) + 1)
    roi = mag.numpy()[:, rect.bins, rect.frames]
    fu = np.fft.fftfreq(roi.shape[1]) * 2
    fv = np.fft.rfftfreq(roi.shape[2]) * 2
    rho = np.hypot(fu[:, None], fv[None, :])
    h = 1 / (1 + (rho / 0.3) ** 4)
    ref = np.clip(np.fft.irfft2(np.fft.rfft2(roi) * h, s=roi.shape[1:]), 0, None)
    got = doc.magnitude.numpy()[:, rect.bins, rect.frames]
    inside = np.broadcast_to(cov[rect.bins, rect.frames] > 0, ref.shape)
    np.testing.assert_allclose(got[inside], ref[inside], rtol=1e-4, atol=1e-5)


def test_clone_copies_the_source_under_a_hard_brush(doc):
    (mag, phase), cov = dab(doc, "clone", offset_ms=-160.0, offset_hz=312.5)  # -10 frames, +20 bins
    z = complex_of(mag, phase)
    got = complex_of(doc.magnitude, doc.phase)
    b, m = np.nonzero(cov)
    np.testing.assert_allclose(got[:, b, m], z[:, b + 20, m - 10], rtol=1e-5, atol=1e-6)


def test_restore_brings_back_the_original(doc):
    original = complex_of(doc.magnitude, doc.phase)
    dab(doc, "gain", gain_db=-math.inf)
    _, cov = dab(doc, "restore")
    inside = cov > 0
    got = complex_of(doc.magnitude, doc.phase)
    np.testing.assert_allclose(got[:, inside], original[:, inside], rtol=1e-4, atol=1e-5)


def test_heal_interpolates_magnitude_from_both_sides(doc):
    (mag, _), cov = dab(doc, "heal", mode="replace", radius_ms=40.0, context_ms=48.0)  # 3 frames
    frames = np.nonzero(cov.any(0))[0]
    f0, f1 = frames[0], frames[-1] + 1
    left = mag.numpy()[:, :, f0 - 3:f0].mean(-1)
    right = mag.numpy()[:, :, f1:f1 + 3].mean(-1)
    t = (np.arange(f1 - f0) + 0.5) / (f1 - f0)
    fill = left[..., None] + (right - left)[..., None] * t
    got = doc.magnitude.numpy()[:, :, f0:f1]
    inside = np.broadcast_to(cov[:, f0:f1] > 0, got.shape)
    np.testing.assert_allclose(got[inside], fill[inside], rtol=1e-4, atol=1e-6)


def test_tone_coefficients_equal_the_stft_of_a_real_cosine():
    doc = document(np.zeros((1, 8000)), n_fft=512, hop=128)
    n = np.arange(8000)
    cosine = torch.from_numpy(0.3 * np.cos(2 * np.pi * 1234.5 * n / 8000)[None]).float()
    ref = doc.transform.forward(cosine)[0, 70:90, 10:40]
    ours = doc.transform.sinusoid(1234.5, 0.3, 0.0, bins=range(70, 90), frame0=10, frame1=40,
                                  length=8000)
    assert torch.max(torch.abs(ours - ref)) < 1e-3 * torch.max(torch.abs(ref))


def test_warp_moves_magnitude_by_the_brush_motion(doc):
    z = complex_of(doc.magnitude, doc.phase)
    params = {"radius_ms": 80.0, "radius_hz": 200.0, "hardness": 0.0, "spacing": 1.0,
              "strength": 1.0}
    # two dabs one radius apart along time: the second moves content by 5 frames
    paint(doc, "warp", [StrokePoint(0.4, 1000.0), StrokePoint(0.48, 1000.0)], params=params)
    cov = naive_mask(doc, 0.48, 1000.0, 80.0, 200.0, 0.0)
    got = complex_of(doc.magnitude, doc.phase)
    shift = 0.08 / FRAME
    b, m = np.nonzero(cov)
    src = np.clip(m - cov[b, m] * shift, 0, doc.n_frames - 1)
    lo = np.floor(src).astype(int)
    hi = np.minimum(lo + 1, doc.n_frames - 1)
    w = src - lo
    ref = np.abs(z[:, b, lo]) * (1 - w) + np.abs(z[:, b, hi]) * w
    np.testing.assert_allclose(np.abs(got[:, b, m]), ref, rtol=1e-4, atol=1e-5)
    untouched = cov == 0
    assert np.array_equal(got[:, untouched], z[:, untouched])


def test_noise_adds_the_given_level_with_fixed_random_phase():
    doc = document(np.zeros((1, 8000)), n_fft=512, hop=128)
    _, cov = dab(doc, "noise", level_db=-20.0, seed=7)
    inside = cov > 0
    level = 0.1 * doc.full_scale
    np.testing.assert_allclose(doc.magnitude[0].numpy()[inside], level * cov[inside], rtol=1e-5)
    again = document(np.zeros((1, 8000)), n_fft=512, hop=128)
    dab(again, "noise", level_db=-20.0, seed=7)
    assert torch.equal(again.phase, doc.phase)
    assert np.std(doc.phase[0].numpy()[inside]) > 1.5  # spread over the circle
    from brushes.kernels.noise import cell_phase

    field = cell_phase(torch.arange(300), torch.arange(300), 7).double()
    assert abs(torch.exp(1j * field).mean()) < 0.01  # uniform on a large field
    assert torch.histc(field, 8, -math.pi, math.pi).min() > 0.95 * 300 * 300 / 8


def test_harmonic_applies_the_inner_brush_at_every_harmonic(doc):
    before = doc.magnitude.clone()
    params = {"inner": "gain", "gain_db": -math.inf, "harmonics": 3, "falloff": 0.5,
              "radius_ms": 80.0, "radius_hz": 50.0, "hardness": 1.0}
    paint(doc, "harmonic", [StrokePoint(0.5, 500.0)], params=params)
    for k, opacity in [(1, 1.0), (2, 0.5), (3, 0.25)]:
        cov = naive_mask(doc, 0.5, 500.0 * k, 80.0, 50.0, 1.0) * opacity
        inside = cov > 0
        np.testing.assert_allclose(doc.magnitude.numpy()[:, inside],
                                   before.numpy()[:, inside] * (1 - cov[inside]), rtol=1e-5)
    untouched = naive_mask(doc, 0.5, 2000.0, 80.0, 50.0, 1.0) > 0  # the 4th harmonic
    np.testing.assert_array_equal(doc.magnitude.numpy()[:, untouched],
                                  before.numpy()[:, untouched])
