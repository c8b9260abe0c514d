"""Restoration material built from real recordings no one here wrote, for the
repair tests and ``bench/bench_repair.py``.

The clean take: espeak-ng speaking two sentences, then a real human voice
(ALSA's ``Front_Center.wav``, Debian's alsa-utils), at 22.05 kHz mono.
Disturbances are added to it; each comes with the strokes a user would
paint (one stroke along a whistle or hum, one vertical stroke per click, a
patch over a burst) and a plain filter fix (scipy notch or low-pass) to
beat. Judged by PESQ-WB, STOI and SI-SDR against the clean take.
"""

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

SR = 22050
SENTENCES = ("The quick brown fox jumps over the lazy dog near the river bank.",
             "Please call Stella and ask her to bring these things with her from the store.")
ALSA_VOICE = Path("/usr/share/sounds/alsa/Front_Center.wav")


def available() -> str | None:
    """None when the material can be built here, else what is missing."""
    if shutil.which("espeak-ng") is None:
        return "espeak-ng is not installed (Debian: apt-get install espeak-ng)"
    if not ALSA_VOICE.exists():
        return f"{ALSA_VOICE} is missing (Debian: apt-get install alsa-utils)"
    return None


def _resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    import soxr

    return x if sr_in == sr_out else soxr.resample(x, sr_in, sr_out, quality="VHQ")


