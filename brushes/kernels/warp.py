import math

import torch
import torch.nn.functional as F

from brushes.kernels.kernel import DabContext, Kernel, settle
from brushes.params import Param
from engine.coeffs import magnitude

PROMINENCE = 1.25  # a spectral peak stands this much above the mean of its two neighbours


class Warp(Kernel):
    """Smear: each dab pulls the content under it along the stroke's motion,
    by ``strength`` of the distance moved since the previous dab, with the
    dab's falloff. Cumulative: it works on the current state.

    Magnitude is moved by bilinear interpolation; phase the way a phase vocoder
    moves it. A partial's cells (see :func:`_tonal`) take their phase from the
    frame before plus the rate measured where their content came from, so a
    steady partial dragged along itself stays as it was; other cells (a
    transient, noise) take the phase of their source, advanced by the fraction
    of a frame, so what is moved is delayed, not re-timed. Content moved by
    ``d`` Hz turns ``d`` Hz faster: a frequency shift."""

    name = "warp"
    help = ("Smear: drag what is under the brush along the stroke; a partial dragged "
            "along itself stays, one dragged up or down bends.")
    params = (Param("strength", 0.8, 0.0, 1.0, "", "fraction of the brush motion the "
                    "content follows"),)
    wash = False
    batchable = False

    def effect(self, ctx: DabContext):
        surface, r = ctx.surface, ctx.rect
        seconds, hz = ctx.dabs[0].step
        d_frames = surface.frame_of(seconds) * ctx.params["strength"]
        d_bins = surface.bin_span(ctx.dabs[0].freq - hz, hz) * ctx.params["strength"]
        if d_frames == 0 and d_bins == 0:
            return None
        pad_b, pad_f = math.ceil(abs(d_bins)) + 1, math.ceil(abs(d_frames)) + 1
        wide = r.grow(pad_b, pad_f).clip(surface.n_bins, surface.n_frames)
        z = surface.read_complex(wide, ctx.canvas.channel)
        device = z.device
        rows = torch.arange(r.bin0, r.bin1, device=device)[:, None] - wide.bin0
        cols = torch.arange(r.frame0, r.frame1, device=device)[None] - wide.frame0
        weight = ctx.coverage.to(torch.float64)
        src_b = (rows - weight * d_bins).clamp(0, wide.bin1 - wide.bin0 - 1)
        src_f = (cols - weight * d_frames).clamp(0, wide.frame1 - wide.frame0 - 1)
        freqs = surface.transform.bin_frequencies().to(device)[wide.bin0:wide.bin1]
        moved_hz = freqs[rows] - _lerp(freqs, src_b)
        level = magnitude(z)
        mag = _bilinear(level, src_b, src_f)
        phase = _moved_phase(surface, z, level, freqs, (rows, cols), (src_b, src_f), moved_hz,
                             wide.frame0)
        return settle(ctx, torch.polar(mag, phase), ctx.coverage)


def _bilinear(values: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """``values [ch, H, W]`` at fractional ``rows``/``cols`` (in range) by bilinear
    interpolation."""
    height, width = values.shape[-2:]
    grid = torch.stack([cols / max(width - 1, 1) * 2 - 1, rows / max(height - 1, 1) * 2 - 1],
                       -1).float()
    return F.grid_sample(values[None], grid[None], mode="bilinear", align_corners=True)[0]


def _lerp(values: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    low = at.floor().long().clamp(max=len(values) - 1)
    high = (low + 1).clamp(max=len(values) - 1)
    return values[low] + (at - low) * (values[high] - values[low])


def _moved_phase(surface, z: torch.Tensor, level: torch.Tensor, freqs: torch.Tensor, dest, src,
                 moved_hz, frame0: int) -> torch.Tensor:
    """Phase of the cells ``dest`` (rows, cols of ``z``, whose magnitude is ``level``)
    given the content at the fractional ``src``, shifted by ``moved_hz``. ``frame0``:
    the file frame of ``z``'s column 0."""
    rows, cols = dest
    src_b, src_f = src
    phase = z.angle()
    width = z.shape[-1]
    row = src_b.round().long()
    if width < 2:
        return phase[:, row, src_f.long()]
    nominal = surface.transform.phase_advance(freqs).float()[:, None]
    rate = nominal + torch.remainder(phase[..., 1:] - phase[..., :-1] - nominal + math.pi,
                                     2 * math.pi) - math.pi  # [ch, bins, width - 1]
    col = src_f.floor().long().clamp(max=width - 2)
    turn = surface.transform.phase_advance(moved_hz)  # per frame, from the frequency shift
    # a partial: the frame before's phase (its own, plus what was added before it
    # along the row) advanced by the source's rate
    before = (src_f - 0.5).floor().long().clamp(0, width - 2)
    own = (cols - 1).clamp(min=0)
    added = rate[:, row, before] + turn.float() - rate[:, rows, own]
    along = phase[:, rows, cols] + torch.cumsum(added, -1)
    # anything else: delayed by the fraction, shifted in frequency in the file's time
    seconds = surface.transform.seconds_of(cols + frame0)
    shift = torch.remainder(2 * math.pi * moved_hz * seconds, 2 * math.pi).float()
    delayed = phase[:, row, col] + (src_f - col).float() * rate[:, row, col] + shift
    tonal = _tonal(level, rate, nominal)[:, row, col]
    return torch.where(tonal, along, delayed)


def _tonal(mag: torch.Tensor, rate: torch.Tensor, nominal: torch.Tensor) -> torch.Tensor:
    """Cells of a partial: a spectral peak standing out of its neighbours (an
    impulse's or a flat noise's level is even across bins), or a cell whose rate
    agrees with its louder neighbour's to within half their spacing (a partial's
    lobe; an impulse has each bin at its own rate). ``[ch, bins, width - 1]``."""
    pad = torch.zeros_like(mag[:, :1])
    below, above = torch.cat([pad, mag[:, :-1]], 1), torch.cat([mag[:, 1:], pad], 1)
    peak = (mag >= torch.maximum(below, above)) & (mag > PROMINENCE * (below + above) / 2)
    spacing = (nominal[1:] - nominal[:-1]).abs()
    apart = torch.remainder(rate[:, 1:] - rate[:, :-1] + math.pi, 2 * math.pi) - math.pi
    agree = apart.abs() < spacing / 2  # bin k with k + 1 (a rate is known modulo 2 pi)
    no = torch.zeros_like(agree[:, :1])
    with_below, with_above = torch.cat([no, agree], 1), torch.cat([agree, no], 1)
    louder_above = above[..., :-1] > below[..., :-1]
    return peak[..., :-1] | torch.where(louder_above, with_above, with_below)
