"""A tone that glides or wobbles, removed along a track the user painted.

The stroke gives the track (times and frequencies, and how far from it the tone
may be); the tone's frequency is re-estimated along it, frame by frame, as the
peak of a short spectrum within that reach (parabolic interpolation), where it
stands ``STANDS_DB`` above the spectrum around it and a neighbouring frame found it
within ``JUMP_HZ`` (noise's strongest peak lands anywhere in the band), along at
least ``PRESENT`` of the stroke. The tone is then demodulated
along the phase of that frequency, low-passed over ``SMOOTH_SECONDS`` (what
sounds beside it changes faster and averages out), held below its running median
over ``LEVEL_SECONDS`` (a tone's level holds; a harmonic crossing it adds to it for
a moment) and subtracted where it was
found, easing in and out over ``RAMP_SECONDS`` (its own fade goes with it).
The demodulation is de-hum's (engine.repair.dehum), with one harmonic. What of
the tone still stands out at its frequency after that (a few per cent, heard in
the pauses) is then brought down to the level of the spectrum around it
(:meth:`Followed.cleaned`).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from engine.repair import dehum

WINDOW_SECONDS = 0.046
HOP_SECONDS = 0.005
STANDS_DB = 10.0
JUMP_HZ = 15.0  # from one frame to the next (5 ms), a tone's frequency moves less than this
PRESENT = 0.5  # and it is found along at least this share of the stroke
SMOOTH_SECONDS = 0.012
LEVEL_SECONDS = 0.5  # a tone's level holds over this; what it is above its median here is not it
RAMP_SECONDS = 0.01
GATE_BINS = 2  # the residual left at the tone's frequency: its bin and this many either side
RING_BINS = 32  # ... stands out above the median of the bins this far either side of it


def _frequencies(x: np.ndarray, sr: int, path_t: np.ndarray, path_f: np.ndarray,
                 reach: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Frame centres (samples), the tone's frequency there, whether it stands out, and
    the power of its peak (0 outside the path)."""
    win = 1 << int(round(math.log2(WINDOW_SECONDS * sr)))
    hop = max(1, round(HOP_SECONDS * sr))
    size = 4 * win
    mono = x.mean(0)
    centres = np.arange(0, len(mono), hop)
    padded = np.pad(mono, (win // 2, win // 2))
    frames = np.lib.stride_tricks.sliding_window_view(padded, win)[centres]
    spectrum = np.abs(np.fft.rfft(frames * np.hanning(win), size)) ** 2 + 1e-300
    hz = np.fft.rfftfreq(size, 1 / sr)
    t = centres / sr
    want = np.interp(t, path_t, path_f)
    width = np.interp(t, path_t, reach)
    inside = (t >= path_t[0]) & (t <= path_t[-1])
    found, power = np.zeros(len(t)), np.zeros(len(t))
    stands = np.zeros(len(t), bool)
    for i in np.flatnonzero(inside):
        band = np.flatnonzero(np.abs(hz - want[i]) <= width[i])
        if len(band) < 3:
            continue
        k = band[np.argmax(spectrum[i, band])]
        if k in (band[0], band[-1]):
            continue  # the band's edge: something stronger outside it, not a tone in it
        a, b, c = np.log(spectrum[i, k - 1:k + 2])
        found[i], power[i] = (k + 0.5 * (a - c) / (a - 2 * b + c)) * sr / size, spectrum[i, k]
        ring = spectrum[i, max(0, k - 8 * 4):k + 8 * 4 + 1]
        stands[i] = 10 * math.log10(spectrum[i, k] / np.median(ring)) >= STANDS_DB
    # a tone goes on: a frame counts when a neighbour found it within JUMP_HZ too (the
    # strongest peak of noise in a band lands anywhere in it, frame after frame)
    near = np.zeros(len(t), bool)
    steady = np.abs(np.diff(found)) <= JUMP_HZ
    near[1:] |= stands[1:] & stands[:-1] & steady
    near[:-1] |= stands[:-1] & stands[1:] & steady
    if near.sum() < PRESENT * inside.sum():
        near[:] = False
    return centres, found, near, power


def standing(x: np.ndarray, sr: int, *, path_t: np.ndarray, path_f: np.ndarray,
             reach: np.ndarray) -> tuple[int, float]:
    """How much of a tone along the path ``x`` holds: the frames (every
    ``HOP_SECONDS``) in which one stands out and goes on (0 where none is found along
    ``PRESENT`` of it), then the power of the strongest peak along the path, summed
    over them (which decides between two removals that leave a tone standing in as
    many frames: in digital silence, what is left of any tone stands out)."""
    _, _, near, power = _frequencies(x, sr, path_t, path_f, reach)
    return int(near.sum()), float(power[near].sum())


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

    def cleaned(self) -> np.ndarray:
        """``subtracted`` with what of the tone still stands ``STANDS_DB`` above the
        spectrum around it at its frequency (``GATE_BINS`` either side) brought down
        to that level, where the subtraction took more than it left (what is louder
        than the tone was, speech's harmonics crossing it, stays): the few per cent a
        followed tone's subtraction leaves are heard in a pause, where nothing else
        is. Only those cells change; the rest keeps its bits."""
        sr, y = self.sample_rate, self.subtracted
        win = 1 << int(round(math.log2(WINDOW_SECONDS * sr)))
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


def _held(amps: np.ndarray, span: int) -> np.ndarray:
    """The tone's amplitudes ``[ch, 1, grid]`` no larger than their running median over
    ``span`` points: a speech harmonic crossing the tone adds to what the demodulation
    finds for a moment, and was subtracted with it (a vowel's harmonic taken out)."""
    level = np.abs(amps)
    cap = ndimage.median_filter(level, size=(1, 1, span), mode="nearest")
    return amps * np.minimum(1.0, cap / np.maximum(level, 1e-300))


def follow(x: np.ndarray, sr: int, *, path_t: np.ndarray, path_f: np.ndarray,
           reach: np.ndarray) -> Followed | None:
    """The tone along the path (seconds from ``x``'s first sample, Hz, and Hz of reach)
    followed and subtracted from ``x`` ``[ch, n]``; None when no tone stands out along it."""
    centres, found, stands, _ = _frequencies(x, sr, path_t, path_f, reach)
    if stands.sum() < 3:
        return None
    on = np.flatnonzero(stands)
    f = np.interp(np.arange(len(found)), on, found[on])
    coarse = max(1, round(dehum.COARSE_SECONDS * sr))
    grid = (np.arange(x.shape[-1] // coarse) + 0.5) * coarse
    f0 = float(np.median(found[on]))
    carrier = dehum._Carrier(f0, np.interp(grid, centres, f) - f0, coarse, sr)
    amps = dehum._amplitudes(x, carrier, [1], coarse, None, None)
    amps = dehum._smooth_all(amps, SMOOTH_SECONDS * sr / coarse)
    amps = _held(amps, round(LEVEL_SECONDS * sr / coarse) | 1)
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
                    lambda at: np.interp(at, centres, f))
