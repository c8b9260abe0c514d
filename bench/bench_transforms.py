"""Transform figures: forward and inverse of 60 s stereo 44.1 kHz with our STFT and
constant-Q, beside librosa's STFT and nsgt's own sliced CQ (its peer) in
the same run; the memory of a 10-minute stereo document on each transform.

    .venv/bin/python bench/bench_transforms.py [--runs 5] [--device cpu] [--no-write]

Median of ``--runs``. nsgt (tests-only, installed by ``make test``) runs on one
channel: it is a Python generator over slices. Writes its table into
docs/benchmarks.md between the "bench_transforms" markers.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402
from engine.transforms import make  # noqa: E402
from engine.transforms.cq_bands import reference_length  # noqa: E402

SR = 44100
TARGET_S = 0.15  # forward and inverse of 60 s stereo, constant-Q


def timed(fn, runs: int, sync) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def signal(seconds: float, channels: int = 2) -> np.ndarray:
    rng = np.random.default_rng(0)
    return (0.2 * rng.standard_normal((channels, int(seconds * SR)))).astype(np.float32)


def nsgt_times(x: np.ndarray, runs: int) -> tuple[float, float] | None:
    try:
        from nsgt import CQ_NSGT_sliced

        from tests.nsgt_compat import numpy_clip_fixed
    except ImportError:
        return None
    t = make(SR, "cq")
    hz = t.bin_frequencies().numpy()
    with numpy_clip_fixed():
        slices = reference_length(SR)  # nsgt's slices: about 1.5 s, as ours were until 2026-11-25
        peer = CQ_NSGT_sliced(t.fmin, float(hz[-2]), t.bpo, slices, slices // 8, SR,
                              real=True, matrixform=True)
        coeffs = []
        fwd = timed(lambda: coeffs.__setitem__(slice(None), list(peer.forward((x,)))), runs,
                    lambda: None)
        inv = timed(lambda: np.concatenate(list(peer.backward(coeffs))), runs,
                    lambda: None)
    return fwd, inv


def main() -> None:
    from bench.bench_engine import parse

    args, device, sync = parse(argparse.ArgumentParser())

    x = torch.from_numpy(signal(60)).to(device)
    rows = []
    for kind in ("stft", "cq"):
        t = make(SR, kind, device)
        coeffs = t.forward(x)
        fwd = timed(lambda t=t: t.forward(x), args.runs, sync)
        inv = timed(lambda t=t, c=coeffs: t.inverse(c, x.shape[-1]), args.runs, sync)
        rows.append((f"SpectroPaint {kind}, stereo", fwd, inv))
    import librosa

    xs = x.cpu().numpy()
    spec = librosa.stft(xs, n_fft=2048, hop_length=512)
    rows.append(("librosa stft/istft, stereo",
                 timed(lambda: librosa.stft(xs, n_fft=2048, hop_length=512), args.runs, sync),
                 timed(lambda: librosa.istft(spec, hop_length=512, length=xs.shape[-1]),
                       args.runs, sync)))
    peer = nsgt_times(xs[0].astype(np.float64), max(1, args.runs // 2))
    if peer:
        rows.append(("nsgt CQ_NSGT_sliced (float64), mono", *peer))

    ten = signal(600)
    sizes = {}
    for kind in ("stft", "cq"):
        doc = Document(Audio(ten, SR), transform=kind, device=device)
        sizes[kind] = doc.nbytes  # coefficients and the decoded audio
        del doc
    table = format_table(rows, sizes, device, args)
    print(table)
    if not args.no_write:
        from bench.bench_engine import write_section

        write_section("bench_transforms", f"Transforms ({device.type})", table, device)


def _ms(seconds: float) -> str:
    """Milliseconds, with a decimal under 10 (a GPU's figures)."""
    return f"{seconds * 1000:.{1 if seconds < 0.01 else 0}f} ms"


def format_table(rows, sizes, device, args) -> str:
    t = make(SR, "cq")
    lines = [f"60 s of 44.1 kHz noise; constant-Q: {t.bpo} bins per octave from {t.fmin} Hz, "
             f"{t.n_bins} bins, hop {t.hop}, blocks of {t.block} samples; STFT: n_fft "
             f"2048, hop 512; median of {args.runs} runs (nsgt: {max(1, args.runs // 2)}); "
             f"device {device.type}, {torch.get_num_threads()} threads, torch "
             f"{torch.__version__}", "",
             "| transform | forward | inverse | target (cq) | met |", "|---|---:|---:|---:|:-:|"]
    for name, fwd, inv in rows:
        is_cq = name.startswith("SpectroPaint cq")
        met = ("yes" if max(fwd, inv) <= TARGET_S else "no") if is_cq else ""
        target = f"{TARGET_S * 1000:.0f} ms each" if is_cq else ""
        lines.append(f"| {name} | {_ms(fwd)} | {_ms(inv)} | {target} | {met} |")
    ratio = sizes["cq"] / sizes["stft"]
    lines += ["", "| 10-minute stereo document (complex64 coefficients + audio) | STFT "
              "| constant-Q "
              "| ratio | target | met |", "|---|---:|---:|---:|---:|:-:|",
              f"| memory | {sizes['stft'] / 2**30:.2f} GiB | {sizes['cq'] / 2**30:.2f} GiB | "
              f"{ratio:.2f}x | 2x | {'yes' if ratio <= 2 else 'no'} |"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
