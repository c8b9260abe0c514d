"""Click repair in the time domain: find the samples an autoregressive model of
the surrounding audio cannot explain, and re-estimate them by least-squares
AR interpolation (Janssen, Veldhuis & Vries 1986; Godsill & Rayner, "Digital
Audio Restoration", ch. 5). Plain numpy in float64; sizes are a few thousand
samples, so direct solves are fine."""

import numpy as np

ORDER = 32  # AR order: enough for speech and most music at 16-48 kHz
THRESHOLD = 20.0  # a sample is damaged when its prediction error exceeds this many
#                   robust standard deviations of the context's prediction error
MAX_DAMAGED = 0.005  # seconds: a longer run is not a click; leave it alone
DILATE = 2  # samples added either side of each detected run
FLOOR = 1e-4  # prediction errors below -80 dBFS are inaudible: never a click


def ar_coefficients(x: np.ndarray, order: int) -> np.ndarray:
    """Prediction-error filter ``[1, a1..ap]`` of ``x`` (autocorrelation method)."""
    x = x - x.mean()
    n = len(x)
    r = np.array([x[:n - k] @ x[k:] for k in range(order + 1)]) / n
    r[0] = r[0] * (1 + 1e-9) + 1e-20  # a little white noise: never singular
    toeplitz = r[np.abs(np.arange(order)[:, None] - np.arange(order)[None, :])]
    a = np.linalg.solve(toeplitz, -r[1:order + 1])
    return np.concatenate(([1.0], a))


def prediction_error(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``e[n] = sum_k a[k] x[n - k]`` for n from ``len(a) - 1`` (full history only)."""
    return np.convolve(x, a, mode="valid")


def find_damaged(x: np.ndarray, candidates: slice, a: np.ndarray, sample_rate: int) -> np.ndarray:
    """Boolean mask over ``x``: samples inside ``candidates`` whose forward or
    backward prediction error stands out from the error elsewhere in ``x``."""
    p = len(a) - 1
    fwd = np.zeros(len(x))
    fwd[p:] = np.abs(prediction_error(x, a))
    bwd = np.zeros(len(x))
    bwd[:len(x) - p] = np.abs(prediction_error(x[::-1], a))[::-1]
    error = np.minimum(fwd[p:len(x) - p], bwd[p:len(x) - p])  # both must fail
    inside = np.zeros(len(x), bool)
    inside[candidates] = True
    context = error[~inside[p:len(x) - p]]
    if len(context) < 4 * p:
        return np.zeros(len(x), bool)
    sigma = 1.4826 * np.median(np.abs(context)) + 1e-12
    outliers = np.flatnonzero((error > max(THRESHOLD * sigma, FLOOR)) & inside[p:len(x) - p]) + p
    damaged = np.zeros(len(x), bool)
    # runs: outliers closer than the AR order belong to one click
    for run in np.split(outliers, np.flatnonzero(np.diff(outliers) > p) + 1):
        if len(run) == 0 or run[-1] - run[0] + 1 > MAX_DAMAGED * sample_rate:
            continue  # not a click: a run that long is the audio itself
        damaged[max(run[0] - DILATE, p):min(run[-1] + DILATE + 1, len(x) - p)] = True
    return damaged


def interpolate(x: np.ndarray, damaged: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``x`` with the ``damaged`` samples replaced by the values that minimise the
    AR prediction error over the whole span (the LSAR interpolator)."""
    p, n = len(a) - 1, len(x)
    rows = n - p
    # prediction-error matrix: (A x)[i] = sum_k a[k] x[i + p - k]
    A = np.zeros((rows, n))
    for k, ak in enumerate(a):
        A[np.arange(rows), np.arange(rows) + p - k] = ak
    unknown = np.flatnonzero(damaged)
    known = np.flatnonzero(~damaged)
    Au, Ak = A[:, unknown], A[:, known]
    solution, *_ = np.linalg.lstsq(Au, -Ak @ x[known], rcond=None)
    out = x.copy()
    out[unknown] = solution
    return out


def repair(x: np.ndarray, candidates: slice, sample_rate: int) -> np.ndarray | None:
    """``x`` with a click inside ``candidates`` repaired, or None when nothing
    there stands out (then nothing should change)."""
    order = min(ORDER, max(4, (len(x) - (candidates.stop - candidates.start)) // 8))
    context = np.concatenate((x[:candidates.start], x[candidates.stop:]))
    a = ar_coefficients(context, order)
    damaged = find_damaged(x, candidates, a, sample_rate)
    if not damaged.any():
        return None
    out = x.copy()
    idx = np.flatnonzero(damaged)
    for run in np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1):
        lo, hi = max(0, run[0] - 4 * order), min(len(x), run[-1] + 4 * order + 1)
        out[lo:hi] = interpolate(out[lo:hi], damaged[lo:hi], a)
    return out
