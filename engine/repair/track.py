"""A tone that glides or wobbles, removed along a track the user painted.

The stroke gives the track (times and frequencies, and how far from it the tone
may be); the tone's frequency is re-estimated along it, frame by frame, on the
ridge through short spectra that stands out most over the whole stroke while
moving at most ``JUMP_HZ`` a frame (Viterbi; a louder harmonic of speech crossing
the tone, which the strongest peak of each frame would follow, is passed over),
at the peak of that ridge (parabolic interpolation), where it stands
``STANDS_DB`` above the spectrum around it and a neighbouring frame found it
within ``JUMP_HZ`` (noise's strongest peak lands anywhere in the band), along at
least ``PRESENT`` of the stroke. The tone is then demodulated along the phase of
that frequency, corrected by the phase slope of what that demodulation found (a
vibrato's peak lags within a short spectrum), low-passed over ``SMOOTH_SECONDS``
(what sounds beside it changes faster and averages out), held below its running
median over ``LEVEL_SECONDS`` (a tone's level holds; a harmonic crossing it adds to
it for a moment) and subtracted where it was found, easing in and out over
``RAMP_SECONDS`` (its own fade goes with it). The demodulation is de-hum's
(engine.repair.dehum), with one harmonic. What of the tone still stands out at its
frequency after that (a few per cent, heard in the pauses) is then brought down to
the level of the spectrum around it (:meth:`Followed.cleaned`).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from engine.repair import dehum
from engine.repair.carrier import Carrier, amplitudes, smooth
from engine.repair.carrier import drift as drift_of

WINDOW_SECONDS = 0.046
HOP_SECONDS = 0.005
STANDS_DB = 10.0
JUMP_HZ = 15.0  # from one frame to the next (5 ms), a tone's frequency moves less than this
MOVE_DB = 0.5  # what the followed ridge pays a bin it moves from frame to frame
PADDED = 4  # the spectra the tone is read from: the window's transform padded this many times
LOBE_BINS = 2 * PADDED  # a Hann window's main lobe: 2 bins either side
SIDE_LOBE_DB = 25.0  # a Hann window's side lobes are 31 dB or more under its main lobe
OFF_PATH = -1e9  # its score outside the stroke's reach (finite: a reach that jumps is crossed)
PRESENT = 0.5  # and it is found along at least this share of the stroke
SMOOTH_SECONDS = 0.012
LEVEL_SECONDS = 0.5  # a tone's level holds over this; what it is above its median here is not it
RAMP_SECONDS = 0.01
GATE_BINS = 2  # the residual left at the tone's frequency: its bin and this many either side
RING_BINS = 32  # ... stands out above the median of the bins this far either side of it
SILENT_POWER = 1e-30  # a bin's power is floored here (-300 dB) before its log


def _window(sr: int) -> int:
    """Samples of the window spectra are read with: a power of 2 near ``WINDOW_SECONDS``."""
    return 1 << int(round(math.log2(WINDOW_SECONDS * sr)))


def _power(x: np.ndarray, sr: int, centres: np.ndarray) -> tuple[np.ndarray, int]:
    """The power spectra ``[frames, bins]`` of ``x`` ``[ch, n]``'s mono mix about the
    given samples (a Hann window of :func:`_window`, padded ``PADDED`` times), and the size
    of their transform."""
    win = _window(sr)
    padded = np.pad(x.mean(0), (win // 2, win // 2))
    frames = np.lib.stride_tricks.sliding_window_view(padded, win)[centres]
    size = PADDED * win
    return np.abs(np.fft.rfft(frames * np.hanning(win), size)) ** 2 + 1e-300, size


def _frequencies(x: np.ndarray, sr: int, path_t: np.ndarray, path_f: np.ndarray,
                 reach: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frame centres (samples), the tone's frequency there (0 outside the path), and
    whether it stands out and goes on."""
    centres = np.arange(0, x.shape[-1], max(1, round(HOP_SECONDS * sr)))
    spectrum, size = _power(x, sr, centres)
    spectrum = np.maximum(spectrum, SILENT_POWER)  # digital silence: no log of 0
    hz = np.fft.rfftfreq(size, 1 / sr)
    t = centres / sr
    want = np.interp(t, path_t, path_f)
    width = np.interp(t, path_t, reach)
    inside = (t >= path_t[0]) & (t <= path_t[-1])
    found = np.zeros(len(t))
    stands = np.zeros(len(t), bool)
    rows = np.flatnonzero(inside)
    if len(rows):
        lo = np.maximum(np.ceil((want[rows] - width[rows]) * size / sr).astype(int), 1)
        hi = np.minimum(np.floor((want[rows] + width[rows]) * size / sr).astype(int),
                        len(hz) - 2)
        k0, k1 = max(0, lo.min() - RING_BINS), min(len(hz), hi.max() + RING_BINS + 1)
        db = 10 * np.log10(spectrum[rows, k0:k1])
        cols = np.arange(k0, k1)
        ring = (cols >= lo[:, None] - RING_BINS) & (cols <= hi[:, None] + RING_BINS)
        above = db - np.nanmedian(np.where(ring, db, np.nan), axis=1, keepdims=True)
        allowed = (cols >= lo[:, None]) & (cols <= hi[:, None]) & (hi - lo >= 2)[:, None]
        # the ridge's score: how far a peak stands out, up to STANDS_DB (a louder one
        # is no more the tone); a window's side lobes are peaks too, but far under the
        # strongest peak around them
        strongest = np.max(np.where(ring, db, -np.inf), axis=1, keepdims=True)
        peak = (db >= np.roll(db, 1, axis=1)) & (db >= np.roll(db, -1, axis=1)) & \
            (db >= strongest - SIDE_LOBE_DB)
        score = np.where(peak, np.clip(above, 0.0, STANDS_DB), 0.0)
        path = _ridge(np.where(allowed, score, OFF_PATH),
                      max(1, math.ceil(JUMP_HZ * size / sr)))
        for j, i in enumerate(rows):
            k = _climb(spectrum[i], path[j] + k0)
            if not allowed[j, path[j]] or k <= lo[j] or k >= hi[j]:
                continue  # the band's edge: something stronger outside it, not a tone in it
            a, b, c = np.log(spectrum[i, k - 1:k + 2])
            bend = a - 2 * b + c  # 0 on a flat top (silence): the bin itself
            found[i] = (k + (0.5 * (a - c) / bend if bend < 0 else 0.0)) * sr / size
            stands[i] = above[j, k - k0] >= STANDS_DB
    # a tone goes on: a frame counts when a neighbour found it within JUMP_HZ too (the
    # strongest peak of noise in a band lands anywhere in it, frame after frame)
    near = np.zeros(len(t), bool)
    steady = np.abs(np.diff(found)) <= JUMP_HZ
    near[1:] |= stands[1:] & stands[:-1] & steady
    near[:-1] |= stands[:-1] & stands[1:] & steady
    if near.sum() < PRESENT * inside.sum():
        near[:] = False
    return centres, found, near


