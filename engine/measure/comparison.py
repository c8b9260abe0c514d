"""How far a processed take is from a reference: ``specpaint compare REF TEST``.

Sample-level: SNR and SI-SDR (engine.measure.metrics). Spectral, on ``torch.stft``:
log-spectral distance (dB), multi-resolution STFT distance (spectral
convergence plus log-magnitude L1 at FFT sizes 512, 1024 and 2048, averaged,
as in Parallel WaveGAN) and mel distance (mean absolute dB difference of
128-band mel spectrograms, the mel view's filterbank), each summed over blocks of
BLOCK_FRAMES frames: memory does not grow with the length (10 minutes of stereo
took 8.1 GB before). Perceptual, where the ``pesq``/``pystoi``/``soxr`` packages are
installed: PESQ-WB (scored in windows by a process of its own) and STOI
(engine.measure.perceptual). Multichannel audio is compared channel by channel and
averaged; every statistic is float64.

Degenerate cases (silence; a constant, such as NaN repaired to zero) are defined,
each with a note: SI-SDR is -inf when TEST is silent or constant and REF is not (none
of REF is in it), undefined (NaN) when REF is; SNR is undefined when both are silent.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from engine.errors import ParameterError
from engine.measure.metrics import constant, si_sdr_db, snr_db
from engine.measure.perceptual import perceptual as perceptual_metrics

EPS = 1e-10  # power floor of the log-spectral measures: -100 dB
RESOLUTIONS = ((512, 128), (1024, 256), (2048, 512))  # (n_fft, hop)
LSD_FFT = (2048, 512)
BLOCK_FRAMES = 1024  # frames of the spectral measures at a time


@dataclass
class Comparison:
    metrics: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was adjusted, and why a metric is missing


def aligned(ref: np.ndarray, test: np.ndarray, *, ref_name: str = "REF",
            test_name: str = "TEST", channel: int | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                         list[str]]:
    """``[ch, n]`` pairs cut to the same length (with a note), one channel of each when
    ``channel`` is given; channel counts that differ are refused with what to do."""
    notes = []
    if channel is not None:
        for name, x in ((ref_name, ref), (test_name, test)):
            if not 0 <= channel < x.shape[0]:
                raise ParameterError(f"{name} has {x.shape[0]} channel(s); --channel {channel} "
                                     f"does not exist (0 to {x.shape[0] - 1}; leave --channel "
                                     "out for all)")
        ref, test = ref[channel:channel + 1], test[channel:channel + 1]
    if ref.shape[0] != test.shape[0]:
        raise ParameterError(f"{ref_name} has {ref.shape[0]} channel(s) and {test_name} "
                             f"{test.shape[0]}: compare one channel of each (--channel N)")
    if ref.shape[1] != test.shape[1]:
        n = min(ref.shape[1], test.shape[1])
        shorter, longer = (test_name, ref_name) if test.shape[1] < ref.shape[1] else \
            (ref_name, test_name)
        notes.append(f"{shorter} is {abs(ref.shape[1] - test.shape[1])} samples shorter than "
                     f"{longer}; compared the first {n} samples of each")
        ref, test = ref[:, :n], test[:, :n]
    return ref, test, notes


def compare(ref: np.ndarray, test: np.ndarray, rate: int, *, perceptual: bool = True) -> Comparison:
    """Every metric of float ``[ch, n]`` ``test`` against ``ref`` (same shape)."""
    if ref.shape != test.shape:
        raise ParameterError(f"shapes differ: {ref.shape} and {test.shape} (see aligned())")
    result = Comparison()
    m = result.metrics
    m["snr_db"] = snr_db(ref, test)
    defined = [v for v in (si_sdr_db(r, t) for r, t in zip(ref, test, strict=True))
               if not math.isnan(v)]
    m["si_sdr_db"] = float(np.mean(defined)) if defined else math.nan
    result.notes += _degenerate(ref, test)
    m["lsd_db"] = log_spectral_distance(ref, test)
    m["mrstft"] = multi_resolution_stft(ref, test)
    m["mel_db"] = mel_distance(ref, test, rate)
    if perceptual:
        values, notes = perceptual_metrics(ref, test, rate)
        m.update(values)
        result.notes += notes
    return result


def _degenerate(ref: np.ndarray, test: np.ndarray) -> list[str]:
    """What the sample-level metrics mean where a channel is silent or constant."""
    notes = []
    for c in range(ref.shape[0]):
        which = f"channel {c} of " if ref.shape[0] > 1 else ""
        silent_ref, silent_test = not np.any(ref[c]), not np.any(test[c])
        flat_ref, flat_test = constant(ref[c]), constant(test[c])
        if silent_ref and silent_test:
            notes.append(f"{which}REF and TEST are both silent: SNR and SI-SDR are undefined")
        elif flat_ref:
            notes.append(f"{which}REF is {'silent' if silent_ref else 'constant'}: SI-SDR is "
                         "undefined" + (" and SNR -inf (no signal to measure against)"
                                        if silent_ref else ""))
        elif flat_test:
            notes.append(f"{which}TEST is {'silent' if silent_test else 'constant'}: SI-SDR "
                         "is -inf (none of REF is in it)")
    return notes


def _power_blocks(x: np.ndarray, y: np.ndarray, n_fft: int, hop: int):
    """The power spectrograms of float ``[ch, n]`` ``x`` and ``y`` as ``torch.stft``
    gives them (centred frames, zero padding; float64), BLOCK_FRAMES frames at a time:
    ``(px, py)`` ``[ch, bins, frames]`` pairs."""
    window = torch.hann_window(n_fft, dtype=torch.float64)
    frames, pad = 1 + x.shape[-1] // hop, n_fft // 2
    for f0 in range(0, frames, BLOCK_FRAMES):
        f1 = min(frames, f0 + BLOCK_FRAMES)
        start, stop = f0 * hop - pad, (f1 - 1) * hop - pad + n_fft
        yield tuple(torch.stft(_segment(a, start, stop), n_fft, hop, window=window,
                               center=False, return_complex=True).abs() ** 2 for a in (x, y))


def _segment(a: np.ndarray, start: int, stop: int) -> torch.Tensor:
    """Samples ``[start, stop)`` of ``[ch, n]`` ``a`` in float64, zero outside it."""
    out = np.zeros((a.shape[0], stop - start))
    lo, hi = max(start, 0), min(stop, a.shape[-1])
    out[:, lo - start:hi - start] = a[:, lo:hi]
    return torch.from_numpy(out)


def log_spectral_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over frames of the RMS over bins of the dB power difference."""
    total = count = 0.0
    for px, py in _power_blocks(x, y, *LSD_FFT):
        diff = 10 * torch.log10(px + EPS) - 10 * torch.log10(py + EPS)
        per_frame = torch.sqrt((diff ** 2).mean(-2))
        total, count = total + float(per_frame.sum()), count + per_frame.numel()
    return total / count


