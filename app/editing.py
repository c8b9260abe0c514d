"""Painting from the GUI: pen events -> brush strokes -> one undo step each,
wrapped in Qt's QUndoStack so the Edit menu and the history view show them."""

import random

from PySide6.QtGui import QUndoCommand, QUndoStack

from app.canvas import PRESS, RELEASE
from brushes.history import History
from brushes.painter import Stroke
from brushes.registry import get_brush
from brushes.stroke import StrokePoint
from engine.document import Document
from engine.resynth import Resynthesizer


class StrokeCommand(QUndoCommand):
    """One finished stroke; its first redo (Qt calls it on push) is a no-op
    because the stroke is already painted."""

    def __init__(self, history: History, label: str):
        super().__init__(label)
        self.history, self.fresh = history, True

    def redo(self) -> None:
        if self.fresh:
            self.fresh = False
            return
        self.history.redo()

    def undo(self) -> None:
        self.history.undo()


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
        self.history = History(doc)
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
        return self.synth.cached(0, self.doc.length)

    def done_reading(self) -> None:
        self.readers -= 1
        self.refresh_audio()

    def close(self) -> None:
        self.synth.close()

    def pen(self, seconds: float, hz: float, pressure: float, phase: int, settings,
            channel: int | None) -> None:
        """A pen event from the canvas; ``settings`` = (brush, params, curves)."""
        point = StrokePoint(max(seconds, 0.0), max(hz, 0.0), pressure)
        if phase == PRESS:
            name, params, curves = settings
            brush = get_brush(name)
            values, _ = brush.resolve({**params, "channel": -1 if channel is None else channel},
                                      "brush")
            self.stroke = Stroke(self.doc, brush, values, curves, self.history,
                                 seed=self._seed.randrange(2**31))
        if self.stroke is None:
            return
        self.stroke.add([point])
        if self.live():
            self.refresh_audio()  # edits are heard at once (only the touched samples)
        if phase == RELEASE:
            stroke, self.stroke = self.stroke, None
            step = stroke.end()
            self.refresh_audio()
            if step.patches:
                self.undo_stack.push(StrokeCommand(self.history, step.label))

