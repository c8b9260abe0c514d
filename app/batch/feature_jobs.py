"""``specpaint features``: log-mel features of many files, for a model to read.

Each file is decoded, mixed to mono and resampled (soxr) to ``sr``, cut into
segments of ``segment`` samples every ``segment_hop`` (and, optionally, each
segment into sub-segments); each (sub-)segment becomes a log-mel spectrogram,
``[n_mels, 1 + length // hop]`` in dB (10 log10 of mel power, floored at
-100 dB). A file's tail shorter than a segment is dropped; a file shorter
than one segment gives one segment, zero-padded.

Output folder: ``features.npy`` ``[items, n_mels, frames]`` (float16 clamped to
its range, or float32), ``mapping.npy`` int64 ``[items, 4]`` (file index,
segment index, sub-segment index, start sample at ``sr``), ``manifest.json``
(files, shapes, dtypes, sizes and SHA-256 of the two arrays, a run id, parameters,
versions). The manifest is the set's seal: the arrays are written to temporary
names, the old manifest removed, the arrays renamed into place and the manifest
written last (:func:`_commit_set`), so after a kill at any moment
:func:`open_set` opens the old set or the new one whole, or refuses the folder.
Read a set with ``open_set(outdir)`` (arrays memory-mapped), or each file with
``numpy.load(path, mmap_mode="r")`` where a manifest is present.

Pipeline: decoder threads (a plain WAV memory-mapped, :mod:`app.batch.wavread`;
anything else decoded and resampled, which release the GIL) read ahead into a
bounded queue; files are taken in groups, their items cut by one mapping; the
engine device computes batches of them; a writer thread stores the results
(:mod:`app.batch.staging` on CUDA: pinned buffers, a copy stream). Mel: nnAudio's
MelSpectrogram layer on a GPU; on the CPU each frame once for all the items
holding it (:meth:`engine.measure.logmel.LogMel.of_starts`, with the layer's filterbank),
on one torch thread: the decoders and the writer have the other core, and two
torch threads on a 2-core machine shared with other work made each elementwise
pass 5-15 times slower than one (bench/bench_features.py; 500 files: 1.5 s
against 7 s with both changes).
"""

import hashlib
import json
import os
import queue
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from app.batch import wavread
from app.batch.staging import Staging
from engine.errors import ParameterError
from engine.io.atomic import clear_stale, commit, discard, temporary, write_bytes
from engine.io.audio import load
from engine.measure.logmel import FeatureSettings, LogMel, items
from engine.progress import CancelFlag, ProgressFn, put_unless_stopped, step

READ_AHEAD = 8  # decoded files waiting for the device
DECODERS = 2
GROUP_SAMPLES = 1 << 20  # a group's samples, cut into items together (about 25 10-s files)
BATCH_ITEMS = 4096  # (sub-)segments per device batch
WRITE_AHEAD = 4  # computed batches waiting for the writer
COMPUTE_THREADS = 1  # torch's threads for the mel on the CPU
FLOAT16_MAX = float(np.finfo(np.float16).max)
BLOCK_BYTES = 1 << 24  # hashed this much at a time
HEADER_BYTES = 256  # features.npy's header, written in place at the end (any shape fits)


def decode(path: Path, sr: int) -> np.ndarray:
    """Mono float32 samples of ``path`` at ``sr``: a plain WAV at ``sr`` memory-mapped
    (:mod:`app.batch.wavread`, the same samples), anything else through libsndfile
    and soxr."""
    where = wavread.layout(path, rate=sr)
    samples = wavread.read(path, where) if where is not None else None
    if samples is not None:
        return _mono(samples)
    audio = load(path)
    x = _mono(audio.samples)
    if audio.sample_rate != sr:
        import soxr

        x = soxr.resample(x, audio.sample_rate, sr, quality="HQ")
    return np.ascontiguousarray(x, dtype=np.float32)


def _mono(samples: np.ndarray) -> np.ndarray:
    return samples.mean(0) if samples.shape[0] > 1 else samples[0]


