"""Batch figures: the same preset stroke painted on N generated 10 s mono 44.1 kHz
files three ways, each timed as a whole process in the same run:

- ``specpaint batch`` (one process, the pipeline of app.batch.jobs);
- a shell loop of ``specpaint apply`` (one process per file; timed on a sample of
  the files and scaled to N, since it takes ~3 s a file);
- a naive single-process Python loop over the scripting API (load, paint,
  export per file).

    .venv/bin/python bench/bench_batch.py [--files 500] [--runs 3] [--shell-files 10]
        [--device cpu|cuda]

Median wall time of the runs, files/s, and peak RSS (the child's maximum).
"""

import argparse
import os
import statistics
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_engine import write_section  # noqa: E402
from bench.bench_process import measure, progress, specpaint  # noqa: E402

SECONDS, RATE = 10, 44100
STROKE = ["--preset", "hard-eraser", "--line", "2:1000,8:1000"]
NAIVE = """
import sys
from pathlib import Path
from brushes.script import Editor
out = Path(sys.argv[2])
for path in sorted(Path(sys.argv[1]).glob("*.wav")):
    editor = Editor.open(path, device=sys.argv[3])
    editor.paint("hard-eraser", [(2, 1000), (8, 1000)])
    editor.export(out / path.name, bit_depth="16")
"""
SHELL = 'for f in "$1"/*.wav; do "${@:3}" "$f" -o "$2/$(basename "$f")" >/dev/null || exit 1; done'
TARGETS = {"shell loop of specpaint apply": 5.0, "naive Python loop": 1.5}  # batch's speed-up


def make_files(folder: Path, count: int) -> None:
    """Music-like takes (a few partials with vibrato, noise), each a little different."""
    rng = np.random.default_rng(7)
    t = np.arange(SECONDS * RATE) / RATE
    folder.mkdir()
    for i in range(count):
        f0 = 110 * 2 ** (rng.integers(0, 24) / 12)
        x = sum(0.2 / k * np.sin(2 * np.pi * k * f0 * t + np.sin(2 * np.pi * 5 * t))
                for k in range(1, 6)) + 0.1 * np.sin(2 * np.pi * 1000 * t)
        x = x + rng.normal(0, 0.01, t.size)
        sf.write(folder / f"take{i:04d}.wav", x.astype(np.float32), RATE, subtype="PCM_16")


def linked_sample(src: Path, dst: Path, count: int) -> Path:
    """The first ``count`` WAVs of ``src`` hard-linked into ``dst`` (for a peer too slow
    to time on all of them)."""
    dst.mkdir()
    for path in sorted(src.glob("*.wav"))[:count]:
        os.link(path, dst / path.name)
    return dst


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shell-files", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=None, help="specpaint batch --jobs")
    parser.add_argument("--device", default="cpu", help="every process's engine device")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_files(tmp / "in", args.files)
        linked_sample(tmp / "in", tmp / "few", args.shell_files)

        def out(name: str) -> str:
            folder = tmp / name
            folder.mkdir(exist_ok=True)
            for f in folder.glob("*"):
                f.unlink()
            return str(folder)

        commands = {
            "specpaint batch": lambda: [*specpaint(), "batch", str(tmp / "in"), "-o", out("batch"),
                                        *(["--jobs", str(args.jobs)] if args.jobs else []),
                                        *STROKE],
            "naive Python loop": lambda: [sys.executable, "-c", NAIVE, str(tmp / "in"),
                                          out("naive"), args.device],
            "shell loop of specpaint apply": lambda: [
                "bash", "-c", SHELL, "loop", str(tmp / "few"), out("shell"), *specpaint(), "apply",
                *STROKE, "--bits", "16"],
        }
        rows = {}
        for name, command in commands.items():
            runs = [progress(name, measure(command(), args.device)) for _ in range(args.runs)]
            scale = args.files / args.shell_files if name.startswith("shell") else 1
            rows[name] = (statistics.median(r[0] for r in runs) * scale,
                          max(r[1] for r in runs))
    table = format_table(rows, args)
    print(table)
    if not args.no_write:
        write_section("bench_batch", f"Batch ({args.device})", table,
                      types.SimpleNamespace(type=args.device))


def format_table(rows: dict, args) -> str:
    batch = rows["specpaint batch"][0]
    lines = [f"{args.files} files of {SECONDS} s mono 44.1 kHz 16-bit WAV, one hard-eraser "
             f"stroke (2-8 s at 1 kHz) each, 16-bit WAV out; whole processes, median of "
             f"{args.runs} runs; the shell loop timed on {args.shell_files} files and scaled; "
             f"batch --jobs {args.jobs or 'default'}; device {args.device}; {os.cpu_count()} CPUs.",
             "",
             "| process | wall | files/s | peak RSS | batch's speed-up | target | met |",
             "|---|---:|---:|---:|---:|---:|:-:|"]
    for name, (wall, memory) in rows.items():
        speedup = wall / batch
        target = TARGETS.get(name)
        lines.append(f"| {name} | {wall:.1f} s | {args.files / wall:.1f} | "
                     f"{memory:.2f} GiB | {'' if target is None else f'{speedup:.2f}x'} | "
                     f"{'' if target is None else f'>= {target:g}x'} | "
                     f"{'' if target is None else ('yes' if speedup >= target else 'no')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
