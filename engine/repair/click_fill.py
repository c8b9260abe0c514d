"""Clicks re-estimated, many at once: each click's samples by least-squares AR
interpolation (engine.repair.ar) from the audio ``span`` either side of it, with
a model learnt from that audio alone, every other click's samples there left
out of the model and re-estimated with it (a click never teaches its
neighbour's repair). Where the audio about a click cannot teach a model
(digital silence, a fade to nothing, too little of it) or the repair would peak
above that audio by more than ``LOUDER_DB``, the click becomes a straight line
between its neighbours (never louder than they are).

The clicks of a channel are solved in batches of windows of one length, so a
long file's thousands of clicks cost a few numpy calls, not a Python loop each.
"""

import numpy as np

from engine.repair import ar
from engine.repair.click_find import live

LOUDER_DB = 1.0  # a repair may not peak above its surroundings by more than this
BATCH = 256  # clicks solved at once


def _line(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return np.linspace(x[lo - 1], x[hi], hi - lo + 2)[1:-1]


def _solved(windows: np.ndarray, missing: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            order: int) -> list[np.ndarray]:
    """Each row's samples ``[lo, hi)`` re-estimated (``windows`` ``[B, L]``; ``missing``
    marks every click's samples there, the row's own among them)."""
    rows, length = windows.shape
    p = order
    present = ~missing
    ctx = present & live(windows)
    counts = ctx.sum(-1)
    spread = np.zeros(rows)
    enough = counts >= 4 * order
    spread[enough] = np.std(windows[enough], axis=-1, where=ctx[enough])
    usable = enough & (spread > ar.SILENT) & (lo >= p + 1) & (length - hi >= p + 1)
    a = ar.levinson(ar.autocorrelation(windows, order, present=present))
    unknown = missing.copy()
    unknown[:, :p] = unknown[:, length - p:] = False  # too near the window's ends to solve
    values = ar.interpolate(windows, unknown, a)
    around = np.max(np.abs(np.where(present, windows, 0.0)), axis=-1)
    out = []
    for r in range(rows):
        mine = unknown[r, :lo[r]].sum()
        fixed = values[r, mine:mine + hi[r] - lo[r]]
        if not usable[r] or not np.all(np.isfinite(fixed)) or \
                np.abs(fixed).max() > around[r] * 10 ** (LOUDER_DB / 20):
            fixed = _line(windows[r], lo[r], hi[r])
        out.append(fixed)
    return out


def fill(signal: np.ndarray, starts: np.ndarray, stops: np.ndarray, *, order: int,
         span: int) -> list[np.ndarray | None]:
    """The new samples of each click ``[starts[i], stops[i])`` of ``signal`` (in order,
    apart), or None for a click at the signal's very ends (nothing after or before it)."""
    n = len(signal)
    starts, stops = np.asarray(starts, int), np.asarray(stops, int)
    missing = np.zeros(n + 1, int)
    np.add.at(missing, starts, 1)
    np.add.at(missing, stops, -1)
    missing = np.cumsum(missing)[:n] > 0
    out: list[np.ndarray | None] = [None] * len(starts)
    if len(starts) == 0:
        return out
    width = 2 * span + int((stops - starts).max())
    inside = (starts >= span) & (starts - span + width <= n)
    chosen = np.flatnonzero(inside)
    steps = np.arange(width)
    for i in range(0, len(chosen), BATCH):
        idx = chosen[i:i + BATCH]
        at = (starts[idx] - span)[:, None] + steps
        for j, fixed in zip(idx, _solved(signal[at], missing[at], np.full(len(idx), span),
                                         span + stops[idx] - starts[idx], order), strict=True):
            out[j] = fixed
    for j in np.flatnonzero(~inside & (starts >= 1) & (stops < n)):  # near the ends: alone
        w0, w1 = max(0, starts[j] - span), min(n, stops[j] + span)
        out[j] = _solved(signal[None, w0:w1], missing[None, w0:w1], starts[j:j + 1] - w0,
                         stops[j:j + 1] - w0, order)[0]
    return out
