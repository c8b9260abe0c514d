"""Screenshots for the docs: the demo loaded (with its first-run note), a stroke
half-way, and the demo on constant-Q (scripts/screenshots_workday.py makes the rest).

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python scripts/screenshots.py
"""

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui.start import configure_opengl  # noqa: E402


def demo_window():
    """The application and a 1400 x 860 window on the demo (magma), in the first-run
    layout, not this machine's saved one."""
    configure_opengl()
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.assets import DEMO
    from app.gui.window import MainWindow

    app = QApplication([])
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope,
                      tempfile.mkdtemp())
    window = MainWindow("cpu")
    window.resize(1400, 860)
    window.show()
    window.open_path(DEMO)
    deadline = time.time() + 30
    while (window.session is None or window.area.overview.peaks is None) and \
            time.time() < deadline:
        app.processEvents()
    window.view_panel.colormap.setCurrentText("magma")
    return app, window


def main() -> None:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    app, window = demo_window()
    window.view_panel.log.setChecked(True)

    def settle():
        for _ in range(40):
            app.processEvents()
            window.canvas.repaint()
            if window.canvas.complete:
                break

    settle()
    window.grab().save(str(ROOT / "docs" / "screenshot-demo.png"))
    window.demo_hint.dismiss()  # read: the next pictures show the painting
    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    view, canvas = window.canvas.view, window.canvas
    start = QPoint(round(view.x_of(3.2)), round(view.y_of(6000)))
    end = QPoint(round(view.x_of(5.6)), round(view.y_of(6000)))
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 21):
        QTest.mouseMove(canvas, start + (end - start) * i / 20)
        app.processEvents()
    settle()
    window.grab().save(str(ROOT / "docs" / "screenshot-stroke.png"))
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    constant_q(app, window, settle)
    window.undo_stack.setClean()
    window.close()
    print("wrote docs/screenshot-demo.png, docs/screenshot-stroke.png, docs/screenshot-cq.png")


def constant_q(app, window, settle) -> None:
    """The same document re-analyzed as constant-Q, with the nnAudio CQT view below."""
    panel = window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    panel.apply.click()
    deadline = time.time() + 60
    stft_doc = window.doc
    while window.doc is stft_doc and time.time() < deadline:
        app.processEvents()
    dock = window.analysis_view
    dock.choice.setCurrentIndex(dock.choice.findData("cqt"))
    deadline = time.time() + 60
    while dock.last_image is None and time.time() < deadline:
        app.processEvents()
    settle()
    window.grab().save(str(ROOT / "docs" / "screenshot-cq.png"))


if __name__ == "__main__":
    main()
