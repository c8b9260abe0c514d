"""Screenshots for docs/gui.md of what a working day in the app needed (issue 36):
the views (overview lane, aligned nnAudio strip, spectrum, level meter), typed
selections, the harmonic brush's outline and preset description, the clone source,
the thinned pitch grid and dashed selections, six labelled lanes and the export
dialog's overs row.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python scripts/screenshots_workday.py
"""

import tempfile
from pathlib import Path

import numpy as np
from shots import DOCS, Shots


def main() -> None:
    shots = Shots()
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QFileDialog

    from app.assets import DEMO
    from app.session.selection import Selection

    wait, pause, opened, save = shots.wait, shots.pause, shots.opened, shots.save

    def at(window, seconds, hz) -> QPoint:
        v = window.canvas.view
        return QPoint(round(v.x_of(seconds)), round(v.y_of(hz)))

    def hover(window, seconds, hz) -> None:
        QTest.mouseMove(window.canvas, at(window, seconds + 0.3, hz))
        QTest.mouseMove(window.canvas, at(window, seconds, hz))
        pause(0.2)

    # the views: overview lane, nnAudio CQT in the canvas's time axis, spectrum, meter
    w = opened(DEMO)
    w.analysis_view.choice.setCurrentIndex(w.analysis_view.choice.findData("cqt"))
    wait(lambda: w.analysis_view.last_image is not None)
    w.canvas.playhead = 6.4
    w.transport.toggle_play()
    pause(1.0)
    hover(w, 5.0, 9000)
    save(w, "screenshot-views.png")
    w.transport.stop()
    pause(3.0)  # the level meter falls

    # a time selection, its span in numbers in the Selection panel
    w.selection.set_selection(Selection.rect(3.0, 8.0, f_lo=0.0, f_hi=w.doc.sample_rate / 2))
    next(d for d in w.docks if d.windowTitle() == "Selection").raise_()
    save(w, "screenshot-selection-span.png")
    w.selection.clear_selection()

    # the harmonic eraser: its description, and its outline at every harmonic
    w.brush_panel.preset_box.setCurrentText("harmonic-eraser")
    w.view_panel.log.setChecked(True)
    hover(w, 8.0, 196.0)
    save(w, "screenshot-harmonic-brush.png")
    w.view_panel.log.setChecked(False)

    # the clone brush: Alt+click set its source (the cross), the pointer elsewhere
    w.brush_panel.preset_box.setCurrentText("clone")
    QTest.mouseClick(w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.AltModifier,
                     at(w, 2.0, 3000))
    hover(w, 9.5, 3000)
    save(w, "screenshot-clone.png")

    # the pitch grid, zoomed out on a log axis (thinned), and a harmonic selection
    w.brush_panel.preset_box.setCurrentText("soft-eraser")
    w.view_panel.log.setChecked(True)
    w.view_panel.show_grid.setChecked(True)
    w.area.view_changed()
    QTest.mouseMove(w.canvas, QPoint(-10, -10))
    save(w, "screenshot-pitch-grid.png")
    w.selection_panel.partials.setValue(6)
    w.selection_panel.width_cents.setValue(60.0)
    w.selection.tool_actions["harmonic"].trigger()
    start, end = at(w, 6.6, 196.0), at(w, 11.0, 196.0)
    QTest.mousePress(w.canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 21):
        QTest.mouseMove(w.canvas, start + (end - start) * i / 20)
    QTest.mouseRelease(w.canvas, Qt.MouseButton.LeftButton, pos=end)
    save(w, "screenshot-harmonic-selection.png")

    # the export dialog: overs are handled here
    w.files.export_dialog()
    wait(lambda: w.findChild(QFileDialog, "file-dialog") is not None)
    dialog = w.findChild(QFileDialog, "file-dialog")
    pause(0.3)
    dialog.grab().save(str(DOCS / "screenshot-export-overs.png"))
    print("wrote docs/screenshot-export-overs.png")
    dialog.reject()
    w.undo_stack.setClean()
    w.close()

    # six lanes, labelled on a log axis
    from tests.app.gui.test_gui_lanes import wavex

    folder = Path(tempfile.mkdtemp())
    rate, t = 48000, np.arange(48000 * 4) / 48000
    tones = np.stack([0.2 * np.sin(2 * np.pi * f * t) + 0.01 * np.random.default_rng(k)
                      .standard_normal(len(t)) for k, f in enumerate((220, 330, 440, 60, 660,
                                                                      880))])
    wavex(folder / "surround.wav", tones, rate, 0x60F)
    w = opened(folder / "surround.wav")
    w.view_panel.log.setChecked(True)
    save(w, "screenshot-lanes.png")
    w.close()


if __name__ == "__main__":
    main()
