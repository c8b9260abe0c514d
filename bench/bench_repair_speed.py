"""De-click and de-hum over 10 minutes of real stereo music at 44.1 kHz (the asc-music
tracks, resampled and joined) with clicks (10 a second) and a 50 Hz hum with 8
harmonics, noisereduce timed beside them in the same run (the issue's peer for
speed; de-noise and de-clip time themselves in bench_denoise.py / bench_declip.py).

    .venv/bin/python bench/bench_repair_speed.py [--runs 2] [--minutes 10]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.repair import declick, dehum  # noqa: E402
from tests import takes  # noqa: E402

SR = 44100


def material(minutes: float) -> np.ndarray:
    import soundfile as sf

    parts, n = [], int(minutes * 60 * SR)
    for track in sorted(takes.MUSIC.glob("*.mp3")):
        x, rate = sf.read(track, dtype="float64", always_2d=True)
        parts.append(takes.resample(x.T, rate, SR))
    x = np.concatenate(parts, axis=1)
    x = np.tile(x, (1, -(-n // x.shape[1])))[:, :n]
    rng = np.random.default_rng(0)
    for i in rng.integers(0, n - 8, int(10 * n / SR)):
        x[:, i:i + 3] += rng.choice([-1, 1]) * 0.3
    t = np.arange(n) / SR
    x += sum(0.01 * 0.7 ** k * np.sin(2 * np.pi * 50.1 * (k + 1) * t) for k in range(8))
    return x


def timed(fn, runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` calls of ``fn``."""
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args()
    x = material(args.minutes)
    import noisereduce

    before = os.getloadavg()[0]
    figures = {"declick": timed(lambda: declick.run(x, SR), args.runs),
               "dehum": timed(lambda: dehum.run(x, SR), args.runs),
               "noisereduce (stationary)": timed(
                   lambda: noisereduce.reduce_noise(y=x, sr=SR, stationary=True), args.runs)}
    print(f"{args.minutes:g} min stereo {SR} Hz, median of {args.runs}, load average "
          f"{before:.1f} -> {os.getloadavg()[0]:.1f} on this CPU (wall / CPU seconds): "
          + ", ".join(f"{k} {w:.1f} / {c:.1f} s" for k, (w, c) in figures.items()))


if __name__ == "__main__":
    main()
