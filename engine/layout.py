"""Channel names: the speaker layout a WAV file declares (WAVE_FORMAT_EXTENSIBLE's
channel mask), else L/R for stereo and 1..N otherwise."""

import os
import struct
from pathlib import Path

# the channel mask's bits, lowest first (Microsoft's SPEAKER_* order)
SPEAKERS = ("FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR", "TC",
            "TFL", "TFC", "TFR", "TBL", "TBC", "TBR")
EXTENSIBLE = 0xFFFE


def channel_mask(path: str | os.PathLike) -> int | None:
    """The speaker mask a RIFF/WAVE file's 'fmt ' chunk declares (extensible
    format only); None when it declares none or is not such a file."""
    with open(Path(path), "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        while True:
            chunk = f.read(8)
            if len(chunk) < 8:
                return None
            cid, clen = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if cid == b"fmt ":
                fmt = f.read(min(clen, 64))
                if len(fmt) < 24 or struct.unpack("<H", fmt[:2])[0] != EXTENSIBLE:
                    return None
                return struct.unpack("<I", fmt[20:24])[0] or None
            f.seek(clen + (clen & 1), os.SEEK_CUR)


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
