import numpy as np
import pytest
import soundfile as sf


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def write_audio(tmp_path):
    """Write ``[channels, frames]`` samples to ``tmp_path/name`` with soundfile."""

    def write(name, samples, sample_rate=44100, subtype=None):
        path = tmp_path / name
        sf.write(path, np.asarray(samples).T, sample_rate, subtype=subtype)
        return path

    return write


def tone(freq, seconds, sample_rate=44100, amplitude=0.5, channels=1):
    t = np.arange(int(round(seconds * sample_rate))) / sample_rate
    return np.tile(amplitude * np.sin(2 * np.pi * freq * t), (channels, 1)).astype(np.float32)


def document(samples, sample_rate=8000, **analysis):
    """A CPU document of ``[channels, frames]`` samples (no file needed)."""
    from engine.audio import Audio
    from engine.document import Document

    return Document(Audio(np.asarray(samples, np.float32), sample_rate), device="cpu",
                    **analysis)


def pytest_configure(config):
    """The GUI asks for OpenGL 3.3 core; that must be set before any QApplication."""
    from app.gui import configure_opengl

    configure_opengl()
