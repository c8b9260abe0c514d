"""Clicks: find the samples an AR model of the audio around them cannot
explain, and re-estimate them by stable least-squares AR interpolation
(engine.repair.ar).

A sample is a click candidate when both its forward and its backward
prediction error stand out from the error of the audio around it (more than
``threshold`` robust standard deviations, and above -80 dBFS) and the audio a
period away does not predict it (a waveform's own edges recur); candidates closer
than a quarter of the model order are one click, and a run longer than
``max_ms`` is the audio itself (a plosive, a drum), not a click. The scale is
learnt only from live audio: digital silence, a fade to nothing or a DC stretch
teaches nothing, and where too little live audio surrounds a click it is left
alone. A repair louder than the audio around it (+1 dB) is left undone.

:func:`repair_click` serves the heal brush (one click under a dab); :func:`run`
is the de-click module (every click of a region, batched by blocks).
"""

import math

import numpy as np

from engine.progress import step
from engine.repair import Event, Outcome, ar

FLOOR = 1e-4  # prediction errors below -80 dBFS are inaudible: never a click
DILATE = 2  # samples added either side of each click
BLOCK_SECONDS = 0.04  # the module's AR models hold over this long
CONTEXT_SECONDS = 0.01  # the audio a click's repair is learnt from and checked against
LOUDER_DB = 1.0  # a repair may not peak above its surroundings by more than this
SILENCE_SECONDS = 0.002  # a click in digital silence has this much of it either side
MODEL_BATCH = 512  # blocks whose models are learnt at once
EDGE_SECONDS = 0.0005  # the audio either side of a candidate compared with a period away
PERIOD_SECONDS = (0.002, 0.025)  # the periods a waveform's edge may recur at
RECUR = 0.9  # correlation above which a candidate is the waveform recurring, not a click


def order_for(sample_rate: int) -> int:
    """AR order: 32 at 44.1 kHz, in proportion, within 12 to 48."""
    return int(np.clip(round(32 * sample_rate / 44100), 12, 48))


def threshold_for(sensitivity: float) -> float:
    """Robust standard deviations a click must stand out by: sensitivity 0 -> 32,
    5 (default) -> 16, 10 -> 8 (each step ~0.6 dB more sensitive). On speech and music
    without clicks (tests/takes.py), 16 found 6 false clicks a second and 81 % of
    random clicks; 12: 17 and 87 %; a false click's repair costs music transients.
    Since a waveform's recurring edges are told apart (:func:`_recurs`), 16 finds a
    median of 1.6 false clicks a second (seeds 1 and 2)."""
    return 32.0 * 10 ** (-sensitivity * 0.0602)


