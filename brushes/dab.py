"""One dab: where it lands (seconds, Hz), its size in bins and frames, and its mask."""

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


@dataclass(frozen=True)
class Footprint:
    """A dab in document cells: centre and radii in (fractional) bins and frames."""

    bin: float
    frame: float
    r_bins: float
    r_frames: float

    @classmethod
    def of(cls, doc: Document, dab: Dab, freq: float | None = None) -> "Footprint":
        p = dab.params
        freq = dab.freq if freq is None else freq
        if p["radius_cents"] > 0:
            r_hz = freq * (2 ** (p["radius_cents"] / 1200) - 1)
        else:
            r_hz = p["radius_hz"]
        return cls(doc.bin_of(freq), doc.frame_of(dab.time), max(doc.bin_of(r_hz), 0.5),
                   max(doc.frame_of(p["radius_ms"] / 1000), 0.5))

    def rect(self, grow_bins: int = 0, grow_frames: int = 0) -> Rect:
        return Rect(math.ceil(self.bin - self.r_bins) - grow_bins,
                    math.floor(self.bin + self.r_bins) + 1 + grow_bins,
                    math.ceil(self.frame - self.r_frames) - grow_frames,
                    math.floor(self.frame + self.r_frames) + 1 + grow_frames)

    def mask(self, rect: Rect, hardness: float, device=None) -> torch.Tensor:
        """``[bins, frames]`` weights over ``rect``: 1 inside ``hardness`` of the
        radius, falling smoothly (a Gaussian shape reaching exactly 0) to the edge."""
        b = (torch.arange(rect.bin0, rect.bin1, device=device) - self.bin) / self.r_bins
        f = (torch.arange(rect.frame0, rect.frame1, device=device) - self.frame) / self.r_frames
        d = torch.sqrt(b[:, None] ** 2 + f[None, :] ** 2)
        if hardness >= 1.0:
            return (d <= 1.0).float()
        u = ((d - hardness) / (1.0 - hardness)).clamp(0.0, 1.0)
        edge = math.exp(-4.5)
        return ((torch.exp(-4.5 * u * u) - edge) / (1.0 - edge)).float()
