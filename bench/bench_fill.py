"""Filling a selection, in steps: how long the longest step holds the GUI thread
(the app runs fill's steps within its turns' budget, like a stroke) against the
whole fill in one call (what the app did in one turn before, under a wait cursor).

Rectangles on a 2-minute stereo 44.1 kHz document (noise), STFT and constant-Q,
filled with gain -30 dB (a brush that acts per cell) and heal (one that paints a
stroke through the selection); median of ``--runs``.

    .venv/bin/python bench/bench_fill.py [--runs 3] [--no-write]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.session.selection import Selection, fill, filling  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402

SR = 44100
CASES = [("gain", 2, 200, 2000), ("gain", 10, 20, 200), ("gain", 10, 20, 20000),
         ("gain", 100, 20, 200), ("gain", 100, 20, 20000), ("heal", 2, 200, 2000)]
PARAMS = {"gain": {"gain_db": -30.0}, "heal": {}}


def step_times(doc: Document, sel: Selection, brush: str) -> list[float]:
    steps, times = filling(doc, sel, brush, params=PARAMS[brush]), []
    while True:
        start = time.perf_counter()
        try:
            next(steps)
        except StopIteration as done:
            times.append(time.perf_counter() - start)
            done.value.undo(doc)
            return times
        times.append(time.perf_counter() - start)


def at_once(doc: Document, sel: Selection, brush: str) -> float:
    start = time.perf_counter()
    step = fill(doc, sel, brush, params=PARAMS[brush])
    took = time.perf_counter() - start
    step.undo(doc)
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="do not update docs/")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    audio = Audio((0.1 * rng.standard_normal((2, 120 * SR))).astype(np.float32), SR)
    rows = []
    for transform in ("stft", "cq"):
        doc = Document(audio, transform=transform, device="cpu")
        for brush, seconds, lo, hi in CASES:
            sel = Selection.rect(10.0, 10.0 + seconds, f_lo=lo, f_hi=hi)
            at_once(doc, sel, brush)  # warm-up
            runs = [step_times(doc, sel, brush) for _ in range(args.runs)]
            whole = statistics.median(at_once(doc, sel, brush) for _ in range(args.runs))
            longest = statistics.median(max(r) for r in runs)
            rows.append(f"| {transform} | {brush} | {seconds} s x {lo}-{hi} Hz | {len(runs[0])} | "
                        f"{longest * 1e3:.0f} ms | "
                        f"{statistics.median(sum(r) for r in runs) * 1e3:.0f} ms | "
                        f"{whole * 1e3:.0f} ms |")
        del doc
    table = "\n".join([
        f"Filling a rectangle on a 2-minute stereo 44.1 kHz document, median of {args.runs}; "
        "2 CPUs. The app does a fill's steps within its turns' 12 ms budget (a step is "
        "never cut), so the longest step is the longest the window waits; before, the "
        "whole fill ran in one turn. Heal's longest step is its own end (the attenuation "
        "it computes over the whole stroke), as for a heal stroke.", "",
        "| transform | brush | selection | steps | longest step | all steps | one call |",
        "|---|---|---|---:|---:|---:|---:|", *rows])
    print(table)
    if not args.no_write:
        from bench.bench_engine import write_section
        from engine.runtime.device import pick_device

        write_section("bench_fill", "Filling a selection", table, pick_device("cpu"))


if __name__ == "__main__":
    main()