def _errors(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per sample, the smaller of the forward and backward prediction errors (0 where a
    full history is missing)."""
    p = len(a) - 1
    fwd = np.convolve(x, a)[:len(x)]  # (scipy's lfilter(a, [1], x), without its import)
    bwd = np.convolve(x[::-1], a)[:len(x)][::-1]
    err = np.minimum(np.abs(fwd), np.abs(bwd))
    err[:p], err[len(x) - p:] = 0.0, 0.0
    return err


def _scale(err: np.ndarray, live: np.ndarray) -> float | None:
    """Robust standard deviation of the prediction error over live samples, or None."""
    if live.sum() < 64:
        return None
    return 1.4826 * float(np.median(err[live])) + 1e-12


def _runs(flags: np.ndarray, join: int) -> list[tuple[int, int]]:
    idx = np.flatnonzero(flags)
    if len(idx) == 0:
        return []
    cuts = np.flatnonzero(np.diff(idx) > join) + 1
    return [(int(r[0]), int(r[-1]) + 1) for r in np.split(idx, cuts)]


def _live(x: np.ndarray) -> np.ndarray:
    return (np.abs(x) > ar.SILENT) & (np.abs(x) < ar.FULL_SCALE)


def _repaired(x: np.ndarray, lo: int, hi: int, order: int, span: int) -> np.ndarray | None:
    """``x[lo:hi]`` re-estimated from ``span`` samples either side: by a model fitted on
    them alone; where they cannot teach one (digital silence, a fade to nothing) or its
    repair would be louder than they are, by a straight line between the click's
    neighbours (never louder than they are); None at the signal's ends."""
    if lo < 1 or hi >= len(x):
        return None
    a0, b1 = max(0, lo - span), min(len(x), hi + span)
    before, after = x[a0:lo], x[hi:b1]
    line = np.linspace(x[lo - 1], x[hi], hi - lo + 2)[1:-1]
    if lo - a0 < order + 1 or b1 - hi < order + 1 or \
            not ar.usable(np.concatenate((before, after)), order):
        return line
    a = ar.fit([before, after], order)
    window = x[a0:b1]
    damaged = np.zeros(len(window), bool)
    damaged[lo - a0:hi - a0] = True
    fixed = ar.interpolate(window, damaged, a)[lo - a0:hi - a0]
    around = max(np.abs(before).max(), np.abs(after).max())
    if not np.all(np.isfinite(fixed)) or np.abs(fixed).max() > around * 10 ** (LOUDER_DB / 20):
        return line
    return fixed


def repair_click(x: np.ndarray, candidates: slice, sample_rate: int, *,
                 threshold: float = 20.0, max_ms: float = 5.0) -> np.ndarray | None:
    """``x`` (one channel) with the click inside ``candidates`` repaired, or None when
    nothing there stands out, or the audio around it cannot teach a model."""
    order = min(order_for(sample_rate), max(4, (len(x) - (candidates.stop - candidates.start))
                                             // 8))
    context = np.concatenate((x[:candidates.start], x[candidates.stop:]))
    if not ar.usable(context, order):
        return None
    a = ar.fit([x[:candidates.start], x[candidates.stop:]], order)
    err = _errors(x, a)
    inside = np.zeros(len(x), bool)
    inside[candidates] = True
    sigma = _scale(err, ~inside & _live(x) & (err > 0))
    if sigma is None:
        return None
    flags = inside & (err > max(threshold * sigma, FLOOR))
    out, changed = x.copy(), False
    span = max(4 * order, round(CONTEXT_SECONDS * sample_rate))
    for lo, hi in _runs(flags, max(1, order // 4)):
        if hi - lo > max_ms / 1000 * sample_rate:
            continue
        lo, hi = max(lo - DILATE, 0), min(hi + DILATE, len(x))
        fixed = _repaired(out, lo, hi, order, span)
        if fixed is not None:
            out[lo:hi], changed = fixed, True
    return out if changed else None


def _in_silence(signal: np.ndarray, b0: int, b1: int, max_len: float, quiet: int,
               ch: int) -> list[Event]:
    """Clicks in digital silence: runs of at most ``max_len`` sound samples starting in
    ``[b0, b1)`` with ``quiet`` silent samples either side are set back to silence
    (there is nothing to learn a model from, and nothing to keep)."""
    lo, hi = max(0, b0 - quiet), min(len(signal), b1 + int(max_len) + quiet)
    found = []
    for r0, r1 in _runs(np.abs(signal[lo:hi]) > ar.SILENT, 1):
        a, b = lo + r0, lo + r1
        if not b0 <= a < b1 or b - a > max_len or a < quiet or b + quiet > len(signal):
            continue
        if np.abs(signal[a - quiet:a]).max() > ar.SILENT or \
                np.abs(signal[b:b + quiet]).max() > ar.SILENT:
            continue
        signal[a:b] = 0.0
        found.append(Event(a, b - a, ch))
    return found


def _recurs(signal: np.ndarray, c0: int, c1: int, sr: int, threshold: float) -> bool:
    """Whether ``[c0, c1)`` is the waveform recurring, not a click: the audio about it
    (``EDGE_SECONDS`` either side) comes back a period away (``PERIOD_SECONDS``, 40-500
    Hz) with a normalised correlation above ``RECUR``, and that period's copy predicts
    the candidate as well as it predicts the audio about it (its error there does not
    stand out by ``threshold`` robust deviations). A square wave's edge or a buzzy
    note's, which a short AR model cannot predict, is the sound; a click on a steady
    tone is not in the tone's previous period."""
    edge = max(2, round(EDGE_SECONDS * sr))
    a, b = c0 - edge, c1 + edge
    if a < 0 or b > len(signal):
        return False
    seg = signal[a:b]
    energy = float(seg @ seg)
    shortest = max(b - a, round(PERIOD_SECONDS[0] * sr))
    longest = round(PERIOD_SECONDS[1] * sr)
    lo, hi = max(0, a - longest), min(len(signal), b + longest)
    windows = np.lib.stride_tricks.sliding_window_view(signal[lo:hi], b - a)
    lags = np.arange(lo, hi - (b - a) + 1) - a
    windows = windows[np.abs(lags) >= shortest]
    if energy <= 0 or len(windows) == 0:
        return False
    dots = windows @ seg
    power = np.einsum("ij,ij->i", windows, windows)
    best = int(np.argmax(dots / (np.sqrt(power * energy) + 1e-30)))
    if dots[best] / (math.sqrt(power[best] * energy) + 1e-30) <= RECUR:
        return False
    error = np.abs(seg - dots[best] / power[best] * windows[best])
    around = np.concatenate([error[:edge], error[-edge:]])
    sigma = 1.4826 * float(np.median(around)) + 1e-12
    return float(error[edge:-edge].max()) <= max(threshold * sigma, FLOOR)


def _merged(events: list[Event]) -> list[Event]:
    """One event per click: what a later pass repaired again, touching an earlier
    repair of the same channel, is the same click."""
    out: list[Event] = []
    for e in sorted(events, key=lambda e: (e.channel, e.start)):
        last = out[-1] if out else None
        if last is not None and last.channel == e.channel and \
                e.start <= last.start + last.length + DILATE:
            end = max(last.start + last.length, e.start + e.length)
            out[-1] = Event(last.start, end - last.start, e.channel)
        else:
            out.append(e)
    return sorted(out, key=lambda e: (e.start, e.channel))


def _block_models(signal: np.ndarray, block: int, order: int) -> np.ndarray:
    """``[blocks, order + 1]``: each block's AR model, learnt from it and half a block
    either side (zeros beyond the signal), all in one batch."""
    count = -(-len(signal) // block)
    padded = np.pad(signal, (block // 2, block * 2))
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * block)[::block][:count]
    models = np.empty((count, order + 1))
    for i in range(0, count, MODEL_BATCH):  # bounded memory on long files
        models[i:i + MODEL_BATCH] = ar.levinson(ar.autocorrelation(
            windows[i:i + MODEL_BATCH], order))
    return models


def run(x: np.ndarray, sample_rate: int, *, sensitivity: float = 5.0, crackle: bool = False,
        progress=None, cancel=None) -> Outcome:
    """Every click of ``x`` ``[channels, n]``: blocks of ``BLOCK_SECONDS`` each get an AR
    model (from the block and its neighbours), clicks are found against the block's own
    error scale and repaired one by one. ``crackle``: dense small clicks (at most 1 ms,
    found 3 dB more readily, a second pass over what the first left)."""
    sr = sample_rate
    order = order_for(sr)
    threshold = threshold_for(sensitivity) / (math.sqrt(2) if crackle else 1.0)
    max_len = (1.0 if crackle else 3.0) / 1000 * sr
    block = 1 << max(8, round(math.log2(BLOCK_SECONDS * sr)))
    span = max(4 * order, round(CONTEXT_SECONDS * sr))
    out = np.array(x, np.float64, copy=True)
    events: list[Event] = []
    passes = 3 if crackle else 2  # each pass learns from what the last one repaired
    total = out.shape[0] * passes * max(1, math.ceil(out.shape[1] / block))
    done = 0
    left_alone = 0
    for _ in range(passes):
        for ch, signal in enumerate(out):
            models = _block_models(signal, block, order)
            for b0 in range(0, len(signal), block):
                step(done / total, progress, cancel)
                done += 1
                lo, hi = max(0, b0 - block // 2), min(len(signal), b0 + block + block // 2)
                window = signal[lo:hi]
                live = _live(window)
                events += _in_silence(signal, b0, min(b0 + block, len(signal)), max_len,
                                      round(SILENCE_SECONDS * sr), ch)
                if live.sum() < 4 * order or not ar.usable(window, order):
                    continue
                a = models[b0 // block]
                err = _errors(window, a)
                sigma = _scale(err, live & (err > 0))
                if sigma is None:
                    continue
                own = slice(b0 - lo, min(b0 + block, len(signal)) - lo)
                flags = np.zeros(len(window), bool)
                flags[own] = err[own] > max(threshold * sigma, FLOOR)
                for r0, r1 in _runs(flags, max(1, order // 4)):
                    if r1 - r0 > max_len:
                        continue
                    c0, c1 = max(lo + r0 - DILATE, 0), min(lo + r1 + DILATE, len(signal))
                    if _recurs(signal, c0, c1, sr, threshold):
                        continue
                    fixed = _repaired(signal, c0, c1, order, span)
                    if fixed is None:
                        left_alone += 1
                        continue
                    signal[c0:c1] = fixed
                    events.append(Event(c0, c1 - c0, ch))
    step(1.0, progress, None)
    events = _merged(events)
    if not events:
        return Outcome(x, "", [])
    lengths = sorted(e.length - 2 * DILATE for e in events)
    summary = (f"{len(events)} click(s) repaired ({max(lengths[0], 1)}-{max(lengths[-1], 1)} "
               f"samples, median {max(lengths[len(lengths) // 2], 1)})")
    if left_alone:
        summary += f"; {left_alone} at the file's ends left alone"
    return Outcome(out, summary, events)
