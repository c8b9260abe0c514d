"""Harmonic / percussive / residual: median filtering (Fitzgerald 2010) with a
margin (Driedger et al. 2014). Steady partials are smooth along time, transients
along frequency; a cell belongs to the harmonic part by ``H^p / (H^p + (m P)^p)``,
to the percussive by ``P^p / (P^p + (m H)^p)``, and with a margin ``m`` above 1
what is neither clearly is the residual. librosa.decompose.hpss is the same
method with exact medians (see engine.unmix.smooth)."""

import torch

from engine.unmix.smooth import remedian

POWER = 2.0


def shares(mag: torch.Tensor, *, time_stages: int, bin_stages: int,
           margin: float) -> list[torch.Tensor]:
    """``mag`` ``[ch, frames, bins]``: the harmonic, percussive (and, with a margin
    above 1, residual) shares of each cell, adding up to one."""
    harmonic = remedian(mag, time_stages, 1).pow_(POWER)
    percussive = remedian(mag, bin_stages, 2).pow_(POWER)
    tiny = torch.finfo(mag.dtype).tiny
    both = (harmonic + percussive).clamp_(min=tiny)
    if margin == 1:
        h = harmonic.div_(both)
        return [h, 1 - h]
    m = margin ** POWER
    h = harmonic / (harmonic + m * percussive).clamp_(min=tiny)
    p = percussive.div_((percussive + m * harmonic).clamp_(min=tiny))
    return [h, p, (1 - h - p).clamp_(min=0)]
