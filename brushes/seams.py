"""A stroke heard without the seams of a sliced transform.

A constant-Q document analyses each slice as periodic, so a stroke across a
slice's edge is heard with a burst there: the cells it changed no longer sum to
a signal that meets the next slice's (a tone drawn across slices came out with
-11 to -14 dB of noise about it at every edge). The slicing shifted by the
transform's ``seam_margin`` (half a slice) has its edges at these slices'
middles, and the same bands on the same time grid. :class:`SeamRendering`
paints the stroke's dabs again on a document of the before-stroke audio cut
where that slicing starts, and the transform keeps each rendering where it is
clean (:meth:`Transform.blend_across_seams`).
"""

import math
from collections.abc import Generator, Iterator
from dataclasses import replace

import torch

from brushes.canvas import StrokeCanvas
from brushes.confine import changed_cells, heard_in_parts, inverse_part
from engine.audio import Audio
from engine.document import Document
from engine.progress import drain
from engine.region import Rect

REPLAY_DABS = 64  # dabs a call when painting again: few calls, each over a bounded rect


class SeamRendering:
    """``stroke``'s change (a :class:`brushes.painter.Stroke`, not ended) over samples
    ``[sample0, sample1)`` as the stroke paints it away from the seams: its dabs
    painted again, a call at a time (:meth:`steps`, so a long stroke's end can be
    spread over frames), then :meth:`blended` with the change as heard."""

    def __init__(self, stroke, sample0: int, sample1: int):
        t, sr = stroke.doc.transform, stroke.doc.sample_rate
        slice_len = 2 * t.seam_margin
        reach = math.ceil(stroke.kernel.reach_s(stroke.params) * sr / slice_len) * slice_len
        self.stroke = stroke
        self.start = sample0 - t.seam_margin - reach  # where a slice of the shifted slicing starts
        self.stop = sample1 + t.seam_margin + reach
        self.part = self.again = None

    def steps(self) -> Iterator[None]:
        """Make the document of the before-stroke audio (a part of it a step, then
        its analysis a chunk a step), then paint the dabs again, one call a step."""
        stroke, start, sr = self.stroke, self.start, self.stroke.doc.sample_rate
        self.again = yield from stroke_shifted(stroke, start, self.stop)
        self.part = self.again.doc
        shift = round(self.part.transform.frame_of(start / sr))  # exact: a slice's middle
        yield
        for dabs in _calls(stroke):
            self.again.paint_dabs([replace(d, time=d.time - start / sr) for d in dabs])
            yield
        for rect, mask, dabs in stroke.applied:  # a selection filled at once
            self._apply_again(rect, mask, [replace(d, time=d.time - start / sr) for d in dabs],
                              shift)
            yield

    def _apply_again(self, rect: Rect, mask: torch.Tensor, dabs: list, shift: int) -> None:
        """:meth:`Stroke.apply` of ``rect`` (file frames) on the shifted document, whose
        frame 0 is the file's frame ``shift``: the part of it that document holds. A rect
        from the file's first frame or to its last goes on past the file there (its
        edge column repeated): that document's cells beyond the file sound in it (a
        -60 dB fill of a tone from 0 s left it at -7 to -33 dB over the first 0.2 s)."""
        part = self.part
        there = Rect(rect.bin0, rect.bin1, rect.frame0 - shift, rect.frame1 - shift)
        wide = Rect(rect.bin0, rect.bin1, 0 if rect.frame0 == 0 else there.frame0,
                    part.n_frames if rect.frame1 == self.stroke.doc.n_frames else there.frame1)
        wide = wide.union(there)
        mask = torch.nn.functional.pad(mask[None], (there.frame0 - wide.frame0,
                                                    wide.frame1 - there.frame1),
                                       mode="replicate")[0]
        inside = wide.intersect(Rect(0, part.n_bins, 0, part.n_frames))
        if not inside.empty:
            cols = slice(inside.frame0 - wide.frame0, inside.frame1 - wide.frame0)
            self.again.apply(inside, mask[inside.bin0 - wide.bin0:inside.bin1 - wide.bin0,
                                          cols], dabs)

    def blended(self, heard: torch.Tensor, sample0: int, bands: slice = slice(None),
                weights: torch.Tensor | None = None) -> torch.Tensor:
        """``heard``: the change's sound over ``[sample0, sample0 + heard.shape[-1])``
        (of ``bands`` only, times ``weights`` per bin if given); returns it with each
        rendering where it is clean."""
        part, t, again = self.part, self.part.transform, self.again
        if again.dirty is None:
            return heard
        a = sample0 - self.start

        def change(fa: int, fb: int) -> torch.Tensor:
            return changed_cells(part, again.canvas, again.dirty, fa, fb, bands, weights)

        other = inverse_part(t, change, a, a + heard.shape[-1], part.length)
        return t.blend_across_seams(heard, other.double(), sample0)


