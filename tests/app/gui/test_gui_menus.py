"""Every menu action, chosen from its menu, its dialogs answered as a user answers them
(QTimer, with the event loop running between them), and the file or the state that
results checked. The PNG export had tests and never worked from the menu: this is
the path those tests skipped."""

import numpy as np
import pytest
from PySide6.QtWidgets import QDialog

from engine.io.audio import load
from engine.io.layout import channel_mask
from tests.dialogs import choose, menu_action, open_file, run_until, save_as, when_shown
from tests.gui_input import read_png, wavex


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
    run_until(lambda: out.exists() and window.jobs.idle())
    png = read_png(out)
    assert png.shape == (300, 800, 4)
    assert len(np.unique(png[..., 1])) > 50


@pytest.mark.slow
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
    run_until(lambda: out.exists() and window.jobs.idle())
    assert channel_mask(out) == 0x60F
    assert load(out).layout == ("FL", "FR", "FC", "LFE", "SL", "SR")
    flac = tmp_path / "surround-edited.flac"
    save_as(window, flac)
    choose(window, "File > Export audio…")
    run_until(lambda: flac.name in window.statusBar().currentMessage())
    assert "not kept: the speaker layout FL FR FC LFE SL SR" in \
        window.statusBar().currentMessage()


@pytest.mark.slow
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


@pytest.mark.slow
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
    run_until(lambda: window.opened.audio_path == take and window.jobs.idle())
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
    run_until(lambda: window.opened.audio_path == take and window.jobs.idle())
    when_shown(window, QFileDialog, "file-dialog", look)
    choose(window, "File > Export audio…")  # this one: where it was exported last
    run_until(lambda: len(folders) == 3)
    assert folders[1:] == [str(other), str(takes / "mixes")]


def strokes(qtbot, window, count: int) -> list:
    """Paint ``count`` hard-eraser strokes; the document's cells after each."""
    from tests.gui_input import choose_brush, drag, point

    choose_brush(window)
    states = [window.doc.coefficients(0, window.doc.n_frames).clone()]
    for k in range(count):
        drag(qtbot, window.canvas, point(window, 1.0 + 2 * k, 6000 - 1500 * k),
             point(window, 2.5 + 2 * k, 6000 - 1500 * k))
        states.append(window.doc.coefficients(0, window.doc.n_frames).clone())
    return states


@pytest.mark.slow
def test_file_save_project_as_and_open_project_keep_the_history(qtbot, window, tmp_path):
    """The history was empty after reopening a project: nothing could be undone."""
    import soundfile as sf
    import torch

    states = strokes(qtbot, window, 3)
    choose(window, "Edit > Undo")  # the third stroke undone: it can be redone
    project = tmp_path / "take.spp"
    save_as(window, project)
    choose(window, "File > Save project as…")
    run_until(lambda: window.opened.project_path == project and window.undo_stack.isClean())
    other = tmp_path / "other.wav"
    sf.write(other, np.zeros(8000), 8000)
    open_file(window, other)  # another document in between
    assert window.undo_stack.count() == 0
    save_as(window, project)
    choose(window, "File > Open project…")
    run_until(lambda: window.opened.project_path == project and window.jobs.idle())
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


def test_file_save_project_asks_where_the_first_time_then_saves_in_place(qtbot, window,
                                                                         tmp_path):
    from app.project.write import load_project

    strokes(qtbot, window, 1)
    project = tmp_path / "first.spp"
    save_as(window, project)
    choose(window, "File > Save project")  # none yet: the dialog asks where
    run_until(lambda: window.opened.project_path == project and window.undo_stack.isClean())
    strokes(qtbot, window, 1)
    assert window.modified
    choose(window, "File > Save project")  # in place, no dialog
    assert not any(d.isVisible() for d in window.findChildren(QDialog))
    run_until(lambda: window.undo_stack.isClean())
    assert load_project(project, device="cpu").history.index == 2
    assert window.windowTitle() == "SpectroPaint — first.spp"


