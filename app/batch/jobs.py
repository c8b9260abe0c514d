"""``specpaint batch``: one stroke script painted over many files: finding them,
checking the settings once, painting (short files stacked), writing and
measuring each, the journal and the report. :mod:`app.batch.pipeline` runs
them in one process, :mod:`app.batch.cluster` across processes or on a Dask
cluster.

The journal (``batch-journal.jsonl`` in the output folder: one JSON line per
finished file, flushed and fsynced) is what ``--resume`` reads: files done
are skipped. Outputs are written atomically (engine.io.atomic), so a killed batch
leaves finished files and no partial one.
"""

import contextlib
import glob
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from app.batch.wavread import plain_audio
from engine.errors import AudioError, ParameterError, SpectroPaintError
from engine.io.atomic import write_bytes
from engine.io.audio import READ_SUFFIXES, Audio, load, not_a_file
from engine.io.export import FORMATS, check_quality, export, same_depth
from engine.measure.metrics import si_sdr_and_snr_db

STACK = 8  # files painted as one document at most (app.batch.stacks)
STACK_SECONDS = 60.0  # files this short, of one rate and length, may be painted stacked
JOURNAL, REPORT = "batch-journal.jsonl", "batch-report.json"
SETTINGS = "batch-settings.json"  # what the journal's files were painted with
_WRITTEN = [s[1:] for s in sorted(FORMATS)]  # what --format takes


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
    quality: float | None = None  # Ogg Vorbis and MP3 outputs: 0 to 10 (None: the default)
    stacks: bool = False  # short files may be painted stacked (check_settings decides)
    stack: int = STACK  # files a stack holds at most: halved when one runs out of GPU memory


@dataclass
class Record:
    """One file's outcome: a journal line and a report entry."""
    input: str
    output: str
    status: str  # "done" or "failed"
    error: str = ""
    seconds: dict = field(default_factory=dict)  # decode, paint, write
    metrics: dict = field(default_factory=dict)  # output against input
    bytes: int = 0  # of the input file, when it was read
    mtime_ns: int = 0  # the input's modification time then (0: not known)
    notes: list = field(default_factory=list)  # repairs on decoding, strokes clipped to it


def find_jobs(specs: list[str], outdir: Path, suffix: str | None = None,
              skipped: list[str] | None = None) -> list[Job]:
    """Files named, folders (recursively) and globs, each mapped to the same
    relative place under ``outdir`` (``suffix``: another format's extension). What a
    folder or a glob holds under an audio name that is no file to read (a dangling
    link, a FIFO) is not taken and goes into ``skipped``, with why."""
    found: dict[Path, Path] = {}  # input -> path relative to what was named
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found.update((f, f.relative_to(path)) for f in _readable(
                [f for f in sorted(path.rglob("*")) if f.suffix.lower() in READ_SUFFIXES],
                skipped))
        elif (what := not_a_file(path)) is not None:
            raise ParameterError(f"{spec}: is {what}, not an audio file or a folder")
        elif path.is_file():
            found[path] = Path(path.name)
        elif glob.has_magic(spec):
            base = Path(*[p for p in _until_magic(Path(spec).parts)])
            found.update((f, f.relative_to(base)) for f in _readable(
                [Path(m) for m in sorted(glob.glob(spec, recursive=True))
                 if not Path(m).is_dir()], skipped))
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


def _readable(paths: list[Path], skipped: list[str] | None) -> list[Path]:
    """The regular files of ``paths``; the rest but folders (dangling links, FIFOs,
    sockets, devices) into ``skipped`` with why."""
    out = []
    for path in paths:
        if (what := not_a_file(path)) is not None:
            if skipped is not None:
                skipped.append(f"{path}: {what}")
        elif path.is_file():
            out.append(path)
    return out


