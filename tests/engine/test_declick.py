"""De-click's detection on real takes with random clicks, on a voice-like take with loud
and long ones, its sensitivity scale, and its numerics against a naive reference (the
whole tables: bench/bench_declick.py, bench/bench_declick_long.py)."""

import numpy as np
import pytest
from scipy.signal import lfilter

from engine.repair import ar, declick
from tests import takes
from tests.cli_run import repairs_nothing

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=takes.missing() or "")


def _judged(seed: int, sample_rate: int) -> tuple[list[bool], list[float]]:
    """Whether de-click's repairs covered each click drawn on the takes of ``seed`` (all of
    its samples), and the false clicks a second it found on each clean take."""
    rng = np.random.default_rng(1000 + seed)
    covered, false_rate = [], []
    for take in takes.clean_takes(sample_rate=sample_rate, seed=seed):
        x = take.samples.mean(0)
        y, drawn = takes.clicks(x, rng, sample_rate)
        events = declick.run(y[None], sample_rate).events
        mask = np.zeros(len(y), bool)
        for e in events:
            mask[e.start:e.start + e.length] = True
        covered += [bool(mask[i:i + length].all()) for i, length in drawn]
        false_rate.append(len(declick.run(x[None], sample_rate).events) / (len(x) / sample_rate))
    return covered, false_rate


@pytest.mark.slow
def test_declick_covers_random_clicks_at_a_bounded_false_rate():
    """Clicks as the issue draws them (tests.takes.clicks: 1-8 samples, 1-50 a second,
    random shape, size and polarity) on seed 3's 20 takes (espeak-ng speech, recorded
    sounds, asc-music; 22.05 kHz; seed 1 was the one de-click was developed on). Before
    the two-test detector, the one-sided extents and the clusters in silence, de-click's
    repairs covered 79.7 % of them (found 85.7 %) at a median of 1.94 false clicks a
    second on the clean takes (worst 8.4); now 87.1 % (88.8 %) at 1.10 (worst 2.6)."""
    covered, false_rate = _judged(3, 22050)
    assert np.mean(covered) >= 0.85, np.mean(covered)
    assert np.median(false_rate) <= 1.5 and max(false_rate) <= 4.0, false_rate


def test_clean_speech_is_left_bit_for_bit_and_the_cli_says_so(tmp_path):
    """Issue 49 item 6: on clean espeak-ng takes de-click "repaired" 12-22 clicks a take
    (0 of 16 left as they were, PESQ-WB 4.47 median), most of them a voice's glottal pulse
    at an onset, which a short AR model cannot predict; they come a pitch period apart,
    each as sharp as the next, and a click is sharper than anything about it. Three of
    seed 1's takes (two voices), through the command line: nothing changed, bit for bit,
    and it says so."""
    chosen = takes.clean_takes(seed=1, speech=5, music=0, sounds=0)
    for i in (0, 3, 4):
        said = repairs_nothing("declick", chosen[i].samples.T, 22050, tmp_path, f"take{i}")
        assert "De-click: found nothing" in said


def test_clicks_are_found_where_the_audio_has_them_and_clean_audio_is_left():
    """Issue 49 item 6 took a candidate that is neither certain nor loud for a voice's
    glottal pulse unless it was sharper than anything about it, which left clean speech
    alone but missed clicks no sharper than the audio about them (bench_declick 94.5 ->
    87.6 % found). Those tests now hold only where the audio shows no clicks (fewer than
    ``declick.EVIDENCE`` evident ones within ``declick.EVIDENCE_SECONDS``): a clicked take
    (tests.takes.clicks, three draws) and two clean ones after it, as one file. Before:
    93.8 % of the clicks found; now 97.7 %, the clean takes still left alone (the code
    before issue 49 item 6 repaired glottal pulses there)."""
    sr = 22050
    chosen = takes.clean_takes(seed=1, speech=5, music=0, sounds=0)
    found = []
    for seed in range(3):
        clicked, drawn = takes.clicks(chosen[0].samples.mean(0), np.random.default_rng(seed), sr)
        y = np.concatenate([clicked, chosen[3].samples.mean(0), chosen[4].samples.mean(0)])
        outcome = declick.run(y[None], sr)
        mask = np.zeros(len(y), bool)
        for e in outcome.events:
            mask[e.start:e.start + e.length] = True
        found += [bool(mask[i:i + length].any()) for i, length in drawn]
        assert np.array_equal(outcome.samples[0, len(clicked):], y[len(clicked):]), seed
    assert np.mean(found) >= 0.96, np.mean(found)


