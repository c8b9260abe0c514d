"""Time edits (issue 48.1): delete, cut, copy, paste, trim, insert silence and
duplicate through the Editor, on the STFT and the constant-Q: the length follows,
samples outside a splice's reach are the source's bit for bit, the junctions are
click-free, each edit is one undo step, bit-exact both ways."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from app.session.editor import Editor
from engine.errors import ParameterError
from engine.io.audio import Audio
from engine.model.document import Document
from engine.model.splice import FADE_S
from tests.cli_run import specpaint_here

SR = 16000
REACH = round(FADE_S * SR)  # samples either side of a junction the cross-fade changes


def take(seconds: float = 3.0, channels: int = 2, seed: int = 0) -> np.ndarray:
    """Tones and noise, different in every channel: no splice can hide by periodicity."""
    rng = np.random.default_rng(seed)
    t = np.arange(round(seconds * SR)) / SR
    x = [0.25 * np.sin(2 * np.pi * rng.uniform(150, 3000) * t + rng.uniform(0, 6))
         + 0.05 * rng.standard_normal(t.size) for _ in range(channels)]
    return np.array(x, np.float32)


def editor(x: np.ndarray, transform: str = "stft") -> Editor:
    return Editor(Document(Audio(x, SR), transform=transform, device="cpu"))


def same_outside(a: np.ndarray, b: np.ndarray, junctions: list[int]) -> bool:
    """``a`` equals ``b`` bit for bit except within REACH of each junction."""
    keep = np.ones(a.shape[1], bool)
    for j in junctions:
        keep[max(0, j - REACH):j + REACH] = False
    return a.shape == b.shape and np.array_equal(a[:, keep], b[:, keep])


@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_delete_takes_the_range_out_and_keeps_every_other_sample(transform):
    x = take()
    ed = editor(x, transform)
    ed.delete(start=1.0, end=1.7)
    out = ed.audio()
    assert out.shape == (2, x.shape[1] - round(0.7 * SR))
    assert same_outside(out, np.concatenate([x[:, :SR], x[:, round(1.7 * SR):]], 1), [SR])
    assert np.isfinite(out).all() and np.abs(out).max() <= np.abs(x).max() * 1.01
    # the coefficients are the new content's analysis, as a fresh document's
    fresh = Document(ed.doc.audio, transform=transform, device="cpu",
                     content=ed.doc.content_samples)
    assert torch.equal(fresh.mix, ed.doc.mix)


@pytest.mark.slow
@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_each_time_edit_is_one_undo_step_bit_exact_both_ways(transform):
    x = take()
    ed = editor(x, transform)
    ed.paint("hard-eraser", [(0.5, 1000), (0.8, 1000)])
    states = [(ed.doc.mix.clone(), ed.audio().copy())]
    for verb, args in (("delete", dict(start=1.0, end=1.5)), ("duplicate", dict(start=0.2,
                                                                                  end=0.6)),
                       ("insert_silence", dict(at=0.3, seconds=0.25)),
                       ("trim", dict(start=0.1, end=2.0))):
        getattr(ed, verb)(**args)
        states.append((ed.doc.mix.clone(), ed.audio().copy()))
    ed.paint("hard-eraser", [(1.0, 500), (1.2, 500)])
    states.append((ed.doc.mix.clone(), ed.audio().copy()))
    for mix, audio in reversed(states[:-1]):
        ed.undo()
        assert torch.equal(ed.doc.mix, mix) and np.array_equal(ed.audio(), audio)
    ed.undo()
    assert np.array_equal(ed.audio(), x)  # the take itself, bit for bit
    ed.redo()
    for mix, audio in states[1:]:
        ed.redo()
        assert torch.equal(ed.doc.mix, mix) and np.array_equal(ed.audio(), audio)


def test_cut_then_paste_at_the_same_place_gives_the_take_back_outside_the_junctions():
    x = take()
    ed = editor(x)
    clip = ed.cut(start=1.25, end=2.0)
    assert clip.frames == round(0.75 * SR) and clip.nbytes > 0
    ed.paste(at=1.25)
    out = ed.audio()
    assert out.shape == x.shape
    assert same_outside(out, x, [round(1.25 * SR), round(2.0 * SR)])


def test_paste_inserts_mixes_in_or_replaces():
    x = take(seed=1)
    ed = editor(x)
    ed.copy(start=0.5, end=1.0)
    n = round(0.5 * SR)
    at = round(2.0 * SR)
    ed.paste(at=2.0, mode="add")
    added = ed.audio().copy()
    assert added.shape == x.shape
    middle = slice(at + REACH, at + n - REACH)
    np.testing.assert_allclose(added[:, middle], x[:, middle] + x[:, SR // 2 + REACH:SR - REACH],
                               atol=1e-6)
    ed.undo()
    ed.paste(at=2.0, mode="replace")
    replaced = ed.audio()
    assert replaced.shape == x.shape
    assert np.array_equal(replaced[:, middle], x[:, SR // 2 + REACH:SR - REACH])
    outside = np.r_[0:at - REACH, at + n + REACH:x.shape[1]]
    assert np.array_equal(replaced[:, outside], x[:, outside])
    ed.undo()
    ed.paste(at=2.0)
    assert ed.audio().shape == (2, x.shape[1] + n)


def test_trim_keeps_the_range_alone_bit_for_bit_and_moves_the_markers(tmp_path):
    x = take()
    path = tmp_path / "take.wav"
    sf.write(path, x.T, SR, subtype="PCM_16")
    ed = Editor.open(path, device="cpu")
    ed.doc.audio.metadata.markers[:] = [[1, 8000, "in"], [2, 30000, "out"]]
    source = ed.audio().copy()
    ed.trim(start=1.0, end=2.5)
    assert np.array_equal(ed.audio(), source[:, SR:round(2.5 * SR)])
    assert ed.doc.audio.metadata.markers == [[2, 30000 - SR, "out"]]
    # exported in the source's format: the source's 16-bit samples exactly
    ed.export(tmp_path / "trimmed.wav")
    pcm, _ = sf.read(tmp_path / "trimmed.wav", dtype="int16")
    original, _ = sf.read(path, dtype="int16")
    assert np.array_equal(pcm, original[SR:round(2.5 * SR)])


def test_a_deleted_16_bit_take_exports_its_untouched_samples_bit_for_bit(tmp_path):
    x = take(channels=1)
    path = tmp_path / "take.wav"
    sf.write(path, x.T, SR, subtype="PCM_16")
    ed = Editor.open(path, device="cpu")
    ed.delete(start=1.0, end=1.3)
    ed.export(tmp_path / "cut.wav")
    pcm, _ = sf.read(tmp_path / "cut.wav", dtype="int16", always_2d=True)
    original, _ = sf.read(path, dtype="int16", always_2d=True)
    expected = np.concatenate([original[:SR], original[round(1.3 * SR):]])
    assert pcm.shape == expected.shape
    assert same_outside(pcm.T, expected.T, [SR])


def test_the_junction_is_click_free():
    """A tone cut mid-cycle: a hard cut jumps (a click, broadband); the cross-fade's
    high-frequency energy at the junction stays near the tone's own."""
    t = np.arange(3 * SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 220 * t))[None].astype(np.float32)
    ed = editor(x)
    ed.delete(start=1.0, end=1.0011)  # a quarter cycle: the sine jumps there
    out = ed.audio()[0]
    hard = np.concatenate([x[0, :SR], x[0, SR + round(0.0011 * SR):]])

    def clicks(y):  # the largest second difference near the junction vs away from it
        d2 = np.abs(np.diff(y, 2))
        return d2[SR - 200:SR + 200].max() / d2[SR // 2 - 200:SR // 2 + 200].max()

    assert clicks(hard) > 10
    assert clicks(out) < 1.5


def test_insert_silence_and_duplicate_change_the_length_by_what_they_say():
    x = take()
    ed = editor(x)
    ed.insert_silence(at=1.0, seconds=0.5)
    out = ed.audio()
    assert out.shape[1] == x.shape[1] + SR // 2
    assert not out[:, SR + REACH:SR + SR // 2 - REACH].any()
    assert same_outside(out, np.concatenate([x[:, :SR], np.zeros((2, SR // 2), np.float32),
                                             x[:, SR:]], 1), [SR, SR + SR // 2])
    ed.undo()
    ed.duplicate(start=0.5, end=1.0)
    assert ed.audio().shape[1] == x.shape[1] + SR // 2


def test_bad_ranges_say_what_is_wrong_and_change_nothing():
    x = take()
    ed = editor(x)
    with pytest.raises(ParameterError, match="clipboard is empty"):
        ed.paste(at=1.0)
    with pytest.raises(ParameterError, match="holds no audio"):
        ed.delete(start=1.0, end=1.0)
    with pytest.raises(ParameterError, match="holds no audio"):
        ed.delete(start=5.0, end=6.0)
    with pytest.raises(ParameterError, match="no audio"):
        ed.delete(start=0.0, end=3.0)
    with pytest.raises(ParameterError, match="insert silence"):
        ed.insert_silence(at=1.0, seconds=-1)
    assert np.array_equal(ed.audio(), x) and not ed.history.can_undo
    ed.delete(start=2.5, end=9.0)  # past the end: clipped, and said
    assert ed.audio().shape[1] == round(2.5 * SR)
    assert "clipped to the file" in ed.warnings[-1]


def test_a_stroke_script_trims_and_cuts_through_the_command_line(tmp_path):
    x = take()
    sf.write(tmp_path / "take.wav", x.T, SR, subtype="FLOAT")
    script = [{"edit": "trim", "start": 0.5, "end": 2.5},
              {"edit": "cut", "start": 0.5, "end": 1.0},
              {"edit": "paste", "at": 0.0},
              {"edit": "insert_silence", "at": 0.0, "seconds": 0.25}]
    (tmp_path / "edit.json").write_text(json.dumps(script))
    run = specpaint_here("apply", tmp_path / "take.wav", "-o", tmp_path / "out.wav",
                         "--strokes", tmp_path / "edit.json")
    assert run.returncode == 0, run.stderr
    out, sr = sf.read(tmp_path / "out.wav", always_2d=True)
    assert out.shape[0] == round(2.25 * SR)
    # the cut half second now leads, after the silence
    lead = slice(round(0.25 * SR) + REACH, round(0.75 * SR) - REACH)
    np.testing.assert_array_equal(out[lead].T, x[:, SR + REACH:round(1.5 * SR) - REACH])


@pytest.mark.parametrize("step, message", [
    ({"edit": "shred", "start": 0, "end": 1}, "strokes[0].edit: 'shred' is not an edit"),
    ({"edit": "delete", "start": 0}, "strokes[0]: the delete step needs end"),
    ({"edit": "paste", "at": 1, "mode": "glue"}, "strokes[0].mode: 'glue'"),
    ({"edit": "trim", "start": "a", "end": 1}, "strokes[0].start: expected a number >= 0"),
    ({"edit": "paste", "at": 1, "speed": 2}, "unknown key"),
    ({"edit": "paste", "at": 1}, "strokes[0]: paste: the clipboard is empty"),
    ({"edit": "gain", "start": 0, "end": 1}, "the gain step needs db"),
    ({"edit": "move", "start": 0, "end": 1, "heal": "yes"}, "strokes[0].heal: expected true"),
    ({"edit": "fade_in", "start": 0, "end": 1, "curve": "s"}, "strokes[0].curve: 's'"),
    ({"edit": "copy", "start": 0, "end": 1, "low": -5}, "strokes[0].low: expected a number"),
    ({"edit": "move", "start": 0, "end": 1, "stretch": 9}, "move stretch 9 is outside"),
])
def test_a_bad_edit_step_is_one_line_naming_it(tmp_path, step, message):
    sf.write(tmp_path / "take.wav", take().T, SR)
    (tmp_path / "bad.json").write_text(json.dumps([step]))
    run = specpaint_here("apply", tmp_path / "take.wav", "-o", tmp_path / "out.wav",
                         "--strokes", tmp_path / "bad.json")
    assert run.returncode == 2
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.wav").exists()


def test_batch_trims_every_file_as_apply_trims_one(tmp_path):
    """An edit step's times depend on the file: the batch's probe (a second of noise)
    does not run them, and each file is trimmed as apply trims it."""
    (tmp_path / "takes").mkdir()
    for name, seconds in (("a", 3.0), ("b", 2.0)):
        sf.write(tmp_path / "takes" / f"{name}.wav", take(seconds, seed=len(name)).T, SR,
                 subtype="PCM_16")
    (tmp_path / "trim.json").write_text(json.dumps([{"edit": "trim", "start": 0.5,
                                                     "end": 1.75}]))
    run = specpaint_here("batch", tmp_path / "takes", "-o", tmp_path / "out", "--jobs", "1",
                         "--strokes", tmp_path / "trim.json")
    assert run.returncode == 0, run.stderr
    for name in ("a", "b"):
        assert specpaint_here("apply", tmp_path / "takes" / f"{name}.wav", "-o",
                              tmp_path / f"{name}.wav", "--strokes",
                              tmp_path / "trim.json").returncode == 0
        batched, sr = sf.read(tmp_path / "out" / f"{name}.wav", dtype="int16")
        applied, _ = sf.read(tmp_path / f"{name}.wav", dtype="int16")
        source, _ = sf.read(tmp_path / "takes" / f"{name}.wav", dtype="int16")
        assert np.array_equal(batched, applied)
        assert np.array_equal(batched, source[SR // 2:round(1.75 * SR)])  # 16-bit, exact


@pytest.mark.slow
def test_every_layer_follows_a_time_edit_and_undo_brings_them_back(tmp_path):
    """Issue 48: "in every layer". An unmixed take cut and pasted: each layer is its
    own sound cut as the mix is; the layers add up to the edited mix."""
    from app.project.write import EditTracker, load_project, save_project, snapshot
    from engine.model.resynth import Resynthesizer, layer_audio

    x = take(seconds=2.0)
    ed = editor(x)  # (the constant-Q's layers are cut by the same code)
    ed.unmix("hpss:1")
    before = [layer_audio(ed.doc, layer=layer.id) for layer in ed.doc.layers.state.layers]
    names = [layer.name for layer in ed.doc.layers.state.layers]
    mix = ed.audio().copy()
    s0, s1 = round(0.5 * SR), round(0.9 * SR)
    ed.delete(start=0.5, end=0.9)
    assert [layer.name for layer in ed.doc.layers.state.layers] == names
    for layer, sound in zip(ed.doc.layers.state.layers, before, strict=True):
        cut = layer_audio(ed.doc, layer=layer.id)
        expected = np.concatenate([sound[:, :s0], sound[:, s1:]], 1)
        inside = np.r_[0:s0 - 2 * REACH, s0 + 2 * REACH:expected.shape[1] - 2 * REACH]
        np.testing.assert_allclose(cut[:, inside], expected[:, inside], atol=2e-4)
    total = sum(layer_audio(ed.doc, layer=layer.id) for layer in ed.doc.layers.state.layers)
    np.testing.assert_allclose(ed.audio(), total, atol=2e-4)
    edited = ed.audio().copy()
    saved = save_project(tmp_path / "cut.spp", snapshot(ed.doc, EditTracker(ed.doc)), {}).path
    opened = load_project(saved, device="cpu").doc
    assert [layer.name for layer in opened.layers.state.layers] == names
    assert np.array_equal(Resynthesizer(opened).waveform(), edited)  # kept bit for bit
    ed.undo()
    assert np.array_equal(ed.audio(), mix)


def test_an_edit_that_fails_after_an_undo_keeps_the_redo():
    """A time edit lets go of the undone steps' documents before it makes its own (their
    memory is reused), but only once it is known to be possible."""
    x = take()
    ed = editor(x)
    ed.delete(start=0.5, end=1.0)
    cut = ed.audio().copy()
    ed.undo()
    with pytest.raises(ParameterError, match="no audio"):
        ed.delete(start=0.0, end=3.0)
    ed.redo()
    assert np.array_equal(ed.audio(), cut)


def test_the_overview_after_a_time_edit_is_what_a_fresh_document_draws():
    """The edited document takes the old overview's blocks of the frames it copied."""
    x = take(seconds=30.0, channels=1)
    ed = editor(x)
    ed.doc.prepare_overview()
    ed.delete(start=25.0, end=25.5)
    assert ed.doc._overview._stale[0][0] > 0  # taken, up to the first junction's frames
    fresh = Document(ed.doc.audio, transform="stft", device="cpu",
                     content=ed.doc.content_samples)
    fresh.prepare_overview()
    assert torch.equal(ed.doc._overview.get(ed.doc.mix), fresh._overview.get(fresh.mix))
