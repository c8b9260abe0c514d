"""``specpaint batch``: one stroke script painted over many files in one process.

The files flow through a pipeline: a reader thread decodes ahead into a
bounded queue, the calling thread paints on the engine device, a writer
thread exports each result atomically, measures it against its input and
records it in the journal. At most ``PREFETCH`` decoded files wait to be
painted and ``WRITE_QUEUE`` painted ones to be written, so with the one being
held by the reader, each painter and the writer, a batch holds at most
:func:`max_in_flight` files whatever its length.

The journal (``batch-journal.jsonl`` in the output folder: one JSON line per
finished file, flushed and fsynced) is what ``--resume`` reads: files done
are skipped. Outputs are written atomically (engine.atomic), so a killed batch
leaves finished files and no partial one. :mod:`brushes.batch_cluster` runs
the same per-file work on a Dask cluster.
"""

import glob
import json
import os
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from brushes.script import Editor
from engine.atomic import write_bytes
from engine.audio import Audio, load
from engine.document import Document
from engine.errors import ParameterError, SpectroPaintError
from engine.export import FORMATS, export, same_depth
from engine.metrics import si_sdr_db, snr_db
from engine.progress import put_unless_stopped

PREFETCH = 4  # decoded files waiting to be painted
WRITE_QUEUE = 2  # painted files waiting to be written
JOURNAL, REPORT = "batch-journal.jsonl", "batch-report.json"
READABLE = {".wav", ".flac", ".aiff", ".aif", ".ogg", ".oga", ".mp3", ".w64", ".caf", ".au"}


def max_in_flight(workers: int) -> int:
    """Decoded files a batch can hold at once: both queues full, and one held by the
    reader (waiting to queue it), by each painter and by the writer."""
    return PREFETCH + WRITE_QUEUE + 1 + workers + 1


@dataclass(frozen=True)
class Job:
    input: Path
    output: Path


@dataclass
class Settings:
    """What every file gets: the strokes, the analysis and how to write."""
    strokes: list
    analysis: dict = field(default_factory=dict)  # transform and its settings, device
    bits: str | None = None  # None: the input's depth where the format has it
    dither: bool = True


@dataclass
class Record:
    """One file's outcome: a journal line and a report entry."""
    input: str
    output: str
    status: str  # "done" or "failed"
    error: str = ""
    seconds: dict = field(default_factory=dict)  # decode, paint, write
    metrics: dict = field(default_factory=dict)  # output against input
    bytes: int = 0  # of the input file
    notes: list = field(default_factory=list)  # repairs on decoding, strokes clipped to it


def find_jobs(specs: list[str], outdir: Path, suffix: str | None = None) -> list[Job]:
    """Files named, folders (recursively) and globs, each mapped to the same
    relative place under ``outdir`` (``suffix``: another format's extension)."""
    found: dict[Path, Path] = {}  # input -> path relative to what was named
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found.update((f, f.relative_to(path)) for f in sorted(path.rglob("*"))
                         if f.is_file() and f.suffix.lower() in READABLE)
        elif path.is_file():
            found[path] = Path(path.name)
        elif glob.has_magic(spec):
            base = Path(*[p for p in _until_magic(Path(spec).parts)])
            found.update((Path(m), Path(m).relative_to(base))
                         for m in sorted(glob.glob(spec, recursive=True)) if Path(m).is_file())
        else:
            raise ParameterError(f"{spec}: no such file or folder")
    out = outdir.resolve()
    jobs, seen = [], {}
    for source, rel in found.items():
        if out in source.resolve().parents:
            continue  # a rerun must not take the last run's outputs as inputs
        target = outdir / (rel.with_suffix(suffix) if suffix else rel)
        if target in seen:
            raise ParameterError(f"{source} and {seen[target]} would both be written to "
                                 f"{target}; name their folders instead of the files")
        seen[target] = source
        jobs.append(Job(source, target))
    if not jobs:
        raise ParameterError(f"no audio files found in {', '.join(specs)}")
    return jobs


