"""Painting from the GUI: pen events -> brush strokes -> one undo step each, in the
session's history (engine.model.history, as a script's), which Qt's QUndoStack shows
to the Edit menu and the history view and whose undo and redo it calls."""

import math
import random
import time
import weakref
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtGui import QUndoCommand, QUndoStack

from app.gui.view.canvas import MOVE, PRESS, RELEASE
from brushes.path import StrokePoint
from brushes.registry import get_brush
from brushes.stroke import Stroke
from engine.model.document import Document
from engine.model.history import DEFAULT_LIMIT, History, Step, Swap
from engine.model.resynth import Resynthesizer
from engine.runtime.memory import available_memory

PAINT_BUDGET_S = 0.012  # seconds of painting and splicing per turn of the event loop
SLICE_DABS = 8  # dabs painted between looks at the clock (~3 ms on CPU)
TURN_GAP_MS = 10  # between turns: the event loop handles input, timers and painting
EVENT_SECONDS = 0.5  # a longer move is queued as several (planning its dabs is work too)
GAIN_STEP = 1  # QUndoCommand.id of a step changing one layer's gain (they merge)


@dataclass
class Reselect:
    """The selection before a step and after it (an edit that selects what it made or
    moved), put back by the step's undo and redo through ``select``."""

    before: object
    after: object
    select: Callable[[object], None]


class StepCommand(QUndoCommand):
    """A step of the session's history (engine.model.history: a stroke, a repair, a
    layer operation) on Qt's undo stack, which the Edit menu and the history view show:
    its undo and redo are the history's, so the two cannot drift. Pushing it pushes
    the step (done: Qt's first redo adds it to the history, which the document holds
    already)."""

    def __init__(self, history: History, step: Step, reselect: Reselect | None = None,
                 restored: str | None = None):
        """``restored``: a step of a project's history, "done" or "undone", which the
        history holds already (app.gui.services.history_file.restore): Qt's redo as it
        is pushed, and an undone one's undo as the stack's index is set, are no-ops."""
        super().__init__(step.label)
        self.history, self.step, self.reselect = history, step, reselect
        self.pushed = restored is not None
        self.quiet = {None: 0, "done": 1, "undone": 2}[restored]  # Qt's calls to let pass

    def redo(self) -> None:
        if self.quiet:
            self.quiet -= 1
        elif not self.pushed:
            self.pushed = True
            self.history.push(self.step)
        else:
            self.history.redo()
            if self.reselect is not None:
                self.reselect.select(self.reselect.after)

    def undo(self) -> None:
        if self.quiet:
            self.quiet -= 1
            return
        self.history.undo()
        if self.reselect is not None:
            self.reselect.select(self.reselect.before)

    def id(self) -> int:
        """Steps that change one layer's gain alone merge (the Gain box steps a tick at
        a time: one undo step for a turn of it)."""
        return GAIN_STEP if _gain_changed(self.step) is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        layer = _gain_changed(self.step)
        if not (isinstance(other, StepCommand) and layer is not None
                and _gain_changed(other.step) == layer
                and other.step.stack[0] is self.step.stack[1]):
            return False
        self.history.merge_last()
        self.setText(other.text())
        return True

    def drop(self, limit_bytes: int) -> None:
        """The history let the step go (its cells past the cap): the stack shows it can
        no longer be undone, and Qt removes it, without touching the document, if the
        user undoes that far."""
        self.setObsolete(True)
        self.setText(f"{self.step.label} (can no longer be undone: undo history over "
                     f"{limit_bytes / 2**20:.0f} MiB)")


