"""The Repair > De-noise dialog over the demo, for docs/gui.md: a selection drawn,
its noise learnt as the profile, the dialog beside the window.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python scripts/screenshot_repair.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.screenshots import demo_window  # noqa: E402


def main() -> None:
    from PySide6.QtCore import QPoint, QRect, Qt
    from PySide6.QtGui import QColor, QPainter
    from PySide6.QtTest import QTest

    app, window = demo_window()
    window.selection.tool_actions["select"].trigger()
    view, canvas = window.canvas.view, window.canvas
    start = QPoint(round(view.x_of(1.0)), round(view.y_of(9000)))
    end = QPoint(round(view.x_of(7.0)), round(view.y_of(200)))
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    QTest.mouseMove(canvas, end)
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    window.repairs.repair_actions["denoise"].trigger()
    dialog = window.repairs.repair_dialog
    dialog.learn.click()
    dialog.controls["amount_db"].set_value(18.0)
    for _ in range(40):
        app.processEvents()
        canvas.repaint()
        if canvas.complete:
            break
    shot = window.grab()
    painter = QPainter(shot)  # the dialog over the window, framed as a window manager would
    panel, title = dialog.grab(), 24
    at = QPoint((shot.width() - panel.width()) // 2, (shot.height() - panel.height()) // 2)
    frame = QRect(at.x() - 1, at.y() - title, panel.width() + 1, panel.height() + title)
    painter.fillRect(frame, QColor(60, 64, 72))
    painter.setPen(QColor(235, 235, 240))
    painter.drawText(frame.adjusted(10, 0, 0, -panel.height()), Qt.AlignmentFlag.AlignVCenter,
                     dialog.windowTitle())
    painter.drawPixmap(at, panel)
    painter.setPen(QColor(60, 64, 72))
    painter.drawRect(frame)
    painter.end()
    shot.save(str(ROOT / "docs" / "screenshot-repair.png"))
    dialog.close()
    window.undo_stack.setClean()
    window.close()
    print("wrote docs/screenshot-repair.png")


if __name__ == "__main__":
    main()
