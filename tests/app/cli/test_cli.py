"""The specpaint command on real files, run as a user runs it."""


import numpy as np
import pytest
import soundfile as sf

from engine.measure.metrics import snr_db
from tests.cli_run import ROOT, specpaint_here


@pytest.fixture
def stereo_file(write_audio, rng):
    return write_audio("take.flac", rng.uniform(-0.5, 0.5, (2, 44100 * 2 + 17)).astype(np.float32),
                       44100, "PCM_24")


@pytest.mark.slow
def test_info(stereo_file):
    r = specpaint_here("info", stereo_file)
    assert r.returncode == 0, r.stderr
    for words in ["format:      FLAC PCM_24", "sample rate: 44100 Hz", "channels:    2",
                  "duration:    0:02.000 (88217 frames)", "peak:        -6.0", "device:      cpu"]:
        assert words in r.stdout


@pytest.mark.slow
def test_render_writes_a_png_of_the_asked_size(stereo_file, tmp_path):
    from PySide6.QtGui import QImage

    out = tmp_path / "s.png"
    r = specpaint_here("render", stereo_file, "-o", out, "--width", 300, "--height", 200,
                       "--colormap", "magma", "--log-freq", "--db-range", 80, "--n-fft", 1024)
    assert r.returncode == 0, r.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (300, 200)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [("--transform", "cq"), ("--view", "mel"), ("--view", "cqt"),
                                   ("--view", "vqt")])
def test_render_a_constant_q_document_or_a_view(stereo_file, tmp_path, extra):
    from PySide6.QtGui import QImage

    out = tmp_path / "v.png"
    r = specpaint_here("render", stereo_file, "-o", out, "--width", 320, "--height", 120, *extra)
    assert r.returncode == 0, r.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (320, 120)


@pytest.mark.slow
def test_cq_roundtrip_and_apply(stereo_file, tmp_path):
    out = tmp_path / "rt.wav"
    r = specpaint_here("roundtrip", stereo_file, "-o", out, "--transform", "cq")
    assert r.returncode == 0, r.stderr
    x, _ = sf.read(stereo_file, dtype="float32")
    y, _ = sf.read(out, dtype="float32")
    assert snr_db(x, y) > 100
    painted = tmp_path / "ap.wav"
    r = specpaint_here("apply", stereo_file, "-o", painted, "--transform", "cq", "--preset",
                       "hard-eraser", "--line", "0.2:440,0.8:440")
    assert r.returncode == 0, r.stderr
    assert snr_db(x, sf.read(painted, dtype="float32")[0]) < 40


def test_unknown_transform_is_a_usage_error(stereo_file, tmp_path):
    r = specpaint_here("render", stereo_file, "-o", tmp_path / "x.png", "--transform", "wavelet")
    assert r.returncode == 2 and "invalid choice" in r.stderr


@pytest.mark.slow
def test_roundtrip_keeps_length_rate_channels_and_is_lossless(stereo_file, tmp_path):
    out = tmp_path / "rt.wav"
    r = specpaint_here("roundtrip", stereo_file, "-o", out, "--hop", 256, "--window",
                       "blackman-harris")
    assert r.returncode == 0, r.stderr
    src, rate = sf.read(stereo_file, dtype="float32")
    back, back_rate = sf.read(out, dtype="float32")
    assert back.shape == src.shape and back_rate == rate
    assert snr_db(src, back) >= 100
    assert "round-trip SNR before writing" in r.stdout


def test_roundtrip_refuses_to_overwrite_its_input(stereo_file):
    before = stereo_file.read_bytes()
    r = specpaint_here("roundtrip", stereo_file, "-o", stereo_file)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "this is the source file; refusing to overwrite it" in r.stderr
    assert stereo_file.read_bytes() == before


