"""The batch in one process: a pipeline of threads.

A reader thread decodes ahead into a bounded queue, painting threads paint on
the engine device, a writer thread has each result exported atomically and
measured against its input, WRITING files at once (their fsyncs share the disk's
commits: app.batch.tasks), and records them in the journal in order. At most
``PREFETCH`` decoded files wait to be painted and ``WRITE_QUEUE`` painted ones to be
written, so with the one held by the reader, each painter's and those being written,
a batch holds at most :func:`max_in_flight` files whatever its length; and the
reader decodes a file only when its painting's estimated peak fits the memory
budget with the files in flight (app.batch.budget).

With ``helpers`` (a pool of processes: app.batch.cluster.worker_pool), they decode
and write instead of this process's threads, PREFETCH files ahead, and this process
only paints: a GPU fed by the CPU's other cores (app.batch.plan).
"""

import collections
import queue
import threading
from concurrent.futures import Executor, ThreadPoolExecutor

from app.batch.budget import Budget, PeakEstimates, batch_budget
from app.batch.jobs import Job, Journal, Record, Settings, Timer, decode_job, finish_job
from app.batch.stacks import paint_items
from engine.errors import SpectroPaintError
from engine.progress import put_unless_stopped

PREFETCH = 4  # decoded files waiting to be painted
WRITE_QUEUE = 2  # painted files waiting to be written
WRITING = 4  # painted files being written at once


def max_in_flight(workers: int, *, helpers: bool = False) -> int:
    """Decoded files a batch can hold at once: both queues full, one held by the
    reader (waiting to queue it), WRITING being written, and by each painter one file,
    or the one it took and what waited in the queue then (a stack of short files);
    with ``helpers``, PREFETCH more being decoded ahead."""
    return PREFETCH + WRITE_QUEUE + 1 + WRITING + workers * (1 + PREFETCH) + \
        (PREFETCH if helpers else 0)


def run_local(jobs: list[Job], settings: Settings, journal: Journal, status=None,
              workers: int = 1, stop: threading.Event | None = None,
              budget: Budget | None = None, *, helpers: Executor | None = None) -> None:
    """The pipeline (see the module notes), with ``workers`` painting threads.
    ``status``: told of each finished file and the queues. ``budget``: bytes the
    files from decoding to written may take (default: app.batch.budget's share of
    the memory available). ``helpers``: processes that decode and write (default:
    this process's threads). Ctrl+C (or ``stop``) stops reading and painting; what is
    painted is still written, then KeyboardInterrupt goes on up."""
    stop = stop or threading.Event()
    budget = budget or Budget(batch_budget())
    decoded: queue.Queue = queue.Queue(PREFETCH)
    painted: queue.Queue = queue.Queue(WRITE_QUEUE)
    reader = threading.Thread(target=_read, daemon=True, args=(
        jobs, decoded, stop, budget, PeakEstimates(settings.analysis, settings.strokes), helpers))
    reader.start()
    writer = threading.Thread(target=_write, args=(painted, settings, journal, status, budget,
                                                   helpers), daemon=True)
    writer.start()
    # Painters are waited for through events: a Thread.join interrupted by Ctrl+C can
    # take a running thread for finished (CPython bpo-45274), and a thread still in
    # torch when the interpreter exits aborts the process.
    finished = [threading.Event() for _ in range(max(1, workers))]
    for done in finished:
        threading.Thread(target=_paint, args=(decoded, painted, settings, stop, status, done),
                         daemon=True).start()
    try:
        for done in finished:
            while not done.wait(0.2):  # in steps: Ctrl+C reaches this thread
                pass
    except KeyboardInterrupt:
        stop.set()
        for done in finished:
            done.wait()
        raise
    finally:
        stop.set()
        reader.join()  # a thread left in a C library at exit can abort the process
        painted.put(None)
        writer.join()


