"""The desktop app, driven as a user drives it: real widgets, real OpenGL
(Mesa llvmpipe under Xvfb), pytest-qt mouse and keyboard events."""

import numpy as np
import pytest
import soundfile as sf
import torch
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.assets import DEMO
from app.session.selection import Selection
from engine.measure.metrics import snr_db
from tests.gui_input import (
    answer_file_dialog,
    choose_brush,
    drag,
    paint_whistle,
    pixels,
    point,
    settle,
)


def test_window_opens_with_the_demo(window):
    assert window.windowTitle().startswith("SpectroPaint")
    assert window.doc.audio.path == DEMO
    image = pixels(window)
    assert image.shape[0] == window.canvas.height() and len(np.unique(image[..., 1])) > 20


def test_a_stroke_changes_only_its_region_in_document_and_pixels(qtbot, window):
    doc = window.doc
    before_mag = doc.magnitude.clone()
    before_px = pixels(window)
    paint_whistle(qtbot, window)
    changed = (doc.magnitude != before_mag).any(0)
    bins, frames = torch.nonzero(changed, as_tuple=True)
    assert len(bins) > 0
    assert bins.min() * doc.hz_of(1) >= 6000 - 300 - 2 * doc.hz_of(1)
    assert bins.max() * doc.hz_of(1) <= 6000 + 300 + 2 * doc.hz_of(1)
    hop = doc.transform.hop / doc.sample_rate
    assert frames.min() * hop >= 4.0 - 0.1 and frames.max() * hop <= 6.0 + 0.1
    after_px = pixels(window)
    under = point(window, 5.0, 6000)
    assert not np.array_equal(after_px[under.y(), under.x()], before_px[under.y(), under.x()])
    # every pixel outside the stroke's screen rect (its reach, hardness 0 at worst, the
    # outline, and a texel of linear filtering) is as it was
    v, radius = window.canvas.view, window.brush_panel.current()[1]["radius_ms"] / 1000
    texel = max(v.x_of(hop) - v.x_of(0), abs(v.y_of(doc.hz_of(1)) - v.y_of(0))) + 2
    x0, x1 = v.x_of(4.0 - 2 * radius - hop) - texel, v.x_of(6.0 + 2 * radius + hop) + texel
    y0, y1 = v.y_of(6000 + 600 + 2 * doc.hz_of(1)) - texel, v.y_of(6000 - 600 - 2 * doc.hz_of(1)) \
        + texel
    outside = np.ones(after_px.shape[:2], bool)
    outside[max(0, int(y0)):int(y1) + 1, max(0, int(x0)):int(x1) + 1] = False
    assert outside.mean() > 0.8
    np.testing.assert_array_equal(after_px[outside], before_px[outside])
    assert window.undo_stack.count() == 1 and window.windowTitle().endswith("*")


def test_undo_and_redo_restore_pixels_and_document_exactly(qtbot, window):
    doc = window.doc
    choose_brush(window)  # the brush outline is drawn where the stroke will end:
    qtbot.mouseMove(window.canvas, point(window, 6.0, 6000))
    mag0, phase0, px0 = doc.magnitude.clone(), doc.phase.clone(), pixels(window)
    paint_whistle(qtbot, window)
    mag1, phase1, px1 = doc.magnitude.clone(), doc.phase.clone(), pixels(window)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # Edit > Undo
    qtbot.wait(30)
    assert torch.equal(doc.magnitude, mag0) and torch.equal(doc.phase, phase0)
    np.testing.assert_array_equal(pixels(window), px0)
    qtbot.keyClick(window, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)  # Edit > Redo
    qtbot.wait(30)
    assert torch.equal(doc.magnitude, mag1) and torch.equal(doc.phase, phase1)
    np.testing.assert_array_equal(pixels(window), px1)
    clean = window.session.synth.waveform().copy()
    window.undo_action.trigger()
    assert snr_db(doc.audio.samples, window.session.synth.waveform()) > 100
    assert not np.array_equal(clean, window.session.synth.waveform())


