"""A pen event heard at once while playback runs: the event's dabs painted and its
samples spliced, as the GUI does each event, on a constant-Q document with and
without the stroke heard across the slices' seams (brushes.live_seams), and on an
STFT document (the peer).

A 2.5 s stroke (126 events, 20 ms of audio apart) at 1 kHz on a 1-minute stereo
44.1 kHz document, crossing slice edges; median, p95 and longest event over
``--runs`` strokes per row.

With ``--memory``: the memory a 60 s stroke (3000 events) holds over the same
stroke painted without playback, as the parts far from the pen keep only their
sound and as every part kept its document (``SETTLE`` out of reach).

    .venv/bin/python bench/bench_live_seams.py [--runs 3] [--memory]
"""

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brushes import live_seams  # noqa: E402
from brushes.live_seams import LiveSeams  # noqa: E402
from brushes.painter import Stroke  # noqa: E402
from brushes.registry import get_brush  # noqa: E402
from brushes.stroke import StrokePoint  # noqa: E402
from engine.audio import Audio  # noqa: E402
from engine.document import Document  # noqa: E402
from engine.resynth import Resynthesizer  # noqa: E402

SR = 44100
EVENTS = 126


def started_stroke(doc: Document, brush_name: str, live: bool) -> tuple:
    """A stroke of ``brush_name`` on ``doc`` and the resynthesizer it is spliced into,
    as the GUI starts one (heard across the seams if ``live``)."""
    synth = Resynthesizer(doc)
    synth.full()
    brush = get_brush(brush_name)
    values, _ = brush.resolve({"channel": -1}, "brush")
    stroke = Stroke(doc, brush, values, {}, None, seed=1)
    if live:
        stroke.live = LiveSeams(stroke, synth.redo)
        synth.overlay = stroke.live.blended
    return stroke, synth


def event_times(doc: Document, brush_name: str, live: bool) -> list[float]:
    stroke, synth = started_stroke(doc, brush_name, live)
    times = []
    for i in range(EVENTS):
        start = time.perf_counter()
        stroke.add([StrokePoint(1.0 + 0.02 * i, 1000.0, 1.0)])
        synth.update()
        times.append(time.perf_counter() - start)
    stroke.rollback()
    return times


def held_mib(live: bool, settle: int, seconds: int = 60) -> float:
    """Resident memory a gain stroke of ``seconds`` (an event every 20 ms) on a
    2-minute stereo constant-Q document holds at its last event over before its
    first, MiB. Run in a fresh process: a process's heap keeps what it once grew to."""
    def rss() -> float:
        gc.collect()
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20

    live_seams.SETTLE = settle
    doc = Document(test_audio(120), transform="cq", device="cpu")
    stroke, synth = started_stroke(doc, "gain", live)
    before = rss()
    for i in range(seconds * 50):
        stroke.add([StrokePoint(1.0 + 0.02 * i, 1000.0, 1.0)])
        synth.update()
    return rss() - before


def memory() -> None:
    import multiprocessing

    rows = (("without playback", False, live_seams.SETTLE),
            ("while playing, parts far from the pen keep their sound", True, live_seams.SETTLE),
            ("while playing, every part keeps its document", True, 10**9))
    print("| a 60 s gain stroke on constant-Q, stereo | memory held at its end |")
    print("|---|---:|")
    for label, live, settle in rows:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            print(f"| {label} | {pool.apply(held_mib, (live, settle)):.0f} MiB |")


def test_audio(seconds: int) -> Audio:
    """Stereo noise and a 1 kHz tone, 44.1 kHz."""
    rng = np.random.default_rng(0)
    t = np.arange(seconds * SR) / SR
    return Audio((0.1 * rng.standard_normal((2, t.size)) + 0.1 * np.sin(2 * np.pi * 1000 * t))
                 .astype(np.float32), SR)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memory", action="store_true")
    args = parser.parse_args()
    if args.memory:
        memory()
        return
    audio = test_audio(60)
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
