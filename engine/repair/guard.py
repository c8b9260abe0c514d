"""The safety contract of every repair, enforced on its output.

- No non-finite sample is ever written.
- No 10 ms window of the output peaks above the input's peak over the same
  window and its two neighbours by more than ``LOUDER_DB`` (de-clip: by its
  headroom instead, above the clip level), unless it stays below -100 dBFS.
- Where either fails, the output goes back to the input over that window,
  cross-faded over ``FADE_SECONDS`` inside the neighbouring windows: a blend of
  two signals never peaks above the louder of them, so the fade cannot break
  the rule either.

:func:`safe` returns the output made safe and how many windows were put back,
so a report can say so.
"""

import numpy as np

WINDOW_SECONDS = 0.01
LOUDER_DB = 1.0
FADE_SECONDS = 0.002
INAUDIBLE = 1e-5  # -100 dBFS, under a 16-bit file's noise floor: float32 rounding of a write


def window_peaks(x: np.ndarray, w: int) -> np.ndarray:
    """``[ch, windows]`` peak of |x| per window of ``w`` samples (the last one partial;
    inf where one holds a NaN), without a copy of ``x``."""
    full = x.shape[1] // w
    whole = x[:, :full * w].reshape(x.shape[0], full, w)
    peaks = [np.maximum(whole.max(axis=2), -whole.min(axis=2))] if full else []
    if x.shape[1] > full * w:
        peaks.append(np.abs(x[:, full * w:]).max(axis=1, keepdims=True))
    out = np.concatenate(peaks, axis=1)
    return np.where(np.isnan(out), np.inf, out)


def safe(x: np.ndarray, y: np.ndarray, sample_rate: int, *,
         louder_db: float = LOUDER_DB, neighbours: int = 1) -> tuple[np.ndarray, int]:
    """``y`` (a repair of ``x``, both ``[ch, n]``) with every half window that breaks the
    contract put back to ``x``; and how many were. Each half window is held to the
    input within ``neighbours`` half windows either side: with 1, every half window of
    any other grid keeps the rule with 2 (10 ms either side), which is how the contract
    is checked (``neighbours=2``)."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    n = x.shape[-1]
    w = max(1, round(WINDOW_SECONDS * sample_rate / 2))
    px, py = window_peaks(x, w), window_peaks(y, w)
    near = px.copy()
    for shift in range(1, neighbours + 1):
        near[:, shift:] = np.maximum(near[:, shift:], px[:, :-shift])
        near[:, :-shift] = np.maximum(near[:, :-shift], px[:, shift:])
    bad = ~(py <= np.maximum(near * 10 ** (louder_db / 20), INAUDIBLE))  # NaN, inf: bad
    if not bad.any():
        return y, 0
    keep = np.repeat(~bad, w, axis=1)[:, :n].astype(np.float64)
    fade = max(1, round(FADE_SECONDS * sample_rate))
    ramp = np.convolve(np.ones(fade), np.ones(fade) / fade)[:fade]  # 0 -> 1 within ``fade``
    for c in range(keep.shape[0]):  # a put-back window eases in and out over its neighbours
        edges = np.flatnonzero(np.diff(keep[c]))
        for e in edges:
            if keep[c, e] == 1:  # good -> bad at e + 1: fade out over the samples before
                lo = max(0, e + 1 - fade)
                keep[c, lo:e + 1] = np.minimum(keep[c, lo:e + 1], ramp[::-1][-(e + 1 - lo):])
            else:  # bad -> good: fade in after
                hi = min(n, e + 1 + fade)
                keep[c, e + 1:hi] = np.minimum(keep[c, e + 1:hi], ramp[:hi - e - 1])
    y_clean = np.where(np.isfinite(y), y, x)
    out = x + keep * (y_clean - x)
    out = np.where(keep == 0, x, out)  # bit for bit where put back
    return out, int(bad.sum())


def changed_span(x: np.ndarray, y: np.ndarray) -> tuple[int, int] | None:
    """``[first, last + 1)`` of the samples where ``y`` differs from ``x`` (any channel),
    or None when it is ``x`` bit for bit."""
    diff = np.flatnonzero((np.atleast_2d(x) != np.atleast_2d(y)).any(0))
    return (int(diff[0]), int(diff[-1]) + 1) if len(diff) else None
