"""De-clip on soft clipping, beside the input and de-clip without its soft-clipping step.

    .venv/bin/python bench/bench_declip_soft.py [--seeds 1 2]

The clean takes of tests/takes.py (10 speech, 2 recorded sounds, 4 stereo music
excerpts, 22.05 kHz) per seed, each through three curves drawn per take
(tests/engine/test_declip_soft.py): ``tanh`` (the peak 1.5-3.5 into it), ``offset`` (tanh
of the input off its centre by 0.1-0.4: one polarity bent more) and ``arctan``
(another shape), scaled to a peak of -12 to -1 dBFS; and ``strong tanh`` (the peak
3.5-6 into it). Repaired by ``engine.repair.declip`` and by de-clip without its
soft-clipping step (its clipped-run restoration alone, as it was). Judged against
the clean take: PESQ-WB and STOI (speech, mono), SI-SDR (all). Then the takes
where nothing is to be found: clean, an RMS compressor, a look-ahead limiter, and
bench_declip's hard clipping: how many de-clip's soft step took for saturation.
"""

import argparse
import sys
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_declip import clip  # noqa: E402
from bench.bench_dehum_buzz import summary_table  # noqa: E402
from engine.measure.metrics import si_sdr_db  # noqa: E402
from engine.repair import declip, declip_soft  # noqa: E402
from tests import material, takes  # noqa: E402
from tests.engine.test_declip_soft import SR, compressed, limited, saturated  # noqa: E402

CURVES = ("tanh", "offset", "arctan", "strong tanh")


def scores(clean: np.ndarray, test: np.ndarray, speech: bool) -> dict:
    if speech:
        return material.scores(clean[0], test[0])
    return {"si_sdr": si_sdr_db(clean.ravel(), test.ravel())}


def runs_only(y: np.ndarray) -> np.ndarray:
    """De-clip without its soft-clipping step: its clipped-run restoration alone."""
    none = declip_soft.Saturation((0.0, 0.0), (1.0, 1.0), 0.0)
    with mock.patch.object(declip_soft, "find", lambda x, sr: none):
        return declip.run(y, SR).samples


def run(seeds) -> tuple[dict, dict]:
    rows = {curve: [] for curve in CURVES}
    taken = {"clean": [0, 0], "compressed": [0, 0], "limited": [0, 0], "hard-clipped": [0, 0]}
    for seed in seeds:
        rng = np.random.default_rng(seed + 200)
        for take in takes.clean_takes(sample_rate=SR, seed=seed, speech=10, sounds=2, music=4):
            x = take.samples
            speech = take.kind == "speech"
            for curve in CURVES:
                if curve == "strong tanh":
                    v = rng.uniform(3.5, 6) * x / np.abs(x).max()
                    y = np.tanh(v) / np.tanh(np.abs(v).max()) * 10 ** (rng.uniform(-12, -1) / 20)
                else:
                    y = saturated(x, rng, curve)
                out = declip.run(y, SR)
                rows[curve].append({"input": scores(x, y, speech),
                                    "de-clip": scores(x, out.samples, speech),
                                    "runs only": scores(x, runs_only(y), speech)})
                print(seed, take.name, curve, {m: {k: round(v, 2) for k, v in s.items()}
                                               for m, s in rows[curve][-1].items()},
                      out.summary or out.note, flush=True)
            plain = {"clean": x,
                     "compressed": np.stack([compressed(ch, rng) for ch in x]),
                     "limited": np.stack([limited(ch, rng) for ch in x]),
                     "hard-clipped": clip(x, rng)[0]}
            for name, y in plain.items():
                found = declip_soft.find(np.ascontiguousarray(y), SR)
                taken[name][0] += found.found
                taken[name][1] += 1
                if name != "hard-clipped" and found.found:
                    print("TAKEN FOR SATURATION:", seed, take.name, name, found, flush=True)
    return rows, taken


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    missing = takes.missing() or material.available()
    if missing:
        sys.exit(f"bench_declip_soft: {missing}")
    rows, taken = run(args.seeds)
    print(summary_table(rows, ("input", "de-clip", "runs only"), "de-clip",
                        ("input", "runs only")))
    print("Taken for saturation where there is none: " + ", ".join(
        f"{name} {n} of {total}" for name, (n, total) in taken.items()) + ".")


if __name__ == "__main__":
    main()
