"""Autosave and crash recovery: edits reach the user's data folder in the
background, and after a kill -9 the next start recovers them bit for bit."""

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from app.gui.services.autosave import EVERY_STROKES, orphans
from app.gui.view.canvas import PRESS, RELEASE
from app.project.write import load_project, open_project

ROOT = Path(__file__).parents[3]


def digest(doc) -> str:
    return hashlib.sha1(doc.magnitude.cpu().numpy().tobytes()
                        + doc.phase.cpu().numpy().tobytes()).hexdigest()


def stroke(window, seconds: float, hz: float = 2000.0) -> None:
    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    window._pen(seconds, hz, 1.0, PRESS)
    window._pen(seconds + 0.5, hz, 1.0, RELEASE)
    window.session.finish()  # the window paints within a budget per turn: all of it now


def test_every_few_strokes_the_edits_are_autosaved_and_reopen_exactly(qtbot, window):
    saver = window.autosaver
    for i in range(EVERY_STROKES - 1):
        stroke(window, 0.5 + i)
    assert saver.idle.wait(30) and not saver.path.exists()  # not yet: the idle timer runs
    stroke(window, 6.0)
    qtbot.waitUntil(lambda: saver.path.exists() and saver.idle.is_set(), timeout=30000)
    doc, _ = open_project(saver.path, device="cpu")
    assert digest(doc) == digest(window.doc)


def test_an_autosave_writes_what_changed_not_the_audio_again(qtbot, window):
    """Issue 50, item 4: every autosave rewrote all of the project. The audio is kept
    beside it once; the next autosave writes the edits and leaves it be."""
    from app.project.read import parts_folder

    saver = window.autosaver
    for i in range(EVERY_STROKES):
        stroke(window, 0.5 + i)
    qtbot.waitUntil(lambda: saver.path.exists() and saver.idle.is_set(), timeout=30000)
    parts = {p: p.stat().st_mtime_ns for p in parts_folder(saver.path).iterdir()}
    assert len(parts) == 1 and saver.path.stat().st_size < window.doc.audio.samples.nbytes / 4
    first = saver.path.stat().st_mtime_ns
    for i in range(EVERY_STROKES):
        stroke(window, 0.7 + i, 3000.0)
    qtbot.waitUntil(lambda: saver.path.stat().st_mtime_ns != first and saver.idle.is_set(),
                    timeout=30000)
    assert {p: p.stat().st_mtime_ns for p in parts_folder(saver.path).iterdir()} == parts
    doc, _ = open_project(saver.path, device="cpu")
    assert digest(doc) == digest(window.doc)
    window.undo_stack.setClean()  # saved: the autosave and its parts go
    qtbot.waitUntil(lambda: not parts_folder(saver.path).exists(), timeout=5000)
    assert not saver.path.exists()


def test_layers_are_autosaved_and_reopen_bit_for_bit(qtbot, window):
    """Layer operations count as edits; the autosave keeps the layers and their history."""
    from app.session.selection import Selection
    from tests.dialogs import choose
    from tests.layer_docs import digest as layers_digest

    saver = window.autosaver
    window.selection.set_selection(Selection.rect(2.0, 4.0, f_lo=300, f_hi=3000))
    choose(window, "Selection > To new layer")
    stroke(window, 2.5, 1000.0)  # on the new layer
    choose(window, "Layer > New layer")
    window.layers_panel.gain.setValue(-6.0)
    assert window.undo_stack.count() < EVERY_STROKES
    stroke(window, 6.0)
    qtbot.waitUntil(lambda: saver.path.exists() and saver.idle.is_set(), timeout=30000)
    opened = load_project(saver.path, device="cpu")
    assert layers_digest(opened.doc) == layers_digest(window.doc)
    assert len(opened.history.steps) == EVERY_STROKES


def test_after_a_pause_the_edits_are_autosaved_and_a_clean_state_removes_them(qtbot, window):
    saver = window.autosaver
    saver.timer.setInterval(200)  # IDLE_S, shortened
    stroke(window, 1.0)
    qtbot.waitUntil(lambda: saver.path.exists() and saver.idle.is_set(), timeout=30000)
    window.undo_stack.undo()  # back to the file as opened: nothing unsaved
    qtbot.waitUntil(lambda: not saver.path.exists(), timeout=5000)
    assert orphans(saver.path.parent) == []  # our own autosave is never an orphan