def check_outputs(jobs: list[Job], bits: str | None, quality: float | None = None) -> None:
    """Refuse, before any file, outputs that cannot be written, which would otherwise
    fail each file after its painting: an input format SpectroPaint reads but does not
    write (Opus) without ``--format``, ``--bits`` a format cannot hold, or ``--quality``
    for a lossless format (or out of its range)."""
    by_suffix: dict[str, list[Job]] = {}
    for job in jobs:
        by_suffix.setdefault(job.output.suffix.lower(), []).append(job)
    for suffix, some in by_suffix.items():
        which = str(some[0].input) + (f" and {len(some) - 1} more" if len(some) > 1 else "")
        if suffix not in FORMATS:
            what = f"{suffix} files" if suffix else "files without an extension"
            raise ParameterError(f"{which}: SpectroPaint reads {what} but does not write "
                                 f"them; give --format ({', '.join(_WRITTEN)}) to write "
                                 "them as that")
        name, depths, _ = FORMATS[suffix]
        try:
            check_quality(some[0].output, quality)
        except AudioError as e:
            raise ParameterError(f"--quality: {str(e).split(': ', 1)[1]} ({which}; or give "
                                 "--format ogg or mp3)") from e
        if bits is None or str(bits) in depths:
            continue
        lossy = {"vorbis": f"{name} Vorbis", "mp3": name}.get(next(iter(depths)))
        if lossy:
            raise ParameterError(f"--bits {bits}: {lossy} files have no bit depth "
                                 f"({which}); leave --bits out, or give another --format")
        raise ParameterError(f"--bits {bits}: {name} files cannot hold it ({which}); "
                             f"choose --bits {' or '.join(depths)}, or another --format")


def _until_magic(parts: tuple[str, ...]) -> list[str]:
    out = []
    for part in parts:
        if glob.has_magic(part):
            break
        out.append(part)
    return out or ["."]


def write_output(job: Job, audio: Audio, wave: np.ndarray, settings: Settings) -> tuple:
    """Export ``wave`` with the input's metadata (tags, bext, markers) to the job's output
    (atomically) and measure it against the input; returns the metrics and notes
    on the metadata the output's format could not keep (and on stale temporary files
    removed beside it)."""
    job.output.parent.mkdir(parents=True, exist_ok=True)
    depth = settings.bits or same_depth(audio.subtype, job.output)
    report = export(wave, audio.sample_rate, job.output, bit_depth=depth, source=job.input,
                    dither=settings.dither, metadata=audio.metadata, layout=audio.layout,
                    quality=settings.quality)
    notes = [f"not kept: {lost}" for lost in report.not_kept]
    if report.cleared:  # temporary files of a killed run in its folder
        notes.append(report.cleared)
    if wave.shape != audio.samples.shape:  # an edit step changed the length
        notes.append("no SNR: the output's length differs from the input's (an edit step)")
        return {"snr_db": None, "si_sdr_db": None}, notes
    si_sdr, snr = si_sdr_and_snr_db(audio.samples, wave)
    return {"snr_db": _finite(snr), "si_sdr_db": _finite(si_sdr)}, notes


def _finite(x: float) -> float | None:
    """JSON has no infinity: an unchanged file's SNR is reported as null."""
    return round(x, 3) if np.isfinite(x) else None


def decode_job(job: Job) -> tuple:
    """(job, Audio or the error decoding raised, timer)."""
    timer = Timer()
    with contextlib.suppress(OSError):  # (load says what is wrong with the file)
        read = job.input.stat()
        timer.size, timer.mtime_ns = read.st_size, read.st_mtime_ns
    try:
        audio = plain_audio(job.input) or load(job.input)
    except Exception as e:  # noqa: BLE001 - recorded, the batch goes on
        return job, e, timer
    timer.lap("decode")
    return job, audio, timer


def finish_job(job: Job, audio, wave, timer: "Timer", settings: Settings) -> Record:
    """Write a painted file and measure it, or record why it failed."""
    if isinstance(audio, BaseException):
        return _record(job, "failed", timer, error=_one_line(audio))
    timer.start()  # (not the time it waited for a writer)
    try:
        metrics, not_kept = write_output(job, audio, wave, settings)
        timer.lap("write")
        return _record(job, "done", timer, metrics=metrics, notes=audio.notes + not_kept)
    except Exception as e:  # noqa: BLE001 - recorded, the batch goes on
        return _record(job, "failed", timer, error=_one_line(e))


