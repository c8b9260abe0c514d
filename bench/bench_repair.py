"""Repair figures on real recordings: each disturbance of tests/material.py, the
matching preset painted as a user would on an STFT and on a constant-Q
document, beside a plain filter fix, judged against the clean take by PESQ-WB,
STOI and SI-SDR.

    .venv/bin/python bench/bench_repair.py [--no-write]

The metrics are deterministic (fixed material, fixed seed); the seconds are
the time to paint the strokes and resynthesize, one run. Writes its table into
docs/benchmarks.md between the "bench_repair" markers.
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.device import pick_device  # noqa: E402
from tests import material  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    missing = material.available()
    if missing:
        sys.exit(f"bench_repair: {missing}")
    clean = material.clean_take()
    rows = []
    for case in material.cases(clean):
        row = {"input": material.scores(clean, case.disturbed),
               "filter": material.scores(clean, material.filter_fix(case))}
        for transform in ("stft", "cq"):
            t0 = time.perf_counter()
            repaired = material.repaired(case, transform)
            row[f"{transform} s"] = time.perf_counter() - t0
            row[transform] = material.scores(clean, repaired)
        rows.append((case, row))
        print(case.name, {k: v if isinstance(v, float) else {m: round(x, 2) for m, x in v.items()}
                          for k, v in row.items()})
    table = format_table(rows, len(clean) / material.SR)
    print(table)
    if not args.no_write:
        from bench.bench_engine import write_section

        write_section("bench_repair", "Repairs on real recordings (cpu)", table,
                      pick_device("cpu"))


def format_table(rows, seconds: float) -> str:
    lines = [f"Clean take: espeak-ng (two sentences) + ALSA's recorded voice, {seconds:.1f} s at "
             f"{material.SR} Hz. Each cell: PESQ-WB / STOI / SI-SDR (dB) against the clean take "
             "(higher is better). Ours: the preset painted as a user would (one stroke along a "
             "whistle or hum, one vertical stroke per click, a patch over a burst or bleep); "
             "STFT n_fft 2048 / hop 512, constant-Q 48 bins per octave from 32.7 Hz. "
             "Better than both input and filter by PESQ: **bold**.", "",
             "| disturbance | preset | input | ours, STFT | ours, constant-Q | plain filter | "
             "filter |", "|---|---|---:|---:|---:|---:|---|"]

    def cell(s, bold=False):
        text = f"{s['pesq']:.2f} / {s['stoi']:.3f} / {s['si_sdr']:.1f}"
        return f"**{text}**" if bold else text

    for case, row in rows:
        preset = ", ".join(sorted({p for p, _, _ in case.strokes}))
        best = max(row["input"]["pesq"], row["filter"]["pesq"])
        lines.append(f"| {case.name} | {preset} | {cell(row['input'])} | "
                     f"{cell(row['stft'], row['stft']['pesq'] > best)} | "
                     f"{cell(row['cq'], row['cq']['pesq'] > best)} | {cell(row['filter'])} | "
                     f"{case.filter_fix} |")
    lines += ["", "Time to paint and resynthesize (one run): " + ", ".join(
        f"{case.name} {row['stft s']:.1f} s / {row['cq s']:.1f} s" for case, row in rows) +
        " (STFT / constant-Q)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
