"""A working day in the app, round 3 (issue 50), as a user goes through it: a click
places the playhead and paints nothing, the selection fields, keyboard zoom and the
playhead, Open recent, the brush outline in its lane, the readout, the prompts."""

import numpy as np
import pytest
import torch
from PySide6.QtCore import QPoint, Qt

from tests.gui_input import drag, point, settle


def test_a_click_places_the_playhead_and_paints_nothing_and_a_drag_paints(qtbot, window):
    """A click meant to place the cursor erased 160 ms x 500 Hz: the default tool is
    Paint with the soft-eraser. Now a click places the playhead (Space plays from
    there; during playback, playback jumps there), with the paint tool and with a
    selection tool (which it also deselects), as in RX; a drag paints."""
    canvas, doc = window.canvas, window.doc
    before = doc.coefficients(0, doc.n_frames).clone()
    assert canvas.tool == "paint"
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=point(window, 3.0, 2000))
    settle(qtbot, window)
    assert window.undo_stack.count() == 0
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)
    pixel = canvas.view.seconds_per_pixel
    assert canvas.playhead == pytest.approx(3.0, abs=pixel)
    qtbot.keyClick(canvas, Qt.Key.Key_Space)  # plays from the playhead
    assert window.player.playing
    assert window.player.start_frame / doc.sample_rate == pytest.approx(3.0, abs=pixel)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=point(window, 7.0, 2000))
    assert window.player.playing  # a click while playing: playback goes there
    assert window.player.start_frame / doc.sample_rate == pytest.approx(7.0, abs=pixel)
    window.transport.stop()

    window.selection.tool_actions["select"].trigger()
    drag(qtbot, canvas, point(window, 1.0, 3000), point(window, 2.0, 1000))
    assert canvas.selection is not None
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=point(window, 5.0, 2000))
    assert canvas.selection is None and not window.selection_panel.span["end"].value()
    assert canvas.playhead == pytest.approx(5.0, abs=pixel)

    window.selection.tool_actions["paint"].trigger()
    start = point(window, 3.0, 2000)
    drag(qtbot, canvas, start, start + QPoint(6, 0), steps=3)  # a dab: a short drag
    assert window.undo_stack.count() == 1
    assert not torch.equal(doc.coefficients(0, doc.n_frames), before)


def test_a_range_typed_from_nothing_selects_and_after_esc_space_plays(qtbot, window):
    """The selection fields were disabled until something was selected; and after Esc
    cleared a typed selection the focus landed in the Partials box, where Space blanked
    the number instead of playing."""
    from PySide6.QtWidgets import QDockWidget, QLineEdit

    window.findChild(QDockWidget, "Selection").raise_()
    end = window.selection_panel.span["end"]
    qtbot.waitUntil(end.isVisible)
    field = end.findChild(QLineEdit)
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    assert end.hasFocus()
    qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(field, "2")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    doc = window.doc
    assert window.canvas.selection.span() == (0.0, 2.0, 0.0, doc.sample_rate / 2)
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert window.canvas.selection is None
    partials = window.selection_panel.partials.value()
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Space)
    assert window.player.playing
    assert window.selection_panel.partials.value() == partials
    window.transport.stop()


def test_the_source_brush_brings_the_paint_tool(qtbot, window, write_audio, rng):
    """U (Layer > Source brush) left a selection tool active: the drag selected and
    marked nothing."""
    from PySide6.QtWidgets import QComboBox, QSpinBox

    from app.gui.actions.layeractions import UnmixDialog
    from tests.conftest import tone
    from tests.dialogs import choose, run_until, when_shown

    path = write_audio("two.wav", tone(440, 2.0) + 0.05 * rng.standard_normal((1, 88200)))
    window.open_path(path)
    run_until(lambda: window.opened.audio_path == path and window.jobs.idle())

    def nmf(dialog):
        method = dialog.findChild(QComboBox, "unmix-method")
        method.setCurrentIndex(method.findData("nmf"))
        dialog.findChild(QSpinBox, "unmix-components").setValue(2)
        dialog.accept()

    when_shown(window, UnmixDialog, "unmix-dialog", nmf)
    choose(window, "Layer > Unmix…")
    run_until(lambda: len(window.doc.layers.state.layers) == 2 and window.jobs.idle(),
              timeout=120)
    choose(window, "Edit > Rectangle select tool")
    window.activateWindow()  # after the dialog (Xvfb has no window manager)
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.canvas, Qt.Key.Key_U)
    assert window.layers.painting_sources
    assert window.canvas.tool == "paint" and window.selection.tool_actions["paint"].isChecked()
    steps = window.undo_stack.count()
    drag(qtbot, window.canvas, point(window, 0.5, 440), point(window, 1.5, 440))
    run_until(lambda: window.undo_stack.count() == steps + 1 and window.jobs.idle(),
              timeout=120)
    assert window.canvas.selection is None
    assert len(window.doc.layers.active.content.base.recipe["marks"]) == 1


