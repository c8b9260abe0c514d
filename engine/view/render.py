"""Magnitude -> dB -> colormap -> RGBA uint8 images of any rect, at any size.

Images are ``[height, width, 4]`` uint8 with row 0 at the top, i.e. the
highest frequency, as a screen or a PNG shows them. Resizing is
max-pooling: each output pixel shows the loudest bin x frame whose cell its
own cell overlaps (so a zoomed-out view never hides a click), and nearest
cell when zoomed in. Very long rects are first reduced by an integer
factor of frames (a power of two, so at least two source blocks per
column remain), which keeps a whole-file overview of a long recording fast.

0 dB is digital full scale: the magnitude a full-scale sine reaches at its
peak bin (the transform's ``full_scale``). Rows follow the transform's
frequency axis (``hz_of``/``bin_of``), so one renderer serves STFT and
constant-Q documents.
"""

import math
from collections.abc import Callable
from functools import cache

import numpy as np
import torch

from engine.coeffs import magnitude_of
from engine.errors import ParameterError
from engine.region import Rect
from engine.view import overview
from engine.view.colormaps import COLORMAPS

CHUNK_FRAMES = 4096  # frames of a complex store turned into magnitude at a time


@cache
def colormap_lut(name: str) -> torch.Tensor:
    """256 x 4 uint8 RGBA table of a colormap, from the maintained ``cmap`` library."""
    if name not in COLORMAPS:
        raise ParameterError(f"unknown colormap '{name}'; use one of {', '.join(COLORMAPS)}")
    import cmap

    rgba = np.ascontiguousarray(np.round(cmap.Colormap(name).lut(256) * 255).astype(np.uint8))
    return torch.from_numpy(rgba)


def to_unit(mag: torch.Tensor, ref: float, *, top_db: float = 0.0,
            range_db: float = 100.0) -> torch.Tensor:
    """Map magnitudes to [0, 1]: ``top_db`` and above -> 1, ``top_db - range_db`` and below -> 0."""
    if not (math.isfinite(range_db) and range_db > 0):
        raise ParameterError(f"dB range must be a positive number (got {range_db}); 100 is "
                             "usual")
    if not math.isfinite(top_db):
        raise ParameterError(f"the top dB must be a number (got {top_db}); 0 is usual")
    # (20 log10(max(mag / ref, 1e-12)) - floor) / range, in three passes over mag
    scale = 20 / range_db
    offset = -(20 * math.log10(ref) + top_db - range_db) / range_db
    unit = torch.clamp(mag, min=1e-12 * ref).log10_().mul_(scale).add_(offset)
    return unit.clamp_(0.0, 1.0)


def _pool(x: torch.Tensor, dim: int, edges: torch.Tensor) -> torch.Tensor:
    """Max over the source cells ``[i, i+1)`` that each output cell
    ``[edges[r], edges[r+1])`` overlaps (at least the one it lies in)."""
    n = x.shape[dim]
    start = edges[:-1].floor().long().clamp(0, n - 1)
    end = torch.maximum(edges[1:].ceil().long().clamp(max=n), start + 1)
    width = int((end - start).max())
    idx = torch.minimum(start[:, None] + torch.arange(width), end[:, None] - 1)
    picked = x.index_select(dim, idx.flatten().to(x.device))
    shape = list(x.shape)
    shape[dim:dim + 1] = [len(start), width]
    return picked.reshape(shape).amax(dim + 1)


def reduce_frames(x: torch.Tensor, factor: int) -> torch.Tensor:
    """Max over aligned blocks of ``factor`` frames along dim 1 (the last block may be short)."""
    whole = x.shape[1] // factor * factor
    blocks = x[:, :whole].unflatten(1, (-1, factor)).amax(2)
    if whole < x.shape[1]:
        blocks = torch.cat([blocks, x[:, whole:].amax(1, keepdim=True)], 1)
    return blocks


