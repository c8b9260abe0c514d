"""The Repair > De-noise dialog over the demo, for docs/gui.md: a selection drawn,
its noise learnt as the profile, the dialog beside the window.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python scripts/screenshot_repair.py
"""

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui import configure_opengl  # noqa: E402


def main() -> None:
    configure_opengl()
    from PySide6.QtCore import QPoint, QSettings, Qt
    from PySide6.QtGui import QPainter
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.cli import DEMO
    from app.window import MainWindow

    app = QApplication([])
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope,
                      tempfile.mkdtemp())
    window = MainWindow("cpu")
    window.resize(1400, 860)
    window.show()
    window.open_path(DEMO)
    deadline = time.time() + 30
    while window.session is None and time.time() < deadline:
        app.processEvents()
    window.view_panel.colormap.setCurrentText("magma")
    window.tool_actions["select"].trigger()
    view, canvas = window.canvas.view, window.canvas
    start = QPoint(round(view.x_of(1.0)), round(view.y_of(9000)))
    end = QPoint(round(view.x_of(7.0)), round(view.y_of(200)))
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    QTest.mouseMove(canvas, end)
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    window.repair_actions["denoise"].trigger()
    dialog = window.repair_dialog
    dialog.learn.click()
    dialog.controls["amount_db"].set_value(18.0)
    for _ in range(40):
        app.processEvents()
        canvas.repaint()
        if canvas.complete:
            break
    shot = window.grab()
    painter = QPainter(shot)
    panel = dialog.grab()
    painter.drawPixmap(QPoint((shot.width() - panel.width()) // 2,
                              (shot.height() - panel.height()) // 2), panel)
    painter.end()
    shot.save(str(ROOT / "docs" / "screenshot-repair.png"))
    dialog.close()
    window.undo_stack.setClean()
    window.close()
    print("wrote docs/screenshot-repair.png")


if __name__ == "__main__":
    main()
