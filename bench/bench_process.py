"""Whole-process figures: `specpaint roundtrip` of a 10-minute stereo 44.1 kHz file
against a five-line librosa script doing the same (load, stft, istft, write a float
WAV), each a fresh Python process, in the same run; optionally under a competing
CPU load (a busy process per core).

    .venv/bin/python bench/bench_process.py [--minutes 10] [--runs 3] [--no-write]

Median wall time and peak memory (the child's maximum RSS) of the runs.
"""

import argparse
import io
import multiprocessing
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_engine import make_file, write_section  # noqa: E402

LIBROSA = """
import sys, librosa, soundfile as sf
x, sr = sf.read(sys.argv[1], dtype="float32", always_2d=True)
spec = librosa.stft(x.T, n_fft=2048, hop_length=512)
y = librosa.istft(spec, hop_length=512, length=x.shape[0])
sf.write(sys.argv[2], y.T, sr, subtype="FLOAT")
"""
TARGET_TIME, TARGET_MEMORY = 0.6, 1.0  # of librosa's, in the same run


WRAPPER = """
import ctypes, os, resource, subprocess, sys
if sys.platform == "linux":  # orphans (a batch's forkserver and its workers) come to us
    ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
subprocess.run(sys.argv[1:], check=True, capture_output=True)
try:
    while True:  # reap them, so their peaks count too
        os.wait()
except ChildProcessError:
    pass
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


class Run(NamedTuple):
    """One whole process: wall seconds, peak RSS (GiB), CPU seconds (user and system,
    of it and every process under it)."""
    wall: float
    peak: float
    cpu: float


def specpaint() -> list[str]:
    """The ``specpaint`` command beside this Python, or the module where it is not
    installed as a script (a machine with the checkout on PYTHONPATH). :func:`measure`
    runs it with this checkout first on PYTHONPATH: the script of an editable install
    imports the checkout it was installed from, in a venv shared by worktrees another's."""
    exe = Path(sys.executable).with_name("specpaint")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "app.main"]


def checkout(rev: str, folder: Path) -> list[str]:
    """``specpaint`` of commit ``rev``: its tree extracted into ``folder``, run as a
    module by this Python (the same packages), that tree first on PYTHONPATH, and
    ``-P``: without it ``-m`` and ``-c`` put the current folder first, and a bench run
    from a checkout ran that checkout's code as "the commit before" (until issue 40,
    ``--before`` of bench_batch and bench_features measured the checkout twice)."""
    tree = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
        tar.extractall(folder, filter="data")
    return ["env", f"PYTHONPATH={folder}", sys.executable, "-P", "-m", "app.main"]


def measure(cmd: list[str], device: str = "cpu") -> Run:
    """Wall seconds, peak RSS (GiB) and CPU seconds of one child process on ``device``:
    the largest RSS of it and every process under it, and their CPU time summed, until
    all of them end (measured by a wrapper process of its own: a parent's children's
    peak only ever grows). This checkout's code runs, whatever the venv's editable
    install points at."""
    t0 = time.perf_counter()
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], check=True,
                          capture_output=True, text=True,
                          env={**os.environ, "SPECPAINT_DEVICE": device, "PYTHONPATH": path})
    peak, cpu = done.stdout.split()[-2:]
    return Run(time.perf_counter() - t0, int(peak) / 2**20, float(cpu))


def progress(name: str, run: Run) -> Run:
    """One run's figures on stderr as it ends (a whole table comes only at the end)."""
    print(f"{name}: {run.wall:.1f} s, {run.peak:.2f} GiB, CPU {run.cpu:.1f} s, load "
          f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    return run


def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.wav", Path(tmp) / "out.wav"
        make_file(src, args.minutes)
        jobs = {"librosa script": [sys.executable, "-c", LIBROSA, str(src), str(out)],
                "specpaint roundtrip": [*specpaint(), "roundtrip", str(src), "-o", str(out),
                                        "--bits", "float"]}
        for load in ("idle", "loaded"):
            stop = multiprocessing.Event()
            spinners = [multiprocessing.Process(target=_spin, args=(stop,))
                        for _ in range(os.cpu_count() if load == "loaded" else 0)]
            for p in spinners:
                p.start()
            try:
                for name, cmd in jobs.items():
                    runs = [measure(cmd) for _ in range(args.runs)]
                    rows.append((name, load, statistics.median(r[0] for r in runs),
                                 max(r[1] for r in runs)))
            finally:
                stop.set()
                for p in spinners:
                    p.join()
    table = format_table(rows, args)
    print(table)
    if not args.no_write:
        write_section("bench_process", "Whole process (cpu)", table, types.SimpleNamespace(
            type="cpu"))


def format_table(rows, args) -> str:
    lines = [f"{args.minutes:g}-minute stereo 44.1 kHz 16-bit WAV in, float WAV out; each a "
             f"fresh process; median wall time of {args.runs} runs, peak RSS; loaded: one "
             f"busy process per core ({os.cpu_count()}) running meanwhile.", "",
             "| process | CPU | wall | peak memory | vs librosa | target | met |",
             "|---|---|---:|---:|---:|---:|:-:|"]
    peer = {load: (t, m) for name, load, t, m in rows if name.startswith("librosa")}
    for name, load, wall, memory in rows:
        ratio = f"{wall / peer[load][0]:.2f}x time, {memory / peer[load][1]:.2f}x memory"
        ours = name.startswith("specpaint")
        met = wall <= TARGET_TIME * peer[load][0] and memory <= TARGET_MEMORY * peer[load][1]
        lines.append(f"| {name} | {load} | {wall:.2f} s | {memory:.2f} GiB | "
                     f"{ratio if ours else ''} | {'0.6x time, 1x memory' if ours else ''} | "
                     f"{('yes' if met else 'no') if ours else ''} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
