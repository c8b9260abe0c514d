"""The window keeps the user's choices: Space from anywhere, scrubbing, export
defaults, remembered folders, panels and geometry, preset names in the history,
and what happens when a file cannot be opened as it is."""

import numpy as np
import pytest
import soundfile as sf
import torch
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.assets import DEMO
from app.gui.services.playback import BLOCK
from app.gui.window import MainWindow
from tests.gui_input import drag, paint_whistle


def test_space_plays_and_pauses_while_a_check_box_has_the_focus(qtbot, window):
    box = window.view_panel.log
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    qtbot.keyClick(box, Qt.Key.Key_Space)
    assert window.player.playing and not box.isChecked()  # played; the box kept its state
    qtbot.keyClick(box, Qt.Key.Key_Space)
    assert not window.player.playing and not box.isChecked()


def test_dragging_in_the_time_ruler_plays_what_is_under_the_pointer(qtbot, window):
    ruler, doc = window.area.time_ruler, window.doc
    rate, view = doc.sample_rate, window.canvas.view
    start, end = QPoint(100, 10), QPoint(500, 10)
    qtbot.mousePress(ruler, Qt.MouseButton.LeftButton, pos=start)
    assert window.player.playing and not window.player._pull(BLOCK).any()  # still: silent
    waveform = window.session.synth.waveform()
    heads, level = [window.player.position()], 0.0
    for i in range(1, 9):
        pos = start + (end - start) * i / 8
        qtbot.mouseMove(ruler, pos)
        seconds = view.t_of(pos.x() * view.width / ruler.width())
        assert abs(window.player.tape.target - seconds * rate) <= rate * \
            (view.t1 - view.t0) / view.width + 1  # within a pixel of the pointer
        before = window.player.position()
        block = window.player._pull(BLOCK)
        after = window.player.position()
        heads.append(after)
        lo, hi = before - 2, after + 2  # what it played lies within what the head crossed
        level = max(level, np.abs(block).max())
        assert np.abs(block).max() <= np.abs(waveform[:, lo:hi]).max() + 1e-6
    assert all(b > a for a, b in zip(heads, heads[1:], strict=False))  # it followed
    assert heads[-1] > heads[0] + rate and level > 0.01
    target = view.t_of(end.x() * view.width / ruler.width())  # the output pulls it there
    qtbot.waitUntil(lambda: window.canvas.playhead == pytest.approx(target, abs=0.05))
    qtbot.mouseRelease(ruler, Qt.MouseButton.LeftButton, pos=end)
    assert not window.player.playing and window.player.tape is None


def test_export_defaults_to_the_source_depth_with_a_name_in_the_last_folder(qtbot, window,
                                                                             tmp_path):
    assert window.files.depth_actions["source"].isChecked()
    window.files.export_dialog()
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    dialog = window.findChild(QFileDialog, "file-dialog")
    assert dialog.selectedFiles()[0].endswith("demo-edited.flac")
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "demo-edited.flac"
    dialog.selectFile(str(out))
    dialog.accept()
    qtbot.waitUntil(lambda: out.exists() and window.jobs.idle(), timeout=20000)
    assert sf.info(out).subtype == sf.info(DEMO).subtype == "PCM_16"
    window.files.export_dialog()  # the next dialog opens where the last one wrote
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    assert window.findChild(QFileDialog, "file-dialog").directory().absolutePath() == \
        str(folder)


def test_an_mp3_exports_as_mp3_and_a_depth_ogg_lacks_gives_its_default(qtbot, window,
                                                                        tmp_path):
    """The dialog offered take-edited.mp3, which export then refused ("cannot write
    '.mp3' files"; it offered .wav until MP3 was written, issue 50); and 16-bit chosen,
    an Ogg export failed ("cannot be written with bit depth '16'")."""
    source = tmp_path / "take.mp3"
    sf.write(source, 0.1 * np.sin(np.arange(44100) / 5.0), 44100)
    window.open_path(source)
    qtbot.waitUntil(lambda: window.opened.audio_path == source and
                    window.jobs.idle(), timeout=20000)
    window.files.export_dialog()
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    dialog = window.findChild(QFileDialog, "file-dialog")
    assert dialog.selectedFiles()[0].endswith("take-edited.mp3")  # written since issue 50
    assert "*.mp3" in dialog.nameFilters()[0] and "*.oga" in dialog.nameFilters()[0]
    dialog.reject()
    window.files.depth_actions["16"].trigger()
    out = tmp_path / "take-edited.oga"
    worker = window.files.export_audio(out)
    qtbot.waitUntil(worker.isFinished, timeout=20000)
    qtbot.wait(50)  # its result (or failure) delivered
    assert (sf.info(out).format, sf.info(out).subtype) == ("OGG", "VORBIS")
    assert window.findChild(QMessageBox, "error") is None


