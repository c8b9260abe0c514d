"""De-noise: reduce broadband hiss and steady tonal noise by at most ``amount_db``.

The noise power per frequency comes from a profile (samples of noise only, the
selection the user marked) or is learnt from the quietest parts of the audio: a
low quantile over time of the power smoothed over ~0.1 s (what a bin holds when
nothing but noise is in it, which needs no pauses across the whole band at once);
in the adaptive mode the same quantile over 4 s stretches every 2 s, interpolated
between them, so the estimate follows noise that changes. The quantile is turned
into a mean by a bias factor measured once on white noise through the same
analysis; a learnt peak above the spectrum's envelope counts as noise only if it
is steady (a hum, a whistle), not a sustained note of the programme.

Each STFT cell (sqrt-Hann, ~40 ms, hop 1/4) gets the MMSE log-spectral amplitude
gain (Ephraim & Malah 1985) of its decision-directed a priori SNR (alpha 0.95,
which keeps the residual from turning into musical noise; the larger of the
forward and the backward recursion, so onsets keep no lag), floored at
``-amount_db`` and smoothed across frequency. The frames lie on one grid over the
whole input, processed in blocks with the recursion carried across: the result
is the same in one block or many. Digital silence stays exactly zero, and no
10 ms of output is let above the input's peak around it.
"""

import functools

import numpy as np
from scipy import fft, ndimage, special

from engine.progress import step
from engine.repair import Outcome

FRAME_S = 0.04  # STFT frame, rounded to a power of two in samples
ALPHA = 0.95  # decision-directed weight of the previous frame's estimate
XI_MIN = 10 ** (-25 / 10)  # a priori SNR floor of the recursion
SMOOTH_S = 0.12  # the learnt estimate smooths the power over this long
QUANTILE = 0.05  # the stationary estimate: this quantile of the smoothed power
TRACK_S = 4.0  # the adaptive estimate: the quantile over this long, every half of it
NOISE_FLOOR = 1e-14  # noise power below this (-140 dB) is no noise
SILENCE_S = 0.001  # this long of exact zeros, at least 8 samples, is digital silence
PEAK_HZ = 200.0  # the learnt profile's envelope: a median over this many Hz
PEAK = 2.0  # a learnt bin this far above the envelope is a peak, and
STEADY = 1.5  # noise only if its mean power is within this factor of its low quantile
BLOCK_FRAMES = 2048  # frames per processing block
MARGIN_FRAMES = 64  # frames the backward recursion runs past its block
PEAK_S = 0.01  # the level check's window
HEADROOM_DB = 0.5  # the output's peak may exceed the input's by this (the contract: 1 dB)


def run(x: np.ndarray, sample_rate: int, *, amount_db: float = 12.0,
        profile: np.ndarray | None = None, adaptive: bool = False,
        progress=None, cancel=None) -> Outcome:
    """De-noise ``x`` (float64 ``[channels, n]``); see the module's docstring."""
    x = np.asarray(x, dtype=np.float64)
    if amount_db <= 0 or x.shape[1] == 0:
        return Outcome(samples=x)
    n_fft = 1 << int(round(np.log2(FRAME_S * sample_rate)))
    silent = _digital_silence(x, max(8, int(SILENCE_S * sample_rate)))
    if silent.all():
        return Outcome(samples=x)
    if profile is not None:
        noise, source = _profile_power(np.asarray(profile, np.float64), x.shape[0], n_fft)
        noise, centers = np.broadcast_to(noise[:, None, :], (x.shape[0], 1, noise.shape[1])), None
    else:
        noise, centers, source = _learnt_power(x, silent, n_fft, sample_rate, adaptive)
    noise = np.where(noise < NOISE_FLOOR, 0.0, noise)
    if not noise.any():
        return Outcome(samples=x)
    y, reduced_db = _apply_gains(x, noise, centers, n_fft, 10 ** (-amount_db / 20),
                                 progress, cancel)
    y[silent] = 0.0
    y = _keep_below_input(x, y, max(1, int(PEAK_S * sample_rate)))
    if reduced_db < 0.1 or not np.all(np.isfinite(y)):
        return Outcome(samples=x)
    return Outcome(samples=y, summary=f"noise reduced by {reduced_db:.1f} dB ({source})")


