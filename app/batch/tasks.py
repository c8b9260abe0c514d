"""A task of a worker process or a cluster worker: a group of files decoded, painted
(short ones of one shape stacked) and written.

Writing a file ends in two fsyncs (engine.io.atomic): on this machine's disk 8-12 ms of
waiting a file when one thread writes, 1.6 ms a file when four do (the disk commits
their flushes together). So a task hands each painted file to WRITERS threads, which
export and measure it while the next files are decoded and painted, and returns
once all are written.
"""

from concurrent.futures import Future, ThreadPoolExecutor

from app.batch.jobs import STACK_SECONDS, Job, Record, Settings, decode_job, finish_job
from app.batch.stacks import paint_items, stackable

WRITERS = 4  # threads writing a task's painted files at once


def process_group(jobs: list[Job], settings: Settings) -> list[Record]:
    """Decode the files one after another; paint each, or with ``settings.stacks`` each
    run of up to ``settings.stack`` short files of one shape as one stack
    (:func:`app.batch.stacks.paint_many`); write them in WRITERS threads meanwhile.
    It holds at most the group's files. The records in the order of ``jobs``."""
    records: list[Record] = []
    writing: list[Future] = []
    with ThreadPoolExecutor(WRITERS, thread_name_prefix="write") as writers:
        def paint(items: list[tuple]) -> None:
            writing.extend(writers.submit(finish_job, *item, settings)
                           for item in paint_items(items, settings))
            items.clear()

        waiting: list[tuple] = []
        for job in jobs:
            item = decode_job(job)
            if isinstance(item[1], BaseException):
                records.append(finish_job(job, item[1], None, item[2], settings))
                continue
            if waiting and not stackable(waiting[0][1], item[1]):
                paint(waiting)
            waiting.append(item)
            short = settings.stacks and item[1].duration <= STACK_SECONDS
            if len(waiting) >= (settings.stack if short else 1):
                paint(waiting)
        paint(waiting)
    records.extend(w.result() for w in writing)
    order = {str(j.input): i for i, j in enumerate(jobs)}
    return sorted(records, key=lambda r: order[r.input])
