import math

import torch

from brushes.kernels.base import DabContext, Kernel, add_complex
from brushes.params import Param


def sinusoid_coefficients(doc, freq: float, amplitude: float, bins: range,
                          frames: range, phase: float = 0.0) -> torch.Tensor:
    """STFT coefficients ``[bins, frames]`` of ``amplitude * cos(2 pi freq t + phase)``
    (its positive-frequency part), phase referenced to sample 0: frame m
    advances by 2 pi freq hop / sr, so every dab of a steady line agrees."""
    t = doc.transform
    omega = 2 * math.pi * freq / doc.sample_rate
    n = torch.arange(t.n_fft, dtype=torch.float64, device=doc.device)
    k = torch.tensor(list(bins), dtype=torch.float64, device=doc.device)
    w = t.window.to(device=doc.device, dtype=torch.float64)
    kernel = (w * torch.exp(1j * (omega - 2 * math.pi * k[:, None] / t.n_fft) * n)).sum(-1)
    m = torch.tensor(list(frames), dtype=torch.float64, device=doc.device)
    carrier = torch.exp(1j * (omega * (m * t.hop - t.n_fft // 2) + phase))
    return (amplitude / 2 * kernel[:, None] * carrier[None, :]).to(torch.complex64)


class Tone(Kernel):
    """Each dab adds the STFT of a sinusoid at its frequency. A dab rewrites
    every frame under it, so along a stroke its trailing edge is where its
    sinusoid meets the previous dab's; when the pitch changes, the new dab's
    phase offset makes the two agree there: a painted glide stays one smooth
    partial instead of a string of clashing ones."""

    name = "tone"
    help = "Draw a steady partial along the stroke, with coherent phase: a clean tone."
    params = (Param("level_db", -20.0, -120.0, 0.0, "dBFS", "peak level of the tone"),)
    batchable = False

    def effect(self, ctx: DabContext):
        doc, r, dab = ctx.doc, ctx.rect, ctx.dabs[0]
        amplitude = 10 ** (ctx.params["level_db"] / 20)
        phase = self._continued_phase(ctx, dab.freq, doc.frame_of(dab.time),
                                      doc.frame_of(ctx.params["radius_ms"] / 1000))
        lines = sinusoid_coefficients(doc, dab.freq, amplitude, range(r.bin0, r.bin1),
                                      range(r.frame0, r.frame1), phase)
        # the level follows the stroke's coverage over time, not the dab's round
        # shape across frequency, which would cut into the tone's spectral peak
        return add_complex(ctx, lines, ctx.coverage.amax(0, keepdim=True))

    @staticmethod
    def _continued_phase(ctx: DabContext, freq: float, frame: float, radius: float) -> float:
        """Phase offset for this dab, continuous with the stroke's previous dab."""
        state = ctx.canvas.state.get("tone")
        phase = 0.0
        if state is not None:
            prev_freq, prev_frame, prev_phase = state
            edge = frame - radius if frame >= prev_frame else frame + radius
            seconds = edge * ctx.doc.transform.hop / ctx.doc.sample_rate
            phase = math.remainder(prev_phase + 2 * math.pi * (prev_freq - freq) * seconds,
                                   2 * math.pi)
        ctx.canvas.state["tone"] = (freq, frame, phase)
        return phase
