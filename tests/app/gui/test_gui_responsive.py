"""The window never freezes: long strokes are painted over several turns of the
event loop (one undo step, the same cells as at once), long jobs run with their
progress in the status bar while the window stays usable, and a file is shown
as soon as it is analyzed, before its audio is made."""

import threading

import numpy as np
import pytest
import torch
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtWidgets import QApplication

from app.session.selection import Selection
from engine.model.resynth import Resynthesizer
from tests.gui_input import choose_brush, drag, point, settle


def flick(qtbot, window, t0=0.3, t1=11.7, hz=3000.0):
    """A stroke across the whole demo in one move: thousands of dabs in one event."""
    canvas = window.canvas
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=point(window, t0, hz))
    qtbot.mouseMove(canvas, point(window, t1, hz))
    waiting = len(window.session._queue)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=point(window, t1, hz))
    return waiting


@pytest.mark.slow
def test_a_long_stroke_is_painted_over_several_turns_with_the_same_result(qtbot, window):
    choose_brush(window, "soft-eraser")
    window.brush_panel.set_param("radius_ms", 20.0)
    session, doc = window.session, window.doc
    original = doc.coefficients(0, doc.n_frames).clone()
    turns = []
    session.turn_painted = lambda: (turns.append(len(session._queue)), window.canvas.update())
    waiting = flick(qtbot, window)
    assert waiting > 0  # the move event returned with dabs still to paint
    assert not torch.equal(doc.coefficients(0, doc.n_frames), original)  # some painted now
    settle(qtbot, window)
    assert len(turns) > 2  # painted over several turns of the event loop
    progressive = doc.coefficients(0, doc.n_frames).clone()
    assert window.undo_stack.count() == 1  # one stroke, one undo step
    np.testing.assert_array_equal(session.synth.waveform(), Resynthesizer(doc).full().numpy())

    window.undo_action.trigger()
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), original)
    session.budget = None  # the same stroke painted at once, as before
    assert flick(qtbot, window) == 0
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), progressive)


def test_undo_during_a_long_stroke_lands_the_stroke_then_undoes_it(qtbot, window):
    choose_brush(window, "soft-eraser")
    window.brush_panel.set_param("radius_ms", 20.0)
    doc = window.doc
    drag(qtbot, window.canvas, point(window, 1.0, 6000), point(window, 2.0, 6000))
    original = doc.coefficients(0, doc.n_frames).clone()
    assert flick(qtbot, window) > 0
    window.undo_action.trigger()  # Ctrl+Z at once, while it is being painted
    assert len(window.session._queue) == 0  # the stroke landed first ...
    assert window.undo_stack.count() == 2 and window.undo_stack.index() == 1  # ... undone
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), original)
    window.redo_action.trigger()
    assert not torch.equal(doc.coefficients(0, doc.n_frames), original)


def test_a_long_job_runs_in_the_status_bar_and_the_window_stays_usable(qtbot, window):
    doc = window.doc
    window.analysis_panel.transform.setCurrentIndex(1)  # constant-Q: a second or two
    window.analysis_panel.apply.click()
    status = window.jobs.job_status
    assert status.isVisible() and status.label.text() == "Re-analyzing…"
    assert QApplication.activeModalWidget() is None  # nothing modal
    span = window.canvas.view.t1 - window.canvas.view.t0
    window.canvas.zoom(2.0)  # the view works
    assert window.canvas.view.t1 - window.canvas.view.t0 < span
    before = doc.coefficients(0, doc.n_frames).clone()
    choose_brush(window)
    window._pen(2.0, 3000.0, 1.0, 0)  # painting would be lost by the re-analysis: refused
    window._pen(3.0, 3000.0, 1.0, 2)
    assert "Painting: not done, 'Re-analyzing' is running" in \
        window.statusBar().currentMessage()
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)
    qtbot.mouseClick(status.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not status.isVisible(), timeout=20000)
    assert window.doc is doc  # cancelled: the STFT stays
    assert window.undo_stack.count() == 0


class PaintLog(QObject):
    """The value a progress bar showed at each of its paint events."""

    def __init__(self, bar):
        super().__init__()
        self.bar, self.values = bar, []
        bar.installEventFilter(self)

    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            self.values.append(watched.value())
        return False


def test_job_progress_is_painted_with_the_next_frame_not_at_once(qtbot, window):
    """A repaint at once is a whole-window composition with the GL canvas (about 25 ms
    under llvmpipe) each time the bar moves; it was most of the GUI's stall while a
    file opened. The job steps only when the test says, so neither a slow nor a fast
    machine can finish it between two frames."""
    step, steps = threading.Semaphore(0), (0.25, 0.5, 0.75, None)

    def work(progress, cancel):
        for fraction in steps:
            step.acquire()
            if fraction is not None:
                progress(fraction)

    done = []
    window.jobs.run("Counting", work, done.append)
    status, bar = window.jobs.job_status, window.jobs.job_status.bar
    log = PaintLog(bar)
    for fraction in steps[:-1]:  # each step the job reports is shown, rising
        step.release()
        qtbot.waitUntil(lambda f=fraction: log.values[-1:] == [int(f * 1000)], timeout=5000)
    assert log.values == sorted(log.values)
    status.timer.stop()  # the bar alone, without the job's next report
    qtbot.wait(300)  # no frame in flight: Qt would hold back a repaint until its swap
    painted, value = len(log.values), bar.value() + 100
    bar.setValue(value)
    assert len(log.values) == painted  # not painted inside setValue ...
    qtbot.waitUntil(lambda: value in log.values[painted:], timeout=5000)  # ... but soon
    step.release()
    qtbot.waitUntil(lambda: bool(done) and not status.isVisible(), timeout=5000)


