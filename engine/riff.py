"""Walking the chunks of a RIFF/WAVE file: what libsndfile does not tell us
(a 'data' length the file cannot hold, the speaker mask in 'fmt ')."""

import os
import struct
from typing import BinaryIO


def find_chunk(f: BinaryIO, wanted: bytes) -> int | None:
    """Leave ``f`` at the data of its first ``wanted`` chunk and return the length
    the chunk declares; None when ``f`` is not RIFF/WAVE or has no such chunk."""
    f.seek(0)
    head = f.read(12)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    while True:
        chunk = f.read(8)
        if len(chunk) < 8:
            return None
        cid, clen = chunk[:4], struct.unpack("<I", chunk[4:])[0]
        if cid == wanted:
            return clen
        f.seek(clen + (clen & 1), os.SEEK_CUR)
