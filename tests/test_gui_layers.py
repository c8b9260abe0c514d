"""Layers in the window, driven as a user drives them: the Layer and Selection menus,
their dialogs answered, the Layers panel's rows and controls, the source brush
painted with the mouse, the view of the mix, a layer and every layer tinted; each
operation one undo step, undone bit for bit."""

import hashlib

import numpy as np
import soundfile as sf
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QInputDialog, QSpinBox

from app.gui.layeractions import UnmixDialog
from brushes.selection import Selection
from tests.dialogs import choose, run_until, save_as, when_shown
from tests.test_gui import drag, pixels, point, settle


def digest(doc) -> str:
    return hashlib.sha1(doc.mix.contiguous().numpy().tobytes()).hexdigest()


def names(window) -> list[str]:
    panel = window.layers_panel.list
    return [panel.item(i).text() for i in range(panel.count())]  # top layer first


def idle(window) -> None:
    run_until(lambda: not window.jobs.running() and window.session.idle, timeout=120)


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
    run_until(lambda: all(p.exists() for p in stems) and not window.jobs.running())
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
    def tinted_like_layer_1(image):  # its id's colour, app.gui.tiles.TINT_COLOURS[1]
        r, g, b = (image[..., i][lit].astype(float) + 1 for i in range(3))
        return ((abs(r / b - 0.25) < 0.1) & (abs(g / b - 0.7) < 0.1)).mean()

    assert tinted_like_layer_1(tinted) > 0.9 and tinted_like_layer_1(before) < 0.2
    view.setCurrentIndex(view.findData("mix"))
    assert np.abs(pixels(window).astype(int) - before).max() <= 2
