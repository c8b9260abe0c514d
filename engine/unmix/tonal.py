"""Tonal / noise: a cell is tonal by how far it stands above the noise floor
around it in frequency (a running median across ``floor_stages``), as long as it
stays there (a running median along time of the excess); the rest is noise.
Unlike the harmonic part of HPSS, a steady hiss is noise here: it is steady,
but it does not stand above its own floor."""

import torch

from engine.unmix.smooth import remedian

ABOVE = 2.0  # a partial stands this many times above the floor


def shares(mag: torch.Tensor, *, floor_stages: int, time_stages: int) -> list[torch.Tensor]:
    """``mag`` ``[ch, frames, bins]``: the tonal and noise shares of each cell."""
    floor = remedian(mag, floor_stages, 2)
    excess = (mag - ABOVE * floor).clamp_(min=0)
    tonal = remedian(excess, time_stages, 1).pow_(2)
    t = tonal / (tonal + floor.pow_(2)).clamp_(min=torch.finfo(mag.dtype).tiny)
    return [t, 1 - t]
