"""Writing audio: in blocks (one long soundfile write to OGG can crash
libsndfile), atomically (a temporary file in the destination folder, renamed
over the destination only when complete), never over the source file unless
forced, and with clipping reported or handled."""

import errno
import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.errors import AudioError
from engine.io.atomic import NAME_MAX, clear_stale, commit, discard, temporary
from engine.io.layout import FLAC_ORDER, mask_of, set_channel_mask
from engine.io.metadata import Metadata, add_marker_names, write_metadata
from engine.progress import CancelFlag, ProgressFn, step
from engine.runtime.stats import timed

WRITE_BLOCK = 1 << 16  # frames per write

# extension -> (libsndfile format, {bit depth name: subtype}, default depth)
_PCM = {"16": "PCM_16", "24": "PCM_24", "32": "PCM_32", "float": "FLOAT"}
_VORBIS = {"vorbis": "VORBIS"}
FORMATS: dict[str, tuple[str, dict[str, str], str]] = {
    ".wav": ("WAV", _PCM, "float"),
    ".wave": ("WAV", _PCM, "float"),
    ".bwf": ("WAV", _PCM, "float"),  # broadcast WAV (its bext chunk: engine.io.metadata)
    ".rf64": ("RF64", _PCM, "float"),
    ".w64": ("W64", _PCM, "float"),
    ".flac": ("FLAC", {"16": "PCM_16", "24": "PCM_24"}, "24"),
    ".aiff": ("AIFF", _PCM, "24"),
    ".aif": ("AIFF", _PCM, "24"),
    ".aifc": ("AIFF", _PCM, "24"),
    ".caf": ("CAF", _PCM, "24"),
    ".au": ("AU", _PCM, "24"),
    ".snd": ("AU", _PCM, "24"),
    ".ogg": ("OGG", _VORBIS, "vorbis"),
    ".oga": ("OGG", _VORBIS, "vorbis"),
    ".mp3": ("MP3", {"mp3": "MPEG_LAYER_III"}, "mp3"),  # libsndfile 1.1 and later
}
MP3_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)  # MPEG 1, 2, 2.5
LOSSY = ("OGG", "MP3")  # the formats a quality is given for
QUALITY_RANGE = (0.0, 10.0)  # as oggenc counts it: 10 the best (the most bits)
SMALLEST = 0.99  # the compression level of quality 0 (libsndfile's MP3 refuses 1.0)
CLIP_MODES = ("report", "normalize", "limit")
CEILING = 10 ** (-0.1 / 20)  # -0.1 dBFS: the peak after normalizing or limiting
LIMIT_KNEE = 10 ** (-1.0 / 20)  # soft limiting starts at -1 dBFS
LSB_16 = 1 / 32768
INTEGER_SCALE = {"PCM_16": 1 << 15, "PCM_24": 1 << 23, "PCM_32": 1 << 31}  # full scale
DITHER_SEED = 0x5EED
DITHER_KEPT = 1 << 22  # samples: a file's dither this short is kept for the next of its shape


@dataclass
class ExportReport:
    path: Path
    format: str
    subtype: str
    peak_dbfs: float  # of the audio given, before any clip handling
    clipped_samples: int  # samples above full scale in the audio given
    action: str  # what was done about them: "none", "clipped", "kept (float)", ...
    dithered: bool = False
    not_kept: tuple[str, ...] = ()  # metadata of the source the format could not hold
    cleared: str | None = None  # stale temporary files removed beside it (engine.io.atomic)

    def summary(self) -> str:
        head = f"wrote {self.path} ({self.format} {self.subtype}" + \
            (", TPDF dither" if self.dithered else "")
        lost = f"; not kept: {', '.join(self.not_kept)}" if self.not_kept else ""
        lost += f"; {self.cleared}" if self.cleared else ""
        if self.clipped_samples == 0:
            return f"{head}, peak {self.peak_dbfs:.1f} dBFS){lost}"
        return (f"{head}); input peak "
                f"{self.peak_dbfs:+.1f} dBFS, {self.clipped_samples} samples above full scale: "
                f"{self.action}{lost}")


def _subtype_for(path: Path, bit_depth: str | None) -> tuple[str, str]:
    ext = path.suffix.lower()
    if ext not in FORMATS:
        raise AudioError(f"{path}: cannot write '{ext or 'no extension'}' files; use one of "
                         f"{', '.join(sorted(FORMATS))}")
    fmt, depths, default = FORMATS[ext]
    depth = default if bit_depth is None else str(bit_depth)
    if depth not in depths:
        raise AudioError(f"{path}: {fmt} cannot be written with bit depth '{depth}'; "
                         f"choose one of {', '.join(depths)}")
    return fmt, depths[depth]


