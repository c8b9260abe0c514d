import ctypes
import importlib.util
import os
import shutil
import subprocess

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


def peak_hz(signal: np.ndarray, rate: int) -> float:
    """The strongest frequency, from a 16x zero-padded FFT with a parabolic peak."""
    n = len(signal) * 16
    spectrum = np.abs(np.fft.rfft(signal * np.hanning(len(signal)), n))
    k = int(np.argmax(spectrum))
    a, b, c = np.log(spectrum[k - 1:k + 2])
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * rate / n


class CallbackOutput:
    """An audio device whose callback the test runs itself, calling the Player's
    ``_pull`` (the NullOutput the app falls back on pulls on its own)."""

    is_null = True
    reason = "no audio device (a test pulls the blocks)"

    def start(self, sample_rate, channels, pull) -> None:
        pass

    def stop(self) -> None:
        pass

    def frames_played(self) -> int:
        return 0


def document(samples, sample_rate=8000, **analysis):
    """A CPU document of ``[channels, frames]`` samples (no file needed)."""
    from engine.io.audio import Audio
    from engine.model.document import Document

    return Document(Audio(np.asarray(samples, np.float32), sample_rate), device="cpu",
                    **analysis)


def pytest_configure(config):
    """The GUI asks for OpenGL 3.3 core; that must be set before any QApplication.
    Without Qt (a headless GPU machine) the engine and brush tests still run."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        _share_the_cores(workers)
        _own_display()
    if importlib.util.find_spec("PySide6") is None:
        return
    from app.gui.start import configure_opengl

    configure_opengl()


def _share_the_cores(workers: int) -> None:
    """Under pytest-xdist (``make test`` runs a worker a core) each worker, and what it
    starts, computes on its share of the cores: torch's default, a thread a core in
    every worker, has the threads of two workers wait on one another (a gated fill,
    4 s alone, took 49 s beside another process)."""
    import torch

    from app.batch.processes import ONE_THREAD  # the numeric libraries' thread settings

    threads = max(1, (os.cpu_count() or 1) // workers)
    os.environ.update(dict.fromkeys(ONE_THREAD, str(threads)))
    torch.set_num_threads(threads)


def _own_display() -> None:
    """Under pytest-xdist each worker gets an X server of its own (an Xvfb as
    ``make test``'s): on one shared screen with no window manager, two workers'
    windows take the keyboard focus and the active window from each other, and a
    test's shortcut or key goes to the other worker's window."""
    if not shutil.which("Xvfb") or "DISPLAY" not in os.environ:
        return  # no X server here: the GUI tests fail or skip as they would anyway
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0",
                               "1920x1080x24", "-nolisten", "tcp"], pass_fds=(write,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              preexec_fn=_ends_with_its_parent)
    os.close(write)
    with os.fdopen(read) as chosen:  # the display's number, once it accepts clients
        number = chosen.readline().strip()
    if not number:
        server.kill()
        raise RuntimeError("Xvfb did not start for this pytest-xdist worker")
    os.environ["DISPLAY"] = f":{number}"
    os.environ.pop("XAUTHORITY", None)  # it has no access control: any client connects
    _servers.append(server)


def _ends_with_its_parent() -> None:
    """In the X server's process: Linux ends it when the worker ends, however it ends."""
    ctypes.CDLL(None, use_errno=True).prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM


_servers: list[subprocess.Popen] = []  # this worker's X server (see _own_display)


def pytest_unconfigure(config):
    for server in _servers:
        server.terminate()
        server.wait(10)


@pytest.fixture
def window(qtbot, tmp_path):
    """The main window on the demo, shown and active, settings in ``tmp_path``."""
    from PySide6.QtCore import QSettings

    from app.assets import DEMO
    from app.gui.window import MainWindow

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))
    QSettings("SpectroPaint", "SpectroPaint").setValue("demoHintDismissed", True)  # a user
    # who has read the demo's guide: it would sit over the canvas the tests paint on
    w = MainWindow("cpu", autosave_folder=tmp_path / "autosave")
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()  # shortcuts need an active window (Xvfb has no window manager)
    qtbot.waitUntil(w.isActiveWindow)
    w.open_path(DEMO)
    qtbot.waitUntil(lambda: w.session is not None and w.jobs.idle(), timeout=20000)
    qtbot.wait(50)
    yield w
    w.undo_stack.setClean()  # no unsaved-changes prompt when the test closes it
    w.close()


def fail_gain_at(monkeypatch, dab: int) -> list:
    """Make the gain kernel raise at its ``dab``-th dab (a device lost, memory out:
    injected); the list it returns collects every dab's rect."""
    from brushes.kernels.gain import Gain

    real, dabs = Gain.effect, []

    def effect(self, ctx):
        dabs.append(ctx.rect)
        if len(dabs) == dab:
            raise RuntimeError("device lost")
        return real(self, ctx)

    monkeypatch.setattr(Gain, "effect", effect)
    return dabs



@pytest.fixture
def quad(qtbot, window, tmp_path):
    """A four-channel file with a different tone per channel, opened in the window."""
    from tests.gui_input import wavex

    rate, t = 16000, np.arange(16000 * 4) / 16000
    samples = np.stack([0.2 * np.sin(2 * np.pi * f * t) for f in (500, 1000, 1500, 2000)])
    path = tmp_path / "quad.wav"
    wavex(path, samples, rate, 0x33)  # FL FR BL BR
    window.open_path(path)
    qtbot.waitUntil(lambda: window.opened.audio_path == path and window.jobs.idle(),
                    timeout=20000)
    return window


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    """The members of a good project: manifest (dict) and arrays (dict)."""
    import io
    import json
    import zipfile

    from app.project.write import save_project, snapshot
    from tests.projects import Tracker, as_version_5

    doc = document(np.random.default_rng(1).uniform(-0.5, 0.5, (2, 8000)), n_fft=256)
    path = tmp_path_factory.mktemp("p") / "good.spp"
    save_project(path, snapshot(doc, Tracker(doc)), {"t0": 0.0, "colormap": "viridis"})
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        return as_version_5(doc, manifest, {k: npz[k] for k in npz.files})


@pytest.fixture(scope="module")
def valid_layers(tmp_path_factory):
    """The members of a good layered project, with its history."""
    import io
    import json
    import zipfile

    from app.project.saved_history import keep_within
    from app.project.write import save_project, snapshot
    from tests.projects import AllTiles, layered

    doc, history = layered(1)
    path = tmp_path_factory.mktemp("p") / "layers.spp"
    save_project(path, snapshot(doc, AllTiles(doc), keep_within(history.steps,
                                                                 history.position)), {})
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        return manifest, {k: npz[k] for k in npz.files}


@pytest.fixture
def one_second(write_audio):
    t = np.arange(22050) / 22050
    return write_audio("one.wav", (0.3 * np.sin(2 * np.pi * 440 * t))[None].astype(np.float32),
                       22050, "FLOAT")


@pytest.fixture
def out(tmp_path):
    """An empty folder for outputs (the input lies beside it)."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder
