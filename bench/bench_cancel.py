"""How long Cancel takes to stop a whole-file repair (issue 50, item 6: 5.5-5.9 s on
10 minutes of stereo; at most 1 s): each module's prepare (what the GUI's worker
runs) on 10 minutes of stereo 44.1 kHz, cancelled at several moments of its run;
the time from the cancel to the Cancelled raised, median and worst.

    .venv/bin/python bench/bench_cancel.py [--minutes 10] [--modules ...]
"""

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.session.repairs import prepare  # noqa: E402
from engine.errors import Cancelled  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402
from engine.model.resynth import Resynthesizer  # noqa: E402

SR = 44100


def material(minutes: float) -> np.ndarray:
    rng = np.random.default_rng(2)
    n = round(minutes * 60 * SR)
    t = np.arange(n) / SR
    x = 0.1 * np.sin(2 * np.pi * 440 * t) + 0.02 * np.sin(2 * np.pi * 50.1 * t)
    x = np.stack([x, np.roll(x, 300)]) + rng.normal(0, 0.01, (2, n))
    for i in rng.integers(0, n - 4, round(minutes * 600)):
        x[:, i:i + 3] += 0.3
    x[:, n // 3:n // 3 + 30 * SR] = np.clip(4 * x[:, n // 3:n // 3 + 30 * SR], -0.3, 0.3)
    return x.astype(np.float32)


def stop_time(doc: Document, audio: np.ndarray, name: str, after: float) -> float | None:
    """Seconds from the cancel (``after`` s into the run) to the Cancelled; None if it
    ended first."""
    cancel, ended = threading.Event(), {}

    def work():
        try:
            prepare(doc, audio, name, cancel=cancel)
        except Cancelled:
            ended["at"] = time.perf_counter()

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(after)
    if not worker.is_alive():
        return None
    asked = time.perf_counter()
    cancel.set()
    worker.join()
    return ended["at"] - asked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--at", type=float, nargs="*", default=[0.5, 2.0, 5.0, 9.0])
    parser.add_argument("--modules", nargs="*", default=["denoise", "declick", "dehum",
                                                         "declip"])
    args = parser.parse_args()
    doc = Document(Audio(material(args.minutes), SR), device="cpu")
    audio = Resynthesizer(doc).waveform()
    print("| module | cancel at (s) | stop took (s): each | median | worst |")
    print("|---|---|---|---:|---:|")
    for name in args.modules:
        took = [stop_time(doc, audio, name, at) for at in args.at]
        shown = [t for t in took if t is not None]
        print(f"| {name} | {', '.join(f'{a:g}' for a in args.at)} | "
              f"{', '.join('ended' if t is None else f'{t:.2f}' for t in took)} | "
              f"{statistics.median(shown) if shown else float('nan'):.2f} | "
              f"{max(shown, default=float('nan')):.2f} |", flush=True)


if __name__ == "__main__":
    main()
