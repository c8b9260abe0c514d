"""The working memory of each whole-file repair module (issue 51, item 3), as the
kernel counts it: the peak of a memory control group (tests/memory_group.py) around
`specpaint repair NAME` less the peak of opening the same file alone, at two lengths
of stereo 44.1 kHz (hiss, a tone, hum, a few clicks and a clipped third); the slope
between them, per sample of one channel, is what app.session.repairs declares as each
module's ``working_bytes`` (a fifth added). Needs root (a group must be made).

    .venv/bin/python bench/bench_repair_memory.py [--seconds 30 120] [--modules ...]
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.memory_group import memory_group, most_used, run_in  # noqa: E402

SR = 44100
OPEN_ONLY = "import app.main, sys; from engine.model.document import Document; " \
            "Document.open(sys.argv[1], device='cpu')"


def take(seconds: float, path: Path) -> None:
    rng = np.random.default_rng(1)
    n = round(seconds * SR)
    t = np.arange(n) / SR
    x = 0.1 * np.sin(2 * np.pi * 440 * t) + 0.02 * np.sin(2 * np.pi * 60 * t)
    x = np.stack([x, np.roll(x, 300)]) + rng.normal(0, 0.01, (2, n))
    for i in rng.integers(0, n - 4, 20):
        x[:, i:i + 3] += 0.4
    x[:, n // 3:2 * n // 3] = np.clip(4 * x[:, n // 3:2 * n // 3], -0.3, 0.3)  # clipped
    sf.write(path, x.T.astype(np.float32), SR, subtype="PCM_16")


def peak(*args: str) -> int:
    """The most a group held while ``python args`` ran in it."""
    with memory_group(64 * 2**30) as folder:
        if folder is None:
            sys.exit("no memory control group can be made here (root, cgroup memory)")
        done = run_in(folder, *args)
        if done.returncode:
            sys.exit(done.stderr[-2000:])
        return most_used(folder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, nargs=2, default=(30.0, 120.0))
    parser.add_argument("--modules", nargs="*",
                        default=["denoise", "declick", "dehum", "declip", "voice"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        added = {}
        for seconds in args.seconds:
            path = Path(folder) / f"take-{seconds:g}.wav"
            take(seconds, path)
            opened = peak("-c", OPEN_ONLY, str(path))
            for name in args.modules:
                added[name, seconds] = peak("-m", "app.main", "repair", name, str(path), "-o",
                                            str(Path(folder) / "out.wav")) - opened
        short, long = args.seconds
        print(f"| module | added at {short:g} s | added at {long:g} s | bytes per sample |")
        print("|---|---:|---:|---:|")
        for name in args.modules:
            slope = (added[name, long] - added[name, short]) / (2 * (long - short) * SR)
            print(f"| {name} | {added[name, short] / 2**20:.0f} MiB | "
                  f"{added[name, long] / 2**20:.0f} MiB | {slope:.0f} |")


if __name__ == "__main__":
    main()
