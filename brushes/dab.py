"""One dab: where it lands (seconds, Hz), its size in bins and frames, and its mask.

Hardness: the dab's outline (``radius_ms`` x ``radius_hz`` or ``radius_cents``,
as the GUI draws it) is where the effect is half. Inside ``hardness`` of the
radius the effect is full; from there it falls as a raised cosine through
one half at the outline to nothing at ``2 - hardness`` radii. Hardness 1 is a
hard edge exactly on the outline; hardness 0 falls from the centre and
reaches as far again outside the outline.

A footprint is never narrower than what the transform resolves where it is
painted: in frequency at least the half-width a sinusoid occupies there
(the window's main lobe, or a constant-Q band's support), in time at least
one frame either side."""

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from engine.model.document import Document
from engine.region import Rect


@dataclass(frozen=True)
class Dab:
    time: float  # seconds
    freq: float  # Hz
    params: dict = field(compare=False)  # every parameter's value for this dab
    step: tuple[float, float] = (0.0, 0.0)  # (seconds, Hz) moved since the previous dab


def radius_hz(params: dict, freq: float) -> float:
    """The dab's frequency radius at ``freq``: from cents when set, else Hz."""
    if params["radius_cents"] > 0:
        return freq * (2 ** (params["radius_cents"] / 1200) - 1)
    return params["radius_hz"]


@dataclass(frozen=True)
class Footprint:
    """A dab in document cells: centre, radii below/above in (fractional) bins and
    in frames, and its hardness."""

    bin: float
    frame: float
    r_below: float
    r_above: float
    r_frames: float
    hardness: float

    @classmethod
    def of(cls, doc: Document, dab: Dab, freq: float | None = None) -> "Footprint":
        p = dab.params
        freq = dab.freq if freq is None else freq
        r_hz = max(radius_hz(p, freq), doc.transform.resolution_hz(freq))
        centre = doc.bin_of(freq)
        return cls(centre, doc.frame_of(dab.time),
                   max(centre - doc.bin_of(freq - r_hz), 0.5),
                   max(doc.bin_of(freq + r_hz) - centre, 0.5),
                   max(doc.frame_of(p["radius_ms"] / 1000), 1.0), p["hardness"])



def footprint_rects(prints: list[Footprint]) -> tuple[np.ndarray, np.ndarray]:
    """Every footprint's fields ``[D, 6]`` (bin, frame, r_below, r_above, r_frames,
    hardness) and the cells it reaches ``[D, 4]`` (bin0, bin1, frame0, frame1: out to
    ``2 - hardness`` radii), computed at once (a long stroke has thousands of dabs)."""
    f = np.array([(fp.bin, fp.frame, fp.r_below, fp.r_above, fp.r_frames, fp.hardness)
                  for fp in prints], dtype=np.float64).reshape(-1, 6)
    reach = 2.0 - f[:, 5]
    rects = np.stack([np.ceil(f[:, 0] - reach * f[:, 2]), np.floor(f[:, 0] + reach * f[:, 3]) + 1,
                      np.ceil(f[:, 1] - reach * f[:, 4]), np.floor(f[:, 1] + reach * f[:, 4]) + 1],
                     1).astype(np.int64)
    return f, rects


def union_rect(rects: np.ndarray) -> Rect:
    return Rect(int(rects[:, 0].min()), int(rects[:, 1].max()), int(rects[:, 2].min()),
                int(rects[:, 3].max()))


def union_mask(fields: np.ndarray, rects: np.ndarray, *, opacity: list[float], rect: Rect,
               device=None) -> torch.Tensor:
    """``[bins, frames]`` over ``rect``: at each cell the largest ``mask * opacity`` of
    the dabs given by :func:`footprint_rects` (see the module notes for a mask). Every
    dab is evaluated on its own cells only, all dabs at once: a long stroke costs its
    dabs' area, not dabs times the stroke's area."""
    weight = _dab_weights(fields, rects) * np.asarray(opacity, np.float32)[:, None, None]
    if len(rects) == 1 and Rect(*(int(v) for v in rects[0])) == rect:  # one dab: its own mask
        return torch.from_numpy(weight[0]).to(device)
    r = torch.from_numpy(rects).to(device)
    height, width = weight.shape[1:]
    bins = r[:, :1] + torch.arange(height, device=device)  # [D, height]
    frames = r[:, 2:3] + torch.arange(width, device=device)
    inside = ((bins >= rect.bin0) & (bins < rect.bin1))[:, :, None] & \
        ((frames >= rect.frame0) & (frames < rect.frame1))[:, None, :]
    cell = (bins - rect.bin0)[:, :, None] * rect.shape[1] + (frames - rect.frame0)[:, None, :]
    out = torch.zeros(rect.shape[0] * rect.shape[1], device=device)
    out.scatter_reduce_(0, cell[inside], torch.from_numpy(weight).to(device)[inside], "amax")
    return out.reshape(rect.shape)


def _dab_weights(fields: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """``[D, height, width]`` float32: each dab's mask on the cells from its rect's
    corner (numpy: a dab or a few are the usual call, where torch's per-op cost is 6x)."""
    f = fields.astype(np.float32)
    height, width = int((rects[:, 1] - rects[:, 0]).max()), int((rects[:, 3] - rects[:, 2]).max())
    b = rects[:, :1] + np.arange(height) - f[:, :1]  # [D, height], bins from the centre
    b = np.where(b < 0, b / f[:, 2:3], b / f[:, 3:4]).astype(np.float32)
    t = ((rects[:, 2:3] + np.arange(width) - f[:, 1:2]) / f[:, 4:5]).astype(np.float32)
    d = np.sqrt(b[:, :, None] ** 2 + t[:, None, :] ** 2)  # [D, height, width], radii
    h = f[:, 5, None, None]
    ramp = np.clip((d - h) / np.maximum(2 * (1 - h), np.float32(1e-12)), 0, 1)
    soft = np.float32(0.5) * (1 + np.cos(np.float32(math.pi) * ramp))
    return np.where(h >= 1.0, d <= 1.0 + 1e-6, soft).astype(np.float32)  # on the outline: inside
