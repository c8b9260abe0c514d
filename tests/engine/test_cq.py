"""The constant-Q transform: a time-invariant filterbank computed in blocks; exact
(to 130 dB), local bit for bit, equal to nsgt's own non-sliced frame of the whole
signal with the same bands."""

import math

import numpy as np
import pytest
import torch

from engine.errors import ParameterError
from engine.io.audio import Audio
from engine.measure.metrics import snr_db
from engine.model.document import Document
from engine.model.resynth import Resynthesizer
from engine.region import Rect
from engine.transforms import make
from engine.transforms.cq import ConstantQ
from tests.nsgt_compat import numpy_clip_fixed


@pytest.mark.parametrize("sr,seconds", [(44100, 3.3), (48000, 1.0), (22050, 2.0),
                                        (16000, 0.5), (8000, 0.01), (96000, 1.5)])
def test_untouched_audio_round_trips_above_100_db(rng, sr, seconds):
    x = torch.from_numpy((0.3 * rng.standard_normal((2, max(1, int(sr * seconds)))))
                         .astype(np.float32))
    t = ConstantQ(sr)
    y = t.inverse(t.forward(x), x.shape[-1])
    assert snr_db(x.numpy(), y.numpy()) >= 120  # measured 130-132


@pytest.mark.parametrize("bpo,fmin", [(4, 32.7), (12, 100.0), (24, 50.0), (96, 32.7),
                                      (48, 5.0), (48, 1000.0)])
def test_any_scale_round_trips(rng, bpo, fmin):
    x = torch.from_numpy((0.3 * rng.standard_normal((1, 100000))).astype(np.float32))
    t = ConstantQ(44100, bpo, fmin=fmin)
    assert snr_db(x.numpy(), t.inverse(t.forward(x), x.shape[-1]).numpy()) >= 115  # 123-131


def test_one_sample_and_silence_round_trip():
    t = ConstantQ(44100)
    one = torch.tensor([[0.5]])
    assert snr_db(one.numpy(), t.inverse(t.forward(one), 1).numpy()) >= 100
    silence = torch.zeros(1, 5000)
    assert torch.equal(t.inverse(t.forward(silence), 5000), silence)


def test_a_span_equals_the_full_inverse_bit_for_bit(rng):
    t = ConstantQ(22050)
    n = 3 * t.block + 1234
    x = torch.from_numpy(rng.standard_normal((1, n)).astype(np.float32))
    coeffs = t.forward(x)
    full = t.inverse(coeffs, n)
    for s0, s1 in [(0, 10), (t.block - 5, t.block + 5), (40000, 90000), (n - 7, n)]:
        fa, fb = t.frames_needed(s0, s1, n)
        assert torch.equal(t.inverse_span(coeffs[..., fa:fb], fa, sample0=s0, sample1=s1, length=n),
                           full[:, s0:s1])


def test_frames_of_a_region_equal_the_full_forward_bit_for_bit(rng):
    t = ConstantQ(22050)
    x = torch.from_numpy(rng.standard_normal((2, 200000)).astype(np.float32))
    full = t.forward(x)
    for frames in ((0, 30), (700, 1400), (t.block_frames - 3, t.block_frames + 3)):
        assert torch.equal(t.forward_frames(x, *frames), full[..., slice(*frames)])
    part = t.forward_frames(x, 700, 1400, bins=slice(100, 160))
    torch.testing.assert_close(part, full[:, 100:160, 700:1400], rtol=0, atol=1e-6)


def test_a_frame_depends_on_its_block_s_samples_alone(rng):
    """Locality: changing samples outside a block's span leaves its frames' bits."""
    t = ConstantQ(22050)
    x = torch.from_numpy(rng.standard_normal((1, 6 * t.block)).astype(np.float32))
    f0, f1 = 2 * t.block_frames, 3 * t.block_frames
    start, stop = t.frame_span(f0, f1)
    y = x.clone()
    y[:, :start] = 0
    y[:, stop:] = torch.from_numpy(rng.standard_normal((1, y.shape[-1] - stop)).astype(np.float32))
    assert torch.equal(t.forward_frames(x, f0, f1), t.forward_frames(y, f0, f1))


def test_an_edit_is_heard_within_the_reach_of_its_frames_and_nowhere_else(rng):
    """No slice wraps an edit around: zeroing a few frames changes the audio only
    within ``reach`` of them (elsewhere by float32's rounding of the samples alone)."""
    sr = 44100
    t = ConstantQ(sr)
    x = torch.from_numpy((0.3 * rng.standard_normal((1, 6 * sr))).astype(np.float32))
    coeffs = t.forward(x)
    before = t.inverse(coeffs, x.shape[-1])
    f0 = t.block_frames - 5  # across a block's edge
    edited = coeffs.clone()
    edited[:, 40:200, f0:f0 + 10] = 0
    change = (t.inverse(edited, x.shape[-1]) - before)[0].double().abs()
    lo, hi = f0 * t.hop - t.reach, (f0 + 10) * t.hop + t.reach
    assert float(change[lo:hi].max()) > 0.01
    assert float(torch.cat((change[:lo], change[hi:])).max()) < 1e-6  # float32's rounding