@pytest.mark.parametrize("args,words", [
    (["info", "missing.wav"], "missing.wav: no such file"),
    (["render", "{txt}", "-o", "{tmp}/x.png"], "notes.txt: not a readable audio file"),
    (["render", "{wav}", "-o", "{tmp}/x.jpg"], "x.jpg: the image must be a .png file"),
    (["roundtrip", "{wav}", "-o", "{tmp}/x.wav", "--n-fft", "100"],
     "FFT size 100 is not supported"),
    (["roundtrip", "{wav}", "-o", "{tmp}/x.mp4"], "cannot write '.mp4' files"),
    (["roundtrip", "{wav}", "-o", "{tmp}/no/x.wav"], "does not exist; create it first"),
])
def test_errors_are_one_line_exit_2_no_traceback(tmp_path, write_audio, args, words):
    (tmp_path / "notes.txt").write_text("not audio")
    wav = write_audio("a.wav", np.zeros((1, 1000), np.float32), 8000)
    args = [a.format(txt=tmp_path / "notes.txt", wav=wav, tmp=tmp_path) for a in args]
    r = specpaint_here(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("specpaint: error: ")
    assert words in lines[0] and "Traceback" not in r.stderr
    if "FFT" in words:
        assert str(wav) in lines[0]  # parameter errors still name the file


def test_debug_shows_the_traceback():
    r = specpaint_here("--debug", "info", "missing.wav")
    assert r.returncode == 2 and "Traceback" in r.stderr


@pytest.mark.slow
def test_warnings_for_repaired_input(write_audio, tmp_path):
    path = write_audio("nan.wav", np.array([[0.1, np.nan, 0.2] * 1000], np.float32), 8000, "FLOAT")
    r = specpaint_here("roundtrip", path, "-o", tmp_path / "fixed.wav")
    assert r.returncode == 0
    assert "specpaint: warning:" in r.stderr and "1000 samples were NaN" in r.stderr


@pytest.mark.slow
def test_demo_writes_png_and_wav(tmp_path):
    r = specpaint_here("demo", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    src, _ = sf.read(ROOT / "assets" / "demo.flac", dtype="float32")
    back, _ = sf.read(tmp_path / "demo-roundtrip.wav", dtype="float32")
    assert snr_db(src, back) >= 100


@pytest.mark.slow
def test_devices_lists_the_backends_the_order_and_the_choice():
    r = specpaint_here("devices")
    assert r.returncode == 0, r.stderr
    for words in ["cuda ", "mps ", "cpu ", "order   cuda > mps > cpu",
                  "chosen  cpu: asked for by $SPECPAINT_DEVICE", "override with --device"]:
        assert words in r.stdout
    r = specpaint_here("--device", "cuda:7", "devices")
    assert r.returncode == 0 and "chosen  none: device 'cuda:7' asked for" in r.stdout


@pytest.mark.slow
def test_stats_prints_time_per_stage_and_peak_memory(stereo_file, tmp_path):
    r = specpaint_here("--stats", "apply", stereo_file, "-o", tmp_path / "o.wav", "--preset",
                       "hard-eraser", "--line", "0.5:1000,1.5:1000")
    assert r.returncode == 0, r.stderr
    for stage in ("decode", "analysis", "paint", "resynthesis", "write", "wall", "peak RSS"):
        assert any(line.startswith(stage) for line in r.stderr.splitlines()), stage


@pytest.mark.slow
def test_overs_name_the_options_of_the_command_that_wrote_them(write_audio, tmp_path):
    """apply said "use --normalize or --limit", options it did not have."""
    loud = write_audio("loud.wav", np.full((1, 8000), 0.9, np.float32), 8000, "FLOAT")
    out = tmp_path / "boosted.wav"
    boost = ("apply", loud, "-o", out, "--brush", "gain", "--set", "gain_db=12", "--set",
             "radius_hz=4000", "--set", "radius_ms=400", "--line", "0.2:100,0.8:100",
             "--bits", "16")
    r = specpaint_here(*boost)
    assert r.returncode == 0, r.stderr
    assert "clipped at full scale; use --normalize or --limit" in r.stdout
    r = specpaint_here(*boost[:-2], "--force", "--bits", "16", "--normalize")
    assert r.returncode == 0, r.stderr
    assert "normalized to -0.1 dBFS" in r.stdout
    assert np.abs(sf.read(out)[0]).max() == pytest.approx(10 ** (-0.1 / 20), abs=1e-3)
