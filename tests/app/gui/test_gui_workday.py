"""A working day in the app (issue 36), as a user goes through it: scrubbing with no
audio device, long messages, a first open, presets explained, the clone source,
the frequencies a file opens on, the overview lane, the level meter, the spectrum
under the pointer, the demo's note, and F1 agreeing with the docs."""

import numpy as np
import pytest
import soundfile as sf
import torch
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.assets import DEMO
from app.gui.window import MainWindow
from tests.gui_input import drag


@pytest.mark.slow
def test_scrubbing_moves_the_playhead_with_the_pointer_without_an_audio_device(qtbot, window):
    """With no audio output the playhead stayed where the drag began: nothing pulled the
    scrubbing head along."""
    assert window.player.output.is_null  # this machine has no audio device
    ruler, view = window.area.time_ruler, window.canvas.view
    start, end = QPoint(100, 10), QPoint(500, 10)
    qtbot.mousePress(ruler, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 21):
        qtbot.mouseMove(ruler, start + (end - start) * i / 20)
        qtbot.wait(30)  # a hand's pace
    target = view.t_of(end.x() * view.width / ruler.width())
    qtbot.waitUntil(lambda: abs(window.canvas.playhead - target) < 0.05, timeout=5000)
    qtbot.mouseRelease(ruler, Qt.MouseButton.LeftButton, pos=end)
    assert not window.player.playing


def test_a_long_message_has_room_and_can_be_read_again(qtbot, window):
    """Heal's explanation was cut off by the pointer readout (440 px of the status bar)
    and gone after 15 s. Now it fits the status bar at 1280 px and the Messages panel
    keeps it whole."""
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QToolButton

    from brushes.kernels.heal import NO_TONE
    from tests.gui_input import point

    window.brush_panel.preset_box.setCurrentText("tone-remover")
    # where the demo holds no tone (along the melody the remover follows a harmonic)
    drag(qtbot, window.canvas, point(window, 10.2, 13000), point(window, 11.0, 13500))
    message = f"tone-remover: {NO_TONE}"
    bar = window.statusBar()
    qtbot.waitUntil(lambda: bar.currentMessage() == message)
    taken = sum(w.width() for w in bar.findChildren(QWidget) if w.isVisible()
                and w.parent() is bar and w.x() > 0)  # the permanent widgets, right
    assert QFontMetrics(bar.font()).horizontalAdvance(message) <= bar.width() - taken - 12
    bar.clearMessage()
    qtbot.mouseClick(bar.findChild(QToolButton, "show-messages"), Qt.MouseButton.LeftButton)
    panel = window.messages
    assert panel.isVisible() and panel.texts()[0] == message


def test_a_first_open_says_it_is_opening_and_a_failed_one_shows_no_made_up_axes(qtbot,
                                                                                 tmp_path):
    """The canvas said "No document open" beside "Opening… 13 %"; after a failed first
    open the rulers showed a 0-8 s, 0-22 kHz span and History "(opened)"."""
    from app.gui.view.rulers import BACKGROUND
    from tests.dialogs import choose, press, run_until, save_as, type_path, when_shown

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))
    w = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....not audio")
    press(w, "error", QMessageBox.StandardButton.Ok)
    save_as(w, bad)
    choose(w, "File > Open audio…")
    run_until(lambda: w.findChild(QMessageBox, "error") is None and w.jobs.worker is not None
              and w.jobs.idle() and "bad.wav" in w.statusBar().currentMessage())
    for ruler in (w.area.time_ruler, w.area.freq_ruler):
        image = ruler.grab().toImage()
        colours = {image.pixel(x, y) for x in range(0, image.width(), 3)
                   for y in range(0, image.height(), 3)}
        assert colours == {BACKGROUND.rgb()}, "a ruler shows an axis with no document"
    history = w.history_view.model()
    assert history.rowCount() == 0 or history.index(0, 0).data() in ("", None)
    seen = []

    def open_and_look(dialog):
        type_path(dialog, DEMO)  # the open has started: what does the canvas say meanwhile?
        seen.append((w.session is None, w.area.empty.isVisible(), w.area.empty.text()))

    when_shown(w, QFileDialog, "file-dialog", open_and_look)
    choose(w, "File > Open audio…")
    run_until(lambda: w.session is not None)
    no_doc_yet, shown, text = seen[0]
    assert no_doc_yet and shown and "No document open" not in text and "demo.flac" in text
    assert not w.area.empty.isVisible()
    assert w.history_view.model().index(0, 0).data() == "(opened)"
    w.close()