class Timer:
    """A file's seconds in each stage, and its input's size and modification time when
    it was read (what --resume compares, to paint a changed input again)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.last = time.perf_counter()
        self.size = self.mtime_ns = 0

    def start(self) -> None:
        """The next lap starts now."""
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self.last, 4)
        self.last = now

    def add(self, name: str, seconds: float) -> None:
        """A stage timed elsewhere (a stack's share); the next lap starts now."""
        self.seconds[name] = round(seconds, 4)
        self.start()


def _record(job: Job, status: str, timer: Timer, **fields) -> Record:
    return Record(str(job.input), str(job.output), status, seconds=timer.seconds,
                  bytes=timer.size, mtime_ns=timer.mtime_ns, **fields)


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
        """Whether ``job`` was painted from its input as it is now, and its output stands."""
        record = self.records.get(str(job.input))
        return record is not None and record.status == "done" and job.output.exists() and \
            not self.changed(job)

    def changed(self, job: Job) -> bool:
        """Whether ``job``'s input was painted and has changed since (another size or
        modification time; a journal from before they were recorded knows none)."""
        record = self.records.get(str(job.input))
        if record is None or record.status != "done" or not record.mtime_ns:
            return False
        try:
            now = job.input.stat()
        except OSError:
            return True
        return (now.st_size, now.st_mtime_ns) != (record.bytes, record.mtime_ns)

    def add(self, *records: Record) -> None:
        """Record files finished together (a worker's group) with one flush to disk."""
        with self._lock:
            self._file.write("".join(json.dumps(asdict(r)) + "\n" for r in records))
            self._file.flush()
            os.fsync(self._file.fileno())
            self.records.update((r.input, r) for r in records)

    def close(self) -> None:
        self._file.close()


def keep_settings(outdir: Path, settings: Settings, suffix: str | None, resume: bool) -> None:
    """Write what this batch paints with to ``batch-settings.json``; on ``resume``, first
    refuse settings other than those the files done so far were painted with (a resumed
    batch skips them: a changed preset or --format would leave OUTDIR half one, half the
    other). Where no such file is (an older batch), resume as asked."""
    now = {"strokes": settings.strokes, "bits": settings.bits, "dither": settings.dither,
           "quality": settings.quality, "format": suffix,
           "analysis": {k: v for k, v in settings.analysis.items() if k != "device"}}
    now = json.loads(json.dumps(now), parse_constant=_infinity_as_text)  # as it reads back
    path = outdir / SETTINGS
    if resume and path.exists():
        try:
            then = json.loads(path.read_text())
        except ValueError:
            then = None
        then = then if isinstance(then, dict) else {}  # damaged: nothing can be matched
        changed = [k for k in now if then.get(k) != now[k]]
        if changed:
            raise ParameterError(
                f"{path}: the files done so far were painted with other "
                f"{', '.join(changed)}; resuming would mix the two. Give the same settings, "
                "leave out --resume to paint every file afresh, or give another -o")
    write_bytes(path, json.dumps(now, indent=1).encode())


def _infinity_as_text(name: str) -> str:
    """Standard JSON has no infinity (a hard eraser's gain): written "-inf" or "inf",
    as presets write it."""
    return {"-Infinity": "-inf", "Infinity": "inf"}.get(name, name)


def write_report(outdir: Path, jobs: list[Job], journal: Journal, seconds: float, *,
                 skipped: list[str] = ()) -> dict:
    """``batch-report.json``: every file's status, timings and metrics, totals, and what
    the folders held that was not taken (``skipped``: find_jobs)."""
    files = [asdict(journal.records[str(j.input)]) for j in jobs if str(j.input) in journal.records]
    failed = sum(f["status"] == "failed" for f in files)
    stages: dict[str, float] = {}
    for f in files:
        for name, value in f["seconds"].items():
            stages[name] = round(stages.get(name, 0.0) + value, 4)
    report = {"files": files, "total": len(jobs), "done": len(files) - failed, "failed": failed,
              "not_run": len(jobs) - len(files), "seconds": round(seconds, 3),
              "stage_seconds": stages,  # summed over files (and workers)
              "skipped": list(skipped)}
    write_bytes(outdir / REPORT, json.dumps(report, indent=1).encode())
    return report


def output_suffix(fmt: str | None) -> str | None:
    """``--format wav`` -> ".wav"; refused before any work when it cannot be written."""
    if fmt is None:
        return None
    suffix = "." + fmt.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ParameterError(f"--format {fmt}: cannot write it; use one of "
                             f"{', '.join(_WRITTEN)}")
    return suffix
