"""A stroke's time ends on a transform that confines edits (constant-Q).

There a cell's atom sounds far from its frame (up to the transform's ``reach``,
0.62 s at 44.1 kHz, in the low bands), so the cells just before a stroke and
just after it still carry what it erases into its first and last moments. As
for a filled rectangle (app.session.selection), each end is painted beyond the
stroke by every frame that sounds in its time, and the stroke is heard only in
its own frames (brushes.locality.confine takes the rest off).

An end is painted with the bands the stroke has there: per band, the most it
covered within a dab's length of that end, held out to the frames beyond and
back over that dab's length. A soft dab's fade in time (a 50 ms ramp, shorter
than a 440 Hz atom) cannot be painted cell by cell; it is the share of the
change kept in time instead (:attr:`Ends.profile`): the stroke's largest
coverage per frame there over the held one.
"""

import math
from collections.abc import Generator

import numpy as np
import torch

from brushes.locality.confine import covered_frames
from brushes.locality.record import LocalStroke
from engine.region import Rect


class Ends:
    """Where a stroke is heard: its covered frames ``[frame0, frame1)`` and, per
    frame, the share of its change kept there (1 but near its ends)."""

    def __init__(self, transform, frames: tuple[int, int], profile: np.ndarray):
        self.transform, self.frames, self.profile = transform, frames, profile

    def envelope(self, a: int, b: int) -> torch.Tensor:
        """The share kept at samples ``[a, b)``, float64 (each end's beyond it)."""
        t = self.transform
        at = np.arange(a, b, dtype=np.float64) / t.hop
        return torch.from_numpy(np.interp(at, np.arange(*self.frames), self.profile))


def paint_beyond_ends(stroke: LocalStroke) -> Generator[None, None, Ends | None]:
    """Paint ``stroke`` (a :class:`brushes.stroke.Stroke` of a kernel whose cells
    depend only on its coverage) beyond its first and last covered frame, over the
    frames that sound within its time (its samples widened by the transform's
    ``reach``), an end a step; returns where it is heard, or None if it covered
    nothing."""
    frames = covered_frames(stroke.canvas)
    if frames is None:
        return None
    doc, t, canvas = stroke.doc, stroke.doc.transform, stroke.canvas
    sr, n = doc.sample_rate, doc.length
    c0, c1 = frames
    s0, s1 = (round(t.seconds_of(f) * sr) for f in (c0, c1))
    f0, f1 = t.frames_heard_in(s0, s1, n)
    dabs = sorted(stroke.record.dabs(), key=lambda d: d.time)
    bins = canvas.covered_rect()
    profile = np.ones(c1 - c0)
    ends = []
    for dab, first in ((dabs[0], True), (dabs[-1], False)):
        hold = max(1, math.ceil(t.frame_of(2 * dab.params["radius_ms"] / 1000)))
        held = Rect(bins.bin0, bins.bin1, *((c0, min(c0 + hold, c1)) if first
                                            else (max(c1 - hold, c0), c1)))
        coverage = canvas.coverage(held)
        column = coverage.amax(-1)
        top = float(column.max())
        if top <= 0:
            continue
        share = (coverage.amax(0) / top).double().cpu().numpy()
        cols = slice(held.frame0 - c0, held.frame1 - c0)
        profile[cols] = np.minimum(profile[cols], share)
        beyond = Rect(bins.bin0, bins.bin1, *((f0, held.frame1) if first else (held.frame0, f1)))
        ends.append((beyond, column, dab))
    for beyond, column, dab in ends:  # after the profile: this raises the coverage
        rows = torch.nonzero(column > 0).flatten()
        part = Rect(beyond.bin0 + int(rows[0]), beyond.bin0 + int(rows[-1]) + 1, beyond.frame0,
                    beyond.frame1)
        mask = column[part.bin0 - beyond.bin0:part.bin1 - beyond.bin0, None]
        stroke.apply(part, mask.expand(-1, part.shape[1]).contiguous(), [dab])
        yield
    return Ends(t, frames, profile)

