"""Channel names: the speaker layout a WAV file declares (WAVE_FORMAT_EXTENSIBLE's
channel mask), else L/R for stereo and 1..N otherwise."""

import os
import struct
from pathlib import Path

from engine.riff import find_chunk

# the channel mask's bits, lowest first (Microsoft's SPEAKER_* order)
SPEAKERS = ("FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR", "TC",
            "TFL", "TFC", "TFR", "TBL", "TBC", "TBR")
EXTENSIBLE = 0xFFFE


def channel_mask(path: str | os.PathLike) -> int | None:
    """The speaker mask a RIFF/WAVE file's 'fmt ' chunk declares (extensible
    format only); None when it declares none or is not such a file."""
    with open(Path(path), "rb") as f:
        length = find_chunk(f, b"fmt ")
        fmt = f.read(min(length, 64)) if length else b""
    if len(fmt) < 24 or struct.unpack("<H", fmt[:2])[0] != EXTENSIBLE:
        return None
    return struct.unpack("<I", fmt[20:24])[0] or None


def channel_names(count: int, mask: int | None = None) -> tuple[str, ...]:
    """A name per channel: the declared speakers when the mask names exactly
    ``count`` known ones, else L/R (stereo) or 1..N."""
    if mask:
        names = tuple(name for bit, name in enumerate(SPEAKERS) if mask >> bit & 1)
        if len(names) == count and mask < 1 << len(SPEAKERS):
            return names
    if count == 2:
        return ("L", "R")
    return tuple(str(i + 1) for i in range(count))
