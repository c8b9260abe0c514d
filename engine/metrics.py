"""Signal measurements, computed in float64 (seed dtype policy)."""

import numpy as np


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """Signal-to-noise ratio of ``test`` against ``reference`` in dB (inf when equal)."""
    ref = np.asarray(reference, dtype=np.float64)
    err = np.asarray(test, dtype=np.float64) - ref
    noise = float(np.sum(err * err))
    signal = float(np.sum(ref * ref))
    if noise == 0.0:
        return float("inf")
    if signal == 0.0:
        return float("-inf")
    return 10.0 * np.log10(signal / noise)


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