def _check_mp3(path: Path, sample_rate: int, channels: int) -> None:
    """MP3 holds one or two channels at the MPEG sample rates alone (libsndfile's own
    refusal read "Format not recognised")."""
    if sample_rate not in MP3_RATES:
        raise AudioError(f"{path}: MP3 cannot hold {sample_rate} Hz audio (only "
                         f"{', '.join(map(str, MP3_RATES))} Hz); export FLAC or WAV instead")
    if channels > 2:
        raise AudioError(f"{path}: MP3 holds one or two channels, not {channels}; export "
                         "FLAC or WAV instead")


def check_quality(path: Path, quality: float | None) -> None:
    """Refuse, before any work, a ``quality`` that ``path``'s format cannot take."""
    fmt = FORMATS.get(path.suffix.lower(), ("",))[0]
    compression_of(path, fmt, quality)


def compression_of(path: Path, fmt: str, quality: float | None) -> float | None:
    """libsndfile's compression level (0 the best, 1 the smallest) for ``quality`` (0 to
    10, 10 the best; None: libsndfile's default); only Ogg Vorbis and MP3 take one."""
    if quality is None:
        return None
    if fmt not in LOSSY:
        raise AudioError(f"{path}: a quality is for Ogg Vorbis and MP3 files; "
                         f"{fmt or path.suffix or 'these'} files are lossless: leave it out")
    if isinstance(quality, bool) or not isinstance(quality, int | float) or \
            not QUALITY_RANGE[0] <= quality <= QUALITY_RANGE[1]:
        raise AudioError(f"{path}: quality {quality!r}; give a number from "
                         f"{QUALITY_RANGE[0]:g} (smallest) to {QUALITY_RANGE[1]:g} (best)")
    return SMALLEST * (1.0 - quality / QUALITY_RANGE[1])


def depths_of(path: Path) -> dict[str, str]:
    """The bit depths ``path``'s format can be written with ({} if it cannot be)."""
    return FORMATS.get(path.suffix.lower(), (None, {}, None))[1]


def same_depth(subtype: str, path: Path) -> str | None:
    """The bit depth of ``path``'s format nearest a source's libsndfile subtype
    ("PCM_16" -> "16"); None (the format's default) when it has none near."""
    depths = depths_of(path)
    wanted = {"PCM_S8": "16", "PCM_U8": "16", "PCM_16": "16", "PCM_24": "24", "PCM_32": "32",
              "FLOAT": "float", "DOUBLE": "float"}.get(subtype.upper())
    if wanted in ("32", "float") and wanted not in depths:
        wanted = "24"
    return wanted if wanted in depths else None


def check_destination(path: Path, source: Path | None, force: bool) -> None:
    """Refuse, before any work, a destination that cannot or must not be written."""
    if len(path.name.encode()) > NAME_MAX - 20:  # room for the temporary name beside it
        raise AudioError(f"{path.name[:40]}...: the file name is {len(path.name.encode())} "
                         f"bytes long; use at most {NAME_MAX - 20}")
    if not path.parent.is_dir():
        raise AudioError(f"{path}: the folder {path.parent} does not exist; create it first")
    if path.is_dir():
        raise AudioError(f"{path}: is a folder; give a file name")
    if (not force and source is not None and path.exists() and source.exists()
            and path.samefile(source)):
        raise AudioError(f"{path}: this is the source file; refusing to overwrite it. Choose "
                         "another output name, or force it (--force) if you mean it")


def overs(samples: np.ndarray) -> tuple[float, int]:
    """(peak, samples above full scale) of float ``[channels, frames]`` samples."""
    peak = float(max(samples.max(), -samples.min()))  # no |samples| copy of the whole file
    return peak, int(np.count_nonzero(np.abs(samples) > 1.0)) if peak > 1.0 else 0


def _limit(block: np.ndarray) -> np.ndarray:
    """Soft limiter: unchanged below the knee, tanh-compressed above, below CEILING always."""
    mag = np.abs(block)
    over = mag > LIMIT_KNEE
    if over.any():
        room = CEILING - LIMIT_KNEE
        mag[over] = LIMIT_KNEE + room * np.tanh((mag[over] - LIMIT_KNEE) / room)
        block = np.copysign(mag, block)
    return block


