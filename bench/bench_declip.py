"""De-clip on a randomized set of real recordings, beside a plain peer.

    .venv/bin/python bench/bench_declip.py [--seeds 1 2 3]

Every clean take of tests/takes.py (22.05 kHz: speech, recorded sounds, stereo
music) is clipped twice, at a random 20-45 % and 45-70 % of its peak; a third
of them asymmetrically (the negative level 60-100 % of the positive), a sixth with
the clipped samples wobbling by up to 1 %, a sixth resampled to 32, 44.1 or 48 kHz
and back (the plateaus wobble and overshoot), half scaled
afterwards to a random peak. Each is judged against its clean take by SI-SDR
(all), PESQ-WB and STOI (speech), for the clipped input, for
``engine.repair.declip`` and for the plain peer: a cubic spline through the
reliable samples across the runs our detection finds. Medians and the worst take
per band of input SI-SDR; "worse" counts the takes where ours is below the input
by a measure. Prints a markdown table. De-clip's speed: bench/bench_repair_speed.py.
"""

import argparse
import itertools
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.measure.metrics import si_sdr_db  # noqa: E402
from engine.repair import declip  # noqa: E402
from engine.repair.declip_detect import find_clipping  # noqa: E402
from tests import takes as takes_module  # noqa: E402

BANDS = ((-np.inf, 5.0), (5.0, 10.0), (10.0, 20.0), (20.0, np.inf))
MEASURES = ("si_sdr", "pesq", "stoi")


def clip(x: np.ndarray, rng: np.random.Generator, lowest: float = 0.2,
         highest: float = 0.7) -> tuple[np.ndarray, str]:
    """``x`` clipped at a random share of its peak (maybe asymmetric, wobbling, scaled)."""
    ratio = rng.uniform(lowest, highest)
    high = ratio * np.max(np.abs(x))
    low = high * (rng.uniform(0.6, 1.0) if rng.random() < 1 / 3 else 1.0)
    y = np.clip(x, -low, high)
    how = f"clip {ratio:.0%}" + (f", low {low / high:.0%}" if low != high else "")
    if rng.random() < 1 / 6:
        wobble = rng.uniform(0.002, 0.01)
        hit = (y >= high) | (y <= -low)
        y[hit] *= 1 + rng.uniform(-wobble, wobble, np.count_nonzero(hit))
        how += f", wobble {wobble:.1%}"
    elif rng.random() < 1 / 5:
        rate = int(rng.choice([32000, 44100, 48000]))
        y = takes_module.resample(takes_module.resample(y, 22050, rate), rate, 22050)
        y = y[:, :x.shape[1]]
        how += f", via {rate / 1000:g} kHz"
    if rng.random() < 1 / 2:
        y = y * 10 ** (rng.uniform(-12, -1) / 20) / np.max(np.abs(y))
    return y, how


def cubic_peer(x: np.ndarray) -> np.ndarray:
    """A cubic spline through the reliable samples, read across the clipped runs."""
    from scipy.interpolate import CubicSpline

    out = x.copy()
    for ch, row in enumerate(x):
        found = find_clipping(row)
        hit = np.zeros(len(row), bool)
        for s, e in found.runs:
            hit[s:e] = True
        if hit.any():
            t = np.arange(len(row))
            out[ch, hit] = CubicSpline(t[~hit], row[~hit])(t[hit])
    return out


def scores(clean: np.ndarray, test: np.ndarray, speech: bool) -> dict:
    if speech:
        from tests.material import scores as speech_scores

        return speech_scores(clean[0], test[0])
    return {"si_sdr": si_sdr_db(clean, test)}


def quality(seed: int) -> list[dict]:
    rng = np.random.default_rng(1000 + seed)
    rows = []
    for take, (lowest, highest) in itertools.product(
            takes_module.clean_takes(sample_rate=22050, seed=seed), ((0.2, 0.45), (0.45, 0.7))):
        clean = take.samples
        clipped, how = clip(clean, rng, lowest, highest)
        speech = take.kind == "speech"
        row = {"name": take.name, "how": how, "seed": seed,
               "input": scores(clean, clipped, speech),
               "ours": scores(clean, declip.run(clipped, 22050).samples, speech),
               "cubic": scores(clean, cubic_peer(clipped), speech)}
        rows.append(row)
        print(f"seed {seed} {take.name:32s} {how:32s} " + "  ".join(
            f"{k} " + "/".join(f"{v:.2f}" for v in row[k].values())
            for k in ("input", "ours", "cubic")), flush=True)
    return rows


def table(rows: list[dict], seeds) -> str:
    lines = [f"De-clip, seeds {', '.join(map(str, seeds))} ({len(rows)} takes): median (worst) "
             "of each measure against the clean take, per band of input SI-SDR. PESQ-WB and "
             "STOI on speech only.", "",
             "| input SI-SDR | takes | measure | input | ours | cubic spline "
             "| ours worse than input |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for lo, hi in BANDS:
        band = [r for r in rows if lo <= r["input"]["si_sdr"] < hi]
        if not band:
            continue
        for m in MEASURES:
            have = [r for r in band if m in r["input"]]
            if not have:
                continue
            cells = []
            for who in ("input", "ours", "cubic"):
                v = [r[who][m] for r in have]
                cells.append(f"{statistics.median(v):.2f} ({min(v):.2f})")
            worse = sum(r["ours"][m] < r["input"][m] for r in have)
            lines.append(f"| {lo:g} to {hi:g} dB | {len(have)} | {m} | " + " | ".join(cells)
                         + f" | {worse} |")
    gains = [r["ours"]["si_sdr"] - r["input"]["si_sdr"] for r in rows
             if 5 <= r["input"]["si_sdr"] < 10]
    if gains:
        lines += ["", f"SI-SDR gain for input 5-10 dB: median {statistics.median(gains):+.2f} dB, "
                      f"worst {min(gains):+.2f} dB ({len(gains)} takes)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    missing = takes_module.missing()
    if missing:
        sys.exit(f"bench_declip: the clean takes need {missing}")
    print(table([r for seed in args.seeds for r in quality(seed)], args.seeds))


if __name__ == "__main__":
    main()
