"""De-hum on buzz beside the plain tool, a notch comb told the frequency.

    .venv/bin/python bench/bench_dehum_buzz.py [--seeds 1 2]

The clean takes of tests/takes.py (10 speech, 2 recorded sounds, 4 music excerpts
mixed to mono, 22.05 kHz) per seed, each under three hums drawn per take
(tests/engine/test_repair_buzz.py): ``odd`` (10-15 strong odd harmonics, the even ones at
most a tenth), ``rectified`` (10-15 strong even ones: a rectifier's) and
``decaying`` (4-12 harmonics falling 0.75 each, as bench_repair's hum); 50 or 60 Hz,
up to 0.4 Hz off and drifting 0.1 Hz, 15-35 dB under the take's peak. Repaired by
``engine.repair.dehum`` and by a notch comb (scipy iirnotch, Q 30, forward and
back) at every harmonic of the true mean fundamental up to the highest drawn.
Judged against the clean take: PESQ-WB and STOI (speech), SI-SDR (all). Prints a
markdown table: median / worst take per method, and how many takes de-hum left
worse than the input or than the comb.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.measure.metrics import si_sdr_db  # noqa: E402
from engine.repair import dehum  # noqa: E402
from tests import material, takes  # noqa: E402
from tests.engine.test_repair_buzz import SR, buzzed, notch_comb  # noqa: E402

KINDS = ("odd", "rectified", "decaying")
TOLERANCE = {"pesq": 0.05, "stoi": 0.005, "si_sdr": 0.1}


def scores(clean: np.ndarray, test: np.ndarray, speech: bool) -> dict:
    return material.scores(clean, test) if speech else {"si_sdr": si_sdr_db(clean, test)}


def run(seeds) -> dict:
    rows = {kind: [] for kind in KINDS}
    for seed in seeds:
        rng = np.random.default_rng(seed + 100)
        for take in takes.clean_takes(sample_rate=SR, seed=seed, speech=10, sounds=2, music=4):
            x = take.samples.mean(0)
            speech = take.kind == "speech"
            for kind in KINDS:
                y, f0, top = buzzed(x, rng, kind)
                out = dehum.run(y[None], SR)
                rows[kind].append({"input": scores(x, y, speech),
                                   "de-hum": scores(x, out.samples[0], speech),
                                   "notch comb": scores(x, notch_comb(y, SR, f0=f0, top=top),
                                                        speech)})
                print(seed, take.name, kind, {m: {k: round(v, 2) for k, v in s.items()}
                                              for m, s in rows[kind][-1].items()},
                      out.summary or "nothing found", flush=True)
    return rows


def summary_table(rows: dict, methods: tuple, ours: str, against: tuple) -> str:
    """Markdown: per disturbance and measure, median / worst of each method; then how
    many takes ``ours`` left worse than each of ``against`` by any measure (beyond
    ``TOLERANCE``)."""
    lines = ["| disturbance | takes | measure | " + " | ".join(methods) + " |",
             "|---|---:|---|" + "---:|" * len(methods)]
    for kind, results in rows.items():
        for measure in ("pesq", "stoi", "si_sdr"):
            cells = []
            for m in methods:
                vals = [r[m][measure] for r in results if measure in r[m]]
                cells.append(f"{np.median(vals):.2f} / {min(vals):.2f}" if vals else "-")
            count = sum(measure in r["input"] for r in results)
            lines.append(f"| {kind} | {count} | {measure} | " + " | ".join(cells) + " |")
        for other in against:
            worse = sum(any(r[ours][k] < r[other][k] - tol for k, tol in TOLERANCE.items()
                            if k in r[ours]) for r in results)
            lines.append(f"| {kind} | {len(results)} | {ours} worse than {other} | "
                         + " | ".join(str(worse) if m == ours else "" for m in methods) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    missing = takes.missing() or material.available()
    if missing:
        sys.exit(f"bench_dehum_buzz: {missing}")
    rows = run(args.seeds)
    print(summary_table(rows, ("input", "de-hum", "notch comb"), "de-hum",
                        ("input", "notch comb")))


if __name__ == "__main__":
    main()
