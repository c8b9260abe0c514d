"""Time per stage and peak memory of a run, for ``--stats``: the engine's long steps
(decode, analysis, painting, resynthesis, write) add their time here."""

import functools
import resource
import threading
import time
from collections import defaultdict
from contextlib import contextmanager

import torch

_totals: dict[str, float] = defaultdict(float)
_counts: dict[str, int] = defaultdict(int)
_lock = threading.Lock()
_open = threading.local()  # the stages this thread is in: a nested one is not counted twice


@contextmanager
def stage(name: str):
    active = _open.__dict__.setdefault("names", set())
    if name in active:
        yield
        return
    active.add(name)
    start = time.perf_counter()
    try:
        yield
    finally:
        active.discard(name)
        with _lock:
            _totals[name] += time.perf_counter() - start
            _counts[name] += 1


def summary(wall: float) -> list[str]:
    """Lines: each stage's total and count, wall time, peak host (and device) memory.
    Stages run in threads can overlap, so they may add up to more than the wall."""
    lines = [f"{name:<12}{total:9.3f} s  ({_counts[name]}x)" for name, total in _totals.items()]
    lines.append(f"{'wall':<12}{wall:9.3f} s  (after start-up)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB (Linux)
    lines.append(f"{'peak RSS':<12}{peak:9.3f} GiB")
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        lines.append(f"{'peak CUDA':<12}{torch.cuda.max_memory_allocated() / 2**30:9.3f} GiB")
    return lines


def timed(name: str):
    """Decorator: the function's time counts to stage ``name``."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with stage(name):
                return fn(*args, **kwargs)
        return inner
    return wrap
