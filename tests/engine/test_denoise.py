"""De-noise (engine/repair/denoise.py) on real takes under hiss (the randomized set
of bench/bench_denoise.py, seed 1), judged by PESQ-WB / STOI / SI-SDR against the
clean take and beside noisereduce; and its safety: digital silence stays
bit-exact, nothing gets louder, nothing non-finite, any rate and channel count."""

import functools
import threading

import numpy as np
import pytest

from bench.bench_denoise import hiss, noisy_set, take_scores
from engine.errors import Cancelled
from engine.measure.metrics import si_sdr_db
from engine.repair import denoise
from tests import takes
from tests.material import assert_never_louder

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=takes.missing() or "")


@functools.cache
def _set():
    return noisy_set(1)


def _speech_at_5_to_15_db():
    return [case for case in _set() if case[0].kind == "speech" and 5 <= case[2] < 15][:3]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(3))
def test_speech_under_hiss_improves_and_beats_noisereduce(index):
    import noisereduce

    take, _, _, noisy, _ = _speech_at_5_to_15_db()[index]
    outcome = denoise.run(noisy, take.sample_rate)
    before, ours = take_scores(take, noisy), take_scores(take, outcome.samples)
    theirs = take_scores(take, np.atleast_2d(noisereduce.reduce_noise(y=noisy,
                                                                     sr=take.sample_rate)))
    assert outcome.summary.startswith("noise reduced by")
    assert ours["pesq"] > before["pesq"] + 0.2 and ours["pesq"] > theirs["pesq"] + 0.2
    assert ours["stoi"] >= before["stoi"] and ours["si_sdr"] > before["si_sdr"] + 2


@pytest.mark.slow
def test_speech_under_pink_and_brown_hiss_reaches_noisereduce_told_the_noise():
    """Issue 49, item 3: speech takes under pink and brown hiss (3 each, seed 1, 0-20 dB
    SNR), de-noised by default and with a second of the hiss as a profile: the median
    PESQ-WB at least noisereduce's, stationary and told the noise: now 2.20 / 2.19 against
    2.08 (pink), 2.36 / 2.36 against 2.34 (brown). Before, 1.71 / 1.84 and 2.08 / 2.01:
    where a voice speaks the gains are now capped by the sound around and the voice
    model's own gain."""
    from bench.bench_denoise import run_method, speech_under
    from tests.material import scores

    methods = ("ours", "ours, profile", "noisereduce stationary, told")
    for kind in ("pink", "brown"):
        got = {m: [] for m in methods}
        for take, _, noisy, told in speech_under(kind, 1, 3):
            for m in methods:
                out = run_method(m, noisy, told, take.sample_rate)
                got[m].append(scores(take.samples[0], out[0])["pesq"])
        theirs = np.median(got[methods[-1]])
        assert min(np.median(got[m]) for m in methods[:2]) >= theirs, (kind, got)


def test_a_noise_only_profile_is_used():
    take, _, _, noisy, profile = _speech_at_5_to_15_db()[0]
    outcome = denoise.run(noisy, take.sample_rate, profile=profile)
    assert "profile from the selection" in outcome.summary
    before, ours = take_scores(take, noisy), take_scores(take, outcome.samples)
    assert ours["pesq"] > before["pesq"] + 0.2 and ours["si_sdr"] > before["si_sdr"] + 2
    with pytest.raises(ValueError, match="noise profile"):
        denoise.run(noisy, take.sample_rate, profile=profile[:, :100])


def test_stereo_music_improves_on_both_channels_and_takes_a_mono_profile():
    take, _, _, noisy, profile = next(c for c in _set() if c[0].kind == "music")
    for outcome in (denoise.run(noisy, take.sample_rate),
                    denoise.run(noisy, take.sample_rate, profile=profile[:1])):
        assert_never_louder(noisy, outcome.samples, take.sample_rate)
        for c in range(2):
            assert si_sdr_db(take.samples[c], outcome.samples[c]) > \
                si_sdr_db(take.samples[c], noisy[c])


