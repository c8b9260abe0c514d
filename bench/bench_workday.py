"""What the working-day additions (issue 36) cost, on a 10-minute stereo 44.1 kHz file:
the overview lane's peaks of the whole waveform (in a thread) beside a plain
``np.abs(...).max()`` over the same samples, the frequency span a file opens on
(from the overview, in the open worker) beside building that overview, and a
project's undo history (50 strokes) packed to arrays and read back beside saving
the edited tiles alone. Median of ``--runs``.

    .venv/bin/python bench/bench_workday.py [--runs 5]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui.view.overviewlane import block_peaks  # noqa: E402
from app.gui.view.viewfit import content_top  # noqa: E402
from app.project.saved_history import keep_within, pack, unpack  # noqa: E402
from brushes.path import StrokePoint  # noqa: E402
from brushes.stroke import paint  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402
from engine.model.history import History  # noqa: E402

SR, SECONDS = 44100, 600


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    rng = np.random.default_rng(0)
    samples = (0.1 * rng.standard_normal((2, SR * SECONDS))).astype(np.float32)
    print(f"10-minute stereo file, median of {runs} runs (ms)")
    peaks = median_ms(lambda: block_peaks(samples), runs)
    print(f"overview lane peaks (block_peaks): {peaks:8.1f}")
    print(f"  peer: np.abs(samples).max():     "
          f"{median_ms(lambda: np.abs(samples).max(), runs):8.1f}")
    doc = Document(Audio(samples, SR), device="cpu")
    build = median_ms(lambda: (doc._overview.invalidate(0, doc.n_frames, bin0=0, bin1=doc.n_bins),
                               doc.prepare_overview()), runs)
    print(f"frequency span to open on:         {median_ms(lambda: content_top(doc), runs):8.1f}")
    print(f"  peer: building the overview:     {build:8.1f}")
    history = History(doc, limit_bytes=1 << 34)
    for k in range(50):
        t = 5.0 + 11 * k
        paint(doc, "gain", [StrokePoint(t, 1000.0), StrokePoint(t + 2.0, 3000.0)],
              params={"gain_db": -20.0, "radius_hz": 300.0}, history=history)
    kept = keep_within(history.steps, 50)
    manifest, arrays = pack(kept)
    megabytes = sum(a.nbytes for a in arrays.values()) / 2**20
    print(f"history of 50 strokes ({megabytes:.1f} MiB): pack "
          f"{median_ms(lambda: pack(kept), runs):8.1f}, read back "
          f"{median_ms(lambda: unpack(manifest, arrays, doc, 'bench'), runs):8.1f}")


if __name__ == "__main__":
    main()
