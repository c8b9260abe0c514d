"""Walking the chunks of a RIFF/WAVE file: what libsndfile does not tell us
(a 'data' length the file cannot hold, the speaker mask in 'fmt '), and adding
one it does not write (marker names)."""

import os
import struct
from typing import BinaryIO


def find_chunk(f: BinaryIO, wanted: bytes) -> int | None:
    """Leave ``f`` at the data of its first ``wanted`` chunk and return the length
    the chunk declares; None when ``f`` is not RIFF/WAVE (or RF64, whose chunks are
    laid out alike) or has no such chunk."""
    f.seek(0)
    head = f.read(12)
    if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64") or head[8:12] != b"WAVE":
        return None
    while True:
        chunk = f.read(8)
        if len(chunk) < 8:
            return None
        cid, clen = chunk[:4], struct.unpack("<I", chunk[4:])[0]
        if cid == wanted:
            return clen
        f.seek(clen + (clen & 1), os.SEEK_CUR)


def pack_chunk(cid: bytes, body: bytes) -> bytes:
    """A chunk as it lies in the file: id, little-endian length, body, pad byte."""
    return cid + struct.pack("<I", len(body)) + body + b"\0" * (len(body) & 1)


def append_chunk(path, cid: bytes, body: bytes) -> None:
    """Append a chunk to a finished RIFF file and count it in the RIFF size."""
    with open(path, "r+b") as f:
        f.seek(0, os.SEEK_END)
        f.write(pack_chunk(cid, body))
        riff_size = f.tell() - 8
        f.seek(4)
        f.write(struct.pack("<I", riff_size))
