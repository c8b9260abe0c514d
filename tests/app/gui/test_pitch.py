"""The pitch grid: notes against librosa's, snapping, the grid drawn, and tone-pen
strokes that land on the grid while snapping."""

import librosa
import numpy as np
import pytest
from PySide6.QtCore import Qt

from engine.errors import ParameterError
from engine.view.pitch import SCALES, PitchGrid
from tests.conftest import peak_hz
from tests.gui_input import choose_brush, pixels, point, settle


def test_equal_temperament_matches_librosa():
    grid = PitchGrid()
    midi = np.arange(0, 128)
    np.testing.assert_allclose([grid.hz(m) for m in midi], librosa.midi_to_hz(midi), rtol=1e-12)
    notes = grid.notes(100.0, 1000.0)
    expected = [m for m in midi if 100 <= librosa.midi_to_hz(m) <= 1000]
    assert [m for _, m in notes] == expected
    assert grid.name(442.6) == "A4 +10c" and grid.name(261.63) == "C4 +0c"
    tuned = PitchGrid(a4=432.0)
    np.testing.assert_allclose([tuned.hz(m) for m in midi],
                               librosa.midi_to_hz(midi) * 432 / 440, rtol=1e-12)


@pytest.mark.parametrize("scale,librosa_mode", [("major", "maj"), ("natural minor", "min")])
@pytest.mark.parametrize("key", ["C", "D#", "A"])
def test_scales_hold_the_notes_librosa_gives_the_key(scale, librosa_mode, key):
    grid = PitchGrid(scale=scale, key=key)
    degrees = set(librosa.key_to_degrees(f"{key}:{librosa_mode}"))  # pitch classes
    assert {m % 12 for _, m in grid.notes(20, 20000)} == degrees


@pytest.mark.parametrize("scale", list(SCALES))
def test_snap_is_the_nearest_grid_note_in_cents(scale, rng):
    grid = PitchGrid(scale=scale, key="E")
    candidates = np.array([hz for hz, _ in grid.notes(10, 22000)])
    for hz in rng.uniform(30, 15000, 200):
        nearest = candidates[np.argmin(np.abs(np.log2(candidates / hz)))]
        assert grid.snap(hz) == pytest.approx(nearest, rel=1e-12)
    assert grid.snap(0.0) == 0.0


def test_bad_grid_settings_are_refused_with_the_reason():
    with pytest.raises(ParameterError, match="A4 = 300"):
        PitchGrid(a4=300)
    with pytest.raises(ParameterError, match="unknown scale 'lydian'"):
        PitchGrid(scale="lydian")
    with pytest.raises(ParameterError, match="unknown key 'H'"):
        PitchGrid(key="H")


def _tone_stroke(qtbot, window, hz, modifier=Qt.KeyboardModifier.NoModifier):
    """A tone-pen stroke at ``hz`` from 3 to 5 s; (the pen's frequencies, the tone added)."""
    choose_brush(window, "tone-pen")
    before = window.session.synth.waveform().copy()
    heard = []

    def listen(t, f, pressure, phase):
        heard.append(f)

    window.canvas.strokePoint.connect(listen)
    start, end = point(window, 3.0, hz), point(window, 5.0, hz)
    qtbot.mousePress(window.canvas, Qt.MouseButton.LeftButton, modifier, start)
    for i in range(1, 21):
        qtbot.mouseMove(window.canvas, start + (end - start) * i / 20)  # no modifier on moves
    qtbot.mouseRelease(window.canvas, Qt.MouseButton.LeftButton, modifier, end)
    settle(qtbot, window)
    window.canvas.strokePoint.disconnect(listen)
    rate = window.doc.sample_rate
    added = window.session.synth.waveform()[0] - before[0]
    return heard, added[int(3.3 * rate):int(4.7 * rate)]


def test_tone_pen_strokes_snap_to_the_grid(qtbot, window):
    panel = window.view_panel
    panel.log.setChecked(True)
    panel.show_grid.setChecked(True)
    panel.snap.setChecked(True)
    heard, added = _tone_stroke(qtbot, window, 447.0)  # 27 cents above A4
    assert heard and all(f == pytest.approx(440.0, rel=1e-12) for f in heard)  # every event
    tone = peak_hz(added, window.doc.sample_rate)
    assert abs(tone / 440.0 - 1) < 0.005, tone
    panel.a4.setValue(432.0)  # retuned: the grid moves
    _, added = _tone_stroke(qtbot, window, 437.0)
    assert abs(peak_hz(added, window.doc.sample_rate) / 432.0 - 1) < 0.005


def test_ctrl_turns_snapping_off_for_a_press(qtbot, window):
    window.view_panel.log.setChecked(True)  # a pixel is a few cents
    window.view_panel.snap.setChecked(True)
    heard, _ = _tone_stroke(qtbot, window, 470.0, Qt.KeyboardModifier.ControlModifier)
    assert heard[0] != pytest.approx(window.canvas.grid.snap(470.0))  # the press: not snapped
    assert abs(heard[0] / 470.0 - 1) < 0.01  # where the pointer was (a pixel's rounding)


def test_the_grid_is_drawn_on_its_notes_only(qtbot, window):
    panel, view = window.view_panel, window.canvas.view
    panel.log.setChecked(True)
    view.f_lo, view.f_hi = 200.0, 800.0  # G#3 to G5: notes about 20 px apart
    window.area.view_changed()
    before = pixels(window)
    panel.show_grid.setChecked(True)
    after = pixels(window)
    changed_rows = np.nonzero((after != before).any(axis=(1, 2)))[0]
    note_rows = {round(view.y_of(hz)) for hz, _ in PitchGrid().notes(200.0, 800.0)}
    assert len(note_rows) == 24  # each drawn (within a pixel's rasterizing) ...
    assert all(min(abs(r - n) for r in changed_rows) <= 1 for n in note_rows)
    assert all(min(abs(r - n) for n in note_rows) <= 1
               for r in changed_rows)  # ... and nothing else