def _quantized(block: np.ndarray, subtype: str) -> np.ndarray:
    """A float32 block as ``subtype`` takes it: integers rounded to the nearest step and
    clipped at full scale (libsndfile 1.2's own conversion floors: half a step of DC and
    6 dB more error, and is slower); floats as they are; Vorbis clipped at full scale."""
    if subtype in ("FLOAT", "DOUBLE"):
        return block
    if (scale := INTEGER_SCALE.get(subtype)) is None:
        return np.clip(block, -1.0, 1.0)
    wide = np.float64 if subtype == "PCM_32" else np.float32  # 2^31 - 1 is not a float32
    q = np.rint(block.astype(wide, copy=False) * wide(scale))
    np.clip(q, -scale, scale - 1, out=q)
    if subtype == "PCM_16":
        return q.astype(np.int16)
    if subtype == "PCM_32":
        return q.astype(np.int32)
    return q.astype(np.int32) << 8  # libsndfile takes PCM_24 from an int32's top 24 bits


def _full(error: BaseException, folder: Path, room: int) -> str | None:
    """What is free where a write failed for lack of room, else None. libsndfile reports
    a full disk as "System error." only: then less left than ``room`` (bytes, a block
    of what was being written) tells."""
    if isinstance(error, OSError) and error.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    if not isinstance(error, (OSError, sf.LibsndfileError)):
        return None
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return None
    if isinstance(error, OSError) or free < room:
        return f"{free:,} bytes free in {folder}"
    return None


def _keep_layout(path: Path, fmt: str, mask: int, channels: int) -> bool:
    """Whether the file written holds the source's speaker layout (``mask``)."""
    if fmt in ("WAVEX", "RF64"):
        return set_channel_mask(path, mask)
    return fmt == "FLAC" and FLAC_ORDER.get(channels) == mask


def _dither(frames: int, channels: int, block_frames: int) -> "np.ndarray | _Drawn":
    """The TPDF dither of a file of this shape, ``[frames, channels]`` float32 in LSBs
    of 16 bits, drawn block by block from DITHER_SEED (seeded, so an export is
    reproducible: every file of one shape gets the same). Up to DITHER_KEPT samples it
    is kept for the next file of that shape (a batch writes many: the export of a 10 s
    mono file took 3.3-4.4 ms of CPU drawing it, 1.4 ms reusing it); longer, it is
    drawn as it is written."""
    if frames * channels > DITHER_KEPT:
        return _Drawn(channels)
    return _kept_dither(frames, channels, block_frames)


@functools.lru_cache(maxsize=2)
def _kept_dither(frames: int, channels: int, block_frames: int) -> np.ndarray:
    drawn, noise = _Drawn(channels), np.empty((frames, channels), np.float32)
    for start in range(0, frames, block_frames):
        stop = min(frames, start + block_frames)
        noise[start:stop] = drawn[start:stop]
    noise.flags.writeable = False
    return noise


class _Drawn:
    """Dither drawn as asked for, block after block (``drawn[start:stop]`` in order)."""

    def __init__(self, channels: int):
        self.rng = np.random.default_rng(DITHER_SEED)
        self.channels = channels

    def __getitem__(self, frames: slice) -> np.ndarray:
        shape = (frames.stop - frames.start, self.channels)
        tpdf = self.rng.random(shape, np.float32) - self.rng.random(shape, np.float32)
        return tpdf * np.float32(LSB_16)


