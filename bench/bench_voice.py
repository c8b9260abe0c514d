"""Voice de-noise figures: the speech takes of bench/bench_denoise.py's randomized set
(espeak-ng voices and ALSA's recorded one under white or pink hiss at 0-20 dB SNR)
through engine.repair.voice (the default, and --amount 24: a fixed 24 dB), beside
DeepFilterNet3 run bare (no attenuation limit, no gate, no guard; the same
resampling) and noisereduce (default): median and worst PESQ-WB, and how many takes
came out worse than the input. Then the music takes (clean and under hiss): SI-SDR
against the clean take, and how many the module left bit for bit. Then the time to
run it on 60 s of stereo at 44.1 kHz (a voice under hiss, looped), as a share of
real time.

    .venv/bin/python bench/bench_voice.py [--seeds 1 2] [--no-speed]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_denoise import hiss, noisy_set, take_scores  # noqa: E402
from engine.repair import voice  # noqa: E402
from tests import takes  # noqa: E402

SPEECH = ("input", "ours", "ours, 24 dB", "DFN3 bare", "noisereduce")
MUSIC = ("input", "ours", "DFN3 bare")


def processed(method: str, x: np.ndarray, sr: int) -> np.ndarray:
    import noisereduce

    if method == "input":
        return x
    if method == "ours":
        return voice.run(x, sr).samples
    if method == "ours, 24 dB":
        return voice.run(x, sr, amount_db=24.0).samples
    if method == "DFN3 bare":
        return voice.bare(x, sr)
    return np.atleast_2d(noisereduce.reduce_noise(y=x, sr=sr))


def speech(seeds) -> list[str]:
    scores = {m: [] for m in SPEECH}
    for seed in seeds:
        for take, kind, snr, noisy, _ in noisy_set(seed):
            if take.kind != "speech":
                continue
            row = {m: take_scores(take, processed(m, noisy, take.sample_rate))["pesq"]
                   for m in SPEECH}
            for m, v in row.items():
                scores[m].append(v)
            print(f"{take.name:36s} {kind} {snr:5.1f} dB  " +
                  "  ".join(f"{m}: {v:.2f}" for m, v in row.items()), flush=True)
    lines = ["| PESQ-WB | " + " | ".join(SPEECH) + " |", "|---|" + "---:|" * len(SPEECH)]
    for name, f in (("median", np.median), ("worst", np.min)):
        lines.append(f"| {name} | " + " | ".join(f"{f(scores[m]):.2f}" for m in SPEECH) + " |")
    worse = [sum(a < b - 1e-9 for a, b in zip(scores[m], scores["input"], strict=True))
             for m in SPEECH]
    lines.append("| worse than input | " + " | ".join(str(w) for w in worse) + " |")
    return [f"{len(scores['input'])} speech takes, seeds {list(seeds)}", *lines]


def music(seeds) -> list[str]:
    rows, untouched = [], 0
    for seed in seeds:
        for take, kind, snr, noisy, _ in noisy_set(seed):
            if take.kind != "music":
                continue
            for x in (take.samples, noisy):
                row = {m: take_scores(take, processed(m, x, take.sample_rate))["si_sdr"]
                       for m in MUSIC}
                untouched += voice.run(x, take.sample_rate).samples is x
                rows.append(row)
                print(f"{take.name:36s} {kind} {snr:5.1f} dB  " +
                      "  ".join(f"{m}: {v:.2f}" for m, v in row.items()), flush=True)
    change = {m: [r[m] - r["input"] for r in rows if np.isfinite(r["input"])] for m in MUSIC}
    return [f"{len(rows)} music takes (clean and under hiss): left bit for bit by ours: "
            f"{untouched}; under hiss, SI-SDR change against the input (dB), median / "
            "worst: " + ", ".join(f"{m} {np.median(change[m]):+.1f} / {min(change[m]):+.1f}"
                                  for m in MUSIC[1:])]


def speed() -> str:
    sr, seconds = 44100, 60
    take = takes.clean_takes(sample_rate=sr, seed=1, speech=2, music=0, sounds=0)
    clean = np.concatenate([t.samples for t in take], axis=1)
    x = np.tile(clean, (2, -(-seconds * sr // clean.shape[1])))[:, :seconds * sr]
    x = x + 0.1 * np.sqrt(np.mean(x ** 2)) * hiss("white", x.shape, np.random.default_rng(1))
    t0 = time.perf_counter()
    voice.run(x, sr)
    took = time.perf_counter() - t0
    return (f"60 s of stereo at 44.1 kHz: {took:.1f} s, {took / seconds:.2f}x real time "
            f"(10 minutes: {took * 10:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    lines = speech(args.seeds) + music(args.seeds)
    if not args.no_speed:
        lines.append(speed())
    print("\n".join(lines))


if __name__ == "__main__":
    main()
