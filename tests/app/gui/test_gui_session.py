"""The window's editing session (app.gui.services.opened over app.session.session):
what the user draws, chooses and copies is the session's, and what shows it (the
canvas, the panels, an open repair dialog) follows the session's events, whoever
changed it."""

from PySide6.QtCore import Qt

from app.session.selection import Selection
from app.session.time_edit import TimeClip
from tests.dialogs import menu_action
from tests.gui_input import choose_brush, drag, point


def test_what_is_drawn_chosen_and_copied_is_the_sessions(qtbot, window):
    window.selection.tool_actions["time"].trigger()
    drag(qtbot, window.canvas, point(window, 2.0, 3000.0), point(window, 3.0, 3000.0))
    sel = window.opened.selection
    assert sel is not None and window.canvas.selection == sel
    t0, t1, _, _ = sel.span()
    assert abs(t0 - 2.0) < 0.05 and abs(t1 - 3.0) < 0.05
    menu_action(window, "Edit > Copy").trigger()
    assert isinstance(window.opened.clipboard, TimeClip)
    choose_brush(window, "hard-eraser")  # the preset, then its radius set in the panel
    brush = window.opened.brush
    assert brush.label == "hard-eraser" and brush.params["radius_hz"] == 300.0
    assert window.canvas.brush_radius[1] == 300.0  # the pointer shows the session's brush


def test_a_selection_set_on_the_session_shows_everywhere_at_once(qtbot, window):
    """The canvas, the Selection panel's numbers and an open repair dialog's scope follow
    the session; before, the dialog heard only selections drawn on the canvas (the Edit
    menu's Select all and Clear told it nothing until it was activated again)."""
    menu_action(window, "Repair > De-hum…").trigger()
    qtbot.waitUntil(lambda: window.repairs.repair_dialog is not None)
    dialog = window.repairs.repair_dialog
    assert dialog.scope.text() == "Acts on: the whole file, all channels"
    sel = Selection.rect(1.0, 2.5, f_lo=100.0, f_hi=4000.0)
    window.opened.select(sel)
    assert window.canvas.selection == sel
    span = window.selection_panel.span
    assert span["start"].value() == 1.0 and span["high"].value() == 4000.0
    assert dialog.scope.text().startswith("Acts on: the selection 1.00-2.50 s, 100-4,000 Hz")
    menu_action(window, "Edit > Select all").trigger()
    assert dialog.scope.text().startswith("Acts on: the selection 0.00-")
    menu_action(window, "Edit > Clear selection").trigger()
    assert window.opened.selection is None and window.canvas.selection is None
    assert dialog.scope.text() == "Acts on: the whole file, all channels"
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
