"""Every menu action, chosen from its menu, its dialogs answered as a user answers them
(QTimer, with the event loop running between them), and the file or the state that
results checked. The PNG export had tests and never worked from the menu: this is
the path those tests skipped."""

import numpy as np
import pytest
from PySide6.QtWidgets import QDialog

from engine.audio import load
from engine.layout import channel_mask
from tests.dialogs import choose, run_until, save_as, when_shown
from tests.test_gui_images import read_png
from tests.test_gui_lanes import wavex


def open_file(window, path) -> None:
    """File > Open audio…, the file chosen in the dialog; back when it is open and
    its audio made."""
    save_as(window, path)
    choose(window, "File > Open audio…")
    run_until(lambda: window.audio_path == path and not window.worker.isRunning())


def test_file_export_spectrogram_image_writes_the_png_chosen(qtbot, window, tmp_path):
    """The settings dialog deleted itself on closing, so reading it after the file
    dialog raised "QComboBox already deleted" and nothing was written."""
    out = tmp_path / "picture.png"

    def settings(dialog):
        dialog.width_px.setValue(800)
        dialog.height_px.setValue(300)
        dialog.colorbar.setChecked(False)
        dialog.accept()

    when_shown(window, QDialog, "picture-dialog", settings)
    save_as(window, out)
    choose(window, "File > Export spectrogram image…")
    run_until(lambda: out.exists() and not window.worker.isRunning())
    png = read_png(out)
    assert png.shape == (300, 800, 4)
    assert len(np.unique(png[..., 1])) > 50


def test_file_export_audio_keeps_the_speaker_layout(qtbot, window, tmp_path):
    """A 5.1 file with side speakers (mask 0x60F) exported as WAV was written as plain
    PCM: reopened, its lanes read 1-6. A FLAC cannot hold that order: the status
    bar says so."""
    rng = np.random.default_rng(7)
    source = tmp_path / "surround.wav"
    wavex(source, 0.2 * rng.standard_normal((6, 16000)), 16000, 0x60F)
    open_file(window, source)
    out = tmp_path / "surround-edited.wav"
    save_as(window, out)
    choose(window, "File > Export audio…")
    run_until(lambda: out.exists() and not window.worker.isRunning())
    assert channel_mask(out) == 0x60F
    assert load(out).layout == ("FL", "FR", "FC", "LFE", "SL", "SR")
    flac = tmp_path / "surround-edited.flac"
    save_as(window, flac)
    choose(window, "File > Export audio…")
    run_until(lambda: flac.name in window.statusBar().currentMessage())
    assert "not kept: the speaker layout FL FR FC LFE SL SR" in \
        window.statusBar().currentMessage()


def test_file_export_audio_offers_normalize_limit_or_keep_for_overs(qtbot, window, tmp_path):
    """The GUI said "... clipped ... use --normalize or --limit", flags of the command
    line. Now the export dialog has the choice, and asks when it is "ask"."""
    import soundfile as sf
    from PySide6.QtWidgets import QComboBox, QFileDialog, QMessageBox

    from tests.dialogs import press

    rng = np.random.default_rng(3)
    source = tmp_path / "hot.wav"
    sf.write(source, (1.6 * rng.uniform(-1, 1, 16000)).astype(np.float32), 16000,
             subtype="FLOAT")  # a float file holds overs
    open_file(window, source)
    out = tmp_path / "hot-normalized.wav"
    asked = []

    def read(box):
        asked.append(box.text() + box.informativeText())

    when_shown(window, QMessageBox, "overs-question", read)
    press(window, "overs-question", "Normalize")
    save_as(window, out)
    choose(window, "File > Export audio…")
    run_until(lambda: out.name in window.statusBar().currentMessage())
    assert "peaks at +4.1 dBFS" in asked[0] and "--" not in asked[0]
    assert np.abs(sf.read(out)[0]).max() == pytest.approx(10 ** (-0.1 / 20), abs=1e-4)

    limited = tmp_path / "hot-limited.flac"

    def limit_then_save(dialog):
        combo = dialog.findChild(QComboBox, "overs")
        combo.setCurrentIndex(combo.findData("limit"))

    when_shown(window, QFileDialog, "file-dialog", limit_then_save)
    save_as(window, limited)
    choose(window, "File > Export audio…")
    run_until(lambda: limited.name in window.statusBar().currentMessage())
    assert "soft-limited below -0.1 dBFS" in window.statusBar().currentMessage()
    assert window.findChild(QMessageBox, "overs-question") is None  # not asked: chosen
    assert np.abs(sf.read(limited)[0]).max() <= 10 ** (-0.1 / 20)
    assert window.settings.value("exportOvers") == "limit"  # remembered


