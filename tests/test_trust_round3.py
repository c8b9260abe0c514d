"""Issue 51, round 3 of trust: a project's coefficients bounded so that its sound is
finite, no export of a non-finite sample, no paint error on one; script, marks and
preset files that are not regular files refused at once; a stem set written whole;
a layered project's cells checked against its checksum; a project's declared work
bounded before it is done."""

import json
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from app.project.write import ProjectError, load_project, save_project, snapshot
from engine.errors import AudioError
from engine.io.export import export
from tests.cli_run import refused as cli_refused
from tests.cli_run import run as cli_run
from tests.cli_run import specpaint_here
from tests.conftest import document
from tests.projects import AllTiles, build, refused

# -- 1. coefficients past any sound --------------------------------------------------------

@pytest.mark.parametrize("name,value", [("re_0", 3e38), ("im_0", -3e38), ("re_0", 1e15)])
def test_an_edited_rect_past_any_sound_is_refused(tmp_path, valid, name, value):
    """3e38 is a finite float32: such a project opened without a word, |z| overflowed
    and every sample of its sound was NaN."""
    manifest, arrays = valid
    arrays = {**arrays, name: np.full_like(arrays[name], value)}
    message = refused(build(tmp_path / "loud.spp", manifest, arrays),
                      f"{name} holds values past .* above the loudest a full-scale sound")
    assert "Open an earlier copy" in message


def test_embedded_audio_past_any_sound_is_refused(tmp_path, valid):
    """Samples of 3e38 (finite) analysed to infinite coefficients and NaN sound."""
    import hashlib

    manifest, arrays = valid
    audio = arrays["audio"].copy()
    audio[0, 100] = 3e38
    manifest = {**manifest, "audio_sha256": hashlib.sha256(audio.tobytes()).hexdigest()}
    refused(build(tmp_path / "audio.spp", manifest, {**arrays, "audio": audio}),
            "audio samples up to 3e.38, more than 120 dB past full scale")


def test_layer_tiles_past_any_sound_are_refused(tmp_path, valid_layers):
    """Tiles of 1e18 were let in (the old bound) and mixed to +303 dBFS."""
    manifest, arrays = valid_layers
    arrays = {**arrays, "layer_tiles": np.full_like(arrays["layer_tiles"], 1e18)}
    refused(build(tmp_path / "tiles.spp", manifest, arrays), "layer_tiles holds values past")


def test_history_patches_past_any_sound_are_refused(tmp_path, valid_layers):
    manifest, arrays = valid_layers
    before = arrays["history_before"].copy()
    before[0] = 3e38
    refused(build(tmp_path / "undo.spp", manifest, {**arrays, "history_before": before}),
            "history_before holds values past")


@pytest.mark.parametrize("analysis", [{"n_fft": 256}, {"transform": "cq"}])
def test_a_loud_edit_opens_and_sounds_finite(tmp_path, analysis):
    """A full-scale tone boosted by the gain brush at its most (+24 dB) five times,
    120 dB past full scale, is within the bound: it opens, and its sound is finite."""
    from brushes.path import StrokePoint
    from brushes.stroke import paint

    t = np.arange(8000) / 8000
    doc = document(np.sin(2 * np.pi * 440 * t)[None], **analysis)
    for _ in range(5):
        paint(doc, "gain", [StrokePoint(0.3, 440), StrokePoint(0.6, 440)],
              params={"gain_db": 24.0})
    peak = float(doc.mix.abs().max())
    assert peak > 1e5 * doc.full_scale  # as loud as an edit gets
    assert peak < doc.transform.coefficient_limit
    path = save_project(tmp_path / "loud.spp", snapshot(doc, AllTiles(doc)), {}).path
    again = load_project(path, device="cpu").doc
    assert torch.equal(again.mix, doc.mix)
    from engine.model.resynth import Resynthesizer
    assert np.isfinite(Resynthesizer(again).waveform()).all()


