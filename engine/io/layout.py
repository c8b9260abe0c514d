"""Channel names: the speaker layout a WAV or RF64 file declares
(WAVE_FORMAT_EXTENSIBLE's channel mask), else L/R for stereo and 1..N otherwise;
and the mask written back into a WAV or RF64 file made from such a file."""

import os
import struct
from pathlib import Path

from engine.io.riff import find_chunk

# the channel mask's bits, lowest first (Microsoft's SPEAKER_* order)
SPEAKERS = ("FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR", "TC",
            "TFL", "TFC", "TFR", "TBL", "TBC", "TBR")
EXTENSIBLE = 0xFFFE
MASK_OFFSET = 20  # of dwChannelMask in an extensible 'fmt ' chunk
# the order FLAC defines for 3 to 8 channels (RFC 9639, 9.1.3), as masks: a FLAC in
# this order holds the layout without saying so
FLAC_ORDER = {3: 0x7, 4: 0x33, 5: 0x37, 6: 0x3F, 7: 0x70F, 8: 0x63F}


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


def mask_of(names: tuple[str, ...]) -> int | None:
    """The channel mask that names ``names`` in order (None when they are not speakers
    in the mask's order, lowest bit first: a mask cannot say it)."""
    if not names or any(n not in SPEAKERS for n in names):
        return None
    bits = [SPEAKERS.index(n) for n in names]
    if bits != sorted(set(bits)):
        return None
    return sum(1 << b for b in bits)


def set_channel_mask(path: str | os.PathLike, mask: int) -> bool:
    """Write ``mask`` into the extensible 'fmt ' chunk of the RIFF/WAVE or RF64 file
    at ``path`` (libsndfile writes one for its channel count); False when the file
    has no such chunk."""
    with open(Path(path), "r+b") as f:
        length = find_chunk(f, b"fmt ")
        start = f.tell()
        fmt = f.read(min(length, 64)) if length else b""
        if len(fmt) < 24 or struct.unpack("<H", fmt[:2])[0] != EXTENSIBLE:
            return False
        f.seek(start + MASK_OFFSET)
        f.write(struct.pack("<I", mask))
    return True