def test_a_stroke_refused_during_a_re_analysis_says_it_was_not_painted(qtbot, window):
    """The status bar said "Painting waits" and the stroke was dropped: nothing waited."""
    doc = window.doc
    before = doc.coefficients(0, doc.n_frames).clone()
    window.analysis_panel.transform.setCurrentIndex(1)  # constant-Q: a second or two
    window.analysis_panel.apply.click()
    assert window.jobs.running()
    drag(qtbot, window.canvas, point(window, 2.0, 3000), point(window, 3.0, 3000))
    message = window.statusBar().currentMessage()
    assert message.startswith("Painting: not done, 'Re-analyzing' is running; do it again")
    qtbot.mouseClick(window.jobs.job_status.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.jobs.idle, timeout=20000)
    assert window.undo_stack.count() == 0
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)


def test_keyboard_zoom_keeps_the_playhead_where_it_is(qtbot, window):
    """Ctrl+= and + zoomed around the middle: a playhead placed at 2 s of the demo's 12
    left the view at the first zoom."""
    canvas = window.canvas
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=point(window, 2.0, 2000))
    x = canvas.view.x_of(canvas.playhead)
    qtbot.keyClick(canvas, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)  # View menu
    qtbot.keyClick(canvas, Qt.Key.Key_Plus)  # the canvas's own key
    view = canvas.view
    assert view.t1 - view.t0 < 3.1  # zoomed in 4x
    assert view.x_of(canvas.playhead) == pytest.approx(x, abs=1)
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    assert view.x_of(canvas.playhead) == pytest.approx(x, abs=1)


@pytest.mark.slow
def test_open_recent_lists_only_files_that_opened(qtbot, window, tmp_path, write_audio):
    """An audio file or a project that failed to open was added to Open recent."""
    from PySide6.QtWidgets import QMessageBox

    from tests.conftest import tone
    from tests.dialogs import choose, press, run_until, save_as

    def recent():
        return [a.text() for a in window.files.recent_menu.actions()]

    listed = recent()
    for bad, entry in ((tmp_path / "bad.wav", "File > Open audio…"),
                       (tmp_path / "bad.spp", "File > Open project…")):
        bad.write_bytes(b"RIFF....not audio")
        press(window, "error", QMessageBox.StandardButton.Ok)
        save_as(window, bad)
        choose(window, entry)
        run_until(lambda b=bad: window.jobs.worker.label == f"Opening {b.name}"
                  and window.jobs.idle() and window.findChild(QMessageBox, "error") is None)
        assert recent() == listed
    good = write_audio("good.wav", tone(440, 1.0))
    save_as(window, good)
    choose(window, "File > Open audio…")
    run_until(lambda: window.opened.audio_path == good and window.jobs.idle())
    assert recent() == [str(good), *listed]


def test_the_constant_q_picture_ends_where_the_file_ends(qtbot, window):
    """A constant-Q document keeps frames 0.62 s past the file's end (its atoms' reach);
    zoomed out, the canvas drew them: the picture ran past the end of the time axis."""
    from tests.gui_input import pixels

    panel = window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    panel.apply.click()
    qtbot.waitUntil(lambda: window.doc.transform.kind == "cq" and window.jobs.idle(),
                    timeout=30000)
    doc = window.doc
    assert doc.transform.seconds_of(doc.n_frames) > doc.length / doc.sample_rate + 0.5
    qtbot.keyClick(window.canvas, Qt.Key.Key_Minus)  # all the way out: 5 % past the end
    view = window.canvas.view
    end = view.x_of(view.duration)
    assert window.canvas.width() - end > 20
    image = pixels(window)[:, :, :3].astype(int)
    background = (round(0.08 * 255), round(0.08 * 255), round(0.1 * 255))  # glClearColor
    assert (image[:, round(end) + 1:] == background).all(axis=-1).all()
    assert not (image[:, round(end) - 2] == background).all(axis=-1).any()  # the picture


