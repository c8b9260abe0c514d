"""How many of a batch's files may be in memory at once, in bytes.

The pipeline holds a bounded number of files and each worker process paints
one at a time, but a count is no bound on bytes: two worker processes each
painting a long file, or the reader decoding ahead of a long one, can take more
than the machine (or the control group, engine.runtime.memory) has, and the kernel
kills a worker with the files it held, or the batch. Each document checks that
it fits (engine.model.document.check_fits), but workers check independently, each
seeing the memory the others are about to take.

So a file's painting peak is estimated from its header before it is decoded
(:class:`PeakEstimates`; with repair steps, its document and the working memory
of the hungriest module: app.session.repairs' ``working_bytes``), and a
:class:`Budget` admits files while their estimates fit in what is available;
one file is always admitted, so a file too big for the budget still runs, alone,
and its document's own check decides. The ratios of the peak to the document's
size were measured with ``bench/bench_batch_memory.py`` (docs/batch.md).
"""

import threading
from collections.abc import Hashable

import soundfile as sf

from app.batch.processes import KEPT_HEAP
from app.session.repairs import MODULES
from engine.model.document import MEMORY_SHARE, document_bytes
from engine.runtime.memory import available_memory
from engine.transforms import make as make_transform

# a stroke's painting peak over its document's size (coefficients, recording and
# waveform), for a stroke across the whole file; measured 1.12-1.27 on "stft"
# and 3.2 on "cq" (when a stroke there was painted again on a second document of
# a shifted slicing, before 2026-11-25), plus a margin
PEAK_OVER_DOCUMENT = {"stft": 1.4, "cq": 3.5}
# a worker process with torch loaded, before its first file, and the freed memory it
# keeps for its next stack
WORKER_BYTES = (256 << 20) + KEPT_HEAP


class PeakEstimates:
    """Bytes painting a file will take at its peak, and its seconds, from its header
    (no decoding); (0, 0.0) for a file whose header cannot be read (decoding it will
    fail and say why)."""

    def __init__(self, analysis: dict, strokes: list = ()):
        """``strokes``: the batch's stroke script; its repair steps' modules count."""
        self.kind = analysis.get("transform") or "stft"
        self.repair_bytes = max((MODULES[s["repair"]].working_bytes for s in strokes
                                 if isinstance(s, dict) and s.get("repair") in MODULES),
                                default=0)  # a sample of one channel
        self.settings = {k: v for k, v in analysis.items() if k not in ("transform", "device")}
        self._transforms: dict[int, object] = {}  # by sample rate

    def __call__(self, path) -> tuple[int, float]:
        try:
            info = sf.info(str(path))
            transform = self._transforms.get(info.samplerate)
            if transform is None:
                transform = make_transform(info.samplerate, self.kind, "cpu", **self.settings)
                self._transforms[info.samplerate] = transform
        except Exception:  # noqa: BLE001 - an unreadable file or setting fails where it is used
            return 0, 0.0
        ratio = PEAK_OVER_DOCUMENT.get(self.kind, max(PEAK_OVER_DOCUMENT.values()))
        document = document_bytes(info.channels, info.frames, transform)
        repairing = document + self.repair_bytes * info.channels * info.frames
        return int(max(ratio * document, repairing)), info.frames / info.samplerate

    def group(self, paths: list, stacks: bool, stack_seconds: float) -> int:
        """A worker's peak over a group of files it paints one at a time, or, the short
        ones when ``stacks``, as one document."""
        peaks = [self(p) for p in paths]
        stacked = sum(size for size, seconds in peaks if seconds <= stack_seconds) if stacks \
            else 0
        return max([stacked] + [size for size, _ in peaks])


def batch_budget(workers: int = 0) -> int:
    """Bytes a batch's files may take at once: the share of the available memory one
    document may take, less what ``workers`` processes yet to start will hold."""
    return max(0, int(MEMORY_SHARE * (available_memory() - workers * WORKER_BYTES)))


class Budget:
    """Bytes taken by what is in flight, each under a key, up to ``limit``; whatever
    the sizes, the first taker is let in (``peak``: the most ever taken at once)."""

    def __init__(self, limit: int):
        self.limit, self.used, self.peak = limit, 0, 0
        self._held: dict[Hashable, int] = {}
        self._changed = threading.Condition()

    def fits(self, size: int) -> bool:
        return not self._held or self.used + size <= self.limit

    def take(self, key: Hashable, size: int, stop: threading.Event | None = None) -> bool:
        """Wait until ``size`` fits, then hold it under ``key``; False if ``stop`` was
        set first."""
        with self._changed:
            while not self.fits(size):
                if stop is not None and stop.is_set():
                    return False
                self._changed.wait(0.2)
            self._held[key] = size
            self.used += size
            self.peak = max(self.peak, self.used)
            return True

    def give(self, key: Hashable) -> None:
        with self._changed:
            self.used -= self._held.pop(key, 0)
            self._changed.notify_all()
