"""The user's hands on the window: points in seconds and Hz, drags, a lasso, a brush
chosen, the file dialog answered, a time range or a band selected, an edit waited
for; and the canvas's pixels and the edited audio as they are."""

import math
import struct

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from tests.dialogs import choose, run_until


def pixels(window):
    """The canvas as drawn, once every visible tile is in (tiles load within a budget);
    fails if no frame completes."""
    for _ in range(50):
        image = window.canvas.grabFramebuffer()
        if window.canvas.complete:
            break
    else:
        pytest.fail("the canvas never drew a complete frame in 50 tries")
    image = image.convertToFormat(image.Format.Format_RGBA8888)
    array = np.frombuffer(image.constBits(), np.uint8)
    return array.reshape(image.height(), image.bytesPerLine() // 4, 4)[:, :image.width()].copy()


def point(window, seconds, hz) -> QPoint:
    v = window.canvas.view
    return QPoint(round(v.x_of(seconds)), round(v.y_of(hz)))


def drag(qtbot, widget, start: QPoint, end: QPoint, steps=20, button=Qt.MouseButton.LeftButton):
    """pytest-qt has no mouseDrag: press, a loop of moves, release; then wait until
    the stroke is painted and heard (the window paints within a budget per turn)."""
    qtbot.mousePress(widget, button, pos=start)
    for i in range(1, steps + 1):
        qtbot.mouseMove(widget, start + (end - start) * i / steps)
    qtbot.mouseRelease(widget, button, pos=end)
    settle(qtbot, widget.window())


def settle(qtbot, window):
    """Wait until ``window``'s session has painted and spliced everything queued."""
    session = getattr(window, "session", None)
    if session is not None:
        qtbot.waitUntil(lambda: session.idle, timeout=20000)


def choose_brush(window, preset="hard-eraser"):
    window.brush_panel.preset_box.setCurrentText(preset)
    window.brush_panel.set_param("radius_hz", 300.0)


def paint_whistle(qtbot, window, preset="hard-eraser"):
    choose_brush(window, preset)
    drag(qtbot, window.canvas, point(window, 4.0, 6000), point(window, 6.0, 6000))
    qtbot.wait(30)


def answer_file_dialog(qtbot, window, path):
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    dialog = window.findChild(QFileDialog, "file-dialog")
    dialog.selectFile(str(path))
    dialog.accept()


def lasso(qtbot, window, centre_t=6.0, centre_hz=4000.0, rt=1.5, rf=1500.0, steps=40):
    canvas = window.canvas
    window.selection.tool_actions["lasso"].trigger()
    at = [point(window, centre_t + rt * math.cos(2 * math.pi * k / steps),
                centre_hz + rf * math.sin(2 * math.pi * k / steps)) for k in range(steps + 1)]
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=at[0])
    for p in at[1:]:
        qtbot.mouseMove(canvas, p)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=at[-1])


# -- edits (tests/app/gui/test_gui_edit.py, test_gui_transform.py) --------------------------
def audio(window) -> np.ndarray:
    window.session.finish_mix()
    return window.session.synth.waveform().copy()


def select_time(qtbot, window, t0: float, t1: float) -> tuple[float, float]:
    """The Time select tool dragged from ``t0`` to ``t1`` s: the span it selected."""
    choose(window, "Edit > Time select tool")
    drag(qtbot, window.canvas, point(window, t0, 3000), point(window, t1, 5000))
    t0, t1, _, _ = window.canvas.selection.span()
    return t0, t1


def wait_edit(qtbot, window, count: int) -> None:
    stack = window.undo_stack  # the edit landed: the count-th step, the last, done
    qtbot.waitUntil(lambda: stack.count() == count == stack.index() and window.jobs.idle(),
                    timeout=30000)


def band_db(window, t0: float, t1: float, hz: float) -> float:
    """The level of ``hz`` over ``t0``-``t1`` s of the edited audio (loudest channel)."""
    sr = window.doc.sample_rate
    x = audio(window)[:, round(t0 * sr):round(t1 * sr)]
    w = np.hanning(x.shape[1])
    spectrum = np.abs(np.fft.rfft(x * w, axis=1)) * 2 / w.sum()
    k = round(hz * x.shape[1] / sr)
    return float(20 * np.log10(spectrum[:, k - 3:k + 4].max() + 1e-12))


def select_band(qtbot, window, t0, t1, f0, f1) -> None:
    choose(window, "Edit > Rectangle select tool")
    drag(qtbot, window.canvas, point(window, t0, f1), point(window, t1, f0))


def wavex(path, samples: np.ndarray, rate: int, mask: int) -> None:
    """A 16-bit WAVE_FORMAT_EXTENSIBLE file declaring ``mask`` (written by hand: the
    reference for the parser is the format's layout, not our own writer)."""
    channels, frames = samples.shape
    data = (np.clip(samples.T, -1, 1) * 32767).astype("<i2").tobytes()
    pcm_guid = bytes.fromhex("0100000000001000800000aa00389b71")
    fmt = struct.pack("<HHIIHHHHI", 0xFFFE, channels, rate, rate * channels * 2, channels * 2,
                      16, 22, 16, mask) + pcm_guid
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + \
        struct.pack("<I", len(data)) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)


def read_png(path) -> np.ndarray:
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGBA8888)
    array = np.frombuffer(image.constBits(), np.uint8)
    rows = array.reshape(image.height(), image.bytesPerLine() // 4, 4)
    return rows[:, :image.width()].copy()  # the QImage goes with this function


def names(window) -> list[str]:
    panel = window.layers_panel.list
    return [panel.item(i).text() for i in range(panel.count())]  # top layer first


def idle(window) -> None:
    """No job, its outcome handled (jobs.idle: a finished worker's ``done`` may still be
    queued, and the layer operation lands there), and nothing left to paint or remix."""
    run_until(lambda: window.jobs.idle() and window.session.idle, timeout=120)
