"""Every menu action, chosen from its menu, its dialogs answered as a user answers them
(QTimer, with the event loop running between them), and the file or the state that
results checked. The PNG export had tests and never worked from the menu: this is
the path those tests skipped."""

import numpy as np
from PySide6.QtWidgets import QDialog

from tests.dialogs import choose, run_until, save_as, when_shown
from tests.test_gui_images import read_png


def test_file_export_spectrogram_image_writes_the_png_chosen(qtbot, window, tmp_path):
    """The settings dialog deleted itself on closing, so reading it after the file
    dialog raised "QComboBox already deleted" and nothing was written."""
    out = tmp_path / "picture.png"

    def settings(dialog):
        dialog.width_px.setValue(800)
        dialog.height_px.setValue(300)
        dialog.colorbar.setChecked(False)
        dialog.accept()

    when_shown(window, QDialog, "picture-dialog", settings)
    save_as(window, out)
    choose(window, "File > Export spectrogram image…")
    run_until(lambda: out.exists() and not window.worker.isRunning())
    png = read_png(out)
    assert png.shape == (300, 800, 4)
    assert len(np.unique(png[..., 1])) > 50
