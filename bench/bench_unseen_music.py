"""Every restoration module, at its defaults, on clean music the project never tuned on:
12 s excerpts of Debian's drascula-music, hyperrogue-music and frozen-bubble-data
(mixed to 22.05 kHz stereo; a random start per excerpt, the level drawn -12 to -3
dBFS), then the same excerpts under white, pink or brown hiss at 10-20 dB SNR through
de-noise and voice. A module that finds nothing must leave the excerpt bit for bit;
per module: how many it changed and the worst SI-SDR of a change against the clean
excerpt; under hiss, how many de-noise or voice left worse than their input.

    apt-get install drascula-music hyperrogue-music frozen-bubble-data
    .venv/bin/python bench/bench_unseen_music.py [--per-track 2] [--seed 7]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_denoise import COLOURS, hiss  # noqa: E402
from engine.measure.metrics import si_sdr_db  # noqa: E402
from engine.repair import declick, declip, dehum, denoise, voice  # noqa: E402
from tests.takes import resample  # noqa: E402

SR = 22050
SECONDS = 12.0
SOURCES = (Path("/usr/share/scummvm/drascula/audio"), Path("/usr/share/hyperrogue/music"),
           Path("/usr/share/games/frozen-bubble/snd"))
MODULES = {"denoise": denoise.run, "voice": voice.run, "declick": declick.run,
           "dehum": dehum.run, "declip": declip.run}


def tracks() -> list[Path]:
    """The tracks of the three packages at least ``SECONDS`` + 2 s long (frozen-bubble:
    its three music files, not its effects)."""
    found = [p for folder in SOURCES for p in sorted(folder.glob("*.ogg"))
             if folder.name != "snd" or "zik" in p.name]
    return [p for p in found if sf.info(p).duration >= SECONDS + 2]


def excerpts(per_track: int, seed: int):
    """(name, samples ``[2, n]`` at ``SR``) for ``per_track`` random starts a track."""
    rng = np.random.default_rng(seed)
    for path in tracks():
        info = sf.info(path)
        for start in rng.uniform(1, info.duration - SECONDS - 1, per_track):
            x, rate = sf.read(path, start=int(start * info.samplerate),
                              frames=int(SECONDS * info.samplerate), dtype="float64",
                              always_2d=True)
            x = resample(np.resize(x.T, (2, x.shape[0])), rate, SR)
            yield f"{path.stem}@{start:.0f}s", x * 10 ** (rng.uniform(-12, -3) / 20) / \
                max(np.abs(x).max(), 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-track", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if not tracks():
        sys.exit("bench_unseen_music: apt-get install drascula-music hyperrogue-music "
                 "frozen-bubble-data")
    rng = np.random.default_rng(args.seed + 1)
    changed = {m: [] for m in MODULES}
    worse = {"denoise": [], "voice": []}
    count = 0
    for name, x in excerpts(args.per_track, args.seed):
        count += 1
        line = [name]
        for module, run in MODULES.items():
            y = run(x, SR).samples
            if not np.array_equal(y, x):
                changed[module].append(si_sdr_db(x, y))
                line.append(f"{module} {changed[module][-1]:.1f} dB")
        kind, snr = COLOURS[rng.integers(3)], rng.uniform(10, 20)
        noisy = x + np.sqrt(np.mean(x ** 2)) * 10 ** (-snr / 20) * hiss(kind, x.shape, rng, SR)
        before = si_sdr_db(x, noisy)
        for module in worse:
            after = si_sdr_db(x, MODULES[module](noisy, SR).samples)
            if after < before - 0.05:
                worse[module].append(after - before)
                line.append(f"{module} under {kind} hiss at {snr:.0f} dB: {after - before:+.2f} dB")
        print("  ".join(line), flush=True)
    print(f"\n{count} clean excerpts at {SR} Hz:")
    for module, got in changed.items():
        print(f"- {module}: changed {len(got)}" + (f", worst {min(got):.1f} dB SI-SDR against "
                                                   f"the excerpt" if got else ""))
    for module, got in worse.items():
        print(f"- {module} under hiss: {len(got)} worse than the input"
              + (f", worst {min(got):+.2f} dB" if got else ""))


if __name__ == "__main__":
    main()
