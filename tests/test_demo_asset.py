"""The bundled demo is small, short, and remade exactly by its script."""

import subprocess
import sys
from pathlib import Path

import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "assets" / "demo.flac"


def test_demo_is_small_and_short():
    info = sf.info(DEMO)
    assert DEMO.stat().st_size <= 1_000_000
    assert 5 <= info.duration <= 20


def test_script_remakes_the_committed_demo(tmp_path):
    out = tmp_path / "demo.flac"
    subprocess.run([sys.executable, str(ROOT / "assets" / "make_demo.py"), str(out)], check=True,
                   capture_output=True, timeout=120)
    assert (sf.read(out)[0] == sf.read(DEMO)[0]).all()
