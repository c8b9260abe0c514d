"""The picture shows the signal in the window too: a steady chord opened on the
constant-Q transform, as the canvas's tiles draw it at several zooms on both
frequency axes, and as File > Export spectrogram image writes it
(tests/picture.py says what must hold). Before 2026-11-25 the tiles drew a
broadband line where the transform's slices met and a tone's row wavered by up to
11 dB along it."""

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import Qt

from app.gui.view.imageexport import cells
from engine.view.render import colormap_lut
from tests.gui_input import pixels, read_png
from tests.picture import check_steady, lut_levels, row_frequencies, steady_chord

SR, SECONDS = 44100, 12.0  # eight of the old slices


@pytest.fixture
def chord(qtbot, window, tmp_path):
    """The window with a steady chord opened on constant-Q, as a user opens one: the
    transform chosen in the analysis panel, then File > Open. Returns the pitches."""
    samples, freqs = steady_chord(np.random.default_rng(7), SR, SECONDS)
    path = tmp_path / "chord.wav"
    sf.write(path, samples.T, SR, subtype="FLOAT")
    panel = window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    window.open_path(path)
    qtbot.waitUntil(lambda: window.doc is not None and window.doc.audio.path == path
                    and window.jobs.idle(), timeout=60000)
    assert window.doc.transform.kind == "cq"
    return freqs


def _check_canvas(window, freqs, what: str) -> None:
    canvas, view = window.canvas, window.canvas.view
    image = pixels(window)
    x = np.arange(image.shape[1])
    seconds = np.array([view.t_of(c + 0.5) for c in x])
    inside = (seconds > 0) & (seconds < SECONDS)  # (the playhead sits at 0)
    db = lut_levels(image[:, inside], colormap_lut(canvas.colormap).numpy(), canvas.floor_db,
                    canvas.ceiling_db)
    rows = np.array([view.f_of(y + 0.5) for y in range(image.shape[0])])
    check_steady(db, rows, seconds[inside], freqs, window.doc.transform.resolution_hz,
                 SECONDS, what)


@pytest.mark.parametrize("log", [False, True])
def test_the_canvas_draws_a_steady_chord_as_steady_lines_at_every_zoom(qtbot, window, chord,
                                                                      log):
    window.view_panel.log.setChecked(log)
    canvas = window.canvas
    canvas.fit()
    _check_canvas(window, chord, f"the whole file, {'log' if log else 'linear'}")
    canvas.setFocus()
    for zoom in (4, 32):  # a quarter of it (3 s), then 0.4 s
        while (canvas.view.t1 - canvas.view.t0) > SECONDS / zoom * 1.01:
            qtbot.keyClick(canvas, Qt.Key.Key_Plus)
        _check_canvas(window, chord, f"{SECONDS / zoom:g} s, {'log' if log else 'linear'}")


@pytest.mark.parametrize("log,width", [(False, 600), (True, 2400)])
def test_an_exported_picture_of_a_steady_chord_shows_steady_lines(qtbot, window, chord,
                                                                  tmp_path, log, width):
    window.view_panel.log.setChecked(log)
    picture = window.images.picture("Whole file", width, 400, axes=False, colorbar=False)
    out = tmp_path / "chord.png"
    window.images.export_picture(out, picture)
    qtbot.waitUntil(lambda: out.exists() and window.jobs.idle(), timeout=30000)
    doc = window.doc
    db = lut_levels(read_png(out), colormap_lut(picture.colormap).numpy(), picture.floor_db,
                    picture.ceiling_db)
    rect = cells(doc, picture)
    lo, hi = doc.hz_of(rect.bin0 - 0.5), doc.hz_of(rect.bin1 - 0.5)
    rows = row_frequencies(db.shape[0], max(lo, doc.hz_of(0.5)) if log else lo, hi, log)
    frames = rect.frame0 + (np.arange(db.shape[1]) + 0.5) / db.shape[1] * rect.shape[1]
    check_steady(db, rows, frames * doc.transform.hop / SR, chord,
                 doc.transform.resolution_hz, SECONDS, f"the exported picture at {width} px")
