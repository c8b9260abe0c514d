"""Progress reporting and cancellation for long engine work.

Long functions take ``progress=`` (a callable given a fraction in [0, 1]) and
``cancel=`` (anything with ``is_set()``, e.g. ``threading.Event``). They call
:func:`step` between blocks of work, which reports and raises
:class:`~engine.errors.Cancelled` once cancel is set, so the caller's
clean-up (removing a temporary file, keeping the old document) runs.
"""

import queue
import threading
from collections.abc import Callable, Generator
from typing import Protocol, TypeVar

from engine.errors import Cancelled

ProgressFn = Callable[[float], None]
T = TypeVar("T")
WAIT_S = 0.005  # a step of off_thread waits this long for its work, then yields
_draining = threading.local()  # on while drain() runs steps in this thread


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
    of an event loop) to its end; what it returns. Its :func:`off_thread` steps run
    in place: nothing waits for a turn."""
    was = getattr(_draining, "on", False)
    _draining.on = True
    try:
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value
    finally:
        _draining.on = was


def off_thread(work: Callable[[], T]) -> Generator[None, None, T]:
    """``work()`` on a thread of its own, as steps (see :func:`drain`): each waits up
    to ``WAIT_S`` for it and yields while it runs, so an event loop that runs a step
    a turn stays responsive; returns its result, or raises its error. ``work`` must
    only read what the caller's steps do not write meanwhile (a stroke's end: the
    document and the stroke's canvas; the caller writes its result). Under
    :func:`drain` (a script, the CLI, a batch) it runs in place, as one step."""
    if getattr(_draining, "on", False):
        return work()
    done, outcome = threading.Event(), {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as e:  # raised in the caller's step
            outcome["error"] = e
        finally:
            done.set()

    threading.Thread(target=run, name="spectropaint-step", daemon=True).start()
    while not done.wait(WAIT_S):
        yield
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
