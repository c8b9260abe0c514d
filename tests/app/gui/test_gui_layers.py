"""Layers in the window, driven as a user drives them: the Layer and Selection menus,
their dialogs answered, the Layers panel's rows and controls, the source brush
painted with the mouse, the view of the mix, a layer and every layer tinted; each
operation one undo step, undone bit for bit."""

import hashlib

import numpy as np
import pytest
import soundfile as sf
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QInputDialog, QSpinBox

from app.gui.actions.layeractions import UnmixDialog
from app.session.selection import Selection
from tests.dialogs import choose, run_until, save_as, when_shown
from tests.gui_input import drag, idle, names, pixels, point, settle


def digest(doc) -> str:
    return hashlib.sha1(doc.mix.contiguous().numpy().tobytes()).hexdigest()


def test_layer_menu_new_duplicate_rename_merge_delete_each_one_step(qtbot, window):
    doc = window.doc
    opened, steps = digest(doc), window.undo_stack.count()
    choose(window, "Layer > New layer")
    assert names(window) == ["Layer 1", "Recording"] and doc.layers.active.name == "Layer 1"
    choose(window, "Layer > Duplicate layer")
    assert names(window) == ["Layer 1 copy", "Layer 1", "Recording"]

    def rename(dialog):
        dialog.setTextValue("voice")
        dialog.accept()

    when_shown(window, QInputDialog, "rename-layer", rename)
    choose(window, "Layer > Rename layer…")
    run_until(lambda: "voice" in names(window))
    choose(window, "Layer > Merge down")
    assert names(window) == ["Layer 1", "Recording"]
    choose(window, "Layer > Delete layer")
    assert names(window) == ["Recording"]
    assert window.undo_stack.count() == steps + 5
    assert "delete layer" in window.undo_stack.text(window.undo_stack.count() - 1)
    for _ in range(5):
        choose(window, "Edit > Undo")
    settle(qtbot, window)
    assert doc.layers.plain and digest(doc) == opened and names(window) == ["Recording"]
    for _ in range(5):
        choose(window, "Edit > Redo")
    assert names(window) == ["Recording"] and not doc.layers.plain


def test_selection_to_new_layer_moves_and_copy_to_new_layer_copies(qtbot, window):
    doc = window.doc
    mix = doc.mix.clone()
    window.selection.set_selection(Selection.rect(2.0, 4.0, f_lo=300, f_hi=3000))
    choose(window, "Selection > To new layer")
    settle(qtbot, window)  # the mix is recomputed a piece a turn
    moved = doc.layers.active
    assert names(window) == ["Layer 1", "Recording"]
    assert float((doc.mix - mix).abs().max()) <= 1e-6 * float(mix.abs().max())  # heard as before
    inside = doc.read_complex(doc.full_rect(), layer=moved.id)
    assert float(inside.abs().max()) > 0 and moved.content.tiles  # it holds what was moved
    recording = doc.read_complex(doc.full_rect(), layer=0)
    choose(window, "Selection > Copy to new layer")
    assert len(names(window)) == 3
    assert torch.equal(doc.read_complex(doc.full_rect(), layer=0), recording)  # copied
    settle(qtbot, window)
    heard = window.session.synth.waveform().copy()
    item = window.layers_panel.list.item(1)  # "Layer 1", the moved part: unchecked = muted
    item.setCheckState(Qt.CheckState.Unchecked)
    assert doc.layers.layer(moved.id).mute
    settle(qtbot, window)
    now = window.session.synth.waveform()
    s0, s1 = int(2.2 * doc.sample_rate), int(3.8 * doc.sample_rate)
    assert np.abs(now[:, s0:s1] - heard[:, s0:s1]).max() > 0.01 * np.abs(heard).max()
    assert np.array_equal(now[:, :int(1.0 * doc.sample_rate)],
                          heard[:, :int(1.0 * doc.sample_rate)])  # far from it: untouched


def test_the_panel_sets_solo_gain_and_invert_and_drag_reorders(qtbot, window):
    doc = window.doc
    choose(window, "Layer > New layer")
    panel = window.layers_panel
    panel.gain.setValue(-6.0)
    assert abs(doc.layers.active.gain - 10 ** (-6 / 20)) < 1e-9
    panel.solo.setChecked(True)
    panel.invert.setChecked(True)
    active = doc.layers.active
    assert active.solo and active.invert
    settle(qtbot, window)
    assert float(doc.mix.abs().max()) == 0  # the soloed layer is empty: silence
    panel.moved.emit(active.id, 0)  # what a drop to the bottom says (LayerList.dropEvent)
    assert [x.name for x in doc.layers.state.layers] == ["Layer 1", "Recording"]
    panel.list.setCurrentRow(0)  # the top row: Recording now
    assert doc.layers.active.name == "Recording"
    for _ in range(4):
        choose(window, "Edit > Undo")
    assert [x.name for x in doc.layers.state.layers] == ["Recording", "Layer 1"]
    assert not doc.layers.layer(active.id).solo and doc.layers.layer(active.id).gain == 1.0


