"""A tone that glides or wobbles, removed along a track the user painted.

The stroke gives the track (times and frequencies, and how far from it the tone
may be); the tone's frequency is re-estimated along it, frame by frame, as the
peak of a short spectrum within that reach (parabolic interpolation), where it
stands ``STANDS_DB`` above the spectrum around it and a neighbouring frame found it
within ``JUMP_HZ`` (noise's strongest peak lands anywhere in the band), along at
least ``PRESENT`` of the stroke. The tone is then demodulated
along the phase of that frequency, low-passed over ``SMOOTH_SECONDS`` (what
sounds beside it changes faster and averages out) and subtracted where it was
found, easing in and out over ``RAMP_SECONDS`` (its own fade goes with it).
The demodulation is de-hum's (engine.repair.dehum), with one harmonic.
"""

import math

import numpy as np

from engine.repair import dehum

WINDOW_SECONDS = 0.046
HOP_SECONDS = 0.005
STANDS_DB = 10.0
JUMP_HZ = 15.0  # from one frame to the next (5 ms), a tone's frequency moves less than this
PRESENT = 0.5  # and it is found along at least this share of the stroke
SMOOTH_SECONDS = 0.012
RAMP_SECONDS = 0.01


def _frequencies(x: np.ndarray, sr: int, path_t: np.ndarray, path_f: np.ndarray,
                 reach: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frame centres (samples), the tone's frequency there and whether it stands out."""
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
    found = np.zeros(len(t))
    stands = np.zeros(len(t), bool)
    for i in np.flatnonzero(inside):
        band = np.flatnonzero(np.abs(hz - want[i]) <= width[i])
        if len(band) < 3:
            continue
        k = band[np.argmax(spectrum[i, band])]
        if k in (band[0], band[-1]):
            continue  # the band's edge: something stronger outside it, not a tone in it
        a, b, c = np.log(spectrum[i, k - 1:k + 2])
        found[i] = (k + 0.5 * (a - c) / (a - 2 * b + c)) * sr / size
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
    return centres, found, near


def standing(x: np.ndarray, sr: int, *, path_t: np.ndarray, path_f: np.ndarray,
             reach: np.ndarray) -> int:
    """The frames of ``x`` (every ``HOP_SECONDS``) in which a tone along the path stands
    out and goes on: 0 where none is found along ``PRESENT`` of it."""
    return int(_frequencies(x, sr, path_t, path_f, reach)[2].sum())


def remove(x: np.ndarray, sr: int, *, path_t: np.ndarray, path_f: np.ndarray,
           reach: np.ndarray) -> np.ndarray | None:
    """``x`` ``[ch, n]`` with the tone along the path (seconds from ``x``'s first sample,
    Hz, and Hz of reach) removed; None when no tone stands out along it."""
    centres, found, stands = _frequencies(x, sr, path_t, path_f, reach)
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
    presence = np.interp(np.arange(x.shape[-1]), centres, stands.astype(float))
    ramp = max(1, round(RAMP_SECONDS * sr))
    presence = np.convolve(presence > 0.5, np.ones(ramp) / ramp, mode="same")
    phase = carrier.phase(0, x.shape[-1])
    t = np.arange(x.shape[-1])
    out = x.copy()
    for c in range(x.shape[0]):
        a = np.interp(t, grid, amps[c, 0].real) + 1j * np.interp(t, grid, amps[c, 0].imag)
        out[c] -= presence * 2 * (a * np.exp(1j * phase)).real
    return out
