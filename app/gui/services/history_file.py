"""The session's history in and out of a project (app.project.saved_history): which of
its steps a project keeps, and putting them back, on the undo stack too, when it is
opened."""

from app.gui.services.editing import PaintSession, StepCommand
from app.project.saved_history import Kept, keep_within
from engine.model.history import History, Step


def collect(history: History) -> Kept:
    """The run of the document's steps around the history's position: a re-analysis
    or a time edit before or after ends it (the steps beyond belong to another
    document)."""
    steps = history.steps
    lo = hi = history.position
    while lo > 0 and isinstance(steps[lo - 1], Step):
        lo -= 1
    while hi < len(steps) and isinstance(steps[hi], Step):
        hi += 1
    return keep_within(steps[lo:hi], history.position - lo, plain=history.doc.layers.plain)


def restore(session: PaintSession, kept: Kept) -> None:
    """Make ``kept``'s steps ``session``'s history (a new one, its undo stack empty) and
    put them on the stack, its index where it was; the document holds the state at
    that index already."""
    history, stack = session.history, session.undo_stack
    history.steps, history.position = list(kept.steps), kept.index
    for i, step in enumerate(kept.steps):
        stack.push(StepCommand(history, step, restored="done" if i < kept.index else "undone"))
    stack.setIndex(kept.index)
