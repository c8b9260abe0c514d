"""The canvas redraws only what changed (painted cells, the brush outline, the
playhead) and keeps the rest of its framebuffer: after every such frame each
pixel must be what a full redraw draws."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QCursor

from tests.gui_input import choose_brush, pixels, point, settle


def partial_then_full(window, frames):
    """The canvas after the frames its changes asked for, then after a full redraw;
    and the largest share of the canvas those frames redrew. ``frames``: each frame's
    ``canvas.redrawn`` since the change (emptied here)."""
    canvas = window.canvas
    partial = pixels(window)
    assert frames and not any(full for full, _ in frames), \
        "a change that should redraw only its box redrew everything"
    share = max(0.0 if box is None else (box[2] - box[0]) * (box[3] - box[1])
                / (canvas.width() * canvas.height()) for _, box in frames)
    canvas.update()
    result = partial, pixels(window), share
    frames.clear()
    return result


def recording(qtbot, window) -> list:
    """Every frame's ``redrawn`` from now on, once the canvas is drawn whole (and the
    frames its tiles' loading asked for are done)."""
    canvas = window.canvas
    pixels(window)
    qtbot.waitUntil(lambda: canvas.complete and not canvas.damage.full)
    qtbot.wait(50)
    frames = []
    canvas.framePresented.connect(lambda _: frames.append(canvas.redrawn))
    return frames


def assert_same(partial, full, what):
    wrong = np.argwhere((partial != full).any(-1))
    assert len(wrong) == 0, f"{what}: {len(wrong)} pixels differ from a full redraw, " \
                            f"rows {wrong[:, 0].min()}-{wrong[:, 0].max()}, " \
                            f"columns {wrong[:, 1].min()}-{wrong[:, 1].max()}"


@pytest.mark.parametrize("log_freq, seconds_shown", [(False, None), (True, None), (False, 60.0)])
def test_each_pen_event_redraws_its_box_and_leaves_the_canvas_as_a_full_redraw(
        qtbot, window, log_freq, seconds_shown):
    """``seconds_shown``: zoomed out, a texel is the maximum of several frames."""
    canvas = window.canvas
    window.view_panel.log.setChecked(log_freq)
    if seconds_shown:
        canvas.view.t0, canvas.view.t1 = 0.0, seconds_shown
        assert canvas.view.seconds_per_pixel > 3 * window.doc.transform.seconds_of(1)
    choose_brush(window, "soft-eraser")
    frames = recording(qtbot, window)
    start = point(window, 3.0, 3000)
    shares = []
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 13):
        qtbot.mouseMove(canvas, start + QPoint(9 * i, round(25 * np.sin(i / 3))))
        partial, full, share = partial_then_full(window, frames)
        assert_same(partial, full, f"after move {i}")
        shares.append(share)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(108, 0))
    settle(qtbot, window)
    assert max(shares) < 0.2  # a dab's box, not the canvas


def test_hovering_and_the_playhead_redraw_where_they_were_and_are(qtbot, window):
    canvas = window.canvas
    frames = recording(qtbot, window)
    for i in range(6):  # the brush outline follows the pointer
        at = point(window, 1.0 + 0.7 * i, 500 + 1500 * i)
        QCursor.setPos(canvas.mapToGlobal(at))  # the X pointer itself (Xvfb): hovering
        qtbot.waitUntil(lambda at=at: canvas._cursor is not None and canvas._cursor.toPoint() == at)
        partial, full, share = partial_then_full(window, frames)
        assert_same(partial, full, f"hover {i}")
        assert 0 < share < 0.1
    for seconds in (1.0, 1.4, 5.0):
        canvas.set_playhead(seconds)
        partial, full, share = partial_then_full(window, frames)
        assert_same(partial, full, f"playhead at {seconds} s")
        assert share < 0.5
    QCursor.setPos(window.mapToGlobal(QPoint(-50, -50)))  # the pointer leaves the window:
    qtbot.waitUntil(lambda: canvas._cursor is None)  # its outline is wiped
    partial, full, _ = partial_then_full(window, frames)
    assert_same(partial, full, "after leaving")


@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_painting_and_undoing_on_a_lower_lane_redraw_it_as_a_full_redraw(
        qtbot, quad, transform):  # noqa: F811 (the fixture)
    window, canvas = quad, quad.canvas
    if transform == "cq":
        panel = window.analysis_panel
        panel.transform.setCurrentIndex(panel.transform.findData("cq"))
        panel.apply.click()
        qtbot.waitUntil(lambda: window.doc.transform.kind == "cq" and window.session.idle,
                        timeout=30000)
    window.view_panel.log.setChecked(True)
    choose_brush(window, "hard-eraser")
    frames = recording(qtbot, window)
    lane = canvas.height() / 4
    start = QPoint(canvas.width() // 3, round(2 * lane + canvas.view.y_of(1500)))
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 7):
        qtbot.mouseMove(canvas, start + QPoint(25 * i, 0))
        partial, full, share = partial_then_full(window, frames)
        assert_same(partial, full, f"{transform}, after move {i}")
        assert share < 0.2
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start + QPoint(150, 0))
    settle(qtbot, window)
    partial, full, _ = partial_then_full(window, frames)  # the stroke's end (cq: confined)
    assert_same(partial, full, f"{transform}, after the stroke")
    window.undo()
    settle(qtbot, window)
    partial, full, _ = partial_then_full(window, frames)
    assert_same(partial, full, f"{transform}, after undoing the stroke")
