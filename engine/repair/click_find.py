"""Where the clicks of one channel are (engine.repair.declick repairs them).

Per block of about 40 ms, an AR model of the audio (order 32 at 44.1 kHz) learnt
from the block; each sample's forward and backward prediction errors under its
block's model, of which the smaller (a click stands out of both, the audio's own
excitation rarely does). A sample is a click's when that error stands out twice:

- of the block's robust error scale (``block`` robust standard deviations: the
  model explains the audio around it), and
- of the error's RMS over ``LOCAL_SECONDS`` either side, leaving out
  ``GAP_SECONDS`` about the sample (``local`` times that RMS). Voiced speech's
  excitation comes in bursts at each glottal closure, a struck note's at its
  attack: there the error stands out of the block's scale but not of the burst
  around it; a click stands out of both. Sample by sample, before any repair, on
  the takes of tests/takes.py at 22.05 kHz (seed 1, clicks outside quiet
  stretches): the block test alone (16 deviations, as before) found 79 % of the
  clicks at 2.3 false clicks a second of clean audio, 55 % of those 0-10 dB above
  the local level; both tests (8 deviations, 6 times) 88 % at 1.2, and 75 %.

Samples closer than a quarter of the model order are one click; a run longer than
the longest click is the audio itself (a plosive, a drum). A click's first and
last samples are found apart (:func:`extents`). What the audio about a candidate
says of it (digital silence, a recurring waveform) is engine.repair.click_context's.

Everything is batched over blocks (FFT filtering per block, medians per row), and
a :class:`Finder` learns again only the blocks a repair reached, so a later pass
costs what the repairs touched.
"""

import math

import numpy as np

from engine.repair import ar

FLOOR = 1e-4  # prediction errors below -80 dBFS are inaudible: never a click
BLOCK_SECONDS = 0.04  # the models hold over this long (their FFT size, a power of two)
LOCAL_SECONDS = 0.0015  # the error's level about a sample is measured this far either side
GAP_SECONDS = 0.00027  # ...leaving out this much about it (a click's own samples)
MIN_GAP = 6  # samples: at low rates, still more than most of a click of 8 samples
BATCH = 256  # blocks filtered at once (bounded memory on long files)
REACH = 4  # samples beyond a run found that may be its click's first or last
EDGE = 3.0  # ...when their one-sided error stands out this much


def order_for(sample_rate: int) -> int:
    """AR order: 32 at 44.1 kHz, in proportion, within 12 to 48."""
    return int(np.clip(round(32 * sample_rate / 44100), 12, 48))


def block_for(sample_rate: int, order: int) -> int:
    """Samples per block: a power of two about ``BLOCK_SECONDS`` long, less the two
    model orders its filtering needs either side (so each block filters in one FFT)."""
    return (1 << max(8, round(math.log2(BLOCK_SECONDS * sample_rate)))) - 2 * order


def live(x: np.ndarray) -> np.ndarray:
    """Samples that can teach a model: neither digital silence nor at full scale."""
    return (np.abs(x) > ar.SILENT) & (np.abs(x) < ar.FULL_SCALE)