def _until_magic(parts: tuple[str, ...]) -> list[str]:
    out = []
    for part in parts:
        if glob.has_magic(part):
            break
        out.append(part)
    return out or ["."]


def paint_audio(audio: Audio, settings: Settings) -> np.ndarray:
    """The strokes painted on ``audio``; float32 ``[ch, n]``. What was painted other
    than asked (a stroke clipped to a shorter file) joins ``audio.notes``."""
    editor = Editor(Document(audio, **settings.analysis), history_limit=0)
    editor.run_script(settings.strokes)
    audio.notes.extend(editor.warnings)
    wave = editor.audio()
    editor.synth.close()  # the document and its listener refer to each other: let them go
    return wave


def check_settings(settings: Settings) -> None:
    """Paint the strokes on a second of silence: a bad script, preset or analysis
    setting raises here, once, instead of failing every file of the batch."""
    rate = 44100
    paint_audio(Audio(np.zeros((1, rate), np.float32), rate), settings)


def write_output(job: Job, audio: Audio, wave: np.ndarray, settings: Settings) -> dict:
    """Export ``wave`` to the job's output (atomically) and measure it against the
    input; returns the metrics."""
    job.output.parent.mkdir(parents=True, exist_ok=True)
    depth = settings.bits or same_depth(audio.subtype, job.output)
    export(wave, audio.sample_rate, job.output, bit_depth=depth, source=job.input,
           dither=settings.dither)
    return {"snr_db": _finite(snr_db(audio.samples, wave)),
            "si_sdr_db": _finite(si_sdr_db(audio.samples, wave))}


def _finite(x: float) -> float | None:
    """JSON has no infinity: an unchanged file's SNR is reported as null."""
    return round(x, 3) if np.isfinite(x) else None


def process(job: Job, settings: Settings) -> Record:
    """One file start to end (a cluster worker's unit of work)."""
    timer = _Timer()
    try:
        audio = load(job.input)
        timer.lap("decode")
        wave = paint_audio(audio, settings)
        timer.lap("paint")
        metrics = write_output(job, audio, wave, settings)
        timer.lap("write")
        return _record(job, "done", timer, metrics=metrics, notes=audio.notes)
    except Exception as e:  # noqa: BLE001 - one bad file is recorded; the batch goes on
        return _record(job, "failed", timer, error=_one_line(e))


def process_group(jobs: list[Job], settings: Settings) -> list[Record]:
    """A task of a worker process or a cluster worker: its files one after another."""
    return [process(job, settings) for job in jobs]


class _Timer:
    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self.last, 4)
        self.last = now


def _record(job: Job, status: str, timer: _Timer, **fields) -> Record:
    size = job.input.stat().st_size if job.input.exists() else 0
    return Record(str(job.input), str(job.output), status, seconds=timer.seconds,
                  bytes=size, **fields)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if isinstance(e, SpectroPaintError) else f"{type(e).__name__}: {text}"


class Journal:
    """``batch-journal.jsonl``: a line per finished file, on disk before the next."""

    def __init__(self, outdir: Path, resume: bool):
        self.path = outdir / JOURNAL
        self.records: dict[str, Record] = {}
        if resume and self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    record = Record(**json.loads(line))
                except (ValueError, TypeError):
                    continue  # the last line of a killed run may be cut short
                self.records[record.input] = record
        self._file = open(self.path, "a" if resume else "w")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()

    def done(self, job: Job) -> bool:
        record = self.records.get(str(job.input))
        return record is not None and record.status == "done" and job.output.exists()

    def add(self, record: Record) -> None:
        with self._lock:
            self._file.write(json.dumps(asdict(record)) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())
            self.records[record.input] = record

    def close(self) -> None:
        self._file.close()


