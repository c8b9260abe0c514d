import math

import torch
import torch.nn.functional as F

from brushes.kernels.base import DabContext, Kernel, settle
from brushes.params import Param


class Warp(Kernel):
    """Smear: each dab pulls the content under it along the stroke's motion,
    by ``strength`` of the distance moved since the previous dab, with the
    dab's falloff. Complex values (real and imaginary parts) are resampled,
    so phase moves with magnitude. Cumulative: it works on the current state."""

    name = "warp"
    help = "Smear: drag what is under the brush along the stroke (phase moves with it)."
    params = (Param("strength", 0.8, 0.0, 1.0, "", "fraction of the brush motion the "
                    "content follows"),)
    wash = False
    batchable = False

    def effect(self, ctx: DabContext):
        doc, r = ctx.doc, ctx.rect
        seconds, hz = ctx.dabs[0].step
        d_frames = doc.frame_of(seconds) * ctx.params["strength"]
        d_bins = doc.bin_span(ctx.dabs[0].freq - hz, hz) * ctx.params["strength"]
        if d_frames == 0 and d_bins == 0:
            return None
        pad_b, pad_f = math.ceil(abs(d_bins)) + 1, math.ceil(abs(d_frames)) + 1
        wide = r.grow(pad_b, pad_f).clip(doc.n_bins, doc.n_frames)
        z = doc.read_complex(wide, ctx.canvas.channel)
        planes = torch.cat([z.real, z.imag])[None]  # [1, 2ch, bins, frames]
        height, width = planes.shape[-2:]
        bins = torch.arange(wide.bin0, wide.bin1, device=z.device, dtype=torch.float32)
        frames = torch.arange(wide.frame0, wide.frame1, device=z.device, dtype=torch.float32)
        weight = torch.zeros(height, width, device=z.device)
        weight[r.bin0 - wide.bin0:r.bin1 - wide.bin0, r.frame0 - wide.frame0:
               r.frame1 - wide.frame0] = ctx.coverage
        src_b = bins[:, None] - weight * d_bins
        src_f = frames[None, :] - weight * d_frames
        grid = torch.stack([(src_f - wide.frame0) / max(width - 1, 1) * 2 - 1,
                            (src_b - wide.bin0) / max(height - 1, 1) * 2 - 1], -1)
        moved = F.grid_sample(planes, grid[None], mode="bilinear", padding_mode="border",
                              align_corners=True)[0]
        channels = z.shape[0]
        out = torch.complex(moved[:channels], moved[channels:])
        out = out[:, r.bin0 - wide.bin0:r.bin1 - wide.bin0, r.frame0 - wide.frame0:
                  r.frame1 - wide.frame0]
        return settle(ctx, out, ctx.coverage)
