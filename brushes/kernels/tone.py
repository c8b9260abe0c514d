import math

import torch

from brushes.kernels.base import DabContext, Kernel, add_complex
from brushes.params import Param


def sinusoid_coefficients(doc, freq: float, amplitude: float, bins: range,
                          frames: range) -> torch.Tensor:
    """STFT coefficients ``[bins, frames]`` of ``amplitude * cos(2 pi freq t)``
    (its positive-frequency part), phase referenced to sample 0: frame m
    advances by 2 pi freq hop / sr, so every dab of a line agrees."""
    t = doc.transform
    omega = 2 * math.pi * freq / doc.sample_rate
    n = torch.arange(t.n_fft, dtype=torch.float64, device=doc.device)
    k = torch.tensor(list(bins), dtype=torch.float64, device=doc.device)
    w = t.window.to(device=doc.device, dtype=torch.float64)
    kernel = (w * torch.exp(1j * (omega - 2 * math.pi * k[:, None] / t.n_fft) * n)).sum(-1)
    m = torch.tensor(list(frames), dtype=torch.float64, device=doc.device)
    carrier = torch.exp(1j * omega * (m * t.hop - t.n_fft // 2))
    return (amplitude / 2 * kernel[:, None] * carrier[None, :]).to(torch.complex64)


class Tone(Kernel):
    name = "tone"
    help = "Draw a steady partial along the stroke, with coherent phase: a clean tone."
    params = (Param("level_db", -20.0, -120.0, 0.0, "dBFS", "peak level of the tone"),)
    batchable = False

    def effect(self, ctx: DabContext):
        doc, r = ctx.doc, ctx.rect
        amplitude = 10 ** (ctx.params["level_db"] / 20)
        lines = sinusoid_coefficients(doc, ctx.dabs[0].freq, amplitude, range(r.bin0, r.bin1),
                                      range(r.frame0, r.frame1))
        # the level follows the stroke's coverage over time, not the dab's round
        # shape across frequency, which would cut into the tone's spectral peak
        return add_complex(ctx, lines, ctx.coverage.amax(0, keepdim=True))
