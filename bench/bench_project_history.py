"""A working session's history in a project (issue 50, item 4): a 3-minute mono
16-bit take (espeak-ng speech repeated, hiss, 50 Hz hum, 300 loud clicks and 300 faint
ones), five whole-file repairs through the Editor (de-hum, de-noise, de-click at 2,
de-noise at 6 dB, de-click at 8: the faint clicks), then the project saved: its size
beside the source's, save and open times, the undo steps kept, and undo after reopening
checked bit for bit; then one more repair and the autosave it makes (the snapshot, on
the GUI's thread, timed apart from the writing, in a worker).

    .venv/bin/python bench/bench_project_history.py [--seconds 180] [--keep DIR]
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.project.read import parts_folder  # noqa: E402
from app.project.saved_history import keep_within  # noqa: E402
from app.project.write import EditTracker, load_project, save_project, snapshot  # noqa: E402
from app.session.editor import Editor  # noqa: E402

RATE = 44100
# the first de-click, at 2, takes the loud clicks; the second, at 8, the faint ones (at the
# default the first takes nearly all of both, and a second finds next to nothing)
REPAIRS = (("dehum", {}), ("denoise", {}), ("declick", {"sensitivity": 2.0}),
           ("denoise", {"amount_db": 6.0}), ("declick", {"sensitivity": 8.0}))


def take(path: Path, seconds: float) -> None:
    """Speech repeated to ``seconds``, with hiss, hum and clicks, 16-bit."""
    speech = Path(path.parent / "speech.wav")
    subprocess.run(["espeak-ng", "-s", "150", "-w", str(speech),
                    "The archive tape has hiss, hum and a few clicks. " * 6], check=True)
    x, rate = sf.read(speech, dtype="float64")
    n = int(seconds * RATE)
    x = np.interp(np.arange(n) * rate / RATE % len(x), np.arange(len(x)), x)
    rng = np.random.default_rng(0)
    t = np.arange(n) / RATE
    x = 0.5 * x / np.abs(x).max() + 0.01 * rng.standard_normal(n) \
        + sum(0.03 / k * np.sin(2 * np.pi * 50 * k * t) for k in (1, 2, 3))
    x[rng.integers(0, n, 300)] += 0.4
    x[rng.integers(0, n, 300)] += 0.05  # fainter: the second de-click's (sensitivity 8)
    sf.write(path, np.clip(x, -1, 1), RATE, subtype="PCM_16")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        source = where / "take.wav"
        take(source, args.seconds)
        ed = Editor.open(source, device="cpu")
        ed.history.limit = 2 << 30  # all six steps in memory (each holds its change too)
        tracker = EditTracker(ed.doc)
        for name, settings in REPAIRS:
            start = time.perf_counter()
            report = ed.repair(name, **settings)
            print(f"{name:8} {time.perf_counter() - start:6.1f} s  {report.line()}")
        project = where / "take.spp"
        kept = keep_within(ed.history.steps, ed.history.position)
        start = time.perf_counter()
        save_project(project, snapshot(ed.doc, tracker, kept), {})
        saved = time.perf_counter() - start
        size, src = project.stat().st_size, source.stat().st_size
        print(f"source {src / 1e6:.1f} MB; project {size / 1e6:.1f} MB ({size / src:.1f}x), "
              f"steps kept {len(kept.steps)} of {len(ed.history.steps)}; save {saved:.1f} s")
        start = time.perf_counter()
        opened = load_project(project, device="cpu")
        print(f"open {time.perf_counter() - start:.1f} s")
        now = opened.doc.mix.clone()
        assert torch.equal(now, ed.doc.mix)
        steps = opened.history.steps
        for step in reversed(steps):
            step.undo(opened.doc)
        ed_steps = ed.history.steps[len(ed.history.steps) - len(steps):]
        for step in reversed(ed_steps):
            step.undo(ed.doc)
        print(f"undo after reopening, bit for bit: {torch.equal(opened.doc.mix, ed.doc.mix)}")
        for step in ed_steps:
            step.redo(ed.doc)
        autosave = where / "autosave-1.spp"
        for label in ("autosave", "autosave after one more step"):
            before = set(parts_folder(autosave).glob("*")) if autosave.exists() else set()
            start = time.perf_counter()
            snap = snapshot(ed.doc, tracker, keep_within(ed.history.steps, ed.history.position))
            gui = time.perf_counter() - start
            save_project(autosave, snap, {}, apart=True)
            took = time.perf_counter() - start - gui
            written = autosave.stat().st_size + sum(
                p.stat().st_size for p in set(parts_folder(autosave).glob("*")) - before)
            print(f"{label}: snapshot (GUI thread) {gui:.2f} s, writing (worker) {took:.1f} s, "
                  f"{written / 1e6:.1f} MB written")
            ed.repair("declick", sensitivity=9.0)


if __name__ == "__main__":
    main()
