"""Feature figures: ``specpaint features`` on N generated 10 s files at 4096 Hz
against a naive librosa loop (load, cut, mel per segment, save; timed on a
sample of the files and scaled to N: it takes ~0.3 s a file), each a whole
process in the same run; and, in this process, the two mel paths on the CPU
(nnAudio's MelSpectrogram layer, torch.stft with nnAudio's filterbank).

    .venv/bin/python bench/bench_features.py [--files 2000] [--runs 3] [--naive-files 100]
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
from bench.bench_process import measure  # noqa: E402
from engine.features import FeatureSettings, LogMel  # noqa: E402

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


def mel_paths(runs: int) -> dict[str, float]:
    """Milliseconds per 4096 sub-segments, each mel path on the CPU."""
    mel = LogMel(FeatureSettings(subsegment=512, subsegment_hop=256), torch.device("cpu"))
    x = torch.randn(4096, 512)

    def path(layer: bool):
        def run():
            mel.use_layer = layer
            return mel(x)
        return run

    out = {}
    with torch.no_grad():
        for name, fn in (("nnAudio MelSpectrogram layer (used on a GPU)", path(True)),
                         ("torch.stft + nnAudio filterbank (used on the CPU)", path(False))):
            fn()
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            out[name] = statistics.median(times) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--naive-files", type=int, default=100)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("specpaint"))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_files(tmp / "in", args.files)
        linked_sample(tmp / "in", tmp / "few", args.naive_files)
        (tmp / "ours").mkdir()
        (tmp / "naive").mkdir()
        commands = {"specpaint features": [exe, "features", str(tmp / "in"), "-o",
                                           str(tmp / "ours"), *ARGS],
                    "naive librosa loop": [sys.executable, "-c", NAIVE, str(tmp / "few"),
                                           str(tmp / "naive")]}
        for name, cmd in commands.items():
            runs = [measure(cmd) for _ in range(args.runs)]
            scale = args.files / args.naive_files if name.startswith("naive") else 1
            rows[name] = (statistics.median(r[0] for r in runs) * scale,
                          max(r[1] for r in runs))
    table = format_table(rows, mel_paths(max(args.runs, 5)), args)
    print(table)
    if not args.no_write:
        write_section("bench_features", "Features (cpu)", table,
                      types.SimpleNamespace(type="cpu"))


def format_table(rows: dict, paths: dict, args) -> str:
    ours = rows["specpaint features"][0]
    lines = [f"{args.files} files of {SECONDS} s at 4096 Hz, 16-bit WAV; segments 1024:512, "
             "sub-segments 512:256, n_fft 64, hop 16, 32 mels, float16 out; whole processes, "
             f"median of {args.runs} runs; the naive loop timed on {args.naive_files} files and "
             f"scaled; {os.cpu_count()} CPUs.", "",
             "| process | wall | files/s | peak RSS | speed-up | target | met |",
             "|---|---:|---:|---:|---:|---:|:-:|"]
    for name, (wall, memory) in rows.items():
        peer = name.startswith("naive")
        lines.append(f"| {name} | {wall:.1f} s | {args.files / wall:.1f} | {memory:.2f} GiB | "
                     f"{f'{wall / ours:.1f}x' if peer else ''} | "
                     f"{f'>= {TARGET:g}x' if peer else ''} | "
                     f"{('yes' if wall / ours >= TARGET else 'no') if peer else ''} |")
    lines += ["", "| mel path on the CPU, 4096 sub-segments of 512 | ms |", "|---|---:|"]
    lines += [f"| {name} | {ms:.1f} |" for name, ms in paths.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