@timed("write")
def export(samples: np.ndarray, sample_rate: int, path: str | os.PathLike, *,
           bit_depth: str | int | None = None, source: str | os.PathLike | None = None,
           force: bool = False, clip: str = "report", dither: bool = True,
           block_frames: int = WRITE_BLOCK, metadata: Metadata | None = None,
           layout: tuple[str, ...] = (), quality: float | None = None,
           progress: ProgressFn | None = None,
           cancel: CancelFlag | None = None) -> ExportReport:
    """Write float ``[channels, frames]`` samples to ``path`` (format from the extension).

    ``clip``: "report" writes as is (integer formats clip at full scale, float
    keeps the overs) and says how many samples were over; "normalize" scales
    the whole file to a -0.1 dBFS peak when it is over; "limit" soft-limits
    the overs. 16-bit files get TPDF dither (+-1 LSB, triangular, seeded so
    an export is reproducible) unless ``dither`` is False: quiet fades and
    reverb tails then decay into noise instead of truncation distortion. A sample
    already on the 16-bit grid (a 16-bit source's own, digital silence) gets none:
    it is written as it is.
    ``metadata`` (the source's tags, bext chunk, markers and loops) goes into the file as far
    as its format can hold it; the report names what it could not. So does the speaker
    ``layout`` (the source's channel names, ``Audio.layout``): WAV and RF64 files
    get its WAVE_FORMAT_EXTENSIBLE channel mask, FLAC keeps it when it is FLAC's own
    order for the channel count. ``quality`` (Ogg Vorbis and MP3 only): 0 (smallest) to
    10 (best), as oggenc counts it; None: libsndfile's default.
    Audio holding NaN or infinite samples is refused (an integer file would get
    garbage, a float file samples no player takes).
    Raises AudioError naming the path on any problem; then the destination
    is untouched and no temporary file is left."""
    path = Path(path)
    samples = np.asarray(samples)
    if samples.ndim != 2 or samples.shape[1] == 0:
        raise AudioError(f"{path}: nothing to write (audio shape {samples.shape})")
    if clip not in CLIP_MODES:
        raise AudioError(f"{path}: unknown clip mode '{clip}'; use one of {', '.join(CLIP_MODES)}")
    fmt, subtype = _subtype_for(path, bit_depth)
    if fmt == "MP3":
        _check_mp3(path, sample_rate, samples.shape[0])
    check_destination(path, Path(source) if source is not None else None, force)
    compression = compression_of(path, fmt, quality)

    peak, over = overs(samples)
    if not np.isfinite(peak):  # max and min carry a NaN or an infinity through
        bad = samples.size - int(np.count_nonzero(np.isfinite(samples)))
        raise AudioError(f"{path}: the audio holds {bad:,} NaN or infinite samples, which no "
                         "file can play; nothing was written. Undo the edit that made them")
    gain, action = 1.0, "none"
    if over:
        if clip == "normalize":
            gain, action = CEILING / peak, "normalized to -0.1 dBFS"
        elif clip == "limit":
            action = "soft-limited below -0.1 dBFS"
        elif subtype in ("FLOAT", "DOUBLE"):
            action = "kept above 0 dBFS (float file)"
        else:
            action = "clipped at full scale"

    channels, frames = samples.shape
    mask = mask_of(tuple(layout)) if len(layout) == channels else None
    if mask and fmt == "WAV":
        fmt = "WAVEX"  # the format that holds a channel mask
    dither = dither and subtype == "PCM_16"
    noise = _dither(frames, channels, block_frames) if dither else None
    # Created by libsndfile itself so it gets the user's normal permissions.
    try:
        cleared = clear_stale(path)
        tmp = temporary(path)
    except OSError as e:
        raise AudioError(f"{path}: cannot write here ({e.strerror or e}); nothing was "
                         "written") from e
    try:
        with sf.SoundFile(str(tmp), "w", sample_rate, channels, subtype, format=fmt,
                          compression_level=compression) as f:
            not_kept = write_metadata(f, metadata)
            for start in range(0, frames, block_frames):
                step(start / frames, progress, cancel)
                block = samples[:, start:start + block_frames].T.astype(np.float32)
                if gain != 1.0:
                    block = block * np.float32(gain)
                if clip == "limit" and over:
                    block = _limit(block)
                if noise is not None:  # samples already on the 16-bit grid need none
                    lsbs = block * np.float32(1 << 15)
                    block = np.where(lsbs == np.rint(lsbs), block,
                                     block + noise[start:start + len(block)])
                f.write(_quantized(block, subtype))
        add_marker_names(tmp, fmt, metadata)
        if mask and not _keep_layout(tmp, fmt, mask, channels):
            not_kept.append(f"the speaker layout {' '.join(layout)} ({fmt} files have no "
                            "place for it; export WAV or RF64 to keep it)")
        commit(tmp, path)
    except BaseException as e:
        # (asked while the partial file still takes its room)
        full = _full(e, path.parent, room=8 * channels * block_frames)
        discard(tmp)
        if full:
            raise AudioError(f"{path}: writing failed: the disk is full ({full}); nothing was "
                             "written. Free some space or write elsewhere") from e
        if isinstance(e, (sf.LibsndfileError, OSError)):
            raise AudioError(f"{path}: writing failed ({e}); nothing was written. Check free "
                             "space and permissions") from e
        raise
    step(1.0, progress, None)
    peak_dbfs = 20 * np.log10(peak) if peak > 0 else -np.inf
    return ExportReport(path, fmt, subtype, float(peak_dbfs), over, action, dither,
                        tuple(not_kept), cleared)
