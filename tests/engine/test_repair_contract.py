"""The safety contract of every repair, as an oracle over random placements on real
material (digital silence, fades, DC offsets, full-scale passages; 8 and 192 kHz;
mono and multichannel): outside its region nothing changes, bit for bit (the
coefficients and the samples); nothing non-finite is written; no 10 ms of output is
louder than the input there (+1 dB); a repair that finds nothing changes nothing,
makes no undo step and says so."""

import functools

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.session.editor import Editor
from engine.io.audio import Audio
from engine.model.document import Document
from engine.repair import guard
from tests import takes
from tests.material import mains_hum

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=takes.missing() or "")

MODULE_SETTINGS = {"declick": {}, "dehum": {}, "denoise": {}, "declip": {"gain": "keep"},
                   "voice": {}}


@functools.cache
def _material(rate: int, channels: int) -> np.ndarray:
    """1.6 s of real speech or music with what breaks naive repairs spliced in: digital
    silence, a fade to nothing, a DC offset, a full-scale stretch, a few clicks."""
    sr = 22050
    voice = takes.speak("Bring three red bags to the river.", "en-gb-scotland", sr)[0]
    music = takes.clean_takes(speech=0, music=1, sounds=0, music_seconds=2.0)[0].samples
    n = int(1.6 * sr)
    x = np.zeros((channels, n))
    for c in range(channels):
        src = voice if c % 2 == 0 else music[c % 2]
        x[c, int(0.3 * sr):] = 0.5 * src[:n - int(0.3 * sr)] / np.abs(src).max()
    x[:, int(0.9 * sr):int(1.0 * sr)] *= np.linspace(1, 0, int(0.1 * sr))  # fade out...
    x[:, int(1.0 * sr):int(1.1 * sr)] = 0.0  # ...to digital silence
    x[:, int(1.1 * sr):int(1.2 * sr)] += 0.3  # a DC offset
    x[:, int(1.3 * sr):int(1.35 * sr)] = np.sign(x[:, int(1.3 * sr):int(1.35 * sr)] + 1e-9)
    for i in (int(0.5 * sr), int(0.75 * sr), int(1.25 * sr)):
        x[:, i:i + 3] += np.array([0.4, -0.3, 0.2])
    return np.clip(takes.resample(x, sr, rate), -1, 1).astype(np.float32)


def _editor(rate: int, channels: int, transform: str) -> Editor:
    audio = Audio(_material(rate, channels).copy(), rate)
    return Editor(Document(audio, transform=transform, device="cpu"))


def _check_contract(before: np.ndarray, after: np.ndarray, rate: int,
                    span: tuple[int, int] | None, louder_db: float = guard.LOUDER_DB) -> None:
    assert np.isfinite(after).all()
    _, put_back = guard.safe(before, after, rate, louder_db=louder_db, neighbours=2)
    assert put_back == 0, "louder than the input by more than 1 dB somewhere"
    if span is None:
        assert np.array_equal(before, after)
        return
    outside = np.ones(before.shape[-1], bool)
    outside[span[0]:span[1]] = False
    assert np.array_equal(before[:, outside], after[:, outside])


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(MODULE_SETTINGS)), rate=st.sampled_from([8000, 44100, 192000]),
       channels=st.sampled_from([1, 2, 3]), transform=st.sampled_from(["stft", "cq"]),
       start=st.floats(0.0, 1.4), length=st.floats(0.05, 1.6), data=st.data())
