"""A take opened in the window and a repair run from its menu and dialog, as a user
runs it (the GUI's repair tests)."""

from pathlib import Path

import numpy as np
import soundfile as sf
from PySide6.QtCore import Qt

from app.session.repairs import MODULES
from tests.gui_input import settle
from tests.takes import resample

SR = 22050


def speech(seconds: float, rng) -> np.ndarray:
    """The ALSA voice again and again with pauses, at a random level, mono."""
    voice, rate = sf.read(VOICE, dtype="float64", always_2d=True)
    voice = resample(voice[:, 0], rate, SR).ravel()
    out = np.zeros(round(seconds * SR))
    at = round(rng.uniform(0.1, 0.4) * SR)
    while at < len(out):
        part = voice[:len(out) - at]
        out[at:at + len(part)] += part
        at += len(voice) + round(rng.uniform(0.2, 0.6) * SR)
    return out * rng.uniform(0.3, 0.6) / np.abs(out).max()


def hum(n: int, rng) -> np.ndarray:
    """Mains hum: 50 or 60 Hz drifting by up to 0.5 Hz, 4-8 harmonics."""
    t = np.arange(n) / SR
    f0 = rng.choice([50.0, 60.0]) + rng.uniform(-0.5, 0.5) * np.sin(2 * np.pi * t / 7)
    phase = 2 * np.pi * np.cumsum(f0) / SR
    level = rng.uniform(0.02, 0.05)
    return sum(level / k * np.sin(k * phase + rng.uniform(0, 2 * np.pi))
               for k in range(1, rng.integers(4, 9) + 1))


def opened(qtbot, window, tmp_path, samples, name="take.wav"):
    path = tmp_path / name
    sf.write(path, np.asarray(samples, np.float32).T, SR, subtype="FLOAT")
    window.open_path(path)
    qtbot.waitUntil(lambda: window.doc is not None and window.doc.audio.path == path and
                    window.jobs.idle(), timeout=30000)
    settle(qtbot, window)
    return window.doc


def dialog_for(qtbot, window, name):
    """The module's dialog, opened from its entry in the Repair menu."""
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Repair")
    action = next(a for a in menu.actions() if a.text().startswith(MODULES[name].title))
    action.trigger()
    qtbot.waitUntil(lambda: window.repairs.repair_dialog is not None and
                    window.repairs.repair_dialog.isVisible())
    return window.repairs.repair_dialog


def apply(qtbot, window, dialog):
    qtbot.mouseClick(dialog.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.jobs.idle(), timeout=120000)
    qtbot.wait(50)  # its done signal, then finished (the splices resume)
    settle(qtbot, window)


VOICE = Path("/usr/share/sounds/alsa/Front_Center.wav")  # a real voice (alsa-utils)
