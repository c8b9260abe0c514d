"""Pictures in and out of the window: the spectrogram as a PNG (whole file at a
chosen size, with axes and colour bar, or bare), and an image imported as sound
into the selection: one undo step, a line heard as a tone at its pitch."""

import numpy as np
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDialog, QFileDialog

from app.gui.view.imageexport import Picture, spectrogram_image
from app.session.selection import Selection
from engine.io.png import write_png
from engine.region import Rect
from tests.conftest import peak_hz
from tests.gui_input import read_png, settle


def test_the_whole_file_exports_at_the_chosen_size_with_axes_and_colour_bar(qtbot, window,
                                                                          tmp_path):
    window.canvas.view.t0, window.canvas.view.t1 = 2.0, 3.0  # zoomed in: the PNG is not
    window.images.export_png_dialog()
    dialog = window.findChild(QDialog, "picture-dialog")
    dialog.width_px.setValue(1200)
    dialog.height_px.setValue(500)
    dialog.accept()
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    files = window.findChild(QFileDialog, "file-dialog")
    assert files.selectedFiles()[0].endswith("demo.png")
    out = tmp_path / "demo.png"
    files.selectFile(str(out))
    files.accept()
    qtbot.waitUntil(lambda: out.exists() and window.jobs.idle(), timeout=20000)
    png = read_png(out)
    assert png.shape == (500, 1200, 4)
    doc = window.doc
    picture = window.images.picture("Whole file", 1200, 500)
    assert picture.t0 == 0 and picture.t1 == doc.length / doc.sample_rate
    plot = picture.plot()
    plain = doc.render(Rect(0, doc.n_bins, 0, doc.n_frames), plot.width(), plot.height(),
                       colormap="viridis", top_db=0.0, range_db=100.0)
    inside = png[plot.top():plot.top() + plot.height(), plot.left():plot.left() + plot.width()]
    np.testing.assert_array_equal(inside, plain)  # the whole file's spectrogram, exactly
    left = png[:, :plot.left()]
    assert (left[..., :3] < 100).all(axis=-1).sum() > 200  # tick labels drawn left of it
    bar = png[plot.top() + 2:plot.bottom() - 2, plot.right() + 20]
    assert len(np.unique(bar[:, 1])) > 100  # the colour bar's gradient


def test_a_bare_picture_is_the_engine_render_exactly(window):
    doc = window.doc
    picture = Picture(0.0, 12.0, 0.0, 16000.0, 640, 320, axes=False, colorbar=False)
    image = spectrogram_image(doc, picture).convertToFormat(QImage.Format.Format_RGBA8888)
    got = np.frombuffer(image.constBits(), np.uint8).reshape(320, 640, 4)
    np.testing.assert_array_equal(got, doc.render(Rect(0, doc.n_bins, 0, doc.n_frames), 640,
                                                  320, top_db=0.0, range_db=100.0))


def test_an_image_is_imported_as_sound_into_the_selection(qtbot, window, tmp_path):
    doc = window.doc
    rows, cols = 100, 50
    line = np.zeros((rows, cols, 4), np.uint8)
    line[..., 3] = 255
    line[30, :, :3] = 255  # a white line a third of the way down
    path = tmp_path / "line.png"
    write_png(line, path)
    window.selection.set_selection(Selection.rect(2.0, 4.0, f_lo=1000.0, f_hi=3000.0))
    before = doc.coefficients(0, doc.n_frames).clone()
    audio = window.session.synth.waveform().copy()
    window.images.import_image(path)
    qtbot.waitUntil(lambda: window.undo_stack.count() == 1, timeout=20000)
    settle(qtbot, window)
    assert window.undo_stack.text(0) == "image: line.png"
    added = window.session.synth.waveform()[0] - audio[0]
    rate = doc.sample_rate
    expected = 3000.0 - (30 + 0.5) / rows * 2000.0
    assert abs(peak_hz(added[int(2.2 * rate):int(3.8 * rate)], rate) / expected - 1) < 0.01
    assert not added[:int(1.8 * rate)].any() and not added[int(4.2 * rate):].any()
    window.undo_action.trigger()
    settle(qtbot, window)
    assert (doc.coefficients(0, doc.n_frames) == before).all()


def test_a_file_that_is_not_an_image_is_refused_and_nothing_changes(qtbot, window, tmp_path):
    bad = tmp_path / "notes.png"
    bad.write_text("not a picture")
    assert window.images.import_image(bad) is None
    from PySide6.QtWidgets import QMessageBox
    text = window.findChild(QMessageBox, "error").text()
    assert "notes.png" in text and "not an image" in text
    assert window.undo_stack.count() == 0