def test_modules_keep_the_contract_anywhere(name, rate, channels, transform, start, length,
                                            data):
    if transform == "cq" and rate == 192000:
        transform = "stft"  # a constant-Q of 192 kHz audio is slow to build for a unit test
    ed = _editor(rate, channels, transform)
    before_audio, before_coef = ed.audio().copy(), ed.doc.read_complex(ed.doc.full_rect())
    end = min(start + length, 1.6)
    channel = data.draw(st.sampled_from([None] + list(range(channels))))
    report = ed.repair(name, start=start, end=end, channel=channel, **MODULE_SETTINGS[name])
    after = ed.audio()
    if not report.changed:
        assert torch.equal(ed.doc.read_complex(ed.doc.full_rect()), before_coef)
        assert ed.warnings and ed.warnings[-1].endswith("; nothing changed")
        assert ed.history.position == 0
        _check_contract(before_audio, after, rate, None)
        return
    t = ed.doc.transform
    s0, s1 = round(start * rate), round(end * rate)
    f0, f1 = t.frames_needed(s0, min(s1, ed.doc.length), ed.doc.length)
    coef = ed.doc.read_complex(ed.doc.full_rect())
    outside_frames = torch.ones(coef.shape[-1], dtype=torch.bool)
    outside_frames[f0:f1] = False
    assert torch.equal(coef[..., outside_frames], before_coef[..., outside_frames])
    heard = t.samples_affected(f0, f1, ed.doc.length)
    louder = guard.LOUDER_DB + (6.0 if name == "declip" else 0.0)  # declip: its headroom
    _check_contract(before_audio, after, rate, heard, louder)
    ed.undo()  # one step, bit for bit
    assert torch.equal(ed.doc.read_complex(ed.doc.full_rect()), before_coef)


def test_a_module_that_finds_nothing_says_so_and_makes_no_step():
    ed = _editor(22050, 1, "stft")
    report = ed.repair("dehum")  # speech with no hum in it
    assert not report.changed and report.line() == "De-hum: found nothing to repair; nothing " \
        "changed"
    assert ed.warnings == [report.line()] and ed.history.position == 0


@pytest.mark.parametrize("voice", ["en-029", "en-gb-scotland"])
def test_heal_by_digital_silence_writes_no_burst(voice):
    """One heal stroke 0.2 s after 0.3 s of digital silence once wrote samples of
    magnitude up to ~6e5 (+115 dBFS): its AR model was fitted on context that was
    partly exact zeros."""
    sr = 44100
    x = takes.speak("Six spoons of fresh snow peas, five thick slabs of blue cheese.", voice,
                    sr)[0]
    x = np.concatenate([np.zeros(int(0.3 * sr)), 0.5 * x / np.abs(x).max()]).astype(np.float32)
    ed = Editor(Document(Audio(x[None], sr), device="cpu"))
    before = ed.audio().copy()
    for t in np.arange(0.497, 0.58, 0.0137):
        ed.paint("heal", [(t, 0), (t, sr / 2)])
        _check_contract(before, ed.audio(), sr, (0, len(x)))
        if ed.history.can_undo:
            ed.undo()


def test_heal_that_misses_its_click_changes_nothing_and_says_so():
    sr = 22050
    x = 0.3 * np.sin(2 * np.pi * 220 * np.arange(sr) / sr).astype(np.float32)
    x[11025:11028] += [0.5, -0.4, 0.2]
    ed = Editor(Document(Audio(x[None].copy(), sr), device="cpu"))
    before = ed.doc.read_complex(ed.doc.full_rect())
    ed.paint("heal", [(0.53, 0), (0.53, 10000)])  # 30 ms from the click: the brush is 10 ms
    assert torch.equal(ed.doc.read_complex(ed.doc.full_rect()), before)
    assert ed.history.position == 0
    assert ed.warnings and "no click found under the stroke" in ed.warnings[0]
    ed.paint("heal", [(0.5001, 0), (0.5001, 10000)])  # on it: repaired
    assert ed.history.position == 1
    assert np.abs(ed.audio()[0, 11020:11035]).max() < 0.32


