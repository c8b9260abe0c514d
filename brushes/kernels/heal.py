import math

import torch

from brushes.kernels.base import DabContext, Kernel, blend_complex
from brushes.params import Param
from engine.region import Rect


class Heal(Kernel):
    """Magnitude is interpolated across the dab from the frames on both sides;
    phase continues the left neighbours' advance, so steady partials run on
    through a healed click."""

    name = "heal"
    help = "Fill the brush from its surroundings in time: removes clicks, coughs, dropouts."
    params = (Param("context_ms", 40.0, 5.0, 2000.0, "ms",
                    "how much audio on each side the fill is learnt from"),)
    batchable = False

    def effect(self, ctx: DabContext):
        doc, r = ctx.doc, ctx.rect
        k = max(2, math.ceil(doc.frame_of(ctx.params["context_ms"] / 1000)))
        left = Rect(r.bin0, r.bin1, r.frame0 - k, r.frame0).clip(doc.n_bins, doc.n_frames)
        right = Rect(r.bin0, r.bin1, r.frame1, r.frame1 + k).clip(doc.n_bins, doc.n_frames)
        if left.empty and right.empty:
            return ctx.before
        sides = [ctx.canvas.before(s) for s in (left, right) if not s.empty]
        level = [s[0].mean(-1, keepdim=True) for s in sides]
        start, end = level[0], level[-1]
        width = r.frame1 - r.frame0
        t = (torch.arange(width, device=start.device) + 0.5) / width
        mag = start + (end - start) * t
        phase = self._continued_phase(doc, r, sides[0] if not left.empty else None, width)
        return blend_complex(ctx, torch.polar(mag, phase))

    @staticmethod
    def _continued_phase(doc, r, left, width):
        bins = torch.arange(r.bin0, r.bin1, device=doc.device, dtype=torch.float32)
        nominal = 2 * math.pi * bins * doc.transform.hop / doc.transform.n_fft  # per frame
        if left is None or left[1].shape[-1] < 2:
            advance, last = nominal[None, :, None], torch.zeros_like(nominal)[None, :, None]
        else:
            ph = left[1]
            deviation = torch.remainder(ph[..., -1:] - ph[..., -2:-1] - nominal[:, None] + math.pi,
                                        2 * math.pi) - math.pi
            advance, last = nominal[:, None] + deviation, ph[..., -1:]
        steps = torch.arange(1, width + 1, device=doc.device, dtype=torch.float32)
        return last + advance * steps