def _read(jobs: list[Job], decoded: queue.Queue, stop: threading.Event, budget: Budget,
          peak: PeakEstimates, helpers: Executor | None) -> None:
    """Decode each file once its estimated peak fits the budget (the writer gives it
    back), here or by ``helpers`` (PREFETCH ahead, queued in order), then the end of
    the files."""
    ahead: collections.deque = collections.deque()
    for job in jobs:
        if not budget.take(job, peak(job.input)[0], stop):
            return
        if helpers is None:
            put_unless_stopped(decoded, decode_job(job), stop)
            continue
        ahead.append((job, helpers.submit(decode_job, job)))
        if len(ahead) > PREFETCH:
            put_unless_stopped(decoded, _decoded(*ahead.popleft()), stop)
    while ahead:
        put_unless_stopped(decoded, _decoded(*ahead.popleft()), stop)
    put_unless_stopped(decoded, None, stop)


def _decoded(job: Job, decoding) -> tuple:
    """A helper's decoded file, or the error that lost it (its process died)."""
    try:
        return decoding.result()
    except Exception as e:  # noqa: BLE001 - the file fails, the batch goes on
        return job, SpectroPaintError(f"a helper process died decoding it ({type(e).__name__}); "
                                      "--resume runs this file again"), Timer()


def _paint(decoded: queue.Queue, painted: queue.Queue, settings: Settings,
           stop: threading.Event, status, finished: threading.Event) -> None:
    try:
        _paint_files(decoded, painted, settings, stop, status)
    finally:
        finished.set()


def _paint_files(decoded: queue.Queue, painted: queue.Queue, settings: Settings,
                 stop: threading.Event, status) -> None:
    """Take a decoded file, and with it what already waits in the queue (at most
    PREFETCH more) when files may be stacked; paint them; queue them to be written.
    Nothing of them is held here while the next ones are waited for: the writer gives
    their memory back to the budget once written."""
    while not stop.is_set():
        items, last = _take(decoded, settings.stacks)
        if not items and not last:
            continue
        ready = [i for i in items if not isinstance(i[1], BaseException)]
        failed = [(job, e, None, timer) for job, e, timer in items if isinstance(e, BaseException)]
        items.clear()
        painted_items = failed + paint_items(ready, settings)
        ready.clear()
        while painted_items:
            painted.put(painted_items.pop(0))
        if status is not None:
            status.queues(decoded.qsize(), painted.qsize())
        if last:
            decoded.put(None)  # for the other painters
            return


def _take(decoded: queue.Queue, stacks: bool) -> tuple[list, bool]:
    """The next decoded file (none after 0.2 s), and when ``stacks`` what waits after
    it; and whether the end of the files came."""
    try:
        item = decoded.get(timeout=0.2)
    except queue.Empty:
        return [], False
    if item is None:
        return [], True
    items = [item]
    while stacks and len(items) <= PREFETCH:
        try:
            more = decoded.get_nowait()
        except queue.Empty:
            break
        if more is None:
            return items, True
        items.append(more)
    return items, False


def _write(painted: queue.Queue, settings: Settings, journal: Journal, status,
           budget: Budget, helpers: Executor | None) -> None:
    """Have each painted file written, WRITING at once (by threads here, or by
    ``helpers``), and journal them in order as they are done."""
    writing: collections.deque = collections.deque()

    def record_first() -> None:
        job, done = writing.popleft()
        try:
            record = done.result()
        except Exception as e:  # noqa: BLE001 - a helper process died: the file failed
            record = Record(str(job.input), str(job.output), "failed",
                            error=f"a helper process died writing it ({type(e).__name__}); "
                                  "--resume runs this file again")
        budget.give(job)
        journal.add(record)
        if status is not None:
            status.finished(record)

    with ThreadPoolExecutor(WRITING, thread_name_prefix="write") as threads:
        writers = helpers or threads
        while True:
            try:  # while files are being written, see every 50 ms to those done: their
                item = painted.get(timeout=0.05 if writing else None)  # memory goes back
            except queue.Empty:
                item = ()
            if item is None:
                break
            if item:
                writing.append((item[0], writers.submit(finish_job, *item, settings)))
            item = None  # its samples go with the writing
            while writing and (len(writing) >= WRITING or writing[0][1].done()):
                record_first()
        while writing:
            record_first()
