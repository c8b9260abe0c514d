"""What a picture of a steady signal must show, for the picture tests
(tests/engine/test_picture.py, tests/app/gui/test_gui_picture.py).

A steady chord (random pitches, levels and phases, no transient but the file's
own ends) must be drawn as steady lines: each tone's row within 1 dB of itself
all along, away from the ends; and nothing anywhere else louder than 60 dB
below its peak (a broadband line where a transform's blocks or slices meet
broke that by 20 dB and more).
"""

import struct
import zlib

import numpy as np

STEADY_DB = 1.0  # a tone's row may vary by this along the file, away from its ends
FLOOR_DB = 60.0  # below the picture's peak, what lies away from every tone must stay
ENDS_S = 1.0  # seconds at each end the checks leave out (a file's start is an onset)


def steady_chord(rng, sample_rate: int, seconds: float, tones: int = 3
                 ) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``[1, n]`` of ``tones`` cosines, pitches log-uniform in 150 Hz-0.3 sr at
    least half an octave apart (closer ones beat in a band that holds both: a picture
    shows that), levels -20 to -6 dBFS, random phases; and the pitches."""
    while True:
        freqs = np.exp(rng.uniform(np.log(150.0), np.log(0.3 * sample_rate), tones))
        if np.diff(np.log2(np.sort(freqs))).min() >= 0.5:
            break
    levels = 10 ** (rng.uniform(-20, -6, tones) / 20)
    phases = rng.uniform(0, 2 * np.pi, tones)
    n = np.arange(int(sample_rate * seconds))
    x = sum(a * np.cos(2 * np.pi * f * n / sample_rate + p)
            for f, a, p in zip(freqs, levels, phases, strict=True))
    return x[None].astype(np.float32), freqs


def read_png(path) -> np.ndarray:
    """RGBA ``[height, width, 4]`` of a PNG as engine.io.png writes them (8-bit RGBA,
    no row filters), read without an imaging library."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", (0, 0)
    while pos < len(data):
        (n,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
            assert body[8:10] == b"\x08\x06"  # 8-bit RGBA
        elif kind == b"IDAT":
            idat += body
    width, height = size
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + 4 * width)
    assert (rows[:, 0] == 0).all()  # no filter
    return rows[:, 1:].reshape(height, width, 4)


def lut_levels(rgb: np.ndarray, lut: np.ndarray, floor_db: float, ceiling_db: float
               ) -> np.ndarray:
    """dB of each pixel of ``[h, w, >=3]`` colours drawn through a 256-entry colormap
    ``lut`` from ``floor_db`` to ``ceiling_db``; every pixel must be one of its entries."""
    flat = rgb[..., :3].reshape(-1, 3).astype(np.int32)
    table = lut[:, :3].astype(np.int32)
    codes = flat[:, 0] << 16 | flat[:, 1] << 8 | flat[:, 2]
    keys = table[:, 0] << 16 | table[:, 1] << 8 | table[:, 2]
    order = np.argsort(keys, kind="stable")
    at = np.searchsorted(keys[order], codes).clip(0, len(keys) - 1)
    assert (keys[order][at] == codes).all(), "a pixel that is not a colormap entry"
    index = order[at].reshape(rgb.shape[:2])
    return floor_db + (ceiling_db - floor_db) * index / 255


def check_steady(db: np.ndarray, row_hz: np.ndarray, col_s: np.ndarray, freqs, resolution,
                 seconds: float, what: str) -> None:
    """``db[row, col]``: a picture's levels, row 0 at the top; ``row_hz``, ``col_s``:
    each row's centre frequency and each column's centre time; ``resolution(f)``: how
    far a tone at ``f`` spreads (Hz). Asserts the two rules of the module notes."""
    inner = (col_s > ENDS_S) & (col_s < seconds - ENDS_S)
    assert inner.sum() >= 3, f"{what}: too few columns away from the file's ends"
    step = np.abs(np.diff(row_hz)).max()
    peak = db[:, inner].max()
    far = np.ones(len(row_hz), bool)
    for f in freqs:
        near = np.abs(row_hz - f) <= 2 * step
        rows = np.nonzero(near)[0]
        row = rows[np.argmax(db[rows][:, inner].mean(1))]
        line = db[row, inner]
        assert line.max() - line.min() <= STEADY_DB, \
            f"{what}: the tone at {f:.0f} Hz varies by {line.max() - line.min():.1f} dB"
        far &= np.abs(row_hz - f) > max(f * (2 ** 0.5 - 1), 5 * resolution(f)) + 2 * step
    loudest = db[far][:, inner].max() - peak
    assert loudest <= -FLOOR_DB, \
        f"{what}: {loudest:.1f} dB of its peak away from every tone (at most -{FLOOR_DB:g})"


def row_frequencies(height: int, lo: float, hi: float, log: bool) -> np.ndarray:
    """Centre frequency of each of ``height`` rows (row 0 at the top) spaced evenly in
    Hz, or in log Hz, from ``lo`` to ``hi``."""
    r = (np.arange(height)[::-1] + 0.5) / height
    return lo * (hi / lo) ** r if log else lo + (hi - lo) * r
