"""One undo step made of region writes on a document's active layer, for the editing
verbs (app.session.spectral_clip, app.session.selection_process): each tile is kept as
it was before its first write (brushes.stroke_canvas's tiles), the writes are checked
finite, and any error puts back everything written (an edit is all or nothing).

A step may be built in parts (a cut, then another step's patches such as a heal
stroke's, then a paste): each part keeps its own tiles, so undo, which writes the
parts back last first, and redo, first to last, are bit for bit."""

import torch

from brushes.stroke_canvas import StrokeCanvas
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
        self._part = StrokeCanvas(doc, channel)

    def __enter__(self) -> "Recorder":
        self._threads = one_thread(self.doc.device)
        self._threads.__enter__()
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            if error is not None:
                self.rollback()  # all or nothing
        finally:
            self._threads.__exit__(kind, error, trace)

    def read(self, rect: Rect) -> torch.Tensor:
        """The active layer's cells over ``rect``: ``[ch, bins, frames]``."""
        return self.doc.read_complex(rect, self.channel)

    def write(self, rect: Rect, cells: torch.Tensor) -> Rect:
        """Store ``cells`` over ``rect`` (clipped to the document), keeping the tiles
        it changes first; refuses non-finite cells (everything written is put back)."""
        if not bool(torch.isfinite(torch.view_as_real(cells)).all()):
            raise ParameterError(f"{self.label} would write values that are not finite "
                                 "numbers; nothing was changed")
        self._part.touch(rect)
        return self.doc.write_complex(rect, cells, self.channel)

    def add_step(self, other: Step) -> None:
        """Append another step's patches (painted on this layer and channels) as a part
        of this one, after the writes so far."""
        self._close_part()
        self.step.patches += other.patches

    def _close_part(self) -> None:
        canvas = self._part
        self.step.patches += [Patch(canvas.tile_rect(key), before)
                              for key, before in canvas.before_tiles.items()]
        self._part = StrokeCanvas(self.doc, self.channel)

    def rollback(self) -> None:
        """Put back every cell written so far (the parts last first)."""
        self._close_part()
        for p in reversed(self.step.patches):
            self.doc.write_complex(p.rect, p.before, self.channel)
        self.step.patches.clear()
        self.doc.set_written(self.step.written)

    def finish(self, history: History | None, *, notice: str | None = None) -> Step:
        """The step (pushed to ``history`` when it changed something)."""
        self._close_part()
        self.step.notice = notice
        if history is not None and self.step.patches:
            history.push(self.step)
        return self.step