def multi_resolution_stft(x: np.ndarray, y: np.ndarray) -> float:
    """Spectral convergence ``||Y| - |X||_F / ||X||_F`` plus mean ``|log |Y| - log |X||``,
    averaged over the resolutions."""
    total = 0.0
    for n_fft, hop in RESOLUTIONS:
        off = norm = logs = count = 0.0
        for px, py in _power_blocks(x, y, n_fft, hop):
            mx, my = torch.sqrt(px + EPS), torch.sqrt(py + EPS)
            off, norm = off + float(((my - mx) ** 2).sum()), norm + float((mx ** 2).sum())
            logs, count = logs + float((torch.log(my) - torch.log(mx)).abs().sum()), \
                count + mx.numel()
        total += math.sqrt(off / norm) + logs / count
    return total / len(RESOLUTIONS)


def mel_distance(x: np.ndarray, y: np.ndarray, rate: int) -> float:
    """Mean absolute difference of mel power spectrograms, dB."""
    from engine.view.nnaudio_views import HOP, N_FFT, mel_basis

    basis = mel_basis(rate).to(torch.float64)
    total = count = 0.0
    for px, py in _power_blocks(x, y, N_FFT, HOP):
        mx, my = basis @ px, basis @ py
        diff = (10 * torch.log10(mx + EPS) - 10 * torch.log10(my + EPS)).abs()
        total, count = total + float(diff.sum()), count + diff.numel()
    return total / count


def finite_or_none(x: float | None) -> float | None:
    """For JSON, which has no infinity (identical signals have an infinite SNR) and no
    NaN (undefined: the notes say why)."""
    return None if x is None or not math.isfinite(x) else x