def test_export_of_a_document_with_no_file_behind_it_opens_the_dialog(qtbot, window):
    """A recovered document has neither an audio file nor a project: no name to
    suggest (the MP3 check then raised on the empty name and no dialog opened)."""
    window.opened.audio_path = window.opened.project_path = None
    window.files.export_dialog()
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    window.findChild(QFileDialog, "file-dialog").reject()


def test_choosing_presets_never_resizes_the_window(qtbot, window):
    size = window.size()
    for name in list(window.brush_panel.presets):
        window.brush_panel.preset_box.setCurrentText(name)
        qtbot.wait(5)
        assert window.size() == size, name


def test_the_view_menu_toggles_every_panel_and_the_layout_persists(qtbot, window, tmp_path):
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    titles = {a.text() for a in view_menu.actions()}
    assert {"Brushes", "View", "Analysis", "History", "nnAudio view"} <= titles
    history = next(d for d in window.docks if d.windowTitle() == "History")
    next(a for a in view_menu.actions() if a.text() == "History").trigger()
    assert not history.isVisible()
    window.resize(1100, 700)
    qtbot.wait(20)
    window.undo_stack.setClean()
    window.close()
    again = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.size().width() == 1100 and again.size().height() == 700
    assert not next(d for d in again.docks if d.windowTitle() == "History").isVisible()
    assert again.files.depth_actions["source"].isChecked()
    again.close()


def test_the_history_names_the_preset(qtbot, window):
    paint_whistle(qtbot, window, "hard-eraser")
    assert window.undo_stack.text(0) == "hard-eraser stroke"
    window.brush_panel.type_box.setCurrentText("blur")  # no preset any more: the type
    drag(qtbot, window.canvas, QPoint(50, 50), QPoint(90, 50))
    assert window.undo_stack.text(1) == "blur stroke"


def _cut_short(tmp_path, seconds=2.0, keep=0.5):
    path = tmp_path / "cut.wav"
    rate = 16000
    t = np.arange(int(seconds * rate)) / rate
    sf.write(path, 0.3 * np.sin(2 * np.pi * 440 * t), rate, subtype="PCM_16")
    data = path.read_bytes()
    path.write_bytes(data[:44 + int(keep * rate) * 2])  # the header still claims 2 s
    return path, int(keep * rate)


def test_a_truncated_file_offers_its_readable_part_and_keeps_the_open_document(qtbot, window,
                                                                               tmp_path):
    path, readable = _cut_short(tmp_path)
    before = window.doc
    window.open_path(path)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "truncated") is not None,
                    timeout=20000)
    box = window.findChild(QMessageBox, "truncated")
    assert "cut.wav" in box.text() and "--allow-truncated" not in box.text()
    assert window.doc is before  # nothing lost while the user decides
    button = next(b for b in box.buttons() if b.text() == "Open the readable part")
    button.click()
    qtbot.waitUntil(lambda: window.doc is not before, timeout=20000)
    assert window.doc.length == readable and window.opened.audio_path == path


def test_repaired_samples_show_the_note_the_cli_prints(qtbot, window, tmp_path):
    samples = np.zeros(8000, np.float32)
    samples[100:110] = np.nan
    path = tmp_path / "nan.wav"
    sf.write(path, samples, 8000, subtype="FLOAT")
    window.open_path(path)
    qtbot.waitUntil(lambda: window.opened.audio_path == path, timeout=20000)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "error") is not None)
    text = window.findChild(QMessageBox, "error").text()
    assert "nan.wav" in text and "10 samples were NaN or infinite" in text


