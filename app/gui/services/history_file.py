"""The undo stack's strokes in and out of a project (app.project.saved_history): which of
them a project keeps, and putting them back on the stack when it is opened."""

from PySide6.QtGui import QUndoStack

from app.gui.services.editing import StrokeCommand
from app.project.saved_history import Kept, keep_within
from engine.model.document import Document


def collect(stack: QUndoStack, doc: Document) -> Kept:
    """The run of ``doc``'s strokes around ``stack``'s index: a re-analysis before or
    after ends it (the steps beyond belong to another analysis), and so does a
    stroke whose cells went past the undo memory cap."""
    commands = [stack.command(i) for i in range(stack.count())]

    def ours(i: int) -> bool:
        c = commands[i]
        return isinstance(c, StrokeCommand) and c.doc is doc and c.step.changed

    lo = hi = stack.index()
    while lo > 0 and ours(lo - 1):
        lo -= 1
    while hi < len(commands) and ours(hi):
        hi += 1
    return keep_within([commands[i].step for i in range(lo, hi)], stack.index() - lo)


def restore(stack: QUndoStack, doc: Document, kept: Kept) -> None:
    """Put ``kept``'s steps on ``stack`` (empty) as if they had been painted, its index
    where it was; the document holds the state at that index already."""
    for i, step in enumerate(kept.steps):
        stack.push(StrokeCommand(doc, step, applied=i < kept.index))
    stack.setIndex(kept.index)