def test_the_brush_panel_explains_each_preset_and_the_harmonic_outline_shows_harmonics(
        qtbot, window):
    """A preset's description was only in `specpaint presets`; the harmonic brush's
    outline showed its fundamental alone."""
    from PySide6.QtWidgets import QLabel

    from brushes.presets import all_presets
    from brushes.registry import BRUSHES
    from tests.gui_input import pixels, point

    panel = window.brush_panel
    label = panel.findChild(QLabel, "preset-description")
    box = panel.preset_box
    for i, preset in enumerate(all_presets().values()):
        box.setFocus()
        box.setCurrentIndex(i)
        text = preset.comment or BRUSHES[preset.brush].help
        assert label.text() == text and label.isVisible()
        assert box.itemData(i, Qt.ItemDataRole.ToolTipRole) == text
    panel.type_box.setCurrentText("blur")  # no preset: the brush type's own help
    assert label.text() == BRUSHES["blur"].help
    box.setCurrentText("harmonic-eraser")
    assert window.brush_panel.current()[1]["harmonics"] == 8
    view = window.canvas.view
    view.f_lo, view.f_hi = 0.0, 4000.0
    window.area.view_changed()
    before = pixels(window)
    qtbot.mouseMove(window.canvas, point(window, 5.0, 440.0))
    image = pixels(window)
    x = point(window, 5.0, 440.0).x()
    for k in range(1, 10):  # the eraser paints 8 harmonics: the 9th is not drawn
        y = point(window, 5.0, 440.0 * k).y()
        box_now = image[max(0, y - 3):y + 4, x - 12:x + 13]
        box_was = before[max(0, y - 3):y + 4, x - 12:x + 13]
        changed = (box_now != box_was).any(axis=-1).sum()
        assert (changed > 4) == (k <= 8), k


def test_alt_click_sets_the_clone_source_and_the_stroke_copies_from_it(qtbot, window):
    """The clone brush copied from a fixed -500 ms; now Alt+click picks the source, as
    in every image editor, and the next strokes copy with that offset."""
    from tests.gui_input import point

    doc, panel = window.doc, window.brush_panel
    panel.preset_box.setCurrentText("clone")
    panel.set_param("hardness", 1.0)
    alt = Qt.KeyboardModifier.AltModifier
    source = point(window, 2.0, 1000.0)
    qtbot.mouseMove(window.canvas, source)
    qtbot.mouseClick(window.canvas, Qt.MouseButton.LeftButton, alt, source)
    assert window.undo_stack.count() == 0  # no stroke
    assert window.statusBar().currentMessage().startswith("clone source: 0:02.0")
    before = doc.read_complex(doc.full_rect()).clone()
    drag(qtbot, window.canvas, point(window, 7.0, 3000.0), point(window, 8.0, 3000.0))
    params = panel.current()[1]
    view = window.canvas.view
    pixel_s, pixel_hz = view.seconds_per_pixel, (view.f_hi - view.f_lo) / view.height
    assert abs(params["offset_ms"] + 5000) <= 1000 * pixel_s * 1.5  # 2 s - 7 s
    assert abs(params["offset_hz"] + 2000) <= pixel_hz * 1.5  # 1 kHz - 3 kHz
    after = doc.read_complex(doc.full_rect())
    db = round(params["offset_hz"] / doc.hz_of(1))  # the kernel's shift in cells
    df = round(doc.frame_of(params["offset_ms"] / 1000))
    b = round(doc.bin_of(3000.0))
    for t in (7.3, 7.5, 7.7):  # inside the stroke: the source's cells, as they were
        f = round(doc.frame_of(t))
        assert torch.allclose(after[0, b, f], before[0, b + db, f + df], rtol=1e-4, atol=1e-7)
    drag(qtbot, window.canvas, point(window, 9.0, 5000.0), point(window, 9.5, 5000.0))
    assert panel.current()[1]["offset_ms"] == params["offset_ms"]  # aligned: kept