def _reduced_magnitude(store_fb: torch.Tensor, rect: Rect, factor: int,
                       blocks: Callable[[int, int], torch.Tensor] | None = None) -> torch.Tensor:
    """``[ch, ceil(frames / factor), bins]``: the magnitude of ``rect`` of a
    ``[ch, frames, bins]`` store (complex coefficients or magnitudes), max over
    aligned blocks of ``factor`` frames. ``blocks``: the store's engine.view.overview
    block maxima, used (the same numbers, far faster) where the reduction falls on
    their block edges. Otherwise a complex store is turned into magnitude a chunk at
    a time, so a whole-file overview never holds a whole-file magnitude."""
    n, k = store_fb.shape[1], overview.BLOCK
    if blocks is not None and factor % k == 0 and rect.frame0 % k == 0 and \
            (rect.frame1 % k == 0 or rect.frame1 == n):
        x = blocks(rect.frame0, rect.frame1)[:, rect.frame0 // k:-(-rect.frame1 // k), rect.bins]
        return reduce_frames(x, factor // k) if factor > k else x
    if not store_fb.is_complex():
        x = store_fb[:, rect.frames, rect.bins]
        return reduce_frames(x, factor) if factor > 1 else x
    span = factor * max(1, CHUNK_FRAMES // factor)
    parts = []
    for f0 in range(rect.frame0, rect.frame1, span):
        x = magnitude_of(store_fb, (slice(None), slice(f0, min(rect.frame1, f0 + span)),
                                    rect.bins))
        parts.append(reduce_frames(x, factor) if factor > 1 else x)
    return torch.cat(parts, 1) if len(parts) > 1 else parts[0]


def frequency_edges(rect: Rect, height: int, *, transform, log_freq: bool) -> torch.Tensor:
    """Edges of the ``height`` output rows, bottom to top, in bin-cell coordinates of
    the rect: rows evenly spaced in Hz (or in log Hz), mapped through the transform's
    bins (linear for the STFT, logarithmic for constant-Q)."""
    lo, hi = transform.hz_of(rect.bin0 - 0.5), transform.hz_of(rect.bin1 - 0.5)
    r = torch.arange(height + 1, dtype=torch.float64) / height
    if log_freq:
        lo = max(lo, transform.hz_of(0.5))
        if hi <= lo:
            raise ParameterError("a log-frequency view needs the rect to reach above the "
                                 f"first bin ({transform.hz_of(0.5):.1f} Hz)")
        hz = lo * (hi / lo) ** r
    else:
        hz = lo + (hi - lo) * r
    edges = torch.tensor([transform.bin_of(float(f)) for f in hz], dtype=torch.float64)
    return torch.round((edges - (rect.bin0 - 0.5)) * 1e9) / 1e9  # no rounding noise at cell edges


def pooled_magnitude(store_fb: torch.Tensor, rect: Rect, *, width: int, height: int,
                     transform, log_freq: bool = False, blocks=None) -> torch.Tensor:
    """``store_fb``: ``[ch, frames, bins]`` coefficients or magnitudes -> max over
    channels, pooled to ``[height, width]`` with row 0 at the top (highest frequency)."""
    check_size(width, height)
    frames = rect.shape[1]
    factor = 1 << max(0, int(math.log2(frames / width)) - 1) if frames >= 4 * width else 1
    x = _reduced_magnitude(store_fb, rect, factor, blocks)
    if width != x.shape[1]:
        cols = torch.linspace(0, frames / factor, width + 1, dtype=torch.float64)
        x = _pool(x, 1, cols.clamp(max=x.shape[1]))
    x = x.amax(0)  # [width, bins]
    if log_freq or height != x.shape[1]:
        x = _pool(x, 1, frequency_edges(rect, height, transform=transform, log_freq=log_freq))
    return x.T.flip(0)


def level_tile_db(store_fb: torch.Tensor, rect: Rect, factor: int, *, ref: float,
                  blocks=None) -> np.ndarray:
    """dB of the loudest channel over ``rect``, max-pooled over aligned blocks of
    ``factor`` frames: float32 ``[bins, ceil(frames / factor)]``, row 0 = lowest
    bin. The view's GPU tiles hold these; its shader applies floor, ceiling,
    gamma and the colormap."""
    x = _reduced_magnitude(store_fb, rect, factor, blocks)
    db = 20 * torch.log10(torch.clamp(x.amax(0) / ref, min=1e-12))
    return db.T.contiguous().cpu().numpy()


MAX_SIDE = 32768  # pixels: what image viewers and PNG decoders take
MAX_PIXELS = 1 << 28  # 1 GiB of RGBA


def check_size(width: int, height: int) -> None:
    """Refuse an image size before allocating it."""
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE) or width * height > MAX_PIXELS:
        raise ParameterError(f"image size {width}x{height} is not valid; use 1 to {MAX_SIDE} "
                             f"pixels a side and at most {MAX_PIXELS // 2**20} megapixels")


def render(store_fb: torch.Tensor, rect: Rect, *, width: int, height: int, ref: float,
           transform, colormap: str = "viridis", top_db: float = 0.0,
           range_db: float = 100.0, log_freq: bool = False, blocks=None) -> np.ndarray:
    """RGBA uint8 ``[height, width, 4]`` of ``rect`` (see the module notes)."""
    lut = colormap_lut(colormap).numpy().view(np.int32)[:, 0]  # one RGBA pixel per int32
    pooled = pooled_magnitude(store_fb, rect, width=width, height=height, transform=transform,
                              log_freq=log_freq, blocks=blocks)
    # uint8 indices into numpy's table: a third of the time of torch's int64 gather
    index = to_unit(pooled, ref, top_db=top_db,
                    range_db=range_db).mul_(255).round_().to(torch.uint8).cpu()
    return lut[index.contiguous().numpy()].view(np.uint8).reshape(height, width, 4)


def packed_rgba(mag: torch.Tensor, phase: torch.Tensor, *, ref: float, top_db: float = 0.0,
                range_db: float = 100.0) -> np.ndarray:
    """Full-resolution packed texture of one channel's ``[1, bins, frames]`` magnitude
    and phase: R = magnitude in [0, 1] (dB scaled), G = phase mapped from [-pi, pi] to
    [0, 1], B = 0, A = 1. ``[bins, frames, 4]``, top = highest bin."""
    mag, phase = mag[0], phase[0]
    out = torch.zeros(*mag.shape, 4, dtype=torch.uint8)
    out[..., 0] = (to_unit(mag, ref, top_db=top_db,
                           range_db=range_db) * 255).round_().to(torch.uint8).cpu()
    out[..., 1] = ((phase + math.pi) / (2 * math.pi) * 255).round_().clamp_(0, 255) \
        .to(torch.uint8).cpu()
    out[..., 3] = 255
    return out.flip(0).numpy()