DEPTHS = {"Same as source": "PCM_16", "Format default (WAV float, FLAC/AIFF 24)": "FLOAT",
          "16-bit": "PCM_16", "24-bit": "PCM_24", "32-bit float": "FLOAT"}


@pytest.mark.slow
def test_file_export_bit_depth_each_choice_is_the_depth_written(qtbot, window, tmp_path):
    import soundfile as sf

    for i, (label, subtype) in enumerate(DEPTHS.items()):
        choose(window, f"File > Export bit depth > {label}")
        assert menu_action(window, f"File > Export bit depth > {label}").isChecked()
        out = tmp_path / f"depth-{i}.wav"
        save_as(window, out)
        choose(window, "File > Export audio…")
        run_until(lambda out=out: out.name in window.statusBar().currentMessage())
        assert sf.info(out).subtype == subtype, label


QUALITIES = {"Format default": None, "10 (best)": 10.0, "8": 8.0, "6": 6.0, "4": 4.0,
             "2 (smallest)": 2.0}


def test_file_export_quality_each_choice_sizes_the_ogg_written(qtbot, window, tmp_path):
    """Issue 50.12: a quality for Ogg Vorbis and MP3 exports; a better one is a larger
    file, and a WAV export takes none (written as before)."""
    sizes = {}
    for i, label in enumerate(QUALITIES):
        choose(window, f"File > Export quality (Ogg, MP3) > {label}")
        assert menu_action(window, f"File > Export quality (Ogg, MP3) > {label}").isChecked()
        out = tmp_path / f"quality-{i}.ogg"
        save_as(window, out)
        choose(window, "File > Export audio…")
        run_until(lambda out=out: out.name in window.statusBar().currentMessage())
        sizes[QUALITIES[label]] = out.stat().st_size
    assert sizes[2.0] < sizes[4.0] < sizes[6.0] < sizes[8.0] < sizes[10.0]
    save_as(window, tmp_path / "lossless.wav")
    choose(window, "File > Export audio…")
    run_until(lambda: "lossless.wav" in window.statusBar().currentMessage())


def test_file_import_image_as_sound_adds_it_as_one_step(qtbot, window, tmp_path):
    from engine.io.png import write_png

    picture = np.zeros((40, 60, 4), np.uint8)
    picture[..., 3] = 255
    picture[20, :, :3] = 255
    path = tmp_path / "line.png"
    write_png(picture, path)
    before = window.session.synth.waveform().copy()
    save_as(window, path)
    choose(window, "File > Import image as sound…")
    run_until(lambda: window.undo_stack.count() == 1 and window.session.idle)
    assert window.undo_stack.text(0) == "image: line.png"
    assert not np.array_equal(window.session.synth.waveform(), before)


def test_file_quit_asks_about_unsaved_edits(qtbot, window):
    from tests.dialogs import press

    strokes(qtbot, window, 1)
    press(window, "question", "Cancel")
    choose(window, "File > Quit")
    run_until(lambda: window.findChild(QDialog, "question") is None
              and not any(b.isVisible() for b in window.findChildren(QDialog)))
    assert window.isVisible()  # cancelled: still open, edits kept
    press(window, "question", "Discard")
    choose(window, "File > Quit")
    run_until(lambda: not window.isVisible())


def test_file_open_with_unsaved_edits_can_save_them_first(qtbot, window, tmp_path):
    """Open audio… with edits: the question's Save asks where, saves, then opens."""
    import soundfile as sf

    from tests.dialogs import press

    strokes(qtbot, window, 1)
    other = tmp_path / "next.wav"
    sf.write(other, np.zeros(8000), 8000)
    project = tmp_path / "kept.spp"
    press(window, "question", "Save project")
    save_as(window, project)  # where to save the edits
    choose(window, "File > Open audio…")
    run_until(lambda: project.exists() and window.findChild(QDialog, "file-dialog") is not None
              and any(d.isVisible() for d in window.findChildren(QDialog, "file-dialog")))
    save_as(window, other)  # then what to open
    run_until(lambda: window.opened.audio_path == other)
    assert load_project_history(project) == 1


