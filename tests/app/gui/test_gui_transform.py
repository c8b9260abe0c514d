"""The Transform tool (Edit > Transform tool, V; issue 48.3) through the mouse: a
rectangle drawn around part of the demo's whistle (6 kHz, about 3 to 8 s) with the
Rectangle select tool, then its box dragged: inside it moves the content in time and
frequency, an edge handle stretches it in time from the opposite edge. Each drag is
one undo step, undone exactly, and the selection follows the content."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from app.gui.view.transforming import GHOST
from tests.dialogs import choose
from tests.gui_input import audio, band_db, drag, pixels, point, select_band, wait_edit


def mid_edge(window, side: str) -> QPoint:
    """The middle of the selection box's ``side`` ("left", "right"): its handle."""
    t0, t1, f_lo, f_hi = window.canvas.selection.span()
    v = window.canvas.view
    return QPoint(round(v.x_of(t0 if side == "left" else t1)),
                  round((v.y_of(f_lo) + v.y_of(f_hi)) / 2))


def peak_hz(window, t0: float, t1: float, low: float, high: float) -> float:
    sr = window.doc.sample_rate
    x = audio(window)[:, round(t0 * sr):round(t1 * sr)]
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.shape[1]), n=8 * x.shape[1], axis=1))
    hz = np.fft.rfftfreq(8 * x.shape[1], 1 / sr)
    band = (hz >= low) & (hz <= high)
    return float(hz[band][spectrum[:, band].max(axis=0).argmax()])


def test_transform_tool_moves_the_whistle_down_and_later_in_one_undo_step(qtbot, window):
    source = audio(window)
    whistle = band_db(window, 4.2, 4.8, 6000)
    assert band_db(window, 5.2, 5.8, 3000) < whistle - 30  # nothing at 3 kHz there yet
    select_band(qtbot, window, 4.0, 5.0, 5500, 6500)
    choose(window, "Edit > Transform tool")
    assert window.canvas.tool == "transform"

    # while dragging: a ghost where it will land, and nothing done yet
    canvas, start, end = window.canvas, point(window, 4.5, 6000), point(window, 5.5, 3000)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 11):
        qtbot.mouseMove(canvas, start + (end - start) * i / 10)
    drawn = pixels(window)
    top, x0, x1 = round(canvas.view.y_of(3500)), round(canvas.view.x_of(5.1)), \
        round(canvas.view.x_of(5.9))
    ghost = np.round(np.array(GHOST[:3]) * 255)
    near = np.abs(drawn[top - 1:top + 2, x0:x1, :3].astype(float) - ghost).max(axis=2) < 40
    assert near.any(axis=0).mean() > 0.3, "no ghost along the landing box's top"
    assert window.undo_stack.count() == 0 and window.jobs.idle()
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    wait_edit(qtbot, window, 1)

    assert band_db(window, 5.2, 5.8, 3000) > whistle - 3  # 3 kHz down, 1 s later
    assert band_db(window, 4.2, 4.8, 6000) < whistle - 30  # its place left empty
    t0, t1, f_lo, f_hi = window.canvas.selection.span()  # the selection followed it
    assert (t0, t1) == pytest.approx((5.0, 6.0), abs=0.05)
    assert (f_lo, f_hi) == pytest.approx((2500, 3500), abs=60)
    assert "Undo transform selection" in window.undo_action.text()
    landed = window.canvas.selection
    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), source)
    t0, t1, f_lo, f_hi = window.opened.selection.span()  # and the selection where it was
    assert (t0, t1, f_lo, f_hi) == pytest.approx((4.0, 5.0, 5500, 6500), abs=60)
    assert window.canvas.selection == window.opened.selection
    choose(window, "Edit > Redo")
    assert window.opened.selection == landed and window.canvas.selection == landed


def test_transform_tool_edge_handles_stretch_from_the_opposite_edge(qtbot, window):
    whistle = band_db(window, 4.2, 4.8, 6000)
    select_band(qtbot, window, 4.0, 5.0, 5500, 6500)
    choose(window, "Edit > Transform tool")
    # first the piece moved alone to 3 kHz (nothing else there), 1 s later: 5 to 6 s
    drag(qtbot, window.canvas, point(window, 4.5, 6000), point(window, 5.5, 3000))
    wait_edit(qtbot, window, 1)
    moved = audio(window)
    assert band_db(window, 6.2, 6.8, 3000) < whistle - 30

    start = mid_edge(window, "right")  # the right edge from 6 s to 7 s: twice as long
    drag(qtbot, window.canvas, start, start + QPoint(round(
        window.canvas.view.x_of(7.0) - window.canvas.view.x_of(6.0)), 0))
    wait_edit(qtbot, window, 2)
    for t in (5.2, 6.2):
        assert band_db(window, t, t + 0.6, 3000) > whistle - 6
    assert band_db(window, 7.3, 7.9, 3000) < whistle - 30
    assert window.canvas.selection.span()[:2] == pytest.approx((5.0, 7.0), abs=0.05)
    choose(window, "Edit > Undo")
    assert np.array_equal(audio(window), moved)
    # the undo put the selection back where the stretch found it: 5 to 6 s
    assert window.canvas.selection.span()[:2] == pytest.approx((5.0, 6.0), abs=0.05)
    choose(window, "Edit > Transform tool")
    start = mid_edge(window, "left")  # the left edge from 5 s to 4 s: it ends at 6 s still
    drag(qtbot, window.canvas, start, start - QPoint(round(
        window.canvas.view.x_of(6.0) - window.canvas.view.x_of(5.0)), 0))
    wait_edit(qtbot, window, 2)
    for t in (4.2, 5.2):
        assert band_db(window, t, t + 0.6, 3000) > whistle - 6
    assert band_db(window, 6.4, 7.0, 3000) < whistle - 30
    assert window.canvas.selection.span()[:2] == pytest.approx((4.0, 6.0), abs=0.05)