def _digital_silence(x: np.ndarray, shortest: int) -> np.ndarray:
    """True where a sample lies in a run of at least ``shortest`` exact zeros."""
    silent = np.zeros(x.shape, bool)
    for c, row in enumerate(x == 0.0):
        edges = np.flatnonzero(np.diff(np.concatenate([[False], row, [False]]).view(np.int8)))
        for a, b in edges.reshape(-1, 2):
            if b - a >= shortest:
                silent[c, a:b] = True
    return silent


def _window(n_fft: int) -> np.ndarray:
    return np.sqrt(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft))


def _frames(x: np.ndarray, first: int, count: int, hop: int, n_fft: int) -> np.ndarray:
    """Frames ``first .. first + count`` of the grid whose frame f starts at sample
    ``f * hop - (n_fft - hop)``, zero outside ``x``: ``[channels, count, n_fft]``."""
    start = first * hop - (n_fft - hop)
    length = (count - 1) * hop + n_fft
    seg = np.zeros((x.shape[0], length), np.float32)
    a, b = max(start, 0), min(start + length, x.shape[1])
    if b > a:
        seg[:, a - start:b - start] = x[:, a:b]
    return np.lib.stride_tricks.sliding_window_view(seg, n_fft, axis=1)[:, ::hop]


def _power_frames(x: np.ndarray, n_fft: int) -> np.ndarray:
    """Power spectra (the processing's window) of the analysis grid (hop n_fft / 2)
    lying wholly inside ``x``."""
    hop = n_fft // 2
    count = (x.shape[1] - n_fft) // hop + 1
    if count < 1:
        return np.zeros((x.shape[0], 0, n_fft // 2 + 1))
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft, axis=1)[:, ::hop][:, :count]
    spectrum = fft.rfft((frames * _window(n_fft)).astype(np.float32), axis=-1, workers=-1)
    return spectrum.real ** 2 + spectrum.imag ** 2


def _profile_power(profile: np.ndarray, channels: int, n_fft: int):
    profile = np.atleast_2d(profile)
    if profile.shape[0] not in (1, channels):
        raise ValueError(f"the noise profile has {profile.shape[0]} channels; the audio has "
                         f"{channels}: mark the profile on the same file")
    power = _power_frames(profile, n_fft)
    if power.shape[1] == 0:
        raise ValueError(f"the noise profile is {profile.shape[1]} samples: mark at least "
                         f"{n_fft} samples of noise only")
    return power.mean(axis=1), "profile from the selection"


def _smoothed(power: np.ndarray, span: int) -> np.ndarray:
    return ndimage.uniform_filter1d(power, span, axis=-2, mode="nearest")


def _learnt_power(x, silent, n_fft, sample_rate, adaptive):
    """The noise power ``[channels, frames, bins]`` (one frame when stationary), the
    centres of those frames in samples (None when stationary), and where it came
    from; learnt from the frames of ``x`` free of digital silence."""
    hop = n_fft // 2
    power = _power_frames(x, n_fft)
    count = power.shape[1]
    starts = np.arange(count) * hop
    clear = ~np.any(np.lib.stride_tricks.sliding_window_view(
        silent.any(axis=0), n_fft)[starts], axis=1) if count else np.zeros(0, bool)
    power = power[:, clear]
    span = max(1, int(round(SMOOTH_S * sample_rate / hop)))
    if power.shape[1] < 2 * span:
        return np.zeros((x.shape[0], 1, n_fft // 2 + 1)), None, "nothing learnt"
    smooth = _smoothed(power, span)
    if not adaptive:
        low = _quantile(smooth, QUANTILE) * _bias(span)
        low = _without_programme_peaks(low, smooth.mean(axis=1, keepdims=True), n_fft,
                                       sample_rate)
        return low, None, "profile learnt from the quietest parts"
    track = max(4 * span, int(round(TRACK_S * sample_rate / hop)))
    starts = np.arange(0, max(smooth.shape[1] - track, 0) + 1, track // 2)
    chunks = [smooth[:, a:a + track] for a in starts]
    low = np.concatenate([_quantile(c, QUANTILE) for c in chunks], axis=1)
    low = _without_programme_peaks(low * _bias(span),
                                   np.stack([c.mean(axis=1) for c in chunks], axis=1),
                                   n_fft, sample_rate)
    middle = np.flatnonzero(clear)[np.minimum(starts + track // 2, smooth.shape[1] - 1)]
    return low, middle * hop + n_fft // 2, "adaptive, learnt over time"


def _without_programme_peaks(low, typical, n_fft, sample_rate):
    """The learnt noise power ``low`` with its peaks above the spectrum's envelope
    (a median over ``PEAK_HZ``) brought down to it where they are not steady: a
    hum or whistle keeps its mean power near its low quantile, a sustained note of
    the programme rises well above it some of the time."""
    width = 2 * int(PEAK_HZ * n_fft / sample_rate / 2) + 1
    envelope = ndimage.median_filter(low, size=(1, 1, width), mode="nearest")
    return np.where((low > PEAK * envelope) & (typical > STEADY * low), envelope, low)


def _quantile(power: np.ndarray, q: float) -> np.ndarray:
    k = int(q * (power.shape[1] - 1))
    return np.partition(power, k, axis=1)[:, k:k + 1]


@functools.cache
def _bias(span: int) -> float:
    """Mean over the low quantile of the smoothed power of white noise, measured
    through the same analysis (the factor depends on the smoothing, not on the noise)."""
    n_fft, frames = 256, 4000
    noise = np.random.default_rng(0).standard_normal((1, (frames + 1) * n_fft // 2))
    smooth = _smoothed(_power_frames(noise, n_fft)[:, :, 4:-4], span)
    return float(smooth.mean() / _quantile(smooth, QUANTILE).mean())


def _noise_at(noise: np.ndarray, centers: np.ndarray | None, at: np.ndarray) -> np.ndarray:
    """The noise power at the frame centres ``at``: ``[channels, len(at) or 1, bins]``."""
    if centers is None:
        return noise
    i = np.clip(np.searchsorted(centers, at) - 1, 0, len(centers) - 2) if len(centers) > 1 \
        else np.zeros(len(at), int)
    if len(centers) == 1:
        return noise[:, i]
    w = np.clip((at - centers[i]) / (centers[i + 1] - centers[i]), 0.0, 1.0)[None, :, None]
    return noise[:, i] * (1 - w) + noise[:, i + 1] * w


def _lsa_gain(xi: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """The MMSE log-spectral amplitude gain (Ephraim & Malah 1985), at most 1:
    ``xi / (1 + xi) * exp(E1(v) / 2)``, ``v = xi / (1 + xi) * gamma``, the second
    factor read from a table in log v (within 0.1 % of it)."""
    ratio = xi / (1.0 + xi)
    low, per_step, factor = _lsa_table()
    at = (np.log(np.maximum(ratio * gamma, 1e-30)) - low) * per_step + 0.5
    at = np.clip(at, 0, len(factor) - 1, out=at).astype(np.int32)
    return np.minimum(ratio * factor[at], 1.0)


@functools.cache
def _lsa_table():
    """The table of exp(E1(v) / 2): log v at entry 0, entries per unit of log v, values."""
    low, high, size = np.log(1e-8), np.log(40.0), 8192
    v = np.exp(np.linspace(low, high, size))
    return low, (size - 1) / (high - low), np.exp(0.5 * special.exp1(v)).astype(np.float32)


def _decision_directed(gamma: np.ndarray, previous: np.ndarray | None):
    """The decision-directed a priori SNR of each frame of ``gamma`` (the a posteriori
    SNR, ``[channels, frames, bins]``) in order, from ``previous`` (the last frame's
    estimated clean power over the noise power; None: none); and that of its last frame."""
    xi = np.empty_like(gamma)
    for t in range(gamma.shape[1]):
        g = gamma[:, t]
        fresh = np.maximum(g - 1.0, 0.0)
        xi_t = fresh if previous is None else ALPHA * previous + (1 - ALPHA) * fresh
        xi[:, t] = xi_t = np.maximum(xi_t, XI_MIN)
        previous = (xi_t / (1.0 + xi_t)) ** 2 * g
    return xi, previous


def _apply_gains(x, noise, centers, n_fft, floor, progress, cancel):
    """The de-noised samples and the estimated noise reduction in dB. The a priori
    SNR is the larger of the forward and the backward recursion (no onset is lost
    to the forward one's lag, no decay to the backward one's); the backward one
    starts ``MARGIN_FRAMES`` past each block, from where its start no longer shows."""
    hop = n_fft // 4
    window = _window(n_fft)
    total = (x.shape[1] + n_fft - 1) // hop + 1
    y = np.zeros_like(x)
    previous = None
    noise_sum = kept_sum = 0.0
    for first in range(0, total, BLOCK_FRAMES):
        step(first / total, progress, cancel)
        count = min(BLOCK_FRAMES, total - first)
        ahead = min(count + MARGIN_FRAMES, total - first)
        frames = _frames(x, first, ahead, hop, n_fft) * window.astype(np.float32)
        spectrum = fft.rfft(frames, axis=-1, workers=-1)
        centres = (first + np.arange(ahead)) * hop - (n_fft - hop) + n_fft // 2
        power_n = np.broadcast_to(_noise_at(noise, centers, centres), spectrum.shape)
        gamma = (spectrum.real ** 2 + spectrum.imag ** 2) / np.maximum(power_n, 1e-30,
                                                                       dtype=np.float32)
        forward, previous = _decision_directed(gamma[:, :count], previous)
        backward, _ = _decision_directed(gamma[:, ::-1], None)
        xi = np.maximum(forward, backward[:, ::-1][:, :count])
        gain = np.clip(_lsa_gain(xi, gamma[:, :count]), floor, 1.0)
        gain = ndimage.uniform_filter1d(gain, 3, axis=-1, mode="nearest")
        power_n = power_n[:, :count]
        noise_sum += float(power_n.sum())
        kept_sum += float((gain ** 2 * power_n).sum())
        out = fft.irfft(spectrum[:, :count] * gain, n_fft, axis=-1, workers=-1) * (window / 2)
        _overlap_add(y, out, first * hop - (n_fft - hop), hop)
    step(1.0, progress, cancel)
    return y, 10 * np.log10(noise_sum / max(kept_sum, 1e-300)) if noise_sum > 0 else 0.0


def _overlap_add(y: np.ndarray, frames: np.ndarray, start: int, hop: int) -> None:
    n_fft = frames.shape[-1]
    for j in range(n_fft // hop):  # frames j, j + k, ... do not overlap one another
        chunk = frames[:, j::n_fft // hop]
        if chunk.shape[1] == 0:
            continue
        a = start + j * hop
        flat = chunk.reshape(y.shape[0], -1)
        lo, hi = max(a, 0), min(a + flat.shape[1], y.shape[1])
        if hi > lo:
            y[:, lo:hi] += flat[:, lo - a:hi - a]


def _keep_below_input(x: np.ndarray, y: np.ndarray, window: int) -> np.ndarray:
    """``y`` turned down (smoothly) in each ``window`` of the grid whose peak exceeds
    the input's peak over it and one window either side by more than ``HEADROOM_DB``."""
    count = -(-x.shape[1] // window)
    pad = ((0, 0), (0, count * window - x.shape[1]))
    peak_x = np.abs(np.pad(x, pad)).reshape(x.shape[0], count, window).max(axis=2)
    peak_y = np.abs(np.pad(y, pad)).reshape(y.shape[0], count, window).max(axis=2)
    allowed = ndimage.maximum_filter1d(peak_x, 3, axis=1) * 10 ** (HEADROOM_DB / 20)
    if not (peak_y > allowed).any():
        return y
    ratio = np.minimum(allowed / np.maximum(peak_y, 1e-300), 1.0)
    ratio = ndimage.minimum_filter1d(ratio, 3, axis=1)  # neighbours ramp within it
    centres = np.arange(count) * window + window / 2
    at = np.arange(x.shape[1])
    return y * np.stack([np.interp(at, centres, r) for r in ratio])
