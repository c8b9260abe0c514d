"""Engine figures on a generated 10-minute stereo 44.1 kHz file, against
librosa's stft/istft of the same data in the same run.

    .venv/bin/python bench/bench_engine.py [--minutes 10] [--runs 5] [--device cpu]

Prints a table (median of the runs) and writes it into docs/benchmarks.md
between the "bench_engine" markers.
"""

import argparse
import importlib.util
import platform
import resource
import statistics
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

from engine.model.document import Document  # noqa: E402
from engine.model.resynth import Resynthesizer  # noqa: E402
from engine.region import Rect  # noqa: E402
from engine.runtime.device import describe, pick_device  # noqa: E402

TARGETS = {  # seconds, on the project's 2-core CPU machine
    "open + analyze": 1.0, "full resynthesis": 1.5, "incremental resynthesis, 1 s region": 0.010,
    "render 1024x1024 tile, full resolution": 0.010, "render whole file at 1920 px wide": 0.150,
}


def make_file(path: Path, minutes: float) -> None:
    """Music-like test signal: a few partials, slow vibrato, noise floor; 16-bit WAV."""
    sr, n = 44100, int(minutes * 60 * 44100)
    rng = np.random.default_rng(1)
    with sf.SoundFile(path, "w", sr, 2, "PCM_16") as f:
        for start in range(0, n, sr * 10):
            t = np.arange(start, min(n, start + sr * 10)) / sr
            left = 0.3 * np.sin(2 * np.pi * 440 * t + 2 * np.sin(2 * np.pi * 0.5 * t))
            right = 0.2 * np.sin(2 * np.pi * 1000 * t) + 0.1 * np.sin(2 * np.pi * 3000 * t)
            noise = rng.normal(0, 0.01, (len(t), 2))
            f.write(np.stack([left, right], 1) + noise)


def timed(fn, runs: int, setup=None) -> float:
    times = []
    for _ in range(runs):
        state = setup() if setup else None
        start = time.perf_counter()
        fn(state) if setup else fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def parse(parser: argparse.ArgumentParser):
    """The options every engine-side bench takes (--runs, --device, --no-write);
    returns the arguments, the device and a function that waits for it."""
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/")
    args = parser.parse_args()
    device = pick_device(args.device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    return args, device, sync


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--no-librosa", action="store_true")
    args, device, sync = parse(parser)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.wav"
        make_file(path, args.minutes)
        rows = []

        def open_doc():
            doc = Document.open(path, device=device)
            sync()
            return doc

        rows.append(("open + analyze", timed(open_doc, args.runs)))
        doc = open_doc()
        synth = Resynthesizer(doc)
        rows.append(("full resynthesis", timed(synth.full, args.runs)))

        second = int(doc.frame_of(1.0))
        region = Rect(int(doc.bin_of(500)), int(doc.bin_of(1500)), 20 * second, 21 * second)

        def edit():
            mag, phase = doc.read(region)
            doc.write(region, mag * 0.5, phase)

        rows.append(("incremental resynthesis, 1 s region",
                     timed(lambda _: synth.update(), args.runs, setup=edit)))
        tile = Rect(0, 1024, 10_000, 11_024)
        rows.append(("render 1024x1024 tile, full resolution",
                     timed(lambda: doc.render(tile), args.runs)))
        rows.append(("render whole file at 1920 px wide",
                     timed(lambda: doc.render(width=1920, height=1024), args.runs)))

        peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
        peers = {}
        if not args.no_librosa:
            import librosa

            x = doc.audio.samples
            spec = librosa.stft(x, n_fft=2048, hop_length=512)
            peers["open + analyze"] = timed(
                lambda: librosa.stft(sf.read(path, dtype="float32")[0].T, n_fft=2048,
                                     hop_length=512), args.runs)
            peers["full resynthesis"] = timed(
                lambda: librosa.istft(spec, hop_length=512, length=x.shape[1]), args.runs)
            del spec

    table = format_table(rows, peers, peak_rss, device, args)
    print(table)
    if not args.no_write:
        write_section("bench_engine", f"Engine ({device.type})", table, device)


def format_table(rows, peers, peak_rss, device, args) -> str:
    import librosa

    head = (f"{args.minutes:g}-minute stereo 44.1 kHz 16-bit WAV, n_fft 2048, hop 512, "
            f"median of {args.runs} runs, device {describe(device)}, "
            f"{torch.get_num_threads()} threads, torch {torch.__version__}, "
            f"librosa {librosa.__version__}, {platform.processor() or platform.machine()}")
    lines = [head, "", "| operation | SpectroPaint | librosa | target | met |",
             "|---|---:|---:|---:|:-:|"]
    for name, seconds in rows:
        peer = f"{peers[name]:.3f} s" if name in peers else "-"
        target = TARGETS[name]
        lines.append(f"| {name} | {seconds * 1000:.1f} ms | {peer} | {target * 1000:.0f} ms | "
                     f"{'yes' if seconds <= target else 'no'} |")
    lines.append(f"| peak RSS (SpectroPaint part of the run) | {peak_rss:.2f} GiB | | 2.5 GiB | "
                 f"{'yes' if peak_rss <= 2.5 else 'no'} |")
    return "\n".join(lines)


def module_at(rev: str, relpath: str, folder: str):
    """The module ``relpath`` as it was at git revision ``rev`` (imported from a copy
    in ``folder``): today's code and the code before, timed in the same run."""
    source = subprocess.run(["git", "show", f"{rev}:{relpath}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(folder) / f"before_{Path(relpath).name}"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_section(marker: str, title: str, table: str, device) -> None:
    """Replace (or append) this script's section of docs/benchmarks.md."""
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    begin, end = f"<!-- {marker} {device.type} -->", f"<!-- /{marker} {device.type} -->"
    block = f"{begin}\n## {title}\n\n{table}\n{end}"
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text)
    print(f"updated {doc}")


if __name__ == "__main__":
    main()
