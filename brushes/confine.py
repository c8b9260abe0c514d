"""Keep a stroke's sound within the stroke's time.

An edit written as coefficients is heard as far as the atoms it touches
reach. On a short-time Fourier document that is half a window; on a
constant-Q one the low bands' atoms last up to a slice (1.5 s), and each
slice is analysed as periodic, so an edit near a slice's edge is also heard
at the slice's other end (a gain of -30 dB at 45 Hz by a slice edge was heard at -27 dB there,
against -22 dB where it was painted). :func:`confine` corrects that: the
change's sound outside the stroke's time (faded over ``FADE_S`` beyond its
first and last frame) is analysed and taken off the coefficients. The cells
the stroke painted keep what it painted wherever the correction does not
reach (it is not written where it is below ``FLOOR`` of full scale), and the
audio is the before-stroke audio plus the change, faded: exactly what the
stroke painted, in its time, and nothing elsewhere.
"""

import math
from collections.abc import Callable, Generator

import torch

from brushes.canvas import StrokeCanvas
from engine.document import Document
from engine.region import Rect

FADE_S = 0.01  # a change's sound fades out over this, outside the stroke's time
FLOOR = 1e-7  # corrections below this fraction of full scale (-140 dB) are not written


def covered_frames(canvas: StrokeCanvas) -> tuple[int, int] | None:
    """The first and one past the last frame the stroke covered, or None."""
    rect = canvas.covered_rect()
    if rect is None:
        return None
    coverage = canvas.coverage(rect)
    covered = torch.nonzero(coverage.reshape(-1, coverage.shape[-1]).amax(0) > 0).flatten()
    if len(covered) == 0:
        return None
    return rect.frame0 + int(covered[0]), rect.frame0 + int(covered[-1]) + 1


def drain(steps: Generator):
    """Run a generator of steps to its end; what it returns."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def confine(doc: Document, canvas: StrokeCanvas, rect: Rect, frames: tuple[int, int],
            across_seams: Callable[[torch.Tensor, int], torch.Tensor] | None = None
            ) -> Rect | None:
    """Take the sound of the stroke's change over ``rect`` (the document now against
    ``canvas``'s before-stroke state) off outside frames ``[frames[0], frames[1])``;
    the rect rewritten, or None when nothing needed to be. ``across_seams(heard,
    sample0)``: the change's sound as the stroke paints it away from the transform's
    seams (brushes.seams), for a transform that has them; the change's sound is that."""
    return drain(confining(doc, canvas, rect, frames, across_seams))


def confining(doc: Document, canvas: StrokeCanvas, rect: Rect, frames: tuple[int, int],
              across_seams: Callable[[torch.Tensor, int], torch.Tensor] | None = None
              ) -> Generator[None, None, Rect | None]:
    """:func:`confine` in steps (each an inverse or a forward transform of the
    stroke's span), so a stroke's end can be spread over turns of the GUI."""
    t, sr, n = doc.transform, doc.sample_rate, doc.length
    s0, s1 = t.samples_affected(rect.frame0, rect.frame1, n)
    region = Rect(0, doc.n_bins, *t.frames_needed(s0, s1, n))
    before, now = canvas.complex_before(rect), doc.read_complex(rect, canvas.channel)
    change = torch.zeros(before.shape[:1] + region.shape, dtype=before.dtype, device=doc.device)
    change[:, rect.bins, rect.frame0 - region.frame0:rect.frame1 - region.frame0] = now - before
    heard = t.inverse_span(change, region.frame0, s0, s1, n).double()
    yield
    fade = max(round(FADE_S * sr), 1)
    first, last = round(t.seconds_of(frames[0]) * sr), round(t.seconds_of(frames[1] - 1) * sr)
    s = torch.arange(s0, s1, dtype=torch.float64, device=heard.device)
    ramp = torch.clamp(torch.minimum(s - (first - fade), (last + fade) - s) / fade, 0, 1)
    kept = 0.5 - 0.5 * torch.cos(math.pi * ramp)
    if across_seams is not None and t.seam_margin:
        outside = across_seams(heard, s0) * kept - heard  # the seams' bursts, and outside
        yield
    else:
        outside = heard * (kept - 1)  # minus what lies outside
    if not bool((outside != 0).any()):
        return None
    a, b = t.frame_span(region.frame0, region.frame1)
    seg = torch.zeros(outside.shape[0], b - a, dtype=torch.float32, device=doc.device)
    seg[:, s0 - a:s1 - a] = outside.float()
    delta = t.forward_segment(seg, region.frame0, region.frame1)
    yield
    keep = delta.abs() > FLOOR * t.full_scale
    bins = torch.nonzero(keep.any(0).any(1)).flatten()
    cols = torch.nonzero(keep.any(0).any(0)).flatten()
    if len(bins) == 0:
        return None
    written = Rect(int(bins[0]), int(bins[-1]) + 1, region.frame0 + int(cols[0]),
                   region.frame0 + int(cols[-1]) + 1)
    canvas.touch(written)  # the undo patch must hold every cell rewritten
    inner = (slice(None), slice(written.bin0, written.bin1),
             slice(written.frame0 - region.frame0, written.frame1 - region.frame0))
    now = doc.read_complex(written, canvas.channel)
    return doc.write_complex(written, torch.where(keep[inner], now + delta[inner], now),
                             channel=canvas.channel)

