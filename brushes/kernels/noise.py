import math

import torch

from brushes.kernels.kernel import DabContext, Kernel, add_complex
from brushes.params import Param


def cell_phase(bins: torch.Tensor, frames: torch.Tensor, seed: int) -> torch.Tensor:
    """A random-looking phase in [-pi, pi) fixed for each cell (bin, frame):
    integer hashing, so overlapping dabs agree and a stroke is reproducible."""
    h = (bins[:, None] * 0x9E3779B1 + frames[None, :] * 0x85EBCA77 + seed * 0xC2B2AE3D)
    h = h & 0xFFFFFFFF
    h = ((h ^ (h >> 16)) * 0x7FEB352D) & 0xFFFFFFFF
    h = ((h ^ (h >> 15)) * 0x846CA68B) & 0xFFFFFFFF
    h = h ^ (h >> 16)
    return (h.double() / 2**32 * 2 * math.pi - math.pi).float()


class Noise(Kernel):
    name = "noise"
    help = "Spray noise: energy at the given level with random phase."
    params = (Param("level_db", -40.0, -120.0, 0.0, "dBFS",
                    "level of each bin, as for a full-scale sine at 0 dBFS"),
              Param("seed", 0, 0, 2**31 - 1, "", "random seed of the noise", integer=True))

    def effect(self, ctx: DabContext):
        surface, r = ctx.surface, ctx.rect
        level = 10 ** (ctx.params["level_db"] / 20) * surface.full_scale
        bins = torch.arange(r.bin0, r.bin1, device=surface.device, dtype=torch.int64)
        frames = torch.arange(r.frame0, r.frame1, device=surface.device, dtype=torch.int64)
        noise = torch.polar(torch.full((len(bins), len(frames)), level, device=surface.device),
                            cell_phase(bins, frames, ctx.params["seed"]))
        return add_complex(ctx, noise, ctx.coverage)
