"""Screenshots for docs/editing.md (issue 48): a time range selected on the demo, the
file after Edit > Cut (the playhead at the junction), after Edit > Paste further on
(what was pasted selected), and a band of the whistle moved an octave down.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python scripts/screenshots_editing.py
"""

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.gui.start import configure_opengl  # noqa: E402

DOCS = ROOT / "docs"


def main() -> None:
    configure_opengl()
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.assets import DEMO
    from app.gui.window import MainWindow
    from app.session.selection import Selection

    app = QApplication([])
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope,
                      tempfile.mkdtemp())  # the first-run layout
    QSettings("SpectroPaint", "SpectroPaint").setValue("demoHintDismissed", True)

    def wait(condition, seconds=60.0):
        start = time.time()
        while not condition() and time.time() - start < seconds:
            app.processEvents()

    def save(window, name: str) -> None:
        for _ in range(60):
            app.processEvents()
            window.canvas.repaint()
            if window.canvas.complete:
                break
        window.grab().save(str(DOCS / name))
        print("wrote docs/" + name)

    w = MainWindow("cpu", autosave_folder=Path(tempfile.mkdtemp()))
    w.resize(1400, 860)
    w.show()
    w.open_path(DEMO)
    wait(lambda: w.session is not None and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    nyquist = w.doc.sample_rate / 2

    w.selection.set_selection(Selection.rect(2.0, 3.5, f_lo=0.0, f_hi=nyquist))
    save(w, "screenshot-edit-selected.png")
    w.edits.cut()
    wait(lambda: w.undo_stack.count() == 1 and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    save(w, "screenshot-edit-cut.png")
    w.transport.place_playhead(6.0)
    w.edits.paste()
    wait(lambda: w.undo_stack.count() == 2 and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    save(w, "screenshot-edit-pasted.png")

    # a band of the whistle moved an octave down and 1 s later (Edit > Transform selection…)
    w.undo_stack.setIndex(0)
    wait(lambda: w.jobs.idle())
    w.selection.clear_selection()
    band = Selection.rect(3.5, 5.5, f_lo=5850.0, f_hi=6150.0)
    w.edits.spectral.transform(band, by_s=1.0, semitones=-12.0)
    wait(lambda: w.undo_stack.count() == 1 and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    save(w, "screenshot-edit-transposed.png")
    w.undo_stack.setClean()
    w.close()


if __name__ == "__main__":
    main()
