"""`specpaint compare` on long takes: wall time and peak memory of the command on a
pair of speech-like stereo 44.1 kHz files (a tone with noise, an utterance every
second: what crashed the pesq library in one piece), beside a whole-array peer in the
same run (SNR, SI-SDR and the log-spectral distance over whole spectrograms with
numpy and torch, and STOI: what compare did before its measures went in blocks).

    .venv/bin/python bench/bench_compare.py [--minutes 10] [--runs 1]
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_process import measure, progress, specpaint  # noqa: E402

RATE = 44100
PEER = """
import sys, numpy as np, soundfile as sf, torch, pystoi
x, sr = sf.read(sys.argv[1], dtype="float64", always_2d=True)
y, _ = sf.read(sys.argv[2], dtype="float64", always_2d=True)
snr = 10 * np.log10((x ** 2).sum() / ((y - x) ** 2).sum())
r, t = x - x.mean(0), y - y.mean(0)
a = (t * r).sum(0) / (r * r).sum(0)
sdr = 10 * np.log10(((a * r) ** 2).sum(0) / ((t - a * r) ** 2).sum(0)).mean()
w = torch.hann_window(2048, dtype=torch.float64)
p = [torch.stft(torch.from_numpy(np.ascontiguousarray(z.T)), 2048, 512, window=w,
                return_complex=True).abs() ** 2 for z in (x, y)]
lsd = torch.sqrt(((10 * torch.log10(p[0] + 1e-10) - 10 * torch.log10(p[1] + 1e-10)) ** 2)
                 .mean(-2)).mean()
stoi = np.mean([pystoi.stoi(x[:, c], y[:, c], sr) for c in range(x.shape[1])])
print(snr, sdr, float(lsd), stoi)
"""


def speech_like(seconds: float, rng) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    on = (t % 1.0) < 0.6
    x = np.stack([on * (0.3 * np.sin(2 * np.pi * f * t) + rng.normal(0, 0.05, t.size))
                  for f in (220, 330)])
    return x.astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        ref, test = Path(tmp) / "ref.flac", Path(tmp) / "test.flac"
        x = speech_like(args.minutes * 60, rng)
        sf.write(ref, x.T, RATE, subtype="PCM_24")
        sf.write(test, (x + rng.normal(0, 0.01, x.shape)).T, RATE, subtype="PCM_24")
        del x
        runs = {"specpaint compare": [], "whole-array peer": []}
        for _ in range(args.runs):
            runs["specpaint compare"].append(progress("specpaint compare", measure(
                specpaint() + ["compare", str(ref), str(test)])))
            runs["whole-array peer"].append(progress("whole-array peer", measure(
                [sys.executable, "-c", PEER, str(ref), str(test)])))
    print(f"{args.minutes:g} min stereo {RATE} Hz, median of {args.runs}:")
    for name, figures in runs.items():
        print(f"  {name:<20} {statistics.median(f[0] for f in figures):7.1f} s "
              f"{statistics.median(f[1] for f in figures):6.2f} GiB")


if __name__ == "__main__":
    main()
