"""Issue 51, round 3 of trust: a project's coefficients bounded so that its sound is
finite, no export of a non-finite sample, no paint error on one; script, marks and
preset files that are not regular files refused at once; a stem set written whole;
a layered project's cells checked against its checksum; a project's declared work
bounded before it is done."""

import math
import os
import threading
import time

import numpy as np
import pytest
import torch

from app.project.write import load_project, save_project, snapshot
from engine.errors import AudioError
from engine.export import export
from tests import test_hostile_inputs, test_project_hostile, test_project_layers
from tests.conftest import document
from tests.test_project_hostile import build, refused
from tests.test_project_layers import AllTiles

valid = test_project_hostile.valid  # their fixtures: a project, a layered project
valid_layers = test_project_layers.valid_layers


# -- 1. coefficients past any sound --------------------------------------------------------

@pytest.mark.parametrize("name,value", [("re_0", 3e38), ("im_0", -3e38), ("re_0", 1e15)])
def test_an_edited_rect_past_any_sound_is_refused(tmp_path, valid, name, value):
    """3e38 is a finite float32: such a project opened without a word, |z| overflowed
    and every sample of its sound was NaN."""
    manifest, arrays = valid
    arrays = {**arrays, name: np.full_like(arrays[name], value)}
    message = refused(build(tmp_path / "loud.spp", manifest, arrays),
                      f"{name} holds values past .* above the loudest a full-scale sound")
    assert "Open an earlier copy" in message


def test_layer_tiles_past_any_sound_are_refused(tmp_path, valid_layers):
    """Tiles of 1e18 were let in (the old bound) and mixed to +303 dBFS."""
    manifest, arrays = valid_layers
    arrays = {**arrays, "layer_tiles": np.full_like(arrays["layer_tiles"], 1e18)}
    refused(build(tmp_path / "tiles.spp", manifest, arrays), "layer_tiles holds values past")


def test_history_patches_past_any_sound_are_refused(tmp_path, valid_layers):
    manifest, arrays = valid_layers
    before = arrays["history_before"].copy()
    before[0] = 3e38
    refused(build(tmp_path / "undo.spp", manifest, {**arrays, "history_before": before}),
            "history_before holds values past")


@pytest.mark.parametrize("analysis", [{"n_fft": 256}, {"transform": "cq"}])
def test_a_loud_edit_opens_and_sounds_finite(tmp_path, analysis):
    """A full-scale tone boosted by the gain brush at its most (+24 dB) five times,
    120 dB past full scale, is within the bound: it opens, and its sound is finite."""
    from brushes.path import StrokePoint
    from brushes.stroke import paint

    t = np.arange(8000) / 8000
    doc = document(np.sin(2 * np.pi * 440 * t)[None], **analysis)
    for _ in range(5):
        paint(doc, "gain", [StrokePoint(0.3, 440), StrokePoint(0.6, 440)],
              params={"gain_db": 24.0})
    peak = float(doc.mix.abs().max())
    assert peak > 1e5 * doc.full_scale  # as loud as an edit gets
    assert peak < doc.transform.coefficient_limit
    path = save_project(tmp_path / "loud.spp", snapshot(doc, AllTiles(doc)), {}).path
    again = load_project(path, device="cpu").doc
    assert torch.equal(again.mix, doc.mix)
    from engine.resynth import Resynthesizer
    assert np.isfinite(Resynthesizer(again).waveform()).all()