def test_incremental_resynthesis_of_an_edit_equals_the_full_one(rng):
    sr = 22050
    x = (0.2 * rng.standard_normal((1, 7 * sr))).astype(np.float32)
    doc = Document(Audio(x, sr), transform="cq", device="cpu")
    synth = Resynthesizer(doc)
    synth.full()
    rect = Rect(int(doc.bin_of(400)), int(doc.bin_of(900)), int(doc.frame_of(3.0)),
                int(doc.frame_of(3.4)))
    mag, phase = doc.read(rect)
    doc.write(rect, mag * 0.1, phase)
    spans = synth.update()
    assert spans and all(b - a <= 3 * doc.transform.block for a, b in spans)
    incremental = synth.waveform().copy()
    assert np.array_equal(incremental, Resynthesizer(doc).full().numpy())


@pytest.mark.parametrize("f", [1000.0, 13750.0])  # log part; linear top
def test_a_sinusoid_peaks_on_its_bin_and_advances_as_the_transform_says(f):
    sr = 44100
    t = ConstantQ(sr)
    n = np.arange(4 * t.block)
    x = torch.from_numpy(np.cos(2 * np.pi * f * n / sr)[None]).float()
    c = t.forward(x)[0]
    for j in (t.block_frames, 2 * t.block_frames - 1, 2 * t.block_frames):  # either side
        k = int(torch.argmax(c[:, j].abs()))
        assert abs(t.hz_of(k) - f) <= t.hz_of(k + 1) - t.hz_of(k)  # within one bin
        assert abs(float(c[k, j].abs()) / t.full_scale - 1) < 0.25  # ~0 dB for a full scale
        advance = float(torch.angle(c[k, j + 1] / c[k, j]))
        assert abs(math.remainder(advance - t.phase_advance(f), 2 * math.pi)) < 1e-3


@pytest.mark.parametrize("f,bins,frames", [
    (20.0, (0, 30), (400, 700)),  # the low-pass band and the lowest log bands
    (440.0, (165, 200), (500, 700)),  # across a block's edge
    (22000.0, (440, 470), (1000, 1600))])  # the linear top and the Nyquist band
def test_a_tone_s_coefficients_in_closed_form_equal_the_analysis_of_its_samples(f, bins, frames):
    """What the tone brush adds: each band's response, against the transform's own
    forward of the synthesized samples (float32), away from the file's ends."""
    t = ConstantQ(44100)
    length = 400000
    ours = t.sinusoid(f, 0.3, 0.7, bins=range(*bins), frame0=frames[0], frame1=frames[1],
                      length=length)
    n = np.arange(length)
    wave = torch.from_numpy(0.3 * np.cos(2 * np.pi * f / 44100 * n + 0.7)[None]).float()
    analysed = t.forward_frames(wave, *frames, bins=slice(*bins))[0]
    assert ours.shape == analysed.shape
    assert float((ours - analysed).abs().max() / analysed.abs().max()) < 2e-5


