"""engine/ and brushes/ run headless: importing them loads no Qt, OpenGL or app."""

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_engine_and_brushes_import_no_gui():
    modules = [m.name for pkg in ("engine", "brushes")
               for m in pkgutil.walk_packages([str(ROOT / pkg)], prefix=f"{pkg}.")]
    assert "engine.document" in modules
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'OpenGL', 'app'))\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_cli_runs_without_qt():
    code = "import sys, app.cli; app.cli.build_parser(); print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_brushes_know_no_transform_internals():
    """Kernels get bins, frames, resolutions and phase advance from Transform methods,
    so they paint the same on an STFT and a constant-Q document."""
    internals = re.compile(r"\.(n_fft|window_name|bands|block_frames|window_frames|edge)\b|"
                           r"\bSTFT\b|\bConstantQ\b|bin_hz")
    brushes = ROOT / "brushes"
    hits = [f"{path.name}:{i}: {line.strip()}" for path in brushes.rglob("*.py")
            for i, line in enumerate(path.read_text().splitlines(), 1) if internals.search(line)]
    assert hits == []
