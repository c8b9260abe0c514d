"""Multichannel files: each channel in its own named lane, painted on the lane
under the pointer (or on all channels), the layout's names when the file
declares one, and a re-analysis that keeps the view."""


import numpy as np
import pytest
import torch
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel

from engine.io.audio import load
from engine.io.layout import channel_mask, channel_names
from tests.gui_input import pixels, settle, wavex


def test_a_declared_layout_names_the_channels(tmp_path):
    path = tmp_path / "surround.wav"
    wavex(path, np.zeros((6, 800)), 48000, 0x3F)
    assert channel_mask(path) == 0x3F
    assert load(path).layout == ("FL", "FR", "FC", "LFE", "BL", "BR")
    assert channel_names(2) == ("L", "R") and channel_names(3) == ("1", "2", "3")
    assert channel_names(3, 0x3F) == ("1", "2", "3")  # a mask that does not fit: numbers


def test_channels_are_stacked_in_named_lanes(qtbot, quad):
    window, canvas = quad, quad.canvas
    assert canvas.lanes == [0, 1, 2, 3]
    names = [canvas.findChild(QLabel, f"lane-{i}").text() for i in range(4)]
    assert names == ["FL", "FR", "BL", "BR"]
    image = pixels(window)
    lane = canvas.height() / 4
    for i, hz in enumerate((500, 1000, 1500, 2000)):  # each lane shows its own tone
        column = image[round(i * lane):round((i + 1) * lane), canvas.width() // 2, 1]
        row = int(np.argmax(column))
        assert abs(canvas.view.f_of(row) - hz) < 3 * canvas.view.f_hi / lane


def test_a_stroke_paints_the_lane_under_the_pointer_only(qtbot, quad):
    window, canvas, doc = quad, quad.canvas, quad.doc
    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    before = doc.coefficients(0, doc.n_frames).clone()
    lane = canvas.height() / 4
    y = round(2 * lane + canvas.view.y_of(1500))  # the third lane (BL), on its tone
    start, end = QPoint(canvas.width() // 3, y), QPoint(2 * canvas.width() // 3, y)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 11):  # then wander into the next lane: the stroke stays in its own
        qtbot.mouseMove(canvas, start + (end - start) * i / 10 +
                        QPoint(0, round(lane * max(0, i - 5) / 10)))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    settle(qtbot, window)
    now = doc.coefficients(0, doc.n_frames).clone()
    changed = [not torch.equal(now[c], before[c]) for c in range(4)]
    assert changed == [False, False, True, False]
    b = round(doc.bin_of(1500))
    on_tone = round(doc.frame_of(canvas.view.t_of(start.x() + (end - start).x() * 0.3)))
    assert float(now[2, b, on_tone].abs()) < 1e-3 * float(before[2, b, on_tone].abs())
    choice = window.view_panel.paint_channel
    choice.setCurrentIndex(choice.findData(None))
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(20, y))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(60, y))
    settle(qtbot, window)
    after = doc.coefficients(0, doc.n_frames)
    assert all(not torch.equal(after[c], now[c]) for c in range(4))  # "All": every channel


def test_re_analysis_keeps_the_lanes_and_the_view(qtbot, quad):
    window, canvas = quad, quad.canvas
    canvas.view.t0, canvas.view.t1 = 1.0, 2.0
    window.analysis_panel.n_fft.setCurrentText("1024")
    window.analysis_panel.apply.click()
    qtbot.waitUntil(lambda: window.undo_stack.count() == 1, timeout=20000)
    assert window.doc.transform.n_fft == 1024
    assert (canvas.view.t0, canvas.view.t1) == (1.0, 2.0) and canvas.lanes == [0, 1, 2, 3]
    assert window.view_panel.view_channel.currentData() == "lanes"


def ink_rows(ruler) -> np.ndarray:
    """The rows of the ruler's label column where a label has ink."""
    image = ruler.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.bytesPerLine())[:, :3 * image.width()].reshape(
        image.height(), image.width(), 3)
    labels = rows[:, :ruler.width() - 8].astype(int)  # the tick marks are right of it
    return (labels.sum(axis=2) > 3 * 110).any(axis=1)


@pytest.mark.parametrize("channels,log", [(6, False), (6, True), (2, False)])
def test_frequency_labels_never_overlap_nor_cross_lanes(qtbot, window, tmp_path, channels,
                                                         log):
    """Six lanes: 22k...0 piled up; two lanes: the lower lane's "22k" sat on the upper
    lane's "0". Each label's ink is one line of text, apart from the next, in its lane."""
    from PySide6.QtGui import QFontMetrics

    from tests.dialogs import open_file

    path = tmp_path / f"{channels}ch.wav"
    wavex(path, 0.1 * np.random.default_rng(0).standard_normal((channels, 44100)), 44100,
          0x3F if channels == 6 else 0x3)
    open_file(window, path)
    window.view_panel.log.setChecked(log)
    ruler = window.area.freq_ruler
    assert ruler.lanes == channels
    qtbot.wait(50)
    ink = ink_rows(ruler)
    runs, start = [], None
    for y, on in enumerate([*ink, False]):
        if on and start is None:
            start = y
        elif not on and start is not None:
            runs.append((start, y))
            start = None
    lane, line = ruler.height() / channels, QFontMetrics(ruler.font()).height()
    assert len(runs) >= 2 * channels  # at least two labels a lane
    for a, b in runs:
        assert b - a <= line, f"labels run together over rows {a}-{b}"
        assert int(a // lane) == int((b - 1) // lane), f"a label crosses a lane's edge at {a}"
