"""Signal measurements, computed in float64 (seed dtype policy)."""

import math

import numpy as np

BLOCK = 1 << 16  # samples per float64 block: 512 KB, in cache; no whole-file float64 copies
EXACT_BELOW = 1e-8  # si_sdr_db: a residual this small a share of the energy is summed exactly
FLAT_BELOW = 1e-20  # constant(): what is left once the mean is removed, at most this share
SMALL_MEAN = 1e-6  # si_sdr_and_snr_db: means this small a share of the energy are derived


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` without BLAS: OpenBLAS runs a dot product this long on its threads,
    which then spin, taking the cores from the work beside it (a batch's painting
    thread: 200 files took 5.6 s with ``@``, 4.2-4.7 s with this). As fast alone."""
    return float(np.einsum("i,i->", a, b))


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """Signal-to-noise ratio of ``test`` against ``reference`` in dB: inf when equal, -inf
    when the reference is silent and the test not, NaN (undefined) when both are."""
    ref, est = np.asarray(reference).ravel(), np.asarray(test).ravel()
    if ref.shape != est.shape:
        raise ValueError(f"shapes differ: {np.shape(reference)} and {np.shape(test)}")
    signal = noise = 0.0
    for a in range(0, ref.size, BLOCK):
        r = ref[a:a + BLOCK].astype(np.float64)
        e = est[a:a + BLOCK].astype(np.float64) - r
        signal, noise = signal + _dot(r, r), noise + _dot(e, e)
    return math.nan if signal == noise == 0.0 else ratio_db(signal, noise)


def ratio_db(signal: float, noise: float) -> float:
    """``signal / noise`` (energies) in dB: inf when there is no noise, -inf no signal."""
    if noise == 0.0:
        return float("inf")
    if signal == 0.0:
        return float("-inf")
    return 10.0 * float(np.log10(signal / noise))


def rms_db(x: np.ndarray) -> float:
    """RMS level in dBFS (a full-scale sine reads -3 dB)."""
    rms = float(np.sqrt(np.mean(np.asarray(x, dtype=np.float64) ** 2)))
    return 20.0 * np.log10(rms) if rms > 0 else float("-inf")


def constant(x: np.ndarray) -> bool:
    """Whether ``x`` is silent or a constant (DC): once its mean is removed, what is left
    is at most FLAT_BELOW of its energy (rounding of the mean, nothing else)."""
    x = np.asarray(x).ravel()
    total = mean_sum = 0.0
    for a in range(0, x.size, BLOCK):
        b = x[a:a + BLOCK].astype(np.float64)
        total, mean_sum = total + _dot(b, b), mean_sum + float(b.sum())
    mean = mean_sum / max(x.size, 1)
    left = sum(_dot(d, d) for d in (x[a:a + BLOCK].astype(np.float64) - mean
                                    for a in range(0, x.size, BLOCK)))
    return left <= FLAT_BELOW * total


def si_sdr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """Scale-invariant signal-to-distortion ratio (Le Roux et al. 2019), dB: the
    part of ``test`` along ``reference`` against the rest, means removed. In float64
    blocks: no whole-file float64 copies. The residual comes from the sums of the
    second pass; only when it is below ``EXACT_BELOW`` of the test's energy (above
    80 dB, where that difference loses digits) is it summed in a third pass.
    Where a signal is silent or constant (:func:`constant`): NaN (undefined) when the
    reference is, -inf when only the test is (none of the reference is in it)."""
    return _si_sdr(reference, test, with_snr=False)[0]


def si_sdr_and_snr_db(reference: np.ndarray, test: np.ndarray) -> tuple[float, float]:
    """(:func:`si_sdr_db`, :func:`snr_db`) of one pair in one pass over the blocks: with
    SNR's sums, SI-SDR's raw ones (of the signals, their squares and their product),
    from which the sums with the means removed are derived where the means are small
    (their energy at most SMALL_MEAN of the signal's: audio's are far smaller); else a
    second pass takes them, as si_sdr_db does. SNR is snr_db's value, SI-SDR si_sdr_db's
    to 1e-4 dB (tests/engine/test_compare.py; 2.4e-6 dB at most over 50 random pairs of 0-86
    dB; a batch reports 3 decimals). A batch measures every output so: a 10 s file
    took 2.5 ms with the two functions, 1.4 ms so."""
    return _si_sdr(reference, test, with_snr=True)


def _si_sdr(reference: np.ndarray, test: np.ndarray, *, with_snr: bool) -> tuple[float, float]:
    ref, est = np.asarray(reference).ravel(), np.asarray(test).ravel()
    if ref.shape != est.shape:
        raise ValueError(f"shapes differ: {np.shape(reference)} and {np.shape(test)}")

    def blocks():
        for a in range(0, ref.size, BLOCK):
            yield ref[a:a + BLOCK].astype(np.float64), est[a:a + BLOCK].astype(np.float64)

    sum_r = sum_e = raw_r = raw_e = raw_er = noise = 0.0
    for r, e in blocks():
        sum_r, sum_e = sum_r + float(r.sum()), sum_e + float(e.sum())
        raw_r, raw_e = raw_r + _dot(r, r), raw_e + _dot(e, e)
        if with_snr:  # as snr_db sums them
            d = e - r
            noise, raw_er = noise + _dot(d, d), raw_er + _dot(e, r)
    snr = (math.nan if raw_r == noise == 0.0 else ratio_db(raw_r, noise)) if with_snr \
        else math.nan
    n = max(ref.size, 1)
    means = (sum_r / n, sum_e / n)
    if with_snr and n * means[0] ** 2 <= SMALL_MEAN * raw_r and \
            n * means[1] ** 2 <= SMALL_MEAN * raw_e:
        centred = (raw_er - n * means[0] * means[1], raw_r - n * means[0] ** 2,
                   raw_e - n * means[1] ** 2)
    else:
        centred = _centred(blocks, means)
    return _si_sdr_of(blocks, means, centred=centred, raw=(raw_r, raw_e)), snr


def _centred(blocks, means: tuple[float, float]) -> tuple[float, float, float]:
    """(cross, power, energy): the sums of the product and squares, means removed."""
    cross = power = energy = 0.0
    for r, e in blocks():
        r, e = r - means[0], e - means[1]
        cross, power, energy = cross + _dot(e, r), power + _dot(r, r), energy + _dot(e, e)
    return cross, power, energy


def _si_sdr_of(blocks, means: tuple[float, float], *, centred: tuple[float, float, float],
               raw: tuple[float, float]) -> float:
    """SI-SDR from the ``centred`` sums (:func:`_centred`) and the ``raw`` energies;
    the residual summed again over ``blocks`` where it is small (above 80 dB)."""
    cross, power, energy = centred
    if power <= FLAT_BELOW * raw[0]:  # as constant(): silent or DC
        return math.nan
    if energy <= FLAT_BELOW * raw[1]:
        return -math.inf
    alpha = cross / power
    residual = energy - alpha * cross  # sum of (e - alpha r)^2
    if residual < EXACT_BELOW * energy:
        residual = 0.0
        for r, e in blocks():
            d = (e - means[1]) - alpha * (r - means[0])
            residual += _dot(d, d)
    return ratio_db(alpha * alpha * power, residual)