def _ridge(score: np.ndarray, jump: int) -> np.ndarray:
    """The column of ``score`` ``[frames, columns]`` on the path of greatest total
    score that moves at most ``jump`` columns from one frame to the next, paying
    ``MOVE_DB`` a column moved (Viterbi): a tone's ridge goes on where a louder
    harmonic crosses it, which the strongest peak of each frame alone would follow."""
    frames, cols = score.shape
    back = np.zeros((frames, cols), np.int8)  # the shift each column was reached by
    shifts = np.arange(-jump, jump + 1)
    cost = MOVE_DB * np.abs(shifts)[:, None]
    padded = np.full(cols + 2 * jump, OFF_PATH)  # the best totals so far, padded
    padded[jump:jump + cols] = score[0]
    reached = np.lib.stride_tricks.sliding_window_view(padded, cols)  # [shift, column] views
    every = np.arange(cols)
    for i in range(1, frames):
        moved = reached - cost
        best = np.argmax(moved, axis=0)
        back[i] = best
        padded[jump:jump + cols] = moved[best, every] + score[i]
    total = padded[jump:jump + cols]
    path = np.zeros(frames, int)
    path[-1] = int(np.argmax(total))
    for i in range(frames - 1, 0, -1):
        path[i - 1] = path[i] + shifts[back[i, path[i]]]
    return path


