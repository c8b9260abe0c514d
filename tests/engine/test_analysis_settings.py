"""The analysis settings' registry (engine.transforms.settings): the transforms check
with it, and the command line's options and the docs' table are generated from it."""

from pathlib import Path

import numpy as np
import pytest

from app.cli.commands import build_parser
from engine.errors import ParameterError
from engine.transforms import make
from engine.transforms.settings import (
    BY_NAME,
    DEFAULT_OVERLAP,
    KINDS,
    SETTINGS,
    checked,
    defaults,
    from_args,
    markdown,
    of,
    with_table,
)
from engine.transforms.stft import MAIN_LOBE_BINS, WINDOWS
from tests.cli_run import specpaint_here

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = [s for s in SETTINGS if not s.choices]


def test_the_docs_table_is_generated_from_the_declarations():
    page = (ROOT / "docs" / "engine.md").read_text()
    assert markdown() in page and with_table(page) == page, \
        "run: python -m engine.transforms docs/engine.md"


def test_every_window_declared_is_one_the_stft_builds():
    assert set(WINDOWS) == set(MAIN_LOBE_BINS) == set(BY_NAME["window"].choices)


@pytest.mark.parametrize("kind", KINDS)
def test_a_transform_given_nothing_has_the_declared_defaults(kind):
    built = make(44100, kind).settings()
    expected = {"transform": kind, **{s.name: s.default for s in of(kind)}}
    if kind == "stft":
        expected["hop"] = expected["n_fft"] // DEFAULT_OVERLAP  # the derived default
    assert built == expected
    assert make(44100, **checked(built)).settings() == built  # as a project reads it back


def test_missing_settings_take_their_defaults_and_other_kinds_are_left_out():
    assert checked({}) == {"transform": "stft", "n_fft": 2048, "hop": None, "window": "hann"}
    assert checked({"transform": "cq", "n_fft": 999, "fmin": 55}) == \
        {"transform": "cq", "bins_per_octave": 48, "fmin": 55.0}


def _one_line_refusal(setting, value) -> str:
    with pytest.raises(ParameterError) as e:
        make(44100, **{"transform": setting.transform or value, setting.name: value})
    message = str(e.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("setting", NUMBERS, ids=lambda s: s.name)
def test_a_value_out_of_range_names_the_setting_and_its_range(setting, rng):
    span = setting.high - setting.low
    for value in (setting.low - rng.uniform(0.01, 1) * span,
                  setting.high + rng.uniform(0.01, 10) * span):
        value = setting.kind(round(value) if setting.kind is int else value)
        message = _one_line_refusal(setting, value)
        assert message.startswith(f"{setting.label} {value} is not supported")
        assert setting.allowed() in message


def test_a_value_of_the_wrong_kind_or_not_a_choice_is_refused(rng):
    fraction = float(rng.integers(300, 1000)) + 0.5
    assert _one_line_refusal(BY_NAME["n_fft"], fraction) == \
        f"analysis setting n_fft: {fraction!r} is not a whole number"
    assert _one_line_refusal(BY_NAME["n_fft"], 2049) == \
        "FFT size 2049 is not supported; use 256 to 16384 samples, even (default 2048)"
    assert _one_line_refusal(BY_NAME["window"], "kaiser") == \
        "unknown window 'kaiser'; use one of hann, hamming, blackman, blackman-harris"
    assert _one_line_refusal(BY_NAME["transform"], "wavelet") == \
        "unknown transform 'wavelet'; use one of stft, cq"
    assert "expected a finite number" in _one_line_refusal(BY_NAME["fmin"], float("nan"))


@pytest.mark.parametrize("seed", range(3))
def test_values_in_range_are_kept(seed):
    rng = np.random.default_rng(seed)
    n_fft = 2 * int(rng.integers(128, 2048))
    stft = {"transform": "stft", "n_fft": n_fft, "hop": int(rng.integers(1, n_fft // 2 + 1)),
            "window": str(rng.choice(BY_NAME["window"].choices))}
    assert make(44100, **stft).settings() == stft
    cq = {"transform": "cq", "bins_per_octave": int(rng.integers(4, 97)),
          "fmin": float(round(rng.uniform(5, 1000), 1))}
    assert make(44100, **cq).settings() == cq


@pytest.mark.parametrize("command", [["render"], ["roundtrip"], ["apply"], ["batch"],
                                     ["repair", "declick"]], ids=lambda c: c[0])
def test_every_command_that_analyses_takes_the_declared_options(command):
    args = build_parser().parse_args([*command, "in.wav", "-o", "out"])
    assert from_args(args) == defaults()
    flags = [f"--{s.name.replace('_', '-')}" for s in SETTINGS]
    changed = build_parser().parse_args([*command, "in.wav", "-o", "out", *[
        x for s, flag in zip(SETTINGS, flags, strict=True)
        for x in (flag, str(s.choices[-1] if s.choices else s.high))]])
    assert from_args(changed) == {s.name: s.choices[-1] if s.choices else s.kind(s.high)
                                  for s in SETTINGS}


@pytest.mark.slow
def test_the_help_shows_each_setting_with_its_range_and_default():
    text = " ".join(specpaint_here("roundtrip", "--help").stdout.split())
    for s in SETTINGS:
        assert s.flag in text and " ".join(s.help.split()) in text
        if s.default is not None:
            assert f"default {s.default})" in text
        if s.name != "transform":
            assert s.allowed() in text


def test_a_bad_value_on_the_command_line_is_one_line_naming_the_file(tmp_path, write_audio):
    wav = write_audio("a.wav", np.zeros((1, 8000), np.float32), 8000)
    out = tmp_path / "x.wav"
    r = specpaint_here("roundtrip", wav, "-o", out, "--transform", "cq", "--bins-per-octave", 200)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.strip() == (f"specpaint: error: {wav}: bins per octave 200 is not "
                                "supported; use 4 to 96 bins (default 48)")
