"""Signal measurements, computed in float64 (seed dtype policy)."""

import numpy as np

BLOCK = 1 << 20  # samples per float64 block: a 10-minute stereo file needs no 400 MB copies


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """Signal-to-noise ratio of ``test`` against ``reference`` in dB (inf when equal)."""
    ref, est = np.asarray(reference).ravel(), np.asarray(test).ravel()
    if ref.shape != est.shape:
        raise ValueError(f"shapes differ: {np.shape(reference)} and {np.shape(test)}")
    signal = noise = 0.0
    for a in range(0, ref.size, BLOCK):
        r = ref[a:a + BLOCK].astype(np.float64)
        e = est[a:a + BLOCK].astype(np.float64) - r
        signal, noise = signal + float(r @ r), noise + float(e @ e)
    return ratio_db(signal, noise)


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


def si_sdr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """Scale-invariant signal-to-distortion ratio (Le Roux et al. 2019), dB: the
    part of ``test`` along ``reference`` against the rest, means removed."""
    ref = np.asarray(reference, dtype=np.float64).ravel()
    est = np.asarray(test, dtype=np.float64).ravel()
    ref, est = ref - ref.mean(), est - est.mean()
    target = (est @ ref) / (ref @ ref) * ref
    return snr_db(target, target + (est - target) * 1.0) if np.any(est != target) \
        else float("inf")
