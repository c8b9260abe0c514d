"""Read-only analysis views of a document's audio through nnAudio: Mel, CQT, VQT.

They are for looking, not painting (painting stays on the document's own
transform): a view is recomputed from the (edited) audio. The mel view uses
nnAudio's mel filterbank on ``torch.stft`` power (nnAudio's own STFT is
5-30x slower on CPU); the CQT and VQT views are nnAudio's ``CQT2010v2`` and
``VQT`` (recursive downsampling, fast on CPU and GPU).
"""

from functools import cache

import numpy as np
import torch

from engine.errors import ParameterError
from engine.region import Rect
from engine.view import render

VIEWS = ("mel", "cqt", "vqt")
HOP = 512  # nnAudio's CQT halves the rate per octave: at most log2(HOP) + 1 octaves
N_FFT = 2048
N_MELS = 128
FMIN = 32.7
BINS_PER_OCTAVE = 24
GAMMA = 24.0  # VQT bandwidth offset, Hz: wider (faster) low bands than the CQT


class Rows:
    """A view's rows as its own frequency axis (rows are already mel or log spaced)."""

    @staticmethod
    def bin_of(hz: float) -> float:
        return hz

    @staticmethod
    def hz_of(bin_: float) -> float:
        return bin_


def _rows(sr: int) -> int:
    """Rows of the CQT/VQT views: up to just below Nyquist, as many octaves as the hop allows."""
    below_nyquist = int(np.floor(np.log2(sr / 2 / FMIN) * BINS_PER_OCTAVE)) - 1
    return min(below_nyquist, (int(np.log2(HOP)) + 1) * BINS_PER_OCTAVE)


@cache
def _layer(kind: str, sr: int, device: str):
    import nnAudio.features as features

    if kind == "mel":
        return features.mel.MelSpectrogram(sr=sr, n_fft=N_FFT, n_mels=N_MELS, hop_length=HOP,
                                           verbose=False).mel_basis.to(device)
    common = dict(sr=sr, hop_length=HOP, fmin=FMIN, n_bins=_rows(sr),
                  bins_per_octave=BINS_PER_OCTAVE, pad_mode="constant", verbose=False)
    layer = features.CQT2010v2(**common) if kind == "cqt" else \
        features.VQT(**common, gamma=GAMMA)
    return layer.to(device)


def mel_basis(sr: int) -> torch.Tensor:
    """The mel view's filterbank, ``[N_MELS, N_FFT // 2 + 1]`` (CPU)."""
    return _layer("mel", sr, "cpu")


def frequencies(kind: str, sr: int) -> np.ndarray:
    """Centre frequency of each row, Hz."""
    if kind == "mel":
        from nnAudio.utils import mel_frequencies

        return mel_frequencies(N_MELS + 2, fmin=0.0, fmax=sr / 2)[1:-1]
    return FMIN * 2.0 ** (np.arange(_rows(sr)) / BINS_PER_OCTAVE)


def magnitude(samples: np.ndarray, sr: int, kind: str, *, device="cpu") -> torch.Tensor:
    """The view of float32 ``[ch, n]`` audio: magnitude ``[ch, rows, frames]`` (mel:
    the square root of mel power, so every view is in amplitude units)."""
    if kind not in VIEWS:
        raise ParameterError(f"unknown view {kind!r}; use one of {', '.join(VIEWS)}")
    x = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32)).to(device)
    layer = _layer(kind, sr, str(device))
    with torch.no_grad():
        if kind == "mel":
            window = torch.hann_window(N_FFT, device=x.device)
            power = torch.stft(x, N_FFT, HOP, window=window, center=True, pad_mode="constant",
                               return_complex=True).abs() ** 2
            return torch.sqrt(layer @ power)
        return layer(x)


def render_view(mag: torch.Tensor, width: int, height: int, **style) -> np.ndarray:
    """RGBA image of a view (0 dB at its loudest cell; ``style`` as engine.view.render)."""
    fb = mag.transpose(1, 2).contiguous()  # frames-major, as documents store it
    ref = float(mag.max()) or 1.0
    return render.render(fb, Rect(0, mag.shape[1], 0, mag.shape[2]), width=width, height=height,
                         ref=ref,
                         transform=Rows, **style)
