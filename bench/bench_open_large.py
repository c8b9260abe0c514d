"""Opening a file too large to hold whole (issue 50, item 7): 2 minutes of 8 channels at
192 kHz, 24-bit (553 MB), STFT at its defaults: 2.95 GB of coefficients. Each run is a
fresh process doing what the window's worker does before the first view is drawn (open
and analyse, the whole-file overview, the playback waveform), timed, with its peak
resident memory; held whole (as before) beside held as they fit (today), in the same
run, median of ``--runs``.

    .venv/bin/python bench/bench_open_large.py [--runs 3] [--minutes 2]
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SR, CHANNELS = 192000, 8


def make(path: Path, minutes: float) -> None:
    rng = np.random.default_rng(0)
    n = round(minutes * 60 * SR)
    with sf.SoundFile(path, "w", SR, CHANNELS, subtype="PCM_24") as f:
        for s0 in range(0, n, 10 * SR):  # ten seconds at a time
            t = np.arange(s0, min(n, s0 + 10 * SR)) / SR
            f.write(np.stack([0.2 * np.sin(2 * np.pi * (200 + 100 * c) * t)
                              + 0.01 * rng.standard_normal(t.size)
                              for c in range(CHANNELS)], 1).astype(np.float32))


def child(path: str, whole: bool) -> None:
    import engine.model.document as document
    from engine.model.resynth import Resynthesizer

    if whole:
        document.HELD_ABOVE = 1 << 62
    t0 = time.perf_counter()
    doc = document.Document.open(path, device="cpu")
    doc.prepare_overview()
    Resynthesizer(doc).full()
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1] == "whole")
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "eight.wav"
        make(path, args.minutes)
        rows = {"held whole": [], "held as they fit": []}
        for _ in range(args.runs):
            for name, how in (("held whole", "whole"), ("held as they fit", "fit")):
                out = subprocess.run([sys.executable, __file__, "--child", str(path), how],
                                     capture_output=True, text=True, check=True).stdout
                rows[name].append(json.loads(out.strip().splitlines()[-1]))
    print(f"# {args.minutes:g} minutes, {CHANNELS} channels, {SR} Hz, 24-bit; median of "
          f"{args.runs}")
    print("| coefficients | to the first view, s | peak memory, GiB |")
    print("|---|---:|---:|")
    for name, runs in rows.items():
        print(f"| {name} | {statistics.median(r['seconds'] for r in runs):.1f} | "
              f"{statistics.median(r['peak'] for r in runs) / 2**30:.2f} |")


if __name__ == "__main__":
    main()
