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

import torch

from engine.document import Document
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

    @property
    def reach(self) -> float:
        """How far the effect reaches, in radii."""
        return 2.0 - self.hardness

    def rect(self, grow_bins: int = 0, grow_frames: int = 0) -> Rect:
        k = self.reach
        return Rect(math.ceil(self.bin - k * self.r_below) - grow_bins,
                    math.floor(self.bin + k * self.r_above) + 1 + grow_bins,
                    math.ceil(self.frame - k * self.r_frames) - grow_frames,
                    math.floor(self.frame + k * self.r_frames) + 1 + grow_frames)

    def distance(self, rect: Rect, device=None) -> torch.Tensor:
        """``[bins, frames]`` distance from the centre in radii (1 on the outline)."""
        b = torch.arange(rect.bin0, rect.bin1, device=device, dtype=torch.float32) - self.bin
        b = torch.where(b < 0, b / self.r_below, b / self.r_above)
        f = (torch.arange(rect.frame0, rect.frame1, device=device) - self.frame) / self.r_frames
        return torch.sqrt(b[:, None] ** 2 + f[None, :] ** 2)

    def mask(self, rect: Rect, device=None) -> torch.Tensor:
        """``[bins, frames]`` weights over ``rect`` (see the module notes)."""
        d = self.distance(rect, device)
        h = self.hardness
        if h >= 1.0:
            return (d <= 1.0 + 1e-6).float()  # a cell on the outline is inside
        u = ((d - h) / (2 * (1 - h))).clamp(0.0, 1.0)
        return 0.5 * (1 + torch.cos(math.pi * u))
