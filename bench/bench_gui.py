"""GUI figures under Xvfb + Mesa llvmpipe, on a 10-minute stereo 44.1 kHz file:

- stroke latency: from a mouse-move event to the swapped frame holding its
  pixels (QOpenGLWidget.frameSwapped), p50/p95 over the moves of 5 strokes;
- frame time while panning (middle-drag), p50/p95;
- launch to first complete frame with the demo (a fresh process each run), and
  the floor under it: a process that imports torch and shows one empty GL frame;
- opening the 10-minute file: to the first complete frame, and to its audio;
- the GUI thread's longest stall (a 10 ms heartbeat) while opening and
  exporting the file in workers, while painting, and during a stroke across
  90 s of the zoomed-out file (painted progressively), and a full pass of
  the garbage collector (start-up's objects frozen, as the app does).

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python bench/bench_gui.py [--no-write]
"""

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui.start import configure_opengl, freeze_startup_objects  # noqa: E402
from bench.bench_engine import make_file, write_section  # noqa: E402

LAUNCH = """
import sys, time
start = time.perf_counter()
sys.path.insert(0, {root!r})
from app.gui.start import configure_opengl
configure_opengl()
from PySide6.QtWidgets import QApplication
from app.assets import DEMO
from app.gui.window import MainWindow
app = QApplication([])
w = MainWindow("cpu"); w.show(); w.open_path(DEMO)
def swapped():
    if w.session is not None and w.canvas.complete:
        print(time.perf_counter() - start, flush=True); app.quit()
    else:
        w.canvas.update()
w.canvas.frameSwapped.connect(swapped)
app.exec()
"""

# The floor under any launch of ours: the interpreter, torch, Qt and one empty GL frame.
FLOOR = """
import sys
sys.path.insert(0, {root!r})
import torch
from app.gui.start import configure_opengl
configure_opengl()
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QApplication
app = QApplication([])
w = QOpenGLWidget(); w.resize(1200, 800); w.show()
w.frameSwapped.connect(app.quit)
app.exec()
"""


def launch_times(runs: int, script: str = LAUNCH) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", script.format(root=str(ROOT))],
                             capture_output=True, text=True, timeout=120)
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        times.append(wall)  # process start (interpreter included) to first complete frame
    return times


class Heartbeat:
    """Largest gap between 10 ms timer ticks: how long the GUI thread was blocked."""

    def __init__(self):
        from PySide6.QtCore import QTimer

        self.last, self.worst = time.perf_counter(), 0.0
        self.timer = QTimer(interval=10, timeout=self.tick)
        self.timer.start()

    def tick(self):
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def reset(self):
        self.last, self.worst = time.perf_counter(), 0.0


def wait_for(predicate, timeout=120.0):
    """Run the event loop until ``predicate()`` (checked every 2 ms). Not a loop of
    processEvents(): spinning holds the GIL and starves the workers (it made
    opening the 10-minute file look 2x slower than in the app)."""
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.perf_counter() + timeout
    loop = QEventLoop()
    poll = QTimer(interval=2)
    poll.timeout.connect(lambda: (predicate() or time.perf_counter() > deadline)
                         and loop.quit())
    poll.start()
    if not predicate():
        loop.exec()
    poll.stop()
    if not predicate():
        raise SystemExit("timed out")


def drawn(canvas, swaps: list[float]) -> None:
    """Draw ``canvas`` until a frame is complete (every tile in); ``swaps``: the times
    of its frameSwapped signals."""
    for _ in range(200):
        canvas.update()
        n = len(swaps)
        wait_for(lambda n=n: len(swaps) > n)
        if canvas.complete:
            return