def test_transform_tool_snaps_to_whole_semitones_and_a_click_does_nothing(qtbot, window):
    window.view_panel.log.setChecked(True)
    window.view_panel.snap.setChecked(True)
    select_band(qtbot, window, 4.0, 5.0, 5500, 6500)
    selected = window.canvas.selection
    choose(window, "Edit > Transform tool")
    qtbot.mouseClick(window.canvas, Qt.MouseButton.LeftButton, pos=point(window, 4.5, 6000))
    qtbot.wait(100)
    assert window.undo_stack.count() == 0 and window.canvas.selection == selected
    # 12.06 semitones down: an octave, snapped (unsnapped it would land at 2979 Hz)
    drag(qtbot, window.canvas, point(window, 4.5, 6000), point(window, 4.5, 2990))
    wait_edit(qtbot, window, 1)
    assert peak_hz(window, 4.2, 4.8, 2500, 3500) == pytest.approx(3000, abs=3)

    choose(window, "Edit > Clear selection")
    choose(window, "Edit > Transform tool")
    assert "select something first" in window.statusBar().currentMessage()
    window.statusBar().clearMessage()
    drag(qtbot, window.canvas, point(window, 4.5, 6000), point(window, 5.5, 3000))
    assert "select something first" in window.statusBar().currentMessage()
    assert window.undo_stack.count() == 1


def test_the_drag_geometry_handles_anchors_snaps_and_keeps_an_axis():
    """The measures a drag hands to Edit > Transform (no window: pixels and seconds)."""
    from app.gui.view.transforming import TransformDrag, grab
    from app.gui.view.viewstate import ViewState
    from app.session.selection import Selection

    view = ViewState(t0=0.0, t1=10.0, f_lo=0.0, f_hi=10000.0, width=1000, height=500,
                     duration=10.0, nyquist=22050.0)
    sel = Selection.rect(2.0, 4.0, f_lo=1000.0, f_hi=2000.0)
    middle = view.y_of(1500.0)
    assert [grab(sel, view, x, middle) for x in (195, 203, 300, 397, 407, 500)] == \
        ["left", "left", "move", "right", None, None]
    assert grab(sel, view, 300, view.y_of(3000.0)) is None

    def dragged(part, start, end, **keys):
        d = TransformDrag(sel, part, *start, view)
        d.move(*end, **keys)
        return d, d.landed(duration=10.0, nyquist=22050.0).span()

    d, span = dragged("left", (2.0, 1500.0), (1.0, 1500.0))  # the right edge stays
    assert (d.stretch, d.by_s) == pytest.approx((1.5, -1.0)) and span == (1, 4, 1000, 2000)
    d, span = dragged("right", (4.0, 1500.0), (20.0, 1500.0))  # at most 4x, within the file
    assert (d.stretch, d.by_s) == (4.0, 0.0) and span == (2, 10, 1000, 2000)
    d, span = dragged("move", (3.0, 1500.0), (4.0, 1000.0))  # linear axis: Hz
    assert d.values() == pytest.approx({"by_s": 1.0, "semitones": 0.0, "shift_hz": -500.0,
                                        "stretch": 1.0})
    assert span == pytest.approx((3, 5, 500, 1500)) and d.describe() == "Move +1.000 s, -500 Hz"
    d, span = dragged("move", (3.0, 1500.0), (3.0, 760.0), snap=True)  # -11.8: -12
    assert (d.semitones, d.shift_hz) == (-12, 0.0) and span == pytest.approx((2, 4, 500, 1000))
    d, _ = dragged("move", (3.0, 1500.0), (5.0, 1400.0), keep_axis=True)  # 200 px across
    assert (d.by_s, d.shift_hz) == (2.0, 0.0)
    view.log_freq, view.f_lo = True, 20.0
    d, _ = dragged("move", (3.0, 1500.0), (3.0, 3000.0))  # log axis: semitones
    assert (d.semitones, d.shift_hz) == (pytest.approx(12.0), 0.0)
    lasso = Selection("lasso", ((1.0, 100.0), (2.0, 300.0), (3.0, 100.0)))
    d = TransformDrag(lasso, "right", 3.0, 200.0, view)
    d.move(5.0, 200.0)  # each point stretched from the left edge
    assert d.landed(duration=10.0, nyquist=22050.0).points == ((1, 100), (3, 300), (5, 100))


def test_with_heal_on_the_hole_a_move_leaves_is_healed_from_around_it(qtbot, window):
    """The whistle goes on either side of the box moved: healed, its place gets it back."""
    whistle = band_db(window, 4.2, 4.8, 6000)
    choose(window, "Edit > Heal the hole a move leaves")
    assert window.edits.heal_action.isChecked()
    select_band(qtbot, window, 4.0, 5.0, 5500, 6500)
    choose(window, "Edit > Transform tool")
    drag(qtbot, window.canvas, point(window, 4.5, 6000), point(window, 5.5, 3000))
    wait_edit(qtbot, window, 1)
    assert band_db(window, 5.2, 5.8, 3000) > whistle - 3  # moved
    assert band_db(window, 4.2, 4.8, 6000) > whistle - 10  # and its place healed
