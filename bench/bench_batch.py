"""Batch figures: the same preset stroke painted on N generated 10 s mono 44.1 kHz
files three ways, each timed as a whole process, alternately, in the same run:

- ``specpaint batch`` (its default: ``--device auto``, which here chooses worker
  processes on the CPU; ``--before REV`` adds the same command, and the naive loop,
  of an earlier commit);
- a shell loop of ``specpaint apply`` (one process per file; timed on a sample of
  the files and scaled to N, since it takes ~3 s a file);
- a naive single-process Python loop over the scripting API (load, paint,
  export per file).

    .venv/bin/python bench/bench_batch.py [--files 500] [--runs 3] [--shell-files 10]
        [--jobs N] [--before REV] [--device cpu|cuda] [--no-write]

Median wall time of the runs, files/s, CPU time (every process of it), peak RSS (the
largest process), the load average while they ran; then where a file's CPU time
goes, in this process on one thread: a batch worker's stages (a stack of 8 files at a
time, as the workers paint them) beside the naive loop's.
"""

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_engine import write_section  # noqa: E402
from bench.bench_process import checkout, measure, progress, specpaint  # noqa: E402

SECONDS, RATE = 10, 44100
STROKE = ["--preset", "hard-eraser", "--line", "2:1000,8:1000"]
NAIVE = """
import sys
from pathlib import Path
from app.session.editor import Editor
out = Path(sys.argv[2])
for path in sorted(Path(sys.argv[1]).glob("*.wav")):
    editor = Editor.open(path, device=sys.argv[3])
    editor.paint("hard-eraser", [(2, 1000), (8, 1000)])
    editor.export(out / path.name, bit_depth="16")
"""
SHELL = 'for f in "$1"/*.wav; do "${@:3}" "$f" -o "$2/$(basename "$f")" >/dev/null || exit 1; done'
BATCH, NAIVE_LOOP, SHELL_LOOP = ("specpaint batch", "naive Python loop",
                                 "shell loop of specpaint apply")
TARGETS = {SHELL_LOOP: 5.0, NAIVE_LOOP: 3.0}  # batch's speed-up (issue 40: 3x on 2 cores)
PROFILE_FILES = 48  # files of the in-process profile of where the time goes


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
    parser.add_argument("--before", default=None, metavar="REV",
                        help="also run specpaint batch of this commit, in the same run")
    parser.add_argument("--device", default="cpu", help="every process's engine device")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_files(tmp / "in", args.files)
        linked_sample(tmp / "in", tmp / "few", args.shell_files)
        trees = {"": specpaint()}
        if args.before:
            trees[f" at {args.before}"] = checkout(args.before, tmp / "before")
        runs, loads = _runs(trees, tmp, args)
        profile = stage_profile(tmp / "in", args.device)
    rows = {}
    for name, measured in runs.items():
        scale = args.files / args.shell_files if name == SHELL_LOOP else 1
        rows[name] = (statistics.median(r.wall for r in measured) * scale,
                      max(r.peak for r in measured),
                      statistics.median(r.cpu for r in measured) * scale)
    table = format_table(rows, profile, args, loads)
    print(table)
    if not args.no_write:
        write_section("bench_batch", f"Batch ({args.device})", table,
                      types.SimpleNamespace(type=args.device))


def _runs(trees: dict[str, list[str]], tmp: Path, args) -> tuple[dict, list[float]]:
    """The batch and the naive loop of each tree (``specpaint`` of this checkout, and
    of --before: its name's suffix and its command) and the shell loop, alternately
    ``args.runs`` times (so a change in the machine's load hits all); their runs, and
    the load averages seen."""
    def out(name: str) -> str:
        folder = tmp / name
        folder.mkdir(exist_ok=True)
        for f in folder.glob("*"):
            if f.is_file():
                f.unlink()
        return str(folder)

    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    commands = {}
    for i, (suffix, command) in enumerate(trees.items()):
        python = command[:-2] if command[-2:] == ["-m", "app.main"] \
            else [sys.executable]  # checkout's: with that tree first on the path
        commands[BATCH + suffix] = lambda c=command, i=i: [
            *c, "batch", str(tmp / "in"), "-o", out(f"batch{i}"), *jobs, *STROKE]
        commands[NAIVE_LOOP + suffix] = lambda p=python, i=i: [
            *p, "-c", NAIVE, str(tmp / "in"), out(f"naive{i}"), args.device]
    commands[SHELL_LOOP] = lambda: ["bash", "-c", SHELL, "loop", str(tmp / "few"), out("shell"),
                                    *specpaint(), "apply", *STROKE, "--bits", "16"]
    runs: dict[str, list] = {name: [] for name in commands}
    loads = [os.getloadavg()[0]]
    for _ in range(args.runs):
        for name, command in commands.items():
            runs[name].append(progress(name, measure(command(), args.device)))
            loads.append(os.getloadavg()[0])
    return runs, loads