def test_file_export_audio_starts_in_the_sources_folder_then_where_it_last_went(qtbot, window,
                                                                               tmp_path):
    """After an Open in another folder, an export of a file opened from its recent list
    landed among that folder's files: the dialog opened in the last folder used."""
    import soundfile as sf
    from PySide6.QtWidgets import QFileDialog

    takes, other = tmp_path / "takes", tmp_path / "elsewhere"
    takes.mkdir()
    other.mkdir()
    take = takes / "take.wav"
    sf.write(take, 0.1 * np.random.default_rng(2).standard_normal(16000), 16000)
    sf.write(other / "other.wav", np.zeros(16000), 16000)
    open_file(window, take)
    open_file(window, other / "other.wav")  # the last folder a dialog used: elsewhere/
    choose(window, f"File > Open recent > {take}")
    run_until(lambda: window.audio_path == take and not window.worker.isRunning())
    folders = []

    def look(dialog):
        folders.append(dialog.directory().absolutePath())
        dialog.reject()

    when_shown(window, QFileDialog, "file-dialog", look)
    choose(window, "File > Export audio…")
    run_until(lambda: folders)
    assert folders == [str(takes)]
    (takes / "mixes").mkdir()
    save_as(window, takes / "mixes" / "take-edited.wav")
    choose(window, "File > Export audio…")
    run_until(lambda: "take-edited.wav" in window.statusBar().currentMessage())
    open_file(window, other / "other.wav")
    when_shown(window, QFileDialog, "file-dialog", look)
    choose(window, "File > Export audio…")  # another document: its own folder
    run_until(lambda: len(folders) == 2)
    choose(window, f"File > Open recent > {take}")
    run_until(lambda: window.audio_path == take and not window.worker.isRunning())
    when_shown(window, QFileDialog, "file-dialog", look)
    choose(window, "File > Export audio…")  # this one: where it was exported last
    run_until(lambda: len(folders) == 3)
    assert folders[1:] == [str(other), str(takes / "mixes")]


def strokes(qtbot, window, count: int) -> list:
    """Paint ``count`` hard-eraser strokes; the document's cells after each."""
    from tests.test_gui import choose_brush, drag, point

    choose_brush(window)
    states = [window.doc.coefficients(0, window.doc.n_frames).clone()]
    for k in range(count):
        drag(qtbot, window.canvas, point(window, 1.0 + 2 * k, 6000 - 1500 * k),
             point(window, 2.5 + 2 * k, 6000 - 1500 * k))
        states.append(window.doc.coefficients(0, window.doc.n_frames).clone())
    return states


def test_file_save_project_as_and_open_project_keep_the_history(qtbot, window, tmp_path):
    """The history was empty after reopening a project: nothing could be undone."""
    import soundfile as sf
    import torch

    states = strokes(qtbot, window, 3)
    choose(window, "Edit > Undo")  # the third stroke undone: it can be redone
    project = tmp_path / "take.spp"
    save_as(window, project)
    choose(window, "File > Save project as…")
    run_until(lambda: window.project_path == project and window.undo_stack.isClean())
    other = tmp_path / "other.wav"
    sf.write(other, np.zeros(8000), 8000)
    open_file(window, other)  # another document in between
    assert window.undo_stack.count() == 0
    save_as(window, project)
    choose(window, "File > Open project…")
    run_until(lambda: window.project_path == project and not window.worker.isRunning())
    stack = window.undo_stack
    assert [stack.text(i) for i in range(stack.count())] == ["hard-eraser stroke"] * 3
    assert stack.index() == 2 and stack.isClean() and not window.modified
    cells = lambda: window.doc.coefficients(0, window.doc.n_frames)  # noqa: E731
    assert torch.equal(cells(), states[2])
    choose(window, "Edit > Redo")
    assert torch.equal(cells(), states[3])
    for state in reversed(states[:3]):
        choose(window, "Edit > Undo")
        assert torch.equal(cells(), state)
