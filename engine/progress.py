"""Progress reporting and cancellation for long engine work.

Long functions take ``progress=`` (a callable given a fraction in [0, 1]) and
``cancel=`` (anything with ``is_set()``, e.g. ``threading.Event``). They call
:func:`step` between blocks of work, which reports and raises
:class:`~engine.errors.Cancelled` once cancel is set, so the caller's
clean-up (removing a temporary file, keeping the old document) runs.
"""

import queue
from collections.abc import Callable, Generator
from typing import Protocol

from engine.errors import Cancelled

ProgressFn = Callable[[float], None]


class CancelFlag(Protocol):
    def is_set(self) -> bool: ...


def step(fraction: float, progress: ProgressFn | None, cancel: CancelFlag | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("cancelled by the user; nothing was changed")
    if progress is not None:
        progress(min(max(fraction, 0.0), 1.0))


def scaled(progress: ProgressFn | None, start: float, end: float) -> ProgressFn | None:
    """Map a sub-task's [0, 1] onto [start, end] of the whole task."""
    if progress is None:
        return None
    return lambda f: progress(start + (end - start) * f)


def put_unless_stopped(q: queue.Queue, item, stop: CancelFlag) -> bool:
    """Put ``item`` in the bounded queue ``q``, waiting while it is full, unless
    ``stop`` is set meanwhile (then False): a producer thread that never blocks for
    good on a consumer that has gone."""
    while not stop.is_set():
        try:
            q.put(item, timeout=0.2)
            return True
        except queue.Full:
            continue
    return False


def drain(steps: Generator):
    """Run a generator of steps (work a caller with a time budget spreads over turns
    of an event loop) to its end; what it returns."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
