"""The Python example in the README runs as written, on a real file."""

import re
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.measure.metrics import rms_db

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_example(tmp_path, monkeypatch):
    code = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    t = np.arange(3 * 44100) / 44100
    sf.write(tmp_path / "take.flac", 0.3 * np.sin(2 * np.pi * 1000 * t), 44100)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out, _ = sf.read(tmp_path / "erased.wav")
    mid = slice(int(1.2 * 44100), int(1.8 * 44100))
    assert rms_db(out[mid]) < rms_db(out[: 44100 // 2]) - 60  # the tone is gone there
