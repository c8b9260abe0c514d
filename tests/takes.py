"""Clean takes from real recordings no one here wrote, for the restoration
modules' tests and ``bench/bench_repair.py``: espeak-ng voices and texts
(some with digital silence and fades around them), the recorded human voices of
ALSA's test sounds, freedesktop's recorded event sounds, and excerpts of real
game music (the asc-music package).

Every take is float64 ``[channels, n]`` at the rate asked for, peak at a random
level between -12 and -3 dBFS. :func:`clean_takes` gives the same takes for the
same seed; another seed draws other voices, texts, excerpts and levels.
"""

import functools
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-029", "en-gb-x-rp", "en-us+f3", "en-gb+f2",
          "en-us+m4", "en-gb-x-gbclan+f4")
TEXTS = ("The quick brown fox jumps over the lazy dog near the river bank.",
         "Please call Stella and ask her to bring these things with her from the store.",
         "Six spoons of fresh snow peas, five thick slabs of blue cheese, and maybe a snack.",
         "We also need a small plastic snake and a big toy frog for the kids.",
         "She can scoop these things into three red bags, and we will go meet her Wednesday.",
         "A recording engineer listens for hiss, hum and clicks before anyone else does.",
         "The old radio in the kitchen played jazz every evening until midnight.",
         "Bright sunlight filtered through the tall windows of the quiet library.")
ALSA = Path("/usr/share/sounds/alsa")
FREEDESKTOP = Path("/usr/share/sounds/freedesktop/stereo")
MUSIC = Path("/usr/share/games/asc/music")
PACKAGES = {"espeak-ng": "espeak-ng", "alsa-utils": ALSA / "Front_Center.wav",
            "sound-theme-freedesktop": FREEDESKTOP / "bell.oga",
            "asc-music": MUSIC / "frontiers.mp3"}


@dataclass
class Take:
    name: str
    kind: str  # "speech", "music" or "sound"
    samples: np.ndarray  # float64 [channels, n]
    sample_rate: int


def missing() -> str | None:
    """None when every source is installed, else the Debian packages to install."""
    gone = [pkg for pkg, what in PACKAGES.items()
            if (shutil.which(what) is None if isinstance(what, str) else not what.exists())]
    return f"apt-get install {' '.join(gone)}" if gone else None


def resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    import soxr

    if sr_in == sr_out:
        return x
    return np.atleast_2d(soxr.resample(np.atleast_2d(x).T, sr_in, sr_out, quality="VHQ").T)


def _read(path: Path, sr: int, start: float = 0.0, seconds: float | None = None) -> np.ndarray:
    return _decoded(path, sr, start, seconds).copy()


@functools.cache
def _decoded(path: Path, sr: int, start: float, seconds: float | None) -> np.ndarray:
    """A recording read and resampled once a test run (many tests draw the same takes)."""
    info = sf.info(path)
    frames = -1 if seconds is None else int(seconds * info.samplerate)
    x, rate = sf.read(path, start=int(start * info.samplerate), frames=frames,
                      dtype="float64", always_2d=True)
    return resample(x.T, rate, sr)


def speak(text: str, voice: str, sr: int, speed: int = 150) -> np.ndarray:
    return _spoken(text, voice, sr, speed).copy()


@functools.cache
def _spoken(text: str, voice: str, sr: int, speed: int) -> np.ndarray:
    """espeak-ng's take, made once a test run."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), text],
                       check=True, capture_output=True)
        x, rate = sf.read(path, dtype="float64", always_2d=True)
    return resample(x.T, rate, sr)


def _fade(n: int, seconds: float, sr: int) -> np.ndarray:
    k = min(n // 2, int(seconds * sr))
    env = np.ones(n)
    ramp = np.sin(np.linspace(0, np.pi / 2, k)) ** 2
    env[:k], env[n - k:] = ramp, ramp[::-1]
    return env


def _level(x: np.ndarray, rng) -> np.ndarray:
    return x * 10 ** (rng.uniform(-12, -3) / 20) / np.max(np.abs(x))


def clean_takes(*, sample_rate: int = 22050, seed: int = 1, speech: int = 12, music: int = 6,
                sounds: int = 2, music_seconds: float = 12.0) -> list[Take]:
    """``speech`` espeak-ng takes (one or two sentences, a random voice and speed; every
    third with 0.3-0.6 s of digital silence before it, every third with fades),
    ``sounds`` of ALSA's recorded voices and freedesktop's sounds, and ``music``
    excerpts of ``music_seconds`` from the asc-music tracks (stereo)."""
    rng = np.random.default_rng(seed)
    sr = sample_rate
    out = []
    for i in range(speech):
        texts = rng.choice(len(TEXTS), size=1 + i % 2, replace=False)
        voice = VOICES[rng.integers(len(VOICES))]
        parts = [speak(TEXTS[t], voice, sr, int(rng.integers(130, 180))) for t in texts]
        gap = np.zeros((1, int(rng.uniform(0.1, 0.3) * sr)))
        x = np.concatenate([p for part in parts for p in (part, gap)][:-1], axis=1)
        if i % 3 == 1:
            x = x * _fade(x.shape[1], rng.uniform(0.2, 0.6), sr)
        lead = int((rng.uniform(0.3, 0.6) if i % 3 == 0 else 0.05) * sr)
        x = np.concatenate([np.zeros((1, lead)), x, np.zeros((1, int(0.1 * sr)))], axis=1)
        out.append(Take(f"speech {i} ({voice})", "speech", _level(x, rng), sr))
    recorded = sorted(ALSA.glob("*.wav")) + sorted(FREEDESKTOP.glob("*.oga"))
    picks = rng.choice(len(recorded), size=min(sounds, len(recorded)), replace=False)
    for p in picks:
        x = _read(recorded[p], sr).mean(0, keepdims=True)
        x = np.concatenate([np.zeros((1, int(0.2 * sr))), x, np.zeros((1, int(0.2 * sr)))], 1)
        out.append(Take(f"sound {recorded[p].stem}", "speech" if recorded[p].parent == ALSA
                        else "sound", _level(x, rng), sr))
    tracks = sorted(MUSIC.glob("*.mp3"))
    for i in range(music):
        track = tracks[i % len(tracks)]
        length = sf.info(track).duration
        start = rng.uniform(5, max(6, length - music_seconds - 5))
        x = _read(track, sr, start, music_seconds)
        out.append(Take(f"music {track.stem} @{start:.0f}s", "music", _level(x, rng), sr))
    return out


def clicks(x: np.ndarray, rng, sample_rate: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """``x`` (mono) with clicks as the restoration issue draws them: 1-50 a second, each
    1-8 samples of random shape (each sample 0.4-1 of the click's size, 30 % of them
    flipped), random polarity and size (0.05-2 times the take's peak), anywhere past the
    first 20 ms (some land in silence or fades); and each click's (first sample, length)."""
    n = len(x)
    rate = rng.uniform(1, 50)
    y, drawn = x.copy(), []
    peak = np.abs(x).max()
    for i in np.sort(rng.integers(int(0.02 * sample_rate), n - 20,
                                  max(1, int(rate * n / sample_rate)))):
        length = int(rng.integers(1, 9))
        shape = rng.uniform(0.4, 1, length) * rng.choice([-1, 1], length, p=[0.3, 0.7])
        y[i:i + length] += rng.choice([-1, 1]) * rng.uniform(0.05, 2) * peak * shape
        drawn.append((int(i), length))
    return y, drawn
