"""A stroke heard where it was painted, on a transform whose atoms sound beyond
their frame (``Transform.confined_edits``: constant-Q, whose low bands' atoms reach
0.62 s at 44.1 kHz either side). On a short-time Fourier document nothing here runs.

One entry point, :func:`keeping_local`, is a stroke's end there, in steps:

1. where the stroke is heard: :class:`Heard` given by whoever made the stroke (a
   filled rectangle's frames; a lasso's or feathered selection's bands, a
   :class:`~brushes.locality.gate.BandGate`), or else the frames it covered;
2. a plain stroke of a kernel whose cells depend only on its coverage is first
   painted beyond its time ends (:mod:`brushes.locality.ends`), so the cells just
   outside it stop carrying what it erased into its first and last moments;
3. the sound of its change outside where it is heard is taken off the
   coefficients (:mod:`brushes.locality.confine`).

What the stroke painted reaches this as :class:`Painted` (``record.py``), a record
the stroke keeps, not attributes set on it from outside; what the pipeline needs of a
stroke is :class:`LocalStroke`."""

from collections.abc import Generator

from brushes.locality.confine import confining, covered_frames
from brushes.locality.ends import paint_beyond_ends
from brushes.locality.record import Heard, LocalStroke, Painted
from engine.region import Rect

__all__ = ["Heard", "LocalStroke", "Painted", "keeping_local"]


def keeping_local(stroke: LocalStroke) -> Generator[None, None, Rect | None]:
    """The end of ``stroke`` on a transform that confines edits, a bounded piece of
    work a step; returns the rect it rewrote (None: nothing)."""
    doc, painted, kernel = stroke.doc, stroke.record, stroke.kernel
    if stroke.dirty is None or not doc.transform.confined_edits:
        return None
    heard = painted.heard
    frames = heard.frames or covered_frames(stroke.canvas)
    envelope = None
    if heard.frames is None and heard.gate is None and not painted.filled \
            and kernel.wash and kernel.batchable:
        ends = yield from paint_beyond_ends(stroke)
        frames, envelope = (ends.frames, ends.envelope) if ends else (None, None)
    if frames is None:
        return None
    return (yield from confining(doc=doc, canvas=stroke.canvas, rect=stroke.dirty,
                                 frames=frames, gate=heard.gate, envelope=envelope))