def load_project_history(path) -> int:
    from app.project.write import load_project

    return len(load_project(path, device="cpu").history.steps)


@pytest.mark.slow
def test_file_export_audio_over_the_source_asks_first(qtbot, window, tmp_path):
    import soundfile as sf

    from tests.dialogs import press

    source = tmp_path / "take.wav"
    sf.write(source, 0.1 * np.random.default_rng(1).standard_normal(16000), 16000)
    open_file(window, source)
    strokes(qtbot, window, 1)
    before = source.read_bytes()
    press(window, "question", "Cancel")
    save_as(window, source)
    choose(window, "File > Export audio…")
    run_until(lambda: not any(d.isVisible() for d in window.findChildren(QDialog)))
    assert source.read_bytes() == before
    press(window, "question", "OK")
    save_as(window, source)
    choose(window, "File > Export audio…")
    run_until(lambda: "take.wav" in window.statusBar().currentMessage() and
                      "wrote" in window.statusBar().currentMessage())
    assert source.read_bytes() != before


def test_edit_tools_invert_and_clear_selection(qtbot, window):
    from PySide6.QtCore import QPoint

    from tests.gui_input import drag, lasso, point

    choose(window, "Edit > Select all")
    doc = window.doc
    assert window.canvas.selection.span() == (0.0, doc.length / doc.sample_rate, 0.0,
                                               doc.sample_rate / 2)
    choose(window, "Edit > Lasso select tool")
    assert window.canvas.tool == "lasso"
    lasso(qtbot, window)
    assert window.canvas.selection.kind == "lasso"
    choose(window, "Edit > Invert selection")
    assert window.canvas.selection.inverted and window.selection_panel.inverted.isChecked()
    choose(window, "Edit > Clear selection")
    assert window.canvas.selection is None
    choose(window, "Edit > Paint tool")
    assert window.canvas.tool == "paint" and window.selection.tool_actions["paint"].isChecked()
    before = window.undo_stack.count()
    start = point(window, 3.0, 2000)
    drag(qtbot, window.canvas, start, start + QPoint(6, 0), steps=3)  # a click paints nothing
    assert window.undo_stack.count() == before + 1  # paints again


def test_view_zoom_in_out_and_fit(qtbot, window):
    view = window.canvas.view
    span = view.t1 - view.t0
    choose(window, "View > Zoom in")
    assert view.t1 - view.t0 == pytest.approx(span / 2)
    choose(window, "View > Zoom out")
    assert view.t1 - view.t0 == pytest.approx(span)
    choose(window, "View > Zoom in")
    choose(window, "View > Fit to window")
    assert (view.t0, view.t1) == (0.0, view.duration)


PANELS = ("Brushes", "View", "Analysis", "Selection", "Layers", "History", "Messages",
          "Spectrum", "nnAudio view", "Toolbar", "Pointer readout and level")


def test_view_menu_hides_and_shows_every_panel(qtbot, window):
    from PySide6.QtWidgets import QDockWidget, QToolBar

    panels = {w.windowTitle(): w for w in
              window.findChildren(QDockWidget) + window.findChildren(QToolBar)}
    for name in PANELS:
        choose(window, f"View > {name}")
        assert not panels[name].isVisible(), name
        choose(window, f"View > {name}")
        assert panels[name].isVisible(), name


