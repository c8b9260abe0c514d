"""The batch on an existing Dask cluster (``specpaint batch --scheduler ADDRESS``).

Each task is a group of files that one worker decodes, paints and writes
(:func:`brushes.batch.process`, the same work as the local pipeline, so the
outputs are the same bytes); this process keeps the journal and the report as
groups finish. Workers write to the output folder themselves, so it must be
on storage every worker and this machine share (see docs/batch.md). Needs the
``cluster`` extra: ``pip install "spectropaint[cluster]"``.
"""

from brushes.batch import Job, Journal, Record, Settings, process
from engine.errors import ParameterError

GROUP = 8  # files per task: few enough to spread, enough to pay a task's overhead
CONNECT_TIMEOUT = "20s"


def process_group(jobs: list[Job], settings: Settings) -> list[Record]:
    """A task: its files one after the other (on a worker)."""
    return [process(job, settings) for job in jobs]


def run_cluster(address: str, jobs: list[Job], settings: Settings, journal: Journal,
                status=None, group: int = GROUP) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:
        raise ParameterError("--scheduler needs Dask distributed; install it with "
                             "pip install 'spectropaint[cluster]'") from e
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise ParameterError(f"--scheduler {address}: cannot reach the Dask scheduler "
                             f"({' '.join(str(e).split())})") from e
    with client:
        groups = [jobs[i:i + group] for i in range(0, len(jobs), group)]
        futures = client.map(process_group, groups, settings=settings, pure=False)
        group_of = dict(zip(futures, groups, strict=True))
        try:
            for future in as_completed(futures):
                try:
                    records = future.result()
                except Exception as e:  # noqa: BLE001 - a lost worker: its files failed
                    error = f"the cluster lost this file's task ({type(e).__name__}: {e})"
                    records = [Record(str(j.input), str(j.output), "failed", error=error)
                               for j in group_of[future]]
                for record in records:
                    journal.add(record)
                    if status is not None:
                        status.finished(record)
        except KeyboardInterrupt:
            client.cancel(futures)  # groups under way finish on their workers, atomically
            raise
