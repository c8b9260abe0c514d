"""Selection masks over a 10-minute stereo 44.1 kHz document, STFT and constant-Q:
the weight of every cell a selection holds (what "play selection alone" and
"fill selection" compute before they start), median of ``--runs``.

    .venv/bin/python bench/bench_selection.py [--runs 5] [--before REV] [--no-write]

The same selections are timed with ``app/session/selection.py`` as it was at git
revision ``--before`` (default ``d64026b``: per-column and per-frame Python
loops) in the same run, and its masks are checked equal to today's.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.session.selection import Selection  # noqa: E402
from bench.bench_brushes import make_doc  # noqa: E402
from bench.bench_engine import module_at  # noqa: E402


def selections() -> dict[str, Selection]:
    turn = np.linspace(0, 2 * np.pi, 400, endpoint=False)
    lasso = Selection("lasso", tuple((300 + 250 * np.cos(a),
                                      3000 + 2000 * np.sin(a) * (1 + 0.2 * np.sin(7 * a)))
                                     for a in turn))
    path = tuple((float(t), 200 + 50 * np.sin(t / 10)) for t in np.linspace(10, 500, 300))
    return {"rectangle, inverted": Selection.rect(100, 200, f_lo=500, f_hi=4000, inverted=True),
            "lasso over 500 s": lasso,
            "lasso over 500 s, feathered 20 ms / 50 Hz": lasso.changed(feather_ms=20,
                                                                         feather_hz=50),
            "harmonic over 490 s, 8 partials": Selection("harmonic", path, partials=8)}


def timed(selection, doc, runs: int) -> tuple[float, np.ndarray]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        mask = selection.mask(doc)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, mask.numpy()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", default="d64026b")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        before = module_at(args.before, "app/session/selection.py", folder)
        for transform in ("stft", "cq"):
            doc = make_doc(10, "cpu", transform)
            for name, sel in selections().items():
                now, mask = timed(sel, doc, args.runs)
                old_sel = before.Selection(**{**sel.__dict__})
                then, old_mask = timed(old_sel, doc, max(1, args.runs // 2))
                if not np.array_equal(mask, old_mask):
                    raise SystemExit(f"{transform} {name}: the masks differ")
                rows.append(f"| {transform} | {name} | {mask.shape[0]} x {mask.shape[1]} | "
                            f"{now:.0f} ms | {then:.0f} ms | {then / now:.0f}x |")
            del doc
    table = "\n".join([
        f"Selection masks on a 10-minute stereo 44.1 kHz document, median of {args.runs} "
        f"(of {max(1, args.runs // 2)} for the code of `{args.before}`); the masks are "
        "equal bit for bit; 2 CPUs. Feathering (a triangle filter along each axis, torch "
        "conv1d) is most of a feathered mask's time.", "",
        "| transform | selection | cells | mask | before | speed-up |",
        "|---|---|---:|---:|---:|---:|", *rows])
    print(table)
    if not args.no_write:
        from bench.bench_engine import write_section
        from engine.runtime.device import pick_device

        write_section("bench_selection", "Selection masks", table, pick_device("cpu"))


if __name__ == "__main__":
    main()
