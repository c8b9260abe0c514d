"""Atomic writes into a crowded folder, as a batch of thousands of files does: the
time per write (temporary file, fsync, rename, stale-part sweep) into a folder that
already holds ``--existing`` files, today's ``engine/io/atomic.py`` against the code of
``--before`` (which listed the folder on every write), median of ``--runs``.

    .venv/bin/python bench/bench_atomic.py [--existing 20000] [--writes 500] [--runs 3]
                                           [--before d64026b] [--no-write]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_engine import module_at, write_section  # noqa: E402
from engine.io import atomic  # noqa: E402
from engine.runtime.device import pick_device  # noqa: E402


def per_write(module, existing: int, writes: int, runs: int) -> float:
    """Median ms per ``write_bytes`` into a folder of ``existing`` files."""
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(dir=ROOT / "bench") as folder:
            folder = Path(folder)
            for i in range(existing):
                (folder / f"old{i:06d}.wav").touch()
            t0 = time.perf_counter()
            for i in range(writes):
                module.write_bytes(folder / f"new{i:06d}.wav", b"x" * 1024)
            times.append((time.perf_counter() - t0) / writes)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--existing", type=int, default=20000)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default="d64026b")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as copy:
        before = module_at(args.before, "engine/io/atomic.py", copy)
        rows = []
        for existing in (0, args.existing):
            now = per_write(atomic, existing, args.writes, args.runs)
            then = per_write(before, existing, args.writes, args.runs)
            rows.append(f"| {existing} | {now:.2f} ms | {then:.2f} ms |")
    table = "\n".join([
        f"{args.writes} atomic writes of 1 KiB into one folder (fsync and rename each), "
        f"median of {args.runs}; the folder on this machine's disk.", "",
        f"| files already in the folder | per write | per write, `{args.before}` |",
        "|---:|---:|---:|", *rows])
    print(table)
    if not args.no_write:
        write_section("bench_atomic", "Atomic writes into a crowded folder", table,
                      pick_device("cpu"))


if __name__ == "__main__":
    main()