class SwapCommand(QUndoCommand):
    """One paint session swapped for another, each with its document: a new analysis,
    or a time edit's new document (app.gui.actions.editactions); a
    engine.model.history.Swap in the history, whose undo brings the previous one back
    with its edits."""

    def __init__(self, install, before: tuple, after: tuple, label: str):
        """``install(session, tracker)``: makes a session the one painted on and shown
        (the window's); ``before`` and ``after``: (PaintSession, EditTracker), the two
        sessions sharing one history."""
        super().__init__(label)
        self.install, self.before, self.after = install, before, after
        self.history: History = before[0].history
        self.step = Swap(label, before[0].doc, after[0].doc)
        self.pushed = False
        self.reselect: Reselect | None = None  # set once the edit has selected what it made

    def redo(self) -> None:
        if self.pushed:
            self.history.redo()
        else:
            self.pushed = True
            self.history.push(self.step)
        self.install(*self.after)
        if self.reselect is not None:
            self.reselect.select(self.reselect.after)

    def undo(self) -> None:
        self.history.undo()
        self.install(*self.before)
        if self.reselect is not None:
            self.reselect.select(self.reselect.before)

    def drop(self, limit_bytes: int) -> None:
        """The history let the document before it go: so does the stack."""
        self.before[0].close()
        self.before = None
        self.setObsolete(True)
        self.setText(f"{self.text()} (can no longer be undone: undo history over "
                     f"{limit_bytes / 2**20:.0f} MiB)")