def test_the_bound_is_past_what_any_full_scale_signal_analyses_to():
    """The worst full-scale signal for a cell is +-1 matching its atom's signs: its
    coefficient is the atom's sum of |samples| (an impulse's analysis, shifted)."""
    from engine.transforms import make

    for transform in (make(8000, "stft", n_fft=512, window="hamming"),
                      make(8000, "cq", bins_per_octave=24)):
        hop, n = transform.hop, 4 * max(transform.reach, 2048)
        x = torch.zeros(hop, n)
        x[torch.arange(hop), n // 2 + torch.arange(hop)] = 1.0
        worst = float(transform.forward(x).abs().sum(dim=(0, 2)).max())
        assert worst <= transform.atom_sum * transform.full_scale * 1.001
        assert transform.coefficient_limit == pytest.approx(worst * 1e6, rel=0.2)


@pytest.mark.parametrize("bits", ["16", "float"])
def test_an_export_never_writes_a_non_finite_sample(tmp_path, bits):
    """It wrote them and reported "peak -inf dBFS" (16-bit: garbage after a cast
    warning)."""
    samples = np.zeros((1, 1000), np.float32)
    samples[0, 500] = np.nan
    samples[0, 600] = np.inf
    with pytest.raises(AudioError, match="holds 2 NaN or infinite samples") as e:
        export(samples, 8000, tmp_path / "out.wav", bit_depth=bits)
    assert str(tmp_path / "out.wav") in str(e.value) and "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_the_gui_says_so_for_a_sound_that_is_not_finite(qtbot, window, tmp_path):
    """The overview lane raised ValueError on every repaint; an export wrote NaN. Now
    the lane says what is wrong and File > Export audio… refuses in a dialog."""
    from PySide6.QtWidgets import QMessageBox

    from engine.region import Rect
    from tests.dialogs import choose, run_until, save_as

    doc = window.opened.doc
    rect = Rect(0, 8, 0, 8)
    doc.write_complex(rect, torch.full((doc.channels, 8, 8), math.nan, dtype=torch.complex64))
    window.opened.session.finish_mix()
    lane = window.area.overview
    run_until(lambda: lane.peaks is not None and not np.isfinite(lane.peaks).all(),
              timeout=20)
    lane.repaint()  # an exception in paintEvent fails the test (pytest-qt)
    out = tmp_path / "nan.wav"
    save_as(window, out)
    choose(window, "File > Export audio…")
    run_until(lambda: window.findChild(QMessageBox, "error") is not None)
    box = window.findChild(QMessageBox, "error")
    assert "NaN or infinite samples" in box.text() and "nothing was written" in box.text()
    assert not out.exists()


# -- 4. named pipes and devices as files ----------------------------------------------------



def unblock(fifo, after: float = 8.0) -> None:
    """Open ``fifo`` for writing after ``after`` s, then close it: a reader waiting for a
    writer reads nothing then, so old code fails the test rather than hangs it."""
    def write():
        time.sleep(after)
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader: nobody waits
            pass

    threading.Thread(target=write, daemon=True).start()


@pytest.mark.parametrize("command,what", [
    (["apply", "{input}", "-o", "{out}/o.wav", "--strokes", "{fifo}"], "stroke script"),
    (["batch", "{input}", "-o", "{out}", "--strokes", "{fifo}", "--jobs", "1"],
     "stroke script"),
    (["unmix", "{input}", "-o", "{out}", "--method", "nmf:2", "--hints", "{fifo}"],
     "marks file"),
])
def test_a_named_pipe_as_a_script_or_marks_is_refused_at_once(capsys, one_second, tmp_path,
                                                              command, what):
    """A named pipe given as --strokes or --hints waited for a writer for ever."""
    fifo, out = tmp_path / "pipe.json", tmp_path / "out"
    os.mkfifo(fifo)
    out.mkdir()
    unblock(fifo)
    args = [a.format(input=one_second, out=out, fifo=fifo) for a in command]
    t0 = time.monotonic()
    cli_refused(capsys, f"pipe.json: is a FIFO (named pipe), not a {what}; "
                                "give a file", *args)
    assert time.monotonic() - t0 < 5
    assert list(out.iterdir()) == []


def test_a_named_pipe_in_the_presets_folder_is_skipped_at_once(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "spectropaint" / "presets"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pipe.json")
    unblock(folder / "pipe.json")
    t0 = time.monotonic()
    status, out, err = cli_run(capsys, "presets")
    assert time.monotonic() - t0 < 5
    assert status == 0 and "hard-eraser" in out
    assert "pipe.json: is a FIFO (named pipe), not a preset; give a file; skipped" in err


# -- 2. a stem set written whole -----------------------------------------------------------

def stems_of(folder) -> list[str]:
    """What a user lists (a staging folder is hidden)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def manifest_of(folder, stem="one") -> dict:
    return json.loads((folder / f"{stem}-stems.json").read_text())


def test_a_second_unmix_replaces_the_first_set_whole(capsys, one_second, tmp_path):
    """Stale stems of another method stayed beside the new ones, even without a kill."""
    out = tmp_path / "stems"
    run = cli_run
    assert run(capsys, "unmix", one_second, "-o", out, "--method", "hpss")[0] == 0
    assert stems_of(out) == ["one-1-Recording-harmonic.wav", "one-2-Recording-percussive.wav",
                             "one-3-Recording-residual.wav", "one-stems.json"]
    manifest = manifest_of(out)
    assert (manifest["method"], manifest["complete"]) == ("hpss", True)
    assert manifest["stems"] == stems_of(out)[:3] and manifest["source"] == str(one_second)
    status, _, err = run(capsys, "unmix", one_second, "-o", out, "--method", "tonal-noise")
    assert status == 0 and "named in one-stems.json" in err
    assert stems_of(out) == ["one-1-Recording-tonal.wav", "one-2-Recording-noise.wav",
                             "one-stems.json"]
    assert manifest_of(out)["method"] == "tonal-noise"


def test_stems_no_set_names_are_refused_not_mixed(capsys, one_second, tmp_path):
    out = tmp_path / "stems"
    out.mkdir()
    (out / "one-3-Recording-residual.wav").write_bytes(b"an older unmix's")
    cli_refused(capsys, "holds stems of one that no one-stems.json names "
                                "(one-3-Recording-residual.wav); move them away", "unmix",
                                one_second, "-o", out, "--method", "tonal-noise")
    assert stems_of(out) == ["one-3-Recording-residual.wav"]
    (out / "one-3-Recording-residual.wav").unlink()
    (out / "one-stems.json").write_text('{"format": "spectropaint-stems", "stems": ["../x"]}')
    cli_refused(capsys, "one-stems.json: not the manifest of a stem set",
                                "unmix", one_second, "-o", out, "--method", "hpss")


def test_a_set_cut_short_is_marked_incomplete_and_replaced_whole(capsys, one_second, tmp_path,
                                                                 monkeypatch):
    """Cut short while it was written (the stems staged; after the second rename), a set
    is never a mix of two unmixes that nothing marks: the manifest says it is
    incomplete and names the files of both, which the next unmix replaces."""
    from app.session import stem_set

    out = tmp_path / "stems"
    run = cli_run
    assert run(capsys, "unmix", one_second, "-o", out, "--method", "hpss")[0] == 0
    first = stems_of(out)
    real, renamed = os.replace, []

    def replace(src, dst):
        if str(src).endswith(".partial/" + Path(dst).name):
            renamed.append(dst)
            if len(renamed) == 2:
                raise OSError(5, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(stem_set.os, "replace", replace)
    status, _, err = run(capsys, "unmix", one_second, "-o", out, "--method", "tonal-noise")
    assert status == 2 and "one-stems.json says the set is incomplete" in err
    manifest = manifest_of(out)
    assert manifest["complete"] is False and manifest["method"] == "tonal-noise"
    assert set(stems_of(out)) - {"one-stems.json"} <= set(manifest["stems"]) | \
        set(manifest["replacing"])
    assert manifest["replacing"] == first[:3]
    monkeypatch.setattr(stem_set.os, "replace", real)
    assert run(capsys, "unmix", one_second, "-o", out, "--method", "hpss:1")[0] == 0
    assert stems_of(out) == ["one-1-Recording-harmonic.wav", "one-2-Recording-percussive.wav",
                             "one-stems.json"]
    assert manifest_of(out)["complete"] is True
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging left


@pytest.mark.slow
def test_a_killed_unmix_never_leaves_a_mixed_set(one_second, tmp_path):
    """kill -9 at random moments of an unmix over an earlier set: the folder holds a
    complete set and only its stems, or a manifest marked incomplete and only files it
    names (in 2 of 10 kills, one new stem sat beside two stale ones, unmarked)."""
    import random
    import signal
    import subprocess

    out, root = tmp_path / "stems", Path(__file__).parents[1]

    def cmd(method):  # this tree's code (the venv's specpaint may be another checkout's)
        return [sys.executable, "-m", "app.main", "unmix", str(one_second), "-o", str(out),
                "--method", method]

    def ran(method):  # in a child, as the killed runs are: how long one takes
        return subprocess.run(cmd(method), capture_output=True, timeout=120, cwd=root)

    assert specpaint_here("unmix", one_second, "-o", out, "--method", "hpss").returncode == 0
    t0 = time.monotonic()
    assert ran("tonal-noise").returncode == 0
    whole = time.monotonic() - t0
    rng = random.Random(51)
    for i in range(6):
        proc = subprocess.Popen(cmd("hpss" if i % 2 else "tonal-noise"), cwd=root,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 1.0) * whole)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        manifest = manifest_of(out)
        files = set(stems_of(out)) - {"one-stems.json"}
        if manifest["complete"]:
            assert files == set(manifest["stems"]), (i, files, manifest)
        else:
            assert files <= set(manifest["stems"]) | set(manifest["replacing"])
    assert specpaint_here("unmix", one_second, "-o", out, "--method", "hpss").returncode == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "one-1-Recording-harmonic.wav", "one-2-Recording-percussive.wav",
        "one-3-Recording-residual.wav", "one-stems.json"]


# -- 7. the layers' cells against a checksum -------------------------------------------------

def test_a_layered_project_with_its_tile_list_permuted_is_refused(tmp_path, valid_layers):
    """Layer tiles carried no checksum: a permuted tile list opened silently with the
    wrong cells in the wrong places."""
    manifest, arrays = valid_layers
    changed = json.loads(json.dumps(manifest))
    tiled = next(s for s in changed["layers"]["sources"] if s["kind"] == "tiled"
                 and len(s["tiles"]) >= 2)
    tiled["tiles"][0], tiled["tiles"][1] = tiled["tiles"][1], tiled["tiles"][0]
    refused(build(tmp_path / "permuted.spp", changed, arrays),
            "do not match their checksum; the file is damaged")
    tiles = arrays["layer_tiles"].copy()
    tiles[[0, 1]] = tiles[[1, 0]]
    refused(build(tmp_path / "swapped.spp", manifest, {**arrays, "layer_tiles": tiles}),
            "do not match their checksum")
    load_project(build(tmp_path / "same.spp", manifest, arrays), device="cpu")  # unchanged
    del changed["cells_sha256"]  # a file written before the checksum opens as before
    load_project(build(tmp_path / "older.spp", changed, arrays), device="cpu")


# -- 5. declared work asked about before it is done ----------------------------------------

# the mix's estimate that asks, in the tests: between two layers' (the quickest read of
# 128 frames, about 0.4 ms on this machine, quiet or loaded: 1 ms) and 1,000 layers'
# (0.1-1 s). At 1.0 (before), a quiet machine estimated 1,000 layers under it; with the
# reads' mean (before), a loaded one (load 5) estimated two layers over it.
MIX_WARN_S = 0.05


@pytest.fixture(scope="module")
def many_layers(tmp_path_factory):
    """A project of 4 s of mono whose layers are 1,000 copies of one unmixed part: a
    few KB of JSON declaring 1,000 times the mix's work."""
    import io
    import zipfile

    from app.project.read import cells_digest
    from app.session.editor import Editor

    x = np.random.default_rng(0).uniform(-0.3, 0.3, (1, 4 * 22050))
    doc = document(x, 22050)
    Editor(doc, history_limit=0).unmix("tonal-noise")
    folder = tmp_path_factory.mktemp("many")
    path = save_project(folder / "two.spp", snapshot(doc, AllTiles(doc)), {}).path
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        arrays = {k: npz[k] for k in npz.files}
    layer = manifest["layers"]["states"][0]["layers"][0]
    manifest["layers"]["states"][0]["layers"] = [
        {**layer, "id": i, "name": f"part {i}"} for i in range(1000)]
    manifest["layers"]["next_id"] = 1000
    manifest["cells_sha256"] = cells_digest(manifest, arrays)
    return path, build(folder / "many.spp", manifest, arrays)


def test_a_project_declaring_a_long_mix_asks_before_mixing(many_layers, monkeypatch):
    """1,000 layers over 60 s took 46 s to open, without a word. Now the mix is timed
    on a few frames first, and above WARN_SECONDS the question comes before the work;
    no is Cancelled at once. (WARN_SECONDS is lowered, MIX_WARN_S, so that this
    machine's speed does not decide the test.)"""
    from app.project import saved_layers as layers
    from engine.errors import Cancelled

    two, many = many_layers
    monkeypatch.setattr(layers, "WARN_SECONDS", MIX_WARN_S)
    asked = []
    load_project(two, device="cpu", confirm=lambda text: asked.append(text) or False)
    assert asked == []  # two layers: nothing to ask
    t0 = time.monotonic()
    with pytest.raises(Cancelled, match="not opened: mixing its layers costs too much"):
        load_project(many, device="cpu", confirm=lambda text: asked.append(text) or False)
    assert time.monotonic() - t0 < 10
    assert asked[0].startswith("this project mixes 1,000 layers over 4.0 s of audio: "
                               "opening it will take about")


def test_a_script_opening_a_project_that_declares_a_long_mix_is_told_before_the_work(
        many_layers, monkeypatch):
    """Issue 51, item 5's rest: a script calling load_project without ``confirm`` did
    all the work a small file declared. Now it is refused in one line that says what
    and how to go on; said yes to, it opens."""
    from app.project import saved_layers as layers

    two, many = many_layers
    monkeypatch.setattr(layers, "WARN_SECONDS", MIX_WARN_S)
    assert len(load_project(two, device="cpu").doc.layers.state.layers) == 2
    t0 = time.monotonic()
    with pytest.raises(ProjectError) as refused:
        load_project(many, device="cpu")
    assert time.monotonic() - t0 < 10
    said = str(refused.value)
    assert "\n" not in said and said.startswith(f"{many}: this project mixes 1,000 layers")
    assert said.endswith("not opened (to open it anyway, give load_project "
                         "confirm=lambda question: True)")
    opened = load_project(many, device="cpu", confirm=lambda question: True)
    assert len(opened.doc.layers.state.layers) == 1000


def test_a_project_whose_undo_history_goes_to_a_long_mix_asks_before_opening(
        tmp_path, monkeypatch):
    """Issue 51, item 5's rest: only the current layers' mix was estimated. A project of
    two layers whose undo history goes back to 1,000 opened at once, and its first undo
    took the 1,000 layers' mix. Now the heaviest state the history holds is timed too,
    and asked about before the project opens; a script is refused in one line."""
    import io
    import zipfile

    from app.project import saved_layers as layers
    from app.project.read import cells_digest
    from app.project.saved_history import keep_within
    from app.session.editor import Editor
    from engine.errors import Cancelled

    doc = document(np.random.default_rng(1).uniform(-0.3, 0.3, (1, 4 * 22050)), 22050)
    ed = Editor(doc)
    ed.unmix("tonal-noise")
    kept = keep_within(ed.history.steps, ed.history.position)
    path = save_project(tmp_path / "two.spp", snapshot(doc, AllTiles(doc), kept), {}).path
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        arrays = {k: npz[k] for k in npz.files}
    table, (step,) = manifest["layers"], manifest["history"]["steps"]
    part = table["states"][table["current"]]["layers"][0]
    table["states"].append({"active": 0, "layers": [
        {**part, "id": i, "name": f"part {i}"} for i in range(1000)]})
    table["next_id"] = 1000
    step["stack"][0] = len(table["states"]) - 1  # undoing the unmix goes to 1,000 layers
    manifest["cells_sha256"] = cells_digest(manifest, arrays)
    deep = build(tmp_path / "deep.spp", manifest, arrays)
    monkeypatch.setattr(layers, "WARN_SECONDS", MIX_WARN_S)
    asked = []
    assert load_project(path, device="cpu", confirm=lambda text: asked.append(text) or True).history
    assert asked == [], asked  # two layers now, one before: nothing to ask
    with pytest.raises(Cancelled, match="not opened: mixing its layers costs too much"):
        load_project(deep, device="cpu", confirm=lambda text: asked.append(text) or False)
    assert asked[0].startswith("this project's undo history goes to a mix of 1,000 layers "
                               "over 4.0 s of audio: an undo or redo to it will take about")
    with pytest.raises(ProjectError, match="undo history goes to a mix of 1,000 layers"):
        load_project(deep, device="cpu")
    opened = load_project(deep, device="cpu", confirm=lambda question: True)
    assert len(opened.history.steps[0].stack[0].layers) == 1000


def test_the_window_asks_before_mixing_a_project_of_many_layers(qtbot, window, many_layers,
                                                                 monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from app.project import saved_layers as layers

    monkeypatch.setattr(layers, "WARN_SECONDS", MIX_WARN_S)
    before = window.doc
    window.open_path(many_layers[1])
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "question") is not None,
                    timeout=20000)
    box = window.findChild(QMessageBox, "question")
    assert "mixes 1,000 layers" in box.text() and box.text().endswith("Go on?")
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: window.jobs.idle(), timeout=20000)
    assert window.doc is before


