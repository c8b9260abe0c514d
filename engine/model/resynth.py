"""Resynthesis: the output waveform of a document, kept up to date by
recomputing only the samples that edited frames touch.

Samples that no edit reaches are the document's own content (the decoded
recording, or what it was analysed from), bit for bit, not its resynthesis: a
file that was not edited, or a region a repair found nothing in, is written out
as it came in (DESIGN's "lossless until touched").

The cached waveform lives on the CPU (where playback and export read it): the content
itself until an edit's samples are spliced into it, then a copy.
Edits reported by the document are queued as frame ranges and applied on the
next read; a full resynthesis is the same span code run over the whole file
in chunks, so incremental and full results are identical sample for sample.
"""

import threading
import time

import numpy as np
import torch

from engine.model.document import Document
from engine.progress import CancelFlag, ProgressFn, step
from engine.region import Rect, merged_spans
from engine.runtime.cost import full_chunk
from engine.runtime.stats import timed

PIECE_FRAMES = 64  # frames per piece of an update with a deadline (~5 ms on CPU)


class Resynthesizer:
    def __init__(self, document: Document):
        self.doc = document
        self._wave: torch.Tensor | None = None
        self._owned = False  # whether _wave is a copy (else the content itself, unwritten)
        self._pending: list[tuple[int, int]] = []  # samples edits changed since the last update
        self._building = False  # a full resynthesis runs (maybe in a worker): edits queue
        self._built = threading.Event()
        self._lock = threading.Lock()  # a reader's block is all before or all after a splice
        # samples a piece of a timed update: at least what a frame changes (a constant-Q
        # block), pieces aligned to it, so no piece computes the samples of another
        t = document.transform
        self._piece = max(PIECE_FRAMES * t.hop, t.samples_affected(0, 1, document.length)[1])
        document.add_listener(self._on_edit)

    def close(self) -> None:
        self.doc.remove_listener(self._on_edit)

    def _on_edit(self, rect: Rect, channels: tuple[int, ...]) -> None:
        span = self.doc.transform.samples_affected(rect.frame0, rect.frame1, self.doc.length)
        with self._lock:
            if self._wave is not None or self._building:
                self._pending.append(span)

    @property
    def ready(self) -> bool:
        """Whether the waveform exists (a full resynthesis has finished)."""
        return self._wave is not None

    def _span(self, sample0: int, sample1: int) -> torch.Tensor:
        t, n = self.doc.transform, self.doc.length
        fa, fb = t.frames_needed(sample0, sample1, n)
        coeffs = self.doc.coefficients(fa, fb)
        return t.inverse_span(coeffs, fa, sample0=sample0, sample1=sample1, length=n).cpu()

    @timed("resynthesis")
    def full(self, progress: ProgressFn | None = None,
             cancel: CancelFlag | None = None) -> torch.Tensor:
        """The output; returns (and caches) float32 ``[ch, n]`` on the CPU: the content
        where no edit reaches, resynthesized where one does. It may run in a worker
        while the document is painted: edits made meanwhile stay queued for the next
        :meth:`update`."""
        chunk = -(-full_chunk(self.doc.transform) // self._piece) * self._piece  # whole pieces
        content = self.doc.content_samples
        with self._lock:
            self._pending, self._building = [], True
        try:
            written = self.doc.written_samples()
            spans = merged_spans([s for per in written for s in per])
            wave = _own_copy(content) if spans else _shared_view(content)
            total, done = max(1, sum(b - a for a, b in spans)), 0
            for a, b in spans:
                for s0 in range(a, b, chunk):
                    step(done / total, progress, cancel)
                    s1 = min(b, s0 + chunk)
                    _splice(wave, self._span(s0, s1), s0, written, content)
                    done += s1 - s0
            step(1.0, progress, None)
        finally:
            with self._lock:
                self._building = False
        with self._lock:
            self._wave, self._owned = wave, bool(spans)
        self._built.set()
        return wave

    @property
    def behind(self) -> bool:
        """Whether edits wait to be spliced into the waveform."""
        return bool(self._pending)

    @timed("resynthesis")
    def update(self, deadline: float | None = None) -> list[tuple[int, int]]:
        """Apply queued edits to the cached waveform; returns the sample spans redone.
        With a ``deadline`` (a ``time.perf_counter()`` value), it works in pieces of
        PIECE_FRAMES (or a constant-Q block) and stops once it has passed; the rest stays
        queued (``behind``).
        Pieces give the same samples as one span (each is exact)."""
        if self._wave is None:
            if self._building:  # in a worker: wait for it, then splice what queued
                self._built.wait()
            else:
                self.full()
                return [(0, self.doc.length)]
        with self._lock:
            spans, pending = [], merged_spans(self._pending)
            self._pending = []
        written = self.doc.written_samples() if pending else []
        while pending:
            s0, s1 = pending.pop(0)
            if deadline is not None:
                if time.perf_counter() > deadline:
                    with self._lock:
                        self._pending[:0] = [(s0, s1)] + pending
                    break
                end = (s0 // self._piece + 1) * self._piece
                if s1 > end:
                    pending.insert(0, (end, s1))
                    s1 = end
            if s1 > s0:
                span = self._span(s0, s1)  # computed outside the lock: readers never wait on it
                with self._lock:
                    if not self._owned:  # the content itself until now: a copy to splice into
                        self._wave, self._owned = _own_copy(self.doc.content_samples), True
                    _splice(self._wave, span, s0, written, self.doc.content_samples)
                spans.append((s0, s1))
        return spans

    def cached(self, start: int, stop: int, copy: bool = True) -> np.ndarray:
        """Samples from the cache as it is, without applying queued edits: for an
        audio thread, while the GUI thread calls :meth:`update` after edits. A copy
        taken between splices (never half of one); ``copy=False``: a view, for a reader
        during which no update runs (an export; see app.gui.services.editing.PaintSession)."""
        if self._wave is None:
            return np.zeros((self.doc.channels, max(0, stop - start)), np.float32)
        if not copy:
            return self._wave[:, start:stop].numpy()
        with self._lock:
            return self._wave[:, start:stop].numpy().copy()

    def waveform(self) -> np.ndarray:
        """The up-to-date output, float32 ``[ch, n]`` (a view of the cache: copy to keep)."""
        self.update()
        return self._wave.numpy()


def _own_copy(content: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(content, np.float32))


def _shared_view(content: np.ndarray) -> torch.Tensor:
    """The content as the waveform, not copied (nothing written reaches it: a file
    opened and not edited, a time edit's document) while it is float32, contiguous and
    writable (torch warns of read-only arrays); otherwise a copy."""
    if content.dtype != np.float32 or not content.flags.c_contiguous or \
            not content.flags.writeable:
        return _own_copy(content)
    return torch.from_numpy(content)


def _splice(wave: torch.Tensor, span: torch.Tensor, s0: int,
            written: list[list[tuple[int, int]]], content: np.ndarray) -> None:
    """Put the resynthesized ``span`` (samples from ``s0``) into ``wave`` where each
    channel's edits reach (``written``), and the ``content`` everywhere else in it (an
    undone edit's samples go back to what they were)."""
    s1 = s0 + span.shape[-1]
    wave[:, s0:s1] = torch.from_numpy(content[:, s0:s1])
    for c, spans in enumerate(written):
        for a, b in spans:
            lo, hi = max(a, s0), min(b, s1)
            if lo < hi:
                wave[c, lo:hi] = span[c, lo - s0:hi - s0]


def masked_audio(doc: Document, rect: Rect, weight: torch.Tensor, *, sample0: int,
                 sample1: int) -> np.ndarray:
    """Samples ``[sample0, sample1)`` of only what ``weight`` (``[bins, frames]`` over
    ``rect``; 0 outside it) selects: how a selection sounds alone. float32 ``[ch, n]``."""
    t = doc.transform
    fa, fb = t.frames_needed(sample0, sample1, doc.length)
    coeffs = doc.coefficients(fa, fb)
    kept = torch.zeros_like(coeffs)
    f0, f1 = max(fa, rect.frame0), min(fb, rect.frame1)
    if f1 > f0:
        w = weight[:, f0 - rect.frame0:f1 - rect.frame0]
        kept[:, rect.bin0:rect.bin1, f0 - fa:f1 - fa] = coeffs[:, rect.bin0:rect.bin1,
                                                               f0 - fa:f1 - fa] * w
    return t.inverse_span(kept, fa, sample0=sample0, sample1=sample1,
                          length=doc.length).cpu().numpy()


def layer_audio(doc: Document, *, layer: int | None = None, sample0: int = 0,
                sample1: int | None = None, origin: bool = False) -> np.ndarray:
    """Samples ``[sample0, sample1)`` (default: all) of one layer alone (the active one,
    or the one whose id is ``layer``): float32 ``[ch, n]``. The mix's audio is the sum
    of its audible layers' (each times its gain), the transforms being linear.
    ``origin``: the sound of what restore paints back on that layer instead."""
    t, n = doc.transform, doc.length
    sample1 = n if sample1 is None else sample1
    out = np.empty((doc.channels, sample1 - sample0), np.float32)
    step = full_chunk(t)
    for s0 in range(sample0, sample1, step):
        s1 = min(sample1, s0 + step)
        fa, fb = t.frames_needed(s0, s1, n)
        rect = Rect(0, doc.n_bins, fa, fb)
        coeffs = doc.original(rect, layer=layer) if origin else \
            doc.read_complex(rect, layer=layer)
        out[:, s0 - sample0:s1 - sample0] = t.inverse_span(
            coeffs, fa, sample0=s0, sample1=s1, length=n).cpu().numpy()
    return out