def _run(script: str, data: Path, args=(), **kw) -> subprocess.Popen:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


DRIVE_THEN_WAIT = """
import hashlib, sys
from app.gui.start import configure_opengl, run
configure_opengl()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app.gui.view.canvas import PRESS, RELEASE
from app.gui.services.autosave import EVERY_STROKES
app = QApplication(sys.argv[:1])

def window():
    return next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")

def drive():
    w = window()
    if w.session is None:
        return QTimer.singleShot(50, drive)
    w.brush_panel.preset_box.setCurrentText("hard-eraser")
    for i in range(EVERY_STROKES):
        w._pen(0.5 + i, 3000.0, 1.0, PRESS)
        w._pen(1.0 + i, 3000.0, 1.0, RELEASE)
        w.session.finish()
    w.autosaver.idle.wait(60)
    state = w.doc.magnitude.numpy().tobytes() + w.doc.phase.numpy().tobytes()
    print("autosaved", hashlib.sha1(state).hexdigest(), flush=True)
    w._pen(7.0, 5000.0, 1.0, PRESS)  # one more stroke, not autosaved yet: lost in the crash
    w._pen(7.5, 5000.0, 1.0, RELEASE)
    w.session.finish()

QTimer.singleShot(50, drive)
run(None, "cpu")
"""

ANSWER_YES = """
import hashlib, sys
import torch
from app.gui.start import configure_opengl, run
configure_opengl()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
app = QApplication(sys.argv[:1])

def window():
    return next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")

def answer():
    box = window().findChild(QMessageBox, "question")
    if box is None:
        return QTimer.singleShot(50, answer)
    print("asked", box.text(), flush=True)
    box.button(QMessageBox.StandardButton.Yes).click()
    QTimer.singleShot(50, report)

QTimer.singleShot(50, answer)
"""  # then a report(), and the app run

RECOVER = ANSWER_YES + """
def report():
    w = window()
    if w.session is None:
        return QTimer.singleShot(50, report)
    state = w.doc.magnitude.numpy().tobytes() + w.doc.phase.numpy().tobytes()
    print("recovered", hashlib.sha1(state).hexdigest(), w.modified, w.opened.project_path,
          flush=True)
    w.undo_stack.setClean()
    w.close()

sys.exit(run(None, "cpu"))
"""


@pytest.mark.slow
def test_after_kill_9_the_next_start_recovers_the_last_autosave_exactly(tmp_path):
    first = _run(DRIVE_THEN_WAIT, tmp_path)
    try:
        line = first.stdout.readline()
        assert line.startswith("autosaved"), line + first.stderr.read()
        saved = line.split()[1]
    finally:
        os.kill(first.pid, signal.SIGKILL)  # a crash: no chance to clean up
        first.wait(30)
    folder = tmp_path / "SpectroPaint" / "autosave"
    assert [p.name for p in orphans(folder)] == [f"autosave-{first.pid}.spp"]
    assert not list(folder.glob(".*"))  # no half-written file left beside it
    second = _run(RECOVER, tmp_path)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert "Recover the edits to demo" in lines["asked"]
    digest_, modified, project = lines["recovered"].split()
    assert digest_ == saved  # bit for bit as of the last autosave
    assert modified == "True" and project == "None"  # unsaved edits, to be saved anew
    assert orphans(folder) == [] and not list(folder.iterdir())  # quit normally: nothing left


def test_discarding_a_recovery_removes_the_autosave(tmp_path, qtbot, window):
    folder = tmp_path / "left"
    folder.mkdir()
    orphan = folder / "autosave-999999999.spp"  # no such process
    stroke(window, 1.0)
    window.autosaver.path = orphan
    window.autosaver.save()
    assert window.autosaver.idle.wait(30) and orphans(folder) == [orphan]
    opened = []
    window.offer_recovery(orphan, lambda: opened.append(True))
    box = window.findChild(QMessageBox, "question")
    box.button(QMessageBox.StandardButton.Discard).click()
    assert opened == [True] and not orphan.exists()


