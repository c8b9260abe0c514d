"""Every ``specpaint`` command line in the README and docs/*.md runs as written.

The lines are read from the pages' code blocks (a line continued with ``\\`` is
one command), so a command added to the docs is run here by itself. Each runs in
a folder holding the files the docs name (take.flac, take.wav, song.flac, interview.wav,
takes/, fix.json, cleaned/take.flac, clean/, assets/), made here: in this
process where the line is one command, through bash (with ``specpaint`` the
checkout's) where it is shell (a loop). A usage synopsis (``INPUT...``,
``OUTDIR``) is not a command; the few lines that cannot run here say why in
``NOT_RUN``."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app.main import main
from tests.takes import speak

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = {  # a documented line this test cannot run -> why
    ".venv/bin/specpaint take.flac": "opens the app's window (tests/app/gui/)",
    "--scheduler tcp://scheduler-host:8786": "needs a Dask cluster (tests/app/batch/test_batch.py "
                                             "starts a LocalCluster)",
}
SR = 22050
SECONDS = 11  # past restoration.md's --start 10


def documented_lines() -> list[tuple[str, str]]:
    """(page:line, command) of every specpaint command in a code block of the pages."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for block in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            if block.group(1) == "python":
                continue
            first = text.count("\n", 0, block.start(2)) + 1
            lines = block.group(2).split("\n")
            i = 0
            while i < len(lines):
                at, command = i, lines[i]
                while command.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command.rstrip()[:-1] + " " + lines[i].strip()
                i += 1
                bare = re.sub(r"\s#.*", "", command)  # the comment off
                if re.search(r"(^|[;&|]|\bdo)\s*(\.venv/bin/)?specpaint\b", bare) and \
                        not re.search(r"\b[A-Z]{2,}\b", bare):  # not a synopsis (OUTDIR)
                    found.append((f"{page.relative_to(ROOT)}:{first + at}", command.strip()))
    return found


LINES = documented_lines()


def test_the_docs_hold_the_commands_and_each_line_not_run_is_still_there():
    assert len(LINES) >= 25, LINES
    for words in NOT_RUN:
        assert any(words in command for _, command in LINES), f"stale NOT_RUN entry {words}"


def _sound(seconds: float, rng, channels: int) -> np.ndarray:
    """Speech-like tones over hiss and 60 Hz hum, with a few clicks: something for
    every module to find."""
    t = np.arange(int(seconds * SR)) / SR
    x = 0.2 * np.sin(2 * np.pi * 220 * t) * (np.sin(2 * np.pi * 0.5 * t) > 0) + \
        0.1 * np.sin(2 * np.pi * 1000 * t) + 0.02 * np.sin(2 * np.pi * 60 * t)
    x = np.tile(x, (channels, 1)) + 0.01 * rng.standard_normal((channels, len(t)))
    for i in rng.integers(SR, len(t) - SR, 5):
        x[:, i:i + 3] += np.array([0.4, -0.3, 0.2])
    return x


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder holding the files the documented lines name; the current directory."""
    rng = np.random.default_rng(5)
    take = _sound(SECONDS, rng, 2)
    sf.write(tmp_path / "take.flac", take.T, SR, subtype="PCM_16")
    sf.write(tmp_path / "take.wav", take.T, SR, subtype="PCM_24")
    sf.write(tmp_path / "song.flac", _sound(4, rng, 2).T, SR, subtype="PCM_16")
    voice = speak("The interview starts after the noise has settled down.", "en-us", SR)
    sf.write(tmp_path / "interview.wav", (voice + 0.01 * rng.standard_normal(voice.shape)).T,
             SR, subtype="PCM_16")
    (tmp_path / "cleaned").mkdir()
    sf.write(tmp_path / "cleaned/take.flac", 0.9 * take.T, SR, subtype="PCM_16")
    for name in ("takes/take.flac", "takes/b/other.flac"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        sf.write(tmp_path / name, _sound(3, rng, 1).T, SR, subtype="PCM_16")
    sf.write(tmp_path / "takes/take.wav", _sound(3, rng, 1).T, SR, subtype="PCM_24")
    (tmp_path / "clean").mkdir()
    (tmp_path / "fix.json").write_text('[{"preset": "hard-eraser", "points": [[0.5, 3000], '
                                       '[1.5, 3000]]}]')
    (tmp_path / "assets").symlink_to(ROOT / "assets")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "specpaint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m app.main "$@"\n')
    (bin_dir / "specpaint").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPECPAINT_DEVICE", "cpu")
    return tmp_path


def _run(command: str, folder: Path, capsys) -> tuple[int, str]:
    """Run ``command`` as the shell would: (exit status, stderr)."""
    words = shlex.split(command, comments=True)
    if any(w in (";", "|", "&&") or "$" in w for w in shlex.split(command, posix=False)):
        env = {**os.environ, "PATH": f"{folder / '.venv/bin'}{os.pathsep}{os.environ['PATH']}",
               "PYTHONPATH": str(ROOT)}
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=300)
        return done.returncode, done.stderr
    try:
        status = main(words[1:])
    except SystemExit as e:  # argparse
        status = e.code
    return status, capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("where,command", LINES, ids=[w for w, _ in LINES])
def test_documented_command_runs_as_written(where, command, folder, capsys):
    skip = [why for words, why in NOT_RUN.items() if words in command]
    if skip:
        pytest.skip(skip[0])
    status, err = _run(command, folder, capsys)
    assert status == 0, f"{where}: {command}\n{err}"
    assert "Traceback" not in err
    words = shlex.split(command, comments=True)
    for flag in ("-o", "--output-dir"):
        if flag in words and "$" not in command:
            out = folder / words[words.index(flag) + 1]
            assert out.exists() and (out.is_file() or any(out.iterdir())), f"{where}: no {out}"
