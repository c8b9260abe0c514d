"""De-clip: find the runs of samples a recording clipped and restore them
consistently.

Detection (:mod:`engine.repair.declip_detect`) finds, per channel and polarity,
the clip level: the peak, where runs of samples sit exactly at it, or else where
the amplitudes pile up (a codec or a resampler makes a plateau wobble and
overshoot), as long as a few runs on it are reached steeply, as a clipper makes
them, unlike a smooth peak. ``threshold`` forces the level instead.

Restoration (:mod:`engine.repair.declip_spade`): A-SPADE on blocks of about
46 ms overlapping by half, only those holding a clipped sample; each block's
restoration is consistent (reliable samples as they were, each clipped sample at
or beyond its clip level with its sign), and the blocks are cross-faded with a
Hann window, which keeps that. How far a restored sample goes beyond the level
is then shrunk to ``EXCESS`` of A-SPADE's (its sparse spectrum overshoots
flat-topped, compressed music: one take of 40 had lost 2 dB SI-SDR against its
clipped input; at 0.7 none does, and the median gain rose from +5.8 to +6.1 dB
on seed 1), and clamped to ``headroom_db`` above the level. Only the clipped
samples are written: every other sample is returned bit-exact.

Measured by bench/bench_declip.py (120 takes of speech, sounds and music clipped
at 20-70 % of their peak, seeds 1-3): no take worse than its input by SI-SDR,
PESQ-WB or STOI; SI-SDR +6.0 dB (median) for inputs of 5-10 dB.
"""

import numpy as np

from engine.progress import step
from engine.repair import Event, Outcome
from engine.repair.declip_detect import Clipping, find_clipping
from engine.repair.declip_spade import aspade

BLOCK_SECONDS = 0.046  # the block: this long, to the nearest power of two in samples
EXCESS = 0.7  # of how far A-SPADE goes beyond the level, what is kept
OVERLAP = 2  # blocks overlapping each sample
BATCH_SAMPLES = 1 << 19  # blocks restored together hold about this many samples


def run(x: np.ndarray, sample_rate: int, *, headroom_db: float = 6.0,
        threshold: float | None = None, progress=None, cancel=None) -> Outcome:
    """Restore the clipped runs of ``x`` (float64 ``[channels, n]``). ``threshold``
    (linear, full scale 1.0) forces the clip level of both polarities; by default it
    is found per channel and polarity. Restored samples lie at most ``headroom_db``
    above the clip level. Nothing clipped: ``x`` itself and an empty summary."""
    x = np.asarray(x, np.float64)
    clipping = [find_clipping(ch, threshold=threshold) for ch in x]
    if not any(len(c.runs) for c in clipping):
        return Outcome(samples=x)
    w = block_length(sample_rate)
    y = x.copy()
    for ch, found in enumerate(clipping):
        if len(found.runs):
            y[ch] = _restore(x[ch], found, w, 10 ** (headroom_db / 20),
                             lambda f, ch=ch: step((ch + f) / len(x), progress, cancel))
    return Outcome(samples=y, summary=_summary(y, clipping), events=[
        Event(int(s), int(e - s), ch) for ch, c in enumerate(clipping) for s, e in c.runs])


def block_length(sample_rate: int) -> int:
    return 1 << int(round(np.log2(BLOCK_SECONDS * sample_rate)))


def _restore(x: np.ndarray, found: Clipping, w: int, headroom: float, done) -> np.ndarray:
    """One channel with its clipped samples restored by A-SPADE over blocks of ``w``
    overlapping ``OVERLAP`` times; ``done(fraction)`` between batches of blocks."""
    n, hop = len(x), w // OVERLAP
    pad = (w, 2 * w)  # blocks every hop from w - hop before the channel, padded with silence
    sign = np.zeros(n + sum(pad), np.int8)
    for (s, e), g in zip(found.runs, found.signs, strict=True):
        sign[w + s:w + e] = g
    padded = np.pad(x, pad)
    starts = np.arange(hop, n + w + 1, hop)
    clipped_before = np.concatenate([[0], np.cumsum(sign != 0, dtype=np.int32)])
    starts = starts[clipped_before[starts + w] > clipped_before[starts]]  # blocks with clipping
    window = np.sin(np.pi * (np.arange(w) + 0.5) / w) ** 2 * (2 / OVERLAP)  # sums to one
    total = np.zeros(len(padded), np.float32)
    per_batch = max(1, BATCH_SAMPLES // w)
    for a in range(0, len(starts), per_batch):
        index = starts[a:a + per_batch, None] + np.arange(w)
        low, high = _bounds(padded[index], sign[index], found.levels, np.inf)
        scale = max(found.levels)
        restored = aspade(np.clip(0.0, low, high) / scale, low / scale, high / scale)
        for phase in range(OVERLAP):  # blocks a whole block apart do not overlap
            rows = (starts[a:a + per_batch] // hop) % OVERLAP == phase
            total[index[rows]] += restored[rows] * window * scale
        done(min(1.0, (a + per_batch) / len(starts)))
    hit = np.flatnonzero(sign) - w
    low, high = _bounds(x[hit], sign[hit + w], found.levels, headroom)
    out = x.copy()
    level = np.where(sign[hit + w] > 0, found.levels[0], -found.levels[1])
    out[hit] = np.clip(level + EXCESS * (total[hit + w] - level), low, high)
    return out


def _bounds(x: np.ndarray, sign: np.ndarray, levels: tuple[float, float], headroom: float):
    """Where each sample may lie: reliable ones (``sign`` 0) where they are; clipped
    ones at least as far out as their level and their value, at most ``headroom``
    times the level (or as far out as they are)."""
    level = np.where(sign > 0, levels[0], np.where(sign < 0, levels[1], 1.0))
    floor = np.maximum(np.abs(x), level)
    ceiling = np.maximum(floor, level * headroom)
    low = np.where(sign > 0, floor, np.where(sign < 0, -ceiling, x))
    high = np.where(sign < 0, -floor, np.where(sign > 0, ceiling, x))
    return low, high


def _summary(y: np.ndarray, clipping: list[Clipping]) -> str:
    runs = sum(len(c.runs) for c in clipping)
    samples = sum(int(np.sum(c.runs[:, 1] - c.runs[:, 0])) for c in clipping)
    level = max(max(c.levels) for c in clipping)
    peak = float(np.max(np.abs(y)))
    return (f"{runs} clipped runs ({samples} samples) restored, clip level "
            f"{_dbfs(level):.1f} dBFS; peak now {_dbfs(peak):.1f} dBFS")


def _dbfs(v: float) -> float:
    return 20 * np.log10(max(v, 1e-12))