def extract(paths: list[Path], outdir: Path, s: FeatureSettings, device: torch.device,
            progress: ProgressFn | None = None, cancel: CancelFlag | None = None, *,
            skipped: list[str] = ()) -> dict:
    """Write features.npy, mapping.npy and manifest.json for ``paths`` into ``outdir``;
    returns the manifest. A file that cannot be read is listed with its error and
    contributes no items; ``skipped``: what the folders held that was not taken
    (app.batch.jobs.find_jobs), listed too."""
    s.check()
    outdir.mkdir(parents=True, exist_ok=True)
    mel, staging = LogMel(s, device), Staging(device)
    dtype = np.dtype(s.dtype)
    cleared = clear_stale(outdir / "features.npy")  # what a killed run left
    part = temporary(outdir / "features.npy")  # the array behind a header left blank
    files, mapping = [], []
    decoded: queue.Queue = queue.Queue(READ_AHEAD)
    early: dict[int, tuple] = {}  # decoded out of order, waiting for their turn
    stop = threading.Event()
    seconds = {"decode": 0.0, "waiting for files": 0.0, "compute": 0.0, "write": 0.0}
    # decode and write run in threads of their own, beside the rest
    _start_decoders(paths, s.sr, decoded, stop, seconds)
    threads = torch.get_num_threads()
    if device.type == "cpu":  # see the module notes
        torch.set_num_threads(COMPUTE_THREADS)
    try:
        with Writer(part, skip=HEADER_BYTES) as writer:
            group: list[tuple[dict, np.ndarray]] = []
            for index in range(len(paths)):
                step(index / max(len(paths), 1), progress, cancel)
                t0 = time.perf_counter()
                while index not in early:
                    item = decoded.get()
                    early[item[0]] = item
                seconds["waiting for files"] += time.perf_counter() - t0
                i, x, error = early.pop(index)
                entry = {"path": str(paths[i]), "samples": 0, "items": 0, "index": i}
                if error is not None:
                    entry["error"] = error
                else:
                    group.append((entry, x))
                files.append(entry)
                if sum(len(g[1]) for g in group) >= GROUP_SAMPLES or index == len(paths) - 1:
                    t0 = time.perf_counter()
                    mapping.append(_compute(group, mel, s, dtype, staging, writer))
                    seconds["compute"] += time.perf_counter() - t0
                    group = []
            seconds["write"] = writer.seconds
        table = np.concatenate(mapping) if mapping else np.zeros((0, 4), np.int64)
        for entry in files:
            del entry["index"]
        manifest = _manifest(files, table, s, device)
        manifest["skipped"] = list(skipped)
        manifest["seconds"] = seconds
        _commit_set(outdir, part, table, manifest, s, dtype)
    finally:
        torch.set_num_threads(threads)
        stop.set()
        discard(part)
    step(1.0, progress, None)
    if cleared:
        manifest["notes"] = [cleared]
    return manifest


def _start_decoders(paths, sr, decoded: queue.Queue, stop, seconds: dict) -> None:
    """Threads decoding files (every DECODERS-th each) into ``decoded`` as
    (index, samples, error); the consumer puts them back in order. Their time adds up
    in ``seconds["decode"]`` (each thread's in a slot of its own, summed there)."""
    spent = [0.0] * DECODERS

    def work(first: int) -> None:
        for i in range(first, len(paths), DECODERS):
            t0 = time.perf_counter()
            try:
                item = (i, decode(paths[i], sr), None)
            except Exception as e:  # noqa: BLE001 - a bad file is listed, the rest go on
                item = (i, None, " ".join(str(e).split()))
            spent[first] += time.perf_counter() - t0
            seconds["decode"] = sum(spent)
            put_unless_stopped(decoded, item, stop)

    for k in range(DECODERS):
        threading.Thread(target=work, args=(k,), daemon=True).start()


