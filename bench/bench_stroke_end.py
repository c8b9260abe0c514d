"""A constant-Q stroke's end, in steps: how long the longest step holds the GUI
thread (it runs one step a turn of the event loop) against the whole end at once.

A 2.5 s stroke (200 dabs, one pen event each, as the GUI paints them) at 1 kHz on a
1-minute stereo 44.1 kHz constant-Q document, crossing slice edges; median of
``--runs`` strokes per brush.

    .venv/bin/python bench/bench_stroke_end.py [--runs 3]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brushes.path import StrokePoint  # noqa: E402
from brushes.registry import get_brush  # noqa: E402
from brushes.stroke import Stroke  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402
from engine.transforms import make  # noqa: E402

SR = 44100
DABS = 200


BRUSHES = {"gain": ("gain", {}), "tone": ("tone", {}),  # row: brush, parameters
           "heal, attenuate": ("heal", {}), "heal, steady": ("heal", {"mode": "steady"})}


def painted_stroke(audio: Audio, row: str) -> Stroke:
    doc = Document(audio, transform=make(SR, "cq"))
    brush_name, params = BRUSHES[row]
    brush = get_brush(brush_name)
    values, _ = brush.resolve({**params, "channel": -1}, "brush")
    stroke = Stroke(doc, brush, values, curves={}, history=None, seed=1)
    for i in range(DABS + 1):
        stroke.paint_dabs(stroke.dabs_to([StrokePoint(1.0 + 2.5 * i / DABS, 1000.0, 1.0)]))
    return stroke


def step_times(stroke: Stroke) -> list[float]:
    steps, times = stroke.ending(), []
    while True:
        start = time.perf_counter()
        try:
            next(steps)
        except StopIteration:
            times.append(time.perf_counter() - start)
            return times
        times.append(time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    t = np.arange(60 * SR) / SR  # noise, and a tone for heal's steady mode to take
    audio = Audio((0.1 * rng.standard_normal((2, 60 * SR)) + 0.1 * np.sin(2 * np.pi * 1000 * t))
                  .astype(np.float32), SR)
    print(f"{DABS}-dab stroke on a 1-minute stereo constant-Q document; median of "
          f"{args.runs}\n")
    print("| brush | steps | longest step | whole end, in steps | whole end, one call |")
    print("|---|---:|---:|---:|---:|")
    for name in BRUSHES:
        painted_stroke(audio, name).end()  # warm-up
        runs = [step_times(painted_stroke(audio, name)) for _ in range(args.runs)]
        at_once = []
        for _ in range(args.runs):
            stroke = painted_stroke(audio, name)
            start = time.perf_counter()
            stroke.end()
            at_once.append(time.perf_counter() - start)
        print(f"| {name} | {len(runs[0])} | {np.median([max(r) for r in runs]) * 1e3:.0f} ms | "
              f"{np.median([sum(r) for r in runs]) * 1e3:.0f} ms | "
              f"{np.median(at_once) * 1e3:.0f} ms |")


if __name__ == "__main__":
    main()
