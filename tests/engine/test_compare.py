"""``specpaint compare``: each metric against a closed form or an independent
implementation, and mismatched inputs explained."""

import json
import math

import numpy as np
import pytest
import soundfile as sf
import torch

from engine.errors import ParameterError
from engine.measure.comparison import (
    aligned,
    compare,
    log_spectral_distance,
    mel_distance,
    multi_resolution_stft,
)
from tests import material
from tests.cli_run import specpaint_here

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


def test_si_sdr_and_snr_together_are_each_alone(rng, monkeypatch):
    """What a batch measures each output with in one pass gives snr_db's value exactly
    and si_sdr_db's to 1e-4 dB, on random pairs (blocks of 1000: many, a short last),
    silences and constants, signals far off zero (their means removed in a second pass,
    exactly), and above 80 dB (the exact third pass)."""
    from engine.measure import metrics

    monkeypatch.setattr(metrics, "BLOCK", 1000)
    ref = rng.normal(0, 0.2, 12345).astype(np.float32)
    pairs = [(ref, ref + rng.normal(0, 10 ** -rng.uniform(0, 5), ref.size).astype(np.float32))
             for _ in range(8)]
    pairs += [(ref, ref), (ref, np.zeros_like(ref)), (np.zeros_like(ref), ref),
              (np.zeros_like(ref), np.zeros_like(ref)), (np.full_like(ref, 0.1), ref),
              (ref[:1], ref[:1] * 0.5), (ref, ref + np.float32(1e-6) * ref[::-1]),
              (ref + 0.5, ref + 0.5 + np.float32(1e-3) * ref[::-1]), (ref, ref - 0.3)]
    for r, t in pairs:
        (sdr, snr), far_off = metrics.si_sdr_and_snr_db(r, t), abs(float(np.mean(r))) > 0.1
        assert np.array_equal(snr, metrics.snr_db(r, t), equal_nan=True)
        alone = metrics.si_sdr_db(r, t)
        if far_off or not np.isfinite(alone):
            assert np.array_equal(sdr, alone, equal_nan=True), (sdr, alone)
        else:
            assert sdr == pytest.approx(alone, abs=1e-4, rel=0), (sdr, alone)


def test_spectral_distances_are_zero_for_the_same_signal(noise):
    x = noise
    assert log_spectral_distance(x, x) == 0 and multi_resolution_stft(x, x) == 0
    assert mel_distance(x, x, RATE) == 0


@pytest.mark.slow
def test_mel_distance_matches_librosa_mel(rng):
    import librosa

    x = rng.normal(0, 0.1, RATE)
    y = x + np.convolve(x, [0.5, 0.3, -0.2], "same")  # a coloured change
    mels = [librosa.feature.melspectrogram(y=a, sr=RATE, n_fft=2048, hop_length=512, n_mels=128,
                                           power=2.0, center=True, pad_mode="constant")
            for a in (x, y)]
    expected = np.mean(np.abs(10 * np.log10(mels[0] + 1e-10) - 10 * np.log10(mels[1] + 1e-10)))
    got = mel_distance(x[None], y[None], RATE)
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
    with pytest.raises(ParameterError, match=r"--channel -1 does not exist \(0 to 1; leave "):
        aligned(two, two, channel=-1)  # was taken as the last one (issue 37)
    x, y, notes = aligned(noise, noise[:, :-100])
    assert x.shape[1] == y.shape[1] == noise.shape[1] - 100
    assert notes == [f"TEST is 100 samples shorter than REF; compared the first "
                     f"{noise.shape[1] - 100} samples of each"]