def window_history(doc: Document, undo_stack: QUndoStack) -> History:
    """The history of a document opened in the window, shown by ``undo_stack``: it keeps
    up to half the memory available once the document is open (1 GiB at least, the
    scripts' cap): a time edit's undo keeps the whole document before it (1.65 GiB for
    10 minutes of stereo). A step dropped past the cap is shown so on the stack
    (StepCommand.drop); a save before it is out of reach then."""
    history = History(doc, max(DEFAULT_LIMIT, available_memory() // 2))

    def dropped(step) -> None:
        for i in range(undo_stack.count()):
            command = undo_stack.command(i)
            if getattr(command, "step", None) is step:
                command.drop(history.limit)
                if 0 <= undo_stack.cleanIndex() <= i:
                    undo_stack.resetClean()
                return

    history.on_drop = dropped
    return history


class PaintSession:
    """The document being edited, its history, live resynthesis and undo stack.

    Pen events are queued and painted within a time budget per turn of the event
    loop (PAINT_BUDGET_S), the rest on the next turns: a stroke across minutes of
    audio never freezes the window, and it is one undo step either way. Audio
    catches up the same way, behind the painting."""

    def __init__(self, doc: Document, undo_stack: QUndoStack, history: History,
                 synth: Resynthesizer | None = None):
        """``history``: the editing session's (window_history), which ``undo_stack``
        shows; ``synth``: the document's resynthesizer with its waveform already made
        (in a worker); made here otherwise."""
        self.doc, self.history = doc, history
        doc.layers.deferred = True  # a layer change is remixed a piece a turn (work)
        self.synth = synth or Resynthesizer(doc)
        if synth is None:
            self.synth.full()
        self.undo_stack = undo_stack
        self.stroke: Stroke | None = None
        self._seed = random.Random()
        self.readers = 0  # workers reading the waveform (an export): splices wait for them
        # while this says so (playback running), every pen event is spliced into the audio
        # at once; otherwise the stroke's end does it (a constant-Q block costs ~10 ms)
        self.splice_each_event = lambda: True
        self.budget: float | None = PAINT_BUDGET_S  # None: paint every event at once
        self.failed = _raise  # called with (brush name, error) when a stroke fails
        self.notice = lambda text: None  # called with what a finished stroke tells the user
        self.turn_painted = lambda: None  # called after each turn that painted
        self._queue: deque[_PenEvent | _Job] = deque()
        self._last_point: StrokePoint | None = None  # the pen's last position
        self._scheduled = self._closed = False
        self._landing = False  # finish(): strokes land now, a remix goes on by turns

    @property
    def history_limit(self) -> int:
        """Bytes of undo the history keeps (engine.model.history: its cap)."""
        return self.history.limit

    @history_limit.setter
    def history_limit(self, limit: int) -> None:
        self.history.limit = limit

    @property
    def idle(self) -> bool:
        """Nothing queued to paint or remix, and the audio up to date."""
        return not self._queue and not self.doc.layers.pending and (
            self.readers > 0 or (self.synth.ready and not self.synth.behind))

    def refresh_audio(self, deadline: float | None = None) -> None:
        """Splice the edits into the output waveform (up to ``deadline``, the rest on
        later turns), unless a worker is reading it; then they wait (queued) until
        :meth:`done_reading`."""
        if self.readers == 0 and self.synth.ready:  # else: the worker making it splices
            self.synth.update(deadline)
            if self.synth.behind:
                self._schedule()

    def catch_up(self) -> None:
        """Splice the edits within this turn's budget; the rest on later turns."""
        self.refresh_audio(self._deadline())

    def catch_up_soon(self) -> None:
        """Remix and splice the edits on the next turns (after an undo: this turn draws
        it)."""
        if self.synth.behind or self.doc.layers.pending:
            self._schedule()

    def start_reading(self):
        """The waveform for a worker to read in place (no copy on the GUI thread)."""
        self.finish_mix()
        self.readers += 1
        return self.synth.cached(0, self.doc.length, copy=False)

    def finish_mix(self) -> None:
        """Land every stroke, recompute the whole mix and splice it (before reading the
        mix's sound whole: an export, a preview); the one place the GUI thread waits
        for a layer change's remix."""
        self.finish()
        self.doc.remix_some()
        self.refresh_audio()

    def done_reading(self) -> None:
        self.readers -= 1
        self.catch_up()

    def close(self) -> None:
        self._closed = True
        self._queue.clear()
        self.synth.close()

    def pen(self, seconds: float, hz: float, pressure: float, phase: int, settings,
            channel: int | None, label: str | None = None) -> None:
        """A pen event from the canvas; ``settings`` = (brush, params, curves); ``label``
        names the stroke in the history (the preset: "hard-eraser stroke")."""
        point = StrokePoint(max(seconds, 0.0), max(hz, 0.0), pressure)
        last, self._last_point = self._last_point, point
        steps = 1 if phase == PRESS or last is None else \
            max(1, math.ceil(abs(point.time - last.time) / EVENT_SECONDS))
        for k in range(1, steps):  # the same straight path, in pieces
            u = k / steps
            between = StrokePoint(last.time + u * (point.time - last.time),
                                  last.freq + u * (point.freq - last.freq),
                                  last.pressure + u * (point.pressure - last.pressure))
            self._queue.append(_PenEvent(between, MOVE, settings, channel, label))
        self._queue.append(_PenEvent(point, phase, settings, channel, label))
        if not self._scheduled:  # else it waits its turn: events cannot add up to a freeze
            self.work()

    def run(self, steps: Generator, name: str, label: str) -> None:
        """Queue work done a step at a time within the turns' budget, like a stroke
        (filling a selection: ``app.session.selection.filling``), whose steps return the
        undo step; ``name`` (the brush) is what a failure reports."""
        self._queue.append(_Job(steps, (name,), label))
        if not self._scheduled:
            self.work()

    def finish(self) -> None:
        """Paint everything queued now (before an undo, a layer operation, a save); a
        layer change's remix goes on a piece a turn (:meth:`finish_mix` waits for it)."""
        budget, self.budget, self._landing = self.budget, None, True
        try:
            self.work()
        finally:
            self.budget, self._landing = budget, False

    def work(self) -> None:
        """Paint queued pen events until the turn's budget is spent; schedule the rest."""
        self._scheduled = False
        if self._closed:
            return
        deadline = self._deadline()
        ended = False
        try:
            while self._queue and not (deadline and time.perf_counter() > deadline):
                ended |= self._step(self._queue[0])
        except Exception as e:  # a stroke is all or nothing: it was rolled back (Stroke)
            name = self._queue[0].settings[0]
            self._drop_stroke()
            self.refresh_audio(deadline)
            self.failed(name, e)
            return
        if not self._queue and self.doc.layers.pending and not self._landing:
            self.doc.remix_some(deadline)  # a layer change heard everywhere, a piece a turn
            ended = True
        if self.splice_each_event() or ended:
            self.refresh_audio(deadline)  # edits are heard at once (only the touched samples)
        if self._queue or self.doc.layers.pending:
            self._schedule()
        self.turn_painted()

    def _step(self, event: "_PenEvent | _Job") -> bool:
        """Paint one slice of ``event``; True when it ended a stroke."""
        if isinstance(event, _Job):
            try:
                next(event.steps)
                return False
            except StopIteration as done:
                self._queue.popleft()
                self.push(done.value, event.label)
                return True
        if event.phase == PRESS and self.stroke is None:
            name, params, curves = event.settings
            brush = get_brush(name)
            values, _ = brush.resolve({**params, "channel": -1 if event.channel is None
                                       else event.channel}, "brush")
            self.stroke = Stroke(self.doc, brush, values, curves=curves, history=None,
                                 seed=self._seed.randrange(2**31))
        if self.stroke is None:  # a move or release of a stroke that failed
            self._queue.popleft()
            return False
        if event.dabs is None:
            event.dabs = self.stroke.dabs_to([event.point])
        slice_, event.dabs = event.dabs[:SLICE_DABS], event.dabs[SLICE_DABS:]
        if slice_:
            self.stroke.paint_dabs(slice_)
        if event.dabs:
            return False
        if event.phase != RELEASE:
            self._queue.popleft()
            return False
        if event.ending is None:
            event.ending = self.stroke.ending(f"{event.label} stroke" if event.label else None)
        try:
            next(event.ending)
            return False  # the end goes on at the next step
        except StopIteration as done:
            step = done.value
        self._queue.popleft()
        self.stroke = None
        self.push(step, event.label)
        return True

    def push(self, step: Step, label: str | None = None,
             reselect: Reselect | None = None) -> StepCommand | None:
        """A finished stroke's step, or a step done outside a stroke (a worker's edit, a
        layer operation), into the history and on the stack; what it tells the user
        shown. The command on the stack (None: the step changed nothing)."""
        if step.notice:
            self.notice(f"{label or step.label}: {step.notice}")
        if not step.changed:
            return None
        command = StepCommand(self.history, step, reselect=reselect)
        self.undo_stack.push(command)
        return command

    def _drop_stroke(self) -> None:
        """After a failure: forget the failed stroke's queued events."""
        if isinstance(self._queue.popleft(), _Job):  # the event that failed (rolled back)
            return
        self.stroke = None
        while self._queue and self._queue[0].phase != PRESS:
            self._queue.popleft()

    def _deadline(self) -> float | None:
        return None if self.budget is None else time.perf_counter() + self.budget

    def _schedule(self) -> None:
        if not self._scheduled and not self._closed:
            self._scheduled = True
            # a timer (time for input, timers and frames between turns), tied to the undo
            # stack: it dies with the window, so no turn runs after it is gone; the session
            # held weakly (a bound method is not held: a session an edit dropped from the
            # history while its turns went on was called freed, and crashed)
            session = weakref.ref(self)
            QTimer.singleShot(TURN_GAP_MS, self.undo_stack,
                              lambda: (alive := session()) is not None and alive._continue())

    def _continue(self) -> None:
        if self._closed:
            return
        if self._queue or self.doc.layers.pending:
            self.work()
        else:
            self._scheduled = False
            self.catch_up()
            self.turn_painted()


@dataclass
class _PenEvent:
    point: StrokePoint
    phase: int
    settings: tuple
    channel: int | None
    label: str | None
    dabs: list | None = None  # planned at its turn; the ones not painted yet
    ending: Generator | None = None  # a release: the stroke's end, done a step a turn


@dataclass
class _Job:
    steps: Generator  # its last step returns the undo step
    settings: tuple  # (brush name,): what a failure names
    label: str
    phase: int = PRESS  # a failed stroke's queued events end before it


def _gain_changed(step: Step) -> int | None:
    """The id of the one layer whose gain alone ``step`` changed (None: it did more)."""
    if step.patches or step.stack is None:
        return None
    before, after = step.stack
    if before.active != after.active or len(before.layers) != len(after.layers):
        return None
    changed = [(a, b) for a, b in zip(before.layers, after.layers, strict=True) if a != b]
    if len(changed) != 1 or changed[0][0] != changed[0][1].changed(gain=changed[0][0].gain):
        return None
    return changed[0][1].id


def _raise(name: str, error: Exception) -> None:
    raise error
