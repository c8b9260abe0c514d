"""The picture shows the signal, not the transform's blocks: ``specpaint render`` of a
steady chord, on every transform and nnAudio view, at several widths and both
frequency axes (tests/picture.py says what must hold). Before 2026-11-25 the
constant-Q picture drew a broadband line where slices met (-39 to -45 dB of the
peak, from the lowest bin to Nyquist) and a tone's row wavered by up to 11 dB."""

import numpy as np
import pytest
import soundfile as sf

from engine.transforms import make
from engine.view import nnaudio_views as views
from engine.view.render import colormap_lut
from tests.cli_run import specpaint_here
from tests.picture import check_steady, lut_levels, read_png, row_frequencies, steady_chord

FILES = {"44.1 kHz, 12 s": (44100, 12.0), "96 kHz, 8 s": (96000, 8.0)}  # 8 and 6 old slices


@pytest.fixture(scope="module", params=list(FILES))
def chord(request, tmp_path_factory):
    """A steady chord's file, its sample rate, length and pitches."""
    sr, seconds = FILES[request.param]
    samples, freqs = steady_chord(np.random.default_rng(sr), sr, seconds)
    path = tmp_path_factory.mktemp("chord") / "chord.wav"
    sf.write(path, samples.T, sr, subtype="FLOAT")
    return path, sr, seconds, freqs


def _render(path, out, width: int, height: int, log: bool, *analysis) -> np.ndarray:
    r = specpaint_here("render", path, "-o", out, "--colormap", "gray", "--top-db", 0,
                       "--db-range", 100, "--width", width, "--height", height,
                       *(["--log-freq"] if log else []), *analysis)
    assert r.returncode == 0, r.stderr
    return lut_levels(read_png(out), colormap_lut("gray").numpy(), -100.0, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("kind,width,log", [("cq", 300, False), ("cq", 1200, True),
                                            ("cq", 4000, False), ("stft", 1200, True)])
def test_a_steady_chord_renders_as_steady_lines(chord, tmp_path, kind, width, log):
    path, sr, seconds, freqs = chord
    height = 400
    db = _render(path, tmp_path / "c.png", width, height, log, "--transform", kind)
    t = make(sr, kind)
    lo, hi = t.hz_of(-0.5), t.hz_of(t.n_bins - 0.5)
    rows = row_frequencies(height, max(lo, t.hz_of(0.5)) if log else lo, hi, log)
    shown_s = t.n_frames(round(sr * seconds)) * t.hop / sr  # the picture's frames
    cols = (np.arange(width) + 0.5) / width * shown_s
    check_steady(db, rows, cols, freqs, t.resolution_hz, seconds,
                 f"{kind} at {width} px, {'log' if log else 'linear'}")


@pytest.mark.slow
@pytest.mark.parametrize("view", views.VIEWS)
def test_a_steady_chord_s_nnaudio_views_are_steady_lines(chord, tmp_path, view):
    path, sr, seconds, freqs = chord
    width, height = 1200, 300
    db = _render(path, tmp_path / "v.png", width, height, False, "--view", view)
    centres = views.frequencies(view, sr)
    at = (np.arange(height)[::-1] + 0.5) / height * len(centres) - 0.5  # rows: the view's
    rows = np.interp(at, np.arange(len(centres)), centres)
    shown_s = (1 + round(sr * seconds) // views.HOP) * views.HOP / sr
    cols = (np.arange(width) + 0.5) / width * shown_s
    check_steady(db, rows, cols, freqs, lambda f: f / 10 + 50, seconds, f"the {view} view")
