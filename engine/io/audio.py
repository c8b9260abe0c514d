"""Reading audio files into float32 ``[channels, samples]`` arrays, with every
way a file can be bad turned into one :class:`~engine.errors.AudioError`
that names the file, what is wrong and what to do."""

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.errors import AudioError, TruncatedAudio
from engine.io.layout import channel_mask, channel_names
from engine.io.metadata import Metadata, read_metadata
from engine.io.riff import find_chunk
from engine.progress import CancelFlag, ProgressFn, step
from engine.runtime.memory import available_memory
from engine.runtime.stats import timed

READ_BLOCK = 1 << 16  # frames per read, between progress reports (fastest here)
SALVAGE_BLOCK = 1024  # frames per read when recovering the good part of a damaged file
# The extensions audio files carry, among the formats libsndfile reads: what a folder
# given to a batch is searched for, and what the open dialog offers.
READ_SUFFIXES = (".wav", ".wave", ".bwf", ".rf64", ".w64", ".flac", ".aiff", ".aif", ".aifc",
                 ".caf", ".au", ".snd", ".ogg", ".oga", ".opus", ".mp3")


@dataclass
class Audio:
    """Decoded audio: ``samples`` is float32 ``[channels, frames]``."""

    samples: np.ndarray
    sample_rate: int
    path: Path | None = None
    format: str = ""
    subtype: str = ""
    notes: list[str] = field(default_factory=list)  # repairs the user should hear about
    layout: tuple[str, ...] = ()  # the speakers the file declares, one per channel
    metadata: Metadata = field(default_factory=Metadata)  # tags, bext, markers: written with it

    @property
    def channels(self) -> int:
        return self.samples.shape[0]

    @property
    def frames(self) -> int:
        return self.samples.shape[1]

    @property
    def duration(self) -> float:
        return self.frames / self.sample_rate

    @property
    def peak(self) -> float:
        """Largest absolute sample value (1.0 = full scale)."""
        return float(np.max(np.abs(self.samples), initial=0.0))


def not_a_file(path: Path) -> str | None:
    """Why ``path`` is no audio file to read, when it exists as something else: a
    dangling link, a FIFO, a socket or a device (a read could wait for ever or read
    nothing). None for a regular file, a folder, or nothing there."""
    if path.is_symlink() and not path.exists():
        return f"a link to {os.readlink(path)}, which does not exist"
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return what
    return None


def _check_path(path: Path) -> None:
    if path.is_symlink() and not path.exists():
        raise AudioError(f"{path}: the link points to {os.readlink(path)}, which does not exist; "
                         "fix the link or open the file it should point to")
    if not path.exists():
        raise AudioError(f"{path}: no such file; check the name and folder")
    if path.is_dir():
        raise AudioError(f"{path}: is a folder, not an audio file; choose a file inside it")
    if (what := not_a_file(path)) is not None:
        raise AudioError(f"{path}: is {what}, not an audio file; give a file")
    if not os.access(path, os.R_OK):
        raise AudioError(f"{path}: permission denied; make the file readable")
    if path.stat().st_size == 0:
        raise AudioError(f"{path}: the file is empty (0 bytes); it was never written or was "
                         "cut off, so open another copy")


def _riff_declared_frames(path: Path, block_align: int) -> tuple[int, int] | None:
    """For a RIFF/WAVE file: (frames its 'data' header declares, frames present).

    libsndfile silently trusts the file size, so a cut-off WAV or a header
    that lies about its length would otherwise open without a word."""
    with open(path, "rb") as f:
        declared = find_chunk(f, b"data")
        if declared is None:
            return None
        present = max(0, path.stat().st_size - f.tell())
    return declared // block_align, min(declared, present) // block_align


def _open_info(path: Path) -> sf._SoundFileInfo:
    try:
        return sf.info(str(path))
    except sf.LibsndfileError as e:
        detail = str(e).split(":", 1)[-1].strip() or "unknown reason"
        raise AudioError(f"{path}: not a readable audio file ({detail}); open a WAV, FLAC, "
                         "OGG, AIFF or MP3 file, or convert this one first") from e
    except (RuntimeError, TypeError) as e:
        raise AudioError(f"{path}: not a readable audio file ({e}); open a WAV, FLAC, OGG, "
                         "AIFF or MP3 file, or convert this one first") from e


def _bytes_per_frame(info: sf._SoundFileInfo) -> int | None:
    widths = {"PCM_U8": 1, "PCM_S8": 1, "PCM_16": 2, "PCM_24": 3, "PCM_32": 4,
              "FLOAT": 4, "DOUBLE": 8}
    width = widths.get(info.subtype)
    return width * info.channels if width else None


