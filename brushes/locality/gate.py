"""A filled selection heard where it is, band by band, on a transform that
confines edits (constant-Q).

There a cell's atom sounds up to the transform's ``reach`` (0.62 s at
44.1 kHz) from its frame, so a fill must paint beyond a selection's time and
keep the change's sound only inside it (brushes.locality.confine). A hard-edged rectangle's
bands all start and end at the same times, and a fade in time does that
(app.session.selection). A lasso's bands, or a feathered or inverted selection's,
start and end at their own times: filled where it was, a -60 dB lasso left a
tone inside it at -7 to -18 dB within 0.1 s of its edges, and changed it by
-10 dB outside.

:class:`BandGate` paints each band over the frames that sound where the
selection holds it (:meth:`BandGate.painted`), and keeps each band's sound
where the selection holds that band: the bands are grouped (neighbours whose
weight over time differs by at most ``MERGE_S`` in all), each group's sound is
rendered from its own cells, and weighed in time by the most of its bands'
weights over what was painted, faded over ``FADE_S`` past a hard edge
(:meth:`BandGate.parts`).
"""

import math
from collections.abc import Callable, Generator
from functools import partial

import torch

from engine.model.document import Document
from engine.region import Rect

FADE_S = 0.01  # a band's sound fades out over this past the selection's hard edge
MERGE_S = 0.02  # neighbouring bands whose weights differ by this (in seconds of full
#                 weight, over the whole fill) are weighed as one group


class BandGate:
    """``weight(rect)``: the selection's weight of each cell of ``rect`` (``[bins,
    frames]``, any rect of the file's cells); ``rect``: the cells it weighs above
    zero. ``sharp``: its time edges are hard (a band's sound is whole to its edge
    and fades out past it)."""

    def __init__(self, doc: Document, weight, rect: Rect, *, sharp: bool):
        t = doc.transform
        self.doc, self.weight = doc, weight
        self.margin = math.ceil(t.reach / t.hop)  # frames an atom reaches
        fade = max(1, round(FADE_S * doc.sample_rate / t.hop))
        self.grow, self.smooth = (fade // 2, fade - fade // 2) if sharp else (0, fade // 2)
        self.rect = Rect(rect.bin0, rect.bin1, max(0, rect.frame0 - self.margin),
                         min(doc.n_frames, rect.frame1 + self.margin))
        self.groups: list[tuple[int, int]] = []

    def _weights(self, rect: Rect) -> torch.Tensor:
        """``weight`` of ``rect``, zero for cells outside the file."""
        out = torch.zeros(rect.shape, device=self.doc.device)
        inside = rect.clip(self.doc.n_bins, self.doc.n_frames)
        if not inside.empty:
            out[inside.bin0 - rect.bin0:inside.bin1 - rect.bin0,
                inside.frame0 - rect.frame0:inside.frame1 - rect.frame0] = self.weight(inside)
        return out

    def painted(self, part: Rect) -> torch.Tensor:
        """The weight to paint the cells of ``part`` with: per band, the selection's
        largest weight within an atom's reach (each band is painted over the frames that
        sound where the selection holds it)."""
        m = self.margin
        near = self._weights(Rect(part.bin0, part.bin1, part.frame0 - m, part.frame1 + m))
        return torch.nn.functional.max_pool1d(near[None], 2 * m + 1, stride=1)[0]

    def _ratio(self, frame0: int, frame1: int) -> torch.Tensor:
        """``[bands of rect, frames]``: the selection's weight over the painted weight."""
        part = Rect(self.rect.bin0, self.rect.bin1, frame0, frame1)
        painted = self.painted(part)
        return torch.where(painted > 0, self._weights(part) / painted.clamp_min(1e-30), 0.0)

    def grouping(self) -> Generator[None, None, None]:
        """Find :attr:`groups`, a chunk of the selection's frames a step: runs of neighbouring
        bands ``[b0, b1)`` (of :attr:`rect`) painted somewhere, each band's weight over
        time within ``MERGE_S`` of the run's first's, summed band to band."""
        rows = self.rect.shape[0]
        apart = torch.zeros(max(rows - 1, 0), dtype=torch.float64)
        painted = torch.zeros(rows, dtype=torch.bool)
        f, step = self.rect.frame0, self.doc.transform.chunk_frames
        while f < self.rect.frame1:
            end = min(f + step, self.rect.frame1)
            ratio = self._ratio(f, end).cpu()
            apart += (ratio[1:] - ratio[:-1]).abs().sum(1, dtype=torch.float64)
            painted |= (ratio > 0).any(1)
            f = end
            yield
        most = MERGE_S * self.doc.sample_rate / self.doc.transform.hop
        groups, drift = [], 0.0
        for r in torch.nonzero(painted).flatten().tolist():
            if groups and groups[-1][1] == r and drift + float(apart[r - 1]) <= most:
                groups[-1] = (groups[-1][0], r + 1)
                drift += float(apart[r - 1])
            else:
                groups.append((r, r + 1))
                drift = 0.0
        self.groups = groups

    def parts(self, a: int, b: int
              ) -> tuple[torch.Tensor | None, list[tuple[slice, Callable[[], torch.Tensor]]]]:
        """How samples ``[a, b)`` are heard: a weight per band of the document for the
        groups heard at one weight all through them (None: every group at 1), and for
        each other group its bands and its weight per sample (made when asked)."""
        t, n_bins = self.doc.transform, self.doc.n_bins
        reach = self.grow + self.smooth + 1
        j0, j1 = a // t.hop - reach, -(-b // t.hop) + 1 + reach
        ratio = self._ratio(j0, j1)
        steady = torch.zeros(n_bins, device=self.doc.device)
        changing, whole = [], True
        at = torch.arange(a, b, dtype=torch.float64, device=self.doc.device) / t.hop - j0
        for b0, b1 in self.groups:
            gain = self._in_time(ratio[b0:b1].amax(0))
            rows = slice(self.rect.bin0 + b0, self.rect.bin0 + b1)
            inner = gain[reach:-reach]
            if bool((inner == inner[0]).all()):
                steady[rows] = inner[0]
                whole = whole and float(inner[0]) == 1
                continue
            whole = False
            changing.append((rows, partial(_interpolated, gain, at)))
        return (None if whole else steady), changing

    def _in_time(self, gain: torch.Tensor) -> torch.Tensor:
        """A group's weight per frame, opened ``grow`` frames past a hard edge and
        smoothed over ``smooth`` frames each side (a raised cosine)."""
        x = gain[None, None].double()
        if self.grow:
            x = torch.nn.functional.max_pool1d(x, 2 * self.grow + 1, stride=1, padding=self.grow)
        if self.smooth:
            kernel = torch.hann_window(2 * self.smooth + 3, periodic=False, dtype=torch.float64,
                                       device=x.device)[1:-1]
            x = torch.nn.functional.conv1d(x, (kernel / kernel.sum())[None, None],
                                           padding=self.smooth)
        return x[0, 0]


def _interpolated(per_frame: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    """``per_frame`` at fractional frames ``at`` (linear)."""
    i = at.floor().long()
    w = at - i
    return per_frame[i] * (1 - w) + per_frame[i + 1] * w