def _compute(group, mel: LogMel, s: FeatureSettings, dtype: np.dtype, staging: Staging,
             writer: "Writer") -> np.ndarray:
    """Log-mel of every item of a group of decoded files, handed to ``writer`` in order;
    their mapping rows ``[k, 4]``, and each file's entry counts its samples and items.
    The items are cut from one buffer of the group's samples (each file zero-padded
    to a segment and to a multiple of the hop), BATCH_ITEMS at a time."""
    if not group:
        return np.zeros((0, 4), np.int64)
    lengths = np.array([len(x) for _, x in group])
    padded = -(-np.maximum(lengths, s.segment) // s.hop) * s.hop  # files start on the hop
    buffer = np.zeros(int(padded.sum()), np.float32)
    offsets = np.cumsum(padded) - padded
    file, table = items(lengths, s)
    counts = np.bincount(file, minlength=len(group))
    for (entry, x), offset, count in zip(group, offsets, counts, strict=True):
        buffer[offset:offset + len(x)] = x
        entry.update(samples=len(x), items=int(count))
    first = offsets[file] + table[:, 2]
    for k in range(0, len(first), BATCH_ITEMS):
        starts = first[k:k + BATCH_ITEMS]
        if mel.shares_frames(starts):  # the CPU: overlapping items' frames computed once
            result = mel.of_starts(buffer, starts)
        else:
            result = mel(staging.upload(buffer[starts[:, None] + np.arange(s.length)]))
        if dtype == np.float16:
            result = result.clamp(-FLOAT16_MAX, FLOAT16_MAX).to(torch.float16)
        writer.put(*staging.download(result))
    index = np.array([entry["index"] for entry, _ in group])
    return np.column_stack([index[file], table])


class Writer:
    """Appends computed batches to a file from a thread of its own, so that the device
    never waits on the disk while WRITE_AHEAD batches fit in its queue; flushed and
    fsynced on a clean exit, and an error while writing raised there."""

    def __init__(self, path: Path, *, skip: int = 0):
        self.file = open(path, "wb")
        self.file.write(bytes(skip))
        self.queue: queue.Queue = queue.Queue(WRITE_AHEAD)
        self.error: BaseException | None = None
        self.seconds = 0.0  # spent writing (and waiting for the device's copies)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def put(self, batch: torch.Tensor, ready=None) -> None:
        """Write ``batch`` once ``ready`` (a CUDA event, or None) has happened."""
        if self.error is not None:
            raise self.error
        self.queue.put((batch, ready))

    def _run(self) -> None:
        while (item := self.queue.get()) is not None:
            batch, ready = item
            if self.error is None:
                t0 = time.perf_counter()
                try:
                    if ready is not None:
                        ready.synchronize()
                    self.file.write(memoryview(np.ascontiguousarray(batch.numpy())).cast("B"))
                except BaseException as e:  # noqa: BLE001 - raised in the job's thread
                    self.error = e
                self.seconds += time.perf_counter() - t0

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, kind, *_) -> None:
        self.queue.put(None)
        self.thread.join()
        try:
            if kind is None and self.error is None:
                self.file.flush()
                os.fsync(self.file.fileno())
        finally:
            self.file.close()
        if kind is None and self.error is not None:
            raise self.error


def _commit_set(outdir: Path, features: Path, table: np.ndarray, manifest: dict,
                s: FeatureSettings, dtype: np.dtype) -> None:
    """Seal the set so that a kill at any moment leaves one that :func:`open_set` opens
    whole (the old one or the new one) or refuses: the features' header is written into
    their temporary file, the mapping to one of its own (their sizes and SHA-256 into the
    manifest, with a new run id), then the old manifest is removed, the arrays renamed
    into place and the manifest written last. (Killed right after features.npy was
    renamed, a run left the new features beside the old mapping and manifest, and they
    loaded.)"""
    parts = {"features": features, "mapping": temporary(outdir / "mapping.npy")}
    started = time.perf_counter()
    try:
        with open(features, "r+b") as f:
            f.write(_header((len(table), s.n_mels, s.stored_frames), dtype))
        with open(parts["mapping"], "wb") as f:
            np.save(f, table)
        for name, part in parts.items():
            manifest[name].update(bytes=part.stat().st_size, sha256=_sha256(part))
        manifest["run"] = uuid.uuid4().hex
        (outdir / "manifest.json").unlink(missing_ok=True)  # the set is open until it is back
        for name, part in parts.items():
            commit(part, outdir / f"{name}.npy")
        manifest.setdefault("seconds", {})["seal"] = time.perf_counter() - started
        write_bytes(outdir / "manifest.json", json.dumps(manifest, indent=1).encode())
    finally:
        for part in parts.values():
            discard(part)