def test_zoom_pan_and_readout(qtbot, window):
    canvas, view = window.canvas, window.canvas.view
    span = view.t1 - view.t0
    centre = QPointF(canvas.width() / 2, canvas.height() / 2)
    wheel = QWheelEvent(centre, canvas.mapToGlobal(centre), QPoint(0, 0), QPoint(0, 120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    t_mid = view.t_of(centre.x())
    canvas.wheelEvent(wheel)
    assert view.t1 - view.t0 == pytest.approx(span / 1.25)
    assert view.t_of(centre.x()) == pytest.approx(t_mid)  # zoom keeps the time under the mouse
    t0 = view.t0
    drag(qtbot, canvas, QPoint(400, 300), QPoint(370, 300), button=Qt.MouseButton.MiddleButton)
    assert view.t0 == pytest.approx(t0 + 30 * view.seconds_per_pixel, rel=1e-6)
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    assert view.t1 - view.t0 == pytest.approx(span / 1.25 / 2)
    window.canvas.fit()
    view.f_lo, view.f_hi = 0.0, 2000.0  # a pixel is a few Hz: the note is A4
    target = point(window, 2.0, 440.0)
    qtbot.wait(100)  # the fit's own readout (the pointer where it was) shown first
    window.readout.clear()
    qtbot.mouseMove(canvas, target)
    qtbot.waitUntil(lambda: window.readout.text() != "")  # it follows at most every 50 ms
    text = window.readout.text()  # e.g. "0:01.994   442.6 Hz   A4 +10c   -70.5 dB"
    minutes, seconds = text.split()[0].split(":")
    assert abs(int(minutes) * 60 + float(seconds) - 2.0) <= view.seconds_per_pixel
    assert abs(float(text.split()[1].replace(",", "")) - 440.0) < 2 * view.f_hi / view.height
    assert "A4" in text and text.endswith("dB")


def test_log_frequency_and_style_change_nothing_in_the_document(qtbot, window):
    mag = window.doc.magnitude.clone()
    uploads = window.canvas.tiles.uploads
    px = pixels(window)
    window.view_panel.gamma.setValue(2.0)
    window.view_panel.colormap.setCurrentText("magma")
    assert not np.array_equal(pixels(window), px)
    assert window.canvas.tiles.uploads == uploads  # uniforms and the colormap only
    window.view_panel.log.setChecked(True)
    assert window.canvas.view.log_freq and window.canvas.view.f_lo >= 20
    pixels(window)
    assert torch.equal(window.doc.magnitude, mag)


def _wav_bytes():
    import io

    buffer = io.BytesIO()
    sf.write(buffer, np.full((4800, 1), 0.25, np.float32), 48000, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


@pytest.mark.parametrize("content,words", [
    (b"", "the file is empty"), (b"just text, not sound\n" * 10, "not a readable audio file"),
    (bytes(range(256)) * 40, "not a readable audio file"),
    (_wav_bytes()[:30], "not a readable audio file"),
    (_wav_bytes()[:5000], "the header declares 4800 frames but the file holds only"),
], ids=["empty", "text", "random-bytes", "truncated-header", "truncated-data"])
def test_bad_files_show_an_error_and_the_app_keeps_working(qtbot, window, tmp_path, content,
                                                           words):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(content)
    doc = window.doc
    window.open_path(bad)
    name = "truncated" if "declares" in words else "error"  # that one offers a way out
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, name) is not None, timeout=10000)
    box = window.findChild(QMessageBox, name)
    assert words in box.text() and "bad.wav" in box.text() and "Traceback" not in box.text()
    box.reject()
    assert window.doc is doc
    paint_whistle(qtbot, window)  # still paints
    assert window.undo_stack.count() == 1


def test_missing_file_error(qtbot, window, tmp_path):
    window.open_path(tmp_path / "gone.flac")
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "error") is not None, timeout=10000)
    assert "no such file" in window.findChild(QMessageBox, "error").text()


