"""Property-based fuzzing (hypothesis) of what users and files feed us: projects,
presets, stroke scripts and CLI arguments. Whatever comes in, the only failure is
our own one-line error (exit 2 on the CLI); nothing else escapes. Examples per
surface: $SPECPAINT_FUZZ (default 60; docs/ reports a run of 2,000)."""

import json
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.commands import main
from app.project.write import ProjectError, open_project, save_project, snapshot
from app.session.editor import Editor
from brushes.presets import parse_preset
from engine.errors import SpectroPaintError
from tests.conftest import document
from tests.fuzzing import EXAMPLES, json_values, scalars, stroke
from tests.projects import Tracker

FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    doc = document(np.random.default_rng(3).uniform(-0.5, 0.5, (1, 4000)), n_fft=256)
    path = tmp_path_factory.mktemp("fuzz") / "p.spp"
    save_project(path, snapshot(doc, Tracker(doc)), {"t0": 0.0})
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("manifest.json")), z.read("arrays.npz"), path.read_bytes()


def _write(path, manifest_text, npz):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", manifest_text)
        z.writestr("arrays.npz", npz)
    return path


@pytest.mark.slow
@FUZZ
@given(key=st.sampled_from(["version", "sample_rate", "analysis", "audio_sha256", "source",
                            "edited_rects", "view", "format", "source_kind"]),
       value=json_values)
def test_projects_with_any_manifest_field(project, tmp_path, key, value):
    manifest, npz, _ = project
    path = _write(tmp_path / "f.spp", json.dumps({**manifest, key: value}), npz)
    try:
        open_project(path, device="cpu")
    except ProjectError:
        pass


@pytest.mark.slow
@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 255)), min_size=1,
                      max_size=8))
def test_projects_with_any_bytes_changed(project, tmp_path, flips):
    data = bytearray(project[2])
    for at, value in flips:
        data[at % len(data)] = value
    path = tmp_path / "b.spp"
    path.write_bytes(bytes(data))
    try:
        open_project(path, device="cpu")
    except ProjectError:
        pass


@pytest.mark.slow
@FUZZ
@given(data=st.one_of(json_values, st.fixed_dictionaries(
    {"version": st.one_of(st.just(1), scalars), "name": st.one_of(st.text(max_size=20), scalars),
     "brush": st.sampled_from(["gain", "blur", "heal", "harmonic", "tone", "x"]),
     "params": st.dictionaries(st.sampled_from(["radius_ms", "radius_hz", "radius_cents",
                                                "gain_db", "hardness", "opacity", "spacing",
                                                "mode", "harmonics", "inner"]), scalars)})))
def test_presets_of_any_shape(data):
    try:
        parse_preset(data, "fuzz.json")
    except SpectroPaintError:
        pass


@pytest.fixture(scope="module")
def editor():
    return Editor(document(np.random.default_rng(4).uniform(-0.5, 0.5, (2, 4000)), n_fft=256))


@pytest.mark.slow
@FUZZ
@given(script=st.one_of(st.lists(stroke, max_size=3), json_values))
def test_stroke_scripts_of_any_shape(editor, script):
    try:
        editor.run_script(script if isinstance(script, list) else [script])
    except SpectroPaintError:
        pass


@pytest.fixture(scope="module")
def wav(tmp_path_factory):
    import soundfile as sf

    path = tmp_path_factory.mktemp("cli") / "in.wav"
    sf.write(path, np.random.default_rng(5).uniform(-0.3, 0.3, 4000).astype(np.float32), 8000)
    return path


option_values = st.one_of(st.sampled_from(["nan", "inf", "-inf", "0", "-1", "1e9", "abc", "",
                                           "99999999999999999999", "0.5", "2048", "cq"]),
                          st.integers(-10**6, 10**6).map(str))
cli_options = st.lists(st.tuples(st.sampled_from(
    ["--width", "--height", "--top-db", "--db-range", "--n-fft", "--hop", "--window",
     "--transform", "--bins-per-octave", "--fmin", "--channel", "--colormap", "--bits",
     "--line", "--set"]), option_values), max_size=4)


@pytest.mark.slow
@FUZZ
@given(command=st.sampled_from(["render", "roundtrip", "apply", "info"]), options=cli_options)
def test_cli_arguments_of_any_value(capsys, wav, tmp_path, command, options):
    args = [command, str(wav)] + (["-o", str(tmp_path / ("o.png" if command == "render"
                                                           else "o.wav"))]
                                  if command != "info" else [])
    if command == "apply":
        args += ["--preset", "hard-eraser"]
    for name, value in options:
        args += [name, value]
    try:
        status = main(args)
    except SystemExit as e:  # argparse: a usage error
        status = e.code
    err = capsys.readouterr().err
    assert status in (0, 2), err
    assert "Traceback" not in err
