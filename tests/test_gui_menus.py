"""Every menu action, chosen from its menu, its dialogs answered as a user answers them
(QTimer, with the event loop running between them), and the file or the state that
results checked. The PNG export had tests and never worked from the menu: this is
the path those tests skipped."""

import numpy as np
from PySide6.QtWidgets import QDialog

from engine.audio import load
from engine.layout import channel_mask
from tests.dialogs import choose, run_until, save_as, when_shown
from tests.test_gui_images import read_png
from tests.test_gui_lanes import wavex


def open_file(window, path) -> None:
    """File > Open audio…, the file chosen in the dialog; back when it is open and
    its audio made."""
    save_as(window, path)
    choose(window, "File > Open audio…")
    run_until(lambda: window.audio_path == path and not window.worker.isRunning())


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


def test_file_export_audio_keeps_the_speaker_layout(qtbot, window, tmp_path):
    """A 5.1 file with side speakers (mask 0x60F) exported as WAV was written as plain
    PCM: reopened, its lanes read 1-6. A FLAC cannot hold that order: the status
    bar says so."""
    rng = np.random.default_rng(7)
    source = tmp_path / "surround.wav"
    wavex(source, 0.2 * rng.standard_normal((6, 16000)), 16000, 0x60F)
    open_file(window, source)
    out = tmp_path / "surround-edited.wav"
    save_as(window, out)
    choose(window, "File > Export audio…")
    run_until(lambda: out.exists() and not window.worker.isRunning())
    assert channel_mask(out) == 0x60F
    assert load(out).layout == ("FL", "FR", "FC", "LFE", "SL", "SR")
    flac = tmp_path / "surround-edited.flac"
    save_as(window, flac)
    choose(window, "File > Export audio…")
    run_until(lambda: flac.name in window.statusBar().currentMessage())
    assert "not kept: the speaker layout FL FR FC LFE SL SR" in \
        window.statusBar().currentMessage()
