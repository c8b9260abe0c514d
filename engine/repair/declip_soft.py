"""Soft clipping: a saturating curve (tanh-like) found in the audio's spectra and undone.

A memoryless curve ``y = c tanh(x / c)`` bends each loud waveform, and every sound
through it grows harmonics and intermodulation that fill its spectrum; the curve's
inverse gathers them back. For each drive ``d`` of ``DRIVES`` (how deep the peak went
into the curve: it reached ``tanh(d)`` of the ceiling) the audio is mapped through
the inverse, ``u -> atanh(tanh(d) u) / tanh(d)`` (``u`` a sample over the peak), and
the spectral flatness of its loudest frames measured (the mean over frames of each
one's log geometric over log arithmetic mean power, so a frame's level does not
count): the drive that leaves them least flat is the curve's. Saturation is found
when that drive lies inside the range tried (a sparse noise such as a shutter's grows
ever peakier the further it is expanded, with no turn) and its frames are ``FOUND``
less flat than the audio's own. A clean take is least flat as it is; a compressor or a
limiter rides the gain rather than bending the waveform, and undoing a curve there
makes its frames flatter, not less.
"""

from dataclasses import dataclass

import numpy as np

DRIVES = np.round(np.arange(0.0, 6.01, 0.2), 1)  # 0: no curve; 6: the peak 1e-5 under the ceiling
FRAME_SECONDS = 0.046  # to the nearest power of two in samples
LOUDEST = 0.25  # the share of frames measured, the loudest (saturation bends loud ones)
MAX_FRAMES = 300  # about 14 s: enough to tell a curve, and quick to try many on
FOUND = 0.1  # how much less flat (natural log) the loudest frames become: saturation.
# Measured on 16 real takes each: tanh-saturated (drive 1-5) 0.19-3.2, clean 0, a
# limiter 0, an RMS compressor (4:1, 10 ms attack) at most 0.034


ROUNDS = 2  # rounds of fitting each polarity's drive with the other's held


@dataclass
class Saturation:
    """The curve found: per polarity (positive, negative) the ``drives`` (0: none) and
    the audio's ``peaks``; ``gain``: how much less flat its inverse left the loudest
    frames."""

    drives: tuple[float, float]
    peaks: tuple[float, float]
    gain: float

    @property
    def found(self) -> bool:
        return 0 < max(self.drives) and max(self.drives) < DRIVES[-1] and self.gain >= FOUND

    def note(self) -> str:
        """What was seen, when nothing was found."""
        seen = "no clipped runs and no saturating curve: "
        if max(self.drives) == 0:
            return seen + "the loudest frames are least flat as they are"
        if max(self.drives) >= DRIVES[-1]:
            return seen + ("the loudest frames grow ever less flat the further they are "
                           "expanded, with no curve that fits")
        return seen + (f"undoing the best one (drive {max(self.drives):.1f}) left the loudest "
                       f"frames {self.gain:.3f} less flat, under the {FOUND} that tells "
                       "saturation")


def find(x: np.ndarray, sample_rate: int) -> Saturation:
    """The saturating curve ``x`` (``[channels, n]``) went through, judged on its loudest
    frames: one drive for both polarities, then each polarity's in turn with the
    other's held (a curve bends one polarity more than the other when its input sits
    off its centre)."""
    peaks = (max(float(np.max(x, initial=0.0)), 1e-300), max(-float(np.min(x, initial=0.0)),
                                                              1e-300))
    frames = _loudest_frames(x, sample_rate)
    if len(frames) == 0:
        return Saturation((0.0, 0.0), peaks, 0.0)

    def flatness(drives):
        return _flatness(inverse(frames, drives=drives, peaks=peaks))

    plain = flatness((0.0, 0.0))
    best = min(((flatness((d, d)), (d, d)) for d in DRIVES), key=lambda t: t[0])
    for _ in range(ROUNDS):
        for side in (0, 1):
            tried = [tuple(d if i == side else best[1][i] for i in (0, 1)) for d in DRIVES]
            best = min(((flatness(drives), drives) for drives in tried), key=lambda t: t[0])
    return Saturation(tuple(float(d) for d in best[1]), peaks, plain - best[0])


def inverse(x: np.ndarray, *, drives: tuple[float, float],
            peaks: tuple[float, float]) -> np.ndarray:
    """``x`` through the inverse of the tanh curve each polarity's peak (``peaks``) went
    ``drives`` into: unity gain for small samples, a peak at ``peak atanh(tanh(d)) /
    tanh(d)``."""
    out = np.empty_like(x)
    for sign, drive, peak in ((1.0, drives[0], peaks[0]), (-1.0, drives[1], peaks[1])):
        side = sign * x >= 0 if sign > 0 else x < 0
        u = sign * x[side] / peak
        if drive > 0:
            rho = np.tanh(drive)
            u = np.arctanh(np.clip(rho * u, -rho, rho)) / rho
        out[side] = sign * peak * u
    return out


def restore(x: np.ndarray, found: Saturation, *, headroom: float) -> tuple[np.ndarray, float]:
    """``x`` through the inverse of ``found``'s curve, and the gain of its small samples:
    1, or less where the peaks would otherwise rise more than ``headroom`` times (every
    sample then rises at most that much, the whole region is lower)."""
    rho = np.tanh(np.array(found.drives))
    expansion = float(np.max(np.where(rho > 0, np.arctanh(rho) / np.maximum(rho, 1e-300), 1.0)))
    gain = min(1.0, headroom / expansion)
    return gain * inverse(x, drives=found.drives, peaks=found.peaks), gain


def _loudest_frames(x: np.ndarray, sample_rate: int) -> np.ndarray:
    """``[frames, w]``: the loudest ``LOUDEST`` of the channels' frames (at most
    ``MAX_FRAMES``), in time order."""
    w = 1 << int(round(np.log2(FRAME_SECONDS * sample_rate)))
    count = x.shape[-1] // w
    frames = x[:, :count * w].reshape(-1, w)
    energy = np.einsum("ij,ij->i", frames, frames)
    keep = min(MAX_FRAMES, int(np.ceil(LOUDEST * len(frames))))
    loud = np.sort(np.argsort(energy)[len(frames) - keep:])
    return frames[loud[energy[loud] > 0]]


def _flatness(frames: np.ndarray) -> float:
    """The mean over ``frames`` of each one's spectral flatness (log of its geometric
    over its arithmetic mean power, Hann window; 100 dB under its loudest bin is the
    floor)."""
    power = np.abs(np.fft.rfft(frames * np.hanning(frames.shape[1]), axis=1)) ** 2
    power += 1e-10 * power.max(axis=1, keepdims=True) + 1e-300
    return float(np.mean(np.mean(np.log(power), axis=1) - np.log(np.mean(power, axis=1))))