@timed("decode")
def load(path: str | os.PathLike, *, allow_truncated: bool = False,
         memory_limit: int | None = None, progress: ProgressFn | None = None,
         cancel: CancelFlag | None = None) -> Audio:
    """Decode ``path`` to float32 ``[channels, frames]`` in [-1, 1].

    NaN and infinite samples are repaired (NaN -> 0, +-inf -> +-1) and a
    note says how many; the file itself is never changed. A file cut short
    (or whose header claims more than it holds) is refused unless
    ``allow_truncated``, which opens what is there with a note. Memory is
    checked before decoding against ``memory_limit`` bytes (default: what
    the system has available)."""
    path = Path(path)
    _check_path(path)
    info = _open_info(path)
    notes: list[str] = []
    if info.frames <= 0 or info.channels <= 0:
        raise AudioError(f"{path}: the file holds no audio frames ({info.format} header, "
                         "0 samples); record or export it again")
    if info.samplerate <= 0:
        raise AudioError(f"{path}: invalid sample rate {info.samplerate} Hz in the header")

    frames = info.frames
    block_align = _bytes_per_frame(info)
    if info.format in ("WAV", "WAVEX") and block_align:
        declared = _riff_declared_frames(path, block_align)
        if declared and declared[1] < declared[0]:
            msg = (f"the header declares {declared[0]} frames but the file holds only "
                   f"{declared[1]}: it was cut short or its header is wrong")
            if not allow_truncated:
                raise TruncatedAudio(f"{path}: {msg}",
                                     f"open the {declared[1]} frames that are there")
            notes.append(f"{msg}; opened the {declared[1]} frames present")

    limit = available_memory() if memory_limit is None else memory_limit
    need = frames * info.channels * 4 * 2  # float32 result plus one block-sized copy margin
    if need > limit:
        raise AudioError(f"{path}: decoding needs about {need / 2**30:.1f} GiB "
                         f"({frames} frames x {info.channels} channels) but only "
                         f"{limit / 2**30:.1f} GiB is available; close other programs or "
                         "split the file")

    samples = np.empty((info.channels, frames), dtype=np.float32)
    done, metadata = 0, Metadata()
    try:
        with sf.SoundFile(str(path)) as f:
            metadata = read_metadata(f)
            while done < frames:
                step(done / frames, progress, cancel)
                block = f.read(min(READ_BLOCK, frames - done), dtype="float32", always_2d=True)
                if len(block) == 0:
                    break
                samples[:, done:done + len(block)] = block.T
                done += len(block)
    except sf.LibsndfileError as e:
        reason = str(e).split(":", 1)[-1].strip()
        if not allow_truncated:
            raise TruncatedAudio(f"{path}: the audio data is damaged after frame {done} of "
                                 f"{frames} ({reason})", "open the part before it") from e
        done = _salvage(path, samples, done)
        notes.append(f"decoding stopped at frame {done} of {frames} ({reason}); "
                     "opened the part before it")
    if done < frames:
        if not allow_truncated:
            raise TruncatedAudio(f"{path}: the header declares {frames} frames but only "
                                 f"{done} could be read: the file was cut short",
                                 "open what is there")
        samples = samples[:, :done].copy()
    if samples.shape[1] == 0:
        raise AudioError(f"{path}: no audio frame could be decoded; the file is damaged")
    step(1.0, progress, None)

    _repair_non_finite(samples, notes)
    mask = channel_mask(path) if info.format in ("WAV", "WAVEX", "RF64") else None
    layout = channel_names(info.channels, mask) if mask else ()
    return Audio(samples, info.samplerate, path, info.format, info.subtype, notes, layout,
                 metadata)


def _salvage(path: Path, samples: np.ndarray, done: int) -> int:
    """After a decoding error, read on from ``done`` in small steps until the
    damage; returns the number of good frames now in ``samples``."""
    with sf.SoundFile(str(path)) as f:
        f.seek(done)
        while done < samples.shape[1]:
            try:
                block = f.read(min(SALVAGE_BLOCK, samples.shape[1] - done), dtype="float32",
                               always_2d=True)
            except sf.LibsndfileError:
                break
            if len(block) == 0:
                break
            samples[:, done:done + len(block)] = block.T
            done += len(block)
    return done


def _repair_non_finite(samples: np.ndarray, notes: list[str]) -> None:
    finite = np.isfinite(samples)
    if finite.all():
        return
    bad = int(finite.size - np.count_nonzero(finite))
    np.nan_to_num(samples, copy=False, nan=0.0, posinf=1.0, neginf=-1.0)
    notes.append(f"{bad} samples were NaN or infinite and were repaired "
                 "(NaN -> 0, +inf -> +1, -inf -> -1); the file on disk is unchanged")
