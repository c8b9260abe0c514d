"""Mixtures of real sources with known truth, for the unmix tests and
``bench/bench_unmix.py``: built from sounds no one here wrote (tests/takes.py).

- ``tones+hits``: a percussive real sound (freedesktop's camera shutter, trash and
  volume-change sounds) struck at random times over steady tones (a random chord
  of harmonic notes): the harmonic / percussive case.
- ``speech+music``: an espeak-ng sentence over an excerpt of real game music
  (asc-music).
- ``speech+noise``: an espeak-ng sentence over ALSA's recorded noise, looped.

Each mixture is mono or stereo float64 ``[channels, n]`` with its two sources (they
add up to it), at a random level ratio; the same seed gives the same mixtures.
"""

from dataclasses import dataclass

import numpy as np

from tests import takes

KINDS = ("tones+hits", "speech+music", "speech+noise")
HITS = ("camera-shutter", "trash-empty", "audio-volume-change", "device-added")


@dataclass
class Mixture:
    name: str
    kind: str
    sources: tuple[np.ndarray, np.ndarray]  # what each layer should hold
    parts: tuple[str, str]  # their names: ("harmonic", "percussive"), ("speech", "music")...
    sample_rate: int

    @property
    def mix(self) -> np.ndarray:
        return self.sources[0] + self.sources[1]


def _fit(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` ``[ch, m]`` looped or cut to ``n`` samples."""
    reps = -(-n // x.shape[1])
    return np.tile(x, (1, reps))[:, :n]


def _chord(n: int, sr: int, rng) -> np.ndarray:
    t = np.arange(n) / sr
    out = np.zeros(n)
    root = rng.uniform(110, 330)
    for ratio in rng.choice([1, 5 / 4, 3 / 2, 2, 5 / 2, 3], size=3, replace=False):
        f0 = root * ratio
        for k in range(1, 8):
            if k * f0 < sr / 2.5:
                out += np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 6.3)) / k ** 1.5
    swell = np.clip(np.minimum(t, t[-1] - t) / 0.05, 0, 1)
    return (out * swell)[None]


def _hits(n: int, sr: int, rng) -> np.ndarray:
    out = np.zeros((1, n))
    sounds = [takes._read(takes.FREEDESKTOP / f"{name}.oga", sr).mean(0) for name in HITS]
    for start in np.sort(rng.uniform(0, n / sr - 0.3, int(rng.integers(4, 9)))):
        s = sounds[rng.integers(len(sounds))][:int(0.4 * sr)]
        i = int(start * sr)
        out[0, i:i + len(s)] += s[:n - i] * rng.uniform(0.5, 1.0)
    return out


def _speech(sr: int, rng) -> np.ndarray:
    text = takes.TEXTS[rng.integers(len(takes.TEXTS))]
    voice = takes.VOICES[rng.integers(len(takes.VOICES))]
    return takes.speak(text, voice, sr, int(rng.integers(140, 175)))


def _music(n: int, sr: int, rng) -> np.ndarray:
    tracks = sorted(takes.MUSIC.glob("*.mp3"))
    track = tracks[rng.integers(len(tracks))]
    start = rng.uniform(5, 60)
    return takes._read(track, sr, start, n / sr + 0.1)[:, :n].mean(0, keepdims=True)


def _scaled(x: np.ndarray, db: float) -> np.ndarray:
    return x * 10 ** (db / 20) / np.sqrt(np.mean(x ** 2))


def mixtures(*, sample_rate: int = 22050, seed: int = 1, per_kind: int = 3,
             kinds: tuple[str, ...] = KINDS) -> list[Mixture]:
    """``per_kind`` mixtures of each kind (mono), the second source 0 to 10 dB below the
    first (speech over music or noise: 0 to 6 dB above it)."""
    rng = np.random.default_rng(seed)
    sr = sample_rate
    out = []
    for kind in kinds:
        for i in range(per_kind):
            if kind == "tones+hits":
                n = int(rng.uniform(3, 5) * sr)
                a, b = _chord(n, sr, rng), _hits(n, sr, rng)
                ratio, parts = rng.uniform(-6, 6), ("harmonic", "percussive")
            else:
                a = _speech(sr, rng)
                n = a.shape[1]
                b = _music(n, sr, rng) if kind == "speech+music" else \
                    _fit(takes._read(takes.ALSA / "Noise.wav", sr), n)
                ratio, parts = rng.uniform(0, 6), ("speech", kind.split("+")[1])
            a, b = _scaled(a, -20), _scaled(b, -20 - ratio)
            out.append(Mixture(f"{kind} {i}", kind, (a, b), parts, sr))
    return out


def marks_for(mix: Mixture, *, n_fft: int = 2048, per_source: int = 5) -> list[dict]:
    """What a user paints to separate: up to ``per_source`` strokes per source, each
    where that source clearly dominates the other (a simulated user, who sees and hears
    which is which: chosen from the true sources). A stroke starts at the loudest such
    cell above 50 Hz at another pitch (a third of an octave away) and another time
    (0.2 s) than the earlier strokes, and follows the source as a user's pen would,
    along time (a held sound) or across frequency (a hit), for as long as it still
    dominates: up to 0.6 s or an octave either way."""
    import librosa

    sr, hop = mix.sample_rate, n_fft // 4
    power = [np.abs(librosa.stft(s[0], n_fft=n_fft, hop_length=hop)) ** 2 for s in mix.sources]
    hz = librosa.fft_frequencies(sr=sr, n_fft=n_fft)
    reach_f, near_f = int(0.3 * sr / hop), int(0.2 * sr / hop)
    marks = []
    for part in range(2):
        mine, other = power[part], power[1 - part]
        clear = (mine > 10 * other) & (mine > 1e-3 * mine.max()) & (hz[:, None] >= 50)
        score = np.where(clear, mine, 0)
        for _ in range(per_source):
            b, f = np.unravel_index(int(np.argmax(score)), score.shape)
            if score[b, f] <= 0:
                break
            f0 = f1 = f
            while f0 > max(0, f - reach_f) and clear[b, f0 - 1]:
                f0 -= 1
            while f1 < min(clear.shape[1] - 1, f + reach_f) and clear[b, f1 + 1]:
                f1 += 1
            b0 = b1 = b
            while hz[b0 - 1] > hz[b] / 2 and clear[b0 - 1, f]:
                b0 -= 1
            while b1 < len(hz) - 1 and hz[b1 + 1] < hz[b] * 2 and clear[b1 + 1, f]:
                b1 += 1
            if (f1 - f0) * hop / sr >= np.log2(hz[b1] / hz[b0]) * 0.3:
                points = [[f0 * hop / sr, float(hz[b])], [f1 * hop / sr, float(hz[b])]]
            else:
                points = [[f * hop / sr, float(hz[b0])], [f * hop / sr, float(hz[b1])]]
            marks.append({"part": part, "points": points, "radius_ms": 30.0,
                          "radius_hz": 40.0})
            lo, hi = (np.searchsorted(hz, hz[b] * 2 ** (d / 3)) for d in (-1, 1))
            score[lo:hi] = 0
            score[:, max(0, f - near_f):f + near_f] = 0
    return marks
