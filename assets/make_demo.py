"""Synthesize the bundled demo sound, ``assets/demo.flac`` (12 s, mono, 32 kHz).

It holds what a spectral editor is for: a plucked melody with harmonics, a
sung vowel with vibrato, hi-hat-like noise bursts, a steady 6 kHz whistle to
erase or blur, and two clicks to heal. Deterministic (fixed seed), so running
it again gives the same file: ``python assets/make_demo.py [OUT]``.
"""

import sys
from pathlib import Path

import numpy as np
import soundfile as sf

SR = 32000
SECONDS = 12.0


def envelope(n: int, attack: float, decay: float) -> np.ndarray:
    t = np.arange(n) / SR
    return np.minimum(t / attack, 1.0) * np.exp(-t / decay)


def pluck(f0: float, seconds: float) -> np.ndarray:
    n = int(seconds * SR)
    t = np.arange(n) / SR
    tone = sum(np.sin(2 * np.pi * k * f0 * t) / k * np.exp(-t * k * 0.8) for k in range(1, 9))
    release = np.minimum(1.0, (seconds - t) / 0.15)  # fade out: no click at the cut
    return tone * envelope(n, 0.005, 0.9) * release


def sung_vowel(f0: float, seconds: float) -> np.ndarray:
    """A vowel "ah": harmonics of a vibrato f0 weighted by three formant peaks."""
    n = int(seconds * SR)
    t = np.arange(n) / SR
    vibrato = 1 + 0.012 * np.sin(2 * np.pi * 5.5 * t) * np.minimum(t / 0.6, 1.0)
    phase = 2 * np.pi * np.cumsum(f0 * vibrato) / SR
    formants = [(700, 110), (1220, 120), (2600, 160)]
    out = np.zeros(n)
    for k in range(1, int(4000 / f0)):
        gain = sum(np.exp(-0.5 * ((k * f0 - fc) / bw) ** 2) for fc, bw in formants) + 0.02
        out += gain * np.sin(k * phase)
    fade = np.minimum(1.0, np.minimum(t / 0.15, (seconds - t) / 0.3))
    return out / np.max(np.abs(out)) * fade


def noise_burst(rng: np.random.Generator, seconds: float) -> np.ndarray:
    n = int(seconds * SR)
    white = rng.standard_normal(n)
    bright = np.diff(white, prepend=0.0)  # tilt toward the highs, like a hi-hat
    return bright * envelope(n, 0.001, 0.04)


def add(out: np.ndarray, at: float, sound: np.ndarray, gain: float) -> None:
    i = int(at * SR)
    j = min(len(out), i + len(sound))
    out[i:j] += gain * sound[:j - i]


def make() -> np.ndarray:
    rng = np.random.default_rng(20261122)
    out = np.zeros(int(SECONDS * SR))
    melody = [(0.3, 261.63), (0.8, 329.63), (1.3, 392.0), (1.8, 523.25), (2.6, 493.88),
              (3.1, 392.0), (3.6, 440.0), (4.4, 349.23), (4.9, 329.63), (5.6, 261.63)]
    for at, f in melody:
        add(out, at, pluck(f, 1.2), 0.22)
    add(out, 6.4, sung_vowel(196.0, 4.8), 0.35)
    for k in range(16):
        add(out, 0.55 + 0.7 * k, noise_burst(rng, 0.25), 0.05)
    t = np.arange(int(5.0 * SR)) / SR
    whistle = np.sin(2 * np.pi * 6000 * t) * np.minimum(1, np.minimum(t, 5.0 - t) / 0.2)
    add(out, 3.0, whistle, 0.04)
    for at in (2.2, 8.7):  # clicks: single-sample spikes with a short ring
        add(out, at, np.array([0.0, 0.9, -0.6, 0.25, -0.1]), 1.0)
    return (out / np.max(np.abs(out)) * 0.89).astype(np.float32)  # peak -1 dBFS


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("demo.flac")
    sf.write(target, make(), SR, subtype="PCM_16")
    print(f"wrote {target} ({target.stat().st_size / 1024:.0f} KiB)")
