"""The scripting guide's example runs as written; stroke scripts and the CLI."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app.session.editor import Editor, load_stroke_script
from engine.errors import ParameterError
from engine.measure.metrics import snr_db
from tests.cli_run import specpaint_here

ROOT = Path(__file__).resolve().parents[3]


def test_scripting_guide_example_runs(tmp_path, monkeypatch):
    code = re.search(r"```python\n(.*?)```", (ROOT / "docs" / "scripting.md").read_text(),
                     re.S).group(1)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assets").symlink_to(ROOT / "assets")
    (tmp_path / "out").mkdir()
    exec(compile(code, "docs/scripting.md", "exec"), {})
    clean, sr = sf.read(tmp_path / "out" / "demo-clean.wav")
    demo, _ = sf.read(ROOT / "assets" / "demo.flac")
    assert clean.shape == demo.shape
    whistle = slice(int(4 * sr), int(7 * sr))

    def at_6k(x):
        spec = np.abs(np.fft.rfft(x[whistle] * np.hanning(len(x[whistle]))))
        freqs = np.fft.rfftfreq(len(x[whistle]), 1 / sr)
        return 20 * np.log10(spec[np.abs(freqs - 6000) < 15].max())

    assert at_6k(demo) - at_6k(clean) > 30  # the whistle is gone


def test_stroke_script_file_matches_the_api(tmp_path):
    script = load_stroke_script(ROOT / "assets" / "strokes" / "demo-cleanup.json")
    a = Editor.open(ROOT / "assets" / "demo.flac")
    a.run_script(script)
    b = Editor.open(ROOT / "assets" / "demo.flac")
    b.paint("hard-eraser", [(3.0, 6000), (8.0, 6000)], radius_hz=150)
    b.paint("heal", [(2.2, 0), (2.2, 16000)])
    b.paint("heal", [(8.7, 0), (8.7, 16000)])
    b.paint(None, [(0.5, 9000), (6.0, 9000)], brush="gain", gain_db=-12, hardness=0.3,
            radius_ms=120, radius_hz=2500, channel="all")
    np.testing.assert_array_equal(a.audio(), b.audio())
    assert len(a.history.steps) == 4


@pytest.mark.parametrize("script,words", [
    ([{"points": [[0, 100]]}], r"strokes\[0\]: give either a preset or a brush type"),
    ([{"preset": "tone-pen", "points": []}], r"strokes\[0\]\.points: expected a non-empty"),
    ([{"preset": "tone-pen", "points": [[0, -5]]}], r"points\[0\]: \[0, -5\] is out of range"),
    ([{"brush": "gain", "points": [[0, 1]], "set": {"gain_db": 99}}],
     r"strokes\[0\]\.set\.gain_db: 99 is out of range"),
    ([{"brush": "gain", "points": [[0, 1]], "channel": 5}], "channel 5 does not exist"),
    ([{"brush": "gain", "points": [[0, 1]], "colour": 1}], r"unknown key\(s\) colour"),
])
def test_bad_stroke_scripts(script, words):
    ed = Editor.open(ROOT / "assets" / "demo.flac")
    with pytest.raises(ParameterError, match=words):
        ed.run_script(script)


@pytest.mark.slow
def test_apply_writes_the_sources_bit_depth_unless_told(tmp_path):
    """A 16-bit FLAC painted to WAV was written as 32-bit float (issue 50.2)."""
    out = tmp_path / "out.wav"
    r = specpaint_here("apply", ROOT / "assets" / "demo.flac", "-o", out, "--preset",
                       "hard-eraser", "--line", "3.0:6000,8.0:6000")
    assert r.returncode == 0, r.stderr
    assert sf.info(out).subtype == "PCM_16"


def test_cli_apply_quick_form_equals_the_api(tmp_path):
    out = tmp_path / "out.wav"
    r = specpaint_here("apply", ROOT / "assets" / "demo.flac", "-o", out, "--preset", "hard-eraser",
                       "--set", "radius_hz=150", "--line", "3.0:6000,8.0:6000", "--bits", "float")
    assert r.returncode == 0, r.stderr
    assert "painted 1 of 1 stroke(s)" in r.stdout
    ed = Editor.open(ROOT / "assets" / "demo.flac")
    ed.paint("hard-eraser", [(3.0, 6000), (8.0, 6000)], radius_hz=150)
    assert snr_db(ed.audio()[0], sf.read(out, dtype="float32")[0]) > 100


@pytest.mark.slow
def test_cli_apply_strokes_file_and_channel(tmp_path, write_audio, rng):
    stereo = write_audio("st.wav", rng.uniform(-0.3, 0.3, (2, 16000)).astype(np.float32), 16000,
                         "FLOAT")
    out = tmp_path / "left.wav"
    r = specpaint_here("apply", stereo, "-o", out, "--brush", "gain", "--set", "gain_db=-inf",
                       "--set", "hardness=1", "--channel", "0", "--line", "0.5:0,0.5:8000")
    assert r.returncode == 0, r.stderr
    x, y = sf.read(stereo, dtype="float32")[0], sf.read(out, dtype="float32")[0]
    assert snr_db(x[:, 1], y[:, 1]) > 100  # the right channel is untouched
    assert snr_db(x[:, 0], y[:, 0]) < 20
    r = specpaint_here("apply", stereo, "-o", tmp_path / "s.wav", "--strokes",
                       ROOT / "assets" / "strokes" / "demo-cleanup.json")
    assert r.returncode == 0, r.stderr
    # on noise the two heal strokes find no click: they change nothing and say so
    assert "painted 2 of 4 stroke(s)" in r.stdout
    assert r.stderr.count("no click found under the stroke, nothing changed") == 2


@pytest.mark.parametrize("args,words", [
    (["--preset", "nope", "--line", "1:100"], "unknown preset 'nope'"),
    (["--preset", "tone-pen"], "give --strokes FILE, or --line with --preset or --brush"),
    (["--preset", "tone-pen", "--line", "1-100"], "--line: '1-100' is not seconds:Hz"),
    (["--brush", "gain", "--set", "gain_db", "--line", "1:100"], "--set: 'gain_db' is not"),
    (["--brush", "gain", "--set", "gain_db=loud", "--line", "1:100"],
     "strokes[0].set.gain_db: expected a number, got str 'loud'"),
    (["--strokes", "missing.json"], "missing.json: cannot read the stroke script"),
])
def test_cli_apply_errors_are_one_line(tmp_path, args, words):
    r = specpaint_here("apply", ROOT / "assets" / "demo.flac", "-o", tmp_path / "x.wav", *args)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "x.wav").exists()


@pytest.mark.slow
def test_cli_presets_lists_builtins_with_parameters():
    r = specpaint_here("presets")
    assert r.returncode == 0, r.stderr
    for words in ["hard-eraser  [gain]", "gain_db=-inf dB", "tone-pen  [tone]",
                  "opacity follows pressure: [[0.0, 0.2], [1.0, 1.0]]"]:
        assert words in r.stdout
    piped = subprocess.run("specpaint presets | head -1", shell=True, capture_output=True,
                           text=True, cwd=ROOT, env={"PATH": str(ROOT / ".venv" / "bin") +
                                                     ":/usr/bin:/bin"})
    assert "Traceback" not in piped.stderr
