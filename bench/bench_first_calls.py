"""Whether fresh processes paint one stroke to the same bits (engine/runtime/first_calls.py):
``--processes`` fresh interpreters each open one file, paint one hard-eraser
stroke and hash the output, with today's engine and with the engine and brushes of
``--before`` (unpacked from git into a temporary folder). Counted: the processes
whose STFT window is off torch's float64 Hann window by more than 1e-6, and the
distinct outputs. The rate depends on the machine's cores and load.

    .venv/bin/python bench/bench_first_calls.py [--processes 100] [--before f174aa7]
                                                [--no-write]
"""

import argparse
import collections
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_engine import write_section  # noqa: E402

CHILD = """
import hashlib, sys, torch
from app.session.editor import Editor
from engine.model.document import Document
doc = Document.open(sys.argv[1], device="cpu")
exact = torch.hann_window(2048, dtype=torch.float64)
editor = Editor(doc)
editor.run_script([{"preset": "hard-eraser", "points": [[0.1, 1000.0], [0.6, 1000.0]]}])
print(float((doc.transform.window.double() - exact).abs().max()),
      hashlib.md5(editor.audio().tobytes()).hexdigest())
"""


def runs(code_root: Path, take: Path, processes: int) -> tuple[int, int]:
    """(processes with a wrong window, distinct outputs) over ``processes`` fresh runs."""
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    wrong, outputs = 0, collections.Counter()
    for _ in range(processes):
        out = subprocess.run([sys.executable, "-c", CHILD, str(take)], capture_output=True,
                             text=True, env=env, cwd=code_root, check=True).stdout.split()
        wrong += float(out[0]) > 1e-6
        outputs[out[1]] += 1
    return wrong, len(outputs)


def unpack(rev: str, folder: Path) -> Path:
    """engine/, brushes/ and the presets as they were at ``rev``, under ``folder``."""
    archive = subprocess.run(["git", "archive", rev, "engine", "brushes", "assets/presets"],
                             cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=100)
    parser.add_argument("--before", default="f174aa7")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/")
    args = parser.parse_args()
    import torch

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        take = Path(folder) / "take.wav"  # 0.8 s: a 1 kHz tone in noise, float
        t = np.arange(17640) / 22050
        noise = np.random.default_rng(12345).normal(0, 0.05, t.size)
        sf.write(take, (0.3 * np.sin(2 * np.pi * 1000 * t) + noise).astype(np.float32), 22050,
                 subtype="FLOAT")
        for label, code in ((f"before ({args.before})", unpack(args.before, Path(folder) / "old")),
                            ("now", ROOT)):
            wrong, distinct = runs(code, take, args.processes)
            rows.append(f"| {label} | {wrong} of {args.processes} | {distinct} |")
    table = "\n".join([
        f"One stroke painted in {args.processes} fresh processes, {os.cpu_count()} cores, "
        f"{torch.get_num_threads()} threads, torch {torch.__version__}", "",
        "| code | STFT window wrong | distinct outputs |", "|---|---:|---:|", *rows])
    print(table)
    if not args.no_write:
        write_section("bench_first_calls", "Same bits in every process (cpu)", table,
                      torch.device("cpu"))


if __name__ == "__main__":
    main()