def test_play_menu_plays_from_the_cursor_the_selection_looped_and_its_band_alone(qtbot,
                                                                                 window):
    from app.gui.services.playback import BLOCK
    from app.session.selection import Selection
    from tests.gui_input import point

    player, rate = window.player, window.doc.sample_rate
    qtbot.mouseMove(window.canvas, point(window, 6.0, 3000))  # a move, wherever it was
    qtbot.wait(20)
    qtbot.mouseMove(window.canvas, point(window, 4.0, 3000))
    qtbot.waitUntil(lambda: abs(window.canvas.pointer_seconds() - 4.0) < 0.05)
    choose(window, "Play > Play from cursor")
    assert abs(player.start_frame / rate - 4.0) <= 2 * window.canvas.view.seconds_per_pixel
    choose(window, "Play > Stop")
    assert not player.playing
    window.selection.set_selection(Selection.rect(2.0, 2.3, f_lo=5500.0, f_hi=6500.0))
    choose(window, "Play > Loop selection")
    choose(window, "Play > Play selection")
    assert (player.start_frame, player.stop_frame) == (int(2.0 * rate), int(2.3 * rate))
    run_until(lambda: player.position() is not None and player.position() < int(2.1 * rate)
              and player._next > int(2.2 * rate), timeout=5)  # went round: looped
    choose(window, "Play > Stop")
    choose(window, "Play > Loop selection")  # off again
    choose(window, "Play > Selected band only")
    choose(window, "Play > Play selection")  # now the band alone
    band = player.source(int(2.0 * rate), int(2.3 * rate))
    whole = window.session.synth.cached(int(2.0 * rate), int(2.3 * rate))
    assert np.abs(band).max() < 0.5 * np.abs(whole).max()  # 5.5-6.5 kHz: the quiet whistle
    choose(window, "Play > Stop")
    choose(window, "Play > Selected band only")
    choose(window, "Play > Play selection alone")  # alone, whatever the band setting says
    assert np.array_equal(player.source(int(2.0 * rate), int(2.0 * rate) + BLOCK),
                          band[:, :BLOCK])
    choose(window, "Play > Stop")


def test_help_about_names_the_version_and_the_device(qtbot, window):
    from PySide6.QtWidgets import QMessageBox

    texts = []
    when_shown(window, QMessageBox, "about", lambda box: (texts.append(box.text()),
                                                           box.accept()))
    choose(window, "Help > About SpectroPaint")
    run_until(lambda: texts)
    assert "Engine device: cpu" in texts[0] and "SpectroPaint" in texts[0]


def menu_paths(window) -> list[str]:
    """Every entry of the window's menus ("File > Open recent" once: its entries are
    the files opened last)."""
    paths = []

    def walk(actions, prefix):
        for a in actions:
            name = a.text().replace("&", "")
            if a.isSeparator():
                continue
            if a.menu() is not None and name != "Open recent":
                walk(a.menu().actions(), f"{prefix}{name} > ")
            else:
                paths.append(prefix + name)

    walk(window.menuBar().actions(), "")
    return paths


PLAYING = ("Play from cursor", "Play selection", "Play selection alone", "Loop selection",
           "Selected band only", "Stop")
