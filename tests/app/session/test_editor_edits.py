"""The spectral verbs and processing through the Editor and stroke scripts (issue
48.2-5): a band copied and pasted an octave up, a selection moved and healed, gain,
fades, normalise and invert, each one undo step; bad steps are one line."""

import json

import numpy as np
import pytest
import soundfile as sf

from app.session.editor import Editor
from engine.errors import ParameterError
from engine.io.audio import Audio
from engine.model.document import Document
from tests.cli_run import specpaint_here

SR = 16000


def tone(hz: float, start: float, end: float, seconds: float = 4.0,
         level: float = 0.3) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    return (level * np.sin(2 * np.pi * hz * t) * ((t >= start) & (t < end)))[None] \
        .astype(np.float32)


def level_db(x: np.ndarray, hz: float) -> float:
    """The level of the ``hz`` component of a mono stretch, dBFS (a windowed FFT)."""
    w = np.hanning(x.size)
    spectrum = np.abs(np.fft.rfft(x * w)) * 2 / w.sum()
    k = round(hz * x.size / SR)
    return 20 * np.log10(spectrum[k - 2:k + 3].max() + 1e-12)


def editor(x: np.ndarray, transform: str = "stft") -> Editor:
    return Editor(Document(Audio(x, SR), transform=transform, device="cpu"))


@pytest.mark.slow
@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_a_band_copied_pastes_an_octave_up_at_its_level_and_undoes_exactly(transform):
    x = tone(440, 0.5, 1.5)
    ed = editor(x, transform)
    clip = ed.copy(start=0.5, end=1.5, low=300, high=600)
    assert clip.nbytes > 0 and np.array_equal(ed.audio(), x)  # a copy changes nothing
    ed.paste(at=2.0, semitones=12)
    out = ed.audio()[0]
    middle = out[round(2.3 * SR):round(2.7 * SR)]
    assert abs(level_db(middle, 880) - level_db(x[0, round(0.8 * SR):round(1.2 * SR)], 440)) \
        < 1.0
    assert level_db(middle, 440) < level_db(middle, 880) - 40
    ed.undo()
    assert np.array_equal(ed.audio(), x)


def test_a_time_clip_does_not_transpose_and_says_what_to_do():
    ed = editor(tone(440, 0.5, 1.5))
    ed.copy(start=0.5, end=1.5)
    with pytest.raises(ParameterError, match="copy a band"):
        ed.paste(at=2.0, semitones=12)


def test_move_takes_the_content_to_its_new_place_and_heals_the_hole():
    x = tone(1000, 1.0, 1.5) + tone(300, 0.0, 4.0, level=0.1)
    ed = editor(x)
    ed.move(start=1.0, end=1.5, low=800, high=1200, by_s=1.5, heal=True)
    out = ed.audio()[0]
    assert level_db(out[round(1.1 * SR):round(1.4 * SR)], 1000) < -40  # the hole
    assert level_db(out[round(2.6 * SR):round(2.9 * SR)], 1000) > -14  # where it went
    assert abs(level_db(out[round(1.1 * SR):round(1.4 * SR)], 300) -
               level_db(x[0, round(1.1 * SR):round(1.4 * SR)], 300)) < 1  # the rest kept
    assert ed.history.position == 1


def test_gain_fades_normalize_and_invert_through_a_stroke_script(tmp_path):
    x = np.concatenate([tone(500, 0, 4), tone(700, 0, 4)]) * 0.5
    sf.write(tmp_path / "take.wav", x.T, SR, subtype="FLOAT")
    script = [{"edit": "invert", "start": 0, "end": 4},
              {"edit": "gain", "start": 1, "end": 2, "db": -6},
              {"edit": "fade_in", "start": 0, "end": 0.5, "curve": "cosine"},
              {"edit": "normalize", "start": 3, "end": 4, "peak_db": -3, "low": 600,
               "high": 800}]
    (tmp_path / "process.json").write_text(json.dumps(script))
    run = specpaint_here("apply", tmp_path / "take.wav", "-o", tmp_path / "out.wav",
                         "--strokes", tmp_path / "process.json")
    assert run.returncode == 0, run.stderr
    out = sf.read(tmp_path / "out.wav", always_2d=True)[0].T
    steady = slice(round(2.5 * SR), round(2.9 * SR))
    np.testing.assert_allclose(out[:, steady], -x[:, steady], atol=1e-3)  # inverted
    quiet = slice(round(1.3 * SR), round(1.7 * SR))
    assert level_db(out[0, quiet], 500) == pytest.approx(level_db(x[0, quiet], 500) - 6, abs=0.3)
    assert np.abs(out[:, :SR // 20]).max() < 0.05  # the fade in starts from silence
    top = out[1, round(2.9 * SR):]  # its band's peak (at the range's edge; the steady
    assert 20 * np.log10(np.abs(top).max()) == pytest.approx(-3, abs=0.25)  # part 0.7 dB under)


def test_fade_out_brings_the_end_of_the_range_to_silence_and_fade_names_its_direction():
    x = tone(440, 0, 4)
    ed = editor(x)
    ed.fade(start=3.0, end=4.0, direction="out")
    out = ed.audio()[0]
    assert np.abs(out[-SR // 50:]).max() < 0.02 and np.abs(out[:2 * SR]).max() > 0.29
    with pytest.raises(ParameterError, match="direction 'up'"):
        ed.fade(start=0, end=1, direction="up")
