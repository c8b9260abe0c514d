"""Where a channel was clipped: per polarity, the level its waveform piles up at.

A clipper leaves runs of consecutive samples at one level (exactly, or within a
small band once a codec or a resampler has made them wobble and overshoot, so
that the level is where the amplitudes pile up, not the peak), reached steeply
from both sides. Most of a run's samples lie on the level (a peak passing above
it is no run). A smooth peak also spends a few samples near its top (many, at
192 kHz), but it curves away: half a run's length outside the run it is still
close to the top, where a clipped waveform is already far below. A polarity is
clipped when a few of its runs are steep (most runs of a real clipped recording
barely exceed the level, and are not); the level may lie anywhere below full
scale (clipped, then scaled) and differ between the polarities."""

from dataclasses import dataclass

import numpy as np

EXACT = 1e-6  # relative: samples this close to the extreme sit at it (a float32 round trip)
WOBBLE = 0.03  # relative band of a level whose samples wobble (after a codec or a resampler)
BIN = 0.01  # relative width of the amplitude histogram's bins, looking for a wobbling level
PILE = 2.0  # samples within the band of a wobbling level: this many times those below it
MIN_RUN = {EXACT: 2, WOBBLE: 3}  # shortest run that tells a level, in samples, for each band
STEEP = 0.25  # a clipped run's waveform is this share of the level lower half its length away
MIN_STEEP_RUNS = {EXACT: 2, WOBBLE: 3}  # a polarity with this many steep runs is clipped
SILENT = 1e-7  # a polarity that never goes beyond this is not clipped


@dataclass
class Clipping:
    """One channel's clipped runs: ``runs`` ``[R, 2]`` (start, end), ``signs`` ``[R]``
    (+1, -1), ``levels`` (positive, negative clip level, as magnitudes; 0 if none)."""

    runs: np.ndarray
    signs: np.ndarray
    levels: tuple[float, float]


def find_clipping(x: np.ndarray, *, threshold: float | None = None) -> Clipping:
    """The clipped runs of one channel ``x`` (float64 ``[n]``). ``threshold`` forces the
    level of both polarities (runs of at least two samples at or beyond it)."""
    runs, signs, levels = [], [], []
    for sign in (1.0, -1.0):
        v = sign * x
        if threshold is not None:
            level = float(threshold)
            found = _runs(v >= level * (1 - EXACT), MIN_RUN[EXACT])
        else:
            level, found = _level(v)
        runs.append(found)
        signs.append(np.full(len(found), sign))
        levels.append(level if len(found) else 0.0)
    all_runs = np.concatenate(runs).reshape(-1, 2)
    order = np.argsort(all_runs[:, 0], kind="stable")
    return Clipping(all_runs[order], np.concatenate(signs)[order], (levels[0], levels[1]))


def _level(v: np.ndarray) -> tuple[float, np.ndarray]:
    """The clip level of the positive side of ``v`` and its runs, or (0, no runs)."""
    peak = float(np.max(v, initial=0.0))
    if peak <= SILENT:
        return 0.0, np.zeros((0, 2), np.int64)
    for band in (EXACT, WOBBLE):
        level = peak if band == EXACT else _pile(v, peak)
        runs = _runs(v >= level * (1 - band), MIN_RUN[band])
        if len(runs) == 0:
            continue
        steep = _steep(v, runs, level) & _flat(v, runs, level * band, level)
        if steep.sum() >= MIN_STEEP_RUNS[band]:
            # the level and how far below it clipped samples wobble: from the steep runs
            on_level = v[run_samples(runs[steep])]
            return float(np.median(on_level)), _runs(v >= on_level.min(), MIN_RUN[EXACT])
    return 0.0, np.zeros((0, 2), np.int64)


def _pile(v: np.ndarray, peak: float) -> float:
    """Where the samples above a tenth of ``peak`` pile up most against the band below
    (``WOBBLE`` either side of a level against 2-4 ``WOBBLE`` below it): a codec or a
    resampler spreads a clipped plateau around its level and overshoots it, so the
    peak is not the level. ``inf`` when nothing piles up ``PILE`` times."""
    bins = np.log1p(BIN)
    edges = 0.1 * peak * np.exp(bins * np.arange(int(np.log(10) / bins) + 2))
    counts = np.concatenate([[0], np.cumsum(np.histogram(v[v >= edges[0]], edges)[0])])
    k = int(round(WOBBLE / BIN))
    centre = np.arange(4 * k, len(edges) - 1 - k)
    if len(centre) == 0:
        return np.inf
    on = counts[centre + k + 1] - counts[centre - k]
    below = counts[centre - 2 * k] - counts[centre - 4 * k]
    score = on / (below + 1.0)
    best = int(np.argmax(score))
    return float(edges[centre[best]] * (1 + BIN / 2)) if score[best] >= PILE else np.inf


def _flat(v: np.ndarray, runs: np.ndarray, band: float, level: float) -> np.ndarray:
    """Which runs lie on the level: their median within ``band`` of it (not a peak
    that passes above it)."""
    lengths = runs[:, 1] - runs[:, 0]
    first = np.cumsum(lengths) - lengths  # where each run's samples begin, all runs end to end
    values = v[run_samples(runs)]
    values = values[np.lexsort((values, np.repeat(np.arange(len(runs)), lengths)))]
    median = (values[first + (lengths - 1) // 2] + values[first + lengths // 2]) / 2
    return np.abs(median - level) <= band


def _steep(v: np.ndarray, runs: np.ndarray, level: float) -> np.ndarray:
    """Which runs fall away steeply on both sides: half the run's length (at least two
    samples) outside it, the waveform is ``STEEP`` of the level lower (or the channel ends)."""
    reach = np.maximum(2, (runs[:, 1] - runs[:, 0]) // 2)
    before, after = runs[:, 0] - reach, runs[:, 1] - 1 + reach
    floor = level * (1 - STEEP)
    left = (before < 0) | (v[np.clip(before, 0, len(v) - 1)] <= floor)
    right = (after >= len(v)) | (v[np.clip(after, 0, len(v) - 1)] <= floor)
    return left & right


def _runs(mask: np.ndarray, min_length: int) -> np.ndarray:
    """``[R, 2]`` (start, end) of the runs of True in ``mask`` at least ``min_length`` long."""
    padded = np.zeros(len(mask) + 2, bool)
    padded[1:-1] = mask
    runs = np.flatnonzero(padded[1:] != padded[:-1]).reshape(-1, 2)  # starts and ends alternate
    return runs[runs[:, 1] - runs[:, 0] >= min_length]


def run_samples(runs: np.ndarray) -> np.ndarray:
    """The samples of ``runs`` (``[R, 2]`` start, end), run after run."""
    lengths = runs[:, 1] - runs[:, 0]
    return np.arange(lengths.sum()) + np.repeat(runs[:, 0] - np.cumsum(lengths) + lengths, lengths)
