"""A minimal PNG writer (RGBA, 8-bit) so headless rendering needs no imaging library."""

import os
import struct
import zlib
from pathlib import Path

import numpy as np

from engine.errors import OutputError, ParameterError
from engine.io import atomic


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(rgba: np.ndarray) -> bytes:
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ParameterError(f"PNG needs uint8 [height, width, 4] pixels, got {rgba.dtype} "
                             f"{rgba.shape}")
    height, width = rgba.shape[:2]
    rows = np.concatenate([np.zeros((height, 1), np.uint8), rgba.reshape(height, -1)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b""))


def write_png(rgba: np.ndarray, path: str | os.PathLike) -> str | None:
    """Write atomically: a temporary file beside ``path``, renamed when complete; the note
    of stale temporary files removed beside it (engine.io.atomic), if any."""
    path = Path(path)
    try:
        return atomic.write_bytes(path, encode_png(rgba))
    except OSError as e:
        raise OutputError(f"{path}: writing failed ({e.strerror or e}); nothing was written. "
                          "Check free space and permissions") from e
