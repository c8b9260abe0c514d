"""Start the desktop app: an OpenGL 3.3 core context, the main window, a file."""

import gc
import os
import sys
from pathlib import Path


def configure_opengl() -> None:
    """Ask every GL widget for OpenGL 3.3 core (what the shaders are written for).
    Must run before the QApplication exists."""
    from PySide6.QtGui import QSurfaceFormat

    fmt = QSurfaceFormat()
    fmt.setVersion(3, 3)
    fmt.setProfile(QSurfaceFormat.OpenGLContextProfile.CoreProfile)
    QSurfaceFormat.setDefaultFormat(fmt)


def freeze_startup_objects() -> None:
    """Leave what start-up made (imports, the window: about 220,000 objects) out of the
    cyclic garbage collector's full passes, which otherwise walk all of them on the
    GUI thread: 47 to 84 ms a pass as start-up grew (bench/bench_gui.py, gc.callbacks).
    No collection first: it would cost start-up about 100 ms for little garbage."""
    gc.freeze()


def run(path: str | None, device: str | None = None) -> int:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                  or os.environ.get("WAYLAND_DISPLAY")):
        print("specpaint: error: no display to open the window on; run it on a desktop, under "
              "`xvfb-run -a`, or use the command-line tools (specpaint --help)", file=sys.stderr)
        return 2
    configure_opengl()
    from PySide6.QtWidgets import QApplication

    from app.assets import DEMO
    from app.gui.services.autosave import orphans
    from app.gui.window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SpectroPaint")
    window = MainWindow(device)
    window.show()
    freeze_startup_objects()
    start = lambda: window.open_path(Path(path) if path else DEMO)  # noqa: E731
    left = orphans()  # autosaves a crash left behind: offer the newest first
    if left:
        window.offer_recovery(left[0], start)
    else:
        start()
    return app.exec()