def runs(flags: np.ndarray, join: int) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, stops)`` of the runs of ``flags``, runs closer than ``join`` joined."""
    idx = np.flatnonzero(flags)
    if len(idx) == 0:
        return np.zeros(0, int), np.zeros(0, int)
    cuts = np.flatnonzero(np.diff(idx) > join)
    return idx[np.r_[0, cuts + 1]], idx[np.r_[cuts, len(idx) - 1]] + 1


def _windows(x: np.ndarray, size: int, step: int, before: int, count: int) -> np.ndarray:
    """``[count, size]`` views of ``x`` (zeros beyond it), row ``b`` from ``b * step -
    before``."""
    padded = np.pad(x, (before, max(0, count * step + size - before - len(x))))
    return np.lib.stride_tricks.sliding_window_view(padded, size)[::step][:count]


def block_models(signal: np.ndarray, block: int, order: int, blocks: np.ndarray) -> np.ndarray:
    """``[len(blocks), order + 1]``: each of ``blocks``' prediction-error filter, learnt
    from it and half a model order either side (zeros beyond the signal): its
    autocorrelation takes one FFT of the size the block's filtering takes. Learnt from
    the block and half a block either side instead, the models found as many clicks
    (seed 1: 90.5 % against 90.7 %; 1.09 false clicks a second against 1.23, and PESQ-WB
    2.40 against 2.43) at twice the cost."""
    windows = _windows(signal, block + order - 1, block, (order - 1) // 2, blocks[-1] + 1)
    models = np.empty((len(blocks), order + 1))
    for i in range(0, len(blocks), BATCH):
        models[i:i + BATCH] = ar.levinson(ar.autocorrelation(windows[blocks[i:i + BATCH]],
                                                             order))
    return models


def errors(signal: np.ndarray, models: np.ndarray, block: int,
           blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``([len(blocks), block], ...)``: the magnitudes of the forward and backward
    prediction errors of each of ``blocks``' samples under its model (``models``, one a
    block given), 0 within a model order of the signal's ends and beyond them."""
    p = models.shape[1] - 1
    size = block + 2 * p
    segments = _windows(signal, size, block, p, blocks[-1] + 1)  # row b: from b * block - p
    fwd, bwd = np.empty((len(blocks), block)), np.empty((len(blocks), block))
    for i in range(0, len(blocks), BATCH):
        spectrum = np.fft.rfft(segments[blocks[i:i + BATCH]], size)
        model = np.fft.rfft(models[i:i + BATCH], size)
        # the filter and its reverse, circularly: neither wraps over the samples kept
        fwd[i:i + BATCH] = np.abs(np.fft.irfft(spectrum * model, size)[:, p:p + block])
        bwd[i:i + BATCH] = np.abs(np.fft.irfft(spectrum * model.conj(), size)[:, p:p + block])
    at = blocks[:, None] * block + np.arange(block)
    outside = (at < p) | (at >= len(signal) - p)
    fwd[outside], bwd[outside] = 0.0, 0.0
    return fwd, bwd