def test_export_through_the_menu_writes_the_engines_resynthesis(qtbot, window, tmp_path):
    paint_whistle(qtbot, window)
    out = tmp_path / "edited.wav"
    window.files.depth_actions["float"].trigger()  # bit for bit (the default is the source's 16)
    action = next(a for a in window.menuBar().actions()[0].menu().actions()
                  if a.text().startswith("&Export audio"))
    action.trigger()
    answer_file_dialog(qtbot, window, out)
    qtbot.waitUntil(lambda: out.exists() and window.jobs.idle(), timeout=20000)
    written, rate = sf.read(out, dtype="float32", always_2d=True)
    assert rate == window.doc.sample_rate
    np.testing.assert_array_equal(written.T, window.session.synth.waveform())


def test_project_save_and_open_restore_the_document_bit_exactly(qtbot, window, tmp_path):
    paint_whistle(qtbot, window)
    window.brush_panel.preset_box.setCurrentText("blur-haze")
    drag(qtbot, window.canvas, point(window, 1.0, 2000), point(window, 2.0, 3000))
    mag, phase = window.doc.magnitude.clone(), window.doc.phase.clone()
    window.canvas.view.log_freq = False
    project = tmp_path / "take.spp"
    window.files.save_project(path=project)
    qtbot.waitUntil(lambda: window.undo_stack.isClean(), timeout=20000)
    assert project.exists() and window.windowTitle() == "SpectroPaint — take.spp"
    window.open_path(DEMO)  # something else in between (and its audio made)
    qtbot.waitUntil(lambda: window.opened.project_path is None and
                    window.jobs.idle(), timeout=20000)
    window.open_path(project)
    qtbot.waitUntil(lambda: window.opened.project_path == project, timeout=20000)
    assert torch.equal(window.doc.magnitude, mag) and torch.equal(window.doc.phase, phase)
    assert window.undo_stack.count() == 2 and not window.modified  # the history is kept


def test_playback_moves_the_playhead_without_an_audio_device(qtbot, window):
    window.selection.set_selection(Selection.rect(1.0, 3.0, f_lo=500.0, f_hi=2000.0))
    window.transport.band_action.setChecked(True)
    window.transport.play_selection()
    qtbot.waitUntil(lambda: window.canvas.playhead is not None and window.canvas.playhead > 1.05,
                    timeout=5000)
    assert 1.0 <= window.canvas.playhead <= 3.0
    window.transport.stop()
    assert not window.player.playing


def test_scroll_bars_follow_and_move_the_view(qtbot, window):
    area, view = window.area, window.canvas.view
    window.canvas.zoom(4.0)
    assert area.hscroll.maximum() > 0 and area.hscroll.pageStep() == round((view.t1 - view.t0)
                                                                           * 1000)
    area.hscroll.setValue(area.hscroll.maximum())
    assert view.t1 == pytest.approx(view.duration, abs=1e-3)
    window.canvas.view.zoom_freq(4.0)
    area.view_changed()
    area.vscroll.setValue(0)  # the top of the bar is the top of the spectrum
    assert view.f_hi == pytest.approx(view.nyquist, rel=1e-3)


def test_unsaved_edits_are_asked_about_before_opening(qtbot, window):
    paint_whistle(qtbot, window)
    window.files.open_dialog()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "question") is not None)
    box = window.findChild(QMessageBox, "question")
    assert "unsaved edits" in box.text()
    box.button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: window.findChild(QFileDialog, "file-dialog") is not None)
    window.findChild(QFileDialog, "file-dialog").reject()
    assert window.undo_stack.count() == 1  # nothing opened: the edit is still there


