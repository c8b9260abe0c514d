"""A working day in the app, round 3 (issue 50), as a user goes through it: a click
places the playhead and paints nothing, the selection fields, keyboard zoom and the
playhead, Open recent, the brush outline in its lane, the readout, the prompts."""

import pytest
import torch
from PySide6.QtCore import QPoint, Qt

from tests.test_gui import drag, point, settle


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
