"""A stroke heard without the seams of a sliced transform while it is painted.

A stroke's end renders it again on the slicing shifted by half a slice
(:mod:`brushes.seams`); until then, on a constant-Q document, a stroke across a
slice's edge was heard with a burst there: erasing a tone while it played left
-9 to -15 dB of it at every edge the pen had passed. :class:`LiveSeams` paints
each call's dabs also on one-slice documents of the before-stroke audio, one per
slice of the shifted slicing the stroke reaches (each centred on a seam), and
:meth:`LiveSeams.blended` gives the resynthesizer each rendering where it is
clean, as the end does. The document's cells stay the plain painting's until
the end makes them what is heard.
"""

from collections.abc import Callable
from dataclasses import replace

import torch

from brushes.dab import Dab
from brushes.seams import stroke_shifted
from engine.progress import drain
from engine.region import Rect

SETTLE = 1  # slices between the pen's and the furthest part that keeps its document


class _Part:
    """One slice of the shifted slicing, ``[start, stop)`` in file samples: a document
    of the before-stroke audio there (and ``reach`` samples either side, for a kernel
    that reads that far: a whole number of slices) and the stroke painted on it; once
    :meth:`settle` d, only its sound."""

    def __init__(self, stroke, start: int, stop: int, reach: int):
        self.start, self.stop, self.origin = start, stop, start - reach
        self.stroke = drain(stroke_shifted(stroke, self.origin, stop + reach))
        self.doc = self.stroke.doc
        self._sound: torch.Tensor | None = None
        self.doc.add_listener(self._written)

    def _written(self, rect: Rect, channels: tuple[int, ...]) -> None:
        self._sound = None

    def paint(self, dabs: list[Dab]) -> None:
        self.stroke.paint_dabs([replace(d, time=d.time - self.origin / self.doc.sample_rate)
                                for d in dabs])

    def settle(self) -> None:
        """Keep the sound, drop the document and stroke (a stereo part's document and
        stroke take about 6.6 MiB, its sound 0.5 MiB)."""
        self.sound()
        self.doc.remove_listener(self._written)
        self.doc = self.stroke = None

    @property
    def settled(self) -> bool:
        return self.doc is None

    def sound(self) -> torch.Tensor:
        """Its samples ``[start, stop)``, ``[channels, n]`` (kept until it is painted
        again)."""
        if self._sound is None:
            doc, a, b = self.doc, self.start - self.origin, self.stop - self.origin
            fa, fb = doc.transform.frames_needed(a, b, doc.length)
            self._sound = doc.transform.inverse_span(doc.coefficients(fa, fb), fa, a, b,
                                                     doc.length)
        return self._sound


class LiveSeams:
    """While ``stroke`` (a :class:`brushes.painter.Stroke` on a transform with seams)
    is painted: its dabs painted again on the shifted slicing, one slice at a time as
    the stroke reaches it. A part more than SETTLE slices from the pen keeps only its
    sound (a long stroke held about 5 MiB a second of painted audio, stereo) and is made
    again if the stroke comes back. ``heard(sample0, sample1)`` is told each span whose sound
    changed that the document's own writes do not name (to splice it again)."""

    def __init__(self, stroke, heard: Callable[[int, int], None]):
        self.stroke, self.heard = stroke, heard
        self.parts: dict[int, _Part] = {}  # by the seam each is centred on (slice index)
        t = stroke.doc.transform
        self.width, self.margin = 2 * t.seam_margin, t.seam_margin  # a slice, half one

    def paint(self, dabs: list[Dab], changed: Rect) -> None:
        """After the stroke painted ``dabs`` (they changed ``changed``, now part of its
        dirty rect): paint them on every part they reach, making the parts they reach
        first (those get every earlier dab of the stroke near them too)."""
        doc, stroke = self.stroke.doc, self.stroke
        t, sr = doc.transform, doc.sample_rate
        reach = round(stroke.kernel.reach_s(stroke.params) * sr)
        reach = -(-reach // self.width) * self.width  # a clone's source, in slices
        a = round(t.seconds_of(changed.frame0 - 1) * sr)
        b = round(t.seconds_of(changed.frame1) * sr)
        first, last = (a + self.margin) // self.width, (b + self.margin) // self.width
        for seam in range(first, last + 1):
            part = self.parts.get(seam)
            if part is None or part.settled:  # (made again, with every dab near it)
                start = seam * self.width - self.margin
                part = self.parts[seam] = _Part(stroke, start, start + self.width, reach)
                part.paint(_near([d for call in stroke.painted for d in call], part, sr))
            else:
                part.paint(_near(dabs, part, sr))
            self.heard(max(part.start, 0), min(part.stop, doc.length))
        for seam, part in self.parts.items():
            if not part.settled and not first - SETTLE <= seam <= last + SETTLE:
                part.settle()

    def blended(self, sound: torch.Tensor, sample0: int) -> torch.Tensor:
        """``sound``: the document's samples ``[channels, n]`` from ``sample0``; returns
        them with the stroke's channels blended with each part's sound across the seams."""
        t, stop = self.stroke.doc.transform, sample0 + sound.shape[-1]
        rows = self.stroke.doc.channel_indices(self.stroke.channel)
        for part in self.parts.values():
            a, b = max(sample0, part.start), min(stop, part.stop)
            if b <= a:
                continue
            here = sound[rows[0]:rows[-1] + 1, a - sample0:b - sample0]
            other = part.sound()[:, a - part.start:b - part.start]
            sound[rows[0]:rows[-1] + 1, a - sample0:b - sample0] = \
                t.blend_across_seams(here, other, a)
        return sound

    def spans(self) -> list[tuple[int, int]]:
        """The samples whose sound the parts changed (to splice again without them)."""
        n = self.stroke.doc.length
        return [(max(p.start, 0), min(p.stop, n)) for p in self.parts.values()]


def _near(dabs: list[Dab], part: _Part, sr: int) -> list[Dab]:
    """The dabs whose footprint (a hard dab's radius, twice that soft, at least two
    frames) can fall within ``part``'s samples."""
    hop = part.doc.transform.hop

    def near(d: Dab) -> bool:
        wide = 2 * d.params["radius_ms"] / 1000 * sr + 2 * hop
        return part.start - wide <= d.time * sr <= part.stop + wide
    return [d for d in dabs if near(d)]