def test_an_opened_file_is_painted_on_while_its_audio_is_made(qtbot, window, write_audio, rng):
    path = write_audio("long.wav", 0.1 * rng.standard_normal((2, 44100 * 40)))
    states = []
    worker = window.open_path(path)
    worker.partial.connect(lambda made: states.append(worker.blocks_editing))
    qtbot.waitUntil(lambda: window.opened.audio_path == path, timeout=30000)
    choose_brush(window)
    canvas = window.canvas
    start = QPoint(100, 200)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(canvas, start + QPoint(60, 0))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(60, 0))
    qtbot.waitUntil(lambda: worker.settled, timeout=30000)
    settle(qtbot, window)
    assert states == [False] and window.undo_stack.count() == 1  # painted on, not refused
    doc = window.doc
    np.testing.assert_array_equal(window.session.synth.waveform(),
                                  Resynthesizer(doc).full().numpy())  # the stroke is heard


def test_a_window_closed_mid_stroke_runs_no_more_turns(qtbot, tmp_path):
    """A stroke still being painted when its window is closed and deleted: no turn or
    audio splice may run after (one did, on the deleted canvas, in the next test)."""
    from PySide6.QtCore import QSettings

    from app.assets import DEMO
    from app.gui.window import MainWindow

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))
    w = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
    w.show()
    qtbot.waitExposed(w)
    w.open_path(DEMO)
    qtbot.waitUntil(lambda: w.session is not None and w.jobs.idle(), timeout=20000)
    choose_brush(w, "soft-eraser")
    w.brush_panel.set_param("radius_ms", 20.0)
    assert flick(qtbot, w) > 0 and not w.session.idle  # turns are scheduled
    session = w.session
    w.undo_stack.setClean()
    w.close()
    w.deleteLater()
    qtbot.wait(200)  # the deferred delete happens, and any turn would have fired
    assert session._closed and len(session._queue) == 0


@pytest.mark.slow
def test_a_stroke_on_constant_q_ends_over_several_turns_with_the_same_result(qtbot, window):
    """Its end confines the stroke to its time (brushes.locality.confine): a tone-pen stroke's
    end took ~0.5 s in one turn of the event loop."""
    stft_doc, panel = window.doc, window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    qtbot.mouseClick(panel.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc is not stft_doc, timeout=30000)
    settle(qtbot, window)
    choose_brush(window, "tone-pen")
    session, doc = window.session, window.doc
    original = doc.coefficients(0, doc.n_frames).clone()
    steps = window.undo_stack.count()

    def stroke():
        canvas, start, end = window.canvas, point(window, 1.0, 1000), point(window, 2.2, 1000)
        qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
        for i in range(1, 21):
            qtbot.mouseMove(canvas, start + (end - start) * i / 20)
            qtbot.waitUntil(lambda: not session._queue)  # every move painted: left, the end
        qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)

    turns = []
    session.turn_painted = lambda: (turns.append(window.undo_stack.count()), window.canvas.update())
    stroke()
    assert window.undo_stack.count() == steps and len(session._queue) == 1  # still ending
    settle(qtbot, window)
    assert window.undo_stack.count() == steps + 1
    assert turns.count(steps) > 2  # the end took several turns, the window painted between
    progressive = doc.coefficients(0, doc.n_frames).clone()
    assert not torch.equal(progressive, original)

    window.undo_action.trigger()
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), original)
    session.budget = None  # the same stroke ended at once
    stroke()
    assert len(session._queue) == 0
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), progressive)


def test_filling_a_selection_on_constant_q_goes_on_over_turns_with_the_same_result(
        qtbot, window):
    """A fill's end is confined: 0.7 s for 10 s of a 20-200 Hz band, and 9 s for 100 s
    of the full band, was done in one turn of the event loop (under a wait cursor);
    now a bounded step a turn."""
    stft_doc, panel = window.doc, window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    qtbot.mouseClick(panel.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc is not stft_doc, timeout=30000)
    settle(qtbot, window)
    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    session, doc = window.session, window.doc
    window.selection.set_selection(Selection.rect(1.0, 5.0, f_lo=20.0, f_hi=400.0))
    original = doc.coefficients(0, doc.n_frames).clone()
    steps = window.undo_stack.count()
    turns = []
    session.turn_painted = lambda: (turns.append(window.undo_stack.count()), window.canvas.update())
    session.budget = 1e-4  # a step a turn, on any machine (the fill is a few steps)
    window.selection_panel.fill.click()
    assert window.undo_stack.count() == steps and len(session._queue) == 1  # going on
    settle(qtbot, window)
    assert window.undo_stack.count() == steps + 1
    assert window.undo_stack.text(steps) == "fill selection: hard-eraser"
    assert turns.count(steps) > 2  # several turns, the window painted between them
    progressive = doc.coefficients(0, doc.n_frames).clone()
    assert not torch.equal(progressive, original)

    window.undo_action.trigger()
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), original)
    session.budget = None  # the same fill at once
    window.selection_panel.fill.click()
    assert window.undo_stack.count() == steps + 1 and not session._queue
    assert torch.equal(doc.coefficients(0, doc.n_frames), progressive)