@pytest.mark.slow
def test_unmix_dialog_then_the_source_brush_steers_it_and_stems_export(qtbot, window,
                                                                       tmp_path):
    doc = window.doc
    audio = window.session.synth.waveform().copy()

    def nmf(dialog):
        method = dialog.findChild(QComboBox, "unmix-method")
        method.setCurrentIndex(method.findData("nmf"))
        dialog.findChild(QSpinBox, "unmix-components").setValue(2)
        dialog.accept()

    when_shown(window, UnmixDialog, "unmix-dialog", nmf)
    choose(window, "Layer > Unmix…")
    run_until(lambda: len(names(window)) == 2, timeout=120)
    idle(window)
    assert names(window) == ["Recording component 2", "Recording component 1"]
    assert np.abs(window.session.synth.waveform() - audio).max() <= 1e-5 * np.abs(audio).max()
    base = doc.layers.active.content.base
    choose(window, "Layer > Source brush (paint to separate)")
    assert window.layers.painting_sources
    steps = window.undo_stack.count()
    drag(qtbot, window.canvas, point(window, 3.0, 1000), point(window, 5.0, 1000))
    run_until(lambda: window.undo_stack.count() == steps + 1, timeout=120)
    idle(window)
    now = doc.layers.active.content.base
    assert now is not base and len(now.recipe["marks"]) == 1
    assert now.recipe["marks"][0]["part"] == 0  # the chosen layer: component 1
    choose(window, "Layer > Source brush (paint to separate)")  # off: the pen paints again
    out = tmp_path / "demo.wav"
    save_as(window, out)
    choose(window, "Layer > Export stems…")
    stems = [tmp_path / "demo-1-Recording-component-1.wav",
             tmp_path / "demo-2-Recording-component-2.wav"]
    run_until(lambda: all(p.exists() for p in stems) and window.jobs.idle())
    total = sum(sf.read(p, dtype="float32", always_2d=True)[0].T for p in stems)
    assert np.abs(total - window.session.synth.waveform()).max() <= 1e-5


def test_the_view_shows_the_mix_a_layer_alone_or_every_layer_tinted(qtbot, window):
    before = pixels(window)
    window.selection.set_selection(Selection.rect(0.0, 12.0, f_lo=0, f_hi=16000))
    choose(window, "Selection > To new layer")  # everything in the new layer
    window.selection.set_selection(None)  # its outline off the picture
    view = window.layers_panel.view
    view.setCurrentIndex(view.findData("layer"))
    drawn = pixels(window)
    assert np.abs(drawn.astype(int) - before).max() <= 2  # the layer holds it all
    window.layers_panel.list.setCurrentRow(1)  # the recording: empty now
    lit = before[..., 1] > 40  # viridis's floor is (68, 1, 84)
    assert lit.mean() > 0.01 and (pixels(window)[..., 1] > 40).mean() < 0.01 * lit.mean()
    view.setCurrentIndex(view.findData("tinted"))
    tinted = pixels(window)
    def tinted_like_layer_1(image):  # its id's colour, app.gui.view.tiles.TINT_COLOURS[1]
        r, g, b = (image[..., i][lit].astype(float) + 1 for i in range(3))
        return ((abs(r / b - 0.25) < 0.1) & (abs(g / b - 0.7) < 0.1)).mean()

    assert tinted_like_layer_1(tinted) > 0.9 and tinted_like_layer_1(before) < 0.2
    view.setCurrentIndex(view.findData("mix"))
    assert np.abs(pixels(window).astype(int) - before).max() <= 2


def test_choosing_a_layer_waits_while_an_unmix_runs(qtbot, window):
    """The Layers panel changed the active layer while a job that edits it ran (the
    review's repair_race: a repair of layer 0 landed on a silent layer); now the row
    chosen snaps back, and the unmix replaces the layer active when it started."""
    doc = window.doc
    choose(window, "Layer > New layer")
    panel = window.layers_panel.list
    panel.setCurrentRow(1)  # Recording (the top row is Layer 1)
    assert doc.layers.active.name == "Recording"

    def nmf(dialog):
        method = dialog.findChild(QComboBox, "unmix-method")
        method.setCurrentIndex(method.findData("nmf"))
        dialog.accept()

    when_shown(window, UnmixDialog, "unmix-dialog", nmf)
    choose(window, "Layer > Unmix…")
    run_until(lambda: window.jobs.running(), timeout=30)
    panel.setCurrentRow(0)  # Layer 1, while the unmix runs
    assert window.jobs.running() and doc.layers.active.name == "Recording"
    assert panel.currentRow() == 1 and "not done" in window.statusBar().currentMessage()
    run_until(lambda: len(names(window)) == 3, timeout=120)
    idle(window)
    assert names(window) == ["Layer 1", "Recording component 2", "Recording component 1"]