def collection_time() -> float:
    """Seconds a full pass of the cyclic garbage collector takes, median of 3."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    configure_opengl()
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.gui.window import MainWindow

    app = QApplication([])
    window = MainWindow("cpu")
    window.resize(1600, 900)
    window.show()
    stalls = {}
    unfrozen = collection_time()
    freeze_startup_objects()  # as app.gui.start.run does
    stalls[f"a full garbage collection ({unfrozen * 1000:.0f} ms with start-up objects "
           "not frozen)"] = collection_time()
    canvas = window.canvas
    swaps: list[float] = []
    canvas.frameSwapped.connect(lambda: swaps.append(time.perf_counter()))
    beat = Heartbeat()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ten-minutes.wav"
        make_file(path, args.minutes)
        beat.reset()
        opened = time.perf_counter()
        window.open_path(path)
        wait_for(lambda: window.session is not None)
        drawn(canvas, swaps)
        first_frame = time.perf_counter() - opened
        wait_for(lambda: window.jobs.worker is not None and not window.jobs.worker.isRunning())
        opening = {"first complete frame": first_frame,
                   "audio ready": time.perf_counter() - opened}
        stalls["open (worker)"] = beat.worst
        drawn(canvas, swaps)
        window.brush_panel.preset_box.setCurrentText("soft-eraser")
        view = canvas.view
        latencies = []
        beat.reset()
        for run in range(args.runs):
            t = 30.0 + 60.0 * run
            view.t0, view.t1 = t - 5.0, t + 25.0  # a 30 s window, as when editing
            drawn(canvas, swaps)
            start = QPoint(round(view.x_of(t)), round(view.y_of(2000)))
            QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
            for i in range(1, 61):
                n = len(swaps)
                sent = time.perf_counter()
                QTest.mouseMove(canvas, start + QPoint(6 * i, round(20 * np.sin(i / 6))))
                wait_for(lambda n=n: len(swaps) > n and canvas.complete)
                latencies.append(swaps[-1] - sent)
            QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(360, 0))
        stalls["painting"] = beat.worst

        view.t0, view.t1 = 0.0, args.minutes * 60  # zoomed out: the whole file
        drawn(canvas, swaps)
        beat.reset()
        y = round(view.y_of(3000))
        started = time.perf_counter()
        QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(round(view.x_of(60)), y))
        for k in range(1, 4):  # a quick flick: 30 s of audio per mouse move
            QTest.mouseMove(canvas, QPoint(round(view.x_of(60 + 30 * k)), y))
            app.processEvents()
        QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(round(view.x_of(150)), y))
        wait_for(lambda: window.session.idle)
        opening["90 s zoomed-out stroke, painted and heard"] = time.perf_counter() - started
        stalls["90 s stroke, zoomed out"] = beat.worst

        frame_times = []
        view.t0, view.t1 = 100.0, 130.0
        drawn(canvas, swaps)
        at = QPoint(800, 400)
        QTest.mousePress(canvas, Qt.MouseButton.MiddleButton, pos=at)
        for i in range(1, 121):
            n = len(swaps)
            sent = time.perf_counter()
            QTest.mouseMove(canvas, at - QPoint(8 * i, 0))
            wait_for(lambda n=n: len(swaps) > n)
            frame_times.append(swaps[-1] - sent)
        QTest.mouseRelease(canvas, Qt.MouseButton.MiddleButton, pos=at - QPoint(960, 0))

        beat.reset()
        out = Path(tmp) / "export.wav"
        window.files.export_audio(out)
        wait_for(lambda: out.exists() and not window.jobs.worker.isRunning())
        stalls["export (worker)"] = beat.worst
        window.undo_stack.setClean()
        window.close()

    launches = launch_times(args.runs), launch_times(args.runs, FLOOR)
    table = format_table(np.array(latencies) * 1000, np.array(frame_times) * 1000, launches,
                         opening, stalls, args)
    print(table)
    if not args.no_write:
        import torch

        write_section("bench_gui", "GUI (cpu, Xvfb + Mesa llvmpipe)", table, torch.device("cpu"))


def format_table(latency, frames, launches, opening, stalls, args) -> str:
    p = np.percentile
    launch, floor = launches
    lines = [f"{args.minutes:g}-minute stereo 44.1 kHz file, 1600x900 window, soft-eraser; "
             f"{args.runs} strokes x 60 moves; Xvfb + Mesa llvmpipe", "",
             "| measure | p50 | p95 | target | met |", "|---|---:|---:|---:|:-:|",
             f"| mouse move -> swapped frame with its pixels | {p(latency, 50):.1f} ms | "
             f"{p(latency, 95):.1f} ms | p95 33 ms | {'yes' if p(latency, 95) <= 33 else 'no'} |",
             f"| frame time while panning (30 s visible) | {p(frames, 50):.1f} ms | "
             f"{p(frames, 95):.1f} ms | | |",
             f"| launch to first complete frame, demo (median of {len(launch)}) | "
             f"{statistics.median(launch):.2f} s | | 3 s | "
             f"{'yes' if statistics.median(launch) <= 3 else 'no'} |",
             f"| floor: interpreter, `import torch`, Qt, one empty GL frame | "
             f"{statistics.median(floor):.2f} s | | | |", "",
             f"| {args.minutes:g}-minute file | s |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.2f} |" for name, seconds in opening.items()]
    lines += ["",
             "| GUI thread's longest stall (10 ms heartbeat) | ms | target | met |",
             "|---|---:|---:|:-:|"]
    lines += [f"| {name} | {gap * 1000:.0f} | 100 | {'yes' if gap <= 0.1 else 'no'} |"
              for name, gap in stalls.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