@pytest.mark.parametrize("kind", ["glide", "vibrato"])
def test_tone_remover_follows_a_tone_that_glides_or_wobbles(kind):
    """A whistle gliding 1.8 -> 2.6 kHz once left the take unchanged ("painted 1 stroke")."""
    sr = 22050
    x = takes.speak("Please call Stella and ask her to bring these things.", "en-gb+f2", sr)[0]
    x = 0.5 * x / np.abs(x).max()
    a, b = int(0.3 * sr), int(2.3 * sr)
    t = np.arange(b - a) / sr
    f = 1800 + 800 * t / t[-1] if kind == "glide" else 2500 * (1 + 0.01 * np.sin(10 * np.pi * t))
    w = np.zeros(len(x))
    w[a:b] = 0.05 * np.minimum(1, np.minimum(t, t[::-1]) / 0.02) * np.sin(2 * np.pi *
                                                                         np.cumsum(f) / sr)
    ed = Editor(Document(Audio((x + w)[None].astype(np.float32), sr), device="cpu"))
    ed.paint("tone-remover", [((a + i) / sr, float(f[i]))
                              for i in np.linspace(0, b - a - 1, 10).astype(int)])
    from engine.measure.metrics import si_sdr_db

    assert si_sdr_db(x, ed.audio()[0]) > si_sdr_db(x, x + w) + 12  # 7.7 -> 25 dB measured


def test_declick_leaves_music_s_own_edges_alone():
    """A waveform's sharp edges that recur every period (the buzzy synths of the asc-music
    tracks) are the sound, not clicks. Before de-click told them apart, it found up to 17
    'clicks' a second in clean music and cost a take 16.4 dB SI-SDR; then at most 7.1 and
    21.5 dB over these 12 excerpts (seeds 1 and 2; a third seed improved alike); since
    the local test (engine.repair.click_find), at most 1.1 and 35.2 dB."""
    from engine.measure.metrics import si_sdr_db
    from engine.repair import declick

    for seed in (1, 2):
        for take in takes.clean_takes(seed=seed, speech=0, sounds=0, music=6):
            x, sr = take.samples.mean(0), 22050  # clean_takes' default rate
            out = declick.run(x[None], sr)
            rate, kept = len(out.events) / (len(x) / sr), si_sdr_db(x, out.samples[0])
            assert rate <= 8.0 and kept >= 20.0, (seed, take.name, rate, kept)


@pytest.mark.slow
def test_the_harmonic_eraser_takes_no_music_for_a_hum():
    """The harmonic eraser painted along a hum's nominal 50 / 60 Hz over real music (12
    excerpts, STFT): a steady note of music near one harmonic is no hum. Before the comb
    had to agree (engine.repair.steady.on_comb) within the preset's radius (then 50
    cents, now 25), 9 of these 12 takes came out worse than their input, by up to 17 dB
    SI-SDR (bass notes and their harmonics taken for the hum); now none, 4 better by
    1.7-3.8 dB."""
    rng = np.random.default_rng(7)
    gains = []
    for seed in (1, 2):
        for take in takes.clean_takes(seed=seed, speech=0, sounds=0, music=6):
            gains.append(_harmonic_eraser_gain(take.samples.mean(0), rng))
            assert gains[-1] >= -0.1, (seed, take.name, gains[-1])
    assert max(gains) > 1.0


@pytest.mark.slow
def test_the_harmonic_eraser_follows_a_hum_that_drifts():
    """The harmonic eraser along a hum's nominal 50 / 60 Hz under speech (6 takes, STFT;
    the hum as bench_repair draws it: off by up to 0.4 Hz, drifting 0.1 Hz, 4-12
    harmonics): a steady fit per harmonic took a drifting hum in part (SI-SDR gained,
    median / worst: 7.2 / 3.4 dB); the harmonics it finds on the comb are now followed
    as de-hum follows them (engine.repair.dehum): 10.5 / 8.3 dB."""
    rng = np.random.default_rng(5)
    gains = [_harmonic_eraser_gain(take.samples.mean(0), rng)
             for take in takes.clean_takes(seed=1, speech=6, sounds=0, music=0)]
    assert np.median(gains) > 9 and min(gains) > 6, np.round(gains, 1)