def test_a_file_opens_on_the_frequencies_it_holds_and_the_view_style_is_kept(qtbot, window,
                                                                             tmp_path):
    """A 96 kHz chord opened squashed into the bottom row of a linear 0-48 kHz axis;
    log frequency, colormap and range were forgotten at the next start."""
    from tests.dialogs import choose, open_file

    rate = 96000
    t = np.arange(3 * rate) / rate
    chord = sum(0.2 * np.sin(2 * np.pi * f * t) for f in (220.0, 277.18, 329.63))
    path = tmp_path / "chord.wav"
    sf.write(path, chord.astype(np.float32), rate, subtype="PCM_24")
    open_file(window, path)
    view = window.canvas.view
    assert 329.63 * 1.05 < view.f_hi <= 1000 and view.f_lo == 0  # the chord fills the view
    choose(window, "View > Fit to window")
    assert 329.63 * 1.05 < view.f_hi <= 1000
    open_file(window, DEMO)  # content across the band: all of it
    assert view.f_hi == window.doc.sample_rate / 2
    panel = window.view_panel
    panel.log.setChecked(True)
    panel.colormap.setCurrentText("magma")
    panel.floor.setValue(-80.0)
    window.undo_stack.setClean()
    window.close()
    again = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
    qtbot.addWidget(again)
    p = again.view_panel
    assert (p.log.isChecked(), p.colormap.currentText(), p.floor.value()) == \
        (True, "magma", -80.0)
    assert again.canvas.view.log_freq and again.canvas.colormap == "magma"
    again.close()


def test_the_overview_lane_shows_the_whole_waveform_follows_edits_and_moves_the_view(
        qtbot, window):
    """RX's overview: the file's waveform, the span shown outlined, a click goes there."""
    from PySide6.QtGui import QImage

    from app.gui.view.overviewlane import BLOCK
    from app.session.selection import Selection
    from tests.dialogs import choose, run_until
    from tests.gui_input import settle

    lane, view = window.area.overview, window.canvas.view
    run_until(lambda: lane.peaks is not None)
    wave = window.session.synth.waveform()
    blocks = -(-wave.shape[1] // BLOCK)
    assert lane.peaks.shape == (2, blocks)
    assert np.isclose(lane.peaks[1].max(), wave.max()) and np.isclose(lane.peaks[0].min(),
                                                                      wave.min())

    def ink(x0, x1):  # waveform pixels off the centre line in a range of columns
        image = lane.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
        rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(),
                                                                  image.bytesPerLine())
        green = rows[:, 3 * x0 + 1:3 * x1:3].astype(int) > 150  # the G of each pixel
        mid = image.height() // 2
        return int(green[2:mid - 1].sum() + green[mid + 2:-2].sum())

    x = lambda t: int(t / view.duration * lane.width())  # noqa: E731
    assert ink(x(6.5), x(7.5)) > 50  # the sung vowel
    window.selection.set_selection(Selection.rect(6.0, 8.0, f_lo=0.0,
                                                  f_hi=window.doc.sample_rate / 2))
    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    choose(window, "Edit > Fill selection with the brush")
    settle(qtbot, window)
    run_until(lambda: not lane.stale and ink(x(6.5), x(7.5)) < 10)  # silent there now
    assert ink(x(2.5), x(3.5)) > 50  # and as it was elsewhere
    window.canvas.zoom(4.0)
    qtbot.mouseClick(lane, Qt.MouseButton.LeftButton, pos=QPoint(int(0.75 * lane.width()), 10))
    assert (view.t0 + view.t1) / 2 == pytest.approx(0.75 * view.duration, abs=0.05)


@pytest.mark.slow
def test_the_level_meter_shows_the_peak_of_what_plays_then_falls(qtbot, window):
    """Every audio editor shows the level while playing; this one showed none."""
    from app.gui.widgets.levelmeter import FLOOR_DB, LevelMeter
    from tests.dialogs import choose

    meter = window.findChild(LevelMeter, "level-meter")
    assert meter.isVisible() and not np.isfinite(meter.hold_db).any()
    window.canvas.playhead = 6.4  # the sung vowel
    choose(window, "Play > Play / pause")
    qtbot.waitUntil(lambda: window.player.position() is not None and
                    window.player.position() > 7.4 * window.doc.sample_rate, timeout=5000)
    rate, wave = window.doc.sample_rate, window.session.synth.waveform()[0]
    heard = window.player.position()
    loudest = 20 * np.log10(np.abs(wave[int(6.4 * rate):heard]).max())
    assert meter.hold_db[0] >= loudest - 0.5  # held: the loudest sample since it began
    assert meter.hold_db[0] <= 20 * np.log10(np.abs(wave[int(6.4 * rate):heard + 8192]).max())
    assert meter.shown_db[0] > -30
    choose(window, "Play > Stop")
    qtbot.waitUntil(lambda: not meter.timer.isActive(), timeout=5000)  # fell, then stopped
    assert (meter.shown_db <= FLOOR_DB).all() and not np.isfinite(meter.hold_db).any()
    assert not meter.clipped