def _calls(stroke) -> list[list]:
    """The stroke's dabs, in calls as painted; a kernel whose cells depend only on
    the stroke's coverage gets them REPLAY_DABS at a time (the same cells, in a
    fraction of the calls: a 200-dab gain stroke ended in 240 ms one call an event)."""
    if not (stroke.kernel.wash and stroke.kernel.batchable):
        return stroke.painted
    dabs = [d for call in stroke.painted for d in call]
    return [dabs[i:i + REPLAY_DABS] for i in range(0, len(dabs), REPLAY_DABS)]


def stroke_shifted(stroke, start: int, stop: int) -> Generator[None, None, object]:
    """A new stroke like ``stroke`` (not ended) on a document of its before-stroke
    audio over samples ``[start, stop)``, ``start`` a slice's middle (so that
    document's slicing is the shifted one), made a part a step (its audio, then its
    analysis a chunk a step)."""
    doc, t, sr = stroke.doc, stroke.doc.transform, stroke.doc.sample_rate
    content = (yield from audio_before_in_parts(doc, stroke.canvas, stroke.dirty, start,
                                                stop)).cpu().numpy()
    part = yield from Document.analysing(
        Audio(_samples(doc.audio.samples, stroke.channel, start, stop), sr),
        transform=t, device=doc.device, origin=start, content=content)
    shift = round(t.frame_of(start / sr))  # frames; exact: start is a slice's middle
    limit = None if stroke.limit is None else _moved(stroke.limit, shift, doc.n_frames)
    return type(stroke)(part, stroke.brush, {**stroke.params, "channel": -1}, {}, None,
                        limit=limit)


def _samples(x, channel: int | None, start: int, stop: int):
    """``x[:, start:stop]`` (one channel's, if given), zero outside it."""
    x = x if channel is None else x[channel:channel + 1]
    out = torch.zeros((x.shape[0], stop - start), dtype=torch.float32)
    lo, hi = max(start, 0), min(stop, x.shape[-1])
    if hi > lo:
        out[:, lo - start:hi - start] = torch.from_numpy(x[:, lo:hi])
    return out.numpy()


def _moved(limit, shift: int, n_frames: int):
    """A selection's weights for a document whose frame 0 is ``limit``'s ``shift``;
    zero beyond the file's ``n_frames``."""
    def moved(rect: Rect) -> torch.Tensor:
        there = Rect(rect.bin0, rect.bin1, rect.frame0 + shift, rect.frame1 + shift)
        inside = there.intersect(Rect(rect.bin0, rect.bin1, 0, n_frames))
        weight = torch.zeros(rect.shape)
        if not inside.empty:
            part = limit(inside)
            weight = weight.to(part.device, part.dtype)
            weight[:, inside.frame0 - there.frame0:inside.frame1 - there.frame0] = part
        return weight
    return moved


def audio_before(doc: Document, canvas: StrokeCanvas, rect: Rect, start: int,
                 stop: int) -> torch.Tensor:
    """Samples ``[start, stop)`` of the document before the stroke (which changed only
    within ``rect``), zero outside the file."""
    return drain(audio_before_in_parts(doc, canvas, rect, start, stop))


def audio_before_in_parts(doc: Document, canvas: StrokeCanvas, rect: Rect, start: int,
                          stop: int) -> Generator[None, None, torch.Tensor]:
    """:func:`audio_before`, a part a step."""
    lo, hi = max(start, 0), min(stop, doc.length)

    def coefficients(fa: int, fb: int) -> torch.Tensor:
        coeffs = doc.read_complex(Rect(0, doc.n_bins, fa, fb), canvas.channel).clone()
        r = rect.intersect(Rect(0, doc.n_bins, fa, fb))
        if not r.empty:
            coeffs[:, r.bins, r.frame0 - fa:r.frame1 - fa] = canvas.complex_before(r)
        return coeffs

    audio = yield from heard_in_parts(doc.transform, coefficients, lo, hi, doc.length)
    return torch.nn.functional.pad(audio, (lo - start, stop - hi))
