"""One undo step made of region writes on a document's active layer, for the editing
verbs (app.session.spectral_clip, app.session.selection_process): each write keeps the
cells it replaces as a patch, the writes are checked finite, and any error within
``with recorder:`` puts back everything written (an edit is all or nothing).

Undo writes the patches back last first, and redo first to last (the cells after each
read when it is first undone, engine.model.history), so writes that overlap (a cut,
a heal stroke's patches, then a paste) come back bit for bit. Within ``with`` torch
computes on one thread (on the CPU): an edit's arrays are a region's, and on this
2-core machine under load a second thread made a constant-Q move of 1 s x 1 kHz take
150-230 ms against 61-75 ms."""

import torch

from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Patch, Step
from engine.region import Rect
from engine.unmix import one_thread


class Recorder:
    def __init__(self, doc: Document, channel: int | None, label: str):
        doc.channel_indices(channel)  # refuse a channel the document does not have, now
        self.doc, self.channel, self.label = doc, channel, label
        self.step = Step(label, channel, layer=doc.layers.active.id,
                         written=doc.written_frames())
        self._threads = one_thread(doc.device)

    def __enter__(self) -> "Recorder":
        self._threads.__enter__()
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            if error is not None:
                self.rollback()  # all or nothing
        finally:
            self._threads.__exit__(kind, error, trace)

    def read(self, rect: Rect) -> torch.Tensor:
        """A copy of the active layer's cells over ``rect``: ``[ch, bins, frames]`` (a
        one-frame read of a one-channel document comes back as a view of the live
        cells, which the next write would change under a patch)."""
        cells = self.doc.read_complex(rect, self.channel)
        return cells.clone() if cells._is_view() else cells

    def write(self, rect: Rect, cells: torch.Tensor, *,
              before: torch.Tensor | None = None) -> Rect:
        """Store ``cells`` over ``rect`` (clipped to the document), keeping what was there
        (``before``, when the caller has just read it with :meth:`read`); refuses
        non-finite cells."""
        if not bool(torch.isfinite(torch.view_as_real(cells)).all()):
            raise ParameterError(f"{self.label} would write values that are not finite "
                                 "numbers; nothing was changed")
        rect = rect.clip(self.doc.n_bins, self.doc.n_frames)
        self.step.patches.append(Patch(rect, self.read(rect) if before is None else before))
        return self.doc.write_complex(rect, cells, self.channel)

    def add_step(self, other: Step) -> None:
        """Append another step's patches (painted on this layer and channels) after the
        writes so far."""
        self.step.patches += other.patches

    def rollback(self) -> None:
        """Put back every cell written so far, last first."""
        for p in reversed(self.step.patches):
            self.doc.write_complex(p.rect, p.before, self.channel)
        self.step.patches.clear()
        self.doc.set_written(self.step.written)

    def finish(self, history: History | None, *, notice: str | None = None) -> Step:
        """The step (pushed to ``history`` when it changed something)."""
        self.step.notice = notice
        if history is not None and self.step.patches:
            history.push(self.step)
        return self.step
