"""De-click's detection on a randomized set: the clean takes of tests/takes.py with
clicks drawn as bench/bench_repair.py draws them (tests.takes.clicks: 1-8 samples, 1-50
a second, random size and polarity), for several seeds. Per click: found (an event overlaps it) and
covered (events span all of it), by its size over the clean audio's local level
(RMS over 5 ms either side), its length, the take's kind and whether it lies in a
quiet stretch (local level 40 dB under the take's peak). Per take: false clicks a
second on the clean take, events that hit no drawn click on the clicked one, and
PESQ-WB / STOI (speech) and SI-SDR (all) of the input and of the module's output
(through the safety guard, as the document path applies it). Medians and the worst
take per seed.

With ``--clean`` nothing is drawn: the module at its defaults on the clean takes alone
(issue 49 item 6: it should find nothing there): per kind, the takes it left bit for bit,
the clicks it found, PESQ-WB of its output (speech; the take against itself: 4.64) and
SI-SDR (all).

With ``--draw crackle`` the disturbance is vinyl-like crackle instead: 200-2000 tiny
clicks a second, 1-3 samples, 0.01-0.2 of the take's peak (the module's ``crackle``
setting is for it).

    .venv/bin/python bench/bench_declick.py [--seeds 1 2 3] [--rate 22050] [--no-scores]
        [--sensitivity 5] [--crackle] [--draw clicks|crackle] [--dump clicks.json]
        [--no-write] [--clean]

It rewrites its section of docs/benchmarks.md (the default settings and draw only).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import material, takes  # noqa: E402

SIZE_BINS = (-np.inf, 0, 10, 20, 30, np.inf)  # dB of a click's peak over the local RMS
QUIET_DB = -40.0  # a click's surroundings this far under the take's peak are quiet
LOCAL_SECONDS = 0.005


def _bin(value: float) -> str:
    i = int(np.searchsorted(SIZE_BINS, value, side="right")) - 1
    lo, hi = SIZE_BINS[i], SIZE_BINS[i + 1]
    return f"< {hi:g} dB" if lo == -np.inf else f">= {lo:g} dB" if hi == np.inf else \
        f"{lo:g}-{hi:g} dB"


def draw_crackle(x: np.ndarray, rng, sr: int):
    """``x`` with crackle (see the module notes), and each click's (first sample, length)."""
    y, drawn = x.copy(), []
    count = int(rng.uniform(200, 2000) * len(x) / sr)
    peak = np.abs(x).max()
    for i in np.sort(rng.choice(np.arange(int(0.02 * sr), len(x) - 4, 4), count, replace=False)):
        length = int(rng.integers(1, 4))
        shape = rng.uniform(0.4, 1, length) * rng.choice([-1, 1], length, p=[0.3, 0.7])
        y[i:i + length] += rng.choice([-1, 1]) * rng.uniform(0.01, 0.2) * peak * shape
        drawn.append((int(i), length))
    return y, drawn


def classify(clean: np.ndarray, dirty: np.ndarray, drawn, sr: int, kind: str) -> list[dict]:
    """Each drawn click's size over its local level, length and surroundings."""
    w = round(LOCAL_SECONDS * sr)
    peak = np.abs(clean).max()
    out = []
    for i, length in drawn:
        local = clean[max(0, i - w):i + length + w]
        rms = float(np.sqrt(np.mean(local ** 2))) + 1e-12
        size = float(np.abs(dirty[i:i + length] - clean[i:i + length]).max())
        out.append({"start": i, "length": length, "kind": kind,
                    "size_db": 20 * np.log10(size / rms),
                    "quiet": bool(20 * np.log10(rms / peak) < QUIET_DB)})
    return out


def judge(records: list[dict], events) -> int:
    """Marks each record found / covered by the events [(start, length)]; returns how
    many events hit no drawn click."""
    starts = np.array([e[0] for e in events], int)
    ends = np.array([e[0] + e[1] for e in events], int)
    hit = np.zeros(len(events), bool)
    for r in records:
        a, b = r["start"], r["start"] + r["length"]
        over = (starts < b) & (ends > a)
        hit |= over
        r["found"] = bool(over.any())
        covered = np.zeros(b - a, bool)
        for s, e in zip(starts[over], ends[over], strict=True):
            covered[max(s, a) - a:min(e, b) - a] = True
        r["covered"] = bool(covered.all())
    return int((~hit).sum())