CHOSEN_IN = {  # each test here, in test_gui_workday or test_gui_selection: what it chooses
    "test_file_export_audio_keeps_the_speaker_layout": ["File > Open audio…",
                                                        "File > Export audio…"],
    "test_file_export_audio_starts_in_the_sources_folder_then_where_it_last_went":
        ["File > Open recent"],
    "test_file_save_project_as_and_open_project_keep_the_history":
        ["File > Open project…", "File > Save project as…", "Edit > Undo", "Edit > Redo"],
    "test_file_save_project_asks_where_the_first_time_then_saves_in_place":
        ["File > Save project"],
    "test_file_export_bit_depth_each_choice_is_the_depth_written":
        [f"File > Export bit depth > {label}" for label in DEPTHS],
    "test_file_export_quality_each_choice_sizes_the_ogg_written":
        [f"File > Export quality (Ogg, MP3) > {label}" for label in QUALITIES],
    "test_file_export_spectrogram_image_writes_the_png_chosen":
        ["File > Export spectrogram image…"],
    "test_file_import_image_as_sound_adds_it_as_one_step": ["File > Import image as sound…"],
    "test_file_quit_asks_about_unsaved_edits": ["File > Quit"],
    "test_edit_tools_invert_and_clear_selection":
        [f"Edit > {name}" for name in ("Paint tool", "Lasso select tool", "Select all",
                                       "Invert selection", "Clear selection")],
    "test_a_selection_does_not_carry_over_to_the_next_file": ["Edit > Rectangle select tool"],
    "test_precise_selections_typed_select_all_and_time_or_frequency_only":
        ["Edit > Time select tool", "Edit > Frequency select tool"],
    "test_the_pitch_grid_thins_with_zoom_and_a_selection_never_looks_like_it":
        ["Edit > Harmonic select tool"],
    "test_the_overview_lane_shows_the_whole_waveform_follows_edits_and_moves_the_view":
        ["Edit > Fill selection with the brush"],
    "test_view_zoom_in_out_and_fit": ["View > Zoom in", "View > Zoom out",
                                      "View > Fit to window"],
    "test_view_menu_hides_and_shows_every_panel": [f"View > {name}" for name in PANELS],
    "test_the_level_meter_shows_the_peak_of_what_plays_then_falls": ["Play > Play / pause"],
    "test_play_menu_plays_from_the_cursor_the_selection_looped_and_its_band_alone":
        [f"Play > {name}" for name in PLAYING],
    "test_f1_the_readme_and_the_guide_name_the_same_keys": ["Help > Keyboard and mouse…"],
    "test_help_about_names_the_version_and_the_device": ["Help > About SpectroPaint"],
    "test_compare_switches_playback_to_the_original_at_the_same_playhead":
        ["Play > Compare: original"],
    "test_dehum_through_the_menu_is_one_undo_step_undone_bit_exactly": ["Repair > De-hum…"],
    "test_declick_on_a_selection_changes_only_its_lane_and_time":
        ["Repair > De-click…", "Repair > Next repaired click",
         "Repair > Previous repaired click", "Repair > Put back this click"],
    "test_a_clean_file_says_nothing_was_found_and_adds_no_step": ["Repair > De-clip…"],
    "test_cancel_during_a_long_repair_leaves_the_document_unchanged": ["Repair > De-noise…"],
    "test_repair_voice_de_noise_through_the_menu_is_one_undo_step": ["Repair > Voice de-noise…"],
    "test_cut_paste_delete_trim_duplicate_each_one_step_undone_exactly":
        [f"Edit > {name}" for name in ("Cut", "Paste", "Delete", "Trim to selection",
                                       "Duplicate")],
    "test_copy_paste_mixed_in_or_replacing_and_insert_silence_at_the_playhead":
        ["Edit > Copy", "Edit > Paste mixed in", "Edit > Paste replacing",
         "Edit > Insert silence…"],
    "test_a_band_is_cut_copied_pasted_and_pasted_as_a_layer": ["Edit > Paste as new layer"],
    "test_with_heal_on_the_hole_a_move_leaves_is_healed_from_around_it":
        ["Edit > Heal the hole a move leaves"],
    "test_transform_selection_moves_the_whistle_an_octave_down_leaving_its_place_empty":
        ["Edit > Transform selection…"],
    "test_transform_tool_moves_the_whistle_down_and_later_in_one_undo_step":
        ["Edit > Transform tool"],
    "test_selection_gain_fades_invert_and_normalize":
        [f"Selection > {name}" for name in ("Gain…", "Normalize…", "Fade in", "Fade out",
                                            "Invert polarity")],
    "test_layer_menu_new_duplicate_rename_merge_delete_each_one_step":
        [f"Layer > {name}" for name in ("New layer", "Duplicate layer", "Rename layer…",
                                        "Merge down", "Delete layer")],
    "test_selection_to_new_layer_moves_and_copy_to_new_layer_copies":
        ["Selection > To new layer", "Selection > Copy to new layer"],
    "test_unmix_dialog_then_the_source_brush_steers_it_and_stems_export":
        ["Layer > Unmix…", "Layer > Source brush (paint to separate)", "Layer > Export stems…"],
}


