"""Layer figures: what a 10-minute stereo document holds with one layer (today's) and
with four (three from an HPSS unmix, one new), and what painting costs on each: the
per-dab latency of the gain brush (p50/p95 over 200 dabs, median of ``--runs``
strokes) and a 200-dab stroke end to end (render and incremental resynthesis after
every event, as bench_brushes), on an unmixed layer; and what a whole-document
change of the layers costs (a mute: the mix recomputed everywhere).

    .venv/bin/python bench/bench_layers.py [--runs 3] [--minutes 10]
"""

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.session import layer_ops as ops  # noqa: E402
from app.session.unmixing import apply, unmixed  # noqa: E402
from bench.bench_brushes import dab_times, end_to_end, make_doc  # noqa: E402
from engine.model.resynth import Resynthesizer  # noqa: E402


def held(doc, synth) -> int:
    """The document's tensors (mix, layers, recording) and its resynthesized waveform."""
    return doc.nbytes + synth.waveform().nbytes


def painting(doc, synth, runs: int) -> tuple[float, float, float]:
    """Gain dab p50, p95 (ms) and the 200-dab stroke end to end (ms)."""
    dab_times(doc, "gain", 45.0, lambda: None)  # warm-up, untimed
    p50s, p95s, ends = [], [], []
    for run in range(runs):
        times = np.array(dab_times(doc, "gain", 5.0 + run * 3.0, lambda: None)) * 1000
        p50s.append(np.percentile(times, 50))
        p95s.append(np.percentile(times, 95))
        ends.append(end_to_end(doc, synth, 20.0 + run * 3.0, lambda: None) * 1000)
    return statistics.median(p50s), statistics.median(p95s), statistics.median(ends)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    doc = make_doc(args.minutes, "cpu")
    synth = Resynthesizer(doc)
    synth.full()
    one = held(doc, synth)
    plain = painting(doc, synth, args.runs)
    t0 = time.perf_counter()
    done = unmixed(doc, "hpss")  # a worker's part
    unmix_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    apply(doc, done)  # the GUI thread's: the layers set, the mix recomputed
    apply_s = time.perf_counter() - t0
    ops.new_layer(doc)
    ops.activate(doc, doc.layers.state.layers[1].id)  # the percussive part: mask x parent
    synth.update()
    four = held(doc, synth)
    layered = painting(doc, synth, args.runs)
    t0 = time.perf_counter()
    ops.set_mixing(doc, doc.layers.state.layers[0].id, mute=True)
    mute_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    synth.update()
    resynth_s = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    rows = [f"{args.minutes:g}-minute stereo 44.1 kHz, n_fft 2048, hop 512, cpu, "
            f"load {load:.1f} before the run (2 cores); gain dab 50 ms x 200 Hz, "
            f"median of {args.runs} strokes", "",
            "| | one layer | four layers (three from hpss, one new) | ratio |",
            "|---|---:|---:|---:|",
            f"| held: coefficients, layers, recording, waveform | {one / 2**30:.2f} GiB | "
            f"{four / 2**30:.2f} GiB | {four / one:.2f}x (target <= 2.5x) |",
            f"| gain dab p50 | {plain[0]:.2f} ms | {layered[0]:.2f} ms | "
            f"{layered[0] / plain[0]:.2f}x |",
            f"| gain dab p95 (target 3 ms) | {plain[1]:.2f} ms | {layered[1]:.2f} ms | "
            f"{layered[1] / plain[1]:.2f}x |",
            f"| 200-dab stroke end to end (target 400 ms) | {plain[2]:.0f} ms | "
            f"{layered[2]:.0f} ms | {layered[2] / plain[2]:.2f}x |",
            "", f"- the hpss unmix: its masks {unmix_s:.1f} s (a worker), the layers made and "
            f"the mix recomputed {apply_s:.2f} s (the GUI thread)",
            f"- muting a whole-document layer: mix recomputed in {mute_s:.2f} s, "
            f"then the whole file resynthesized in {resynth_s:.2f} s",
            f"- peak RSS of the run {rss:.2f} GiB"]
    print("\n".join(rows))


if __name__ == "__main__":
    main()
