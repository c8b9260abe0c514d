"""Amplifying analysis settings: engine.runtime.cost's estimate against what opening a
document and resynthesizing it in full takes (a fresh process each: wall time and
peak RSS, less the process's own start); and, A/B in one process (median of 3,
alternating), the full resynthesis chunked as before issue 37 (FULL_CHUNK_FRAMES * hop
samples a chunk) and as now.

    .venv/bin/python bench/bench_cost.py [--runs 1] [--ab-seconds 2]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_process import measure  # noqa: E402

CASES = [(16384, 1, 1.0, 1), (8192, 4, 5.0, 2), (16384, 16, 20.0, 1)]  # n_fft, hop, s, ch
RUN = """
import sys, numpy as np
from engine.model import resynth
from engine.io.audio import Audio
from engine.model.document import Document
n_fft, hop, seconds, channels = (float(a) for a in sys.argv[1:])
x = np.random.default_rng(0).uniform(-0.3, 0.3, (int(channels), int(44100 * seconds)))
doc = Document(Audio(x.astype(np.float32), 44100), n_fft=int(n_fft), hop=int(hop), device="cpu")
resynth.Resynthesizer(doc).full()
"""
START = "import numpy, torch, engine.model.document"


def chunking_ab(n_fft: int, hop: int, seconds: float, channels: int) -> tuple[float, float]:
    """Median seconds of a full resynthesis chunked as before and as now."""
    import numpy as np

    from engine.io.audio import Audio
    from engine.model import resynth
    from engine.model.document import Document
    from engine.runtime import cost

    now = resynth.full_chunk
    ways = {"before": lambda t: cost.FULL_CHUNK_FRAMES * t.hop, "now": now}
    x = np.random.default_rng(0).uniform(-0.3, 0.3, (channels, int(44100 * seconds)))
    doc = Document(Audio(x.astype(np.float32), 44100), n_fft=n_fft, hop=hop, device="cpu")
    took: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for _ in range(3):
            for name, chunk in ways.items():
                resynth.full_chunk = chunk
                t0 = time.perf_counter()
                resynth.Resynthesizer(doc).full()
                took[name].append(time.perf_counter() - t0)
    finally:
        resynth.full_chunk = now
    return statistics.median(took["before"]), statistics.median(took["now"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--ab-seconds", type=float, default=2.0, help="audio of the A/B")
    args = ap.parse_args()
    import numpy as np

    from engine.io.audio import Audio
    from engine.model.document import check_fits
    from engine.runtime.cost import estimate
    from engine.transforms import make

    base = statistics.median(measure([sys.executable, "-c", START])[1] for _ in range(3))
    print(f"process start: {base:.2f} GiB (subtracted)")
    print(f"| n_fft / hop, audio | estimate | measured | full resynthesis of "
          f"{args.ab_seconds:g} s, before / now |")
    print("|---|---|---|---|")
    for n_fft, hop, seconds, channels in CASES:
        audio = Audio(np.zeros((channels, int(44100 * seconds)), np.float32), 44100)
        t = make(44100, "stft", "cpu", n_fft=n_fft, hop=hop)
        cost = estimate(t, channels, frames=audio.frames, resident=check_fits(audio, t))
        runs = [measure([sys.executable, "-c", RUN, *map(str, (n_fft, hop, seconds, channels))])
                for _ in range(args.runs)]
        before, now = chunking_ab(n_fft, hop, min(seconds, args.ab_seconds), channels)
        print(f"| {n_fft} / {hop}, {seconds:g} s x {channels} | {cost.seconds:.1f} s, "
              f"{cost.bytes / 2**30:.2f} GiB | {statistics.median(r[0] for r in runs):.1f} s, "
              f"{statistics.median(r[1] for r in runs) - base:.2f} GiB | {before:.1f} s / "
              f"{now:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