def test_export_refuses_the_source_without_confirmation(qtbot, window, tmp_path):
    source = tmp_path / "take.wav"
    sf.write(source, np.zeros((8000, 1), np.float32), 8000)
    window.open_path(source)
    # shown, and its audio made: export is possible
    qtbot.waitUntil(lambda: window.opened.audio_path == source and
                    window.jobs.idle(), timeout=20000)
    before = source.read_bytes()
    window.files.export_audio(source)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "question") is not None)
    box = window.findChild(QMessageBox, "question")
    assert "Overwrite the original recording?" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert source.read_bytes() == before


def test_dropping_a_file_opens_it_and_it_is_remembered(qtbot, window, tmp_path):
    from PySide6.QtCore import QMimeData, QUrl
    from PySide6.QtGui import QDropEvent

    dropped = tmp_path / "dropped.flac"
    sf.write(dropped, 0.1 * np.sin(np.arange(16000) / 5.0), 16000)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(dropped))])
    event = QDropEvent(QPointF(100, 100), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.opened.audio_path == dropped, timeout=20000)
    assert window.doc.sample_rate == 16000 and "dropped.flac" in window.windowTitle()
    recent = [a.text() for a in window.files.recent_menu.actions()]
    assert recent[0] == str(dropped) and str(DEMO) in recent


def test_a_bad_project_file_shows_an_error(qtbot, window, tmp_path):
    bad = tmp_path / "broken.spp"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    window.open_path(bad)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "error") is not None, timeout=10000)
    text = window.findChild(QMessageBox, "error").text()
    assert "broken.spp: not a SpectroPaint project or damaged" in text
    assert window.doc.audio.path == DEMO