def test_adaptive_follows_noise_that_grows():
    take, _, _, _, _ = _speech_at_5_to_15_db()[1]
    sr, clean = take.sample_rate, take.samples
    n = clean.shape[1]
    level = np.sqrt(np.mean(clean ** 2)) * 10 ** (-np.where(np.arange(n) < n // 2, 20, 8) / 20)
    noisy = clean + level * hiss("white", clean.shape, np.random.default_rng(5))
    adaptive = denoise.run(noisy, sr, adaptive=True)
    assert adaptive.summary.endswith("(adaptive, learnt over time)")
    late = slice(n // 2 + sr // 2, n)
    residual = {how: np.mean((y[:, late] - clean[:, late]) ** 2) for how, y in (
        ("input", noisy), ("adaptive", adaptive.samples),
        ("stationary", denoise.run(noisy, sr).samples))}
    assert residual["adaptive"] < 0.8 * residual["stationary"] < residual["input"]


def test_digital_silence_stays_bit_exact_and_all_silence_is_left_alone():
    take, _, _, noisy, _ = _speech_at_5_to_15_db()[0]
    x = noisy.copy()
    x[:, :2000] = 0.0
    x[:, 30000:33000] = 0.0
    outcome = denoise.run(x, take.sample_rate)
    assert np.array_equal(outcome.samples[:, :2000], x[:, :2000])
    assert np.array_equal(outcome.samples[:, 30000:33000], x[:, 30000:33000])
    silence = np.zeros((2, 5000))
    outcome = denoise.run(silence, 44100)
    assert outcome.samples is silence and outcome.summary == ""


@pytest.mark.parametrize("sample_rate", [8000, 96000])
def test_other_rates_improve_and_stay_safe(sample_rate):
    take = takes.clean_takes(sample_rate=sample_rate, seed=3, speech=1, music=0, sounds=0)[0]
    rng = np.random.default_rng(sample_rate)
    level = np.sqrt(np.mean(take.samples ** 2)) * 10 ** (-10 / 20)
    noisy = take.samples + level * hiss("pink", take.samples.shape, rng)
    y = denoise.run(noisy, sample_rate).samples
    assert_never_louder(noisy, y, sample_rate)
    assert si_sdr_db(take.samples, y) > si_sdr_db(take.samples, noisy) + 1


def test_blocks_do_not_show(monkeypatch):
    """Processed in blocks of 300 frames or in one, the output is the same to -120 dB."""
    take, _, _, noisy, _ = max(_set(), key=lambda case: case[3].shape[1])
    whole = denoise.run(noisy, take.sample_rate).samples
    monkeypatch.setattr(denoise, "BLOCK_FRAMES", 300)
    seen = []
    blocks = denoise.run(noisy, take.sample_rate, progress=seen.append).samples
    assert np.max(np.abs(blocks - whole)) < 1e-6 * np.max(np.abs(whole))
    assert len(seen) > 3 and seen == sorted(seen) and seen[-1] == 1.0


def test_cancel_stops_it():
    take, _, _, noisy, _ = _set()[0]
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        denoise.run(noisy, take.sample_rate, cancel=cancel)


@pytest.mark.slow
def test_learnt_noise_leaves_music_s_drones_and_held_notes():
    """Learnt from the take, the noise is broadband: music's steady peaks (a drone, a
    held bass) stand out of the noise's envelope as a hum does, and with the tonal
    setting off they stay. Before, one of these 12 excerpts under hiss came out 6.5 dB
    SI-SDR worse than its input (and 5 of bench_denoise's 18 music takes of seeds 1-3,
    by 0.2-5.4 dB); now none (white or pink hiss, 8-15 dB SNR)."""
    rng = np.random.default_rng(3)
    for seed in (2, 3):
        for take in takes.clean_takes(seed=seed, speech=0, sounds=0, music=6):
            x = take.samples
            noise = hiss(("white", "pink")[rng.integers(2)], x.shape, rng)
            noisy = x + noise * np.sqrt(np.mean(x ** 2)) * 10 ** (-rng.uniform(8, 15) / 20)
            out = denoise.run(noisy, take.sample_rate).samples
            kept = si_sdr_db(x.mean(0), out.mean(0)) - si_sdr_db(x.mean(0), noisy.mean(0))
            assert kept > -0.1, (seed, take.name, kept)


def test_a_steady_whine_is_noise_only_with_tonal_on():
    """A fan's whine under hiss: de-noise learnt with tonal on takes it down with the
    hiss; off, it leaves it (it cannot tell it from a held note)."""
    sr = 16000
    rng = np.random.default_rng(4)
    t = np.arange(4 * sr) / sr
    f = rng.uniform(500, 3000)
    whine = 0.05 * np.sin(2 * np.pi * f * t)
    noisy = (whine + 0.01 * rng.standard_normal(len(t)))[None]

    def level(y):
        spectrum = np.abs(np.fft.rfft(y[0] * np.hanning(len(t))))
        return 20 * np.log10(spectrum[round(f * len(t) / sr)])
    off = denoise.run(noisy, sr).samples
    on = denoise.run(noisy, sr, tonal=True).samples
    assert level(off) > level(noisy) - 3  # (0.4-2.5 dB: the gains smoothed across bins)
    assert level(on) < level(noisy) - 9


def test_music_that_never_leaves_a_band_is_not_learnt_as_noise():
    """Learnt from music whose bass or chords never stop, the quietest parts of some
    bins are still music; hiss is broad and smooth, so the learnt noise is held near a
    line through it in (log frequency, dB). 18 music excerpts of other seeds under white
    or pink hiss at 0-20 dB, the learnt noise against the hiss's own power: the worst
    bin of the median take at most 6 dB over it, of any take 15 dB (without the line:
    7.4 and 21.4 dB, a bass learnt as hiss; those takes lost up to 1.8 dB SI-SDR in
    bench_denoise's seeds 5 and 6)."""
    from engine.repair.denoise_noise import learnt_power, power_frames

    rng = np.random.default_rng(6)
    worst = []
    for seed in (4, 5, 6):
        for take in takes.clean_takes(seed=seed, speech=0, sounds=0, music=6):
            x, sr = take.samples, take.sample_rate
            noise = hiss(("white", "pink")[rng.integers(2)], x.shape, rng) * \
                np.sqrt(np.mean(x ** 2)) * 10 ** (-rng.uniform(0, 20) / 20)
            n_fft = 1 << int(round(np.log2(denoise.FRAME_S * sr)))
            learnt = learnt_power(x + noise, np.zeros(x.shape, bool), n_fft=n_fft,
                                  sample_rate=sr, adaptive=False)[0][:, 0]
            worst.append(np.max(10 * np.log10(learnt / power_frames(noise, n_fft).mean(axis=1))))
    assert np.median(worst) < 6 and max(worst) < 15, sorted(worst)


@pytest.mark.parametrize("seed", range(2))
def test_hiss_of_a_band_limited_recording_is_still_reduced(seed):
    """Speech and white hiss both low-passed (a telephone's or an old transfer's band,
    cut-off 3-8 kHz): the bins above the cut-off are a band the recording lacks, not a
    dip of the hiss, and the line the learnt noise is held near is not pulled down by
    them (fitted through them, it held the noise 20-30 dB low: 0.3 dB reduced, the
    audio unchanged)."""
    from scipy import signal

    rng = np.random.default_rng(seed)
    take = _speech_at_5_to_15_db()[seed][0]
    x = take.samples
    noisy = x + hiss("white", x.shape, rng) * np.sqrt(np.mean(x ** 2)) * 10 ** (-10 / 20)
    sos = signal.butter(10, rng.uniform(3000, 8000), fs=take.sample_rate, output="sos")
    clean, noisy = signal.sosfilt(sos, x), signal.sosfilt(sos, noisy)
    outcome = denoise.run(noisy, take.sample_rate)
    assert si_sdr_db(clean, outcome.samples) > si_sdr_db(clean, noisy) + 0.5  # (as unfitted)
    assert float(outcome.summary.split()[3]) > 6  # "noise reduced by N dB (...)": 9-11


@pytest.mark.slow
def test_music_under_brown_or_pink_hiss_is_never_left_worse_than_its_input():
    """Music excerpts under brown and pink hiss (0-20 dB SNR, seeds 1-2, 16 in all), the
    noise learnt from the take: no output is worse than its input (SI-SDR against the
    clean excerpt). Before, the slope cap followed a line through the steady bins
    whenever it fell like a brown noise; over music those bins are two clusters (the
    lowest and the top octave), the line learnt a held bass as noise 4-8 dB high, and
    frontiers @220s and @115s under brown hiss came out 2.2 and 2.7 dB below their
    input, frontiers @84s under pink 3.2 dB."""
    from bench.bench_denoise import speech_under

    for kind in ("brown", "pink"):
        for seed in (1, 2):
            for take, snr, noisy, _ in speech_under(kind, seed, 4, music=True):
                out = denoise.run(noisy, take.sample_rate).samples
                assert si_sdr_db(take.samples, out) >= si_sdr_db(take.samples, noisy) - 0.05, (
                    kind, seed, take.name, round(snr, 1))


def test_a_clean_take_is_left_bit_for_bit_and_says_so():
    """Speech with no noise added (8 takes): the quietest parts are few and their level
    varies, no floor of a steady noise, so nothing changes and the note says why.
    Before, the quietest speech was taken for noise: PESQ-WB 4.16-4.44 against the take
    itself (4.64)."""
    for take in takes.clean_takes(seed=1, speech=8, music=0, sounds=0):
        outcome = denoise.run(take.samples, take.sample_rate)
        assert outcome.samples is take.samples, take.name
        assert outcome.summary == "" and outcome.note.startswith("found no steady noise")


@pytest.mark.slow
def test_clean_music_whose_quietest_parts_are_its_own_is_left_bit_for_bit():
    """Clean music (asc-music, 18 excerpts of seeds 2, 3 and 5), as it is and with a DC
    offset in one channel (2 % of its peak): no noise is found and every sample is left.
    Before, 4 clean excerpts of frontiers' pads were taken for noise (a floor in a fifth
    of the bins; it did not hold its level from one 4 s stretch to the next) and 5 more
    with the offset (its steady power at 0-22 Hz taken for a rumble): 7.5-61 dB SI-SDR
    against themselves."""
    for seed in (2, 3, 5):
        for take in takes.clean_takes(seed=seed, speech=0, sounds=0, music=6):
            x = take.samples
            for given in (x, x + np.array([[0.0], [0.02 * np.abs(x).max()]])):
                outcome = denoise.run(given, take.sample_rate)
                assert outcome.samples is given, (seed, take.name, given is x)
                assert outcome.note.startswith("found no steady noise")


def test_a_long_input_with_no_voice_in_its_windows_is_not_heard_whole_by_the_voice_model(
        monkeypatch):
    """De-noise's voice rule runs the voice model (15 times the rest of de-noise) over the
    whole input; on more than two minutes it first hears 3 s windows a minute apart
    (engine.repair.voice.somewhere) and, finding no voice there, keeps the rule for
    everything else, as on music. The samples the model hears are counted."""
    from engine.repair import voice

    heard = []
    model = voice._model
    monkeypatch.setattr(voice, "_model", lambda up, *a: heard.append(up.shape[1]) or
                        model(up, *a))
    from bench.bench_denoise import speech_under

    take, _, noisy, _ = speech_under("white", 1, 1, music=True)[0]  # music under hiss
    sr, reps = take.sample_rate, -(-150 * take.sample_rate // noisy.shape[1])
    x = np.tile(noisy, reps)[:, :150 * sr]  # two and a half minutes of it
    assert denoise.run(x, sr).summary  # it found the hiss
    assert heard and sum(heard) <= 3 * voice.PROBE_S * voice.RATE + voice.RATE


@pytest.mark.slow
def test_a_voice_over_music_under_hiss_is_never_left_worse_than_its_input():
    """A voice over a music bed (an espeak-ng take over an excerpt of asc-music as loud,
    seed 2) under white hiss at 20 dB SNR or pink at 15: no output is worse than its
    input by more than 0.1 dB SI-SDR against the mix (now -0.08 dB at worst: a quiet
    band under the hiss goes with it where the model took no more than the noise).
    Before, where the voice model found the voice the gain was held under the model's
    own, which took the band too, and the noise was learnt again from what it took (the
    band): 20 -> 5.7-21.3 dB, 15 -> 5.0-16.1 dB."""
    rng = np.random.default_rng(11)
    voices = takes.clean_takes(seed=2, speech=3, music=0, sounds=0)
    beds = takes.clean_takes(seed=2, speech=0, music=3, sounds=0)
    for said, bed in zip(voices, beds, strict=True):
        n = min(said.samples.shape[1], bed.samples.shape[1])
        music, speech = bed.samples[:, :n], said.samples[:, :n]
        mix = music + speech * np.sqrt(np.mean(music ** 2) / np.mean(speech ** 2))
        for kind, snr in (("white", 20), ("pink", 15)):
            noisy = mix + np.sqrt(np.mean(mix ** 2)) * 10 ** (-snr / 20) * hiss(
                kind, mix.shape, rng, said.sample_rate)
            out = denoise.run(noisy, said.sample_rate).samples
            assert si_sdr_db(mix, out) >= si_sdr_db(mix, noisy) - 0.1, (bed.name, kind)