def test_moves_and_merges_of_layers_with_content_and_mixing_keep_what_is_heard(qtbot, window):
    """Through the menus and the panel, on layers that hold sound: the recording
    inverted and quieter, a selection moved out of it, that part's gain changed and
    merged down, the result deleted and everything undone bit for bit (the GUI tests
    merged, deleted and undid only empty layers)."""
    doc = window.doc
    opened = digest(doc)
    panel = window.layers_panel
    choose(window, "Layer > New layer")
    panel.list.setCurrentRow(1)  # Recording
    panel.invert.setChecked(True)
    panel.gain.setValue(-6.0)
    settle(qtbot, window)
    heard, mix = window.session.synth.waveform().copy(), doc.mix.clone()
    window.selection.set_selection(Selection.rect(2.0, 4.0, f_lo=300, f_hi=3000))
    choose(window, "Selection > To new layer")  # out of the inverted, quieter Recording
    settle(qtbot, window)
    assert float((doc.mix - mix).abs().max()) <= 1e-6 * float(mix.abs().max())
    moved = doc.layers.active
    assert moved.invert and abs(moved.gain - 10 ** (-6 / 20)) < 1e-9
    choose(window, "Layer > Merge down")  # the moved part back into Recording
    settle(qtbot, window)
    assert names(window) == ["Layer 1", "Recording"]
    assert float((doc.mix - mix).abs().max()) <= 1e-6 * float(mix.abs().max())
    now = window.session.synth.waveform()
    assert np.abs(now - heard).max() <= 1e-5 * np.abs(heard).max()
    choose(window, "Layer > Delete layer")  # Recording, merged: only silence is left
    settle(qtbot, window)
    assert names(window) == ["Layer 1"] and float(doc.mix.abs().max()) == 0
    while window.undo_stack.canUndo():
        choose(window, "Edit > Undo")
    settle(qtbot, window)
    assert doc.layers.plain and digest(doc) == opened


def test_acting_twice_in_a_row_leaves_the_remix_to_the_event_loop(qtbot, window):
    """A layer action right after one heard everywhere waited on the GUI thread for
    the whole remix (755 ms for a click on another layer after New layer, 60 s stereo;
    bench/bench_gui_layers.py); now it goes on a piece a turn, and the mix ends as a
    whole recomputation gives it. The Gain box's ticks are one undo step."""
    doc = window.doc
    choose(window, "Layer > New layer")
    settle(qtbot, window)
    panel = window.layers_panel
    panel.list.item(1).setCheckState(Qt.CheckState.Unchecked)  # mute Recording
    assert doc.layers.pending
    panel.list.setCurrentRow(1)  # choose Recording at once
    assert doc.layers.active.name == "Recording" and doc.layers.pending  # not waited for
    steps = window.undo_stack.count()
    for db in (-1.0, -2.0, -3.0, -4.0):  # ticks of the Gain box
        panel.gain.setValue(db)
    assert window.undo_stack.count() == steps + 1 and doc.layers.pending
    assert abs(doc.layers.active.gain - 10 ** (-4 / 20)) < 1e-9
    settle(qtbot, window)
    assert not doc.layers.pending
    mix = doc.mix.clone()
    doc.layers._remix(doc.full_rect(), slice(None))
    assert torch.equal(doc.mix, mix)  # what the pieces made is the whole recomputation
    choose(window, "Edit > Undo")  # the four ticks at once
    assert doc.layers.active.gain == 1.0


def test_the_undo_limit_counts_what_layer_steps_hold(qtbot, window):
    """Moves to new layers hold tiles and patches the undo limit did not count (layer
    steps were skipped, and layer actions never applied the limit)."""
    doc = window.doc
    window.session.history_limit = 1  # byte: only the newest step is kept
    for t0 in (1.0, 3.0, 5.0):
        window.selection.set_selection(Selection.rect(t0, t0 + 1.0, f_lo=300, f_hi=3000))
        choose(window, "Selection > To new layer")
    stack = window.undo_stack
    texts = [stack.text(i) for i in range(stack.count())]
    assert sum("can no longer be undone" in t for t in texts) == 2, texts
    assert names(window) == ["Layer 3", "Layer 2", "Layer 1", "Recording"]
    heard = digest(doc)
    choose(window, "Edit > Undo")  # the newest move: kept
    assert names(window) == ["Layer 2", "Layer 1", "Recording"]
    choose(window, "Edit > Undo")  # a dropped one: nothing changes
    assert names(window) == ["Layer 2", "Layer 1", "Recording"]
    choose(window, "Edit > Redo")
    settle(qtbot, window)
    assert digest(doc) == heard


