"""``specpaint repair``'s and ``batch --repair``'s options as a user types them: each
value read as its module declares it (one parser, brushes.params.Param.parse), a
region or band that is no region or band refused in one line (exit 2, nothing
written), and the output at the source's depth."""

import json
import warnings

import numpy as np
import pytest
import soundfile as sf

from app.main import main

SR = 22050


def run(capsys, *args) -> tuple[int, str, str]:
    try:
        status = main([str(a) for a in args])
    except SystemExit as e:  # argparse
        status = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def refused(capsys, words: str, *args) -> None:
    status, _, err = run(capsys, *args)
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and words in err, err


@pytest.fixture
def take(tmp_path, rng, monkeypatch):
    """Three seconds of 16-bit stereo: a tone over hiss and 60 Hz hum, with clicks."""
    monkeypatch.setenv("SPECPAINT_DEVICE", "cpu")
    t = np.arange(3 * SR) / SR
    x = 0.2 * np.sin(2 * np.pi * 440 * t) + 0.03 * np.sin(2 * np.pi * 60 * t)
    x = np.stack([x, 0.8 * x]) + 0.005 * rng.standard_normal((2, len(t)))
    for i in rng.integers(SR // 2, 2 * SR, 6):
        x[:, i:i + 3] += np.array([0.4, -0.3, 0.2])
    path = tmp_path / "take.wav"
    sf.write(path, x.T, SR, subtype="PCM_16")
    return path


@pytest.mark.parametrize("module,options", [
    ("declick", ["--sensitivity", "6"]), ("denoise", ["--amount", "15", "--profile", "0:0.4"]),
    ("dehum", ["--harmonics", "12", "--fundamental", "60"]), ("declip", ["--headroom", "3"]),
])
def test_numeric_options_are_read_as_numbers(take, tmp_path, capsys, module, options):
    status, out, err = run(capsys, "repair", module, take, "-o", tmp_path / "o.wav", *options)
    assert status == 0, err
    assert "wrote" in out


@pytest.mark.parametrize("options,words", [
    (["--sensitivity", "six"], "--sensitivity: 'six' is not a number"),
    (["--sensitivity", "\u0666"], "is not a number"),  # an Arabic-Indic six
    (["--sensitivity", "1_0"], "is not a number"),
    (["--sensitivity", "11"], "--sensitivity: 11.0 is out of range; allowed 0 to 10"),
    (["--sensitivity", "nan"], "--sensitivity: nan is out of range"),
])
def test_a_bad_option_value_is_one_line(take, tmp_path, capsys, options, words):
    refused(capsys, words, "repair", "declick", take, "-o", tmp_path / "o.wav", *options)
    assert not (tmp_path / "o.wav").exists()


def test_a_whole_number_option_refuses_a_fraction(take, tmp_path, capsys):
    refused(capsys, "--harmonics: expected a whole number, got 4.5", "repair", "dehum", take,
            "-o", tmp_path / "o.wav", "--harmonics", "4.5")


def test_batch_repair_values_are_read_as_the_module_declares_them(take, tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    take.rename(folder / "take.wav")
    status, _, err = run(capsys, "batch", folder, "-o", tmp_path / "out", "--jobs", "1",
                         "--repair", "dehum:fundamental=50,harmonics=10",
                         "--repair", "declick:sensitivity=6,crackle=on")
    assert status == 0, err
    refused(capsys, "fundamental: '50.0' is not one of auto, 50, 60", "batch", folder, "-o",
            tmp_path / "o2", "--repair", "dehum:fundamental=50.0")
    refused(capsys, "--repair declick:sensitivity=\u0666: sensitivity: '\u0666' is not a number",
            "batch", folder, "-o", tmp_path / "o2", "--repair", "declick:sensitivity=\u0666")
    refused(capsys, "declick has no setting loud", "batch", folder, "-o", tmp_path / "o2",
            "--repair", "declick:loud=1")


@pytest.mark.parametrize("option", ["--start", "--end"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308", "-1e308"])
def test_a_region_bound_that_is_no_time_is_one_line(take, tmp_path, capsys, option, value):
    if option == "--end" and value == "1e308":  # an end past the file's is the file's end
        status, _, err = run(capsys, "repair", "declick", take, "-o", tmp_path / "o.wav",
                             f"{option}={value}")
        assert status == 0, err
        return
    refused(capsys, "declick: the region", "repair", "declick", take, "-o",
            tmp_path / "o.wav", f"{option}={value}")
    assert not (tmp_path / "o.wav").exists()


@pytest.mark.parametrize("profile", ["nan:1", "0:inf", "1e308:1e308", "-1e308:1"])
def test_a_profile_that_is_no_time_is_one_line(take, tmp_path, capsys, profile):
    refused(capsys, "denoise: profile: the region", "repair", "denoise", take, "-o",
            tmp_path / "o.wav", f"--profile={profile}")


def test_a_profile_shorter_than_a_frame_is_one_line(take, tmp_path, capsys):
    refused(capsys, "the noise profile is 0.010 s (220 samples): give at least 0.046 s",
            "repair", "denoise", take, "-o", tmp_path / "o.wav", "--profile", "0:0.01")


@pytest.mark.parametrize("value", [1e308, -1e308, 1e300])
def test_a_script_repair_step_far_outside_the_file_is_one_line(take, tmp_path, capsys, value):
    script = tmp_path / "fix.json"
    script.write_text(json.dumps([{"repair": "declick", "start": value, "end": 2}]))
    refused(capsys, "strokes[0]", "apply", take, "-o", tmp_path / "o.wav", "--strokes", script)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "take.wav").write_bytes(take.read_bytes())
    status, _, err = run(capsys, "batch", folder, "-o", tmp_path / "out", "--jobs", "1",
                         "--strokes", script)
    assert status == 1, err  # that file failed, with its reason in the report
    report = json.loads((tmp_path / "out" / "batch-report.json").read_text())
    assert "the region" in json.dumps(report)


@pytest.mark.parametrize("band", [("5000", "100"), ("880", "880"), ("20000", None),
                                  (None, "0"), ("-5", None), ("nan", None)])
def test_a_band_with_nothing_in_it_is_one_line(take, tmp_path, capsys, band):
    low, high = band
    options = [*([f"--low={low}"] if low else []), *([f"--high={high}"] if high else [])]
    refused(capsys, "declick: the band", "repair", "declick", take, "-o",
            tmp_path / "o.wav", *options)
    assert not (tmp_path / "o.wav").exists()


def test_repair_writes_the_source_depth_and_what_it_leaves_as_it_was(take, tmp_path, capsys):
    out = tmp_path / "o.wav"
    status, stdout, err = run(capsys, "repair", "declick", take, "-o", out, "--start", "2.2")
    assert status == 0, err
    assert sf.info(out).subtype == "PCM_16" and "PCM_16" in stdout
    x, y = sf.read(take, dtype="int16")[0], sf.read(out, dtype="int16")[0]
    before = int(2.2 * SR) - 2048  # a frame before the region
    assert np.array_equal(x[:before], y[:before])  # not dithered: the same samples
    status, stdout, err = run(capsys, "repair", "declick", take, "-o", tmp_path / "f.wav",
                              "--bits", "float")
    assert status == 0 and sf.info(tmp_path / "f.wav").subtype == "FLOAT"


def test_a_batch_repair_step_over_a_region_of_the_files_runs(take, tmp_path, capsys):
    """The batch's check runs the script on a probe shorter than the files: a step's
    region is checked on each file, not on the probe (it was refused as outside 0-1 s)."""
    script = tmp_path / "fix.json"
    script.write_text(json.dumps([{"repair": "declick", "start": 2, "end": 2.5}]))
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "take.wav").write_bytes(take.read_bytes())
    status, _, err = run(capsys, "batch", folder, "-o", tmp_path / "out", "--jobs", "1",
                         "--strokes", script)
    assert status == 0, err


@pytest.mark.parametrize("method", ["nmf:\u0663", "nmf:\uff13", "hpss:\u0662", "nmf:1_0"])
def test_unmix_refuses_digits_that_are_not_ascii(take, tmp_path, capsys, method):
    refused(capsys, "unknown unmix method", "unmix", take, "-o", tmp_path / "stems",
            f"--method={method}")
    assert not (tmp_path / "stems").exists()


def test_a_tone_remover_over_digital_silence_raises_no_numpy_warning(tmp_path, capsys,
                                                                       monkeypatch):
    """A 60 Hz tone between stretches of digital silence: the tone follower took the log
    of empty bins ("divide by zero encountered in log10", then "invalid value": shown to
    the user as specpaint warnings)."""
    monkeypatch.setenv("SPECPAINT_DEVICE", "cpu")
    x = np.zeros(3 * SR)
    x[SR:2 * SR] = 0.3 * np.sin(2 * np.pi * 60 * np.arange(SR) / SR)
    sf.write(tmp_path / "sil.wav", x, SR, subtype="PCM_16")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        status, _, err = run(capsys, "apply", tmp_path / "sil.wav", "-o", tmp_path / "o.wav",
                             "--preset", "tone-remover", "--line", "0.5:60,2.5:60")
    assert status == 0 and "warning" not in err, err


def test_denoise_takes_the_noise_alone_down_by_the_amount_asked(tmp_path, capsys, rng,
                                                                  monkeypatch):
    """A second of hiss alone, then a chord under it: the hiss-only stretch comes down
    by the amount given (within 3 dB); it came down about 17 dB for 24 and 40 alike."""
    monkeypatch.setenv("SPECPAINT_DEVICE", "cpu")
    t = np.arange(4 * SR) / SR
    x = 0.02 * rng.standard_normal(len(t)) + (t >= 2) * (
        0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 660 * t))
    sf.write(tmp_path / "noisy.wav", x, SR, subtype="FLOAT")
    alone = slice(SR // 4, int(1.75 * SR))
    for amount in (12, 24, 40):
        out = tmp_path / f"{amount}.wav"
        status, _, err = run(capsys, "repair", "denoise", tmp_path / "noisy.wav", "-o", out,
                             "--amount", amount, "--profile", "0:1.8")
        assert status == 0, err
        y = sf.read(out)[0]
        down = 10 * np.log10(np.mean(x[alone] ** 2) / np.mean(y[alone] ** 2))
        assert amount - 3 < down < amount + 0.5, (amount, down)
