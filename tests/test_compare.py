"""``specpaint compare``: each metric against a closed form or an independent
implementation, and mismatched inputs explained."""

import json
import math

import numpy as np
import pytest
import soundfile as sf
import torch

from engine.compare import (
    aligned,
    compare,
    log_spectral_distance,
    mel_distance,
    multi_resolution_stft,
)
from engine.errors import ParameterError
from tests import material
from tests.test_cli import specpaint

RATE = 16000


@pytest.fixture
def noise(rng):
    return rng.normal(0, 0.1, (1, RATE * 2))


@pytest.mark.parametrize("gain", [0.5, 0.9, 2.0])
def test_a_scaled_copy_in_closed_form(noise, gain):
    """test = g * ref: SNR = -20 log10 |g - 1|, SI-SDR infinite (scale is forgiven), every
    spectral cell off by 20 log10 g dB (LSD, mel), spectral convergence |g - 1| and log
    magnitude |ln g| (MR-STFT)."""
    m = compare(noise, gain * noise, RATE, perceptual=False).metrics
    assert m["snr_db"] == pytest.approx(-20 * math.log10(abs(gain - 1)), abs=1e-9)
    assert m["si_sdr_db"] > 250
    assert m["lsd_db"] == pytest.approx(abs(20 * math.log10(gain)), rel=1e-6)
    assert m["mel_db"] == pytest.approx(abs(20 * math.log10(gain)), rel=1e-6)
    assert m["mrstft"] == pytest.approx(abs(gain - 1) + abs(math.log(gain)), rel=1e-4)


@pytest.mark.parametrize("db", [20.0, 79.0, 81.0, 120.0])  # either side of EXACT_BELOW
def test_si_sdr_of_orthogonal_noise_in_closed_form(noise, rng, db):
    """ref + e with e orthogonal to ref (means removed) and ||e||^2 = ||ref||^2 / 10^(db/10):
    db dB, whatever the test's scale; above 80 dB the residual is summed exactly."""
    ref = noise[0] - noise[0].mean()
    e = rng.normal(0, 1, ref.size)
    e -= e.mean()
    e -= (e @ ref) / (ref @ ref) * ref
    e *= math.sqrt((ref @ ref) / 10 ** (db / 10) / (e @ e))
    for scale in (1.0, 0.3):
        m = compare(ref[None], scale * (ref + e)[None], RATE, perceptual=False).metrics
        assert m["si_sdr_db"] == pytest.approx(db, abs=1e-6)


def test_spectral_distances_are_zero_for_the_same_signal(noise):
    x = torch.from_numpy(noise)
    assert log_spectral_distance(x, x) == 0 and multi_resolution_stft(x, x) == 0
    assert mel_distance(x, x, RATE) == 0


def test_mel_distance_matches_librosa_mel(rng):
    import librosa

    x = rng.normal(0, 0.1, RATE)
    y = x + np.convolve(x, [0.5, 0.3, -0.2], "same")  # a coloured change
    mels = [librosa.feature.melspectrogram(y=a, sr=RATE, n_fft=2048, hop_length=512, n_mels=128,
                                           power=2.0, center=True, pad_mode="constant")
            for a in (x, y)]
    expected = np.mean(np.abs(10 * np.log10(mels[0] + 1e-10) - 10 * np.log10(mels[1] + 1e-10)))
    got = mel_distance(torch.from_numpy(x[None]), torch.from_numpy(y[None]), RATE)
    assert got == pytest.approx(expected, abs=0.02)  # dB; filterbanks agree to float32


@pytest.mark.skipif(material.available() is not None, reason=str(material.available()))
def test_pesq_and_stoi_are_the_reference_implementations_resampled_with_soxr(rng):
    import librosa
    import pystoi
    from pesq import pesq

    clean = material.clean_take()[: material.SR * 4].astype(np.float64)
    noisy = clean + rng.normal(0, 0.02, clean.size)
    m = compare(clean[None], noisy[None], material.SR).metrics
    assert m["stoi"] == pytest.approx(pystoi.stoi(clean, noisy, material.SR), abs=1e-9)
    # PESQ-WB scores 16 kHz: an independent resampler gives the same score closely
    r, t = (librosa.resample(a, orig_sr=material.SR, target_sr=16000, res_type="soxr_vhq")
            for a in (clean, noisy))
    assert m["pesq_wb"] == pytest.approx(pesq(16000, r, t, "wb"), abs=0.02)
    assert 1.0 < m["pesq_wb"] < 4.0
    same = compare(clean[None], clean[None], material.SR).metrics
    assert same["pesq_wb"] > 4.5 and same["stoi"] == pytest.approx(1.0)


def test_mismatches_are_explained(noise):
    two = np.vstack([noise, noise])
    with pytest.raises(ParameterError, match="REF has 2 channel.*TEST 1.*--channel"):
        aligned(two, noise)
    x, y, notes = aligned(two, 2 * two, channel=1)
    assert x.shape == y.shape == (1, noise.shape[1])
    with pytest.raises(ParameterError, match="--channel 2 does not exist"):
        aligned(two, noise, channel=2)
    x, y, notes = aligned(noise, noise[:, :-100])
    assert x.shape[1] == y.shape[1] == noise.shape[1] - 100
    assert notes == [f"TEST is 100 samples shorter than REF; compared the first "
                     f"{noise.shape[1] - 100} samples of each"]


def test_the_command(tmp_path, noise):
    sf.write(tmp_path / "ref.wav", noise.T, RATE, subtype="FLOAT")
    sf.write(tmp_path / "test.wav", 0.5 * noise[:, :-160].T, RATE, subtype="FLOAT")
    sf.write(tmp_path / "stereo.wav", np.vstack([noise, noise]).T, RATE, subtype="FLOAT")
    r = specpaint("compare", tmp_path / "ref.wav", tmp_path / "test.wav", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["metrics"]["snr_db"] == pytest.approx(-20 * math.log10(0.5), abs=1e-3)
    assert out["metrics"]["si_sdr_db"] is None  # infinite: JSON has no infinity
    assert any("160 samples shorter" in n for n in out["notes"])
    r = specpaint("compare", tmp_path / "ref.wav", tmp_path / "stereo.wav")
    assert r.returncode == 2 and "--channel" in r.stderr and "Traceback" not in r.stderr
    r = specpaint("compare", tmp_path / "stereo.wav", tmp_path / "stereo.wav", "--channel", "1")
    assert r.returncode == 0 and "SNR" in r.stdout and "inf" in r.stdout
