"""Brush figures: per-dab latency of every brush on a 1-minute and a 10-minute
stereo 44.1 kHz document, and a 200-dab stroke end to end.

    .venv/bin/python bench/bench_brushes.py [--runs 5] [--device cpu] [--transform stft|cq]
                                            [--no-write]

A dab is 50 ms x 200 Hz (hardness 0.5). Each brush paints a stroke of 200
events with one dab each; p50/p95 are over those dabs, and the median of
``--runs`` strokes is reported. The end-to-end stroke adds, after every
event, the RGBA render of the event's dirty rect and the incremental
resynthesis, as the GUI does while dragging. Writes its table into
docs/benchmarks.md between the "bench_brushes" markers.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from brushes.path import StrokePoint  # noqa: E402
from brushes.registry import BRUSHES  # noqa: E402
from brushes.stroke import Stroke  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402
from engine.model.resynth import Resynthesizer  # noqa: E402
from engine.runtime.device import describe  # noqa: E402
from engine.transforms import make  # noqa: E402

SR = 44100
DAB = {"radius_ms": 50.0, "radius_hz": 200.0, "hardness": 0.5, "spacing": 0.25}
TARGET_MS = {"gain": 3, "blur": 3, "restore": 3, "clone": 3, "warp": 8, "filter": 8, "heal": 8,
             "tone": 8}
EXTRA = {"harmonic": {"harmonics": 4, "inner": "gain"}}


def make_doc(minutes: float, device, transform: str = "stft") -> Document:
    rng = np.random.default_rng(0)
    n = int(minutes * 60 * SR)
    t = np.arange(n, dtype=np.float32) / SR
    x = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.3 * np.sin(2 * np.pi * 1000 * t)])
    x += rng.normal(0, 0.01, x.shape).astype(np.float32)
    return Document(Audio(x.astype(np.float32), SR), device=device, transform=transform)


def stroke_points(count: int, start: float, freq: float) -> list[StrokePoint]:
    step = DAB["spacing"] * DAB["radius_ms"] / 1000  # one dab per event
    return [StrokePoint(start + i * step, freq + 300 * np.sin(i / 15)) for i in range(count)]


def dab_times(doc: Document, brush: str, start: float, sync) -> list[float]:
    b = BRUSHES[brush]
    params, _ = b.resolve({**DAB, **EXTRA.get(brush, {})}, brush)
    stroke = Stroke(doc, b, params, curves={}, history=None)
    times = []
    for point in stroke_points(201, start, 1500.0):
        t0 = time.perf_counter()
        stroke.add([point])
        sync()
        times.append(time.perf_counter() - t0)
    return times[1:]  # the first event of a stroke is its start point alone


def end_to_end(doc: Document, synth: Resynthesizer, start: float, sync) -> float:
    b = BRUSHES["gain"]
    params, _ = b.resolve({**DAB, "gain_db": -20.0}, "gain")
    t0 = time.perf_counter()
    stroke = Stroke(doc, b, params, curves={}, history=None)
    for point in stroke_points(200, start, 3000.0):
        rect = stroke.add([point])
        if rect is not None:
            doc.render(rect)
            synth.update()
    stroke.end()
    sync()
    return time.perf_counter() - t0


def main() -> None:
    from bench.bench_engine import parse

    parser = argparse.ArgumentParser()
    parser.add_argument("--transform", choices=("stft", "cq"), default="stft")
    args, device, sync = parse(parser)

    results, e2e, peer = {}, {}, {}
    for minutes in (1, 10):
        doc = make_doc(minutes, device, args.transform)
        synth = Resynthesizer(doc)
        synth.full()
        for brush in BRUSHES:
            p50s, p95s = [], []
            dab_times(doc, brush, 45.0, sync)  # warm-up, untimed: caches, plans, first pages
            for run in range(args.runs):
                times = np.array(dab_times(doc, brush, 5.0 + run * 3.0, sync)) * 1000
                p50s.append(np.percentile(times, 50))
                p95s.append(np.percentile(times, 95))
            results[brush, minutes] = (statistics.median(p50s), statistics.median(p95s))
        e2e[minutes] = statistics.median(end_to_end(doc, synth, 20.0 + run * 3.0, sync)
                                         for run in range(args.runs)) * 1000
        peer[minutes] = full_istft_peer(doc, args.runs) * 1000
        del doc, synth

    table = format_table(results, e2e, peer, device, args)
    print(table)
    if not args.no_write:
        from bench.bench_engine import write_section

        marker = "bench_brushes" if args.transform == "stft" else "bench_brushes_cq"
        title = "Brushes" if args.transform == "stft" else "Brushes on a constant-Q document"
        write_section(marker, f"{title} ({device.type})", table, device)


def full_istft_peer(doc: Document, runs: int) -> float:
    """What hearing one edit costs without incremental resynthesis: librosa's
    istft of the whole document (median seconds)."""
    import librosa

    coeffs = doc.coefficients(0, doc.n_frames).cpu().numpy()
    times = []
    for _ in range(min(runs, 3)):
        t0 = time.perf_counter()
        librosa.istft(coeffs, hop_length=doc.transform.hop, length=doc.length)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def format_table(results, e2e, peer, device, args) -> str:
    t = make(SR, args.transform)
    analysis = "n_fft 2048, hop 512" if args.transform == "stft" else \
        f"sliced constant-Q, {t.bpo} bins per octave, {t.n_bins} bins, hop {t.hop}"
    head = (f"Stereo 44.1 kHz, {analysis}; dab 50 ms x 200 Hz, hardness 0.5; "
            f"p50/p95 over 200 dabs, median of {args.runs} strokes after one untimed; "
            f"device {describe(device)}, {torch.get_num_threads()} threads, "
            f"torch {torch.__version__}")
    lines = [head, "", "| brush | 1 min p50 | 1 min p95 | 10 min p50 | 10 min p95 | "
             "target p95 | met |", "|---|---:|---:|---:|---:|---:|:-:|"]
    for brush in BRUSHES:
        (a50, a95), (b50, b95) = results[brush, 1], results[brush, 10]
        target = TARGET_MS.get(brush)
        met = "-" if target is None else ("yes" if max(a95, b95) <= target else "no")
        lines.append(f"| {brush} | {a50:.2f} ms | {a95:.2f} ms | {b50:.2f} ms | {b95:.2f} ms | "
                     f"{f'{target} ms' if target else '-'} | {met} |")
    lines += ["", "| 200-dab gain stroke, render + incremental resynthesis after every event | "
              "1 min | 10 min | target | met |", "|---|---:|---:|---:|:-:|",
              f"| end to end | {e2e[1]:.0f} ms | {e2e[10]:.0f} ms | 400 ms | "
              f"{'yes' if max(e2e.values()) <= 400 else 'no'} |",
              f"| peer: librosa.istft of the whole file, once per edit | {peer[1]:.0f} ms | "
              f"{peer[10]:.0f} ms | | |"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
