"""Attenuate what stands out of its surroundings, learning the surroundings
outside the stroke.

Each covered cell belongs to a run of covered cells along time (its row)
and along frequency (its column). Where the stroke is locally long in time
(a whistle, a hum partial) the level is learnt from the bins just below and
above its run in frequency; where it is locally tall (a vertical stroke on a
click, a patch over a cough) from the frames just before and after its run in
time. "Long" compares the time run in 50 ms units with the frequency run in
semitones. The level is the mean magnitude of the context on each side,
interpolated across the run (a level from before and after holds for the bins
within a semitone: a voice's harmonics move); a cell above it comes down to it,
a cell below stays, and phase is never touched. Where the level was learnt
before and after (a burst), the excess is treated as noise and subtracted
instead (:func:`_subtracted`), so a voice that rises under the burst is kept.
"""

import math
import warnings

import numpy as np

NOISE_SEMITONES = 2.0  # a burst's noise power: the median over this either side
OVER_SUBTRACTION = 4.0  # noise power taken away, times its estimate (Berouti et al. 1979)
FLOOR = 0.1  # no cell of a burst goes below -20 dB of itself (no musical noise holes)
TIME_UNIT = 0.05  # seconds of time run that weigh as much as one semitone of frequency run
WIDEN_SEMITONES = 1.0  # a level learnt before/after holds for the bins this close


def runs(mask: np.ndarray):
    """``(start, stop)`` of each run of True in a 1-D boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return zip(edges[::2], edges[1::2], strict=True)


def _across(mag: np.ndarray, covered: np.ndarray, context: int, lengths: np.ndarray,
            levels: np.ndarray) -> None:
    """Along the last axis of ``mag [ch, rows, n]``: for each run of ``covered``, the
    interpolated context level into ``levels`` and the run's length into ``lengths``."""
    n = covered.shape[-1]
    for row in range(covered.shape[0]):
        for a, b in runs(covered[row]):
            lengths[row, a:b] = b - a
            k = context if context > 0 else max(2, (b - a) // 2)
            sides = [mag[:, row, max(a - k, 0):a], mag[:, row, b:min(b + k, n)]]
            means = [s.mean(-1) for s in sides if s.shape[-1] > 0]
            if not means:
                continue  # the run spans everything: nothing to learn from
            t = (np.arange(b - a) + 0.5) / (b - a)
            levels[:, row, a:b] = means[0][:, None] + (means[-1] - means[0])[:, None] * t


def target(mag: np.ndarray, covered: np.ndarray, hz: np.ndarray, *, frame_seconds: float,
           context_frames: int, direction: str) -> np.ndarray:
    """``mag [ch, bins, frames]`` with each covered cell brought down to its
    context level (see the module notes); ``hz``: each row's centre frequency."""
    ch, bins, frames = mag.shape
    inf = np.full(mag.shape, np.inf, np.float32)
    t_len, t_level = np.zeros((bins, frames)), inf.copy()
    _across(mag, covered, context_frames, t_len, t_level)
    t_level = _widen(t_level, hz)
    f_len, f_level = np.zeros((frames, bins)), inf.transpose(0, 2, 1).copy()
    _across(mag.transpose(0, 2, 1), covered.T, 0, f_len, f_level)
    f_level = f_level.transpose(0, 2, 1)
    t_level = _subtracted(mag, t_level, hz)
    if direction == "time":
        level = t_level
    elif direction == "frequency":
        level = f_level
    elif direction == "both":
        level = np.minimum(t_level, f_level)
    else:  # auto: across the stroke's local extent
        octave = np.log2(np.maximum(hz, 1.0))
        per_bin = np.abs(np.gradient(octave)) * 12 if bins > 1 else np.ones(1)
        semitones = f_len.T * per_bin[:, None]
        along_time = t_len * frame_seconds / TIME_UNIT > semitones
        level = np.where(along_time[None], f_level, t_level)
    return np.where(covered[None], np.minimum(mag, level), mag)


def _widen(level: np.ndarray, hz: np.ndarray) -> np.ndarray:
    """Each bin's level raised to the highest within ``WIDEN_SEMITONES`` of it: a
    voice's harmonic that moved a little since the context is not what stands out."""
    octave = np.log2(np.maximum(hz, 1.0))
    out = level.copy()
    for b in range(level.shape[1]):
        near = np.abs(octave - octave[b]) * 12 <= WIDEN_SEMITONES
        finite = np.where(np.isfinite(level[:, near]), level[:, near], -np.inf)
        out[:, b] = np.where(np.isfinite(level[:, b]), finite.max(1), level[:, b])
    return out


def context_frames(frame_seconds: float, context_ms: float) -> int:
    return max(2, math.ceil(context_ms / 1000 / frame_seconds))



def _subtracted(mag: np.ndarray, level: np.ndarray, hz: np.ndarray) -> np.ndarray:
    """Where ``level`` was learnt before and after a run (a patch over a burst):
    what stands above it is taken as noise, its power smoothed over frequency with a
    median (a voice's harmonics stand out of the noise between them, so they are not
    it) and subtracted ``OVER_SUBTRACTION`` times, down to ``FLOOR`` of the cell."""
    known = np.isfinite(level)
    excess = np.where(known, np.maximum(mag ** 2 - np.where(known, level, 0) ** 2, 0), np.nan)
    octave = np.log2(np.maximum(hz, 1.0))
    noise = np.zeros_like(mag)
    with warnings.catch_warnings():  # frames with nothing covered near a bin: NaN, then 0
        warnings.simplefilter("ignore", RuntimeWarning)
        for b in np.flatnonzero(known.any(axis=(0, 2))):
            near = np.abs(octave - octave[b]) * 12 <= NOISE_SEMITONES
            noise[:, b] = np.nan_to_num(np.nanmedian(excess[:, near], axis=1))
    out = np.sqrt(np.maximum(mag ** 2 - OVER_SUBTRACTION * noise, (FLOOR * mag) ** 2))
    return np.where(known, out, level).astype(np.float32)
