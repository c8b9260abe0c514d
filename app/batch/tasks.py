"""A task of a worker process or a cluster worker: a group of files decoded, painted
(short ones of one shape stacked) and written."""

from app.batch.jobs import STACK_SECONDS, Job, Record, Settings, decode_job, finish_job
from app.batch.stacks import paint_items, stackable


def process_group(jobs: list[Job], settings: Settings) -> list[Record]:
    """A task of a worker process or a cluster worker: its files decoded one after
    another, painted (short ones of one shape stacked: :func:`paint_many`) and written.
    It holds at most the group's files, and only short ones more than one at a time."""
    records, waiting = [], []
    for job in jobs:
        item = decode_job(job)
        if isinstance(item[1], BaseException):
            records.append(finish_job(job, item[1], None, item[2], settings))
            continue
        if waiting and not stackable(waiting[0][1], item[1]):
            records.extend(_paint_and_finish(waiting, settings))
            waiting = []
        waiting.append(item)
        if not (settings.stacks and item[1].duration <= STACK_SECONDS):
            records.extend(_paint_and_finish(waiting, settings))
            waiting = []
    records.extend(_paint_and_finish(waiting, settings))
    order = {str(j.input): i for i, j in enumerate(jobs)}
    return sorted(records, key=lambda r: order[r.input])


def _paint_and_finish(items: list[tuple], settings: Settings) -> list[Record]:
    return [finish_job(*item, settings) for item in paint_items(items, settings)]
