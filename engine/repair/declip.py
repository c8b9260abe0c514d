"""De-clip: find the runs of samples a recording clipped and restore them
consistently.

Detection (:mod:`engine.repair.declip_detect`) finds, per channel and polarity,
the level the waveform piles up at: runs of consecutive samples at (or, after a
codec, within a small band of) the extreme, reached steeply, as a clipper makes
them, unlike a smooth peak. ``threshold`` forces the level instead.

Restoration (:mod:`engine.repair.declip_spade`): A-SPADE on blocks of about
46 ms overlapping by half, only those holding a clipped sample; each block's
restoration is consistent (reliable samples as they were, each clipped sample at
or beyond its clip level with its sign, and at most ``headroom_db`` above it),
and the blocks are cross-faded with a Hann window, which keeps that. Only the
clipped samples are written: every other sample is returned bit-exact.
"""

import numpy as np

from engine.progress import step
from engine.repair import Event, Outcome
from engine.repair.declip_detect import Clipping, find_clipping
from engine.repair.declip_spade import aspade

BLOCK_SECONDS = 0.046  # the block: this long, to the nearest power of two in samples
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
    """One channel with its clipped samples restored by A-SPADE over half-overlapping
    blocks of ``w``; ``done(fraction)`` between batches of blocks."""
    n, hop = len(x), w // OVERLAP
    sign = np.zeros(n)
    for (s, e), g in zip(found.runs, found.signs, strict=True):
        sign[s:e] = g
    level = np.where(sign > 0, found.levels[0], found.levels[1])
    floor = np.maximum(np.abs(x), level)  # a restored sample's magnitude: at least this
    ceiling = np.maximum(floor, level * headroom)  # and at most this
    scale = max(found.levels)
    low = np.where(sign > 0, floor, np.where(sign < 0, -np.inf, x)) / scale
    high = np.where(sign < 0, -floor, np.where(sign > 0, np.inf, x)) / scale
    # blocks every w/2 from -w/2, over the channel padded with silence (reliable zeros)
    pad = (w, 2 * w)
    low, high = np.pad(low, pad), np.pad(high, pad)
    clipped = np.pad(sign != 0, pad)
    starts = np.arange(hop, n + w + 1, hop)
    ends = np.cumsum(np.concatenate([[0], clipped]))
    starts = starts[ends[starts + w] > ends[starts]]  # blocks holding a clipped sample
    window = np.sin(np.pi * (np.arange(w) + 0.5) / w) ** 2 * (2 / OVERLAP)  # sums to one
    total = np.zeros(n + w + 2 * w)
    per_batch = max(1, BATCH_SAMPLES // w)
    for a in range(0, len(starts), per_batch):
        index = starts[a:a + per_batch, None] + np.arange(w)
        restored = aspade(np.clip(0.0, low[index], high[index]), low[index], high[index])
        for phase in range(OVERLAP):  # blocks a whole block apart do not overlap
            rows = (starts[a:a + per_batch] // hop) % OVERLAP == phase
            total[index[rows]] += restored[rows] * window
        done(min(1.0, (a + per_batch) / len(starts)))
    out = x.copy()
    hit = sign != 0
    value = total[w:w + n][hit] * scale
    out[hit] = sign[hit] * np.clip(sign[hit] * value, floor[hit], ceiling[hit])
    return out


def _summary(y: np.ndarray, clipping: list[Clipping]) -> str:
    runs = sum(len(c.runs) for c in clipping)
    samples = sum(int(np.sum(c.runs[:, 1] - c.runs[:, 0])) for c in clipping)
    level = max(max(c.levels) for c in clipping)
    peak = float(np.max(np.abs(y)))
    return (f"{runs} clipped runs ({samples} samples) restored, clip level "
            f"{_dbfs(level):.1f} dBFS; peak now {_dbfs(peak):.1f} dBFS")


def _dbfs(v: float) -> float:
    return 20 * np.log10(max(v, 1e-12))
