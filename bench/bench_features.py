"""Feature figures: ``specpaint features`` on N generated 10 s files at 4096 Hz
against a naive librosa loop (load, cut, mel per segment, save; timed on a
sample of the files and scaled to N: it takes ~0.3 s a file), each a whole
process in the same run; and, in this process, the two mel paths on the CPU
(nnAudio's MelSpectrogram layer, torch.stft with nnAudio's filterbank), and on a
GPU the layer there.

    .venv/bin/python bench/bench_features.py [--files 2000] [--runs 3] [--naive-files 100]
        [--device cpu|cuda]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_batch import linked_sample  # noqa: E402
from bench.bench_engine import write_section  # noqa: E402
from bench.bench_process import measure, progress, specpaint  # noqa: E402
from engine.logmel import FeatureSettings, LogMel  # noqa: E402

SR, SECONDS = 4096, 10
ARGS = ["--sr", "4096", "--n-fft", "64", "--hop", "16", "--n-mels", "32", "--segment",
        "1024:512", "--subsegment", "512:256"]
NAIVE = """
import sys, numpy as np, soundfile as sf, librosa
from pathlib import Path
out = []
for path in sorted(Path(sys.argv[1]).glob("*.wav")):
    x, sr = sf.read(path, dtype="float32")
    for s0 in range(0, len(x) - 1024 + 1, 512):
        for u0 in range(0, 1024 - 512 + 1, 256):
            seg = x[s0 + u0:s0 + u0 + 512]
            mel = librosa.feature.melspectrogram(y=seg, sr=sr, n_fft=64, hop_length=16,
                                                 n_mels=32, pad_mode="reflect")
            out.append(librosa.power_to_db(mel, ref=1.0, top_db=None).astype(np.float16))
np.save(Path(sys.argv[2]) / "features.npy", np.stack(out))
"""
TARGET = 5.0


def make_files(folder: Path, count: int) -> None:
    rng = np.random.default_rng(3)
    t = np.arange(SECONDS * SR) / SR
    folder.mkdir()
    for i in range(count):
        x = 0.3 * np.sin(2 * np.pi * rng.uniform(100, 1500) * t) + rng.normal(0, 0.05, t.size)
        sf.write(folder / f"f{i:05d}.wav", x.astype(np.float32), SR, subtype="PCM_16")


def mel_paths(runs: int, device: str) -> dict[str, float]:
    """Milliseconds per 4096 sub-segments: each mel path on the CPU, and on ``device``
    the one used there."""
    settings = FeatureSettings(subsegment=512, subsegment_hop=256)
    x = torch.randn(4096, 512)
    paths = {"nnAudio MelSpectrogram layer on the CPU": ("cpu", True),
             "torch.stft + nnAudio filterbank on the CPU (used there)": ("cpu", False)}
    if device != "cpu":
        paths[f"nnAudio MelSpectrogram layer on {device} (used there)"] = (device, True)
    out = {}
    with torch.no_grad():
        for name, (where, layer) in paths.items():
            mel = LogMel(settings, torch.device(where))
            mel.use_layer = layer
            batch = x.to(where)
            times = []
            for _ in range(runs + 1):  # the first warms up
                t0 = time.perf_counter()
                mel(batch)
                if where.startswith("cuda"):
                    torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            out[name] = statistics.median(times[1:]) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--naive-files", type=int, default=100)
    parser.add_argument("--device", default="cpu", help="specpaint features' device")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_files(tmp / "in", args.files)
        linked_sample(tmp / "in", tmp / "few", args.naive_files)
        (tmp / "ours").mkdir()
        (tmp / "naive").mkdir()
        commands = {"specpaint features": [*specpaint(), "features", str(tmp / "in"), "-o",
                                           str(tmp / "ours"), *ARGS],
                    "naive librosa loop": [sys.executable, "-c", NAIVE, str(tmp / "few"),
                                           str(tmp / "naive")]}
        for name, cmd in commands.items():
            runs = [progress(name, measure(cmd, args.device)) for _ in range(args.runs)]
            scale = args.files / args.naive_files if name.startswith("naive") else 1
            rows[name] = (statistics.median(r[0] for r in runs) * scale,
                          max(r[1] for r in runs))
    table = format_table(rows, mel_paths(max(args.runs, 5), args.device), args)
    print(table)
    if not args.no_write:
        write_section("bench_features", f"Features ({args.device})", table,
                      types.SimpleNamespace(type=args.device))


def format_table(rows: dict, paths: dict, args) -> str:
    ours = rows["specpaint features"][0]
    lines = [f"{args.files} files of {SECONDS} s at 4096 Hz, 16-bit WAV; segments 1024:512, "
             "sub-segments 512:256, n_fft 64, hop 16, 32 mels, float16 out; whole processes, "
             f"median of {args.runs} runs; the naive loop timed on {args.naive_files} files and "
             f"scaled; device {args.device}; {os.cpu_count()} CPUs.", "",
             "| process | wall | files/s | peak RSS | speed-up | target | met |",
             "|---|---:|---:|---:|---:|---:|:-:|"]
    for name, (wall, memory) in rows.items():
        peer = name.startswith("naive")
        lines.append(f"| {name} | {wall:.1f} s | {args.files / wall:.1f} | {memory:.2f} GiB | "
                     f"{f'{wall / ours:.1f}x' if peer else ''} | "
                     f"{f'>= {TARGET:g}x' if peer else ''} | "
                     f"{('yes' if wall / ours >= TARGET else 'no') if peer else ''} |")
    lines += ["", "| mel path, 4096 sub-segments of 512 | ms |", "|---|---:|"]
    lines += [f"| {name} | {ms:.1f} |" for name, ms in paths.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
