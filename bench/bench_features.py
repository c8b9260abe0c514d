"""Feature figures: ``specpaint features`` on N generated 10 s files at 4096 Hz, full
frames and ``--pool mean``, beside the same command of an earlier commit (``--before
REV``: that commit's tree, extracted from git, run by this Python) and a naive librosa
loop (load, cut, mel per segment, save; timed on a sample of the files and scaled to
N: it takes ~0.3 s a file), each a whole process in the same run, alternating; where
our run's time went (the manifest's seconds per stage, of the median run); and, in
this process, the mel paths on the CPU (nnAudio's MelSpectrogram layer, torch.stft
with nnAudio's filterbank per item, each frame once for overlapping items) on one
torch thread, and on a GPU the layer there.

    .venv/bin/python bench/bench_features.py [--files 2000] [--runs 3] [--naive-files 100]
        [--before REV] [--device cpu|cuda] [--no-write]
"""

import argparse
import json
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
from bench.bench_process import checkout, measure, progress, specpaint  # noqa: E402
from engine.measure.logmel import FeatureSettings, LogMel  # noqa: E402

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
TARGET = 5.0  # against the naive loop
BEFORE_TARGET = 1.5  # against --before (issue 40: >= 1.5x on this 2-core CPU)


def make_files(folder: Path, count: int) -> None:
    rng = np.random.default_rng(3)
    t = np.arange(SECONDS * SR) / SR
    folder.mkdir()
    for i in range(count):
        x = 0.3 * np.sin(2 * np.pi * rng.uniform(100, 1500) * t) + rng.normal(0, 0.05, t.size)
        sf.write(folder / f"f{i:05d}.wav", x.astype(np.float32), SR, subtype="PCM_16")


def mel_paths(runs: int, device: str) -> dict[str, float]:
    """Milliseconds per 4096 sub-segments (512:256 of 1024:512 segments of 10 s files,
    one torch thread on the CPU): each mel path on the CPU, and on ``device`` the one
    used there."""
    from engine.measure.logmel import items

    settings = FeatureSettings(subsegment=512, subsegment_hop=256)
    file, table = items([SR * SECONDS] * 20, settings)
    starts = (file * SR * SECONDS + table[:, 2])[:4096]
    samples = np.random.default_rng(0).normal(0, 0.3, SR * SECONDS * 20).astype(np.float32)
    x = torch.from_numpy(samples[starts[:, None] + np.arange(512)])
    cpu = LogMel(settings, torch.device("cpu"))
    paths = {"nnAudio MelSpectrogram layer on the CPU": lambda: cpu.layer(x),
             "torch.stft + nnAudio filterbank, item by item, on the CPU":
                 lambda: cpu(x),
             "each frame once, nnAudio filterbank, on the CPU (used there)":
                 lambda: cpu.of_starts(samples, starts)}
    if device != "cpu":
        gpu = LogMel(settings, torch.device(device))
        on_device = x.to(device)
        paths[f"nnAudio MelSpectrogram layer on {device} (used there)"] = lambda: gpu(on_device)
    out = {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with torch.no_grad():
        for name, compute in paths.items():
            times = []
            for _ in range(runs + 1):  # the first warms up
                t0 = time.perf_counter()
                compute()
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            out[name] = statistics.median(times[1:]) * 1000
    torch.set_num_threads(threads)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--naive-files", type=int, default=100)
    parser.add_argument("--before", default=None, metavar="REV",
                        help="also run specpaint features of this commit, in the same run")
    parser.add_argument("--device", default="cpu", help="specpaint features' device")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_files(tmp / "in", args.files)
        linked_sample(tmp / "in", tmp / "few", args.naive_files)
        ours = [*specpaint(), "features", str(tmp / "in"), *ARGS]
        commands = {"specpaint features": [*ours, "-o", str(tmp / "full")],
                    "specpaint features --pool mean": [*ours, "-o", str(tmp / "pooled"),
                                                       "--pool", "mean"]}
        if args.before:
            before = checkout(args.before, tmp / "before")
            commands[f"specpaint features at {args.before}"] = [
                *before, "features", str(tmp / "in"), *ARGS, "-o", str(tmp / "old")]
        commands["naive librosa loop"] = [sys.executable, "-c", NAIVE, str(tmp / "few"),
                                          str(tmp / "naive")]
        (tmp / "naive").mkdir()
        runs: dict[str, list] = {name: [] for name in commands}
        stages: dict[str, list] = {name: [] for name in list(commands)[:2]}
        for _ in range(args.runs):  # alternating, so a change in the machine's load hits all
            for name, cmd in commands.items():
                runs[name].append(progress(name, measure(cmd, args.device)))
                if name in stages:
                    folder = Path(cmd[cmd.index("-o") + 1])
                    seconds = json.loads((folder / "manifest.json").read_text())["seconds"]
                    stages[name].append((runs[name][-1][0], seconds))
        rows = {}
        for name, measured in runs.items():
            scale = args.files / args.naive_files if name.startswith("naive") else 1
            rows[name] = (statistics.median(r[0] for r in measured) * scale,
                          max(r[1] for r in measured))
    for name in stages:  # the median run's stages
        stages[name] = sorted(stages[name], key=lambda r: r[0])[len(stages[name]) // 2]
    table = format_table(rows, stages, mel_paths(max(args.runs, 5), args.device), args)
    print(table)
    if not args.no_write:
        write_section("bench_features", f"Features ({args.device})", table,
                      types.SimpleNamespace(type=args.device))


def format_table(rows: dict, stages: dict, paths: dict, args) -> str:
    ours = rows["specpaint features"][0]
    before = rows.get(f"specpaint features at {args.before}")
    lines = [f"{args.files} files of {SECONDS} s at 4096 Hz, 16-bit WAV; segments 1024:512, "
             "sub-segments 512:256, n_fft 64, hop 16, 32 mels, float16 out; whole processes, "
             f"alternating, median of {args.runs} runs; the naive loop timed on "
             f"{args.naive_files} files and scaled; device {args.device}; {os.cpu_count()} "
             "CPUs.", "",
             "| process | wall | files/s | peak RSS | ours full frames, faster by | target | met |",
             "|---|---:|---:|---:|---:|---:|:-:|"]
    for name, (wall, memory) in rows.items():
        target = TARGET if name.startswith("naive") else BEFORE_TARGET if name == \
            f"specpaint features at {args.before}" else None
        lines.append(f"| {name} | {wall:.1f} s | {args.files / wall:.1f} | {memory:.2f} GiB | "
                     f"{f'{wall / ours:.2f}x' if target else ''} | "
                     f"{f'>= {target:g}x' if target else ''} | "
                     f"{('yes' if wall / ours >= target else 'no') if target else ''} |")
    if before:
        pooled = rows["specpaint features --pool mean"][0]
        lines.append(f"\nPooled against the commit before (full frames): "
                     f"{before[0] / pooled:.2f}x.")
    names = list(stages)
    lines += ["", "Where the time went (the manifest's seconds, the median run; decode and "
              "write run in threads beside the rest):", "",
              "| stage | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    keys = list(stages[names[0]][1]) + ["the process (wall)"]
    for key in keys:
        cells = [f"{stages[n][0]:.1f} s" if key == "the process (wall)" else
                 f"{stages[n][1].get(key, 0):.2f} s" for n in names]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines += ["", "| mel path, 4096 sub-segments of 512, one torch thread | ms |", "|---|---:|"]
    lines += [f"| {name} | {ms:.1f} |" for name, ms in paths.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