def test_a_muted_layer_is_not_heard_even_soloed(qtbot, window):
    """A soloed layer was heard though its "heard" box was unchecked."""
    doc = window.doc
    choose(window, "Layer > New layer")
    panel = window.layers_panel
    panel.list.setCurrentRow(1)  # Recording
    panel.list.item(1).setCheckState(Qt.CheckState.Unchecked)
    panel.solo.setChecked(True)
    settle(qtbot, window)
    assert panel.list.item(1).checkState() == Qt.CheckState.Unchecked
    assert float(doc.mix.abs().max()) == 0 and not np.abs(window.session.synth.waveform()).max()
    panel.list.item(1).setCheckState(Qt.CheckState.Checked)
    settle(qtbot, window)
    assert float(doc.mix.abs().max()) > 0


def test_changing_the_analysis_of_a_layered_document_asks_first(qtbot, window):
    """It flattened the layers into one without a word."""
    from PySide6.QtWidgets import QMessageBox

    choose(window, "Layer > New layer")
    steps = window.undo_stack.count()

    def answer(button):
        def press(box):
            assert "mixes the 2 layers into one" in box.text()
            box.button(button).click()
        return press

    when_shown(window, QMessageBox, "question", answer(QMessageBox.StandardButton.Cancel))
    window.analysis_panel.n_fft.setCurrentText("1024")
    window.analysis_panel.apply.click()
    run_until(lambda: window.findChild(QMessageBox, "question") is None)
    assert not window.jobs.running() and window.undo_stack.count() == steps
    assert names(window) == ["Layer 1", "Recording"]
    when_shown(window, QMessageBox, "question", answer(QMessageBox.StandardButton.Ok))
    window.analysis_panel.apply.click()
    run_until(lambda: window.undo_stack.count() == steps + 1, timeout=120)
    idle(window)
    assert names(window) == ["Recording"]
    choose(window, "Edit > Undo")
    assert names(window) == ["Layer 1", "Recording"]


@pytest.mark.slow
def test_a_long_document_gets_layers_without_stalling_the_window(qtbot, window, tmp_path):
    """The mix of a document without layers gets a tensor of its own with its first
    layer: a copy of all of it, 0.8 GiB and up to a second for 10 minutes of stereo,
    was made on the GUI thread. Past 32 MiB a worker makes it (the window stays live,
    the status bar says so), then the operation lands: one step, the same bits."""
    path = tmp_path / "long.wav"
    rng = np.random.default_rng(5)
    sf.write(path, 0.1 * rng.standard_normal((40 * 44100, 2)).astype(np.float32), 44100)
    window.open_path(path)
    run_until(lambda: window.session is not None and window.doc.length == 40 * 44100)
    idle(window)
    doc = window.doc
    assert doc.mix.numel() * doc.mix.element_size() > 32 << 20
    opened, steps = digest(doc), window.undo_stack.count()
    choose(window, "Layer > New layer")
    assert names(window) == ["Recording"] and doc.layers.plain  # not yet: the copy first
    idle(window)
    assert names(window) == ["Layer 1", "Recording"] and window.undo_stack.count() == steps + 1
    assert digest(doc) == opened and doc.mix.data_ptr() != doc.layers.state.layers[0].content \
        .base.tensor.dense().data_ptr()  # the recording's cells (a store of one run)
    choose(window, "Edit > Undo")
    settle(qtbot, window)
    assert doc.layers.plain and digest(doc) == opened


def test_the_unmix_dialog_says_what_each_method_is_for(qtbot, window):
    """Issue 50.11: HPSS put voiced speech in "percussive" and nothing said which method
    is for what. The dialog says it under the method chosen (docs/layers.md too)."""
    from PySide6.QtWidgets import QLabel

    said = {}

    def read(dialog):
        method = dialog.findChild(QComboBox, "unmix-method")
        for i in range(method.count()):
            method.setCurrentIndex(i)
            said[method.itemData(i)] = dialog.findChild(QLabel, "unmix-purpose").text()
        dialog.reject()

    when_shown(window, UnmixDialog, "unmix-dialog", read)
    choose(window, "Layer > Unmix…")
    qtbot.waitUntil(lambda: len(said) == 5)
    assert "Not for speech" in said["hpss"] and "percussive" in said["hpss"]
    assert "Dialogue" in said["voice"] and "Source brush" in said["nmf"]
    assert "hiss" in said["tonal-noise"]
    assert len(window.doc.layers.state.layers) == 1  # cancelled: nothing done
