"""Painting from the GUI: pen events -> brush strokes -> one undo step each,
wrapped in Qt's QUndoStack so the Edit menu and the history view show them."""

import random

from PySide6.QtGui import QUndoCommand, QUndoStack

from app.canvas import PRESS, RELEASE
from brushes.history import DEFAULT_LIMIT, Step
from brushes.painter import Stroke
from brushes.registry import get_brush
from brushes.stroke import StrokePoint
from engine.document import Document
from engine.resynth import Resynthesizer


class StrokeCommand(QUndoCommand):
    """One finished stroke, owning its step (the cells before and after it): undo and
    redo write exactly this stroke's cells, so the stack and the document cannot
    drift. Its first redo (Qt calls it on push) is a no-op: the stroke is painted."""

    def __init__(self, doc: Document, step: Step):
        super().__init__(step.label)
        self.doc, self.step, self.fresh = doc, step, True

    def redo(self) -> None:
        if self.fresh:
            self.fresh = False
            return
        self.step.redo(self.doc)

    def undo(self) -> None:
        self.step.undo(self.doc)

    def drop(self, limit_bytes: int) -> None:
        """Free the step's cells: the stack shows it can no longer be undone, and Qt
        removes it, without touching the document, if the user undoes that far."""
        self.step.patches.clear()
        self.setObsolete(True)
        self.setText(f"{self.step.label} (can no longer be undone: undo history over "
                     f"{limit_bytes / 2**20:.0f} MiB)")


class AnalysisCommand(QUndoCommand):
    """One analysis swapped for another (each a session with its own document and
    history): undo brings the previous analysis back with its edits."""

    def __init__(self, window, before: tuple, after: tuple, label: str):
        super().__init__(label)
        self.window, self.before, self.after = window, before, after

    def redo(self) -> None:
        self.window.install(*self.after)

    def undo(self) -> None:
        self.window.install(*self.before)


class PaintSession:
    """The document being edited, its history, live resynthesis and undo stack."""

    def __init__(self, doc: Document, undo_stack: QUndoStack,
                 synth: Resynthesizer | None = None):
        """``synth``: the document's resynthesizer with its waveform already made
        (in a worker); made here otherwise."""
        self.doc = doc
        self.history_limit = DEFAULT_LIMIT  # bytes of undo cells kept over all strokes
        self.synth = synth or Resynthesizer(doc)
        if synth is None:
            self.synth.full()
        self.undo_stack = undo_stack
        self.stroke: Stroke | None = None
        self._seed = random.Random()
        self.readers = 0  # workers reading the waveform (an export): splices wait for them
        # while this says so (playback running), every pen event is spliced into the audio
        # at once; otherwise the stroke's end does it (a constant-Q slice costs ~5 ms)
        self.live = lambda: True

    def refresh_audio(self) -> None:
        """Splice the edits into the output waveform, unless a worker is reading it;
        then they wait (queued) until :meth:`done_reading`."""
        if self.readers == 0:
            self.synth.update()

    def start_reading(self):
        """The waveform for a worker to read in place (no copy on the GUI thread)."""
        self.refresh_audio()
        self.readers += 1
        return self.synth.cached(0, self.doc.length, copy=False)

    def done_reading(self) -> None:
        self.readers -= 1
        self.refresh_audio()

    def close(self) -> None:
        self.synth.close()

    def pen(self, seconds: float, hz: float, pressure: float, phase: int, settings,
            channel: int | None, label: str | None = None) -> None:
        """A pen event from the canvas; ``settings`` = (brush, params, curves); ``label``
        names the stroke in the history (the preset: "hard-eraser stroke")."""
        point = StrokePoint(max(seconds, 0.0), max(hz, 0.0), pressure)
        if phase == PRESS:
            name, params, curves = settings
            brush = get_brush(name)
            values, _ = brush.resolve({**params, "channel": -1 if channel is None else channel},
                                      "brush")
            self.stroke = Stroke(self.doc, brush, values, curves, None,
                                 seed=self._seed.randrange(2**31))
        if self.stroke is None:
            return
        try:  # a stroke is all or nothing: on an error it is rolled back (Stroke)
            self.stroke.add([point])
            step = self.stroke.end() if phase == RELEASE else None
        except BaseException:
            self.stroke = None
            self.refresh_audio()
            raise
        if self.live() or phase == RELEASE:
            self.refresh_audio()  # edits are heard at once (only the touched samples)
        if step is not None:
            self.stroke = None
            if label:
                step.label = f"{label} stroke"
            if step.patches:
                self.undo_stack.push(StrokeCommand(self.doc, step))
                self._keep_within_limit()

    def _keep_within_limit(self) -> None:
        """Past ``history_limit``, the oldest strokes on the stack are dropped (shown)."""
        stack = self.undo_stack
        strokes = [(i, c) for i, c in enumerate(map(stack.command, range(stack.count())))
                   if isinstance(c, StrokeCommand) and c.step.patches]
        total = sum(c.step.nbytes for _, c in strokes)
        for i, oldest in strokes[:-1]:
            if total <= self.history_limit:
                break
            total -= oldest.step.nbytes
            oldest.drop(self.history_limit)
            if 0 <= stack.cleanIndex() <= i:  # the saved state lies before it: out of reach
                stack.resetClean()