def _header(shape: tuple[int, ...], dtype: np.dtype) -> bytes:
    """An .npy (1.0) header of HEADER_BYTES for an array of ``shape``: its dictionary
    padded with spaces, as numpy pads it (to a multiple of 64 bytes)."""
    text = repr({"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                 "shape": shape})
    length = HEADER_BYTES - 10  # after the magic string, the version and the length
    return (np.lib.format.magic(1, 0) + length.to_bytes(2, "little") +
            text.ljust(length - 1).encode("latin1") + b"\n")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class FeatureSet:
    features: np.ndarray  # memory-mapped, read only
    mapping: np.ndarray
    manifest: dict


def open_set(outdir: str | os.PathLike, *, verify: bool = False) -> FeatureSet:
    """The set ``specpaint features`` wrote in ``outdir``, checked: the manifest is there
    (a run killed while it committed leaves none), each array's size, shape and dtype
    are the manifest's, and with ``verify`` its SHA-256 too (reads every byte). A set
    whose files do not belong together is refused with one line saying what to do."""
    outdir = Path(outdir)
    again = "run specpaint features again to write a whole set"
    try:
        manifest = json.loads((outdir / "manifest.json").read_text())
    except FileNotFoundError:
        raise ParameterError(f"{outdir}: no manifest.json, so no whole feature set (a run "
                             f"was interrupted?); {again}") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ParameterError(f"{outdir / 'manifest.json'}: not a feature set's manifest ({e});"
                             f" {again}") from None
    arrays = {}
    for name in ("features", "mapping"):
        path, want = outdir / f"{name}.npy", manifest.get(name) if isinstance(manifest, dict) \
            else None
        if not isinstance(want, dict):
            raise ParameterError(f"{outdir / 'manifest.json'}: no '{name}' entry; {again}")
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
            size = path.stat().st_size
        except (OSError, ValueError) as e:
            raise ParameterError(f"{path}: cannot be read ({e}); {again}") from None
        if list(array.shape) != want.get("shape") or str(array.dtype) != want.get("dtype") or \
                size != want.get("bytes", size) or \
                (verify and "sha256" in want and _sha256(path) != want["sha256"]):
            raise ParameterError(f"{path}: is not the {name} manifest.json describes (another "
                                 f"run wrote it); {again}")
        arrays[name] = array
    return FeatureSet(arrays["features"], arrays["mapping"], manifest)


def _manifest(files: list[dict], table: np.ndarray, s: FeatureSettings,
              device: torch.device) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    import nnAudio

    try:
        ours = version("spectropaint")
    except PackageNotFoundError:
        ours = "source"
    return {"files": files, "parameters": asdict(s),
            "features": {"file": "features.npy", "shape": [len(table), s.n_mels, s.stored_frames],
                         "dtype": s.dtype, "unit": "dB (10 log10 mel power)",
                         "pool": s.pool, "frames_pooled": s.frames if s.pool else None},
            "mapping": {"file": "mapping.npy", "shape": list(table.shape), "dtype": "int64",
                        "columns": ["file", "segment", "subsegment", "start_sample"]},
            "device": str(device),
            "versions": {"spectropaint": ours, "torch": torch.__version__,
                         "nnAudio": getattr(nnAudio, "__version__", "?"),
                         "numpy": np.__version__}}