def _harmonic_eraser_gain(x: np.ndarray, rng) -> float:
    """SI-SDR gained (dB) by the harmonic eraser painted along the nominal fundamental
    of a hum drawn by :func:`mains_hum` over ``x`` (22.05 kHz, an STFT document)."""
    from engine.measure.metrics import si_sdr_db

    sr = 22050
    h, base = mains_hum(len(x), sr, rng)
    y = x + h * np.abs(x).max()
    ed = Editor(Document(Audio(y[None].astype(np.float32), sr), transform="stft",
                         device="cpu"))
    ed.paint("harmonic-eraser", [(0.0, base), (len(x) / sr, base)])
    return si_sdr_db(x, ed.audio()[0]) - si_sdr_db(x, y)


@pytest.mark.slow
def test_tone_remover_takes_a_whistle_s_vibrato_with_it():
    """A whistle with vibrato (0.8-4 kHz, 1 % at 4-7 Hz, 10-30 dB under the peak) over
    speech: a steady fit takes the whistle's centre and leaves its wobble, a tone the
    follower still finds along the stroke; then the followed removal is kept. Before
    (the followed one only where it removed 1.25x the energy), over these 12 takes:
    median 14.2 dB SI-SDR gained, worst 7.6; now 21.9 and 8.5 (and in bench_repair's
    whistle set, PESQ of the worst take 1.62 -> 3.66)."""
    from engine.measure.metrics import si_sdr_db

    sr, rng = 22050, np.random.default_rng(12)
    gains = []
    for seed in (1, 2):
        for take in takes.clean_takes(sample_rate=sr, seed=seed, speech=6, sounds=0, music=0):
            x = take.samples.mean(0)
            w, points = _vibrato_whistle(x, sr, rng)
            gains.append(si_sdr_db(x, _tone_removed(x + w, sr, points)) - si_sdr_db(x, x + w))
    assert min(gains) > 6 and np.median(gains) > 18, np.round(gains, 1)


@pytest.mark.slow
def test_tone_remover_leaves_no_whistle_in_the_pauses():
    """A followed whistle's subtraction leaves a few per cent of it, heard where the
    speech pauses; what still stands out at its frequency is brought down to the level
    around it. Vibrato whistles (0.8-4 kHz, 10-30 dB under the peak) over the speech
    takes with pauses (at least 5 windows of 50 ms at -60 dB): what is left of the
    whistle in the pauses was -39 to -44 dB under it, now -48 to -56 dB."""

    sr, rng, win = 22050, np.random.default_rng(21), 1102
    for take in takes.clean_takes(sample_rate=sr, seed=3, speech=8, sounds=0, music=0):
        x = take.samples.mean(0)
        w, points = _vibrato_whistle(x, sr, rng)
        a = round(points[0][0] * sr)
        windows = functools.partial(_windows, start=a, count=(len(x) - 2 * a) // win, size=win)
        pauses = np.sqrt((windows(x) ** 2).mean(1)) < np.abs(x).max() * 1e-3
        if pauses.sum() < 5:
            continue
        left = np.sqrt((windows(_tone_removed(x + w, sr, points) - x)[pauses] ** 2).mean() /
                       (windows(w) ** 2).mean())
        assert 20 * np.log10(left) < -45, (take.name, 20 * np.log10(left))


@pytest.mark.slow
def test_tone_remover_keeps_a_harmonic_that_crosses_the_tone():
    """A vowel's harmonic that meets a whistle's frequency for 0.15 s (3-6 times
    louder, a cos² swell) was subtracted with it: the demodulated amplitude (smoothed
    over 12 ms) followed the sum. The tone's amplitude is now held below its running
    median over 0.5 s. What is lost of the harmonic, in dB of it, over 6 random
    draws: 0.0 in every draw before; now a median under -5 dB, each under -1.5."""
    sr, lost = 22050, []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        t = np.arange(3 * sr) / sr
        f = rng.uniform(800, 3000) * (1 + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 7) * t))
        phase = 2 * np.pi * np.cumsum(f) / sr
        centre, half = rng.uniform(1.0, 2.0), 0.075
        crossing = np.abs(t - centre) < half
        swell = np.where(crossing, np.cos(np.pi * (t - centre) / (2 * half)) ** 2, 0.0)
        harmonic = rng.uniform(3, 6) * 0.05 * swell * np.sin(phase + rng.uniform(0, 2 * np.pi))
        clean = harmonic + 1e-3 * rng.standard_normal(len(t))
        points = [(float(s), float(f[round(s * sr)])) for s in np.linspace(0.2, 2.8, 12)]
        out = _tone_removed(clean + 0.05 * np.sin(phase), sr, points)
        lost.append(10 * np.log10(np.sum((out - clean)[crossing] ** 2) /
                                  np.sum(harmonic[crossing] ** 2)))
    assert np.median(lost) < -5 and max(lost) < -1.5, lost


