"""Undo in the app as the user drives it: strokes painted by mouse events (each
pen event goes through Stroke.add), the document compared at every single undo
and redo step, the history's memory cap, a brush that fails mid-stroke."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from PySide6.QtCore import Qt

from tests.conftest import fail_gain_at
from tests.gui_input import choose_brush, drag, point

STROKES = [("hard-eraser", 1.0, 1000), ("hard-eraser", 3.0, 3000), ("soft-eraser", 5.0, 5000),
           ("hard-eraser", 7.0, 2000), ("soft-eraser", 2.0, 6000)]


def state(doc):
    return doc.magnitude.clone(), doc.phase.clone()


def same(doc, snapshot) -> bool:
    return torch.equal(doc.magnitude, snapshot[0]) and torch.equal(doc.phase, snapshot[1])


def paint(qtbot, window, count):
    """``count`` strokes through the mouse; the document after each (index 0: before)."""
    snapshots = [state(window.doc)]
    for preset, seconds, hz in STROKES[:count]:
        choose_brush(window, preset)
        drag(qtbot, window.canvas, point(window, seconds, hz), point(window, seconds + 1, hz),
             steps=8)
        assert not same(window.doc, snapshots[-1])  # each stroke changed something
        snapshots.append(state(window.doc))
    return snapshots


def test_every_undo_and_redo_step_restores_the_document_after_that_stroke(qtbot, window):
    snapshots = paint(qtbot, window, 5)
    stack = window.undo_stack
    assert stack.count() == 5
    for k in range(4, -1, -1):
        stack.undo()
        assert same(window.doc, snapshots[k]), f"undo to after stroke {k}"
        assert window.modified == (k > 0)
    for k in range(1, 6):
        stack.redo()
        assert same(window.doc, snapshots[k]), f"redo of stroke {k}"
    assert window.windowTitle().endswith("*")


def test_past_the_memory_cap_old_strokes_show_they_cannot_be_undone(qtbot, window):
    window.session.history_limit = 1  # byte: only the newest stroke keeps its cells
    snapshots = paint(qtbot, window, 4)
    stack = window.undo_stack
    texts = [stack.text(i) for i in range(stack.count())]
    assert all("can no longer be undone" in t for t in texts[:3])
    assert "can no longer be undone" not in texts[3]
    stack.undo()  # the newest: undone exactly
    assert same(window.doc, snapshots[3])
    while stack.canUndo():  # the dropped ones: the stack removes them, the document stays
        stack.undo()
        assert same(window.doc, snapshots[3])
    assert window.modified  # three strokes are still applied: never reported clean
    stack.redo()  # redo is the newest stroke again, not some other
    assert same(window.doc, snapshots[4])
    assert not stack.canRedo()


def test_a_brush_failing_mid_stroke_leaves_the_document_and_history_as_they_were(
        qtbot, window, monkeypatch):
    before = paint(qtbot, window, 1)[-1]
    audio = window.session.synth.waveform().copy()
    dabs = fail_gain_at(monkeypatch, 5)
    window.session.splice_each_event = lambda: True  # as while playing: the dabs were already heard
    choose_brush(window, "hard-eraser")
    drag(qtbot, window.canvas, point(window, 6.0, 4000), point(window, 8.0, 4000), steps=12)
    assert len(dabs) == 5
    assert same(window.doc, before)  # every dab written before the error is rolled back
    assert window.undo_stack.count() == 1 and window.session.stroke is None
    assert (window.session.synth.waveform() == audio).all()
    assert "device lost" in window.statusBar().currentMessage()
    monkeypatch.undo()
    drag(qtbot, window.canvas, point(window, 6.0, 4000), point(window, 8.0, 4000), steps=12)
    assert window.undo_stack.count() == 2  # the app paints on


QUIT_WITH_EDITS = """
import sys
from app.gui.start import configure_opengl
configure_opengl()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from app.gui.view.canvas import PRESS, RELEASE
from app.assets import DEMO
from app.gui.window import MainWindow

app = QApplication(sys.argv[:1])
window = MainWindow("cpu")
window.show()
window.open_path(DEMO)

def paint_then_quit():
    if window.session is None:
        return QTimer.singleShot(50, paint_then_quit)
    window._pen(1.0, 1000.0, 1.0, PRESS)
    window._pen(2.0, 1000.0, 1.0, RELEASE)
    window.session.finish()
    assert window.modified
    window.close()  # File > Quit: asks first
    QTimer.singleShot(100, lambda: window.findChild(QMessageBox, "question")
                      .button(QMessageBox.StandardButton.Discard).click())

QTimer.singleShot(50, paint_then_quit)
sys.exit(app.exec())
"""


@pytest.mark.slow
def test_quit_with_edits_then_discard_exits_cleanly():
    """The whole app in its own process, as a user quits it: the window and its undo
    stack are destroyed for real (the test's own window never is)."""
    run = subprocess.run([sys.executable, "-c", QUIT_WITH_EDITS], capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).parents[3])
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "already deleted" not in run.stderr, run.stderr


def test_strokes_repairs_and_time_edits_are_steps_of_one_history_under_one_cap(qtbot, window):
    """Issue 47: the window's undo stack is a view of the session's history
    (engine.model.history, the scripts' too), so every kind of step counts toward the
    cap. Before, a repair (and an image) was pushed past the cap's check, dropping
    nothing, and a time edit's document before it was kept however large."""
    from engine.model.history import Step, Swap
    from tests.dialogs import choose
    from tests.gui_input import select_time, wait_edit

    before = state(window.doc)
    paint(qtbot, window, 1)
    select_time(qtbot, window, 4.0, 5.0)
    choose(window, "Edit > Cut")
    wait_edit(qtbot, window, 2)
    history, stack = window.opened.history, window.undo_stack
    assert [type(s) for s in history.steps] == [Step, Swap]
    assert [s.label for s in history.steps] == [stack.text(i) for i in range(2)]
    for k in (1, 0):
        window.undo_action.trigger()
        assert history.position == stack.index() == k
    assert same(window.doc, before)
    for k in (1, 2):
        window.redo_action.trigger()
        assert history.position == stack.index() == k

    window.session.history_limit = 1  # byte: only the newest step keeps what it holds
    choose(window, "Edit > Clear selection")
    choose(window, "Repair > De-click…")  # the demo's two clicks
    qtbot.waitUntil(lambda: window.repairs.repair_dialog is not None and
                    window.repairs.repair_dialog.isVisible())
    qtbot.mouseClick(window.repairs.repair_dialog.apply, Qt.MouseButton.LeftButton)
    wait_edit(qtbot, window, 3)
    texts = [stack.text(i) for i in range(stack.count())]
    assert all("can no longer be undone" in t for t in texts[:2]), texts
    assert "can no longer be undone" not in texts[2]
    assert [s.label for s in history.steps] == [texts[2]]
    assert stack.command(1).before is None  # the document before the cut, let go
