"""A pen event heard at once while playback runs: the event's dabs painted and its
samples spliced, as the GUI does each event, on a constant-Q document with and
without the stroke heard across the slices' seams (brushes.live_seams), and on an
STFT document (the peer).

A 2.5 s stroke (126 events, 20 ms of audio apart) at 1 kHz on a 1-minute stereo
44.1 kHz document, crossing slice edges; median, p95 and longest event over
``--runs`` strokes per row.

    .venv/bin/python bench/bench_live_seams.py [--runs 3]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brushes.live_seams import LiveSeams  # noqa: E402
from brushes.painter import Stroke  # noqa: E402
from brushes.registry import get_brush  # noqa: E402
from brushes.stroke import StrokePoint  # noqa: E402
from engine.audio import Audio  # noqa: E402
from engine.document import Document  # noqa: E402
from engine.resynth import Resynthesizer  # noqa: E402

SR = 44100
EVENTS = 126


def event_times(doc: Document, brush_name: str, live: bool) -> list[float]:
    synth = Resynthesizer(doc)
    synth.full()
    brush = get_brush(brush_name)
    values, _ = brush.resolve({"channel": -1}, "brush")
    stroke = Stroke(doc, brush, values, {}, None, seed=1)
    if live:
        stroke.live = LiveSeams(stroke, synth.redo)
        synth.overlay = stroke.live.blended
    times = []
    for i in range(EVENTS):
        start = time.perf_counter()
        stroke.add([StrokePoint(1.0 + 0.02 * i, 1000.0, 1.0)])
        synth.update()
        times.append(time.perf_counter() - start)
    stroke.rollback()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    t = np.arange(60 * SR) / SR
    audio = Audio((0.1 * rng.standard_normal((2, 60 * SR)) + 0.1 * np.sin(2 * np.pi * 1000 * t))
                  .astype(np.float32), SR)
    docs = {kind: Document(audio, transform=kind, device="cpu") for kind in ("stft", "cq")}
    print(f"one pen event painted and spliced ({EVENTS} events, 20 ms apart, on a 1-minute "
          f"stereo document); median of {args.runs} strokes\n")
    print("| brush | document | median | p95 | longest |")
    print("|---|---|---:|---:|---:|")
    for brush in ("gain", "tone"):
        for kind, live in (("stft", False), ("cq", False), ("cq", True)):
            event_times(docs[kind], brush, live)  # warm-up
            runs = [np.array(event_times(docs[kind], brush, live)) for _ in range(args.runs)]
            label = {"stft": "STFT", "cq": "constant-Q"}[kind] + (", across seams" if live else "")
            figures = [np.median([np.percentile(r, q) for r in runs]) * 1e3 for q in (50, 95, 100)]
            print(f"| {brush} | {label} | " + " | ".join(f"{v:.1f} ms" for v in figures) + " |")


if __name__ == "__main__":
    main()