def test_without_a_document_the_window_says_what_to_do_and_cannot_export(qtbot, tmp_path):
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))
    w = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    assert w.area.empty.isVisible()
    assert not any(a.isEnabled() for a in w.document_actions)
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....not audio")
    w.open_path(bad)
    qtbot.waitUntil(lambda: w.findChild(QMessageBox, "error") is not None, timeout=20000)
    assert w.session is None and w.area.empty.isVisible()  # still the clear empty state
    w.open_path(DEMO)
    qtbot.waitUntil(lambda: w.session is not None, timeout=20000)
    assert not w.area.empty.isVisible() and all(a.isEnabled() for a in w.document_actions)
    w.close()


def test_the_first_run_layout_leaves_the_canvas_most_of_the_window(qtbot, window):
    docks = {d.windowTitle(): d for d in window.docks}
    tabbed = window.tabifiedDockWidgets(docks["View"])
    assert docks["Analysis"] in tabbed and docks["Selection"] in tabbed
    assert docks["Brushes"] not in tabbed
    qtbot.wait(20)
    # 490 of 800 px before (four stacked panels, a 210 px nnAudio strip), 533 now
    assert window.canvas.height() >= 0.65 * window.height(), window.canvas.height()
    assert docks["nnAudio view"].height() <= 170
    save = window.brush_panel.save_button  # the panel's last widget
    shown = save.visibleRegion().boundingRect()
    assert shown.height() == save.height(), "the brush panel is cut off above its last button"


def test_the_toolbar_buttons_are_the_menus_actions(qtbot, window):
    bar = window.toolbar
    button = {a.iconText(): bar.widgetForAction(a) for a in bar.actions() if a.iconText()}
    assert {"Paint", "Rectangle", "Lasso", "Harmonic", "Undo", "Redo", "Play", "Stop",
            "Zoom in", "Zoom out", "Fit"} <= set(button)
    qtbot.mouseClick(button["Lasso"], Qt.MouseButton.LeftButton)
    assert window.canvas.tool == "lasso" and window.selection.tool_actions["lasso"].isChecked()
    assert not window.selection.tool_actions["paint"].isChecked()
    qtbot.mouseClick(button["Paint"], Qt.MouseButton.LeftButton)
    assert window.canvas.tool == "paint"
    before = window.doc.magnitude.clone()
    paint_whistle(qtbot, window)
    assert button["Undo"].isEnabled() and button["Undo"].text() == "Undo"  # a fixed label
    assert "Ctrl+Z" in window.undo_action.toolTip()
    qtbot.mouseClick(button["Undo"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: torch.equal(window.doc.magnitude, before))
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    next(a for a in view_menu.actions() if a.text() == "Toolbar").trigger()
    assert not bar.isVisible()


def test_help_lists_the_menus_shortcuts_and_about_names_the_device(qtbot, window):
    from PySide6.QtWidgets import QDialog

    qtbot.keyClick(window, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: window.findChild(QDialog, "shortcuts") is not None)
    dialog = window.findChild(QDialog, "shortcuts")
    table = dialog.table
    rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert rows["Edit > Undo"] == "Ctrl+Z" and rows["Play > Play / pause"] == "Space"
    assert rows["Edit > Lasso select tool"] == "A" and rows["File > Export audio…"] == "Ctrl+E"
    assert "Scrub" in rows and "Pan" in rows  # the gestures no menu holds
    assert not dialog.isModal()
    dialog.close()
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    next(a for a in help_menu.actions() if "About" in a.text()).trigger()
    about = window.findChild(QMessageBox, "about")
    assert "Engine device: cpu" in about.text() and "torch" in about.text()
    about.close()


def test_the_play_button_says_pause_while_playing(qtbot, window):
    button = window.toolbar.widgetForAction(window.transport.play_action)
    assert button.text() == "Play"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.player.playing and button.text() == "Pause"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert not window.player.playing and button.text() == "Play"
    window.transport.play_from(11.8)  # 0.2 s before the demo's end: it stops by itself
    assert button.text() == "Pause"
    qtbot.waitUntil(lambda: not window.player.playing and button.text() == "Play", timeout=3000)
