"""De-noise, de-click, de-hum and de-clip over 10 minutes of real stereo music at
44.1 kHz (the asc-music tracks, resampled and joined), noisereduce timed beside them
in the same run (the issue's peer for speed; bench_denoise.py also times de-noise,
on hiss). De-noise, de-click and de-hum get the music with clicks (10 a second) and
a 50 Hz hum with 8 harmonics; de-clip gets it clipped at half its peak (a master driven 6 dB into a
clipper: 0.8 % of the samples, 43,000 runs). Wall-clock and CPU seconds (this
process's, all its threads) and the load average, which on this shared 2-core
machine sets the wall clock more than the code does.

    .venv/bin/python bench/bench_repair_speed.py [--runs 2] [--minutes 10]
        [--only declip] [--before REV]

``--before REV``: de-clip as commit REV has it, timed on the same material in the
same run (alternating with ours, each in a process of its own).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.repair import declick, declip, dehum, denoise  # noqa: E402
from tests import takes  # noqa: E402

SR = 44100
CLIP_SHARE = 0.5  # de-clip's material: clipped at this share of its peak
DECLIP_AT = """import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from engine.repair import declip
x = np.load(sys.argv[2])
wall, cpu = time.perf_counter(), time.process_time()
declip.run(x, 44100)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def music(minutes: float) -> np.ndarray:
    """``minutes`` of the asc-music tracks back to back (repeated as needed), stereo."""
    import soundfile as sf

    parts, n = [], int(minutes * 60 * SR)
    for track in sorted(takes.MUSIC.glob("*.mp3")):
        x, rate = sf.read(track, dtype="float64", always_2d=True)
        parts.append(takes.resample(x.T, rate, SR))
    x = np.concatenate(parts, axis=1)
    # in rows, as a repair hands a module its samples (a column-major array slowed every
    # module: de-noise's peaks per 10 ms took 0.9 s of 2 minutes instead of 0.02 s)
    return np.ascontiguousarray(np.tile(x, (1, -(-n // x.shape[1])))[:, :n])


def material(minutes: float) -> np.ndarray:
    """The music with clicks and a hum (de-click's and de-hum's material)."""
    x = music(minutes)
    n = x.shape[1]
    rng = np.random.default_rng(0)
    for i in rng.integers(0, n - 8, int(10 * n / SR)):
        x[:, i:i + 3] += rng.choice([-1, 1]) * 0.3
    t = np.arange(n) / SR
    x += sum(0.01 * 0.7 ** k * np.sin(2 * np.pi * 50.1 * (k + 1) * t) for k in range(8))
    return x


def clipped(minutes: float) -> np.ndarray:
    """The music clipped at ``CLIP_SHARE`` of its peak (de-clip's material)."""
    x = music(minutes)
    level = CLIP_SHARE * np.max(np.abs(x))
    return np.clip(x, -level, level)


def timed(fn, runs: int) -> tuple[float, float, float]:
    """Median wall-clock and CPU seconds of ``fn()`` over ``runs`` runs, and the load
    average after them."""
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), os.getloadavg()[0]


def before(rev: str, x: np.ndarray, runs: int) -> dict[str, tuple[float, float, float]]:
    """De-clip at commit ``rev`` and ours on ``x``, alternating, each run in a fresh
    process: median wall-clock and CPU seconds of each, and the load average after."""
    from bench.bench_features import checkout

    with tempfile.TemporaryDirectory() as tmp:
        checkout(rev, Path(tmp) / "tree")
        np.save(Path(tmp) / "x.npy", x)
        trees = {f"declip at {rev}": Path(tmp) / "tree", "declip": ROOT}
        seconds: dict[str, list] = {name: [] for name in trees}
        for _ in range(runs):
            for name, tree in trees.items():
                out = subprocess.run([sys.executable, "-c", DECLIP_AT, str(tree),
                                      str(Path(tmp) / "x.npy")], check=True,
                                     capture_output=True, text=True).stdout
                seconds[name].append([float(v) for v in out.split()])
    return {name: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v),
                   os.getloadavg()[0]) for name, v in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--only", choices=("denoise", "declick", "dehum", "declip"),
                        action="append",
                        help="time only these modules (and noisereduce); all by default")
    parser.add_argument("--before", metavar="REV", help="de-clip at REV beside ours")
    args = parser.parse_args()
    only = set(args.only or ("denoise", "declick", "dehum", "declip"))
    x = material(args.minutes) if only & {"denoise", "declick", "dehum"} else None
    import noisereduce

    work = {"denoise": lambda: denoise.run(x, SR), "declick": lambda: declick.run(x, SR),
            "dehum": lambda: dehum.run(x, SR)}
    figures = {name: timed(fn, args.runs) for name, fn in work.items() if name in only}
    if "declip" in only:
        y = clipped(args.minutes)
        figures.update(before(args.before, y, args.runs) if args.before else
                       {"declip": timed(lambda: declip.run(y, SR), args.runs)})
        x = y if x is None else x
    figures["noisereduce (stationary)"] = timed(
        lambda: noisereduce.reduce_noise(y=x, sr=SR, stationary=True), args.runs)
    print(f"{args.minutes:g} min stereo {SR} Hz, median of {args.runs} on this 2-core CPU "
          "(wall-clock, CPU, load average after): " + ", ".join(
              f"{k} {wall:.1f} s ({cpu:.1f} s CPU, load {load:.1f})"
              for k, (wall, cpu, load) in figures.items()))


if __name__ == "__main__":
    main()
