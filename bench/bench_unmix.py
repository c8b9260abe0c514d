"""Unmix figures: SI-SDR of each layer against its true source on mixtures of real
sounds (tests/mixtures.py: tones under real percussive sounds, espeak-ng speech over
real music, speech over recorded noise), beside librosa's ``hpss`` and a plain NMF
(scikit-learn, KL, 2 components) on the same mixtures in the same run; and the time
an unmix of a 60 s stereo excerpt of real music takes, beside librosa's hpss.

Methods, each on the mixture's STFT (2048 / 512 at 22.05 kHz):
- ours hpss (margin 2: harmonic, percussive, residual) and hpss:1 (two parts);
  librosa hpss (exact medians, margin 1) on librosa's STFT: tones+hits only.
- ours nmf:2 blind, and scikit-learn's NMF (KL, 2 components, NNDSVDa): each
  component given to the source it fits best (an oracle: the best pairing).
- paint to separate: ours nmf:2 steered by at most five marks per source (a
  simulated user who marks where each source clearly dominates, tests.mixtures).

    .venv/bin/python bench/bench_unmix.py [--seed 1] [--per-kind 4] [--no-speed]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.session.editor import Editor  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.measure.metrics import si_sdr_db  # noqa: E402
from engine.model.document import Document  # noqa: E402
from tests import mixtures, takes  # noqa: E402

N_FFT, HOP = 2048, 512


def editor_of(x: np.ndarray, sr: int) -> Editor:
    return Editor(Document(Audio(x.astype(np.float32), sr), device="cpu", n_fft=N_FFT),
                  history_limit=0)


def scored(mix: mixtures.Mixture, estimates: list[np.ndarray]) -> tuple[float, float]:
    """SI-SDR of the estimates of source 0 and 1 (each the best pairing of the
    estimates given, for the blind methods)."""
    best = None
    for i in range(len(estimates)):
        for j in range(len(estimates)):
            if i != j:
                pair = (si_sdr_db(mix.sources[0][0], estimates[i]),
                        si_sdr_db(mix.sources[1][0], estimates[j]))
                if best is None or sum(pair) > sum(best):
                    best = pair
    return best


def ours(mix, method: str, marks=None) -> list[np.ndarray]:
    ed = editor_of(mix.mix, mix.sample_rate)
    ed.unmix(method)
    if marks:
        ed.separate(marks)
    return [ed.layers.audio(x.id)[0].astype(np.float64) for x in ed.layers]


def librosa_hpss(mix) -> list[np.ndarray]:
    import librosa

    s = librosa.stft(mix.mix[0], n_fft=N_FFT, hop_length=HOP)
    h, p = librosa.decompose.hpss(s)
    n = mix.mix.shape[1]
    return [librosa.istft(x, hop_length=HOP, length=n) for x in (h, p)]


def sklearn_nmf(mix) -> list[np.ndarray]:
    import librosa
    from sklearn.decomposition import NMF

    s = librosa.stft(mix.mix[0], n_fft=N_FFT, hop_length=HOP)
    v = np.abs(s)
    model = NMF(2, beta_loss="kullback-leibler", solver="mu", init="nndsvda", max_iter=200,
                random_state=0)
    w = model.fit_transform(v)
    parts = [np.outer(w[:, k], model.components_[k]) for k in range(2)]
    total = np.maximum(sum(parts), 1e-12)
    n = mix.mix.shape[1]
    return [librosa.istft(s * p / total, hop_length=HOP, length=n) for p in parts]


def quality(seed: int, per_kind: int) -> list[str]:
    rows: dict[str, dict[str, list]] = {}
    for mix in mixtures.mixtures(seed=seed, per_kind=per_kind):
        results = {"ours nmf:2 blind": scored(mix, ours(mix, "nmf:2")),
                   "sklearn NMF (2, KL)": scored(mix, sklearn_nmf(mix)),
                   "ours paint to separate (<= 5 marks a source)":
                       scored(mix, ours(mix, "nmf:2", mixtures.marks_for(mix)))}
        if mix.kind == "tones+hits":
            results["ours hpss (margin 2)"] = _in_order(mix, ours(mix, "hpss"))
            results["ours hpss:1"] = _in_order(mix, ours(mix, "hpss:1"))
            results["librosa hpss"] = _in_order(mix, librosa_hpss(mix))
        for method, pair in results.items():
            rows.setdefault(mix.kind, {}).setdefault(method, []).append(pair)
            print(f"{mix.name:16s} {method:45s} {pair[0]:6.2f} {pair[1]:6.2f}", flush=True)
    lines = ["| mixtures | method | source 1 median (worst) | source 2 median (worst) | both, "
             "median |", "|---|---|---|---|---|"]
    every: dict[str, list] = {}
    for kind, methods in rows.items():
        for method, pairs in methods.items():
            a, b = [p[0] for p in pairs], [p[1] for p in pairs]
            every.setdefault(method, []).extend(a + b)
            lines.append(f"| {kind} ({len(pairs)}) | {method} | {statistics.median(a):.2f} "
                         f"({min(a):.2f}) | {statistics.median(b):.2f} ({min(b):.2f}) | "
                         f"{statistics.median(a + b):.2f} |")
    lines.append("")
    lines += [f"- {method}: median over every mixture and source {statistics.median(v):.2f} dB "
              f"(worst {min(v):.2f})" for method, v in every.items() if len(rows) > 1 or v]
    return lines


def _in_order(mix, estimates) -> tuple[float, float]:
    return (si_sdr_db(mix.sources[0][0], estimates[0]),
            si_sdr_db(mix.sources[1][0], estimates[1]))


def speed(runs: int) -> list[str]:
    import librosa
    import torch

    sr = 44100
    track = sorted(takes.MUSIC.glob("*.mp3"))[0]
    x = takes._read(track, sr, 20.0, 60.0).astype(np.float32)
    rows = ["| unmix of 60 s stereo (44.1 kHz, STFT 2048/512) | median s | runs |",
            "|---|---|---|"]
    mark = {"part": 0, "points": [[10.0, 400.0], [10.5, 400.0]], "radius_ms": 50,
            "radius_hz": 200}
    for method in ("hpss", "tonal-noise", "nmf:2", "paint to separate (a mark, after nmf:2)",
                   "librosa hpss (exact medians)"):
        times = []
        for _ in range(runs):
            if method.startswith("librosa"):
                s = librosa.stft(x, n_fft=N_FFT, hop_length=HOP)
                t0 = time.perf_counter()
                librosa.decompose.hpss(s, margin=2.0)
            elif method.startswith("paint"):
                ed = editor_of(x, sr)
                ed.unmix("nmf:2")
                t0 = time.perf_counter()
                ed.separate([mark])
            else:
                ed = editor_of(x, sr)
                t0 = time.perf_counter()
                ed.unmix(method)
            times.append(time.perf_counter() - t0)
            print(method, f"{times[-1]:.2f} s", flush=True)
        rows.append(f"| {method} | {statistics.median(times):.2f} | {runs} |")
    rows.append(f"\ntorch {torch.__version__}, {torch.get_num_threads()} threads, "
                f"load before: {os.getloadavg()[0]:.1f}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-kind", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    out = [f"seed {args.seed}, load {load:.1f} (2 cores)", ""]
    if not args.no_quality:
        out += quality(args.seed, args.per_kind) + [""]
    if not args.no_speed:
        out += speed(args.runs)
    print("\n".join(out))


if __name__ == "__main__":
    main()