def repaired(y: np.ndarray, sr: int, settings: dict):
    from engine.repair import declick, guard

    t0, c0 = time.perf_counter(), time.process_time()
    outcome = declick.run(y[None], sr, **settings)
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    safe, _ = guard.safe(y[None], outcome.samples, sr)
    return safe[0], [(e.start, e.length) for e in outcome.events], seconds


def scores(clean, test, speech: bool, sr: int) -> dict:
    from engine.measure.metrics import si_sdr_db

    if speech:
        ref, test = (np.atleast_2d(takes.resample(v, sr, material.SR))[0] for v in (clean, test))
        return material.scores(ref, test)
    return {"si_sdr": si_sdr_db(clean, test)}


def run_seed(seed: int, sr: int, settings: dict, with_scores: bool, draw=takes.clicks):
    rng = np.random.default_rng(1000 + seed)
    records, rows = [], []
    for take in takes.clean_takes(sample_rate=sr, seed=seed):
        x = take.samples.mean(0)
        y, drawn = draw(x, rng, sr)
        speech = take.kind == "speech"
        _, clean_events, _ = repaired(x, sr, settings)
        fixed, events, seconds = repaired(y, sr, settings)
        mine = classify(x, y, drawn, sr, take.kind)
        spurious = judge(mine, events)
        for r in mine:
            r.update(seed=seed, take=take.name)
        records += mine
        row = {"take": take.name, "kind": take.kind, "seconds": len(x) / sr,
               "false_per_s": len(clean_events) / (len(x) / sr),
               "spurious_per_s": spurious / (len(x) / sr),
               "recall": float(np.mean([r["found"] for r in mine])),
               "wall": seconds[0], "cpu": seconds[1]}
        if with_scores:
            row["input"], row["module"] = scores(x, y, speech, sr), scores(x, fixed, speech, sr)
        rows.append(row)
        print(f"seed {seed} {take.name}: recall {row['recall']:.2f}, "
              f"clean {row['false_per_s']:.1f}/s, spurious {row['spurious_per_s']:.1f}/s"
              + (f", {row['input']} -> {row['module']}" if with_scores else ""), flush=True)
    return records, rows


def clean_table(seeds: list[int], sr: int) -> str:
    """The module at its defaults on the clean takes of ``seeds`` alone, per kind."""
    rows = []
    for seed in seeds:
        for take in takes.clean_takes(sample_rate=sr, seed=seed):
            x = take.samples.mean(0)
            fixed, events, _ = repaired(x, sr, {})
            row = {"kind": take.kind, "found": len(events), "same": np.array_equal(fixed, x),
                   **scores(x, fixed, take.kind == "speech", sr)}
            rows.append(row)
            print(f"seed {seed} {take.name}: {len(events)} found, "
                  f"{'bit for bit' if row['same'] else 'changed'}", flush=True)
    lines = ["| takes | left bit for bit | clicks found a take, median / most | PESQ-WB median "
             "/ worst | SI-SDR worst |", "|---|---:|---:|---:|---:|"]
    for kind in ("speech", "sound", "music"):
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        found = [r["found"] for r in mine]
        pesq = [r["pesq"] for r in mine if "pesq" in r]
        lines.append(f"| {kind} ({len(mine)}) | {sum(r['same'] for r in mine)} | "
                     f"{np.median(found):g} / {max(found)} | "
                     + (f"{np.median(pesq):.2f} / {min(pesq):.2f}" if pesq else "-")
                     + f" | {min(r['si_sdr'] for r in mine):.1f} dB |")
    return (f"clean takes at {sr} Hz, seeds {', '.join(map(str, seeds))}, default settings\n\n"
            + "\n".join(lines) + "\n")


