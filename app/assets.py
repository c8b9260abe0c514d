"""Files the app ships with."""

from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
DEMO = ASSETS / "demo.flac"
