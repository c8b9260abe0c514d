"""What a layer operation in the window costs the GUI thread (PaintSession, no
window: QT_QPA_PLATFORM=offscreen): acting twice in a row (mute then choose another
layer; mute then unmute; ten ticks of the Gain box), each timed from the click to
the event loop's next turn, beside the peer in the same run: the same second
action after ``finish_mix`` (the whole remix waited for, what every layer action
did before issue 39's review). Median of ``--runs``, wall and CPU time.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_gui_layers.py [--seconds 60]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtGui import QUndoStack  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.gui.services.editing import PaintSession, StrokeCommand  # noqa: E402
from app.session import layer_ops as ops  # noqa: E402
from tests.conftest import document  # noqa: E402


def timed(action) -> tuple[float, float]:
    """Wall and CPU ms of ``action``."""
    w, c = time.perf_counter(), time.process_time()
    action()
    return 1000 * (time.perf_counter() - w), 1000 * (time.process_time() - c)


def scenario(seconds: float, drained: bool) -> dict[str, tuple[float, float]]:
    x = (0.1 * np.random.default_rng(0).standard_normal((2, int(44100 * seconds))))
    doc = document(x.astype(np.float32), 44100, n_fft=2048)
    stack = QUndoStack()
    session = PaintSession(doc, stack)

    def do(op):
        session.finish_mix() if drained else session.finish()
        stack.push(StrokeCommand(doc, op(doc)))
        session.catch_up_soon()

    out = {"first layer operation (new layer)": timed(lambda: do(ops.new_layer))}
    do(lambda d: ops.set_mixing(d, 0, mute=True))
    out["choose another layer right after a mute"] = timed(
        lambda: (session.finish_mix() if drained else session.finish(), ops.activate(doc, 0)))
    do(lambda d: ops.set_mixing(d, 0, mute=False))
    do(lambda d: ops.set_mixing(d, 0, mute=True))
    out["unmute right after a mute"] = timed(lambda: do(
        lambda d: ops.set_mixing(d, 0, mute=False)))
    out["ten ticks of the Gain box"] = timed(lambda: [do(
        lambda d, g=g: ops.set_mixing(d, 0, gain=g)) for g in np.linspace(0.5, 0.95, 10)])
    out["(undo steps the ticks made)"] = (stack.count() - 5, 0.0)
    session.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    QApplication([])
    print(f"load {os.getloadavg()[0]:.1f}; {args.seconds:g} s stereo 44.1 kHz, n_fft 2048")
    runs = {False: [], True: []}
    for _ in range(args.runs):
        for drained in (False, True):
            runs[drained].append(scenario(args.seconds, drained))
    print("| GUI thread, ms (wall / CPU) | now | whole remix waited for (before) |")
    print("|---|---:|---:|")
    for key in runs[False][0]:
        cells = []
        for drained in (False, True):
            wall = statistics.median(r[key][0] for r in runs[drained])
            cpu = statistics.median(r[key][1] for r in runs[drained])
            cells.append(f"{wall:.0f}" if key.startswith("(") else f"{wall:.0f} / {cpu:.0f}")
        print(f"| {key} | {cells[0]} | {cells[1]} |")
    print(f"load {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
