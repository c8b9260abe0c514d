"""Time edits as splices of samples: a new document made of pieces of audio laid end
to end (what delete, cut, paste, trim, insert silence and duplicate all are), its
length the pieces' sum.

A time edit is not a resynthesis: the new document's content (what it plays and
exports, engine.model.resynth) is the pieces' samples as they are, except within
``FADE_S`` of a junction, where a raised-cosine cross-fade (``2 FADE_S`` long, 10 ms,
centred on the junction, reading each side's samples past its end) makes the joint
click-free. The recording restore goes back to is spliced the same way, so the
document edited before stays what it was (its edits are in the content now; the
coefficients are those of the content, and nothing counts as written).

The new document shares the old one's cells where its samples are the old content's,
in place or moved by whole frames of the transform's grid, away from the junctions
(engine.model.document's ``_shared``); every other frame is analysed when first read
(engine.model.frame_store). Where nothing was painted, the content is the recording
and is held once.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.splice_layers import follow_layers
from engine.progress import CancelFlag, ProgressFn, scaled

FADE_S = 0.005  # half a junction's cross-fade: 10 ms in all, centred on the junction


@dataclass(frozen=True)
class Piece:
    """Samples ``[start, stop)`` of ``content`` (float32 ``[ch, n]``; the recording
    under them is ``recording``, as long), whose samples either side of that span are
    what a junction's cross-fade reads. ``own``: the samples are the document's own
    (markers there follow them). ``added``: (samples, where their first lies in
    ``content``'s indices) mixed into the content (a paste mixed in), not the recording."""

    content: np.ndarray
    recording: np.ndarray
    start: int
    stop: int
    own: bool = False
    added: tuple[np.ndarray, int] | None = None

    def samples(self, lo: int, hi: int) -> np.ndarray:
        """The content's samples ``[lo, hi)`` (its indices), with what is added there."""
        out = self.content[:, lo:hi]
        if self.added is None:
            return out
        clip, first = self.added
        a, b = max(lo, first), min(hi, first + clip.shape[1])
        if a < b:
            out = out.copy()
            out[:, a - lo:b - lo] += clip[:, a - first:b - first]
        return out

    @property
    def length(self) -> int:
        return self.stop - self.start


def join(pieces: list[Piece], *, fade: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The pieces' (none empty) content and recording end to end, each junction cross-faded over
    up to ``2 fade`` samples (fewer where a piece is short or its samples end: at the
    file's ends a junction is a plain cut); and where each piece starts in them."""
    starts = list(np.cumsum([0] + [p.length for p in pieces[:-1]]))
    alike = all(same_samples(p.content, p.recording) and p.added is None for p in pieces)
    content = np.concatenate([p.samples(p.start, p.stop) for p in pieces], axis=1)
    recording = content if alike else \
        np.concatenate([p.recording[:, p.start:p.stop] for p in pieces], axis=1)
    for left, right, at in zip(pieces, pieces[1:], starts[1:], strict=False):
        if left.content is right.content and left.stop == right.start and \
                left.added is right.added:
            continue  # the samples go on as they were: no junction
        h = min(fade, left.length // 2, right.length // 2,
                left.content.shape[1] - left.stop, right.start)
        if h > 0:
            content[:, at - h:at + h] = _crossfade(left.samples(left.stop - h, left.stop + h),
                                                   right.samples(right.start - h, right.start + h))
            if not alike:
                recording[:, at - h:at + h] = _crossfade(
                    left.recording[:, left.stop - h:left.stop + h],
                    right.recording[:, right.start - h:right.start + h])
    return content, recording, [int(s) for s in starts]


def same_samples(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are views of the same samples (a document whose output is
    its recording as it came: nothing painted, nothing edited)."""
    return a is b or (a.shape == b.shape and a.strides == b.strides and
                      a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _crossfade(leaving: np.ndarray, coming: np.ndarray) -> np.ndarray:
    """``leaving`` faded out and ``coming`` faded in (raised cosine, the gains summing
    to one: a splice of a signal into itself is the signal)."""
    n = leaving.shape[1]
    rise = 0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    return (leaving * (1 - rise) + coming * rise).astype(np.float32)


def spliced(doc: Document, pieces: list[Piece], *, progress: ProgressFn | None = None,
            cancel: CancelFlag | None = None,
            ready: Callable[[], None] | None = None) -> Document:
    """A new document of ``doc``'s analysis holding ``pieces`` end to end (see
    :func:`join`); ``doc`` is not changed. Its layers follow
    (engine.model.splice_layers). ``ready()`` is called once the edit is known to be
    possible, before the new document is made (a history lets go of what it no longer
    needs)."""
    pieces = [p for p in pieces if p.length > 0]
    if not pieces:
        raise ParameterError("this edit would leave no audio; nothing was changed")
    fade = round(FADE_S * doc.sample_rate)
    content, recording, starts = join(pieces, fade=fade)
    if content.shape[0] != doc.channels:
        raise ParameterError(f"the audio has {content.shape[0]} channel(s) and the document "
                             f"{doc.channels}; nothing was changed")
    if ready is not None:
        ready()
    audio = replace(doc.audio, samples=recording,
                    metadata=_moved_markers(doc.audio.metadata, pieces, starts))
    layered = not doc.layers.plain
    new = Document(audio, transform=doc.transform, device=doc.device,
                   content=None if content is recording else content,
                   progress=scaled(progress, 0, 0.3 if layered else 1.0), cancel=cancel,
                   reuse=(doc, _moved(doc, pieces, starts, fade)))
    if layered:
        follow_layers(doc, new, pieces, lambda parts: join(parts, fade=fade)[:2], fade=fade,
                      progress=scaled(progress, 0.3, 1.0), cancel=cancel)
    return new


def _moved(doc: Document, pieces: list[Piece], starts: list[int], fade: int
           ) -> list[tuple[float, float, int]]:
    """Where the new content holds ``doc``'s own samples, moved: ``(lo, hi, shift)``,
    new samples ``[lo, hi)`` being ``doc``'s content at ``+ shift`` (each of its own
    pieces, less its junctions' cross-fades; an end ``doc``'s as well is unbounded:
    the padding past it is the same)."""
    out = []
    for i, (piece, at) in enumerate(zip(pieces, starts, strict=True)):
        if not piece.own or piece.added is not None:
            continue
        shift = piece.start - at
        lo = -math.inf if i == 0 and piece.start == 0 else at + (fade if i else 0)
        end = at + piece.length
        hi = math.inf if i == len(pieces) - 1 and piece.stop == doc.length else \
            end - (fade if i < len(pieces) - 1 else 0)
        out.append((lo, hi, shift))
    return out


def _moved_markers(metadata, pieces: list[Piece], starts: list[int]):
    """The metadata with each marker where its sample went (a marker in audio an edit
    took out goes with it)."""
    kept = []
    for marker in metadata.markers:
        at = _new_position(int(marker[1]), pieces, starts)
        if at is not None:
            kept.append([marker[0], at, *marker[2:]])
    return replace(metadata, markers=kept)


def _new_position(sample: int, pieces: list[Piece], starts: list[int]) -> int | None:
    for piece, at in zip(pieces, starts, strict=True):
        if piece.own and piece.start <= sample < piece.stop:
            return at + sample - piece.start
    return None
