"""Autoregressive models that cannot blow up, and the least-squares AR
interpolation of damaged samples (Janssen, Veldhuis & Vries 1986; Godsill &
Rayner, "Digital Audio Restoration", ch. 5).

Stable by construction: the model comes from the autocorrelation of the
Hann-windowed context with a white-noise floor (``NOISE_FLOOR`` of its power)
and a lag window, solved by Levinson-Durbin, so every reflection coefficient
lies inside the unit circle (clamped to ``MAX_REFLECTION``) and the poles keep
away from it. The interpolation adds a prior that the unknowns are no larger than the audio around
them (weighed against the model's prediction error), so a run of unknowns
between nearly silent or nearly periodic context stays bounded; and
:func:`usable` refuses context that cannot teach a model (digital silence,
DC, a full-scale stretch). Plain numpy in float64, batched over blocks.
"""

import numpy as np

NOISE_FLOOR = 1e-6  # white noise added to the context's power (-60 dB): no pole on the circle
LAG_WIDTH = 0.02  # Gaussian lag window: bandwidth expansion of 2 % of the sample rate
MAX_REFLECTION = 0.9995
RIDGE = 1.0  # interpolation: weight of the prior that unknowns are no larger than the audio
SILENT = 1e-7  # |x| at or below this (-140 dBFS) is digital silence
FULL_SCALE = 0.999  # |x| at or above this is a full-scale stretch


def usable(context: np.ndarray, order: int) -> bool:
    """Whether ``context`` can teach an AR model of ``order``: enough samples that are
    neither digital silence nor at full scale, and more than DC."""
    x = np.asarray(context, np.float64)
    live = (np.abs(x) > SILENT) & (np.abs(x) < FULL_SCALE)
    if live.sum() < 4 * order:
        return False
    return float(np.std(x[live])) > SILENT


def autocorrelation(blocks: np.ndarray, order: int) -> np.ndarray:
    """``[B, order + 1]`` autocorrelations of the Hann-windowed rows of ``blocks`` ``[B, L]``
    (means removed), by FFT."""
    x = blocks - blocks.mean(-1, keepdims=True)
    x = x * np.hanning(x.shape[-1] + 2)[1:-1]
    size = 1 << int(np.ceil(np.log2(x.shape[-1] + order + 1)))
    spectrum = np.fft.rfft(x, size)
    return np.fft.irfft(spectrum.real ** 2 + spectrum.imag ** 2, size)[..., :order + 1]


def levinson(r: np.ndarray) -> np.ndarray:
    """Prediction-error filters ``[B, p + 1]`` (``[1, a1..ap]``) from autocorrelations
    ``[B, p + 1]``, with the floor, lag window and reflection clamp of the module notes.
    A row with no power gives the filter ``[1, 0, ...]``."""
    r = np.array(r, np.float64, ndmin=2)
    p = r.shape[-1] - 1
    lags = np.arange(p + 1)
    r = r * np.exp(-0.5 * (2 * np.pi * LAG_WIDTH * lags) ** 2)
    r[:, 0] = r[:, 0] * (1 + NOISE_FLOOR) + 1e-300
    a = np.zeros_like(r)
    a[:, 0] = 1.0
    error = r[:, 0].copy()
    for m in range(1, p + 1):
        k = -(a[:, :m] * r[:, m:0:-1]).sum(-1) / error
        k = np.clip(k, -MAX_REFLECTION, MAX_REFLECTION)
        a[:, 1:m + 1] = a[:, 1:m + 1] + k[:, None] * a[:, m - 1::-1][:, :m]
        error = error * (1 - k * k)
    return a


def fit(pieces: list[np.ndarray], order: int) -> np.ndarray:
    """One prediction-error filter ``[1, a1..ap]`` from the pieces of context given
    (each long enough), their autocorrelations summed."""
    r = sum(autocorrelation(np.asarray(p, np.float64)[None], order)[0] for p in pieces
            if len(p) > order)
    return levinson(r)[0]


def prediction_error(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``e[n] = sum_k a[k] x[n - k]`` for n from ``len(a) - 1`` (full history only)."""
    return np.convolve(x, a, mode="valid")


def interpolate(x: np.ndarray, damaged: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``x`` with the ``damaged`` samples replaced by those that minimise the AR
    prediction error over the span (plus the ridge); the damaged samples must lie at
    least ``len(a) - 1`` samples inside ``x``."""
    p = len(a) - 1
    unknown = np.flatnonzero(damaged)
    if len(unknown) == 0:
        return x.copy()
    # (A^T A)[i, j] = sum_k a[k] a[k + j - i] for samples away from the ends: Toeplitz
    lag = np.array([a[:p + 1 - d] @ a[d:] for d in range(p + 1)])
    gaps = np.abs(unknown[:, None] - unknown[None, :])
    gram = np.where(gaps <= p, lag[np.minimum(gaps, p)], 0.0)
    known = np.where(damaged, 0.0, x)
    # a prior on the unknowns (Bayesian LSAR): they are no larger than the audio around
    # them, weighed against the model's prediction error there
    clean = np.convolve(damaged, np.ones(p + 1), mode="full")[p:len(x)] == 0  # rows of n >= p
    residual = prediction_error(known, a)[clean] if len(x) > p else np.zeros(0)
    signal = float(np.mean(known[~damaged] ** 2)) if (~damaged).any() else 0.0
    error = float(np.mean(residual ** 2)) if len(residual) else signal
    gram[np.diag_indices_from(gram)] += RIDGE * error / max(signal, 1e-300) + 1e-12 * lag[0]
    # A^T A applied to the known samples, read at the unknown ones
    rhs = np.convolve(np.convolve(known, a, mode="full"), a[::-1], mode="full")[p + unknown]
    out = x.copy()
    out[unknown] = np.linalg.solve(gram, -rhs)
    return out