def test_a_failed_autosave_is_reported_and_the_user_works_on(qtbot, window, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the autosave folder should be")
    saver = window.autosaver
    saver.path = blocker / "autosave-1.spp"
    stroke(window, 1.0)
    saver.save()
    assert saver.idle.wait(30) and saver.error
    stroke(window, 2.0)
    saver.save()  # the next attempt says the last one failed
    assert "autosave failed" in window.statusBar().currentMessage()
    assert window.undo_stack.count() == 2


SAVE_PAINT_THEN_WAIT = """
import sys
from pathlib import Path
from app.gui.start import configure_opengl, run
configure_opengl()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app.gui.view.canvas import PRESS, RELEASE
from app.gui.services.autosave import EVERY_STROKES
app = QApplication(sys.argv[:1])
project = Path(sys.argv[1])

def window():
    return next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")

def stroke(w, t):
    w._pen(t, 3000.0, 1.0, PRESS)
    w._pen(t + 0.4, 3000.0, 1.0, RELEASE)
    w.session.finish()

def drive():
    w = window()
    if w.session is None or not w.jobs.idle():
        return QTimer.singleShot(50, drive)
    w.brush_panel.preset_box.setCurrentText("hard-eraser")
    stroke(w, 0.5)
    w.files.save_project(path=project)
    QTimer.singleShot(50, more)

def more():
    w = window()
    if not w.undo_stack.isClean():
        return QTimer.singleShot(50, more)
    for i in range(EVERY_STROKES):
        stroke(w, 1.5 + i)
    w.autosaver.idle.wait(60)
    print("autosaved", w.undo_stack.count(), flush=True)

QTimer.singleShot(50, drive)
run(None, "cpu")
"""

RECOVER_AND_UNDO = ANSWER_YES + """
def report():
    w = window()
    if w.session is None or not w.jobs.idle():
        return QTimer.singleShot(50, report)
    stack = w.undo_stack
    print("title", w.windowTitle(), flush=True)
    print("history", stack.count(), stack.index(), w.modified, flush=True)
    while stack.canUndo():
        w.undo_action.trigger()
    doc = w.doc
    print("undone", torch.equal(doc.read_complex(doc.full_rect()), doc.original(doc.full_rect())),
          flush=True)
    stack.setClean()
    w.close()

sys.exit(run(None, "cpu"))
"""


@pytest.mark.slow
def test_a_recovered_project_keeps_its_name_and_its_history(tmp_path):
    """A document saved as x.spp, recovered after kill -9, was named after its audio file
    in the question and the title, and its History was empty."""
    project = tmp_path / "mix.spp"
    first = _run(SAVE_PAINT_THEN_WAIT, tmp_path, args=[str(project)])
    try:
        line = first.stdout.readline()
        assert line.startswith("autosaved"), line + first.stderr.read()
        strokes = int(line.split()[1])
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
    second = _run(RECOVER_AND_UNDO, tmp_path)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert "Recover the edits to mix.spp" in lines["asked"]
    assert lines["title"] == "SpectroPaint — mix.spp*"
    assert lines["history"] == f"{strokes} {strokes} True" and strokes == 6
    assert lines["undone"] == "True"  # every stroke undone: the file as it was


def test_no_autosave_is_taken_while_a_worker_writes_the_document(qtbot, window, tmp_path):
    """A selection's edit writes the document in a worker (app.gui.actions.selectionedits):
    an autosave then would keep half of it; it waits, and is taken after."""
    import threading

    stroke(window, 1.0)
    saver = window.autosaver
    saver.path = tmp_path / "autosave-1.spp"
    writing = threading.Event()
    window.jobs.run("Writing", lambda progress, cancel: writing.wait(30), lambda _: None,
                    blocks_editing=True)
    saver.save()
    assert saver.idle.wait(5) and not saver.path.exists()  # not while it writes
    writing.set()
    qtbot.waitUntil(window.jobs.idle)
    saver.save()  # (its timer tries again by itself; here at once)
    assert saver.idle.wait(30) and saver.path.exists()