def _struck(rng, sr: int, *, drums: bool, seconds: float = 12.0) -> np.ndarray:
    """Music with hits over a quiet chord (four tones, a little noise): drums (a noise
    burst every 0.5 s, a 0.2 ms crack fading into a 20 ms tail, louder than anything else
    in the take) or struck notes (a tone of 100-300 Hz every second, its first 0.5 ms a
    noisy attack, fading over 80 ms, louder than the chord)."""
    n = int(seconds * sr)
    t = np.arange(n) / sr
    x = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) / (i + 1)
            for i, f in enumerate((220.0, 277.2, 329.6, 440.0)))
    x = 0.05 * (x + 0.03 * rng.standard_normal(n))
    every, length = (0.5, 0.1) if drums else (1.0, 0.3)
    k = np.arange(int(length * sr))
    for start in np.arange(0.3, seconds - length, every):
        if drums:
            hit = rng.standard_normal(len(k)) * (0.2 * np.exp(-k / (0.0002 * sr))
                                                 + 0.15 * np.exp(-k / (0.02 * sr)))
        else:
            attack = rng.standard_normal(len(k)) * np.exp(-k / (0.0005 * sr))
            tone = np.cos(2 * np.pi * rng.uniform(100, 300) * k / sr)
            hit = 0.2 * (tone + attack) * np.exp(-k / (0.08 * sr))
        x[int(start * sr):int(start * sr) + len(k)] += hit
    return x


def test_drum_hits_and_struck_notes_are_not_clicks(tmp_path):
    """Issue 49 item 6 on music the project had not seen (drascula, hyperrogue, frozen-bubble):
    de-click changed 32 of 181 clean 12 s excerpts. A drum hit louder than the loudest 1 %
    of its part departed from the line through its neighbours by more than that level, so
    it was a click wherever it lay, and every 0.5 s it made the audio look clicked (3
    evident within 2.5 s): every candidate about it was taken; a note's attack, its
    loudest, sharpest part, was sharper than anything about it. A click is louder than
    the audio swings about it and leaves the audio as it was; a hit is as loud as what
    follows it and starts a sound (now 19 of 181 changed; bench_declick's clicks found as
    before). Seed 1 of synthesized drums and notes, through the command line: 3 and 10
    "clicks" repaired before (2-7 and 9-10 over seeds 0-5), nothing now; the same music
    with clicks drawn on it (tests.takes.clicks) still has them found."""
    sr = 22050
    for drums in (True, False):
        x = _struck(np.random.default_rng(1), sr, drums=drums)
        repairs_nothing("declick", x, sr, tmp_path, f"hits{drums}")
        y, drawn = takes.clicks(x, np.random.default_rng(1), sr)
        mask = np.zeros(len(y), bool)
        for e in declick.run(y[None], sr).events:
            mask[e.start:e.start + e.length] = True
        assert np.mean([mask[i:i + length].any() for i, length in drawn]) >= 0.95, drums


def _naive_interpolation(x, damaged, a):
    """LSAR by the book: minimise ||A x||^2 over the unknowns, A the full convolution
    matrix of the prediction-error filter, plus the prior (Bayesian LSAR) of ar.py."""
    n, p = len(x), len(a) - 1
    conv = np.zeros((n + p, n))
    for i in range(n):
        conv[i:i + p + 1, i] = a
    rows = np.array([np.all(~damaged[max(0, r - p):r + 1]) for r in range(p, n)])
    known = np.where(damaged, 0.0, x)
    residual = (conv @ known)[p:n][rows]
    signal = np.mean(known[~damaged] ** 2)
    ridge = ar.RIDGE * np.mean(residual ** 2) / signal
    u = np.flatnonzero(damaged)
    k = np.flatnonzero(~damaged)
    au, ak = conv[:, u], conv[:, k]
    lhs = au.T @ au + (ridge + 1e-12 * (a @ a)) * np.eye(len(u))
    return np.linalg.solve(lhs, -au.T @ (ak @ x[k]))


def test_batched_interpolation_matches_the_naive_one(rng):
    """ar.interpolate (Toeplitz normal equations, batched over rows with their own models
    and unknowns) against the textbook least squares, to 1e-9 of the signal."""
    p, length, rows = 8, 160, 5
    x = rng.standard_normal((rows, length)).cumsum(-1) * 0.01
    a = ar.levinson(ar.autocorrelation(x, p))
    unknown = np.zeros((rows, length), bool)
    for r in range(rows):
        for _ in range(r + 1):
            s = rng.integers(p, length - p - 8)
            unknown[r, s:s + rng.integers(1, 8)] = True
    values, variance = ar.interpolate(x, unknown, a)
    for r in range(rows):
        count = unknown[r].sum()
        want = _naive_interpolation(x[r], unknown[r], a[r])
        np.testing.assert_allclose(values[r, :count], want, atol=1e-9 * np.abs(x[r]).max())
        assert np.all(values[r, count:] == 0) and np.all(variance[r, :count] > 0)


