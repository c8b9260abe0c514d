"""Amplifying analysis settings: engine.cost's estimate against what opening a
document and resynthesizing it in full takes (each a fresh process: wall time and
peak RSS, less the process's own start), and the full resynthesis as it was chunked
before issue 37 (FULL_CHUNK_FRAMES * hop samples a chunk) beside it, in the same run.

    .venv/bin/python bench/bench_cost.py [--runs 1] [--old]
"""

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_process import measure  # noqa: E402

CASES = [(16384, 1, 1.0, 1), (8192, 4, 5.0, 2), (16384, 16, 20.0, 1)]  # n_fft, hop, s, ch
RUN = """
import sys, numpy as np
from engine import resynth
from engine.audio import Audio
from engine.document import Document
n_fft, hop, seconds, channels, old = (float(a) for a in sys.argv[1:])
if old:
    resynth.full_chunk = lambda t: resynth.FULL_CHUNK_FRAMES * t.hop
x = np.random.default_rng(0).uniform(-0.3, 0.3, (int(channels), int(44100 * seconds)))
doc = Document(Audio(x.astype(np.float32), 44100), n_fft=int(n_fft), hop=int(hop), device="cpu")
resynth.Resynthesizer(doc).full()
"""
START = "import numpy, torch, engine.document"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--old", action="store_true", help="also the chunking before issue 37")
    args = ap.parse_args()
    import numpy as np

    from engine.audio import Audio
    from engine.cost import estimate
    from engine.document import check_fits
    from engine.transforms import make

    base = statistics.median(measure([sys.executable, "-c", START])[1] for _ in range(3))
    print(f"process start: {base:.2f} GiB (subtracted)")
    print("| n_fft / hop, audio | estimate | measured | before issue 37 |")
    print("|---|---|---|---|")
    for n_fft, hop, seconds, channels in CASES:
        audio = Audio(np.zeros((channels, int(44100 * seconds)), np.float32), 44100)
        t = make(44100, "stft", "cpu", n_fft=n_fft, hop=hop)
        cost = estimate(t, channels, audio.frames, check_fits(audio, t))
        row = []
        for old in ([0, 1] if args.old else [0]):
            runs = [measure([sys.executable, "-c", RUN, *map(str, (n_fft, hop, seconds,
                                                                   channels, old))])
                    for _ in range(args.runs)]
            row.append(f"{statistics.median(r[0] for r in runs):.1f} s, "
                       f"{statistics.median(r[1] for r in runs) - base:.2f} GiB")
        print(f"| {n_fft} / {hop}, {seconds:g} s x {channels} | {cost.seconds:.1f} s, "
              f"{cost.bytes / 2**30:.2f} GiB | {' | '.join(row)}{'' if args.old else ' | -'} |",
              flush=True)


if __name__ == "__main__":
    main()
