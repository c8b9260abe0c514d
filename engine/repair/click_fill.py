"""Clicks re-estimated, many at once: each click's samples by least-squares AR
interpolation (engine.repair.ar) from the audio ``span`` either side of it, with
a model learnt from that audio alone, every other click's samples there left
out of the model and re-estimated with it (a click never teaches its
neighbour's repair).

A click's extent: the samples found (engine.repair.click_find) and up to
``REACH`` either side, which the detector often misses (a click's weaker first or
last samples). All are re-estimated once; an outer sample whose value lies
within ``KEEP`` posterior deviations of its re-estimate is the audio's, and the
extent stops short of it; the click is then re-estimated over what is left. Every
sample re-estimated that need not be costs: with clicks drawn as bench_repair
draws them and their true extents given, repairing 2 samples more either side
took PESQ-WB from 3.32 to 2.50 (seed 1, median of 12 speech takes).

Where the audio about a click cannot teach a model (digital silence, a fade to
nothing, too little of it) or the repair would peak above that audio by more
than ``LOUDER_DB``, the click becomes a straight line between its neighbours
(never louder than they are). Clicks are solved in batches of windows of one
length, so a long file's thousands of clicks cost a few numpy calls.
"""

import numpy as np

from engine.repair import ar
from engine.repair.click_find import live

LOUDER_DB = 1.0  # a repair may not peak above its surroundings by more than this
REACH = 2  # samples either side of those found that may be the click's too
KEEP = 6.0  # posterior deviations within which an outer sample is the audio's
BATCH = 256  # clicks solved at once


def _line(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return np.linspace(x[lo - 1], x[hi], hi - lo + 2)[1:-1]


def _estimates(windows: np.ndarray, unknown: np.ndarray,
               a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[B, L]`` re-estimates and posterior variances of the ``unknown`` samples (zero
    elsewhere)."""
    values, variance = ar.interpolate(windows, unknown, a)
    slot = np.arange(values.shape[1])[None] < unknown.sum(-1)[:, None]
    est, var = np.zeros(windows.shape), np.zeros(windows.shape)
    est[unknown], var[unknown] = values[slot], variance[slot]
    return est, var


def _trimmed(deviation: np.ndarray, lo: np.ndarray, hi: np.ndarray, core_lo: np.ndarray,
             core_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[lo, hi)`` shrunk from either end, towards ``[core_lo, core_hi)``, past the
    samples whose ``deviation`` (in posterior deviations) is within ``KEEP``."""
    rows = np.arange(len(lo))
    lo, hi = lo.copy(), hi.copy()
    going_lo, going_hi = np.ones(len(lo), bool), np.ones(len(lo), bool)
    for _ in range(REACH):
        going_lo &= (lo < core_lo) & (deviation[rows, np.minimum(lo, core_lo)] < KEEP)
        lo += going_lo
        going_hi &= (hi > core_hi) & (deviation[rows, np.maximum(hi, core_hi) - 1] < KEEP)
        hi -= going_hi
    return lo, hi


def _solved(windows: np.ndarray, others: np.ndarray, core: tuple[np.ndarray, np.ndarray],
            order: int) -> list[tuple[int, int, np.ndarray]]:
    """Each row's click (its samples ``core`` ``[lo, hi)`` and up to ``REACH`` either side)
    re-estimated: its ``[lo, hi)`` in the row and new samples. ``others`` marks the
    other clicks' samples in the rows."""
    rows, length = windows.shape
    p = order
    steps = np.arange(length)
    core_lo, core_hi = core
    lo, hi = np.maximum(core_lo - REACH, 1), np.minimum(core_hi + REACH, length - 1)
    own = (steps >= lo[:, None]) & (steps < hi[:, None])
    present = ~(others | own)
    ctx = present & live(windows)
    spread = np.zeros(rows)
    enough = ctx.sum(-1) >= 4 * order
    spread[enough] = np.std(windows[enough], axis=-1, where=ctx[enough])
    usable = enough & (spread > ar.SILENT) & (lo >= p + 1) & (length - hi >= p + 1)
    a = ar.levinson(ar.autocorrelation(windows, order, present=present))
    solvable = ~present
    solvable[:, :p] = solvable[:, length - p:] = False  # too near the window's ends
    est, var = _estimates(windows, solvable, a)
    deviation = np.abs(windows - est) / np.sqrt(np.maximum(var, 1e-300))
    lo, hi = np.where(usable, _trimmed(deviation, lo, hi, core_lo, core_hi), (lo, hi))
    own = (steps >= lo[:, None]) & (steps < hi[:, None])
    solvable = (others | own)
    solvable[:, :p] = solvable[:, length - p:] = False
    est, _ = _estimates(windows, solvable, a)
    around = np.max(np.abs(np.where(present, windows, 0.0)), axis=-1)
    out = []
    for r in range(rows):
        fixed = est[r, lo[r]:hi[r]]
        if not usable[r] or not np.all(np.isfinite(fixed)) or \
                np.abs(fixed).max() > around[r] * 10 ** (LOUDER_DB / 20):
            fixed = _line(windows[r], lo[r], hi[r])
        out.append((int(lo[r]), int(hi[r]), fixed))
    return out


def _merged(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clicks whose reaches touch are one click."""
    if len(starts) < 2:
        return starts, stops
    apart = starts[1:] - stops[:-1] > 2 * REACH
    first, last = np.r_[True, apart], np.r_[apart, True]
    return starts[first], np.maximum.accumulate(stops)[last]


def fill(signal: np.ndarray, starts: np.ndarray, stops: np.ndarray, *, order: int,
         span: int) -> list[tuple[int, int, np.ndarray | None]]:
    """The clicks found at ``[starts[i], stops[i])`` of ``signal`` (in order), those whose
    reaches touch as one: ``(start, stop, new samples)`` of each one's extent, the samples
    None at the signal's very ends (nothing before or after it)."""
    n = len(signal)
    starts, stops = _merged(np.asarray(starts, int), np.asarray(stops, int))
    if len(starts) == 0:
        return []
    out: list[tuple[int, int, np.ndarray | None]] = [
        (int(a), int(b), None) for a, b in zip(starts, stops, strict=True)]
    reach = np.zeros(n + 1, int)  # every click's samples and REACH either side
    np.add.at(reach, np.maximum(starts - REACH, 0), 1)
    np.add.at(reach, np.minimum(stops + REACH, n), -1)
    missing = np.cumsum(reach)[:n] > 0
    width = 2 * (span + REACH) + int((stops - starts).max())
    w0 = starts - span - REACH
    inside = (w0 >= 0) & (w0 + width <= n)
    chosen = np.flatnonzero(inside)
    groups = [(idx, w0[idx][:, None] + np.arange(width))
              for idx in (chosen[i:i + BATCH] for i in range(0, len(chosen), BATCH))]
    groups += [(np.array([j]), np.arange(max(0, starts[j] - span - REACH),
                                         min(n, stops[j] + span + REACH))[None])
               for j in np.flatnonzero(~inside & (starts >= 1) & (stops < n))]
    for idx, at in groups:  # (clicks near the ends: each in its own clipped window)
        base = at[:, 0]
        others = missing[at] & ~((at >= starts[idx, None] - REACH) &
                                 (at < stops[idx, None] + REACH))
        solved = _solved(signal[at], others, (starts[idx] - base, stops[idx] - base), order)
        for j, b, (lo, hi, fixed) in zip(idx, base, solved, strict=True):
            out[j] = (int(b) + lo, int(b) + hi, fixed)
    return out