@pytest.mark.slow
def test_tone_remover_takes_a_vibrato_whistle_alone_in_silence():
    """A vibrato whistle over digital silence (4 random draws, 0.8-4 kHz, 1 % at
    4-7 Hz), what is left of it in dB: -3.1 and -12.8 dB in two draws (the followed
    removal and the steady fit both left a tone standing in every frame, as any
    remains do in silence, and the steady fit was kept), -54 and -58 dB in the
    others (the carrier's frequency held per 5 ms cell: sidebands 200 Hz either
    side); now under -60 dB in each."""
    for seed in range(4):
        assert _vibrato_whistle_left(seed, noise_db=None) < -60, seed


def test_tone_remover_stays_on_the_tone_where_a_louder_partial_sounds_beside_it():
    """A gliding whistle with a partial 10-20 dB louder sounding now and then 70-140 Hz
    from it, within the stroke's reach (150 Hz), as a vowel's harmonic does: the
    strongest peak of each frame jumped to the partial, and the whistle stayed while
    the partial was cut (what differs from the take without the whistle, in dB of the
    whistle, over 6 draws: -0.8 to +14.5 dB). The track is now the ridge that goes on
    (engine.repair.track): -29 to -34 dB."""
    sr = 22050
    for seed in range(6):
        rng = np.random.default_rng(seed)
        t = np.arange(3 * sr) / sr
        f = rng.uniform(800, 3000) * (1 + rng.uniform(-0.1, 0.1) * t / t[-1])
        whistle = 0.02 * np.sin(2 * np.pi * np.cumsum(f) / sr)
        g = f + rng.choice([-1, 1]) * rng.uniform(70, 140)
        sounding = np.sin(2 * np.pi * t / rng.uniform(0.5, 0.9) + rng.uniform(0, 6)) > 0.3
        swell = np.convolve(sounding.astype(float), np.ones(441) / 441, mode="same")
        partial = 0.02 * 10 ** (rng.uniform(10, 20) / 20) * swell * np.sin(
            2 * np.pi * np.cumsum(g) / sr)
        clean = partial + 1e-4 * rng.standard_normal(len(t))
        points = [(float(s), float(f[round(s * sr)])) for s in np.linspace(0.1, 2.9, 12)]
        middle = slice(round(0.5 * sr), round(2.5 * sr))
        left = (_tone_removed(clean + whistle, sr, points) - clean)[middle]
        assert 10 * np.log10(np.mean(left ** 2) / np.mean(whistle[middle] ** 2)) < -25, seed


