"""Time edits on a 10-minute stereo 44.1 kHz document, STFT and constant-Q: delete,
cut, paste (inserted) and trim at 5:00 (the middle) and at 0:30 (early: the frames
after an edit are analysed again, so its cost follows what lies after it), and the
undo of each; median of ``--runs``. Beside them, in the same run, sox deleting,
trimming and splicing the same file (which reads and writes it: ours is in memory).

    .venv/bin/python bench/bench_edit.py [--runs 3] [--transforms stft cq]
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.session.editor import Editor  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402

SR, MINUTES = 44100, 10


def music(seconds: float) -> np.ndarray:
    rng = np.random.default_rng(1)
    t = np.arange(round(seconds * SR)) / SR
    tones = sum(0.05 * np.sin(2 * np.pi * f * t) for f in (110, 220, 330, 440, 1234))
    return np.stack([tones + 0.02 * rng.standard_normal(t.size) for _ in range(2)]) \
        .astype(np.float32)


def median_ms(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def edit_and_undo(ed: Editor, verb: str, args: dict, runs: int) -> tuple[float, float]:
    """Median ms of the edit (to its output, as heard and exported) and of its undo."""
    edits, undos, clipboard = [], [], ed.clipboard
    for _ in range(runs):
        t0 = time.perf_counter()
        getattr(ed, verb)(**args)
        ed.audio()
        t1 = time.perf_counter()
        ed.undo()
        ed.audio()
        edits.append(t1 - t0)
        undos.append(time.perf_counter() - t1)
        ed.clipboard = clipboard
    return statistics.median(edits) * 1000, statistics.median(undos) * 1000


def ours(x: np.ndarray, transform: str, runs: int) -> tuple[list[tuple[str, float, float]], int]:
    """The rows, and the bytes a 1-minute time clip holds."""
    ed = Editor(Document(Audio(x, SR), transform=transform, device="cpu"),
                history_limit=64 << 30)
    ed.audio()
    rows, clip = [], 0
    for at in (300.0, 30.0):
        ed.copy(start=at, end=at + 60)
        clip = ed.clipboard.nbytes
        for verb, args in (("delete", dict(start=at, end=at + 1)),
                           ("cut", dict(start=at, end=at + 1)),
                           ("paste", dict(at=at)),
                           ("trim", dict(start=at, end=at + 60))):
            rows.append((f"{verb} at {at:g} s", *edit_and_undo(ed, verb, args, runs)))
    return rows, clip


def sox_rows(x: np.ndarray, runs: int, folder: Path) -> list[tuple[str, float]]:
    src, clip = folder / "take.wav", folder / "clip.wav"
    sf.write(src, x.T, SR, subtype="FLOAT")
    sf.write(clip, x[:, 300 * SR:360 * SR].T, SR, subtype="FLOAT")
    head, tail = folder / "head.wav", folder / "tail.wav"
    sf.write(head, x[:, :300 * SR].T, SR, subtype="FLOAT")
    sf.write(tail, x[:, 300 * SR:].T, SR, subtype="FLOAT")
    out = folder / "out.wav"
    jobs = {"delete at 300 s": ["trim", "0", "=300", "=301"],
            "trim at 300 s": ["trim", "300", "60"]}
    rows = [(name, median_ms(lambda a=args: subprocess.run(["sox", "-V1", src, out, *a],
                                                           check=True), runs))
            for name, args in jobs.items()]
    rows.append(("paste at 300 s (head + clip + tail)", median_ms(
        lambda: subprocess.run(["sox", "-V1", head, clip, tail, out], check=True), runs)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--transforms", nargs="+", default=["stft", "cq"])
    args = parser.parse_args()
    x = music(MINUTES * 60)
    results = [ours(x, t, args.runs) for t in args.transforms]
    columns = [rows for rows, _ in results]
    print(f"# {MINUTES}-minute stereo {SR} Hz; median of {args.runs}; a 1-minute clip holds "
          f"{results[0][1] / 2**20:.1f} MiB")
    print("| edit | " + " | ".join(f"{t} edit ms | {t} undo ms" for t in args.transforms) + " |")
    print("|---|" + "---:|" * 2 * len(args.transforms))
    for i, (name, _, _) in enumerate(columns[0]):
        print(f"| {name} | " + " | ".join(f"{c[i][1]:.0f} | {c[i][2]:.1f}" for c in columns)
              + " |")
    if shutil.which("sox"):
        with tempfile.TemporaryDirectory() as folder:
            for name, ms in sox_rows(x, args.runs, Path(folder)):
                print(f"| sox: {name} (file in, file out) | {ms:.0f} |")


if __name__ == "__main__":
    main()