def test_layer_export_stems_writes_a_set_and_refuses_strays_in_a_dialog(qtbot, window,
                                                                       tmp_path):
    """The window's Layer > Export stems… shares the set's writer."""
    from PySide6.QtWidgets import QMessageBox

    from app.session.selection import Selection
    from tests.dialogs import choose, run_until, save_as

    window.selection.set_selection(Selection.rect(1.0, 2.0, f_lo=100, f_hi=4000))
    choose(window, "Selection > To new layer")
    folder = tmp_path / "stems"
    folder.mkdir()
    stray = folder / "demo-7-old.flac"
    stray.write_bytes(b"an older unmix's")
    save_as(window, folder / "demo.wav")
    choose(window, "Layer > Export stems…")
    run_until(lambda: window.findChild(QMessageBox, "error") is not None)
    box = window.findChild(QMessageBox, "error")
    assert "holds stems of demo that no demo-stems.json names (demo-7-old.flac)" in box.text()
    box.accept()
    run_until(window.jobs.idle)
    assert sorted(p.name for p in folder.iterdir()) == ["demo-7-old.flac"]
    stray.unlink()
    save_as(window, folder / "demo.wav")
    choose(window, "Layer > Export stems…")
    run_until(lambda: (folder / "demo-stems.json").exists() and window.jobs.idle())
    manifest = manifest_of(folder, "demo")
    assert manifest["complete"] and len(manifest["stems"]) == 2 and manifest["method"] is None
    assert stems_of(folder) == sorted(manifest["stems"] + ["demo-stems.json"])
