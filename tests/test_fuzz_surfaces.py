"""Property-based fuzzing (hypothesis) of the surfaces test_fuzz.py leaves out: stroke
scripts and user presets through ``batch`` (the same check as ``apply``, then the
probe), ``features`` settings and files, and ``compare`` on any pair. Whatever comes
in, the only failure is our own one-line error; ``apply`` and ``batch`` refuse a
script in the same words. Painting and scoring cost more than parsing, so these run
``SLOW`` examples each ($SPECPAINT_FUZZ / 6, at least 5; scripts/fuzz.py runs many)."""

import json
import math
import warnings

import numpy as np
import pytest
import soundfile as sf
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.batch import jobs as batch
from app.batch import stacks as batch_stacks
from app.cli.commands import main
from app.session.editor import Editor, checked_script, with_presets_resolved
from brushes.presets import PresetWarning
from engine.errors import SpectroPaintError
from tests.conftest import document
from tests.fuzzing import EXAMPLES, json_values, numbers, scalars, stroke

SLOW = settings(max_examples=max(5, EXAMPLES // 6), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _outcome(run) -> str:
    """"ok", or our error's message; anything else escapes and fails the test."""
    try:
        run()
    except SpectroPaintError as e:
        assert "\n" not in str(e), str(e)
        return str(e)
    return "ok"


@pytest.fixture(scope="module")
def editor():
    return Editor(document(np.random.default_rng(6).uniform(-0.5, 0.5, (2, 4000)), n_fft=256))


@pytest.fixture
def short_probe(monkeypatch):
    """The batch probe at 0.25 s: painting it is not what is fuzzed here."""
    monkeypatch.setattr(batch_stacks, "PROBE_SECONDS", 0.25)


near = st.floats(0, 0.3)  # seconds inside the probe, so strokes paint
point = st.one_of(st.lists(numbers, max_size=4), st.tuples(near, st.floats(0, 30000)).map(list))
script_stroke = st.one_of(stroke, st.fixed_dictionaries(
    {"preset": st.sampled_from(["hard-eraser", "soft-eraser", "spot-repair", "tone-pen",
                                "heal", "blur-haze"]),
     "points": st.lists(point, min_size=1, max_size=3)},
    optional={"set": st.dictionaries(st.sampled_from(["radius_ms", "radius_hz", "spacing",
                                                      "opacity", "gain_db", "channel"]),
                                     scalars, max_size=2),
              "channel": st.one_of(scalars, st.integers(-2, 3)),
              "inputs": st.dictionaries(st.sampled_from(["opacity", "radius_hz", "channel"]),
                                        json_values, max_size=1)}))


valid_stroke = st.fixed_dictionaries(  # mostly paintable: the probe and painting are fuzzed too
    {"preset": st.sampled_from(["hard-eraser", "soft-eraser", "spot-repair", "tone-pen", "heal",
                                "blur-haze", "harmonic-eraser", "noise-spray", "smear"]),
     "points": st.lists(st.tuples(near, st.floats(0, 25000), st.floats(0, 1)).map(list),
                        min_size=1, max_size=3)},
    optional={"set": st.fixed_dictionaries({}, optional={
        "radius_ms": st.floats(1, 300), "radius_hz": st.floats(1, 4000),
        "opacity": st.floats(0, 1), "spacing": st.floats(0.05, 4)}),
              "channel": st.sampled_from([0, 1, "all", -1])})


@pytest.mark.slow
@SLOW
@given(script=st.one_of(st.lists(script_stroke, min_size=1, max_size=3),
                        st.lists(valid_stroke, min_size=1, max_size=3), json_values))
def test_stroke_scripts_through_batch_as_through_apply(editor, short_probe, script):
    """batch's front (presets resolved, the check, the probe) raises only our errors,
    and where the check refuses a script, apply and batch say the same."""
    script = script if isinstance(script, list) else [script]
    checked = _outcome(lambda: checked_script(script))

    def through_batch():
        batch_stacks.check_settings(batch.Settings(with_presets_resolved(script),
                                                   {"device": "cpu"}))

    said = _outcome(through_batch)
    applied = _outcome(lambda: editor.run_script(script))
    event(f"check {'passed' if checked == 'ok' else 'refused'}; batch "
          f"{'painted' if said == 'ok' else 'refused'}")
    if checked != "ok":
        assert said == applied == checked


preset_data = st.one_of(json_values, st.fixed_dictionaries(
    {"version": st.one_of(st.just(1), scalars), "name": st.just("fuzzed"),
     "brush": st.sampled_from(["gain", "blur", "heal", "harmonic", "tone", "x"]),
     "params": st.dictionaries(st.sampled_from(["radius_ms", "radius_hz", "gain_db", "harmonics",
                                                "inner", "mode", "opacity", "seed"]), scalars,
                               max_size=3),
     "inputs": st.dictionaries(st.sampled_from(["opacity", "harmonics", "radius_ms", "channel",
                                                "inner"]),
                               st.dictionaries(st.sampled_from(["pressure", "progress",
                                                                "random", "tilt"]),
                                               st.lists(st.lists(numbers, min_size=2,
                                                                 max_size=2), max_size=3),
                                               max_size=2), max_size=2)}))


@pytest.mark.slow
@SLOW
@given(data=preset_data)
def test_user_presets_of_any_shape_through_batch(tmp_path_factory, monkeypatch, short_probe,
                                                 data):
    """A user preset file of any content, named by a batch's stroke: refused (or
    skipped with a warning) in one line, or painted."""
    config = tmp_path_factory.mktemp("config")
    folder = config / "spectropaint" / "presets"
    folder.mkdir(parents=True)
    (folder / "fuzzed.json").write_text(json.dumps(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    script = [{"preset": "fuzzed", "points": [[0.05, 500], [0.2, 2000]]}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PresetWarning)
        said = _outcome(lambda: batch_stacks.check_settings(batch.Settings(
            with_presets_resolved(script), {"device": "cpu"})))
    event("painted" if said == "ok" else "refused")


@pytest.mark.slow
@SLOW
@given(sr=st.sampled_from([4096, 2000, 8000, 8000, 1, 0]),
       n_fft=st.sampled_from([64, 16, 64, 512, 1, 33]),
       hop=st.sampled_from([16, 1, 16, 700, 0]), n_mels=st.sampled_from([32, 1, 8, 300]),
       segment=st.sampled_from([(1024, 512), (1024, 512), (64, 64), (100, 37), (1, 1),
                                (100, 0)]),
       sub=st.sampled_from([None, None, (512, 256), (64, 64), (2048, 16), (16, 16)]),
       lengths=st.lists(st.integers(1, 6000), min_size=1, max_size=3),
       dtype=st.sampled_from(["float16", "float32"]))
def test_features_of_any_settings_and_lengths(tmp_path_factory, sr, n_fft, hop, n_mels, segment,
                                              sub, lengths, dtype):
    """Settings are refused in one line or the set is written whole, opens, and maps
    every item to a file."""
    from app.batch.feature_jobs import extract, open_set
    from engine.measure.logmel import FeatureSettings

    folder = tmp_path_factory.mktemp("features")
    rng = np.random.default_rng(len(lengths))
    paths = []
    for i, n in enumerate(lengths):
        paths.append(folder / f"{i}.wav")
        sf.write(paths[-1], rng.uniform(-0.5, 0.5, n).astype(np.float32), 8000, subtype="FLOAT")
    s = FeatureSettings(sr, n_fft, hop, n_mels, *segment, *(sub or (None, None)), dtype)
    out = folder / "out"
    said = _outcome(lambda: extract(paths, out, s, torch.device("cpu")))
    event("written" if said == "ok" else "refused")
    if said == "ok":
        opened = open_set(out, verify=True)
        assert opened.features.shape[0] == len(opened.mapping)
        assert set(opened.mapping[:, 0].tolist()) <= set(range(len(paths)))


content = st.sampled_from(["zeros", "dc", "noise", "sine", "quiet", "nan"])


def _take(kind: str, channels: int, n: int, rate: int) -> np.ndarray:
    t = np.arange(n) / rate
    rng = np.random.default_rng(n)
    x = {"zeros": np.zeros(n), "dc": np.full(n, 0.25), "noise": rng.normal(0, 0.1, n),
         "sine": 0.3 * np.sin(2 * np.pi * 440 * t), "quiet": rng.normal(0, 1e-7, n),
         "nan": np.where(rng.random(n) < 0.5, np.nan, 0.1)}[kind]
    return np.tile(x, (channels, 1))


@pytest.mark.slow
@SLOW
@given(kinds=st.tuples(content, content), channels=st.tuples(st.integers(1, 2),
                                                             st.integers(1, 2)),
       lengths=st.tuples(st.integers(1, 30000), st.integers(1, 30000)),
       rates=st.tuples(st.sampled_from([8000, 16000, 44100]),
                       st.sampled_from([8000, 16000, 44100])),
       channel=st.one_of(st.none(), st.integers(-2, 2)), as_json=st.booleans())
def test_compare_on_any_pair(capsys, tmp_path_factory, kinds, channels, lengths, rates, channel,
                             as_json):
    """Exit 0 with every metric finite, infinite or n/a (JSON: a number or null), or
    exit 2 in one line; never a traceback, a numpy warning or a crash."""
    folder = tmp_path_factory.mktemp("compare")
    files = []
    for name, kind, ch, n, rate in zip("ab", kinds, channels, lengths, rates, strict=True):
        files.append(folder / f"{name}.wav")
        sf.write(files[-1], _take(kind, ch, n, rate).T, rate, subtype="FLOAT")
    args = ["compare", *map(str, files)] + (["--channel", str(channel)] if channel is not None
                                            else []) + (["--json"] if as_json else [])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            status = main(args)
        except SystemExit as e:
            status = e.code
    out, err = capsys.readouterr()
    event(f"exit {status}")
    assert "Traceback" not in err and "Warning" not in err, err
    if status == 2:
        assert len(err.strip().splitlines()) == 1, err
        return
    assert status == 0, err
    if as_json:
        for value in json.loads(out)["metrics"].values():
            assert value is None or math.isfinite(value)