def test_the_bound_is_past_what_any_full_scale_signal_analyses_to():
    """The worst full-scale signal for a cell is +-1 matching its atom's signs: its
    coefficient is the atom's sum of |samples| (an impulse's analysis, shifted)."""
    from engine.transforms import make

    for transform in (make(8000, "stft", n_fft=512, window="hamming"),
                      make(8000, "cq", bins_per_octave=24)):
        hop, n = transform.hop, 4 * max(transform.reach, 2048)
        x = torch.zeros(hop, n)
        x[torch.arange(hop), n // 2 + torch.arange(hop)] = 1.0
        worst = float(transform.forward(x).abs().sum(dim=(0, 2)).max())
        assert worst <= transform.atom_sum * transform.full_scale * 1.001
        assert transform.coefficient_limit == pytest.approx(worst * 1e6, rel=0.2)


@pytest.mark.parametrize("bits", ["16", "float"])
def test_an_export_never_writes_a_non_finite_sample(tmp_path, bits):
    """It wrote them and reported "peak -inf dBFS" (16-bit: garbage after a cast
    warning)."""
    samples = np.zeros((1, 1000), np.float32)
    samples[0, 500] = np.nan
    samples[0, 600] = np.inf
    with pytest.raises(AudioError, match="holds 2 NaN or infinite samples") as e:
        export(samples, 8000, tmp_path / "out.wav", bit_depth=bits)
    assert str(tmp_path / "out.wav") in str(e.value) and "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_the_gui_says_so_for_a_sound_that_is_not_finite(qtbot, window, tmp_path):
    """The overview lane raised ValueError on every repaint; an export wrote NaN. Now
    the lane says what is wrong and File > Export audio… refuses in a dialog."""
    from PySide6.QtWidgets import QMessageBox

    from engine.region import Rect
    from tests.dialogs import choose, run_until, save_as

    doc = window.opened.doc
    rect = Rect(0, 8, 0, 8)
    doc.write_complex(rect, torch.full((doc.channels, 8, 8), math.nan, dtype=torch.complex64))
    window.opened.session.finish_mix()
    lane = window.area.overview
    run_until(lambda: lane.peaks is not None and not np.isfinite(lane.peaks).all(),
              timeout=20)
    lane.repaint()  # an exception in paintEvent fails the test (pytest-qt)
    out = tmp_path / "nan.wav"
    save_as(window, out)
    choose(window, "File > Export audio…")
    run_until(lambda: window.findChild(QMessageBox, "error") is not None)
    box = window.findChild(QMessageBox, "error")
    assert "NaN or infinite samples" in box.text() and "nothing was written" in box.text()
    assert not out.exists()


# -- 4. named pipes and devices as files ----------------------------------------------------

one_second = test_hostile_inputs.one_second


def unblock(fifo, after: float = 8.0) -> None:
    """Open ``fifo`` for writing after ``after`` s, then close it: a reader waiting for a
    writer reads nothing then, so old code fails the test rather than hangs it."""
    def write():
        time.sleep(after)
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader: nobody waits
            pass

    threading.Thread(target=write, daemon=True).start()


@pytest.mark.parametrize("command,what", [
    (["apply", "{input}", "-o", "{out}/o.wav", "--strokes", "{fifo}"], "stroke script"),
    (["batch", "{input}", "-o", "{out}", "--strokes", "{fifo}", "--jobs", "1"],
     "stroke script"),
    (["unmix", "{input}", "-o", "{out}", "--method", "nmf:2", "--hints", "{fifo}"],
     "marks file"),
])
def test_a_named_pipe_as_a_script_or_marks_is_refused_at_once(capsys, one_second, tmp_path,
                                                              command, what):
    """A named pipe given as --strokes or --hints waited for a writer for ever."""
    fifo, out = tmp_path / "pipe.json", tmp_path / "out"
    os.mkfifo(fifo)
    out.mkdir()
    unblock(fifo)
    args = [a.format(input=one_second, out=out, fifo=fifo) for a in command]
    t0 = time.monotonic()
    test_hostile_inputs.refused(capsys, f"pipe.json: is a FIFO (named pipe), not a {what}; "
                                "give a file", *args)
    assert time.monotonic() - t0 < 5
    assert list(out.iterdir()) == []


def test_a_named_pipe_in_the_presets_folder_is_skipped_at_once(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "spectropaint" / "presets"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pipe.json")
    unblock(folder / "pipe.json")
    t0 = time.monotonic()
    status, out, err = test_hostile_inputs.run(capsys, "presets")
    assert time.monotonic() - t0 < 5
    assert status == 0 and "hard-eraser" in out
    assert "pipe.json: is a FIFO (named pipe), not a preset; give a file; skipped" in err