def test_save_as_preset_writes_a_user_preset_and_selects_it(qtbot, window, tmp_path,
                                                          monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    from brushes.presets import load_preset

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    choose_brush(window, "blur-haze")
    window.brush_panel.set_param("sigma_ms", 90.0)
    window.brush_panel.save_button.click()
    qtbot.waitUntil(lambda: window.findChild(QInputDialog, "preset-name") is not None)
    dialog = window.findChild(QInputDialog, "preset-name")
    dialog.setTextValue("thick-haze")
    dialog.accept()
    saved = load_preset(tmp_path / "spectropaint" / "presets" / "thick-haze.json")
    assert saved.brush == "blur" and saved.params["sigma_ms"] == 90.0
    assert window.brush_panel.preset_box.currentText() == "thick-haze"


def test_tablet_pressure_sets_the_brush_opacity(qtbot, window):
    """soft-eraser's opacity follows pressure (0.2 at none, 1 at full): a light
    pen stroke erases less than a firm one."""
    from PySide6.QtGui import QPointingDevice, QTabletEvent

    def pen_stroke(t, pressure):
        canvas, device = window.canvas, QPointingDevice.primaryPointingDevice()
        for kind, seconds in ((QTabletEvent.Type.TabletPress, t),
                              (QTabletEvent.Type.TabletMove, t + 0.3),
                              (QTabletEvent.Type.TabletRelease, t + 0.3)):
            pos = QPointF(window.canvas.view.x_of(seconds), window.canvas.view.y_of(6000))
            event = QTabletEvent(kind, device, pos, canvas.mapToGlobal(pos), pressure, 0, 0,
                                 0, 0, 0, Qt.KeyboardModifier.NoModifier,
                                 Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
            canvas.tabletEvent(event)

    window.brush_panel.preset_box.setCurrentText("soft-eraser")
    doc = window.doc
    before = doc.magnitude.clone()
    pen_stroke(3.5, 0.1)
    pen_stroke(6.0, 1.0)
    settle(qtbot, window)  # painted in the event loop's turns
    b = round(doc.bin_of(6000))
    light = doc.magnitude[0, b, round(doc.frame_of(3.65))] / before[0, b, round(doc.frame_of(3.65))]
    firm = doc.magnitude[0, b, round(doc.frame_of(6.15))] / before[0, b, round(doc.frame_of(6.15))]
    assert float(light) == pytest.approx(1 - 0.28, abs=0.02)  # opacity 0.2 + 0.8 * 0.1
    assert float(firm) < 0.05  # full opacity: erased but for the Gaussian edge's last percent
    assert window.undo_stack.count() == 2


def test_changing_the_analysis_keeps_the_edits_and_is_one_undo_step(qtbot, window):
    paint_whistle(qtbot, window)
    stft_doc = window.doc
    edited = window.session.synth.waveform().copy()
    stft_mag = stft_doc.magnitude.clone()
    steps = window.undo_stack.count()
    panel = window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    qtbot.mouseClick(panel.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc is not stft_doc, timeout=30000)
    cq_doc = window.doc
    assert cq_doc.transform.kind == "cq" and window.canvas.doc is cq_doc
    assert window.undo_stack.count() == steps + 1
    assert window.undo_stack.text(steps) == "analysis: constant-Q, 48 bins/octave from 32.7 Hz"
    assert snr_db(edited, window.session.synth.waveform()) > 100  # the erased whistle stays erased
    qtbot.wait(50)
    pixels(window)  # the constant-Q view draws
    window.undo_stack.undo()
    assert window.doc is stft_doc and torch.equal(window.doc.magnitude, stft_mag)
    assert panel.transform.currentData() == "stft"
    window.undo_stack.undo()  # and the stroke before it
    assert not torch.equal(window.doc.magnitude, stft_mag)
    window.undo_stack.redo()
    window.undo_stack.redo()
    assert window.doc is cq_doc and window.canvas.doc is cq_doc


def test_the_nnaudio_view_is_in_the_canvas_time_axis_with_axes_of_its_own(qtbot, window):
    """It was an image centred in the dock, its time unrelated to the canvas's above it,
    with no axes."""
    from PySide6.QtGui import QImage

    dock = window.analysis_view
    window.canvas.view.t0, window.canvas.view.t1 = 1.5, 4.0  # the click at 2.2 s, hi-hats
    window.area.view_changed()
    dock.choice.setCurrentIndex(dock.choice.findData("cqt"))
    qtbot.waitUntil(lambda: dock.last_image is not None, timeout=20000)
    strip = dock.strip
    strip.repaint()
    image = strip.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(),
                                                              image.bytesPerLine())
    rows = rows[:, :3 * image.width()].reshape(image.height(), image.width(), 3).astype(int)
    plot = strip.plot()
    left = strip.mapFromGlobal(window.canvas.mapToGlobal(QPoint(0, 0))).x()
    assert plot.left() == left and plot.width() == window.canvas.width()
    def events(picture):  # brightness of each column, above its median: the transients
        profile = picture[:picture.shape[0] // 2].astype(float).sum(axis=(0, 2))
        return profile - np.median(profile)

    strip_events = events(rows[:int(plot.height()), int(plot.left()):int(plot.right())])
    canvas_events = events(pixels(window)[..., :3])
    lags = range(-20, 21)
    match = [np.dot(np.roll(strip_events, lag), canvas_events) for lag in lags]
    hop_px = 512 / window.doc.sample_rate / window.canvas.view.seconds_per_pixel
    # the same events at the same x, within a frame of the view (nnAudio's hop)
    assert abs(lags[int(np.argmax(match))]) <= max(2, hop_px)
    ink = (rows.sum(axis=2) > 3 * 150)
    assert ink[:int(plot.bottom()), :int(plot.left()) - 4].sum() > 30  # frequency labels
    assert ink[int(plot.bottom()) + 2:, int(plot.left()):].sum() > 30  # time labels


@pytest.mark.slow
def test_the_nnaudio_view_shows_the_visible_span_and_follows_edits(qtbot, window):
    dock = window.analysis_view
    dock.choice.setCurrentIndex(dock.choice.findData("cqt"))
    qtbot.waitUntil(lambda: dock.last_image is not None, timeout=20000)
    first, generation = dock.last_image, dock.generation
    assert first.shape[0] > 50 and len(np.unique(first[..., 1])) > 20
    paint_whistle(qtbot, window)  # erase 6 kHz from 4 to 6 s
    qtbot.waitUntil(lambda: dock.generation > generation and dock.last_image is not first,
                    timeout=20000)
    assert not np.array_equal(dock.last_image, first)  # the erased whistle shows
    assert window.doc.transform.kind == "stft"  # painting stays on the paintable transform


def test_the_brush_outline_is_never_narrower_than_the_transform_resolves(qtbot, window):
    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    window.brush_panel.set_param("radius_hz", 1.0)
    qtbot.mouseMove(window.canvas, point(window, 3.0, 1000))
    qtbot.waitUntil(lambda: window.canvas._cursor is not None)
    hz = [window.canvas.view.f_of(y) for _, y in window.canvas._outline()]
    lobe = window.doc.transform.resolution_hz(window.canvas.view.f_of(window.canvas._cursor.y()))
    assert max(hz) - min(hz) >= 2 * lobe * 0.99  # the painted footprint's true size


def test_a_file_opens_on_the_analysis_the_panel_shows(qtbot, window):
    panel = window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    panel.bins_per_octave.setValue(36)
    first = window.doc
    window.open_path(DEMO)
    qtbot.waitUntil(lambda: window.doc is not first, timeout=20000)
    assert window.doc.transform.settings() == {"transform": "cq", "bins_per_octave": 36,
                                               "fmin": 32.7}


def test_a_tone_remover_stroke_over_no_tone_says_so_and_changes_nothing(qtbot, window):
    """Where the demo holds no tone (above the melody's harmonics, after the whistle):
    nothing is removed, no undo step is made, and the status bar says why (not a silent
    no-op). (Along the melody at 1.5 kHz the remover now follows a plucked harmonic's
    tone, as it follows a gliding whistle.)"""
    from brushes.kernels.heal import NO_TONE

    mag0 = window.doc.magnitude.clone()
    window.brush_panel.preset_box.setCurrentText("tone-remover")
    steps = window.undo_stack.count()
    drag(qtbot, window.canvas, point(window, 10.2, 13000), point(window, 11.0, 13500), steps=20)
    qtbot.waitUntil(lambda: window.session.idle)
    assert window.undo_stack.count() == steps
    assert torch.equal(window.doc.magnitude, mag0)
    assert window.statusBar().currentMessage() == f"tone-remover: {NO_TONE}"


def test_a_tone_remover_stroke_is_applied_at_release_and_undone_exactly(qtbot, window):
    """heal/steady acts when the stroke ends: the GUI's per-event path must get it."""
    doc = window.doc
    mag0, phase0 = doc.magnitude.clone(), doc.phase.clone()
    window.brush_panel.preset_box.setCurrentText("tone-remover")
    steps = window.undo_stack.count()
    drag(qtbot, window.canvas, point(window, 3.3, 6000), point(window, 7.7, 6000), steps=30)
    qtbot.wait(30)
    assert window.undo_stack.count() == steps + 1
    audio = window.session.synth.waveform()[0]
    sr = doc.sample_rate
    t = np.arange(int(4.0 * sr), int(7.0 * sr))
    tone = np.exp(-2j * np.pi * 6000 * t / sr)
    before = abs(doc.audio.samples[0][t] @ tone)  # the whistle's level in the recording
    assert abs(audio[t] @ tone) < before / 10  # -20 dB or more
    mag1, phase1 = doc.magnitude.clone(), doc.phase.clone()
    window.undo_stack.undo()
    assert torch.equal(doc.magnitude, mag0) and torch.equal(doc.phase, phase0)
    window.undo_stack.redo()
    assert torch.equal(doc.magnitude, mag1) and torch.equal(doc.phase, phase1)