@pytest.mark.slow
def test_the_command(tmp_path, noise):
    sf.write(tmp_path / "ref.wav", noise.T, RATE, subtype="FLOAT")
    sf.write(tmp_path / "test.wav", 0.5 * noise[:, :-160].T, RATE, subtype="FLOAT")
    sf.write(tmp_path / "stereo.wav", np.vstack([noise, noise]).T, RATE, subtype="FLOAT")
    r = specpaint_here("compare", tmp_path / "ref.wav", tmp_path / "test.wav", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["metrics"]["snr_db"] == pytest.approx(-20 * math.log10(0.5), abs=1e-3)
    assert out["metrics"]["si_sdr_db"] is None  # infinite: JSON has no infinity
    assert any("160 samples shorter" in n for n in out["notes"])
    r = specpaint_here("compare", tmp_path / "ref.wav", tmp_path / "stereo.wav")
    assert r.returncode == 2 and "--channel" in r.stderr and "Traceback" not in r.stderr
    r = specpaint_here("compare", tmp_path / "stereo.wav", tmp_path / "stereo.wav", "--channel",
                       "1")
    assert r.returncode == 0 and "SNR" in r.stdout and "inf" in r.stdout


def test_spectral_distances_in_blocks_equal_the_whole_spectrogram(rng, monkeypatch):
    """Summed a block of frames at a time (memory bounded, issue 37) or over the whole
    torch.stft at once: the same distances, to float64 rounding."""
    from engine.measure import comparison as module

    x = rng.normal(0, 0.1, (2, 40_000))
    y = x + rng.normal(0, 0.01, x.shape)
    px, py = (torch.stft(torch.from_numpy(a), 2048, 512, window=torch.hann_window(
        2048, dtype=torch.float64), center=True, pad_mode="constant",
        return_complex=True).abs() ** 2 for a in (x, y))
    diff = 10 * torch.log10(px + module.EPS) - 10 * torch.log10(py + module.EPS)
    expected_lsd = float(torch.sqrt((diff ** 2).mean(-2)).mean())
    monkeypatch.setattr(module, "BLOCK_FRAMES", 7)  # many blocks, a short last one
    assert module.log_spectral_distance(x, y) == pytest.approx(expected_lsd, rel=1e-12)
    small = module.multi_resolution_stft(x, y), module.mel_distance(x, y, RATE)
    monkeypatch.setattr(module, "BLOCK_FRAMES", 10**6)  # one block: the whole spectrogram
    assert small == pytest.approx((module.multi_resolution_stft(x, y),
                                   module.mel_distance(x, y, RATE)), rel=1e-12)


def _sine(seconds=2.0):
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * 440 * t))[None]


