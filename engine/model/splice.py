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

Analysing the new content costs the frames from the first junction on; the frames
before it, whose samples did not change, are the old document's (a chunk of them is
taken when none of the samples its analysis reads changed or was written: then it
holds exactly what analysing the new content gives).
"""

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
    (markers there follow them)."""

    content: np.ndarray
    recording: np.ndarray
    start: int
    stop: int
    own: bool = False

    @property
    def length(self) -> int:
        return self.stop - self.start


def join(pieces: list[Piece], *, fade: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The pieces' (none empty) content and recording end to end, each junction cross-faded over
    up to ``2 fade`` samples (fewer where a piece is short or its samples end: at the
    file's ends a junction is a plain cut); and where each piece starts in them."""
    starts = list(np.cumsum([0] + [p.length for p in pieces[:-1]]))
    content = np.concatenate([p.content[:, p.start:p.stop] for p in pieces], axis=1)
    recording = np.concatenate([p.recording[:, p.start:p.stop] for p in pieces], axis=1)
    for left, right, at in zip(pieces, pieces[1:], starts[1:], strict=False):
        if left.content is right.content and left.stop == right.start:
            continue  # the samples go on as they were: no junction
        h = min(fade, left.length // 2, right.length // 2,
                left.content.shape[1] - left.stop, right.start)
        if h > 0:
            for out, a, b in ((content, left.content, right.content),
                              (recording, left.recording, right.recording)):
                out[:, at - h:at + h] = _crossfade(a[:, left.stop - h:left.stop + h],
                                                   b[:, right.start - h:right.start + h])
    return content, recording, [int(s) for s in starts]


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
    first = _first_change(doc, pieces, starts, fade)
    audio = replace(doc.audio, samples=recording,
                    metadata=_moved_markers(doc.audio.metadata, pieces, starts))
    layered = not doc.layers.plain
    new = Document(audio, transform=doc.transform, device=doc.device, content=content,
                   progress=scaled(progress, 0, 0.3 if layered else 1.0), cancel=cancel,
                   reuse=(doc, first))
    if layered:
        follow_layers(doc, new, pieces, lambda parts: join(parts, fade=fade)[:2],
                      progress=scaled(progress, 0.3, 1.0), cancel=cancel)
    return new


def _first_change(doc: Document, pieces: list[Piece], starts: list[int], fade: int) -> int:
    """The first sample where the new content may differ from ``doc``'s analysed
    content or a write reached it: the old coefficients hold before it."""
    first = 0
    lead = pieces[0]
    if lead.own and lead.start == 0:
        first = lead.stop - (fade if len(pieces) > 1 else 0)
    written = [a for spans in doc.written_samples() for a, _ in spans]
    return max(0, min([first, *written]))


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
