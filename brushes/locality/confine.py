"""Keep a stroke's sound within the stroke's time.

An edit written as coefficients is heard as far as the atoms it touches
reach. On a short-time Fourier document that is half a window; on a
constant-Q one the low bands' atoms reach up to ``reach`` (0.62 s at 44.1 kHz)
either side of their frame, so a stroke is heard well before and after it.
:func:`confine` corrects that: the
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

from brushes.locality.gate import BandGate
from brushes.stroke_canvas import StrokeCanvas
from engine.model.document import Document
from engine.progress import drain
from engine.region import Rect

FADE_S = 0.01  # a change's sound fades out over this, outside the stroke's time
FLOOR = 1e-7  # corrections below this fraction of full scale (-140 dB) are not written
PART_SAMPLES = 1 << 17  # samples a step of the end of a long stroke (3 s at 44.1 kHz)


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


def confine(*, doc: Document, canvas: StrokeCanvas, rect: Rect, frames: tuple[int, int]
            ) -> Rect | None:
    """Take the sound of the stroke's change over ``rect`` (the document now against
    ``canvas``'s before-stroke state) off outside frames ``[frames[0], frames[1])``;
    the rect rewritten, or None when nothing needed to be."""
    return drain(confining(doc=doc, canvas=canvas, rect=rect, frames=frames))


def confining(*, doc: Document, canvas: StrokeCanvas, rect: Rect, frames: tuple[int, int],
              gate: BandGate | None = None,
              envelope: Callable[[int, int], torch.Tensor] | None = None
              ) -> Generator[None, None, Rect | None]:
    """:func:`confine` in steps, each over a part of the stroke's span (the sound of
    ``PART_SAMPLES``, or a forward transform and a write of as many), so a long
    stroke's end can be spread over turns of the GUI. ``gate``: a
    :class:`brushes.locality.gate.BandGate` keeps the change's sound where a selection is,
    band by band, in place of the fade outside ``frames``. ``envelope(a, b)``: the
    share of the change kept at samples ``[a, b)`` within them (brushes.locality.ends)."""
    t, sr, n = doc.transform, doc.sample_rate, doc.length
    s0, s1 = t.samples_affected(rect.frame0, rect.frame1, n)
    fade = max(round(FADE_S * sr), 1)
    first, last = round(t.seconds_of(frames[0]) * sr), round(t.seconds_of(frames[1] - 1) * sr)

    def change(fa: int, fb: int) -> torch.Tensor:
        return changed_cells(doc, canvas, rect, fa=fa, fb=fb)

    outside = None
    for a, b in sample_parts(s0, s1):
        if gate is not None:
            wanted, heard = yield from _gated(doc, canvas, rect, gate, a, b)
        else:
            heard = inverse_part(t, change, a=a, b=b, n=n).double()
            s = torch.arange(a, b, dtype=torch.float64, device=heard.device)
            ramp = torch.clamp(torch.minimum(s - (first - fade), (last + fade) - s) / fade, 0, 1)
            kept = 0.5 - 0.5 * torch.cos(math.pi * ramp)
            if envelope is not None:
                kept = kept * envelope(a, b).to(kept.device)
        if outside is None:
            outside = torch.zeros(heard.shape[:1] + (s1 - s0,), dtype=torch.float32,
                                  device=heard.device)
        if gate is not None:
            outside[:, a - s0:b - s0] = wanted - heard
        else:
            outside[:, a - s0:b - s0] = heard * (kept - 1)  # minus what lies outside
        yield
    if outside is None or not bool((outside != 0).any()):
        return None
    written = None
    for fa, fb in frame_parts(t, *t.frames_needed(s0, s1, n)):  # a transform and a write
        pa, pb = t.frame_span(fa, fb)
        lo, hi = max(pa, s0), min(pb, s1)
        if hi > lo:
            seg = torch.zeros(outside.shape[0], pb - pa, dtype=torch.float32, device=doc.device)
            seg[:, lo - pa:hi - pa] = outside[:, lo - s0:hi - s0]
            written = _correct(doc, canvas, fa, t.forward_segment(seg, fa, fb), written)
            yield
    return written


def _gated(doc: Document, canvas: StrokeCanvas, rect: Rect, gate, a: int, b: int
           ) -> Generator[None, None, tuple[torch.Tensor, torch.Tensor]]:
    """Samples ``[a, b)`` of the change's sound as the gate keeps it, and as heard, a
    group of bands a step."""
    def sound_of(bands: slice, weights: torch.Tensor | None) -> torch.Tensor:
        """The sound of the change in ``bands``, times ``weights`` per band if given."""
        def cells(fa: int, fb: int) -> torch.Tensor:
            return changed_cells(doc, canvas, rect, fa=fa, fb=fb, bands=bands, weights=weights)
        return inverse_part(doc.transform, cells, a=a, b=b, n=doc.length).double()

    heard = sound_of(slice(None), None)
    yield
    steady, changing = gate.parts(a, b)
    if steady is None:  # every band at full weight
        wanted = heard
    elif bool(steady.any()):
        wanted = sound_of(slice(None), steady)
    else:
        wanted = torch.zeros_like(heard)
    for bands, gain in changing:
        yield
        wanted = wanted + sound_of(bands, None) * gain()
    return wanted, heard


def changed_cells(doc: Document, canvas: StrokeCanvas, rect: Rect, *, fa: int, fb: int,
                  bands: slice = slice(None), weights: torch.Tensor | None = None
                  ) -> torch.Tensor:
    """The stroke's change (the document now minus before it) over all bins of frames
    ``[fa, fb)``; zero outside ``rect`` and ``bands``, times ``weights`` per bin if
    given."""
    out = torch.zeros((len(doc.channel_indices(canvas.channel)), doc.n_bins, fb - fa),
                      dtype=torch.complex64, device=doc.device)
    b0, b1, _ = bands.indices(doc.n_bins)
    r = rect.intersect(Rect(b0, b1, fa, fb))
    if not r.empty:
        change = doc.read_complex(r, canvas.channel) - canvas.complex_before(r)
        if weights is not None:
            change *= weights[r.bins, None]
        out[:, r.bins, r.frame0 - fa:r.frame1 - fa] = change
    return out


def _correct(doc: Document, canvas: StrokeCanvas, fa: int, delta: torch.Tensor,
             written: Rect | None) -> Rect | None:
    """Add ``delta`` (frames from ``fa``) where it is above ``FLOOR``; ``written`` with
    the rect written added."""
    keep = delta.abs() > FLOOR * doc.transform.full_scale
    bins = torch.nonzero(keep.any(0).any(1)).flatten()
    cols = torch.nonzero(keep.any(0).any(0)).flatten()
    if len(bins) == 0:
        return written
    rect = Rect(int(bins[0]), int(bins[-1]) + 1, fa + int(cols[0]), fa + int(cols[-1]) + 1)
    canvas.touch(rect)  # the undo patch must hold every cell rewritten
    inner = (slice(None), slice(rect.bin0, rect.bin1), slice(rect.frame0 - fa, rect.frame1 - fa))
    now = doc.read_complex(rect, canvas.channel)
    doc.write_complex(rect, torch.where(keep[inner], now + delta[inner], now),
                      channel=canvas.channel)
    return rect.union(written)


def heard_in_parts(t, frames_of: Callable[[int, int], torch.Tensor], *, s0: int, s1: int,
                   n: int) -> Generator[None, None, torch.Tensor]:
    """Samples ``[s0, s1)`` of the coefficients ``frames_of(fa, fb)`` gives, a part a
    step (see :func:`inverse_part`)."""
    pieces = []
    for a, b in sample_parts(s0, s1):
        pieces.append(inverse_part(t, frames_of, a=a, b=b, n=n))
        yield
    return torch.cat(pieces, -1)


def inverse_part(t, frames_of: Callable[[int, int], torch.Tensor], *, a: int, b: int, n: int
                 ) -> torch.Tensor:
    """Samples ``[a, b)`` of the coefficients ``frames_of(fa, fb)`` gives for the
    frames they need. The transform's inverse is local: parts are the whole bit for
    bit."""
    fa, fb = t.frames_needed(a, b, n)
    return t.inverse_span(frames_of(fa, fb), fa, sample0=a, sample1=b, length=n)


def sample_parts(s0: int, s1: int) -> list[tuple[int, int]]:
    return [(a, min(a + PART_SAMPLES, s1)) for a in range(s0, s1, PART_SAMPLES)]


def frame_parts(t, frame0: int, frame1: int) -> list[tuple[int, int]]:
    """``[frame0, frame1)`` in runs of about ``PART_SAMPLES`` of audio each."""
    step = max(1, math.ceil(t.frame_of(PART_SAMPLES / t.sample_rate)))
    return [(f, min(f + step, frame1)) for f in range(frame0, frame1, step)]
