"""The time-range verbs: delete, cut and copy, paste (inserted, mixed in or over what
is there), trim, insert silence and duplicate, each making a new document of spliced
samples (engine.model.splice) that the caller swaps in as one undo step.

``wave`` is the document's output as it is now (the edited audio, float32
``[ch, n]``): the pieces are cut from it, so every edit so far goes along. Times are
seconds; a range past the file's ends is clipped, and what was clipped is said in
``warnings``.
"""

from dataclasses import dataclass, replace

import numpy as np

from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.splice import FADE_S, Piece, same_samples, spliced

PASTE_MODES = ("insert", "add", "replace")
MAX_SILENCE_S = 3600.0


@dataclass(frozen=True)
class TimeClip:
    """Audio copied from a time range, with up to ``FADE_S`` of what was around it
    either side (``handles``), which a junction's cross-fade reads; it outlives its
    document."""

    content: np.ndarray  # float32 [ch, handles[0] + frames + handles[1]]
    recording: np.ndarray  # what restore goes back to under it, as long
    sample_rate: int
    handles: tuple[int, int]

    @property
    def frames(self) -> int:
        return self.content.shape[1] - sum(self.handles)

    @property
    def seconds(self) -> float:
        return self.frames / self.sample_rate

    @property
    def nbytes(self) -> int:
        return self.content.nbytes + (0 if self.recording is self.content else
                                      self.recording.nbytes)

    def piece(self, channels: int) -> Piece:
        """The clip as a piece of a document of ``channels`` channels (a mono clip goes
        into every channel)."""
        content, recording = self.content, self.recording
        if content.shape[0] != channels:
            if content.shape[0] != 1:
                raise ParameterError(f"the clipboard holds {content.shape[0]} channels and "
                                     f"this document {channels}; paste it into a document of "
                                     f"{content.shape[0]} channels (or copy from a mono one)")
            content = np.repeat(content, channels, axis=0)
            recording = content if self.recording is self.content else \
                np.repeat(recording, channels, axis=0)
        return Piece(content, recording, self.handles[0], self.handles[0] + self.frames)


def sample_range(doc: Document, *, start: float, end: float, warnings: list[str],
                 what: str) -> tuple[int, int]:
    """``[start, end)`` seconds as samples within the file (clipped, said in
    ``warnings``); an empty range is a ParameterError."""
    duration = doc.length / doc.sample_rate
    if not (np.isfinite(start) and np.isfinite(end)):
        raise ParameterError(f"{what}: start and end must be finite seconds")
    if start > end:
        start, end = end, start
    if start < 0 or end > duration:
        warnings.append(f"{what}: {start:g}-{end:g} s clipped to the file (0-{duration:g} s)")
    s0, s1 = (min(doc.length, max(0, round(t * doc.sample_rate))) for t in (start, end))
    if s1 <= s0:
        raise ParameterError(f"{what}: the range {start:g}-{end:g} s holds no audio of this "
                             f"{duration:g} s file; nothing was changed")
    return s0, s1


def sample_at(doc: Document, *, at: float, warnings: list[str], what: str) -> int:
    """The sample at ``at`` seconds, clipped to the file's ends (said in ``warnings``)."""
    duration = doc.length / doc.sample_rate
    if not np.isfinite(at):
        raise ParameterError(f"{what}: the position must be finite seconds")
    if not 0 <= at <= duration:
        warnings.append(f"{what}: {at:g} s clipped to the file (0-{duration:g} s)")
    return min(doc.length, max(0, round(at * doc.sample_rate)))


def own(doc: Document, wave: np.ndarray, start: int, stop: int) -> Piece:
    """Samples ``[start, stop)`` of the document's output (over its recording)."""
    return Piece(wave, doc.audio.samples, start, stop, own=True)


def copy_range(doc: Document, wave: np.ndarray, s0: int, s1: int) -> TimeClip:
    """Samples ``[s0, s1)`` of the output (and the recording), with their handles."""
    fade = round(FADE_S * doc.sample_rate)
    a, b = max(0, s0 - fade), min(doc.length, s1 + fade)
    content = np.array(wave[:, a:b], np.float32)
    recording = content if same_samples(wave, doc.audio.samples) else \
        np.array(doc.audio.samples[:, a:b], np.float32)  # held once where they are one
    return TimeClip(content, recording, doc.sample_rate, (s0 - a, b - s1))


def delete_range(doc: Document, wave: np.ndarray, s0: int, s1: int, **work) -> Document:
    return spliced(doc, [own(doc, wave, 0, s0), own(doc, wave, s1, doc.length)], **work)


def trim_to(doc: Document, wave: np.ndarray, s0: int, s1: int, **work) -> Document:
    return spliced(doc, [own(doc, wave, s0, s1)], **work)


def paste_clip(doc: Document, wave: np.ndarray, clip: TimeClip, at: int, *,
               mode: str = "insert", **work) -> Document:
    """``clip`` at sample ``at``: inserted (the file grows), mixed into what is there
    (``add``) or over it (``replace``), up to the file's end."""
    if mode not in PASTE_MODES:
        raise ParameterError(f"paste mode '{mode}': use one of {', '.join(PASTE_MODES)}")
    if clip.sample_rate != doc.sample_rate:
        raise ParameterError(f"the clipboard holds {clip.sample_rate} Hz audio and this file "
                             f"is {doc.sample_rate} Hz; resample one of them first")
    piece = clip.piece(doc.channels)
    if mode == "insert":
        return spliced(doc, [own(doc, wave, 0, at), piece, own(doc, wave, at, doc.length)],
                       **work)
    end = min(doc.length, at + piece.length)
    if end <= at:
        raise ParameterError("paste: the position is at the file's end; nothing to mix into "
                             "or replace (insert it instead)")
    if mode == "add":  # the document's own samples, the clip mixed into them
        piece = replace(own(doc, wave, at, end), added=(piece.content, at - piece.start))
    else:
        piece = Piece(piece.content, piece.recording, piece.start, piece.start + end - at)
    return spliced(doc, [own(doc, wave, 0, at), piece, own(doc, wave, end, doc.length)],
                   **work)


def insert_silence(doc: Document, wave: np.ndarray, at: int, seconds: float,
                   **work) -> Document:
    if not (np.isfinite(seconds) and 0 < seconds <= MAX_SILENCE_S):
        raise ParameterError(f"insert silence: {seconds!r} s; give a length over 0 and at "
                             f"most {MAX_SILENCE_S:g} s")
    n = round(seconds * doc.sample_rate)
    fade = round(FADE_S * doc.sample_rate)
    zeros = np.zeros((doc.channels, n + 2 * fade), np.float32)
    return spliced(doc, [own(doc, wave, 0, at), Piece(zeros, zeros, fade, fade + n),
                         own(doc, wave, at, doc.length)], **work)


def duplicate_range(doc: Document, wave: np.ndarray, s0: int, s1: int, **work) -> Document:
    """``[s0, s1)`` twice in a row: the document's own samples each time (in a document
    with layers, each layer repeats its own sound)."""
    return spliced(doc, [own(doc, wave, 0, s1), own(doc, wave, s0, s1),
                         own(doc, wave, s1, doc.length)], **work)