@pytest.mark.parametrize("ref,test,snr,sdr,note", [
    (_sine(), np.zeros((1, 2 * RATE)), 0.0, -math.inf, "TEST is silent: SI-SDR is -inf"),
    (_sine(), np.full((1, 2 * RATE), 0.1), None, -math.inf, "TEST is constant: SI-SDR is -inf"),
    (np.zeros((1, 2 * RATE)), np.zeros((1, 2 * RATE)), math.nan, math.nan,
     "REF and TEST are both silent: SNR and SI-SDR are undefined"),
    (np.zeros((1, 2 * RATE)), _sine(), -math.inf, math.nan,
     "REF is silent: SI-SDR is undefined and SNR -inf"),
    (np.full((1, 2 * RATE), 0.1), _sine(), None, math.nan, "REF is constant: SI-SDR is undefined"),
])
def test_silence_and_constants_are_defined_and_said(ref, test, snr, sdr, note):
    """A silent output read SI-SDR inf dB (perfect), silence against silence SNR inf
    and SI-SDR -inf with numpy's warnings (issue 37). Now -inf where none of REF is in
    TEST, undefined (NaN) where REF has nothing to measure against, each with a note,
    and no warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = compare(ref, test, RATE, perceptual=False)
    m = result.metrics
    if snr is not None:
        assert m["snr_db"] == snr or (math.isnan(snr) and math.isnan(m["snr_db"]))
    assert m["si_sdr_db"] == sdr or (math.isnan(sdr) and math.isnan(m["si_sdr_db"]))
    assert any(note in n for n in result.notes), result.notes


@pytest.mark.slow
def test_the_command_on_a_silent_output(tmp_path):
    sf.write(tmp_path / "ref.wav", _sine().T, RATE, subtype="FLOAT")
    sf.write(tmp_path / "zero.wav", np.zeros((2 * RATE, 1)), RATE, subtype="FLOAT")
    r = specpaint_here("compare", tmp_path / "ref.wav", tmp_path / "zero.wav")
    assert r.returncode == 0, r.stderr
    assert "SI-SDR                        -inf dB" in r.stdout
    assert "note: TEST is silent: SI-SDR is -inf" in r.stderr
    assert "PESQ-WB is undefined" in r.stderr and "Warning" not in r.stderr
    r = specpaint_here("compare", tmp_path / "zero.wav", tmp_path / "zero.wav", "--json")
    out = json.loads(r.stdout)
    assert out["metrics"]["snr_db"] is None and out["metrics"]["si_sdr_db"] is None
    assert "REF and TEST are both silent: SNR and SI-SDR are undefined" in out["notes"]


def bursts(seconds: float, period: float = 1.0) -> np.ndarray:
    """Speech-like at 16 kHz: a tone with noise, on 60 % of every ``period`` seconds, a
    pause between. An utterance a second: the pesq package counts at most 50."""
    t = np.arange(int(seconds * RATE)) / RATE
    on = (t % period) < 0.6 * period
    noise = np.random.default_rng(0).normal(0, 0.05, t.size)
    return (on * (0.3 * np.sin(2 * np.pi * 220 * t) + noise))[None]


def test_windows_are_short_enough_for_pesqs_fixed_arrays():
    from engine.measure.perceptual import MAXNUTTERANCES, PESQ_RATE, max_utterances, windows

    for n in (RATE // 4, 8 * RATE, 8 * RATE + 1, 180 * RATE, 3600 * RATE + 17):
        spans = windows(n)
        assert spans[0][0] == 0 and spans[-1][1] == n
        assert all(a == b0 for (_, a), (b0, _) in zip(spans, spans[1:], strict=False))
        longest = max(b - a for a, b in spans)
        assert longest <= 8 * PESQ_RATE and max_utterances(longest) < MAXNUTTERANCES
    assert max_utterances(60 * RATE) > MAXNUTTERANCES  # what crashed


@pytest.mark.slow
def test_a_crash_of_the_pesq_library_leaves_a_note_not_a_dead_process(monkeypatch):
    """60 s of bursts in one window overruns pesq's arrays (SIGSEGV in its own process)."""
    from engine.measure import perceptual

    monkeypatch.setattr(perceptual, "WINDOW_SECONDS", 120.0)
    x = bursts(60.0)[0]
    score, notes = perceptual.pesq_wb([(x, x)])
    assert score is None and notes == ["PESQ-WB not scored: the pesq library crashed (SIGSEGV) "
                                       "on this audio"]


@pytest.mark.slow
def test_compare_scores_a_long_take_in_windows(tmp_path):
    """Issue 37: pesq crashed the command (exit 139, no message) on long speech with
    pauses; now PESQ-WB is the mean of 8 s windows, and the output says so."""
    sf.write(tmp_path / "long.wav", bursts(64.0).T, RATE, subtype="FLOAT")
    r = specpaint_here("compare", tmp_path / "long.wav", tmp_path / "long.wav", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["metrics"]["pesq_wb"] == pytest.approx(4.64, abs=0.01)
    assert "PESQ-WB is the mean over 8 windows of 8.0 s (P.862.2 scores short utterances)" \
        in out["notes"]


def test_stoi_of_a_reference_with_nothing_above_silence_is_undefined():
    """Found by fuzzing: REF a constant, pystoi warned "Not enough STFT frames" and gave
    1e-5, shown as a score (issue 37's compare surface)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = compare(np.full((1, 2000), 0.25), np.zeros((1, 2000)), 8000)
    assert result.metrics["stoi"] is None
    assert any(n.startswith("STOI is undefined: too little of REF stands above silence")
               for n in result.notes), result.notes