def clean_take() -> np.ndarray:
    """float64 mono at ``SR``, peak 0.5."""
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(SENTENCES):
            path = Path(tmp) / f"s{i}.wav"
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text],
                           check=True, capture_output=True)
            x, sr = sf.read(path, dtype="float64")
            parts += [_resample(x, sr, SR), np.zeros(SR // 4)]
    voice, sr = sf.read(ALSA_VOICE, dtype="float64")
    voice = voice.mean(1) if voice.ndim == 2 else voice
    parts.append(_resample(voice, sr, SR))
    x = np.concatenate([np.zeros(SR // 4), *parts, np.zeros(SR // 4)])
    return 0.5 * x / np.max(np.abs(x))


@dataclass
class Case:
    name: str
    disturbed: np.ndarray
    strokes: list = field(default_factory=list)  # (preset, points, overrides) as a user paints
    filter_fix: str = ""  # what the plain filter is


def _sine(n: int, hz: float, start: int, stop: int, amp: float, fade: int = 110) -> np.ndarray:
    out = np.zeros(n)
    t = np.arange(stop - start) / SR
    env = np.minimum(1.0, np.minimum(np.arange(stop - start), np.arange(stop - start)[::-1]) / fade)
    out[start:stop] = amp * env * np.sin(2 * np.pi * hz * t)
    return out


def cases(clean: np.ndarray, seed: int = 7) -> list[Case]:
    rng = np.random.default_rng(seed)
    n, dur = len(clean), len(clean) / SR
    nyq = SR / 2
    out = []
    # a whistle along most of the take
    whistle = _sine(n, 2500.0, int(0.3 * SR), n - int(0.3 * SR), 0.05)
    out.append(Case("whistle 2.5 kHz", clean + whistle,
                    [("tone-remover", [(0.3, 2500), (dur - 0.3, 2500)], {})], "notch 2.5 kHz"))
    # five clicks
    x = clean.copy()
    times = np.linspace(0.8, dur - 0.8, 5)
    for t in times:
        i = int(t * SR)
        x[i:i + 3] += rng.choice([-1, 1]) * np.array([0.6, -0.45, 0.2])
    out.append(Case("five clicks", x, [("heal", [(t + 1 / SR, 0), (t + 1 / SR, nyq)], {})
                                        for t in times], "low-pass 4 kHz"))
    # mains hum with seven harmonics
    t = np.arange(n) / SR
    hum = sum(0.04 * 0.7 ** (k - 1) * np.sin(2 * np.pi * 60 * k * t + k) for k in range(1, 9))
    out.append(Case("60 Hz hum + 7 harmonics", clean + hum,
                    [("harmonic-eraser", [(0.0, 60), (dur, 60)], {})], "notches 60 Hz x 1..8"))
    # a cough-like noise burst
    burst = np.zeros(n)
    i0, width = int(1.2 * SR), int(0.25 * SR)
    spectrum = np.fft.rfft(rng.standard_normal(width))
    f = np.fft.rfftfreq(width, 1 / SR)
    spectrum[(f < 300) | (f > 3000)] = 0
    burst[i0:i0 + width] = np.fft.irfft(spectrum, width) * np.hanning(width)
    burst *= 0.25 / np.max(np.abs(burst))
    out.append(Case("noise burst 0.3-3 kHz", clean + burst,
                    [("spot-repair", [(1.2, 1650), (1.45, 1650)],
                      {"radius_hz": 1400.0, "radius_ms": 40.0})], "low-pass 4 kHz"))
    # a sine bleep
    bleep = _sine(n, 1000.0, int(2.0 * SR), int(2.3 * SR), 0.2)
    out.append(Case("bleep 1 kHz", clean + bleep,
                    [("spot-repair", [(2.0, 1000), (2.3, 1000)], {"radius_hz": 60.0})],
                    "notch 1 kHz"))
    return out


def filter_fix(case: Case) -> np.ndarray:
    """The plain filter a user would reach for, zero-phase (scipy)."""
    from scipy import signal

    x = case.disturbed
    if case.filter_fix.startswith("low-pass"):
        sos = signal.butter(8, 4000, "low", fs=SR, output="sos")
        return signal.sosfiltfilt(sos, x)
    hz = {"notch 2.5 kHz": [2500.0], "notch 1 kHz": [1000.0],
          "notches 60 Hz x 1..8": [60.0 * k for k in range(1, 9)]}[case.filter_fix]
    for f0 in hz:
        b, a = signal.iirnotch(f0, 30.0, fs=SR)
        x = signal.filtfilt(b, a, x)
    return x


def scores(clean: np.ndarray, test: np.ndarray) -> dict:
    """PESQ-WB and STOI (at 16 kHz) and SI-SDR (dB) of ``test`` against ``clean``."""
    from pystoi import stoi

    from engine.measure.metrics import si_sdr_db

    ref16, test16 = _at_16k(clean, test)
    return {"pesq": _pesq_wb(ref16, test16),
            "stoi": float(stoi(ref16, test16, 16000, extended=False)),
            "si_sdr": si_sdr_db(clean, test)}


def pesq_wb(clean: np.ndarray, test: np.ndarray) -> float:
    """:func:`scores`' PESQ-WB alone, for a test judged by it (STOI is a third of the
    cost of :func:`scores`)."""
    return _pesq_wb(*_at_16k(clean, test))


def _at_16k(clean: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _resample(clean, SR, 16000), _resample(np.asarray(test, np.float64), SR, 16000)


def _pesq_wb(ref16: np.ndarray, test16: np.ndarray) -> float:
    from pesq import pesq

    return float(pesq(16000, ref16, test16, "wb"))


def repaired(case: Case, transform: str) -> np.ndarray:
    """Paint the case's strokes on a ``transform`` document, as a user would."""
    from app.session.editor import Editor
    from engine.io.audio import Audio
    from engine.model.document import Document

    ed = Editor(Document(Audio(case.disturbed[None].astype(np.float32), SR),
                         transform=transform, device="cpu"))
    for preset, points, overrides in case.strokes:
        ed.paint(preset, points, **overrides)
    return ed.audio()[0].astype(np.float64)


def mains_hum(n: int, sr: int, rng) -> tuple[np.ndarray, float]:
    """Mains hum as bench_repair draws it: 50 or 60 Hz, up to 0.4 Hz off and drifting,
    4-12 harmonics, 15-35 dB under the take's peak (scaled there by the caller)."""
    base = float(rng.choice([50.0, 60.0]))
    t = np.arange(n) / sr
    f = base + rng.uniform(-0.4, 0.4) + 0.1 * np.sin(2 * np.pi * t / rng.uniform(5, 20))
    phase = 2 * np.pi * np.cumsum(f) / sr
    h = sum(rng.uniform(0.3, 1) * 0.75 ** (k - 1) * np.sin(k * phase + rng.uniform(0, 6))
            for k in range(1, int(rng.integers(4, 13)) + 1))
    return h / np.abs(h).max() * 10 ** (rng.uniform(-35, -15) / 20), base


def _peaks(x: np.ndarray, window: int) -> np.ndarray:
    count = x.shape[1] // window
    return np.abs(x[:, :count * window]).reshape(x.shape[0], count, window).max(axis=2)


def assert_never_louder(x: np.ndarray, y: np.ndarray, sample_rate: int) -> None:
    """The contract: y's peak over each 10 ms is at most x's over it and 10 ms either
    side, + 1 dB."""
    window = int(0.01 * sample_rate)
    px, py = _peaks(x, window), _peaks(y, window)
    around = np.maximum(px, np.maximum(np.roll(px, 1, axis=1), np.roll(px, -1, axis=1)))
    assert np.all(py <= around * 10 ** (1 / 20) + 1e-12)
    assert np.all(np.isfinite(y)) and y.shape == x.shape
