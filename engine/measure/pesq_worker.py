"""The PESQ-WB scorer's own process (run as a script by :mod:`engine.measure.perceptual`): the
``pesq`` package is C code with fixed-size arrays, and a crash in it must not take
``specpaint`` down. It imports numpy and pesq only (not the engine, not torch).

Protocol, on stdin and stdout: for each window the parent writes its length ``n``
(8 bytes, little-endian) and then ``n`` float32 samples of the reference and ``n``
of the test, at 16 kHz; the worker answers one line: the score, or ``error: <why>``.
It ends at the end of its input.
"""

import struct
import sys

import numpy as np
from pesq import pesq

RATE = 16000


def _read(stream, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError
    return data


def main() -> None:
    source, answer = sys.stdin.buffer, sys.stdout
    while True:
        try:
            (n,) = struct.unpack("<Q", _read(source, 8))
            ref = np.frombuffer(_read(source, 4 * n), np.float32).astype(np.float64)
            test = np.frombuffer(_read(source, 4 * n), np.float32).astype(np.float64)
        except EOFError:
            return
        try:
            line = repr(float(pesq(RATE, ref, test, "wb")))
        except Exception as e:  # noqa: BLE001 - pesq raises its own types; each is an answer
            line = "error: " + " ".join(str(e).split()).replace("b'", "").rstrip("'")
        answer.write(line + "\n")
        answer.flush()


if __name__ == "__main__":
    main()
