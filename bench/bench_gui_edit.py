"""Time edits in the window, on a 10-minute stereo 44.1 kHz file (STFT): Edit > Cut
of 1 s at 5:00, Edit > Paste back, and the undo of each; for each, the time from
the menu entry to the edited file's first complete frame, and the GUI thread's
longest stall meanwhile (a 10 ms heartbeat: the edit runs in a worker). Median of
``--runs``.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python bench/bench_gui_edit.py
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui.start import configure_opengl  # noqa: E402
from bench.bench_engine import make_file  # noqa: E402
from bench.bench_gui import Heartbeat, drawn, wait_for  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args()
    configure_opengl()
    from PySide6.QtWidgets import QApplication

    from app.gui.window import MainWindow
    from app.session.selection import Selection

    app = QApplication([])
    window = MainWindow("cpu", autosave_folder=Path(tempfile.mkdtemp()))
    window.resize(1600, 900)
    window.show()
    canvas, stack = window.canvas, window.undo_stack
    swaps: list[float] = []
    canvas.frameSwapped.connect(lambda: swaps.append(time.perf_counter()))

    def timed(do, count: int) -> tuple[float, float]:
        beat = Heartbeat()
        start = time.perf_counter()
        do()
        wait_for(lambda: stack.index() == count and window.jobs.idle())
        drawn(canvas, swaps)
        took = time.perf_counter() - start
        beat.timer.stop()
        return took, beat.worst

    rows: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ten-minutes.wav"
        make_file(path, args.minutes)
        window.open_path(path)
        wait_for(lambda: window.session is not None and window.jobs.idle())
        canvas.view.t0, canvas.view.t1 = 290.0, 320.0
        drawn(canvas, swaps)
        nyquist = window.doc.sample_rate / 2
        for _ in range(args.runs):
            window.selection.set_selection(Selection.rect(300.0, 301.0, f_lo=0, f_hi=nyquist))
            rows.setdefault("Edit > Cut 1 s at 5:00", []).append(timed(window.edits.cut, 1))
            canvas.set_playhead(300.0)
            rows.setdefault("Edit > Paste it back", []).append(timed(window.edits.paste, 2))
            rows.setdefault("undo the paste", []).append(timed(stack.undo, 1))
            rows.setdefault("undo the cut", []).append(timed(stack.undo, 0))
        stack.setClean()
        window.close()
    print(f"# {args.minutes:g}-minute stereo 44.1 kHz, STFT, under Xvfb; median of {args.runs}")
    print("| in the window | to its first complete frame, ms | GUI thread's longest stall, ms |")
    print("|---|---:|---:|")
    for name, values in rows.items():
        print(f"| {name} | {statistics.median(v[0] for v in values) * 1000:.0f} | "
              f"{statistics.median(v[1] for v in values) * 1000:.0f} |")
    del app


if __name__ == "__main__":
    main()
