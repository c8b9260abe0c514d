"""A-SPADE (Kitić, Bertin & Gribonval 2015; as evaluated by Záviška et al. 2021):
the sparsest spectrum consistent with a clipped block.

A block of ``w`` samples is analysed by the Parseval frame of the DFT at twice its
length. Each round keeps the ``k`` largest coefficients of the analysis (plus the
ADMM dual), goes back to the samples and projects them onto the consistent set
(reliable samples as they were, clipped ones between their bounds), until the
kept coefficients describe the projected block to within ``TOLERANCE``; ``k``
starts at one and grows by ``GROWTH`` of itself a round (the published step of
one coefficient a round took 5-10 times the rounds for 0.5 dB more SI-SDR on the
clipped takes of bench/bench_declip.py; 10 % lost 0.3 dB against 5 %).
Batched over blocks, in float32 (the caller clamps the result to the bounds).

Hardly a block of music meets the tolerance while it is sparse: in 10 minutes of
music clipped at half its peak (44.1 kHz) every block ran until ``k`` was 59-100 %
of its bins. Shorter schedules were measured on bench/bench_declip.py and left
out, as each cost some take something: stopping once ``k`` passes half the bins
(13 % fewer rounds) moved the worst take's SI-SDR gain by -0.01 dB (22.05 kHz)
and -0.06 dB (the same takes at 44.1 kHz); starting ``k`` at 16 (15 % fewer)
moved the median by -0.01 dB, at 32 the worst take by -1.7 dB; growing 10 % a
round past an eighth of the bins cost 0.2 dB of the median.

Where the time goes (a batch of 256 blocks of 2048 samples, per round): the two
FFTs and the selection of the ``k`` largest (``np.partition`` of the magnitudes'
bits) about equally, then a handful of passes over the coefficients. The
coefficients are the unnormalised DFT of the zero-padded block (the frame's norm
is a power of two: the same numbers, scaled exactly), held in buffers reused
from round to round, and the FFTs read a block already padded (scipy pads a
shorter input by a copy that cost more than the transform). One thread: the
caller runs batches side by side.
"""

import numpy as np
import scipy.fft

TOLERANCE = 0.1  # residual norm at which a block is done, of blocks scaled to the clip level
GROWTH = 0.05
MAX_ROUNDS = 300


def aspade(blocks: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``blocks`` ``[B, w]`` restored between ``low`` and ``high`` (same shape; equal at the
    reliable samples), scaled so the clip level is about 1."""
    batch, w = blocks.shape
    bins = w + 1
    # the frame's coefficients are the DFT over sqrt(2 w); these are the DFT itself
    limit = np.float32(TOLERANCE ** 2 * 2 * w)
    low, high = low.astype(np.float32), high.astype(np.float32)
    padded = np.zeros((batch, 2 * w), np.float32)
    np.clip(blocks, low, high, out=padded[:, :w], casting="same_kind")
    out = np.empty((batch, w))
    analysis = scipy.fft.rfft(padded, axis=1)
    dual = np.zeros_like(analysis)
    work = _Buffers(low, high)
    k = 1.0  # the same for every block: they all start together
    rows = np.arange(batch)  # which block each row still being solved is
    for _ in range(MAX_ROUNDS):
        sparse, size = work.sparse, work.size
        np.add(analysis, dual, out=sparse)
        np.abs(sparse, out=size)
        # the keep-th largest of each row, and all as large: non-negative floats order as
        # their bits do, and integers partition faster
        keep = min(int(k), bins)
        order = size.view(np.int32)
        kth = np.partition(order, bins - keep, axis=1)[:, bins - keep, None]
        np.multiply(sparse, order >= kth, out=sparse)
        np.subtract(sparse, dual, out=work.synthesis)
        # the projection: reliable samples stay as they are in ``padded``, the clipped
        # ones are the synthesis brought within their bounds
        free = np.take(scipy.fft.irfft(work.synthesis, axis=1, overwrite_x=True), work.free)
        np.put(padded, work.free, np.minimum(np.maximum(free, work.low, out=free), work.high,
                                             out=free))
        analysis = scipy.fft.rfft(padded, axis=1)
        residual = np.subtract(analysis, sparse, out=sparse)
        dual += residual
        k += max(1.0, GROWTH * k)
        going = _norm(residual) > limit
        if not going.all():
            out[rows[~going]] = padded[~going, :w]
            rows, low, high = rows[going], low[going], high[going]
            padded, analysis, dual = padded[going], analysis[going], dual[going]
            work = _Buffers(low, high)
        if len(rows) == 0:
            break
    out[rows] = padded[:, :w]
    return out


class _Buffers:
    """What a round of :func:`aspade` writes, allocated once for the rows being solved,
    and where their clipped samples are: ``free`` in the padded blocks ``[B, 2 w]``
    (flat), between ``low`` and ``high``."""

    def __init__(self, low: np.ndarray, high: np.ndarray):
        batch, w = low.shape
        self.sparse = np.empty((batch, w + 1), np.complex64)
        self.synthesis = np.empty((batch, w + 1), np.complex64)
        self.size = np.empty((batch, w + 1), np.float32)
        free = np.flatnonzero(low != high)
        self.free = free // w * (2 * w) + free % w
        self.low, self.high = low.ravel()[free], high.ravel()[free]


def _norm(c: np.ndarray) -> np.ndarray:
    """The squared norm of each row of a one-sided spectrum (its inner bins twice)."""
    edges = np.abs(c[:, 0]) ** 2 + np.abs(c[:, -1]) ** 2
    values = c.view(np.float32)
    return 2 * np.vecdot(values, values) - edges