def test_the_spectrum_panel_shows_the_frame_under_the_pointer(qtbot, window):
    """The third thing every audio editor shows: a spectrum slice under the cursor."""
    from tests.gui_input import point

    spectrum = window.spectrum
    assert spectrum.isVisible()

    def peak_between(lo, hi):
        inside = (spectrum.hz >= lo) & (spectrum.hz <= hi)
        return spectrum.hz[inside][np.argmax(spectrum.db[inside])], spectrum.db[inside].max()

    qtbot.mouseMove(window.canvas, point(window, 5.0, 9000.0))  # the whistle: 3-8 s, 6 kHz
    qtbot.waitUntil(lambda: spectrum.title == "0:05.0" + spectrum.title[6:] and
                    len(spectrum.hz) == window.doc.n_bins)
    hz, db = peak_between(4000, 8000)
    assert abs(hz - 6000) <= window.doc.hz_of(1) and db > -60
    image = spectrum.grab().toImage()
    curve = sum(image.pixelColor(x, y).green() > 150 and image.pixelColor(x, y).red() < 150
                for x in range(40, image.width() - 5, 2) for y in range(0, image.height(), 2))
    assert curve > 20  # drawn
    qtbot.mouseMove(window.canvas, point(window, 1.0, 9000.0))  # before the whistle
    qtbot.waitUntil(lambda: spectrum.title.startswith("0:01.0"))
    assert peak_between(5800, 6200)[1] < db - 30


def test_the_demo_says_what_is_in_it_until_dismissed(qtbot, tmp_path):
    """On a first run the demo opened with no word of what was in it or what to try."""
    from PySide6.QtWidgets import QFrame, QToolButton

    from tests.dialogs import run_until

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))

    def started():
        w = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
        qtbot.addWidget(w)
        w.resize(1280, 800)
        w.show()
        qtbot.waitExposed(w)
        w.open_path(DEMO)
        run_until(lambda: w.session is not None and w.jobs.idle())
        return w, w.findChild(QFrame, "demo-hint")

    w, hint = started()
    assert hint.isVisible() and "6 kHz whistle" in hint.label.text()
    assert "tone-remover" in hint.label.text()  # what to try
    assert w.canvas.rect().contains(hint.geometry())  # over the canvas, inside it
    other = tmp_path / "other.wav"
    sf.write(other, np.zeros(8000), 8000)
    w.open_path(other)
    run_until(lambda: w.opened.audio_path == other)
    assert not hint.isVisible()  # the demo's guide, not another file's
    w.open_path(DEMO)
    run_until(lambda: w.opened.audio_path == DEMO and w.jobs.idle())
    qtbot.mouseClick(hint.findChild(QToolButton, "dismiss-demo-hint"), Qt.MouseButton.LeftButton)
    assert not hint.isVisible()
    w.close()
    w, hint = started()  # the next start
    assert not hint.isVisible()
    w.close()


def test_f1_the_readme_and_the_guide_name_the_same_keys(qtbot, window):
    """Zoom was Ctrl+= / Ctrl+- in F1's list and + / - in the guide."""
    import re
    from pathlib import Path

    from PySide6.QtWidgets import QDialog

    from tests.dialogs import choose

    choose(window, "Help > Keyboard and mouse…")
    qtbot.waitUntil(lambda: window.findChild(QDialog, "shortcuts") is not None)
    table = window.findChild(QDialog, "shortcuts").table
    f1 = " ; ".join(f"{table.item(r, 0).text()} = {table.item(r, 1).text()}"
                    for r in range(table.rowCount()))
    root = Path(__file__).resolve().parents[3]
    readme = (root / "README.md").read_text()
    sentence = readme[readme.index("In the window:"):readme.index("See [docs/gui.md]")]
    guide = (root / "docs" / "gui.md").read_text()
    keys_table = guide[guide.index("## Mouse and keys"):guide.index("\n\n", guide.index("| do"))]
    combo = r"(?:(?:Ctrl|Shift|Alt|Space)\+)+(?:[A-Z]\b|[=.\-]|Space|wheel|drag|click)"
    named = set(re.findall(combo, sentence + keys_table))
    named |= set(re.findall(r"\(([A-Z]|F1)\)", keys_table))  # tools' keys: "Lasso (A)"
    named |= {k for k in ("Space", "Esc") if k in sentence + keys_table}
    assert len(named) > 20
    missing = {k for k in named if not re.search(rf"(?<![\w+]){re.escape(k)}(?![\w])", f1)}
    assert not missing, f"named in the README or the guide, not in F1: {sorted(missing)}"
    for gesture in ("+ / -", "Alt+click", "Space+drag", "Ctrl+wheel"):
        assert gesture in f1 and gesture.split(" / ")[0] in keys_table + sentence