def block_scales(signal: np.ndarray, err: np.ndarray, block: int, order: int,
                 blocks: np.ndarray) -> np.ndarray:
    """``[len(blocks)]``: robust standard deviation of the error (``err``, the signal's)
    over each of ``blocks`` and half a block either side (every fourth sample: as
    robust, a quarter of the work), learnt from the samples that are not digital
    silence; inf where the block cannot teach a model (too few live samples, or no more
    than DC)."""
    n = len(signal)
    at = (blocks * block - block // 2)[:, None] + np.arange(0, 2 * block, 4)
    inside = (at >= 0) & (at < n)
    at = np.clip(at, 0, n - 1)
    x, e = signal[at], err[at]
    sound = inside & (np.abs(x) > ar.SILENT) & (e > 0)
    teaching = sound & (np.abs(x) < ar.FULL_SCALE)
    have = teaching.sum(1)
    mean = (x * teaching).sum(1) / np.maximum(have, 1)
    spread = (x * x * teaching).sum(1) / np.maximum(have, 1) - mean * mean
    usable = (4 * have >= 4 * order) & (spread > ar.SILENT ** 2)
    out = np.full(len(blocks), np.inf)
    full = usable & sound.all(1)
    if full.any():
        out[full] = np.median(e[full], axis=1)
    for j in np.flatnonzero(usable & ~full):
        out[j] = np.median(e[j][sound[j]])
    return 1.4826 * out + 1e-12


def _rms(x: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    """RMS of ``x`` over each ``[starts[i], starts[i] + length)``, what lies outside ``x``
    left out (0 where all does)."""
    idx = starts[:, None] + np.arange(length)
    inside = (idx >= 0) & (idx < len(x))
    values = np.where(inside, x[np.clip(idx, 0, len(x) - 1)], 0.0)
    return np.sqrt((values * values).sum(-1) / np.maximum(inside.sum(-1), 1))


def local_rms(err: np.ndarray, at: np.ndarray, sample_rate: int) -> np.ndarray:
    """The error's RMS over ``LOCAL_SECONDS`` either side of each sample ``at``, leaving
    out ``GAP_SECONDS`` about it."""
    gap = max(MIN_GAP, round(GAP_SECONDS * sample_rate))
    reach = max(4 * gap, round(LOCAL_SECONDS * sample_rate))
    width = reach - gap + 1
    before, after = _rms(err, at - reach, width), _rms(err, at + gap, width)
    return np.sqrt((before * before + after * after) / 2)


def extents(fwd: np.ndarray, bwd: np.ndarray, starts: np.ndarray, stops: np.ndarray,
            sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs found widened to each click's first and last samples, which the smaller
    of the two errors often misses (the other error partly cancels there). A click
    starts where the forward error first stands out (``EDGE`` times its RMS over the
    ``LOCAL_SECONDS`` before, which no click's sample reaches) and ends where the
    backward error last does, at most ``REACH`` samples beyond the run."""
    n = len(fwd)
    reach = round(LOCAL_SECONDS * sample_rate)
    before = _rms(fwd, starts - REACH - reach, reach)
    after = _rms(bwd, stops + REACH, reach)
    lo, hi = starts.copy(), stops.copy()
    for k in range(REACH, 0, -1):
        at = np.clip(starts - k, 0, n - 1)
        out = (starts - k >= 0) & (fwd[at] > np.maximum(EDGE * before, FLOOR))
        lo = np.where(out, np.minimum(lo, at), lo)
        at = np.clip(stops - 1 + k, 0, n - 1)
        out = (stops - 1 + k < n) & (bwd[at] > np.maximum(EDGE * after, FLOOR))
        hi = np.where(out, np.maximum(hi, at + 1), hi)
    return lo, hi


class Finder:
    """The models, errors and error scales of one stretch of a channel (``signal``, a
    view: the repairs written into it are seen), brought up to date only where clicks
    were repaired: a later pass costs what the repairs reached, not the stretch."""

    def __init__(self, signal: np.ndarray, sample_rate: int):
        self.signal, self.sample_rate = signal, sample_rate
        self.order = order_for(sample_rate)
        self.block = block_for(sample_rate, self.order)
        self.count = -(-len(signal) // self.block)
        self.fwd = np.zeros((self.count, self.block))
        self.bwd = np.zeros((self.count, self.block))
        self.scales = np.zeros(self.count)
        self.fresh = np.arange(self.count)  # the blocks whose clicks are still to be found
        self._refresh(self.fresh)

    def _refresh(self, blocks: np.ndarray) -> None:
        """New models and errors of ``blocks``, new scales there and next to them."""
        models = block_models(self.signal, self.block, self.order, blocks)
        self.fwd[blocks], self.bwd[blocks] = errors(self.signal, models, self.block, blocks)
        self.fresh = np.unique(np.clip(np.r_[blocks - 1, blocks, blocks + 1], 0,
                                       self.count - 1))
        err = np.minimum(self.fwd, self.bwd).ravel()
        self.scales[self.fresh] = block_scales(self.signal, err, self.block, self.order,
                                               self.fresh)

    def repaired(self, starts: np.ndarray, stops: np.ndarray) -> None:
        """The samples ``[starts[i], stops[i])`` were changed: their blocks' models and
        errors (and those whose filtering reaches them) are learnt again."""
        p, b = self.order, self.block
        first, last = (np.asarray(starts) - p) // b, (np.asarray(stops) + p - 1) // b
        blocks = np.unique(np.concatenate([np.arange(f, g + 1) for f, g in
                                           zip(first, last, strict=True)] or [[]]))
        blocks = blocks[(blocks >= 0) & (blocks < self.count)].astype(int)
        if len(blocks):
            self._refresh(blocks)
        else:
            self.fresh = blocks

    def clicks(self, *, block: float, local: float,
               max_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(starts, stops, peaks)`` of the clicks in the fresh blocks: the runs of samples
        whose error stands out by ``block`` robust deviations of its block's scale and
        ``local`` times the RMS about it (runs closer than a quarter of the model order
        joined), no longer than ``max_len``, widened to their :func:`extents`, and how many
        times the RMS about it each one's error stands out at most; the blocks are then
        spent until a repair reaches them."""
        n = len(self.signal)
        fwd, bwd = self.fwd.ravel()[:n], self.bwd.ravel()[:n]
        err = np.minimum(fwd, bwd)
        at = (self.fresh[:, None] * self.block + np.arange(self.block)).ravel()
        at = at[at < n]
        scale = np.repeat(self.scales, self.block)[at]
        at = at[err[at] > np.maximum(block * scale, FLOOR)]
        ratio = err[at] / (local_rms(err, at, self.sample_rate) + 1e-300)  # a few: only there
        at, ratio = at[ratio > local], ratio[ratio > local]
        flags = np.zeros(n, bool)
        flags[at] = True
        self.fresh = self.fresh[:0]
        starts, stops = runs(flags, max(1, self.order // 4))
        short = stops - starts <= max_len
        starts, stops = starts[short], stops[short]
        first = np.searchsorted(at, starts)  # each run's samples found: at[first:last]
        peaks = np.array([ratio[f:g].max() for f, g in
                          zip(first, np.searchsorted(at, stops), strict=True)], float)
        return (*extents(fwd, bwd, starts, stops, self.sample_rate), peaks)
