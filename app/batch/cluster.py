"""The batch across processes: local worker processes (``specpaint batch --jobs N``)
or an existing Dask cluster (``--scheduler ADDRESS``).

Each task is a group of files that one worker decodes, paints and writes
(:func:`app.batch.tasks.process_group`, the same work as the in-process pipeline, so
the outputs are the same samples); this process keeps the journal and the
report as groups finish. Painting is mostly Python, so threads in one
process do not paint two files at once; processes do. Cluster workers write to
the output folder themselves, so it must be on storage every worker and this
machine share (see docs/batch.md); the cluster needs the ``cluster`` extra:
``pip install "spectropaint[cluster]"``.
"""

import contextlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.batch.budget import Budget, PeakEstimates, batch_budget
from app.batch.jobs import STACK, STACK_SECONDS, Job, Journal, Record, Settings
from app.batch.processes import one_thread_each, pool_context, worker_setup
from app.batch.stacks import check_settings
from app.batch.tasks import process_group
from engine.errors import ParameterError

GROUP = 8  # files per cluster task: few enough to spread, enough to pay a task's overhead
PROCESS_GROUP = 2 * STACK  # files per task of a local worker process, at most


@contextmanager
def worker_pool(workers: int) -> Iterator:
    """``workers`` processes (app.batch.processes: forked from this process where it is
    still one thread, so start them before this process runs any torch code: give
    them :func:`check_in_worker` first)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=pool_context(), initializer=worker_setup) as pool:
        yield pool


def check_in_worker(pool, settings: Settings) -> None:
    """:func:`app.batch.stacks.check_settings` run by a worker of ``pool`` (whose
    processes start with it), its decision copied into ``settings``; what it raises
    (a bad script or setting) is raised here."""
    with one_thread_each():  # the workers (or their forkserver) start now
        checked = pool.submit(_checked, settings)
    settings.stacks = checked.result()


def _checked(settings: Settings) -> bool:
    check_settings(settings)
    return settings.stacks


def run_processes(jobs: list[Job], settings: Settings, journal: Journal, status=None,
                  workers: int = 2, group: int = PROCESS_GROUP,
                  budget: Budget | None = None, *, pool=None) -> None:
    """The batch over ``workers`` processes, each decoding, painting and writing a
    group of files at a time (a worker holds one file at once, or up to a group of
    short ones it paints stacked and writes; this process holds none and keeps the
    journal). Groups of ``group`` files, fewer where that leaves a worker idle (3 files,
    2 workers: groups of 2 and 1); of two stacks each by default, so that a worker
    writes one while it paints the next (app.batch.tasks).
    Groups are submitted while their estimated peaks fit ``budget`` (default:
    app.batch.budget's share of the memory available), so long files run fewer
    at once, down to one. Ctrl+C: no group is submitted after it, groups submitted
    and not yet taken by the pool are cancelled, the rest finish and are journaled,
    then KeyboardInterrupt goes on up. ``pool``: the :func:`worker_pool` of ``workers``
    processes to run on (default: one of its own)."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    budget = budget or Budget(batch_budget(workers))
    group = max(1, min(group, -(-len(jobs) // workers)))
    groups = [jobs[i:i + group] for i in range(0, len(jobs), group)]
    with contextlib.ExitStack() as owned:
        pool = pool or owned.enter_context(worker_pool(workers))
        tasks = _Tasks(pool, groups, settings, budget, workers + 1)
        with one_thread_each():  # the workers (and the forkserver) start at the first submit
            tasks.submit_what_fits()
        try:
            while tasks.pending:
                done, tasks.pending = wait(tasks.pending, timeout=0.2,
                                           return_when=FIRST_COMPLETED)
                with _interrupt_after() as interrupted:
                    for future in done:
                        budget.give(future)
                        _add(_outcome(future, tasks.group_of[future], "a worker process died "
                                      "(killed, or out of memory)"), journal, status)
                    if not interrupted:  # a group submitted now would run
                        try:
                            tasks.submit_what_fits()
                        except BrokenProcessPool:  # a worker died: the rest are not run
                            tasks.next = len(groups)
        except KeyboardInterrupt:
            for future in tasks.pending:
                future.cancel()
            for future in tasks.pending:
                if not future.cancelled():
                    _add(_outcome(future, tasks.group_of[future], "a worker process died"),
                         journal, status)
            raise


class _Tasks:
    """The groups of a local batch, submitted to the pool in order while at most
    ``room`` are pending and their estimated peaks fit the budget. A group submitted
    is as good as started: the pool hands up to ``workers + 1`` of them on to its
    processes' queue at once, where Ctrl+C cannot cancel them; so ``workers + 1``, a
    group for each worker and one more (with 2 x workers, Ctrl+C in a batch of 80 files
    let all 80 finish)."""

    def __init__(self, pool, groups: list[list[Job]], settings: Settings, budget: Budget,
                 room: int):
        self.pool, self.groups, self.settings, self.budget = pool, groups, settings, budget
        self.room = room
        self.peak = PeakEstimates(settings.analysis, settings.strokes)
        self.next = 0  # the first group not submitted
        self.need: int | None = None  # its estimated peak, once reckoned
        self.pending: set = set()
        self.group_of: dict = {}  # future -> its group

    def submit_what_fits(self) -> None:
        while self.next < len(self.groups) and len(self.pending) < self.room:
            group = self.groups[self.next]
            if self.need is None:
                self.need = self.peak.group([j.input for j in group], self.settings.stacks,
                                            STACK_SECONDS)
            if not self.budget.fits(self.need):
                return
            future = self.pool.submit(process_group, group, self.settings)
            self.budget.take(future, self.need)
            self.group_of[future] = group
            self.pending.add(future)
            self.next, self.need = self.next + 1, None


def _outcome(future, group: list[Job], lost: str) -> list[Record]:
    """A task's records; when the task itself failed, each of its files as failed, with
    how to go on. ``lost`` says what happened when its worker died; an exception the
    task raised (which would be a bug: a file's errors are recorded inside the task) is
    named as such, not as a dead worker."""
    try:
        return future.result()
    except Exception as e:  # noqa: BLE001 - a failed task: its files failed, the rest go on
        what = lost if _worker_lost(e) else "the task painting this file failed"
        error = f"{what}: {type(e).__name__}: {' '.join(str(e).split())}; --resume runs " \
                "this file again"
        return [Record(str(j.input), str(j.output), "failed", error=error) for j in group]


def _worker_lost(error: Exception) -> bool:
    """Whether ``error`` says the process running a task went away (a pool whose worker
    was killed, a Dask worker lost or a task cancelled), not that the task raised."""
    from concurrent.futures import CancelledError
    from concurrent.futures.process import BrokenProcessPool

    return isinstance(error, BrokenProcessPool | CancelledError) or \
        type(error).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError")


@contextmanager
def _interrupt_after():
    """Ctrl+C while a finished group is journaled takes effect once all of it is: its
    files are written, and one left out of the journal would be reported as not run
    while its output stands. Yields a list that is not empty once Ctrl+C was pressed,
    for the caller to start nothing new. Only the main thread receives signals."""
    caught = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _add(records: list[Record], journal: Journal, status) -> None:
    journal.add(*records)
    for record in records:
        if status is not None:
            status.finished(record)


def run_cluster(address: str, jobs: list[Job], settings: Settings, journal: Journal,
                status=None, *, group: int = GROUP, connect_timeout: float = 20.0) -> None:
    """Run ``jobs`` on the Dask scheduler at ``address``, waiting at most
    ``connect_timeout`` seconds for it to answer."""
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:
        raise ParameterError("--scheduler needs Dask distributed; install it with "
                             "pip install 'spectropaint[cluster]'") from e
    try:
        client = Client(address, timeout=f"{connect_timeout}s")
    except (OSError, TimeoutError, ValueError) as e:
        raise ParameterError(f"--scheduler {address}: cannot reach the Dask scheduler "
                             f"({' '.join(str(e).split())})") from e
    with client:
        groups = [jobs[i:i + group] for i in range(0, len(jobs), group)]
        futures = client.map(process_group, groups, settings=settings, pure=False)
        group_of = dict(zip(futures, groups, strict=True))
        try:
            for future in as_completed(futures):
                with _interrupt_after():
                    _add(_outcome(future, group_of[future], "the cluster lost this file's "
                                  "task"), journal, status)
        except KeyboardInterrupt:
            client.cancel(futures)  # groups under way finish on their workers, atomically
            raise
