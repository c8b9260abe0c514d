import functools
import math

import torch
import torch.nn.functional as F

from brushes.kernels.kernel import DabContext, Kernel, blend_magnitude, with_magnitude
from brushes.params import Param
from engine.coeffs import magnitude

TRUNCATE = 3.0  # Gaussian taps out to 3 sigma
FFT_ABOVE_TAPS = 31  # longer taps convolve by FFT


def gaussian_taps(sigma: float, device=None) -> torch.Tensor | None:
    """Normalized Gaussian taps for ``sigma`` in cells, rounded to 0.01 cell so that a
    stroke's dabs share a few cached tensors (shared: do not modify); None when it is
    too narrow to change anything (sigma -> 0 is the identity)."""
    return _taps(round(sigma, 2), device)


@functools.lru_cache(maxsize=64)
def _taps(sigma: float, device) -> torch.Tensor | None:
    if sigma < 0.05:
        return None
    half = max(1, math.ceil(TRUNCATE * sigma))
    x = torch.arange(-half, half + 1, dtype=torch.float32, device=device)
    taps = torch.exp(-0.5 * (x / sigma) ** 2)
    return taps / taps.sum()


def blur_axis(x: torch.Tensor, taps: torch.Tensor | None, dim: int) -> torch.Tensor:
    """Convolve ``[ch, bins, frames]`` along ``dim`` (1 or 2), edges replicated."""
    if taps is None:
        return x
    moved = x.movedim(dim, -1)
    shape, half = moved.shape, len(taps) // 2
    rows = F.pad(moved.reshape(1, -1, shape[-1]), (half, half), mode="replicate")[0]
    if len(taps) <= FFT_ABOVE_TAPS:  # one 2-D image: 2-3x faster than conv1d per row
        out = F.conv2d(rows[None, None], taps[None, None, None])[0, 0]
    else:  # long taps (fine time grids): by FFT, 2-3x faster again
        size = rows.shape[-1]
        spectrum = torch.fft.rfft(rows, size) * _flipped_spectrum(taps, size)
        out = torch.fft.irfft(spectrum, size)[:, 2 * half:]
    return out.reshape(shape).movedim(-1, dim)


@functools.lru_cache(maxsize=64)
def _flipped_spectrum(taps: torch.Tensor, size: int) -> torch.Tensor:
    """``rfft`` of the reversed taps at ``size`` (taps come from the gaussian_taps cache,
    so the same tensor, and this, serve every dab of a stroke)."""
    return torch.fft.rfft(taps.flip(0), size)


class Blur(Kernel):
    name = "blur"
    help = "Separable Gaussian blur of the magnitude over time and frequency. Phase is kept."
    params = (Param("sigma_ms", 40.0, 0.0, 2000.0, "ms", "blur width over time (1 sigma)"),
              Param("sigma_hz", 60.0, 0.0, 5000.0, "Hz", "blur width over frequency (1 sigma)"))

    def effect(self, ctx: DabContext):
        surface, p = ctx.surface, ctx.params
        taps_f = gaussian_taps(surface.frame_of(p["sigma_ms"] / 1000), surface.device)
        taps_b = gaussian_taps(surface.bin_span(ctx.dabs[0].freq, p["sigma_hz"]), surface.device)
        grow_b = 0 if taps_b is None else len(taps_b) // 2
        grow_f = 0 if taps_f is None else len(taps_f) // 2
        wide = ctx.rect.grow(grow_b, grow_f).clip(surface.n_bins, surface.n_frames)
        r = ctx.rect
        before_z = ctx.canvas.complex_before(wide)
        before = magnitude(before_z)
        inner = (slice(None), slice(r.bin0 - wide.bin0, r.bin1 - wide.bin0),
                 slice(r.frame0 - wide.frame0, r.frame1 - wide.frame0))
        ctx.before_z, ctx.before_mag = before_z[inner], before[inner]  # one read, one |z|
        across = blur_axis(before, taps_b, 1)  # over frequency, then
        rows = across[:, r.bin0 - wide.bin0:r.bin1 - wide.bin0]  # only the rect's bins
        blurred = blur_axis(rows, taps_f, 2)[..., r.frame0 - wide.frame0:r.frame1 - wide.frame0]
        return with_magnitude(ctx, blend_magnitude(ctx.before_mag, blurred, ctx.coverage))
