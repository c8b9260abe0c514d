"""Where the clicks of one channel are (engine.repair.declick repairs them).

Per block of about 40 ms, an AR model of the audio (order 32 at 44.1 kHz) learnt
from the block and half a block either side; each sample's forward and backward
prediction errors under its block's model, of which the smaller (a click stands
out of both, the audio's own excitation rarely does). A sample is a click's when
that error stands out twice:

- of the block's robust error scale (``block`` robust standard deviations: the
  model explains the audio around it), and
- of the error's RMS over ``LOCAL_SECONDS`` either side, leaving out
  ``GAP_SECONDS`` about the sample (``local`` times that RMS). Voiced speech's
  excitation comes in bursts at each glottal closure, a struck note's at its
  attack: there the error stands out of the block's scale but not of the burst
  around it; a click stands out of both. On the takes of tests/takes.py at
  22.05 kHz (seed 1), the block test alone found 79 % of the clicks outside
  quiet stretches at 2.3 false clicks a second of clean audio; both tests 89 %
  at 1.7 (and 78 % against 55 % of clicks 0-10 dB above the local level).

Samples closer than a quarter of the model order are one click; a run longer than
the longest click is the audio itself (a plosive, a drum). A candidate whose
surroundings recur a period away (:func:`recurs`) is the waveform's own edge.
Digital silence teaches no model: a short burst in it is a click by itself
(:func:`in_silence`).

Everything is batched over blocks (FFT filtering per block, medians per row) so
an hour of audio costs a few numpy passes, not a Python loop per block.
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
EDGE_SECONDS = 0.0005  # the audio either side of a candidate compared with a period away
PERIOD_SECONDS = (0.002, 0.025)  # the periods a waveform's edge may recur at
RECUR = 0.9  # correlation above which a candidate is the waveform recurring, not a click
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


def block_models(signal: np.ndarray, block: int, order: int) -> np.ndarray:
    """``[blocks, order + 1]``: each block's prediction-error filter, learnt from it and
    half a block either side (zeros beyond the signal)."""
    count = -(-len(signal) // block)
    windows = _windows(signal, 2 * block, block, block // 2, count)
    models = np.empty((count, order + 1))
    for i in range(0, count, BATCH):
        models[i:i + BATCH] = ar.levinson(ar.autocorrelation(windows[i:i + BATCH], order))
    return models


def errors(signal: np.ndarray, models: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, the magnitudes of its forward and backward prediction errors under
    its block's model (0 within a model order of the signal's ends)."""
    count, p = models.shape[0], models.shape[1] - 1
    size = block + 2 * p
    segments = _windows(signal, size, block, p, count)  # row b: x[b * block - p ...]
    fwd, bwd = np.empty((count, block)), np.empty((count, block))
    for i in range(0, count, BATCH):
        spectrum = np.fft.rfft(segments[i:i + BATCH], size)
        model = np.fft.rfft(models[i:i + BATCH], size)
        # the filter and its reverse, circularly: neither wraps over the rows kept
        fwd[i:i + BATCH] = np.abs(np.fft.irfft(spectrum * model, size)[:, p:p + block])
        bwd[i:i + BATCH] = np.abs(np.fft.irfft(spectrum * model.conj(), size)[:, p:p + block])
    out = []
    for e in (fwd, bwd):
        e = e.ravel()[:len(signal)]
        e[:p], e[max(p, len(signal) - p):] = 0.0, 0.0
        out.append(e)
    return out[0], out[1]


