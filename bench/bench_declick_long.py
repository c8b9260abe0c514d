"""De-click on long and loud clicks at 44.1 kHz (issue 50, item 10): the clean takes of
tests/takes.py (espeak-ng speech and asc-music excerpts) with clicks drawn by
:func:`draw_long`: 3-8 a second, at least 1 ms apart, each 1-19 samples long, its peak
anywhere from -40 dBFS (quiet) to -8 dBFS (loud), half of them jagged (each sample
0.4-1 of the click's size, 30 % flipped, as tests.takes.clicks draws them) and half
smooth (a half-sine, modulated by a slow cosine), random polarity.

Per click: found (a repair overlaps it), by length (1-4, 5-9, 10-19 samples), by level
and by kind; per take: recall, and clicks found on the clean take (false finds) with
the clean take's SI-SDR after the module; and a sensitivity sweep (0-10) of the events
found on the clicked takes and on the clean takes, summed over the takes. Median and
worst take over the seeds.

    .venv/bin/python bench/bench_declick_long.py [--seeds 1 2 3] [--speech 4] [--music 3]
        [--sweep 0 1 2 ... 10] [--no-write]

It rewrites its section of docs/benchmarks.md.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import takes  # noqa: E402

SR = 44100
LENGTHS = ((1, 4), (5, 9), (10, 19))
LEVELS = ((-40, -30), (-30, -20), (-20, -14), (-14, -8))  # dBFS of a click's peak


def draw_long(x: np.ndarray, rng,
              sr: int) -> tuple[np.ndarray, list[tuple[int, int, float, bool]]]:
    """``x`` (mono) with clicks as the module notes say, and each one's (first sample,
    length, peak in dBFS, whether it is smooth)."""
    n = len(x)
    y, drawn = x.copy(), []
    gap = max(40, round(0.001 * sr))
    count = max(1, int(rng.uniform(3, 8) * n / sr))
    slots = np.arange(int(0.02 * sr), n - 2 * gap, gap)
    for i in np.sort(rng.choice(slots, min(count, len(slots)), replace=False)):
        length = int(rng.integers(1, 20))
        level = float(rng.uniform(-40, -8))
        smooth = rng.random() >= 0.5
        if not smooth:
            shape = rng.uniform(0.4, 1, length) * rng.choice([-1, 1], length, p=[0.3, 0.7])
        else:
            t = np.arange(length) + 0.5
            shape = np.sin(np.pi * t / length) * np.cos(2 * np.pi * rng.uniform(0, 0.25) * t)
        shape = shape / np.abs(shape).max()
        y[i:i + length] += rng.choice([-1, 1]) * 10 ** (level / 20) * shape
        drawn.append((int(i), length, level, bool(smooth)))
    return y, drawn


def _found(events, drawn, n: int) -> list[bool]:
    mask = np.zeros(n, bool)
    for e in events:
        mask[e.start:e.start + e.length] = True
    return [bool(mask[i:i + length].any()) for i, length, *_ in drawn]


def run_seed(seed: int, speech: int, music: int, sweep: list[float]):
    from engine.measure.metrics import si_sdr_db
    from engine.repair import declick

    rng = np.random.default_rng(5000 + seed)
    records, rows = [], []
    for take in takes.clean_takes(sample_rate=SR, seed=seed, speech=speech, music=music,
                                  sounds=0):
        x = take.samples.mean(0)
        y, drawn = draw_long(x, rng, SR)
        t0 = time.process_time()
        outcome = declick.run(y[None], SR)
        cpu = time.process_time() - t0
        clean = declick.run(x[None], SR)
        found = _found(outcome.events, drawn, len(y))
        records += [{"kind": take.kind, "length": length, "level": level, "smooth": smooth,
                     "found": f}
                    for (_, length, level, smooth), f in zip(drawn, found, strict=True)]
        row = {"take": take.name, "kind": take.kind, "seconds": len(x) / SR,
               "recall": float(np.mean(found)), "false": len(clean.events),
               "clean_si_sdr": (si_sdr_db(x, clean.samples[0]) if clean.events
                                else float("inf")),
               "cpu": cpu, "sweep_clicked": [], "sweep_clean": []}
        for s in sweep:
            row["sweep_clicked"].append(len(declick.run(y[None], SR, sensitivity=s).events))
            row["sweep_clean"].append(len(declick.run(x[None], SR, sensitivity=s).events))
        rows.append(row)
        print(f"seed {seed} {take.name}: recall {row['recall']:.2f}, false {row['false']}, "
              f"clean SI-SDR {row['clean_si_sdr']:.1f} dB, sweep {row['sweep_clicked']} / "
              f"{row['sweep_clean']}", flush=True)
    return records, rows


def tables(records: list[dict], rows: list[dict], sweep: list[float]) -> str:
    lines = ["| clicks | count | found (all) | speech | music |", "|---|---:|---:|---:|---:|"]
    groups = [("all", lambda r: True)]
    groups += [(f"{a}-{b} samples", lambda r, a=a, b=b: a <= r["length"] <= b)
               for a, b in LENGTHS]
    groups += [(f"{a} to {b} dBFS", lambda r, a=a, b=b: a <= r["level"] < b) for a, b in LEVELS]
    groups += [("jagged", lambda r: not r["smooth"]), ("smooth (half-sine)", lambda r: r["smooth"])]
    groups += [("-14 to -8 dBFS, 10-19 samples",
                lambda r: r["level"] >= -14 and r["length"] >= 10)]
    for name, keep in groups:
        cells = []
        for kind in (None, "speech", "music"):
            chosen = [r["found"] for r in records if keep(r) and kind in (None, r["kind"])]
            cells.append(f"{np.mean(chosen):.1%}" if chosen else "-")
        count = sum(keep(r) for r in records)
        lines.append(f"| {name} | {count} | " + " | ".join(cells) + " |")
    lines += ["", "| takes | recall median / worst | false finds a second on the clean take "
              "median / worst | clean take's SI-SDR after, worst | cpu s a take, median |",
              "|---|---:|---:|---:|---:|"]
    for kind in ("speech", "music"):
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        recall = [r["recall"] for r in mine]
        false = [r["false"] / r["seconds"] for r in mine]
        lines.append(f"| {kind} ({len(mine)}) | {np.median(recall):.1%} / {min(recall):.1%} | "
                     f"{np.median(false):.2f} / {max(false):.2f} | "
                     f"{min(r['clean_si_sdr'] for r in mine):.1f} dB | "
                     f"{np.median([r['cpu'] for r in mine]):.2f} |")
    if sweep:
        clicks = len(records)
        lines += ["", f"Sensitivity sweep: events found, summed over the takes ({clicks} clicks "
                  "drawn), on the clicked / the clean takes; ratio: each step's clicked count "
                  "over the step before's.", "",
                  "| sensitivity | " + " | ".join(f"{s:g}" for s in sweep) + " |",
                  "|---|" + "---:|" * len(sweep)]
        for key, name in (("sweep_clicked", "clicked"), ("sweep_clean", "clean")):
            for kind in ("speech", "music"):
                total = np.sum([r[key] for r in rows if r["kind"] == kind], axis=0)
                lines.append(f"| {name} {kind} | " + " | ".join(str(int(t)) for t in total)
                             + " |")
        total = np.sum([r["sweep_clicked"] for r in rows], axis=0).astype(float)
        ratio = total[1:] / np.maximum(total[:-1], 1)
        lines.append("| ratio (clicked, all) | - | " + " | ".join(f"{q:.2f}" for q in ratio)
                     + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--speech", type=int, default=4)
    parser.add_argument("--music", type=int, default=3)
    parser.add_argument("--sweep", type=float, nargs="*", default=list(range(11)))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if takes.missing():
        sys.exit(f"bench_declick_long: {takes.missing()}")
    load = os.getloadavg()[0]
    records, rows = [], []
    for seed in args.seeds:
        r, w = run_seed(seed, args.speech, args.music, args.sweep)
        records += r
        rows += w
    text = (f"44.1 kHz, seeds {', '.join(map(str, args.seeds))} ({args.speech} speech and "
            f"{args.music} music takes each), default settings; load average {load:.1f} -> "
            f"{os.getloadavg()[0]:.1f}\n\n" + tables(records, rows, args.sweep) + "\n")
    print("\n" + text)
    if not args.no_write:
        from bench.bench_engine import write_section
        from engine.runtime.device import pick_device

        write_section("bench_declick_long", "De-click on long and loud clicks (cpu)", text,
                      pick_device("cpu"))


if __name__ == "__main__":
    main()
