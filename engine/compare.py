"""How far a processed take is from a reference: ``specpaint compare REF TEST``.

Sample-level: SNR and SI-SDR (engine.metrics). Spectral, on ``torch.stft``:
log-spectral distance (dB), multi-resolution STFT distance (spectral
convergence plus log-magnitude L1 at FFT sizes 512, 1024 and 2048, averaged,
as in Parallel WaveGAN) and mel distance (mean absolute dB difference of
128-band mel spectrograms, the mel view's filterbank). Perceptual, where the
``pesq``/``pystoi``/``soxr`` packages are installed: PESQ-WB (ITU-T P.862.2,
at 16 kHz: resampled with soxr when needed) and STOI. Multichannel audio is
compared channel by channel and averaged; every statistic is float64.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from engine.errors import ParameterError
from engine.metrics import si_sdr_db, snr_db

EPS = 1e-10  # power floor of the log-spectral measures: -100 dB
RESOLUTIONS = ((512, 128), (1024, 256), (2048, 512))  # (n_fft, hop)
LSD_FFT = (2048, 512)
PESQ_RATE = 16000
MIN_SECONDS = 0.25  # PESQ and STOI need a few frames of speech


@dataclass
class Comparison:
    metrics: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was adjusted, and why a metric is missing


def aligned(ref: np.ndarray, test: np.ndarray, ref_name: str = "REF",
            test_name: str = "TEST", channel: int | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                         list[str]]:
    """``[ch, n]`` pairs cut to the same length (with a note), one channel of each when
    ``channel`` is given; channel counts that differ are refused with what to do."""
    notes = []
    if channel is not None:
        for name, x in ((ref_name, ref), (test_name, test)):
            if not -x.shape[0] <= channel < x.shape[0]:
                raise ParameterError(f"{name} has {x.shape[0]} channel(s); --channel {channel} "
                                     f"does not exist (0 to {x.shape[0] - 1})")
        ref, test = ref[channel:channel + 1 or None], test[channel:channel + 1 or None]
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


def compare(ref: np.ndarray, test: np.ndarray, rate: int, perceptual: bool = True) -> Comparison:
    """Every metric of float ``[ch, n]`` ``test`` against ``ref`` (same shape)."""
    if ref.shape != test.shape:
        raise ParameterError(f"shapes differ: {ref.shape} and {test.shape} (see aligned())")
    result = Comparison()
    m = result.metrics
    m["snr_db"] = snr_db(ref, test)
    m["si_sdr_db"] = float(np.mean([si_sdr_db(r, t) for r, t in zip(ref, test, strict=True)]))
    x, y = (torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (ref, test))
    m["lsd_db"] = log_spectral_distance(x, y)
    m["mrstft"] = multi_resolution_stft(x, y)
    m["mel_db"] = mel_distance(x, y, rate)
    if perceptual:
        _perceptual(ref, test, rate, result)
    return result


def _power(x: torch.Tensor, n_fft: int, hop: int) -> torch.Tensor:
    window = torch.hann_window(n_fft, dtype=x.dtype)
    return torch.stft(x, n_fft, hop, window=window, center=True, pad_mode="constant",
                      return_complex=True).abs() ** 2


def log_spectral_distance(x: torch.Tensor, y: torch.Tensor) -> float:
    """Mean over frames of the RMS over bins of the dB power difference."""
    px, py = (_power(a, *LSD_FFT) for a in (x, y))
    diff = 10 * torch.log10(px + EPS) - 10 * torch.log10(py + EPS)
    return float(torch.sqrt((diff ** 2).mean(-2)).mean())


def multi_resolution_stft(x: torch.Tensor, y: torch.Tensor) -> float:
    """Spectral convergence ``||Y| - |X||_F / ||X||_F`` plus mean ``|log |Y| - log |X||``,
    averaged over the resolutions."""
    total = 0.0
    for n_fft, hop in RESOLUTIONS:
        mx, my = (torch.sqrt(_power(a, n_fft, hop) + EPS) for a in (x, y))
        convergence = torch.linalg.norm(my - mx) / torch.linalg.norm(mx)
        total += float(convergence + (torch.log(my) - torch.log(mx)).abs().mean())
    return total / len(RESOLUTIONS)


def mel_distance(x: torch.Tensor, y: torch.Tensor, rate: int) -> float:
    """Mean absolute difference of mel power spectrograms, dB."""
    from engine.views import HOP, N_FFT, mel_basis

    basis = mel_basis(rate).to(torch.float64)
    mx, my = (basis @ _power(a, N_FFT, HOP) for a in (x, y))
    return float((10 * torch.log10(mx + EPS) - 10 * torch.log10(my + EPS)).abs().mean())


def _perceptual(ref: np.ndarray, test: np.ndarray, rate: int, result: Comparison) -> None:
    try:
        import pystoi
        import soxr
        from pesq import pesq
    except ImportError:
        result.notes.append("PESQ-WB and STOI need the pesq, pystoi and soxr packages "
                            "(pip install 'spectropaint[metrics]')")
        return
    if ref.shape[1] < MIN_SECONDS * rate:
        result.notes.append(f"PESQ-WB and STOI need at least {MIN_SECONDS} s of audio")
        return
    pesqs, stois = [], []
    for r, t in zip(ref.astype(np.float64), test.astype(np.float64), strict=True):
        stois.append(pystoi.stoi(r, t, rate, extended=False))
        if rate != PESQ_RATE:
            r, t = (soxr.resample(a, rate, PESQ_RATE, quality="VHQ") for a in (r, t))
        try:
            pesqs.append(pesq(PESQ_RATE, r, t, "wb"))
        except Exception as e:  # noqa: BLE001 - pesq raises its own types for silence and such
            result.notes.append(f"PESQ-WB could not score this audio ({e})")
            pesqs = []
            break
    result.metrics["stoi"] = float(np.mean(stois))
    result.metrics["pesq_wb"] = float(np.mean(pesqs)) if pesqs else None
    if rate != PESQ_RATE:
        result.notes.append(f"PESQ-WB scored at {PESQ_RATE} Hz (resampled from {rate} Hz "
                            "with soxr)")


def finite_or_none(x: float | None) -> float | None:
    """For JSON, which has no infinity (identical signals have an infinite SNR)."""
    return None if x is None or not math.isfinite(x) else x