def block_scales(signal: np.ndarray, err: np.ndarray, block: int, order: int) -> np.ndarray:
    """``[blocks]``: robust standard deviation of the error over each block and half a
    block either side, learnt from live samples only; inf where they cannot teach a
    model (too few live samples, or no more than DC)."""
    count = -(-len(signal) // block)
    ok = live(signal) & (err > 0)
    rows_x = _windows(signal, 2 * block, block, block // 2, count)
    rows_e = _windows(err, 2 * block, block, block // 2, count)
    rows_ok = _windows(ok, 2 * block, block, block // 2, count)
    out = np.full(count, np.inf)
    for i in range(0, count, BATCH):
        e, m, x = rows_e[i:i + BATCH], rows_ok[i:i + BATCH], rows_x[i:i + BATCH]
        enough = m.sum(1) >= 4 * order
        spread = np.zeros(len(m))
        spread[enough] = np.std(x[enough], axis=1, where=m[enough])
        usable = enough & (spread > ar.SILENT)
        full = usable & m.all(1)
        if full.any():
            out[i:i + BATCH][full] = np.median(e[full], axis=1)
        for j in np.flatnonzero(usable & ~full):
            out[i + j] = np.median(e[j][m[j]])
    return 1.4826 * out + 1e-12


def local_rms(err: np.ndarray, sample_rate: int) -> np.ndarray:
    """The error's RMS over ``LOCAL_SECONDS`` either side of each sample, leaving out
    ``GAP_SECONDS`` about it. Windowed sums from one cumulative sum: its rounding
    (1e-16 of the running total) is far below a click's error (above ``FLOOR``)."""
    gap = max(MIN_GAP, round(GAP_SECONDS * sample_rate))
    reach = max(4 * gap, round(LOCAL_SECONDS * sample_rate))
    n = len(err)
    total = np.concatenate(([0.0], np.cumsum(err * err)))
    idx = np.arange(n)
    lo_a, lo_b = np.clip(idx - reach, 0, n), np.clip(idx - gap + 1, 0, n)
    hi_a, hi_b = np.clip(idx + gap, 0, n), np.clip(idx + reach + 1, 0, n)
    energy = total[lo_b] - total[lo_a] + total[hi_b] - total[hi_a]
    count = np.maximum(lo_b - lo_a + hi_b - hi_a, 1)
    return np.sqrt(np.maximum(energy, 0.0) / count)


def _level(err: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """RMS of ``err`` over each ``[starts[i], stops[i])`` (clipped to it; 0 if empty)."""
    total = np.concatenate(([0.0], np.cumsum(err * err)))
    a, b = np.clip(starts, 0, len(err)), np.clip(stops, 0, len(err))
    return np.sqrt(np.maximum(total[b] - total[a], 0.0) / np.maximum(b - a, 1))


def extents(fwd: np.ndarray, bwd: np.ndarray, starts: np.ndarray, stops: np.ndarray,
            sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs found widened to each click's first and last samples, which the smaller
    of the two errors often misses (the other error partly cancels there). A click
    starts where the forward error first stands out (``EDGE`` times its RMS over the
    ``LOCAL_SECONDS`` before, which no click's sample reaches) and ends where the
    backward error last does, at most ``REACH`` samples beyond the run."""
    n = len(fwd)
    reach = round(LOCAL_SECONDS * sample_rate)
    before = _level(fwd, starts - REACH - reach, starts - REACH)
    after = _level(bwd, stops + REACH, stops + REACH + reach)
    lo, hi = starts.copy(), stops.copy()
    for k in range(REACH, 0, -1):
        at = np.clip(starts - k, 0, n - 1)
        out = (starts - k >= 0) & (fwd[at] > np.maximum(EDGE * before, FLOOR))
        lo = np.where(out, np.minimum(lo, at), lo)
        at = np.clip(stops - 1 + k, 0, n - 1)
        out = (stops - 1 + k < n) & (bwd[at] > np.maximum(EDGE * after, FLOOR))
        hi = np.where(out, np.maximum(hi, at + 1), hi)
    return lo, hi


def candidates(signal: np.ndarray, sample_rate: int, *, block: float, local: float,
               max_len: int) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, stops)`` of the clicks: the runs of samples whose error stands out by
    ``block`` robust deviations of its block's scale and ``local`` times the RMS about it
    (runs closer than a quarter of the model order joined), no longer than ``max_len``,
    widened to their :func:`extents`."""
    order = order_for(sample_rate)
    size = block_for(sample_rate, order)
    fwd, bwd = errors(signal, block_models(signal, size, order), size)
    err = np.minimum(fwd, bwd)
    scale = np.repeat(block_scales(signal, err, size, order), size)[:len(signal)]
    flags = (err > np.maximum(block * scale, FLOOR)) & (err > local * local_rms(err, sample_rate))
    starts, stops = runs(flags, max(1, order // 4))
    short = stops - starts <= max_len
    return extents(fwd, bwd, starts[short], stops[short], sample_rate)


def in_silence(signal: np.ndarray, *, max_len: int, quiet: int) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """``(starts, stops)`` of the clicks in digital silence: the bursts of a cluster (bursts
    less than ``quiet`` samples apart, ``quiet`` samples of silence either side of it)
    that holds at most ``max_len`` samples of sound and peaks above ``FLOOR``: a click, or
    two close together. A plosive's burst in silence is often shorter than a click may
    be, but comes with others (espeak-ng's: 15, 22 and 58 samples within 3 ms)."""
    n = len(signal)
    sound = np.abs(signal) > ar.SILENT
    starts, stops = runs(sound, 1)
    c0, c1 = runs(sound, quiet)
    if len(c0) == 0:
        return starts, stops
    heard = np.concatenate(([0], np.cumsum(sound)))
    peaks = np.maximum.reduceat(np.abs(signal), c0)
    keep = (heard[c1] - heard[c0] <= max_len) & (peaks > FLOOR) & (c0 >= quiet) & \
        (c1 + quiet <= n)
    cluster = np.searchsorted(c0, starts, side="right") - 1
    return starts[keep[cluster]], stops[keep[cluster]]


def _correlation(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v) / (math.sqrt(float(u @ u) * float(v @ v)) + 1e-30)


def recurs(signal: np.ndarray, c0: int, c1: int, sample_rate: int, threshold: float) -> bool:
    """Whether ``[c0, c1)`` is the waveform recurring, not a click: the audio about it
    (``EDGE_SECONDS`` either side) comes back a period away (``PERIOD_SECONDS``, 40-500
    Hz) with a normalised correlation above ``RECUR``, and that period's copy predicts
    the candidate as well as it predicts the audio about it (its error there does not
    stand out by ``threshold`` robust deviations). A square wave's edge or a buzzy
    note's, which a short AR model cannot predict, is the sound; a click on a steady
    tone is not in the tone's previous period."""
    edge = max(2, round(EDGE_SECONDS * sample_rate))
    a, b = c0 - edge, c1 + edge
    if a < 0 or b > len(signal):
        return False
    seg = signal[a:b]
    energy = float(seg @ seg)
    shortest = max(b - a, round(PERIOD_SECONDS[0] * sample_rate))
    longest = round(PERIOD_SECONDS[1] * sample_rate)
    lo, hi = max(0, a - longest), min(len(signal), b + longest)
    windows = np.lib.stride_tricks.sliding_window_view(signal[lo:hi], b - a)
    lags = np.arange(lo, hi - (b - a) + 1) - a
    windows = windows[np.abs(lags) >= shortest]
    if energy <= 0 or len(windows) == 0:
        return False
    dots = windows @ seg
    power = np.einsum("ij,ij->i", windows, windows)
    best = int(np.argmax(dots / (np.sqrt(power * energy) + 1e-30)))
    copy = windows[best]
    about = np.r_[0:edge, b - a - edge:b - a]  # the candidate's surroundings, not itself
    if min(dots[best] / (math.sqrt(power[best] * energy) + 1e-30),
           _correlation(seg[about], copy[about])) <= RECUR:
        return False  # (a click whose best match is another click: its surroundings differ)
    error = np.abs(seg - dots[best] / power[best] * copy)
    sigma = 1.4826 * float(np.median(error[about])) + 1e-12
    return float(error[edge:-edge].max()) <= max(threshold * sigma, FLOOR)