def covered() -> dict:
    """Each menu entry and the test that chooses it from its menu, answers its dialogs
    and checks the file or the state that results."""
    from tests.app.gui import (
        test_gui_edit,
        test_gui_layers,
        test_gui_repair,
        test_gui_selection,
        test_gui_transform,
        test_gui_workday,
    )
    from tests.engine import test_voice

    found = {**vars(test_gui_selection), **vars(test_gui_workday), **vars(test_gui_repair),
             **vars(test_gui_edit), **vars(test_gui_transform),
             **vars(test_gui_layers), **vars(test_voice), **globals()}
    return {path: found[name] for name, paths in CHOSEN_IN.items() for path in paths}


def test_every_menu_entry_has_a_test_through_its_menu(window):
    """A new menu entry without such a test fails here; each test named chooses its
    entry from the menu (its name is in the test's source, or in the list it walks;
    open_file() is File > Open audio…)."""
    import inspect
    import re

    tests, paths = covered(), menu_paths(window)
    assert sorted(tests) == sorted(paths)
    for path, test in tests.items():
        source = inspect.getsource(test)
        name = path.rsplit(" > ", 1)[1].removesuffix("…").removesuffix(" tool")
        walked = any(re.search(rf"\b{listed}\b", source) and name in values
                     for listed, values in (("DEPTHS", DEPTHS), ("QUALITIES", QUALITIES),
                                            ("PANELS", PANELS), ("PLAYING", PLAYING)))
        helper = path == "File > Open audio…" and "open_file(" in source or \
            name.endswith("repaired click") and "event_actions" in source or \
            path.startswith("Repair > De-") and "dialog_for(qtbot, window, " in source
        assert f'"{name}' in source or f'> {name}' in source or walked or helper, path
    assert len(paths) == 92


def test_a_save_that_leaves_undo_history_out_says_so_in_a_dialog(qtbot, window, tmp_path,
                                                                 monkeypatch):
    """Issue 50, item 4: steps past the project's history limit were left out with a
    status line that the next message overwrote after 1.5 s. Now a dialog says what was
    left out; the project keeps the newest steps."""
    from PySide6.QtWidgets import QMessageBox

    from app.project import saved_history
    from app.project.write import load_project

    strokes(qtbot, window, 3)
    step = window.undo_stack.command(2).step.nbytes
    monkeypatch.setattr(saved_history, "SAVE_LIMIT", 2 * step)  # room for about two
    project = tmp_path / "take.spp"
    save_as(window, project)
    choose(window, "File > Save project as…")
    run_until(lambda: window.findChild(QMessageBox, "error") is not None)
    said = window.findChild(QMessageBox, "error").text()
    assert said.startswith("Saved take.spp, but not all of its undo history: the history "
                           "kept 2 steps; 1 older and 0 undone ones past"), said
    assert len(load_project(project, device="cpu").history.steps) == 2


def test_a_reopened_project_saved_again_keeps_the_edits_it_was_opened_with(qtbot, window,
                                                                           tmp_path):
    """The edit tracker of a reopened project started empty: one more stroke, Save, and
    the project held that stroke alone; every edit it was opened with was lost."""
    import torch

    from tests.gui_input import drag, point

    strokes(qtbot, window, 2)
    project = tmp_path / "take.spp"
    save_as(window, project)
    choose(window, "File > Save project as…")
    run_until(lambda: window.opened.project_path == project and window.undo_stack.isClean())
    window.open_path(project)
    run_until(lambda: window.opened.project_path == project and window.jobs.idle()
              and window.undo_stack.count() == 2)
    drag(qtbot, window.canvas, point(window, 6.0, 2000), point(window, 7.0, 2000))
    edited = window.doc.coefficients(0, window.doc.n_frames).clone()
    choose(window, "File > Save project")
    run_until(lambda: window.undo_stack.isClean() and window.jobs.idle())
    window.open_path(project)
    run_until(lambda: window.jobs.idle() and window.undo_stack.count() == 3)
    assert torch.equal(window.doc.coefficients(0, window.doc.n_frames), edited)
