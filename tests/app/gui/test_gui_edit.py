"""Edit > Cut, Copy, Paste, Paste mixed in, Delete, Trim to selection, Duplicate and
Insert silence… through the window (issue 48.1): a time range selected with the
Time select tool's drag, the entries chosen from the menu or by their keys, each
one undo step undone exactly; a project keeps the edited file; the clipboard
outlives the file."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from engine.model.splice import FADE_S
from tests.dialogs import choose, when_shown
from tests.gui_input import audio, band_db, point, select_band, select_time, wait_edit


def test_cut_paste_delete_trim_duplicate_each_one_step_undone_exactly(qtbot, window):
    sr = window.doc.sample_rate
    source = audio(window)
    t0, t1 = select_time(qtbot, window, 2.0, 3.0)
    s0, s1 = round(t0 * sr), round(t1 * sr)
    reach = round(FADE_S * sr)

    # Edit > Cut, by its key
    qtbot.keyClick(window.canvas, Qt.Key.Key_X, Qt.KeyboardModifier.ControlModifier)
    wait_edit(qtbot, window, 1)
    cut = audio(window)
    assert cut.shape[1] == source.shape[1] - (s1 - s0)
    keep = np.r_[0:s0 - reach, s0 + reach:cut.shape[1]]
    expected = np.concatenate([source[:, :s0], source[:, s1:]], 1)
    assert np.array_equal(cut[:, keep], expected[:, keep])
    assert window.canvas.selection is None and window.canvas.playhead == pytest.approx(t0)
    assert "Undo cut" in window.undo_action.text()

    choose(window, "Edit > Paste")  # at the playhead: where it came from
    wait_edit(qtbot, window, 2)
    pasted = audio(window)
    assert pasted.shape == source.shape
    outside = np.ones(source.shape[1], bool)
    for j in (s0, s1):
        outside[j - reach:j + reach] = False
    assert np.array_equal(pasted[:, outside], source[:, outside])
    assert window.canvas.selection.span()[:2] == pytest.approx((t0, t1), abs=1e-3)

    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), cut)
    assert window.opened.selection is None  # as the cut left it
    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), source)
    # the range cut, selected again (it stayed on the pasted range before)
    assert window.canvas.selection.span()[:2] == pytest.approx((t0, t1), abs=1e-3)
    choose(window, "Edit > Redo")
    assert np.array_equal(audio(window), cut)
    assert window.opened.selection is None and window.canvas.selection is None
    choose(window, "Edit > Undo")

    select_time(qtbot, window, 1.0, 1.5)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Delete)  # Edit > Delete
    wait_edit(qtbot, window, 1)
    assert audio(window).shape[1] < source.shape[1]
    choose(window, "Edit > Undo")
    select_time(qtbot, window, 1.0, 4.0)
    window.canvas.view.t0, window.canvas.view.t1 = 6.0, 10.0  # past the end it will have
    choose(window, "Edit > Trim to selection")
    wait_edit(qtbot, window, 1)
    assert window.canvas.view.t0 == 0.0  # the trimmed file shown, not a blank view
    trimmed = audio(window)
    assert abs(trimmed.shape[1] - 3 * sr) < 0.05 * sr
    choose(window, "Edit > Undo")
    select_time(qtbot, window, 1.0, 2.0)
    choose(window, "Edit > Duplicate")
    wait_edit(qtbot, window, 1)
    span = window.canvas.selection.span()
    assert audio(window).shape[1] == source.shape[1] + round(span[1] * sr) - round(span[0] * sr)
    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), source)


def test_copy_paste_mixed_in_or_replacing_and_insert_silence_at_the_playhead(qtbot, window):
    sr = window.doc.sample_rate
    source = audio(window)
    select_time(qtbot, window, 1.0, 2.0)
    choose(window, "Edit > Copy")
    assert window.undo_stack.count() == 0  # a copy changes nothing
    assert "Copied" in window.statusBar().currentMessage()
    window.transport.place_playhead(5.0)
    choose(window, "Edit > Paste mixed in")
    wait_edit(qtbot, window, 1)
    mixed = audio(window)
    assert mixed.shape == source.shape
    assert not np.array_equal(mixed[:, 5 * sr:6 * sr], source[:, 5 * sr:6 * sr])
    assert np.array_equal(mixed[:, :5 * sr - 200], source[:, :5 * sr - 200])
    choose(window, "Edit > Paste replacing")  # over what is at the playhead
    wait_edit(qtbot, window, 2)
    replaced = audio(window)
    assert replaced.shape == source.shape
    inside = slice(5 * sr + 200, 6 * sr - 200)
    assert np.array_equal(replaced[:, inside], source[:, sr + 200:2 * sr - 200])
    choose(window, "Edit > Undo")
    window.transport.place_playhead(3.0)
    when_shown(window, QInputDialog, "insert-silence",
               lambda d: (d.setDoubleValue(0.5), d.accept()))
    choose(window, "Edit > Insert silence…")
    wait_edit(qtbot, window, 2)
    longer = audio(window)
    assert longer.shape[1] == source.shape[1] + sr // 2
    assert not longer[:, 3 * sr + 200:3 * sr + sr // 2 - 200].any()


def test_a_time_edit_is_kept_by_the_project_and_autosave_and_the_clipboard_outlives_the_file(
        qtbot, window, tmp_path):
    from app.assets import DEMO
    from app.project.write import load_project
    from tests.gui_input import answer_file_dialog

    select_time(qtbot, window, 2.0, 4.0)
    choose(window, "Edit > Cut")
    wait_edit(qtbot, window, 1)
    edited = audio(window)
    window.autosaver.path = tmp_path / "autosave-1.spp"  # what recovery would open
    window.autosaver.save()
    assert window.autosaver.idle.wait(30)
    recovered = load_project(window.autosaver.path, device="cpu").doc
    assert np.array_equal(recovered.content_samples, edited)
    project = tmp_path / "cut.spp"
    choose(window, "File > Save project as…")
    answer_file_dialog(qtbot, window, project)
    qtbot.waitUntil(lambda: project.exists() and window.jobs.idle(), timeout=30000)
    window.files.open_project(project)
    qtbot.waitUntil(lambda: window.jobs.idle() and window.opened.project_path == project,
                    timeout=30000)
    assert np.array_equal(audio(window), edited)  # the edited file, bit for bit

    window.open_path(DEMO)  # another file: the clipboard stays
    qtbot.waitUntil(lambda: window.jobs.idle() and window.opened.project_path is None,
                    timeout=30000)
    length = window.doc.length
    window.transport.place_playhead(1.0)
    choose(window, "Edit > Paste")
    wait_edit(qtbot, window, 1)
    assert window.doc.length == length + window.opened.clipboard.frames


def test_a_right_click_offers_the_edits_and_pastes_where_it_was_clicked(qtbot, window):
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    def context_menu(seconds: float) -> QMenu:
        at = point(window, seconds, 2000)
        qtbot.mouseClick(window.canvas, Qt.MouseButton.RightButton, pos=at)
        QApplication.sendEvent(window.canvas, QContextMenuEvent(
            QContextMenuEvent.Reason.Mouse, at, window.canvas.mapToGlobal(at)))
        qtbot.waitUntil(lambda: any(m.isVisible() for m in window.findChildren(
            QMenu, "edit-context-menu")))
        return next(m for m in window.findChildren(QMenu, "edit-context-menu") if m.isVisible())

    def entry(menu: QMenu, text: str):
        return next(a for a in menu.actions() if a.text().replace("&", "") == text)

    length = window.doc.length
    t0, t1 = select_time(qtbot, window, 1.0, 2.0)
    menu = context_menu(1.5)
    assert not entry(menu, "Paste here").isEnabled()  # nothing copied yet
    entry(menu, "Cut").trigger()
    menu.close()
    wait_edit(qtbot, window, 1)
    cut = window.doc.length
    assert cut < length
    menu = context_menu(6.0)
    entry(menu, "Paste here").trigger()
    menu.close()
    wait_edit(qtbot, window, 2)
    assert window.doc.length == length
    assert window.canvas.selection.span()[0] == pytest.approx(6.0, abs=0.05)






def test_a_band_is_cut_copied_pasted_and_pasted_as_a_layer(qtbot, window):
    source = audio(window)
    whistle = band_db(window, 4.0, 5.0, 6000)
    select_band(qtbot, window, 3.5, 5.5, 5500, 6500)
    choose(window, "Edit > Copy")
    qtbot.waitUntil(lambda: window.jobs.idle() and window.opened.clipboard is not None)
    assert window.undo_stack.count() == 0
    window.transport.place_playhead(9.0)
    choose(window, "Edit > Paste")  # a spectral clip mixes in at the playhead
    wait_edit(qtbot, window, 1)
    assert band_db(window, 9.5, 10.5, 6000) > whistle - 3
    t0, _, low, high = window.canvas.selection.span()  # what was pasted, selected
    assert t0 == pytest.approx(9.0) and low < 6000 < high < 8000
    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), source)

    select_band(qtbot, window, 3.5, 5.5, 5500, 6500)
    choose(window, "Edit > Cut")
    wait_edit(qtbot, window, 1)
    assert band_db(window, 4.0, 5.0, 6000) < whistle - 30
    assert window.doc.length == source.shape[1]  # a band's cut keeps the length
    select_band(qtbot, window, 6.0, 7.0, 5500, 6500)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Delete)  # Edit > Delete, on the band
    wait_edit(qtbot, window, 2)
    assert band_db(window, 6.2, 6.8, 6000) < whistle - 30
    layers = len(window.doc.layers.state.layers)
    window.transport.place_playhead(9.0)
    choose(window, "Edit > Paste as new layer")  # what was cut, above: made active
    wait_edit(qtbot, window, 3)
    assert len(window.doc.layers.state.layers) == layers + 1
    assert band_db(window, 9.5, 10.5, 6000) > whistle - 3


def test_transform_selection_moves_the_whistle_an_octave_down_leaving_its_place_empty(
        qtbot, window):
    """(Healing the hole is tested in test_spectral_edit: here the whistle goes on either
    side of the selection, and a heal would rightly bring it back.)"""
    from PySide6.QtWidgets import QDialog

    whistle = band_db(window, 4.0, 5.0, 6000)
    select_band(qtbot, window, 3.5, 5.5, 5500, 6500)

    def answer(dialog):
        dialog.fields["semitones"].setValue(-12)
        dialog.accept()

    when_shown(window, QDialog, "transform-dialog", answer)
    choose(window, "Edit > Transform selection…")
    wait_edit(qtbot, window, 1)
    assert band_db(window, 4.0, 5.0, 3000) > whistle - 3
    assert band_db(window, 4.0, 5.0, 6000) < whistle - 30


def test_selection_gain_fades_invert_and_normalize(qtbot, window):
    sr = window.doc.sample_rate
    source = audio(window)
    t0, t1 = select_time(qtbot, window, 1.0, 2.0)
    when_shown(window, QInputDialog, "gain-dialog",
               lambda d: (d.setDoubleValue(-12.0), d.accept()))
    choose(window, "Selection > Gain…")
    wait_edit(qtbot, window, 1)
    quiet = slice(round(1.2 * sr), round(1.8 * sr))
    ratio = np.abs(audio(window)[:, quiet]).max() / np.abs(source[:, quiet]).max()
    assert 20 * np.log10(ratio) == pytest.approx(-12, abs=0.5)
    for n, entry in enumerate(("Fade in", "Fade out", "Invert polarity"), start=2):
        choose(window, f"Selection > {entry}")
        wait_edit(qtbot, window, n)
    choose(window, "Edit > Clear selection")
    when_shown(window, QInputDialog, "normalize-dialog",
               lambda d: (d.setDoubleValue(-1.0), d.accept()))
    choose(window, "Selection > Normalize…")  # nothing selected: the whole file
    wait_edit(qtbot, window, 5)
    assert 20 * np.log10(np.abs(audio(window)).max()) == pytest.approx(-1.0, abs=0.3)
    for _ in range(5):
        choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), source)


def test_a_stereo_file_with_no_selection_then_a_time_range(qtbot, window, tmp_path):
    """The workflow across steps on a stereo file: Selection > Gain… with nothing selected
    acts on every channel of the whole file; Cut with nothing selected says what to do and
    changes nothing; a time range then deleted shortens both channels; undo takes it all
    back."""
    import soundfile as sf

    sr = 16000
    t = np.arange(4 * sr) / sr
    x = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.2 * np.sin(2 * np.pi * 660 * t)])
    sf.write(tmp_path / "stereo.wav", x.T, sr, subtype="FLOAT")
    window.open_path(tmp_path / "stereo.wav")
    qtbot.waitUntil(lambda: window.jobs.idle() and window.doc.channels == 2, timeout=30000)
    source = audio(window)
    when_shown(window, QInputDialog, "gain-dialog",
               lambda d: (d.setDoubleValue(-6.0), d.accept()))
    choose(window, "Selection > Gain…")
    wait_edit(qtbot, window, 1)
    steady = slice(sr, 3 * sr)
    ratio = np.abs(audio(window)[:, steady]).max(axis=1) / np.abs(source[:, steady]).max(axis=1)
    np.testing.assert_allclose(20 * np.log10(ratio), [-6, -6], atol=0.1)  # both channels
    choose(window, "Edit > Cut")
    assert "select a time range first" in window.statusBar().currentMessage()
    assert window.undo_stack.count() == 1
    select_time(qtbot, window, 1.0, 2.0)
    choose(window, "Edit > Delete")
    wait_edit(qtbot, window, 2)
    assert audio(window).shape[0] == 2 and audio(window).shape[1] < source.shape[1]
    choose(window, "Edit > Undo")
    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), source)


def test_a_cut_is_drawn_at_once_and_the_window_analyses_the_rest_behind_it(qtbot, window):
    """The edited document's frames past the junction are analysed when first read: the
    worker draws what the view shows, a thread behind the window analyses the rest
    (Document.analyse_behind), and the whole-file overview ends as a freshly opened
    document's."""
    from engine.model.document import Document

    window.canvas.view.t0, window.canvas.view.t1 = 0.5, 1.5
    select_time(qtbot, window, 0.6, 0.7)
    qtbot.keyClick(window.canvas, Qt.Key.Key_X, Qt.KeyboardModifier.ControlModifier)
    wait_edit(qtbot, window, 1)
    doc = window.doc
    qtbot.waitUntil(lambda: not doc.analysing, timeout=20000)
    assert doc.cells.unanalysed == 0
    fresh = Document(doc.audio, transform=doc.transform, device="cpu",
                     content=doc.content_samples)
    fresh.prepare_overview()
    assert np.array_equal(doc._overview.get(doc.cells).numpy(),
                          fresh._overview.get(fresh.cells).numpy())
