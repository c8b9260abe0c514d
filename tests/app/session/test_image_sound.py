"""Images as sound: rows become sinusoids at their pitch (a horizontal line is a
tone at its pitch within 1 %), levels follow brightness, the spectrogram shows
the image, nothing outside it changes, and it is one exact undo step."""

import numpy as np
import pytest
import torch

from app.session.image import Placement, image_audio, paint_image
from engine.errors import ParameterError
from engine.model.history import History
from engine.model.resynth import Resynthesizer
from tests.conftest import document, peak_hz

RATE = 22050


def silent(seconds=4.0, **analysis):
    return document(np.zeros((1, int(seconds * RATE)), np.float32), RATE, **analysis)


def line_image(rows=128, cols=64, row=40):
    image = np.zeros((rows, cols), np.float32)
    image[row] = 1.0
    return image


@pytest.mark.parametrize("analysis", [{}, {"transform": "cq"}], ids=["stft", "cq"])
@pytest.mark.parametrize("log", [False, True], ids=["linear", "log"])
def test_a_horizontal_line_is_a_tone_at_its_pitch(analysis, log):
    doc = silent(**analysis)
    where = Placement(1.0, 3.0, 200.0, 2000.0, log=log)
    paint_image(doc, line_image(row=40), placement=where)
    audio = Resynthesizer(doc).full().numpy()[0]
    expected = where.row_hz(128)[40]
    measured = peak_hz(audio[int(1.2 * RATE):int(2.8 * RATE)], RATE)
    assert abs(measured / expected - 1) < 0.01, (measured, expected)
    rms = np.sqrt(np.mean(audio[int(1.2 * RATE):int(2.8 * RATE)] ** 2))
    assert 20 * np.log10(rms * np.sqrt(2)) == pytest.approx(-20.0, abs=0.5)  # white: -20 dBFS


def test_the_spectrogram_shows_the_image_where_it_was_placed():
    doc = silent()
    rows, cols = 64, 32
    image = np.zeros((rows, cols), np.float32)
    diagonal = [(rows - 1 - c * 2, c) for c in range(cols)]  # rising from low to high
    for r, c in diagonal:
        image[r, c] = 1.0
    where = Placement(0.5, 3.5, 300.0, 3000.0)
    paint_image(doc, image, placement=where)
    freqs = where.row_hz(rows)
    mag = doc.magnitude[0]
    for r, c in diagonal[2:-2]:  # at each column's centre, the loudest bin is the row's
        t = where.t0 + (c + 0.5) / cols * (where.t1 - where.t0)
        peak = doc.hz_of(int(mag[:, round(doc.frame_of(t))].argmax()))
        assert abs(peak - freqs[r]) <= 2 * doc.hz_of(1) + (freqs[0] - freqs[1]), (c, peak)


def test_levels_follow_brightness_in_db():
    where = Placement(0.0, 1.0, 100.0, 1000.0, level_db=-10.0, range_db=60.0)
    grey = np.full((1, 4), 0.5)  # half brightness: 30 dB under white
    audio = image_audio(grey, where, sample_rate=RATE, start=0, stop=RATE)
    rms = np.sqrt(np.mean(audio[RATE // 10:-RATE // 10] ** 2))
    assert 20 * np.log10(rms * np.sqrt(2)) == pytest.approx(-40.0, abs=0.2)
    assert not image_audio(np.zeros((3, 3)), where, sample_rate=RATE, start=0,
                           stop=RATE).any()  # black: silence


def test_only_the_frames_the_image_reaches_change_and_undo_is_exact(rng):
    doc = document(0.1 * rng.standard_normal((2, 4 * RATE)).astype(np.float32), RATE)
    original = doc.coefficients(0, doc.n_frames).clone()
    history = History(doc)
    where = Placement(1.0, 2.0, 500.0, 4000.0)
    step = paint_image(doc, line_image(), placement=where, channel=1, history=history,
                       label="image: x")
    now = doc.coefficients(0, doc.n_frames)
    changed = (now != original).any(dim=1)  # [ch, frames]
    assert not changed[0].any()  # the other channel is untouched
    frames = torch.nonzero(changed[1]).flatten()
    hop_s = doc.transform.seconds_of(1)
    reach = doc.transform.n_fft / 2 / RATE + hop_s
    assert frames.min() * hop_s >= 1.0 - reach and frames.max() * hop_s <= 2.0 + reach
    assert step.label == "image: x" and history.undo()
    assert torch.equal(doc.coefficients(0, doc.n_frames), original)


def test_rgba_pixels_are_read_as_brightness_and_transparent_is_silent():
    where = Placement(0.0, 0.5, 100.0, 1000.0)
    rgba = np.zeros((2, 2, 4), np.uint8)
    rgba[0, :, :3], rgba[0, :, 3] = 255, 255  # white, opaque
    rgba[1, :, :3], rgba[1, :, 3] = 255, 0  # white, transparent
    grey = np.array([[1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(image_audio(rgba, where, sample_rate=RATE, start=0,
                                              stop=RATE // 2),
                                  image_audio(grey, where, sample_rate=RATE, start=0,
                                              stop=RATE // 2))


@pytest.mark.parametrize("where,words", [
    (Placement(3.0, 2.0, 100.0, 1000.0), "time span 3-2 s"),
    (Placement(0.0, 9.0, 100.0, 1000.0), "within the file"),
    (Placement(0.0, 1.0, 100.0, 20000.0), "frequency range 100-20000 Hz"),
    (Placement(0.0, 1.0, 0.0, 1000.0), "frequency range"),
    (Placement(0.0, 1.0, 100.0, 1000.0, level_db=5.0), "image level 5 dBFS"),
])
def test_bad_placements_are_refused_before_anything_changes(where, words):
    doc = silent()
    before = doc.coefficients(0, doc.n_frames).clone()
    with pytest.raises(ParameterError, match=words):
        paint_image(doc, line_image(), placement=where)
    with pytest.raises(ParameterError, match="rows x columns"):
        paint_image(doc, np.zeros((0, 4)), placement=Placement(0.0, 1.0, 100.0, 1000.0))
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)
