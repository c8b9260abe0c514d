"""What the screenshot scripts share: an application with the first-run layout (the
demo's guide read), windows opened on a file, waiting for the event loop, and a
window's picture saved into docs/ once the canvas has drawn every tile."""

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui.start import configure_opengl  # noqa: E402

DOCS = ROOT / "docs"


class Shots:
    def __init__(self):
        configure_opengl()
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        self.app = QApplication([])
        QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope,
                          tempfile.mkdtemp())  # the first-run layout
        QSettings("SpectroPaint", "SpectroPaint").setValue("demoHintDismissed", True)

    def wait(self, condition, seconds: float = 60.0) -> None:
        start = time.time()
        while not condition() and time.time() - start < seconds:
            self.app.processEvents()

    def pause(self, seconds: float) -> None:
        self.wait(lambda: False, seconds)

    def opened(self, path):
        """A window on ``path``, its audio and overview ready."""
        from app.gui.window import MainWindow

        window = MainWindow("cpu", autosave_folder=Path(tempfile.mkdtemp()))
        window.resize(1400, 860)
        window.show()
        window.open_path(path)
        self.wait(lambda: window.session is not None and window.jobs.idle())
        self.wait(lambda: window.area.overview.peaks is not None)
        return window

    def save(self, window, name: str) -> None:
        for _ in range(60):
            self.app.processEvents()
            window.canvas.repaint()
            if window.canvas.complete:
                break
        window.grab().save(str(DOCS / name))
        print("wrote docs/" + name)
