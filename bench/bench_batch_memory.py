"""What a batch's memory budget rests on: a file's painting peak over its
document's size (app.batch.budget.PEAK_OVER_DOCUMENT), measured; and, as
root where a memory control group can be made, a batch whose two workers would
not fit together, run in such a group.

    .venv/bin/python bench/bench_batch_memory.py [--minutes 5] [--runs 3] [--no-write]

Each peak is a fresh process's: its resident memory at its most (ru_maxrss) less
what it held before loading the file, a stroke across the whole file painted
and the result resynthesized, as a batch paints it; median of the runs.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_engine import make_file, write_section  # noqa: E402
from tests.memory_group import memory_group, most_used, run_in  # noqa: E402

ANALYSES = {"STFT, hop 512": {"transform": "stft"},
            "STFT, hop 128": {"transform": "stft", "hop": 128},
            "constant-Q": {"transform": "cq"}}

CHILD = """
import json, resource, sys
from app.batch.jobs import Settings
from app.batch.stacks import paint_audio
from engine.io.audio import load
from engine.model.document import document_bytes
from engine.transforms import make
analysis = json.loads(sys.argv[2])
before = int(open("/proc/self/statm").read().split()[1]) * 4096
audio = load(sys.argv[1])
stroke = {"preset": "hard-eraser", "points": [[0, 440], [audio.duration, 440]]}
paint_audio(audio, Settings([stroke], {**analysis, "device": "cpu"}))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t = make(audio.sample_rate, analysis["transform"], "cpu",
         **{k: v for k, v in analysis.items() if k != "transform"})
print(json.dumps([peak - before, document_bytes(audio.channels, audio.frames, t)]))
"""


def peaks(path: Path, analysis: dict, runs: int) -> tuple[float, int]:
    """Median peak growth (bytes) of ``runs`` fresh processes, and the document's size."""
    grown, size = [], 0
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", CHILD, str(path), json.dumps(analysis)],
                             cwd=ROOT, capture_output=True, text=True, check=True)
        peak, size = json.loads(out.stdout)
        grown.append(peak)
    return statistics.median(grown), size


def in_a_group(folder: Path, limit: int) -> dict | None:
    """Five 30 s stereo files at hop 32 painted by two workers in a ``limit``-byte memory
    group: wall seconds, files done and the group's most used; None where no group can
    be made here."""
    import numpy as np
    import soundfile as sf

    rate = 44100
    x = np.random.default_rng(0).uniform(-0.3, 0.3, (30 * rate, 2)).astype(np.float32)
    (folder / "takes").mkdir()
    for i in range(5):
        sf.write(folder / "takes" / f"take{i}.wav", x, rate, subtype="PCM_16")
    with memory_group(limit) as group:
        if group is None:
            return None
        start = time.perf_counter()
        run_in(group, "-m", "app.main", "batch", str(folder / "takes"), "-o",
               str(folder / "out"), "--preset", "hard-eraser", "--line", "0:1000,30:1000",
               "--hop", "32", "--jobs", "2")
        seconds, used = time.perf_counter() - start, most_used(group)
    report = json.loads((folder / "out" / "batch-report.json").read_text())
    return {"seconds": seconds, "done": report["done"], "used": used}


def main() -> None:
    from app.batch.budget import PEAK_OVER_DOCUMENT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    rows = [f"A {args.minutes:g}-minute stereo 44.1 kHz file, a hard-eraser stroke across "
            f"all of it; median of {args.runs} fresh processes (`bench/bench_batch_memory.py`)."
            "\n", "| analysis | document | peak growth | ratio | estimate's ratio | covered |",
            "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "take.wav"
        make_file(path, args.minutes)
        for name, analysis in ANALYSES.items():
            grown, size = peaks(path, analysis, args.runs)
            ratio, estimate = grown / size, PEAK_OVER_DOCUMENT[analysis["transform"]]
            rows.append(f"| {name} | {size / 2**30:.2f} GiB | {grown / 2**30:.2f} GiB | "
                        f"{ratio:.2f} | {estimate:.2f} | {'yes' if estimate >= ratio else 'NO'} |")
        group = in_a_group(Path(tmp), 2 << 30)
    if group is not None:
        rows += ["", "Five 30 s stereo files at hop 32, a stroke across each, `--jobs 2`, in a "
                 "2 GiB memory control group (each worker's document about 0.7 GiB):", "",
                 "| wall | files done | most the group used |", "|---|---|---|",
                 f"| {group['seconds']:.1f} s | {group['done']} of 5 | "
                 f"{group['used'] / 2**30:.2f} GiB |"]
    table = "\n".join(rows)
    print(table)
    if not args.no_write:
        import torch

        write_section("bench_batch_memory", "A batch's memory: peaks against the estimate",
                      table, torch.device("cpu"))


if __name__ == "__main__":
    main()