def write_report(outdir: Path, jobs: list[Job], journal: Journal, seconds: float) -> dict:
    """``batch-report.json``: every file's status, timings and metrics, and totals."""
    files = [asdict(journal.records[str(j.input)]) for j in jobs if str(j.input) in journal.records]
    failed = sum(f["status"] == "failed" for f in files)
    stages: dict[str, float] = {}
    for f in files:
        for name, value in f["seconds"].items():
            stages[name] = round(stages.get(name, 0.0) + value, 4)
    report = {"files": files, "total": len(jobs), "done": len(files) - failed, "failed": failed,
              "not_run": len(jobs) - len(files), "seconds": round(seconds, 3),
              "stage_seconds": stages}  # summed over files (and workers)
    write_bytes(outdir / REPORT, json.dumps(report, indent=1).encode())
    return report


def run_local(jobs: list[Job], settings: Settings, journal: Journal, status=None,
              workers: int = 1, stop: threading.Event | None = None) -> None:
    """The pipeline (see the module notes), with ``workers`` painting threads.
    ``status``: told of each finished file and the queues. Ctrl+C (or ``stop``)
    stops reading and painting; what is painted is still written, then
    KeyboardInterrupt goes on up."""
    stop = stop or threading.Event()
    decoded: queue.Queue = queue.Queue(PREFETCH)
    painted: queue.Queue = queue.Queue(WRITE_QUEUE)
    reader = threading.Thread(target=_read, args=(jobs, decoded, stop), daemon=True)
    reader.start()
    writer = threading.Thread(target=_write, args=(painted, settings, journal, status),
                              daemon=True)
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


def _read(jobs: list[Job], decoded: queue.Queue, stop: threading.Event) -> None:
    for job in jobs + [None]:
        item = None
        if job is not None:
            timer = _Timer()
            try:
                item = (job, load(job.input), timer)
                timer.lap("decode")
            except Exception as e:  # noqa: BLE001 - recorded, the batch goes on
                item = (job, e, timer)
        put_unless_stopped(decoded, item, stop)


def _paint(decoded: queue.Queue, painted: queue.Queue, settings: Settings,
           stop: threading.Event, status, finished: threading.Event) -> None:
    try:
        _paint_files(decoded, painted, settings, stop, status)
    finally:
        finished.set()


def _paint_files(decoded: queue.Queue, painted: queue.Queue, settings: Settings,
                 stop: threading.Event, status) -> None:
    while not stop.is_set():
        try:
            item = decoded.get(timeout=0.2)
        except queue.Empty:
            continue
        if item is None:
            decoded.put(None)  # for the other painters
            return
        job, audio, timer = item
        wave = None
        if not isinstance(audio, BaseException):
            try:
                wave = paint_audio(audio, settings)
                timer.lap("paint")
            except Exception as e:  # noqa: BLE001 - recorded, the batch goes on
                audio = e
        painted.put((job, audio, wave, timer))
        if status is not None:
            status.queues(decoded.qsize(), painted.qsize())


def _write(painted: queue.Queue, settings: Settings, journal: Journal, status) -> None:
    while (item := painted.get()) is not None:
        job, audio, wave, timer = item
        if isinstance(audio, BaseException):
            record = _record(job, "failed", timer, error=_one_line(audio))
        else:
            try:
                metrics = write_output(job, audio, wave, settings)
                timer.lap("write")
                record = _record(job, "done", timer, metrics=metrics, notes=audio.notes)
            except Exception as e:  # noqa: BLE001 - recorded, the batch goes on
                record = _record(job, "failed", timer, error=_one_line(e))
        journal.add(record)
        if status is not None:
            status.finished(record)


def output_suffix(fmt: str | None) -> str | None:
    """``--format wav`` -> ".wav"; refused before any work when it cannot be written."""
    if fmt is None:
        return None
    suffix = "." + fmt.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ParameterError(f"--format {fmt}: cannot write it; use one of "
                             f"{', '.join(s[1:] for s in sorted(FORMATS))}")
    return suffix