def test_the_nnaudio_view_follows_a_jump_of_the_scroll_bar(qtbot, window):
    """The nnAudio strip kept the span it showed before the view moved by the scroll
    bar (the scroll bars moved the view without saying so)."""
    dock = window.analysis_view
    dock.choice.setCurrentIndex(dock.choice.findData("mel"))
    qtbot.keyClick(window.canvas, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    view = window.canvas.view
    qtbot.waitUntil(lambda: dock.last_image is not None
                    and abs(dock.strip.span[0] - view.t0) < 0.05, timeout=20000)
    first = dock.strip.span
    bar = window.area.hscroll
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(bar.width() - 30,
                                                               bar.height() // 2))
    assert view.t0 > first[0] + 2  # a page on
    qtbot.waitUntil(lambda: abs(dock.strip.span[0] - view.t0) < 0.05, timeout=20000)


def test_the_brush_outline_stays_in_its_lane(qtbot, window, tmp_path):
    """Over the top of a lane, a wide brush's outline crossed into the lane above,
    whose channel the stroke does not paint."""
    from tests.gui_input import pixels, wavex

    rate, t = 16000, np.arange(16000 * 2) / 16000
    path = tmp_path / "stereo.wav"
    wavex(path, np.stack([0.2 * np.sin(2 * np.pi * 500 * t)] * 2), rate, 0x3)
    window.open_path(path)
    qtbot.waitUntil(lambda: window.opened.audio_path == path and window.jobs.idle(),
                    timeout=20000)
    canvas = window.canvas
    assert canvas.lanes == [0, 1]
    window.brush_panel.set_param("radius_hz", 2000.0)
    canvas.update()  # the view's height is a lane's from the next frame
    qtbot.waitUntil(lambda: canvas.view.height == canvas.lane_height())
    lane = canvas.lane_height()
    qtbot.mouseMove(canvas, QPoint(canvas.width() // 2, canvas.height() - 10))  # far away
    before = pixels(window)
    qtbot.mouseMove(canvas, QPoint(canvas.width() // 2, round(lane) + 6))
    changed = np.flatnonzero((pixels(window) != before).any(axis=(1, 2)))
    assert changed.size and changed.min() >= lane - 1  # rows of the second lane only


def test_the_readout_does_not_keep_the_last_files_values(qtbot, window, write_audio):
    """After another file opened, the pointer readout still gave the demo's time, Hz and
    level until the pointer moved."""
    from tests.conftest import tone
    from tests.dialogs import choose, run_until, save_as

    readout = window.readout
    qtbot.mouseMove(window.canvas, point(window, 11.5, 15000))
    qtbot.waitUntil(lambda: "0:11" in readout.text())
    old = readout.text()
    path = write_audio("short.wav", tone(440, 1.0, sample_rate=8000), sample_rate=8000)
    save_as(window, path)
    choose(window, "File > Open audio…")
    run_until(lambda: window.opened.audio_path == path and window.jobs.idle())
    qtbot.wait(100)  # the readout shows at most 20 times a second
    text = readout.text()
    assert text != old
    if text:  # the pointer is still over the canvas: what is under it in this file
        seconds, hz = window.canvas.pointer_at()
        assert seconds <= 1.0 and f"{hz:,.1f} Hz" in text


def test_the_unsaved_edits_prompt_says_save_writes_a_project(qtbot, window):
    """"Save the project first?" with a Save button: RX's and Audacity's users took it
    for saving the audio; it writes a project alone."""
    from PySide6.QtWidgets import QMessageBox

    from tests.dialogs import choose, run_until, when_shown

    drag(qtbot, window.canvas, point(window, 4.0, 6000), point(window, 6.0, 6000))
    seen = []

    def read(box):
        seen.append((box.text(), sorted(b.text().replace("&", "") for b in box.buttons())))
        box.button(QMessageBox.StandardButton.Cancel).click()

    when_shown(window, QMessageBox, "question", read)
    choose(window, "File > Open audio…")
    run_until(lambda: seen and window.findChild(QMessageBox, "question") is None)
    text, buttons = seen[0]
    assert "project" in text and "File > Export audio" in text
    assert "Save project" in buttons and "Save" not in buttons
    assert window.undo_stack.count() == 1  # cancelled: the edit is kept


@pytest.mark.slow
def test_export_audio_writes_mp3_and_refuses_a_rate_mp3_cannot_hold(qtbot, window, tmp_path,
                                                                     write_audio):
    """MP3 was not among the export formats (libsndfile writes MPEG layer III since
    1.1); at 96 kHz libsndfile's own refusal said "Format not recognised"."""
    import soundfile as sf
    from PySide6.QtWidgets import QMessageBox

    from engine.io.audio import load
    from tests.conftest import tone
    from tests.dialogs import choose, press, run_until, save_as

    out = tmp_path / "demo.mp3"
    save_as(window, out)
    choose(window, "File > Export audio…")
    run_until(lambda: out.exists() and window.jobs.idle())
    assert "MP3 MPEG_LAYER_III" in window.statusBar().currentMessage()
    assert sf.info(out).format == "MP3"
    heard, written = window.session.synth.waveform(), load(out)
    assert written.sample_rate == window.doc.sample_rate
    assert written.samples.shape == heard.shape  # libsndfile trims the encoder's delay
    assert np.corrcoef(heard.ravel(), written.samples.ravel())[0, 1] > 0.95

    high = write_audio("high.wav", tone(440, 1.0, sample_rate=96000), sample_rate=96000)
    window.open_path(high)
    run_until(lambda: window.opened.audio_path == high and window.jobs.idle())
    refused = tmp_path / "high.mp3"
    press(window, "error", QMessageBox.StandardButton.Ok)
    save_as(window, refused)
    choose(window, "File > Export audio…")
    run_until(lambda: "MP3 cannot" in window.statusBar().currentMessage()
              and window.jobs.idle() and window.findChild(QMessageBox, "error") is None)
    message = window.statusBar().currentMessage()
    assert "MP3 cannot hold 96000 Hz audio" in message and "export FLAC or WAV" in message
    assert not refused.exists() and [p.name for p in tmp_path.glob(".high*")] == []