def test_a_steady_tone_s_magnitude_is_steady_in_every_frame():
    """The slicing showed: a steady tone's coefficients wavered by up to 87 % near a
    slice's edge (100 Hz). Now every frame is the same filter's output."""
    sr = 44100
    t = ConstantQ(sr)
    n = np.arange(5 * t.block)
    x = torch.from_numpy(np.cos(2 * np.pi * 100.0 * n / sr)[None]).float()
    level = t.forward(x)[0, int(round(t.bin_of(100.0)))].abs()
    inner = level[t.edge * 2:x.shape[-1] // t.hop - t.edge]
    assert float(inner.max() / inner.min()) < 1.0001


def test_bin_of_and_hz_of_are_inverse_and_log_spaced():
    t = ConstantQ(44100, bins_per_octave=24, fmin=50.0)
    for hz in (10.0, 50.0, 100.0, 440.0, 5000.0, 21000.0, 22050.0):
        assert t.hz_of(t.bin_of(hz)) == pytest.approx(hz, rel=1e-9)
    assert t.bin_of(200.0) - t.bin_of(100.0) == pytest.approx(24.0)
    for k in range(t.n_bins):  # every band's centre is its bin, log or linear part
        assert t.bin_of(float(t.bin_frequencies()[k])) == pytest.approx(k, abs=1e-9)
    assert t.resolution_hz(60.0) < t.resolution_hz(6000.0)


def test_settings_are_checked_and_kept():
    with pytest.raises(ParameterError, match="bins per octave"):
        ConstantQ(44100, bins_per_octave=1000)
    with pytest.raises(ParameterError, match="lowest frequency"):
        ConstantQ(44100, fmin=0.0)
    t = make(44100, "cq", bins_per_octave=36, n_fft=999)  # other kinds' settings are ignored
    assert t.settings() == {"transform": "cq", "bins_per_octave": 36, "fmin": 32.7}


def _nsgt_whole(x: np.ndarray, t: ConstantQ):
    """nsgt 0.19's own non-sliced frame (``calcwinrange``, ``nsgtf``, float64) of the
    whole of ``x``, cyclic, with our bands sampled on its FFT's bins about whole-bin
    centres, each band in ``len(x) / hop`` frames."""
    from nsgt.nsgtf import nsgtf
    from nsgt.util import calcwinrange

    n, sr = len(x), t.sample_rate
    centres = np.round(t.bin_frequencies().numpy() * n / sr).astype(int)
    g = []
    for k, c in enumerate(centres):
        half = math.floor(t.bands.half[k] * n / sr)  # (more would fold: nsgt's col > 1)
        offsets = np.arange(-half, half + 1)
        w = t.bands.response(k, torch.from_numpy((c + offsets) * sr / n)).numpy()
        g.append(np.roll(w, -half))  # nsgt's windows start at their centre
    with numpy_clip_fixed():
        wins, nn = calcwinrange(g, centres, n)
        coeffs = nsgtf(x, g, wins, nn, np.full(len(g), n // t.hop), real=False)
    return np.array(coeffs), centres


@pytest.mark.parametrize("sr", [22050, 44100])  # all log bands; a linear top above 11.8 kHz
def test_coefficients_equal_nsgt_s_frame_of_the_whole_signal(rng, sr):
    """Away from the ends (silence there: nsgt's frame is cyclic, ours mirrors the
    start and zero-pads the end), every band of every frame, across block edges."""
    pytest.importorskip("nsgt", reason="nsgt 0.19 is installed by `make test` (setup.sh)")
    from nsgt.fscale import OctScale

    t = ConstantQ(sr)
    hz, n_log = t.bin_frequencies().numpy(), t.bands.n_log
    # the log part is nsgt's own scale (its band count rounds up, so ask a hair below the top)
    scale = OctScale(t.fmin, float(hz[n_log]) * (1 - 1e-12), t.bpo)
    np.testing.assert_allclose(scale.F(), hz[1:n_log + 1], rtol=1e-9)
    n = (4 * t.block // t.hop) * t.hop
    x = np.zeros(n)
    x[t.reach:n - t.reach] = rng.standard_normal(n - 2 * t.reach)
    ours = t.forward(torch.from_numpy(x[None]).float())[0, :, :n // t.hop].numpy()
    theirs, centres = _nsgt_whole(x, t)
    j = np.arange(n // t.hop)
    demodulated = ours * np.exp(-2j * np.pi * centres[:, None] * j / (n // t.hop))
    worst = np.max(np.abs(demodulated - theirs), 1) / np.max(np.abs(theirs), 1)
    print(f"max relative coefficient error against nsgt: {worst.max():.2e}")
    assert worst.max() < 1e-5  # float32 against float64


@pytest.mark.parametrize("sr,bpo", [(44100, 48), (8000, 4), (96000, 96), (22050, 13)])
def test_the_inverse_s_sums_are_in_a_fixed_order_the_same_on_every_path(rng, sr, bpo):
    """The synthesis adds each bin's entries in entry order: by layers of gathers (CUDA)
    and by a CPU scatter-add, the same bits; so a CUDA inverse, which used an atomic
    scatter-add, gives the same bits each run, and the CPU's bits."""
    from engine.transforms.cq import _sum_by_bin

    t = ConstantQ(sr, bpo)
    n = t.length // 2 + 1
    values = torch.from_numpy((rng.standard_normal((3, len(t._reads))) +
                               1j * rng.standard_normal((3, len(t._reads)))).astype(np.complex64))
    scattered = values.new_zeros((3, n)).scatter_add_(1, t._reads.expand(3, -1), values)
    assert torch.equal(_sum_by_bin(values, t._layers_on(torch.device("cpu"))), scattered)


def _two_inverses(device, rng):
    x = torch.from_numpy(rng.standard_normal((2, 3 * 44100)).astype(np.float32)).to(device)
    t = ConstantQ(44100, device=device)
    coeffs = t.forward(x)
    return t.inverse(coeffs, x.shape[-1]), t.inverse(coeffs.clone(), x.shape[-1])


def test_two_inverses_give_the_same_bits(rng):
    first, second = _two_inverses("cpu", rng)
    assert torch.equal(first, second)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_two_cuda_inverses_give_the_same_bits(rng):
    first, second = _two_inverses("cuda", rng)
    assert torch.equal(first, second)
