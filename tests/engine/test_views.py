"""nnAudio views (Mel, CQT, VQT) against librosa on the same input."""

import librosa
import numpy as np
import pytest

from engine.view import nnaudio_views as views

SR = 22050


@pytest.fixture(scope="module")
def tones():
    t = np.arange(3 * SR) / SR
    rng = np.random.default_rng(0)
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 1500 * t) \
        + 0.05 * rng.standard_normal(len(t))
    return x.astype(np.float32)


def _reference(kind, x):
    common = dict(sr=SR, hop_length=views.HOP)
    if kind == "mel":
        return np.sqrt(librosa.feature.melspectrogram(y=x, n_fft=views.N_FFT,
                                                      n_mels=views.N_MELS, pad_mode="constant",
                                                      **common))
    cq = dict(fmin=views.FMIN, n_bins=len(views.frequencies(kind, SR)),
              bins_per_octave=views.BINS_PER_OCTAVE, **common)
    if kind == "cqt":
        return np.abs(librosa.cqt(x, **cq))
    return np.abs(librosa.vqt(x, gamma=views.GAMMA, **cq))


# (largest difference relative to the loudest cell, median dB difference within 60 dB of it):
# the mel view is librosa's filterbank on the same STFT; nnAudio's CQT/VQT (recursive
# downsampling, time-domain kernels) differ from librosa's by a few % at most.
TOLERANCE = {"mel": (1e-5, 0.01), "cqt": (0.03, 0.3), "vqt": (0.08, 0.6)}


@pytest.mark.parametrize("kind", views.VIEWS)
def test_views_match_librosa(tones, kind):
    ours = views.magnitude(tones[None], SR, kind)[0].numpy()
    ref = _reference(kind, tones)
    assert ours.shape == ref.shape
    assert len(views.frequencies(kind, SR)) == ours.shape[0]
    a, b = ours / ours.max(), ref / ref.max()
    rel, median_db = TOLERANCE[kind]
    assert np.max(np.abs(a - b)) < rel
    db_a, db_b = 20 * np.log10(a + 1e-9), 20 * np.log10(b + 1e-9)
    loud = db_b > -60
    assert np.median(np.abs(db_a - db_b)[loud]) < median_db
    assert abs(ours.max() / ref.max() - 1) < 0.01  # same scale, not only the same shape
    frames = slice(20, -20)
    assert np.array_equal(ours[:, frames].argmax(0), ref[:, frames].argmax(0))


def test_render_view_draws_the_loudest_row_where_the_tone_is(tones):
    mag = views.magnitude(tones[None], SR, "cqt")
    image = views.render_view(mag, 100, mag.shape[1])
    row = int(np.argmax(image[:, 50, :3].astype(int).sum(1)))  # row 0 is the top
    hz = views.frequencies("cqt", SR)[mag.shape[1] - 1 - row]
    assert abs(np.log2(hz / 440)) < 1 / 24