def stage_profile(folder: Path, device: str) -> dict[str, dict[str, float]]:
    """CPU milliseconds a file in each stage, in this process on one thread, over
    PROFILE_FILES files: a batch worker's (decoded, painted 8 at a time as one stack,
    exported, measured) and the naive loop's (Editor.open, paint, export); each stage
    the median of three passes."""
    import torch

    from app.batch.jobs import Job, Settings, decode_job
    from app.batch.processes import keep_heap
    from app.batch.stacks import check_settings
    from app.session.editor import Editor, with_presets_resolved
    from engine.io.audio import Audio
    from engine.io.export import export
    from engine.measure.metrics import si_sdr_and_snr_db
    from engine.model.document import Document

    torch.set_num_threads(1)
    keep_heap()  # as in a worker
    paths = sorted(folder.glob("*.wav"))[:PROFILE_FILES]
    strokes = with_presets_resolved([{"preset": "hard-eraser", "points": [[2, 1000], [8, 1000]]}])
    settings = Settings(strokes, {"device": device})
    check_settings(settings)
    passes: list[dict[tuple[str, str], float]] = []

    @contextlib.contextmanager
    def clock(side: str, stage: str):
        started = time.process_time()
        yield
        key = (side, stage)
        passes[-1][key] = passes[-1].get(key, 0.0) + (time.process_time() - started) * 1e3

    with tempfile.TemporaryDirectory() as out:
        out = Path(out)
        for _ in range(1 + 3):  # the first pass warms up, unmeasured
            passes.append({})
            for i in range(0, len(paths), settings.stack):
                with clock("batch worker", "decode"):
                    audios = [decode_job(Job(p, out))[1] for p in paths[i:i + settings.stack]]
                with clock("batch worker", "analysis"):
                    doc = Document(Audio(np.concatenate([a.samples for a in audios]), RATE),
                                   device=device)
                with clock("batch worker", "stroke"):
                    editor = Editor(doc, history_limit=0)
                    editor.run_script(strokes)
                with clock("batch worker", "resynthesis"):
                    wave = editor.audio()
                for k, audio in enumerate(audios):
                    with clock("batch worker", "export"):
                        export(wave[k:k + 1], RATE, out / audio.path.name, bit_depth="16")
                    with clock("batch worker", "metrics"):
                        si_sdr_and_snr_db(audio.samples, wave[k:k + 1])
                editor.synth.close()  # (as paint_audio: the document and its listener
                del doc, editor, wave  # refer to each other) a stack goes before the next,
                # its memory reused for the next as in a worker (a cycle left it to the
                # collector: every stack's 56 MiB faulted in afresh, 10 ms a file)
            for path in paths:
                with clock("naive loop", "decode and analysis"):
                    naive = Editor.open(path, device=device)
                with clock("naive loop", "stroke"):
                    naive.paint("hard-eraser", [(2, 1000), (8, 1000)])
                with clock("naive loop", "resynthesis and export"):
                    naive.export(out / path.name, bit_depth="16")
    profile: dict[str, dict[str, float]] = {}
    for side, stage in passes[-1]:
        times = [measured[side, stage] for measured in passes[1:]]
        profile.setdefault(side, {})[stage] = statistics.median(times) / len(paths)
    return profile


def format_table(rows: dict, profile: dict, args, loads: list[float]) -> str:
    batch = rows[BATCH][0]
    lines = [f"{args.files} files of {SECONDS} s mono 44.1 kHz 16-bit WAV, one hard-eraser "
             f"stroke (2-8 s at 1 kHz) each, 16-bit WAV out; whole processes, alternately, "
             f"median of {args.runs} runs; the shell loop timed on {args.shell_files} files "
             f"and scaled; batch --jobs {args.jobs or 'default'}; device {args.device}; "
             f"{os.cpu_count()} CPUs; load average {min(loads):.1f}-{max(loads):.1f} "
             "(1 minute) during the runs, from other work on the machine.",
             "",
             "| process | wall | files/s | CPU | peak RSS | batch's speed-up | target | met |",
             "|---|---:|---:|---:|---:|---:|---:|:-:|"]
    for name, (wall, memory, cpu) in rows.items():
        speedup = wall / batch
        target = TARGETS.get(name)
        shown = target is not None or name != BATCH
        lines.append(f"| {name} | {wall:.1f} s | {args.files / wall:.1f} | {cpu:.1f} s | "
                     f"{memory:.2f} GiB | {f'{speedup:.2f}x' if shown else ''} | "
                     f"{'' if target is None else f'>= {target:g}x'} | "
                     f"{'' if target is None else ('yes' if speedup >= target else 'no')} |")
    sides = list(profile)
    lines += ["", f"Where a file's CPU time goes (ms a file; in one process on one thread, "
                  f"{PROFILE_FILES} files, the median of 3 passes; the worker paints 8 files "
                  "as one stack):", "",
              "| stage | " + " | ".join(sides) + " |", "|---|" + "---:|" * len(sides)]
    stages = list(dict.fromkeys(s for side in sides for s in profile[side]))
    for stage in stages:
        lines.append(f"| {stage} | " + " | ".join(
            f"{profile[side][stage]:.1f}" if stage in profile[side] else "" for side in sides)
            + " |")
    lines.append("| total | " + " | ".join(f"{sum(profile[side].values()):.1f}"
                                          for side in sides) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
