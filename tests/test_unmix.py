"""Unmix into layers (engine.unmix, brushes.unmix): on real takes every method's
layers add up to their source within float32 rounding and leave the mix's sound
as it was; on mixtures of real sources with known truth the parts go where they
belong; paint to separate steers an NMF unmix; Editor.unmix, export_stems and
``specpaint unmix`` write stems that add up to the input."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from brushes.script import Editor
from engine.audio import Audio
from engine.document import Document
from engine.errors import ParameterError
from engine.metrics import si_sdr_db
from engine.resynth import Resynthesizer
from tests import mixtures, takes
from tests.test_cli import specpaint

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=str(takes.missing()))
METHODS = ("hpss", "hpss:1", "tonal-noise", "nmf:3")


def editor(x: np.ndarray, sr: int, **analysis) -> Editor:
    return Editor(Document(Audio(np.asarray(x, np.float32), sr), device="cpu", **analysis))


@pytest.fixture(scope="module")
def real_takes():
    found = takes.clean_takes(seed=2, speech=1, music=1, sounds=1, music_seconds=3.0)
    return [t for t in found if t.samples.shape[1] > 0]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_every_method_sums_to_its_source_and_keeps_the_mix(real_takes, method, transform):
    for take in real_takes:
        ed = editor(take.samples[:, :3 * take.sample_rate], take.sample_rate,
                    transform=transform)
        source = ed.doc.read_complex(ed.doc.full_rect())
        audio = ed.audio().copy()
        made = ed.unmix(method)
        assert len(made) == len(ed.layers) == (2 if method in ("hpss:1", "tonal-noise") else 3)
        total = sum(ed.doc.read_complex(ed.doc.full_rect(), layer=x.id) for x in ed.layers)
        peak = float(source.abs().max())
        assert float((total - source).abs().max()) <= 4 * 2 ** -23 * peak, take.name
        after = Resynthesizer(ed.doc).full().numpy()
        assert np.abs(after - audio).max() <= 1e-6 * np.abs(audio).max(), take.name
        ed.undo()
        assert ed.doc.layers.plain and torch.equal(ed.doc.read_complex(ed.doc.full_rect()),
                                                   source)


@pytest.fixture(scope="module")
def hits_over_tones():
    return mixtures.mixtures(seed=3, per_kind=2, kinds=("tones+hits",))


def test_hpss_puts_tones_and_hits_where_they_belong_as_well_as_librosa(hits_over_tones):
    import librosa

    for mix in hits_over_tones:
        ed = editor(mix.mix, mix.sample_rate)
        ed.unmix("hpss:1")
        harmonic, percussive = (ed.layers.audio(x.id)[0] for x in ed.layers)
        s = librosa.stft(mix.mix[0], n_fft=2048, hop_length=512)
        h, p = (librosa.istft(x, hop_length=512, length=mix.mix.shape[1])
                for x in librosa.decompose.hpss(s))
        ours = si_sdr_db(mix.sources[0][0], harmonic) + si_sdr_db(mix.sources[1][0], percussive)
        theirs = si_sdr_db(mix.sources[0][0], h) + si_sdr_db(mix.sources[1][0], p)
        assert ours / 2 >= 5.0 and ours >= theirs - 1.0, (mix.name, ours, theirs)


def test_paint_to_separate_steers_an_nmf_unmix(hits_over_tones):
    mix = mixtures.mixtures(seed=1, per_kind=1, kinds=("speech+music",))[0]
    ed = editor(mix.mix, mix.sample_rate)
    ed.unmix("nmf:2")

    def score() -> float:
        a, b = (ed.layers.audio(x.id)[0] for x in ed.layers)
        return max(si_sdr_db(mix.sources[0][0], a) + si_sdr_db(mix.sources[1][0], b),
                   si_sdr_db(mix.sources[0][0], b) + si_sdr_db(mix.sources[1][0], a)) / 2

    blind = score()
    steps = len(ed.history.steps)
    ed.separate(mixtures.marks_for(mix))
    assert len(ed.history.steps) == steps + 1  # the marks and the separation: one step
    assert score() >= blind + 1.0
    base = ed.doc.layers.active.content.base
    assert len(base.recipe["marks"]) <= 10 and base.recipe["method"] == "nmf:2"
    ed.undo()
    assert abs(score() - blind) < 1e-6


def test_paint_to_separate_needs_an_nmf_unmix():
    x = np.random.default_rng(0).uniform(-0.3, 0.3, (1, 22050))
    ed = editor(x, 22050)
    mark = [{"part": 0, "points": [[0.2, 500]], "radius_ms": 50, "radius_hz": 100}]
    with pytest.raises(ParameterError, match="not a part of an unmix"):
        ed.separate(mark)
    ed.unmix("hpss")
    with pytest.raises(ParameterError, match="steers an nmf unmix"):
        ed.separate(mark)
    ed.undo()
    ed.unmix("nmf:2")
    with pytest.raises(ParameterError, match=r"marks\[0\].part: 5 is not a part"):
        ed.separate([{**mark[0], "part": 5}])
    with pytest.raises(ParameterError, match="unknown unmix method"):
        ed.unmix("nmf:99")


def test_export_stems_add_up_to_the_mix(tmp_path, real_takes):
    take = real_takes[0]
    ed = editor(take.samples, take.sample_rate)
    ed.unmix("tonal-noise")
    ed.layers.mix(ed.layers[1].id, gain=0.5)
    reports = ed.export_stems(tmp_path, stem="take")
    assert [r.path.name for r in reports] == ["take-1-Recording-tonal.wav",
                                              "take-2-Recording-noise.wav"]
    tonal, noise = (sf.read(r.path, dtype="float32", always_2d=True)[0].T for r in reports)
    assert np.abs(tonal + 0.5 * noise - ed.audio()).max() <= 1e-5


def test_specpaint_unmix_writes_stems_that_add_up_to_the_input(tmp_path, real_takes):
    take = real_takes[-1]
    source = tmp_path / "song.wav"
    sf.write(source, take.samples.T.astype(np.float32), take.sample_rate, subtype="FLOAT")
    marks = tmp_path / "marks.json"
    marks.write_text(json.dumps([{"part": 1, "points": [[0.5, 3000], [1.0, 3000]]}]))
    r = specpaint("unmix", source, "-o", tmp_path / "stems", "--method", "nmf:2",
                  "--hints", marks, timeout=300)
    assert r.returncode == 0, r.stderr
    stems = sorted((tmp_path / "stems").glob("song-*.wav"))
    assert [p.name for p in stems] == ["song-1-Recording-component-1.wav",
                                       "song-2-Recording-component-2.wav"]
    total = sum(sf.read(p, dtype="float64", always_2d=True)[0] for p in stems)
    assert np.abs(total.T - take.samples.astype(np.float32)).max() <= 1e-5
    assert "component 1:" in r.stdout


@pytest.mark.parametrize("args,match", [
    (["--method", "pca:2"], "unknown unmix method 'pca:2'"),
    (["--method", "nmf:2", "--hints", "MISSING"], "cannot read the stroke script"),
    (["--method", "hpss", "--format", "mp9"], "--format mp9"),
    (["--method", "hpss", "--hints", "MARKS"], "steers an nmf unmix|only nmf"),
])
def test_specpaint_unmix_refuses_bad_input_in_one_line(tmp_path, args, match):
    source = tmp_path / "in.wav"
    sf.write(source, np.zeros((4410, 1), np.float32), 44100)
    (tmp_path / "MARKS").write_text(json.dumps([{"part": 0, "points": [[0.01, 100]]}]))
    args = [str(tmp_path / a) if a in ("MISSING", "MARKS") else a for a in args]
    r = specpaint("unmix", source, "-o", tmp_path / "out", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    import re
    assert re.search(match, lines[0]), lines[0]