def recall_table(records: list[dict]) -> str:
    lines = ["| group | clicks | found | covered |", "|---|---:|---:|---:|"]
    groups = [("all", lambda r: True)]
    groups += [(f"size {b}", lambda r, b=b: _bin(r["size_db"]) == b)
               for b in map(_bin, (-5, 5, 15, 25, 35))]
    groups += [(f"length {a}-{b}", lambda r, a=a, b=b: a <= r["length"] <= b)
               for a, b in ((1, 2), (3, 5), (6, 8))]
    groups += [(k, lambda r, k=k: r["kind"] == k) for k in ("speech", "sound", "music")]
    groups += [("quiet surroundings", lambda r: r["quiet"]),
               ("music, size >= 10 dB", lambda r: r["kind"] == "music" and r["size_db"] >= 10)]
    for name, keep in groups:
        chosen = [r for r in records if keep(r)]
        if chosen:
            lines.append(f"| {name} | {len(chosen)} | "
                         f"{np.mean([r['found'] for r in chosen]):.1%} | "
                         f"{np.mean([r['covered'] for r in chosen]):.1%} |")
    return "\n".join(lines)


def take_table(rows_by_seed: dict) -> str:
    lines = ["| seed | recall | false /s clean | spurious /s | pesq in -> out | stoi in -> out "
             "| si_sdr in -> out | worse | wall / cpu s |", "|---|" + "---:|" * 8]

    def cell(rows, key, f=np.median):
        vals = [r[key] for r in rows]
        return f"{np.median(vals):.2f} / {f(vals):.2f}"

    for seed, rows in rows_by_seed.items():
        parts = [cell(rows, "recall", np.min), cell(rows, "false_per_s", np.max),
                 cell(rows, "spurious_per_s", np.max)]
        for m in ("pesq", "stoi", "si_sdr"):
            scored = [r for r in rows if "module" in r and m in r["module"]]
            if not scored:
                parts.append("-")
                continue
            a = [r["input"][m] for r in scored]
            b = [r["module"][m] for r in scored]
            gain = [q - p for p, q in zip(a, b, strict=True)]
            parts.append(f"{np.median(a):.2f} -> {np.median(b):.2f} (worst {min(b):.2f}, "
                         f"least gain {min(gain):+.2f})")
        worse = sum(any(r["module"][k] < r["input"][k] - tol for k, tol in
                        (("pesq", 0.05), ("stoi", 0.005), ("si_sdr", 0.1)) if k in r["module"])
                    for r in rows if "module" in r)
        parts.append(f"{worse} of {len(rows)}" if rows and "module" in rows[0] else "-")
        parts.append(f"{sum(r['wall'] for r in rows):.1f} / {sum(r['cpu'] for r in rows):.1f}")
        lines.append(f"| {seed} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--rate", type=int, default=22050)
    parser.add_argument("--sensitivity", type=float, default=5.0)
    parser.add_argument("--crackle", action="store_true")
    parser.add_argument("--no-scores", action="store_true")
    parser.add_argument("--draw", choices=("clicks", "crackle"), default="clicks")
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--clean", action="store_true")
    args = parser.parse_args()
    if takes.missing() or material.available():
        sys.exit(f"bench_declick: {takes.missing() or material.available()}")
    if args.clean:
        print("\n" + clean_table(args.seeds, args.rate))
        return
    settings = {"sensitivity": args.sensitivity, "crackle": args.crackle}
    records, rows_by_seed = [], {}
    load = os.getloadavg()[0]
    for seed in args.seeds:
        mine, rows_by_seed[seed] = run_seed(seed, args.rate, settings, not args.no_scores,
                                            takes.clicks if args.draw == "clicks" else draw_crackle)
        records += mine
    text = (f"{args.draw} at {args.rate} Hz, {settings}, seeds "
            f"{', '.join(map(str, args.seeds))}, load average {load:.1f} -> "
            f"{os.getloadavg()[0]:.1f} on the shared 2-core CPU; cells: median / worst take "
            "(recall: clicks found a take; false: clicks found a second of the clean take; "
            "spurious: events on no drawn click, a second of the clicked take; worse: takes "
            "left worse than the input by PESQ 0.05, STOI 0.005 or SI-SDR 0.1 dB)\n\n"
            + take_table(rows_by_seed) + "\n\n" + recall_table(records) + "\n")
    print("\n" + text)
    if args.dump:
        args.dump.write_text(json.dumps({"records": records, "rows": rows_by_seed}))
    default = args.draw == "clicks" and not args.crackle and args.sensitivity == 5.0
    if default and not args.no_write and not args.no_scores:
        from bench.bench_engine import write_section
        from engine.runtime.device import pick_device

        write_section("bench_declick", "De-click's detection on a randomized set (cpu)", text,
                      pick_device("cpu"))


if __name__ == "__main__":
    main()
