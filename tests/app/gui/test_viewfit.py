"""The frequency span a file opens on: up to where its content ends, on band-limited
noise of random cut-offs and rates, a chord with abrupt ends, broadband noise and
silence."""

import numpy as np
import pytest

from app.gui.view.viewfit import content_top
from tests.conftest import document


@pytest.mark.parametrize("seed", range(12))
def test_band_limited_content_opens_just_above_its_top(seed):
    rng = np.random.default_rng(seed)
    rate = int(rng.choice([44100, 48000, 96000]))
    cutoff = float(rng.uniform(400, 0.4 * rate / 2))
    spectrum = np.fft.rfft(rng.standard_normal(3 * rate))
    spectrum[np.fft.rfftfreq(3 * rate, 1 / rate) > cutoff] = 0  # a brick-wall low-pass
    noise = np.fft.irfft(spectrum, 3 * rate)
    doc = document((0.3 * noise / np.abs(noise).max())[None], rate, n_fft=2048)
    doc.prepare_overview()
    top = content_top(doc)
    # the content fills at least half the view: the top is under twice the cut-off,
    # plus the window's skirt at the brick wall (-80 dB some 12-25 bins out)
    assert cutoff < top <= 2 * cutoff + 25 * doc.hz_of(1), (cutoff, top)


def test_broadband_or_silent_files_open_on_the_whole_band(rng):
    noise = document(0.1 * rng.standard_normal((2, 48000)), 48000, n_fft=1024)
    silent = document(np.zeros((1, 48000)), 48000, n_fft=1024)
    for doc in (noise, silent):
        doc.prepare_overview()
        assert content_top(doc) == 24000.0
