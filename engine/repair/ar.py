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


def autocorrelation(blocks: np.ndarray, order: int, *,
                    present: np.ndarray | None = None) -> np.ndarray:
    """``[B, order + 1]`` autocorrelations of the Hann-windowed rows of ``blocks`` ``[B, L]``
    (means removed), by FFT; where ``present`` (``[B, L]``) is given, only the samples it
    marks count (the others are missing: a click's, say), and only pairs of them."""
    x = np.asarray(blocks, np.float64)
    if present is None:
        x = x - x.mean(-1, keepdims=True)
    else:
        mean = (x * present).sum(-1, keepdims=True) / np.maximum(present.sum(-1, keepdims=True), 1)
        x = np.where(present, x - mean, 0.0)
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


def interpolate(x: np.ndarray, unknown: np.ndarray,
                a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``([B, M], [B, M])``: for each row of ``x`` ``[B, L]``, its ``unknown`` samples
    (``[B, L]``, at most ``M`` a row, each at least ``p = a.shape[-1] - 1`` samples inside
    the row; in order, padded with zeros) re-estimated as those that minimise the
    prediction error of the row's model ``a`` ``[B, p + 1]`` over the row, plus the prior
    (Bayesian LSAR): they are no larger than the audio around them, weighed against the
    model's prediction error there; and each estimate's posterior variance (the
    prediction error's power times the diagonal of the inverse normal matrix). Every
    other sample is known."""
    rows, length = x.shape
    p = a.shape[-1] - 1
    count = unknown.sum(-1)
    m = max(1, int(count.max()))
    # the unknowns' positions, each row's padded with its last (masked below)
    order_ = np.argsort(~unknown, axis=-1, kind="stable")[:, :m]
    slot = np.arange(m)[None] < count[:, None]
    pos = np.where(slot, order_, 0)
    known = np.where(unknown, 0.0, x)
    # (A^T A)[i, j] = sum_k a[k] a[k + j - i] for samples away from the ends: Toeplitz
    lag = np.stack([(a[:, :p + 1 - d] * a[:, d:]).sum(-1) for d in range(p + 1)], -1)
    gaps = np.abs(pos[:, :, None] - pos[:, None, :])
    gram = np.where(gaps <= p, np.take_along_axis(lag, np.minimum(gaps, p).reshape(rows, -1),
                                                  -1).reshape(rows, m, m), 0.0)
    both = slot[:, :, None] & slot[:, None, :]
    gram = np.where(both, gram, np.eye(m)[None])
    # A^T A applied to the known samples, read at the unknown ones
    shifts = np.arange(-p, p + 1)
    near = (pos[:, :, None] + p + shifts).reshape(rows, -1)
    rhs = (np.take_along_axis(np.pad(known, ((0, 0), (p, p))), near, -1).reshape(rows, m, -1)
           * lag[:, np.abs(shifts)][:, None, :]).sum(-1) * slot
    # the prior: the prediction error over rows whose history is all known, over the power
    # of the known samples
    size = 1 << int(np.ceil(np.log2(length + p)))
    residual = np.fft.irfft(np.fft.rfft(known, size) * np.fft.rfft(a, size), size)[:, p:length]
    touched = np.cumsum(np.pad(unknown, ((0, 0), (1, 0))), -1)
    clean = (touched[:, p + 1:] - touched[:, :length - p]) == 0
    power = (known ** 2).sum(-1) / np.maximum(length - count, 1)
    error = np.where(clean.any(-1), (residual ** 2 * clean).sum(-1) / np.maximum(
        clean.sum(-1), 1), power)
    ridge = RIDGE * error / np.maximum(power, 1e-300) + 1e-12 * lag[:, 0]
    gram[:, np.arange(m), np.arange(m)] += ridge[:, None] * slot
    inverse = np.linalg.inv(gram)
    values = -(inverse @ rhs[..., None])[..., 0] * slot
    return values, error[:, None] * np.diagonal(inverse, axis1=1, axis2=2) * slot