def _climb(power: np.ndarray, k: int) -> int:
    """The spectral peak whose slope ``k`` is on (uphill from ``k``)."""
    while 0 < k < len(power) - 1:
        step = 1 if power[k + 1] > power[k] else -1 if power[k - 1] > power[k] else 0
        if step == 0:
            return k
        k += step
    return k


@dataclass
class Followed:
    """A tone followed along a path and subtracted: ``subtracted`` is the audio without
    it; :meth:`cleaned` also takes what of it still stands out."""

    audio: np.ndarray  # [ch, n], as it was
    subtracted: np.ndarray
    sample_rate: int
    first: int  # the samples it was found from and to
    last: int
    hz: Callable[[np.ndarray], np.ndarray]  # its frequency at given samples
    found_at: np.ndarray  # the samples about which it stood out

    def left_in(self, y: np.ndarray) -> tuple[int, float]:
        """How much of the tone a removal ``y`` ``[ch, n]`` left: the frames (of those
        it stood out in) where a peak within ``LOBE_BINS`` of its frequency stands
        ``STANDS_DB`` above the spectrum around it (none unless in ``PRESENT`` of them:
        a tone goes on; what else sounds near it comes and goes), then those peaks'
        power summed (which decides between two removals that leave it in as many
        frames: in digital silence, whatever is left of a tone stands out)."""
        spectrum, size = _power(y, self.sample_rate, self.found_at)
        at = np.rint(self.hz(self.found_at) * size / self.sample_rate).astype(int)
        rows = np.arange(len(at))[:, None]
        bins = spectrum.shape[-1] - 1
        peak = spectrum[rows, np.clip(at[:, None] + np.arange(-LOBE_BINS, LOBE_BINS + 1),
                                      0, bins)].max(-1)
        ring = np.median(spectrum[rows, np.clip(
            at[:, None] + np.arange(-RING_BINS, RING_BINS + 1), 0, bins)], axis=-1)
        stands = peak >= ring * 10 ** (STANDS_DB / 10)
        if stands.sum() < PRESENT * len(stands):
            return 0, 0.0
        return int(stands.sum()), float(peak[stands].sum())

    def cleaned(self) -> np.ndarray:
        """``subtracted`` with what of the tone still stands ``STANDS_DB`` above the
        spectrum around it at its frequency (``GATE_BINS`` either side) brought down
        to that level, where the subtraction took more than it left (what is louder
        than the tone was, speech's harmonics crossing it, stays): the few per cent a
        followed tone's subtraction leaves are heard in a pause, where nothing else
        is. Only those cells change; the rest keeps its bits."""
        sr, y = self.sample_rate, self.subtracted
        win = _window(sr)
        hop, bins = win // 4, win // 2 + 1
        taper = np.sqrt(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win) / win))
        mids = np.arange(self.first - self.first % hop, self.last + 1, hop)  # frame centres

        def spectra(a):
            frames = np.lib.stride_tricks.sliding_window_view(
                np.pad(a, ((0, 0), (win // 2, win // 2))), win, axis=-1)[:, mids]
            return np.fft.rfft(frames * taper, axis=-1)
        z, taken = spectra(y), spectra(self.audio - y)
        offsets = np.arange(-RING_BINS, RING_BINS + 1)
        at = np.clip(np.rint(self.hz(mids) * win / sr).astype(int)[:, None] + offsets, 0,
                     bins - 1)
        rows = np.arange(len(mids))[:, None]
        ring = np.abs(z[:, rows, at])
        close = np.abs(offsets) <= GATE_BINS
        level = np.median(ring[..., ~close], axis=-1, keepdims=True)
        cells = ring[..., close]
        residual = (cells > level * 10 ** (STANDS_DB / 20)) & \
            (cells < np.abs(taken[:, rows, at[:, close]]))
        scale = np.where(residual, level / np.maximum(cells, 1e-300), 1.0)
        change = np.zeros_like(z)
        change[:, rows, at[:, close]] = z[:, rows, at[:, close]] * (scale - 1)
        parts = np.fft.irfft(change, win, axis=-1) * taper / 2  # sqrt-Hann twice, hop 1/4: 2
        out = np.pad(y, ((0, 0), (win // 2, win // 2)))
        for j, m in enumerate(mids):
            out[:, m:m + win] += parts[:, j]
        return out[:, win // 2:win // 2 + y.shape[-1]]


def _held(amps: np.ndarray, span: int, on: np.ndarray) -> np.ndarray:
    """The tone's amplitudes ``[ch, 1, grid]`` no larger than their running median over
    ``span`` points of those where it is ``on``: a speech harmonic crossing the tone
    adds to what the demodulation finds for a moment, and was subtracted with it (a
    vowel's harmonic taken out). Only where the tone sounds, over at most that: a bleep
    shorter than the span, its median taken with the silence about it and its own
    ends, was held down to a third."""
    level = np.abs(amps)
    cap = level.copy()
    span = max(1, min(span, int(on.sum()) - 1 | 1))  # no longer than where it sounds
    cap[..., on] = ndimage.median_filter(level[..., on], size=(1, 1, span), mode="mirror")
    return amps * np.minimum(1.0, cap / np.maximum(level, 1e-300))


def follow(x: np.ndarray, sr: int, *, path_t: np.ndarray, path_f: np.ndarray,
           reach: np.ndarray) -> Followed | None:
    """The tone along the path (seconds from ``x``'s first sample, Hz, and Hz of reach)
    followed and subtracted from ``x`` ``[ch, n]``; None when no tone stands out along it."""
    centres, found, stands = _frequencies(x, sr, path_t, path_f, reach)
    if stands.sum() < 3:
        return None
    on = np.flatnonzero(stands)
    f = np.interp(np.arange(len(found)), on, found[on])
    coarse = max(1, round(dehum.COARSE_SECONDS * sr))
    grid = (np.arange(x.shape[-1] // coarse) + 0.5) * coarse
    f0 = float(np.median(found[on]))
    drift = np.interp(grid, centres, f) - f0
    amps = amplitudes(x, Carrier(f0, drift, coarse, sr), [1], coarse, None, None)
    # what the track is off by, read from the phase slope of what it demodulated: at
    # most a bin of the spectra it was read from (a vibrato's peak lags within them)
    off = drift_of(amps, [1], coarse, sr, 2 * SMOOTH_SECONDS)
    spacing = sr / (PADDED * _window(sr))
    carrier = Carrier(f0, drift + np.clip(off, -spacing, spacing), coarse, sr)
    amps = amplitudes(x, carrier, [1], coarse, None, None)
    amps = smooth(amps, SMOOTH_SECONDS * sr / coarse)
    amps = _held(amps, round(LEVEL_SECONDS * sr / coarse) | 1,
                 np.interp(grid, centres, stands.astype(float)) > 0.5)
    presence = np.interp(np.arange(x.shape[-1]), centres, stands.astype(float))
    ramp = max(1, round(RAMP_SECONDS * sr))
    presence = np.convolve(presence > 0.5, np.ones(ramp) / ramp, mode="same")
    phase = carrier.phase(0, x.shape[-1])
    t = np.arange(x.shape[-1])
    out = x.copy()
    for c in range(x.shape[0]):
        a = np.interp(t, grid, amps[c, 0].real) + 1j * np.interp(t, grid, amps[c, 0].imag)
        out[c] -= presence * 2 * (a * np.exp(1j * phase)).real
    return Followed(x, out, sr, int(centres[on[0]]), int(centres[on[-1]]),
                    lambda at: np.interp(at, centres, f), centres[on])