def test_tone_remover_takes_a_bleep_shorter_than_its_level_s_span():
    """A steady bleep of 0.15-0.45 s (0.6-3 kHz, 6-20 dB under the speech's peak) and
    a tone-remover stroke along it: the followed tone's amplitude was held below its
    running median over 0.5 s taken with the silence about it and its own ends, so a
    bleep shorter than that was taken by 0.1-3.3 dB. The median is now taken only
    where the tone sounds, over at most that (what differs from the speech, in dB of
    the bleep, over 6 draws: -14.8 to -24.6 dB; at 44.1 kHz over 8 voices and bleeps,
    PESQ-WB median / worst 4.0 / 3.9 against a notch's 3.8 / 3.6)."""
    sr = 22050
    x = takes.speak("Please call Stella and ask her to bring these things.", "en-us", sr)[0]
    x = 0.5 * x / np.abs(x).max()
    for seed in range(6):
        rng = np.random.default_rng(seed)
        f, seconds = rng.uniform(600, 3000), rng.uniform(0.15, 0.45)
        a = round(rng.uniform(0.3, len(x) / sr - 0.8) * sr)
        t = np.arange(round(seconds * sr)) / sr
        bleep = np.zeros(len(x))
        bleep[a:a + len(t)] = 0.5 * 10 ** (rng.uniform(-20, -6) / 20) * \
            np.minimum(1, np.minimum(t, t[::-1]) / 0.005) * np.sin(2 * np.pi * f * t)
        out = _tone_removed(x + bleep, sr, [(a / sr, f), ((a + len(t)) / sr, f)])
        assert 10 * np.log10(np.sum((out - x) ** 2) / np.sum(bleep ** 2)) < -12, seed


@pytest.mark.slow
def test_tone_remover_takes_a_vibrato_whistle_over_quiet_noise():
    """A vibrato whistle (6 random draws, as above) over noise 40 dB under it: the
    removal's choice once kept the steady fit in one draw (-7.0 dB of the whistle left;
    the others -55 to -57 dB). Which removal left more is now read at the followed
    tone's own frequency, and the followed carrier corrected by the phase slope of
    what it demodulated: -56 to -62 dB."""
    for seed in range(6):
        assert _vibrato_whistle_left(seed, noise_db=-40.0) < -50, seed


def _vibrato_whistle_left(seed: int, *, noise_db: float | None) -> float:
    """What a tone-remover stroke along a vibrato whistle (0.8-4 kHz, 1 % at 4-7 Hz;
    drawn from ``seed``) leaves of it (dB of it, over the middle 2 s), alone in digital
    silence or over white noise ``noise_db`` under it."""
    sr, rng = 22050, np.random.default_rng(seed)
    t = np.arange(3 * sr) / sr
    f = rng.uniform(800, 4000) * (1 + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 7) * t))
    whistle = 0.05 * np.sin(2 * np.pi * np.cumsum(f) / sr)
    noise = 0.0 if noise_db is None else \
        0.05 * 10 ** (noise_db / 20) * rng.standard_normal(len(t))
    points = [(float(s), float(f[round(s * sr)])) for s in np.linspace(0.1, 2.9, 12)]
    middle = slice(round(0.5 * sr), round(2.5 * sr))
    left = (_tone_removed(whistle + noise, sr, points) - noise)[middle]
    return 10 * np.log10(np.mean(left ** 2) / np.mean(whistle[middle] ** 2))


def _vibrato_whistle(x: np.ndarray, sr: int, rng) -> tuple[np.ndarray, list]:
    """A whistle over the middle 80 % of ``x``: 0.8-4 kHz with 1 % vibrato at 4-7 Hz,
    10-30 dB under ``x``'s peak; and the stroke a user paints along it."""
    a, b = int(0.1 * len(x)), int(0.9 * len(x))
    t = np.arange(b - a) / sr
    f = rng.uniform(800, 4000) * (1 + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 7) * t))
    w = np.zeros(len(x))
    w[a:b] = np.minimum(1, np.minimum(t, t[::-1]) / 0.02) * np.sin(2 * np.pi * np.cumsum(f) / sr)
    w *= np.abs(x).max() * 10 ** (rng.uniform(-30, -10) / 20)
    return w, [((a + i) / sr, float(f[i])) for i in np.linspace(0, b - a - 1, 12).astype(int)]


def _tone_removed(y: np.ndarray, sr: int, points: list) -> np.ndarray:
    ed = Editor(Document(Audio(y[None].astype(np.float32), sr), device="cpu"))
    ed.paint("tone-remover", points)
    return ed.audio()[0]


def _windows(v: np.ndarray, *, start: int, count: int, size: int) -> np.ndarray:
    return v[start:start + count * size].reshape(count, size)