def _voice(rng, sr: int, seconds: float = 3.0) -> np.ndarray:
    """A voice-like take: a glottal pulse train at a steady pitch (90-220 Hz, 2 % vibrato)
    through three formant resonators, in syllables of 80-300 ms with pauses between, over
    a -60 dBFS noise floor, peaking at -4 to -1 dBFS. Steady voiced speech comes back a
    period later, which is where a click used to pass for the waveform recurring."""
    n = int(seconds * sr)
    t = np.arange(n) / sr
    f0 = rng.uniform(90, 220) * (1 + 0.02 * np.sin(2 * np.pi * rng.uniform(0.3, 1) * t))
    pulses = np.diff(np.floor(np.cumsum(f0 / sr)), prepend=0) > 0
    x = lfilter([1, -1], [1, -0.98], pulses.astype(float))
    for f, bw in ((rng.uniform(500, 800), 80), (rng.uniform(1000, 1800), 100),
                  (rng.uniform(2300, 3000), 150)):
        r, th = np.exp(-np.pi * bw / sr), 2 * np.pi * f / sr
        x = lfilter([1 - r], [1, -2 * r * np.cos(th), r * r], x)
    env, at = np.zeros(n), int(0.05 * sr)
    while at < n - int(0.1 * sr):
        d = min(int(rng.uniform(0.08, 0.3) * sr), n - at)
        env[at:at + d] = np.sin(np.pi * np.arange(d) / d) ** 0.5
        at += d + int(rng.uniform(0.02, 0.15) * sr)
    x = x * env / np.abs(x * env).max() * 10 ** (rng.uniform(-4, -1) / 20)
    return x + 10 ** (-60 / 20) * rng.standard_normal(n)


def _clicked(x, rng, lengths, levels_db, sr):
    """``x`` with a click of each length and peak level (jagged, as tests.takes.clicks
    shapes them) at least 45 ms apart, and each one's (first sample, length)."""
    y, drawn = x.copy(), []
    slots = np.arange(2000, len(x) - 2000, 2000)
    for i, length, level in zip(np.sort(rng.choice(slots, len(lengths), replace=False)),
                                lengths, levels_db, strict=True):
        shape = rng.uniform(0.4, 1, length) * rng.choice([-1, 1], length, p=[0.3, 0.7])
        y[i:i + length] += rng.choice([-1, 1]) * 10 ** (level / 20) * shape / np.abs(shape).max()
        drawn.append((int(i), int(length)))
    return y, drawn


def test_loud_and_long_clicks_are_found_at_the_default():
    """Issue 50: de-click at its default missed 20 of an interview's 87 loudest clicks (-8
    to -10 dBFS) and most of those 10-19 samples long. On steady voiced speech a period's
    copy predicted the click within 16 robust deviations of its error about it (the copy's
    gain fitted over the click itself), and the click passed for the sound: here 6 of
    these 60 clicks at -8 dBFS (1 and 15 samples) were missed; now none."""
    sr = 44100
    missed = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = _voice(rng, sr)
        y, drawn = _clicked(x, rng, [1, 15] * 10, [-8.0] * 20, sr)
        mask = np.zeros(len(y), bool)
        for e in declick.run(y[None], sr).events:
            mask[e.start:e.start + e.length] = True
        missed += [(seed, i, length) for i, length in drawn if not mask[i:i + length].any()]
    assert not missed, missed


def test_sensitivity_steps_are_even():
    """Each step of sensitivity finds at most 1.3 times as many as the step before, and no
    fewer (within 5 %: a lower threshold may join two events into one), on a voice-like
    take with 40 clicks of 1-19 samples from -45 to -8 dBFS. Steps even in decibels (0.6
    dB) found 19, 20, 20, 20, 20, 23, 26, 26, 31, 37, 57 here (a step: up to 1.54 times;
    1.22-1.63 over seeds 11-18; issue 50: 32 found at 8, 725 at 10, on 10 s of an
    interview); steps even in the thresholds' reciprocal (engine.repair.declick.limits)
    28, 32, 32, 34, 35, 36, 38, 38, 38, 39, 42 (1.08-1.15 over seeds 11-18)."""
    sr = 44100
    rng = np.random.default_rng(11)
    x = _voice(rng, sr)
    y, _ = _clicked(x, rng, rng.integers(1, 20, 40), rng.uniform(-45, -8, 40), sr)
    counts = np.array([len(declick.run(y[None], sr, sensitivity=s).events)
                       for s in range(11)])
    assert np.all(counts[1:] >= 0.95 * counts[:-1]) and np.all(counts[1:] <= 1.3 * counts[:-1]), \
        counts
