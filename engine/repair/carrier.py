"""A tone followed along its drifting phase: the carrier (``exp(i phase)`` of a
fundamental whose drift is known at coarse cells), its harmonics demodulated to
amplitudes per coarse cell, the drift read back from their phases, and the amplitudes
low-passed. De-hum (:mod:`engine.repair.dehum`) follows a hum's harmonics with it and
the tone follower (:mod:`engine.repair.track`) a whistle.
"""

import math

import numpy as np
from scipy.signal import oaconvolve

from engine.progress import step

BLOCK = 1 << 20  # samples demodulated at a time: memory stays bounded on long files


def coarse_means(z: np.ndarray, m: int) -> np.ndarray:
    n = len(z) // m * m
    return z[:n].reshape(-1, m).mean(1)


def smooth(a: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian smoothing of coarse series ``[..., frames]`` (real or complex) along
    their last axis (``sigma`` in its samples), edges renormalised; by FFT (the kernel
    is hundreds of frames long)."""
    n = a.shape[-1]
    half = min(int(3 * sigma) + 1, (n - 1) // 2)  # never longer than the series
    if half < 1:
        return a.copy()
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) / sigma) ** 2)
    num = oaconvolve(a, kernel.reshape((1,) * (a.ndim - 1) + (-1,)), mode="same", axes=-1)
    den = np.convolve(np.ones(n), kernel, mode="same")
    return num / den


class Carrier:
    """``exp(i phase(n))`` of the tracked fundamental, block by block. The phase is the
    integral of the drift (Hz at the coarse cells' centres) drawn as straight lines
    between them: a phase without corners (a frequency held per cell jumped at each
    cell's edge, which a quick vibrato's track turned into sidebands every
    ``sr / coarse`` Hz, 37 dB under the tone)."""

    def __init__(self, f0: float, drift: np.ndarray | None, coarse: int, sr: int):
        self.f0, self.drift, self.coarse, self.sr = f0, drift, coarse, sr
        if drift is not None:  # the integral at each centre, and each line's slope
            d = self.drift = np.asarray(drift, np.float64)
            self._at_centres = d[0] * coarse / 2 + np.concatenate(
                ([0.0], np.cumsum((d[1:] + d[:-1]) / 2 * coarse)))
            self._slopes = np.append(np.diff(d), 0.0) / coarse

    def phase(self, n0: int, n1: int) -> np.ndarray:
        n = np.arange(n0, n1, dtype=np.float64)
        base = 2 * math.pi * self.f0 / self.sr * n
        if self.drift is None:
            return base
        d, w = self.drift, self.coarse
        k = np.clip(np.floor(n / w - 0.5).astype(np.int64), 0, len(d) - 1)  # centre before n
        u = n - (k + 0.5) * w
        slope = np.where(u < 0, 0.0, self._slopes[k])  # before the first centre: level
        drifted = self._at_centres[k] + d[k] * u + slope * u * u / 2
        return base + drifted * 2 * math.pi / self.sr


def harmonic_carriers(phase: np.ndarray, harmonics: list[int]):
    """``exp(i k phase)`` for each k of ``harmonics`` (ascending), by multiplication."""
    unit = np.exp(1j * np.remainder(phase, 2 * math.pi).astype(np.float32))  # complex64
    zk, k_prev = np.ones_like(unit), 0
    for k in harmonics:
        for _ in range(k - k_prev):
            zk = zk * unit
        k_prev = k
        yield zk


def amplitudes(x: np.ndarray, carrier: Carrier, harmonics: list[int], coarse: int,
                progress, cancel) -> np.ndarray:
    """``[ch, harmonics, coarse frames]`` demodulated means of ``x`` per harmonic."""
    ch, n = x.shape
    frames = n // coarse
    out = np.zeros((ch, len(harmonics), frames), complex)
    block = BLOCK // coarse * coarse
    for b0 in range(0, frames * coarse, block):
        step(b0 / n, progress, cancel)
        b1 = min(frames * coarse, b0 + block)
        for i, zk in enumerate(harmonic_carriers(-carrier.phase(b0, b1), harmonics)):
            for c in range(ch):
                out[c, i, b0 // coarse:b1 // coarse] = coarse_means(x[c, b0:b1] * zk, coarse)
    return out


def drift(amps: np.ndarray, harmonics: list[int], coarse: int, sr: int,
           seconds: float) -> np.ndarray:
    """Hz the fundamental is off its nominal value, per coarse frame: the phase slope of
    each harmonic's amplitude over its number, weighted by strength, smoothed."""
    z = amps.sum(0)  # channels together
    sigma = seconds * sr / coarse / 2
    smoothed = smooth(z, sigma / 4)
    rate = sr / coarse
    slope = np.angle(smoothed[:, 1:] * smoothed[:, :-1].conj()) * rate / (2 * math.pi)  # Hz
    k = np.array(harmonics)[:, None]
    weight = (k * np.abs(smoothed[:, 1:])) ** 2
    hz = (slope / k * weight).sum(0) / (weight.sum(0) + 1e-300)
    return smooth(np.concatenate((hz[:1], hz)), sigma)


def quiet_weighted(amps: np.ndarray, sigma: float, short: float) -> np.ndarray:
    """``amps`` ``[ch, harmonics, frames]`` low-passed (``sigma`` frames), each frame
    weighted by the inverse of its power (channels together, smoothed over ``short``
    frames): a steady hum's amplitude read where little else sounds at its frequency,
    so that a voice over it leaks less into what is taken."""
    power = smooth((np.abs(amps) ** 2).sum(0), short)
    weight = 1 / (power + 1e-12 * power.max(axis=-1, keepdims=True) + 1e-300)
    return smooth(amps * weight, sigma) / smooth(weight, sigma)
