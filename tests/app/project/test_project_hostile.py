"""Crafted project files: each is refused with one ProjectError that says what is
wrong, quickly and before allocating what it asks for; the app shows it in a
dialog and keeps working."""

import io
import json
import zipfile

import numpy as np
import pytest

from app.project.write import open_project, save_project, snapshot
from tests.conftest import document
from tests.projects import Tracker, build, refused


def patched_zip(path, offset_of, value: bytes):
    """Overwrite bytes in both the local and the central header of every member."""
    data = bytearray(path.read_bytes())
    for sig, field in ((b"PK\x03\x04", offset_of[0]), (b"PK\x01\x02", offset_of[1])):
        at = data.find(sig)
        while at >= 0:
            data[at + field:at + field + len(value)] = value
            at = data.find(sig, at + 4)
    path.write_bytes(bytes(data))
    return path


def test_the_valid_project_opens(tmp_path, valid):
    doc, view = open_project(build(tmp_path / "ok.spp", *valid), device="cpu")
    assert doc.channels == 2 and view["colormap"] == "viridis"


def test_a_project_keeps_its_sources_format_depth_and_speakers(tmp_path):
    """Reopened, a project exports "same as source" at the source's depth and names
    its lanes by the source's speakers, as the file it came from did."""
    from app.project.write import open_project
    from engine.io.audio import Audio
    from engine.model.document import Document

    audio = Audio(np.zeros((2, 8000), np.float32), 8000, None, "WAV", "PCM_24", layout=("FL", "FR"))
    doc = Document(audio, device="cpu", n_fft=256)
    path = save_project(tmp_path / "kind.spp", snapshot(doc, Tracker(doc)), {}).path
    again, _ = open_project(path, device="cpu")
    assert (again.audio.format, again.audio.subtype, again.audio.layout) == \
        ("WAV", "PCM_24", ("FL", "FR"))


def test_zip_level_damage(tmp_path, valid):
    manifest, arrays = valid
    path = build(tmp_path / "deflated.spp", manifest, arrays, compression=zipfile.ZIP_DEFLATED)
    data = bytearray(path.read_bytes())
    start = data.find(b"PK\x03\x04", 10) + 30 + len("arrays.npz")  # second member's data
    data[start + 40:start + 400] = bytes(360)
    (tmp_path / "corrupt.spp").write_bytes(bytes(data))
    refused(tmp_path / "corrupt.spp", "damaged")
    encrypted = patched_zip(build(tmp_path / "enc.spp", manifest, arrays), (6, 8), b"\x01")
    refused(encrypted, "encrypted")
    method = patched_zip(build(tmp_path / "m.spp", manifest, arrays), (8, 10), b"\x63\x00")
    refused(method, "compression method 99")
    refused(build(tmp_path / "none.spp", manifest_bytes=b"{}", npz_bytes=b""), "not a Spectro")
    (tmp_path / "text.spp").write_text("hello")
    refused(tmp_path / "text.spp", "not a SpectroPaint project")


def test_a_zip_bomb_is_refused_unread(tmp_path, valid):
    manifest, arrays = valid
    bomb = {**arrays, "audio": np.zeros((2, 30_000_000), np.float32)}  # 240 MB of zeros
    path = build(tmp_path / "bomb.spp", manifest, bomb, compression=zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 1_000_000
    refused(path, "zip bomb")


def test_arrays_that_are_not_an_archive_of_arrays(tmp_path, valid):
    manifest, arrays = valid
    bare = io.BytesIO()
    np.save(bare, arrays["audio"])
    refused(build(tmp_path / "bare.spp", manifest, npz_bytes=bare.getvalue()), "single array")
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("readme.txt", "hi")
    refused(build(tmp_path / "txt.spp", manifest, npz_bytes=other.getvalue()), "not an array")
    # numpy took these for pickles and advised allow_pickle=True (issue 37)
    message = refused(build(tmp_path / "text.spp", manifest, npz_bytes=b"just some text"),
                      r"arrays.npz is not a NumPy archive \(it begins b'just some te'\)")
    assert "allow_pickle" not in message
    link = tmp_path / "link.spp"
    with zipfile.ZipFile(link, "w") as z:
        z.writestr("manifest.json", json.dumps(manifest))
        member = zipfile.ZipInfo("arrays.npz")
        member.external_attr = (0o120777 << 16)  # a symbolic link, as zip -y stores one
        z.writestr(member, "/etc/passwd")
    refused(link, "arrays.npz is a symbolic link; a project holds the file itself")


def npz_with(arrays, **members: bytes) -> bytes:
    """An .npz of ``arrays`` with some members given as raw .npy bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, array in arrays.items():
            one = io.BytesIO()
            np.save(one, array)
            z.writestr(f"{name}.npy", members.get(name, one.getvalue()))
    return buffer.getvalue()


def npy_header(shape, descr="<f4") -> bytes:
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False,
                                             "shape": shape})
    return f.getvalue()


def test_a_declared_shape_of_a_trillion_elements(tmp_path, valid):
    manifest, arrays = valid
    huge = npy_header((10**6, 10**6)) + bytes(64)
    refused(build(tmp_path / "huge.spp", manifest, npz_bytes=npz_with(arrays, audio=huge)),
            r"declares \(1000000, 1000000\)")
    garbled = npy_header((2, 8000)).replace(b"(2, 8000)", b"(2, 8000 ") + bytes(64000)
    refused(build(tmp_path / "garbled.spp", manifest, npz_bytes=npz_with(arrays, audio=garbled)),
            "damaged")


@pytest.mark.parametrize("text,match", [
    ("[" * 100_000 + "]" * 100_000, "nests"),
    ('{"format": "spectropaint-project", "version": 1, "sample_rate": Infinity}', "not a number"),
    ("not json", "not valid JSON"),
])
def test_manifests_that_are_not_plain_json(tmp_path, valid, text, match):
    refused(build(tmp_path / "j.spp", arrays=valid[1], manifest_bytes=text.encode()), match)


@pytest.mark.parametrize("change,match", [
    ({"version": True}, "version True"),
    ({"version": 8}, "version 8"),
    ({"sample_rate": True}, "sample rate True"),
    ({"sample_rate": 10**12}, "sample rate"),
    ({"analysis": {"transform": "stft", "n_fft": 1e308}}, "FFT size"),
    ({"analysis": ["stft"]}, "analysis"),
    ({"analysis": {"transform": "stft", "hop": 511.9}}, "hop: 511.9 is not a whole number"),
    ({"analysis": {"transform": "stft", "n_fft": "2048"}},
     "n_fft: expected a finite number, got str '2048'"),
    ({"analysis": {"transform": "stft", "window": 3}}, "window: expected a name, got int"),
    ({"analysis": {"transform": "cq", "bins_per_octave": 47.5}}, "bins_per_octave: 47.5 is not"),
    ({"analysis": {"transform": "cq", "fmin": "low"}}, "fmin: expected a finite number"),
    ({"view": [1, 2]}, "view"),
    ({"view": "big"}, "view"),
    ({"view": {"t0": "soon"}}, "view"),
    ({"view": {"selection": {"kind": "blob", "points": [[0, 1], [1, 2]]}}},
     "selection .unknown selection kind"),
    ({"view": {"selection": {"kind": "lasso", "points": [[0, 1]] * 30000}}}, "selection"),
    ({"view": {"selection": [1, 2]}}, "selection"),
    ({"source": 5}, "source"),
    ({"source_kind": {"layout": ["FL"]}}, "layout of 1 names for 2 channels"),
    ({"source_kind": {"layout": ["FL", 2]}}, "source format"),
    ({"source_kind": {"layout": ["FL", ""]}}, "source format"),
    ({"source_kind": {"subtype": "P" * 100}}, "source format"),
    ({"source_kind": {"speakers": 6}}, "source format"),
    ({"source_kind": "WAV"}, "source format"),
    ({"edited_rects": [[0, 64, 0, 10**9]]}, "edited rect 0"),
    ({"edited_rects": [[0, 64]]}, "edited rect 0"),
    ({"format": "zip"}, "not a SpectroPaint project"),
])
def test_manifest_fields_of_the_wrong_type_or_range(tmp_path, valid, change, match):
    manifest, arrays = valid
    refused(build(tmp_path / "f.spp", {**manifest, **change}, arrays), match)


def amplified(tmp_path, valid, name="amplified.spp"):
    """An hour of silence at 8 kHz (14 MB) asking for n_fft 16384 and hop 1: 230 TB."""
    import hashlib

    manifest, arrays = valid
    audio = np.zeros((1, 3600 * 8000), np.float32)
    manifest = {**manifest, "analysis": {"transform": "stft", "n_fft": 16384, "hop": 1},
                "audio_sha256": hashlib.sha256(audio.tobytes()).hexdigest(), "edited_rects": []}
    return build(tmp_path / name, manifest, {"audio": audio})


def test_an_analysis_memory_cannot_hold_is_refused_before_allocating(tmp_path, valid):
    message = refused(amplified(tmp_path, valid), "needs .* GiB .* available")
    assert "use a larger hop" in message


@pytest.mark.parametrize("name,value,match", [
    ("audio", np.zeros(()), "audio of shape"),
    ("audio", np.zeros(8000, np.float32), "audio of shape"),
    ("audio", np.zeros((2, 2, 8000), np.float32), "audio of shape"),
    ("audio", np.zeros((0, 8000), np.float32), "audio of shape"),
    ("audio", np.full((300, 10), 0.1, np.float32), "300 channels"),
    ("audio", np.array([[np.nan] * 8000] * 2, np.float32), "NaN"),
    ("re_0", None, "NaN"),
    ("im_0", np.zeros((2, 3, 3), np.float32), "missing or not"),
    ("audio", np.zeros((2, 8000), np.bool_), "declares"),
    ("content", np.zeros((2, 7999), np.float32), "content of shape"),
    ("content", np.full((2, 8000), 1e30, np.float32), "content samples up to"),
])
def test_arrays_of_the_wrong_shape_or_values(tmp_path, valid, name, value, match):
    manifest, arrays = valid
    arrays = dict(arrays)
    if value is None:  # spoil the existing array
        value = arrays[name].copy()
        value.flat[5] = np.inf
    arrays[name] = value
    refused(build(tmp_path / "a.spp", manifest, arrays), match)


def version_1(manifest, arrays):
    """The same project as version 1 wrote it: magnitude and phase of the edited rects."""
    arrays = dict(arrays)
    z = arrays.pop("re_0") + 1j * arrays.pop("im_0")
    arrays["mag_0"], arrays["phase_0"] = np.abs(z).astype(np.float32), \
        np.angle(z).astype(np.float32)
    manifest = {k: v for k, v in manifest.items() if k != "cells_sha256"}  # not in version 1
    return {**manifest, "version": 1}, arrays


def test_a_version_1_project_still_opens(tmp_path, valid):
    manifest, arrays = version_1(*valid)
    doc, view = open_project(build(tmp_path / "v1.spp", manifest, arrays), device="cpu")
    z = valid[1]["re_0"] + 1j * valid[1]["im_0"]
    got = doc.read_complex(Tracker(doc).rect).numpy()
    np.testing.assert_allclose(got, z, rtol=1e-6, atol=1e-6)
    assert view["colormap"] == "viridis"


@pytest.mark.parametrize("name,match", [("mag_0", "negative magnitudes"), ("phase_0", "NaN")])
def test_a_version_1_project_with_bad_cells(tmp_path, valid, name, match):
    manifest, arrays = version_1(*valid)
    arrays[name].flat[5] = -1.0 if name == "mag_0" else np.nan
    refused(build(tmp_path / "v1.spp", manifest, arrays), match)


@pytest.mark.slow
def test_a_crafted_project_gets_a_dialog_and_the_app_keeps_its_document(qtbot, window,
                                                                          tmp_path, valid):
    from PySide6.QtWidgets import QMessageBox

    manifest, arrays = valid
    before = window.doc
    crafted = [build(tmp_path / "view.spp", {**manifest, "view": [1, 2]}, arrays),
               build(tmp_path / "rate.spp", {**manifest, "sample_rate": 10**12}, arrays),
               build(tmp_path / "hop.spp", {**manifest, "analysis": {"transform": "stft",
                                                                      "hop": 511.9}}, arrays),
               build(tmp_path / "nfft.spp", {**manifest, "analysis": {"transform": "stft",
                                                                       "n_fft": "2048"}},
                     arrays),
               amplified(tmp_path, valid)]
    for path in crafted:
        window.open_path(path)
        qtbot.waitUntil(lambda: window.findChild(QMessageBox, "error") is not None,
                        timeout=20000)
        box = window.findChild(QMessageBox, "error")
        assert path.name in box.text() and "please report" not in box.text()
        box.setObjectName("seen")
        box.accept()
        qtbot.waitUntil(lambda: window.jobs.idle())
        assert window.doc is before


def test_a_project_asking_for_amplifying_settings_asks_before_the_work(qtbot, window, tmp_path,
                                                                       valid):
    """Issue 37: a small project asking for FFT size 16384 and hop 1 on 1 s opened in
    7.8 s at 2.9 GB and took 292 s to resynthesize, with no word. Now a question with
    the estimate comes first; Cancel leaves the open document as it was."""
    import hashlib

    from PySide6.QtWidgets import QMessageBox

    manifest, arrays = valid
    audio = np.zeros((1, 44100), np.float32)
    path = build(tmp_path / "amplifying.spp", {
        **manifest, "sample_rate": 44100, "edited_rects": [],
        "analysis": {"transform": "stft", "n_fft": 16384, "hop": 1},
        "audio_sha256": hashlib.sha256(audio.tobytes()).hexdigest()}, {"audio": audio})
    before = window.doc
    window.open_path(path)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "question") is not None,
                    timeout=20000)
    box = window.findChild(QMessageBox, "question")
    assert "makes 8,193 coefficients per sample: 1.0 s of audio will take about" in box.text()
    assert "GiB" in box.text() and box.text().endswith("Go on?")
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: window.jobs.idle(),
                    timeout=20000)
    assert window.doc is before
    assert "cancelled" in window.statusBar().currentMessage()


@pytest.fixture(scope="module")
def historic(tmp_path_factory):
    """A project whose history keeps two strokes, the second undone: (path, the cells
    before, after the first and after the second stroke)."""
    from app.project.saved_history import keep_within
    from brushes.path import StrokePoint
    from brushes.stroke import paint
    from engine.model.history import History

    doc = document(np.random.default_rng(4).uniform(-0.5, 0.5, (2, 8000)), n_fft=256)
    history = History(doc)
    states = [doc.coefficients(0, doc.n_frames).clone()]
    for t, channel in ((0.2, None), (0.6, 1)):
        paint(doc, "gain", [StrokePoint(t, 1000.0), StrokePoint(t + 0.2, 1500.0)],
              params={"gain_db": -30.0, "radius_hz": 300.0, "channel": -1 if channel is None else
               channel}, history=history)
        states.append(doc.coefficients(0, doc.n_frames).clone())
    history.undo()

    class Edited:  # every tile either stroke touched
        def rects(self):
            return [s.dirty() for s in history.steps]

    path = tmp_path_factory.mktemp("h") / "history.spp"
    save_project(path, snapshot(doc, Edited(), keep_within(history.steps, 1)), {})
    return path, states


def test_a_projects_history_comes_back_bit_for_bit(historic):
    import torch

    from app.project.write import load_project

    path, states = historic
    opened = load_project(path, device="cpu")
    doc, kept = opened.doc, opened.history
    assert kept.index == 1 and [s.channel for s in kept.steps] == [None, 1]
    assert torch.equal(doc.coefficients(0, doc.n_frames), states[1])
    kept.steps[1].redo(doc)
    assert torch.equal(doc.coefficients(0, doc.n_frames), states[2])
    kept.steps[1].undo(doc)
    kept.steps[0].undo(doc)
    assert torch.equal(doc.coefficients(0, doc.n_frames), states[0])


def test_the_history_is_kept_within_its_limit_oldest_done_steps_first():
    import torch

    from app.project.saved_history import keep_within
    from engine.model.history import Patch, Step
    from engine.region import Rect

    def step(name):  # 1 KiB of cells before it
        return Step(name, None, [Patch(Rect(0, 8, 0, 16),
                                       torch.zeros(1, 8, 16, dtype=torch.complex64))])

    steps = [step(str(i)) for i in range(6)]
    kept = keep_within(steps, 4, limit=3 * 1024)
    assert [s.label for s in kept.steps] == ["3", "4", "5"] and kept.index == 1
    assert kept.left_out == ("the history kept 3 steps; 3 older and 0 undone ones past "
                             "0 MiB were left out")
    kept = keep_within(steps, 0, limit=2048)  # none done: the furthest undone go
    assert [s.label for s in kept.steps] == ["0", "1"] and kept.index == 0
    assert keep_within(steps, 6).left_out == ""


def _spoiled(historic, change):
    with zipfile.ZipFile(historic[0]) as z:
        manifest = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        arrays = {k: npz[k] for k in npz.files}
    change(manifest, arrays)
    return manifest, arrays


@pytest.mark.parametrize("change,match", [
    (lambda m, a: m["history"].update(index=3), "history"),
    (lambda m, a: m["history"].update(index=True), "history"),
    (lambda m, a: m["history"].update(steps="all"), "history"),
    (lambda m, a: m["history"]["steps"][0].update(label=7), "history step 0"),
    (lambda m, a: m["history"]["steps"][1].update(channel=2), "history step 1"),
    (lambda m, a: m["history"]["steps"][0].update(patches=-1), "history step 0"),
    (lambda m, a: m["history"]["steps"][0].update(patches=10**9), "history_rects"),
    (lambda m, a: m["history"]["steps"][0].update(extra=1), "history step 0"),
    (lambda m, a: a.update(history_rects=a["history_rects"].astype(np.int32)), "history_rects"),
    (lambda m, a: a["history_rects"].__setitem__((0, 1), a["history_rects"][0, 0]), "empty"),
    (lambda m, a: a.update(cells_values=a["cells_values"][:-1]), "cells_values"),
    (lambda m, a: a.update(cells_mask=a["cells_mask"][:-3]), "cells_mask"),
    (lambda m, a: a.update(cells_mask=a["cells_values"]), "cells_mask"),
    (lambda m, a: a.pop("cells_mask"), "cells_mask"),
    (lambda m, a: a["history_rects"].__setitem__((0, 3), 10**9), "history"),
    (lambda m, a: a["cells_values"].__setitem__((0, 0), np.nan), "NaN"),
    (lambda m, a: m["history"]["steps"][0].update(change=[0, 10]), "history step 0's change"),
    (lambda m, a: m.update(project=["x.spp"]), "project"),
])
def test_a_damaged_history_is_refused(tmp_path, historic, change, match):
    refused(build(tmp_path / "h.spp", *_spoiled(historic, change)), match)


def members(path):
    """A saved project's manifest and arrays, to spoil."""
    with zipfile.ZipFile(path) as z:
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        return json.loads(z.read("manifest.json")), {k: npz[k] for k in npz.files}


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """A version 7 project of a 16-bit take: its audio packed (engine.model.history.Change),
    half its float32 size or less; the document saved and the project's members."""
    from engine.io.audio import Audio
    from engine.model.document import Document

    rng = np.random.default_rng(2)
    samples = (np.round(rng.normal(0, 0.05, (2, 16000)) * 32768) / 32768).astype(np.float32)
    doc = Document(Audio(samples, 16000, None, "WAV", "PCM_16"), device="cpu", n_fft=256)
    path = save_project(tmp_path_factory.mktemp("v7") / "take.spp", snapshot(doc, Tracker(doc)),
                        {}).path
    return doc, path, *members(path)


def test_a_16_bit_takes_audio_is_packed_and_comes_back_bit_for_bit(packed):
    doc, path, manifest, arrays = packed
    assert manifest["version"] == 7 and "audio" not in arrays
    assert arrays["audio_packed"].nbytes < 0.5 * doc.audio.samples.nbytes
    again, _ = open_project(path, device="cpu")
    assert np.array_equal(again.audio.samples.view(np.int32), doc.audio.samples.view(np.int32))
    assert np.array_equal(again.mix.numpy(), doc.mix.numpy())


@pytest.mark.parametrize("spoil,match", [
    (lambda m, a: a.update(audio_packed=a["audio_packed"][:-100]), "audio_packed is not 2 x"),
    (lambda m, a: a.pop("audio_packed"), "audio_packed is missing"),
    (lambda m, a: m.update(audio_shape=[2, 15999]), "audio_packed is not 2 x 15,999"),
    (lambda m, a: m.update(audio_shape=[2]), "audio_shape"),
    (lambda m, a: m.update(audio_shape=[2, 10 ** 15]), "its audio unpack to"),
    (lambda m, a: m.update(audio_shape=[1000, 16]), "1,000 channels"),
])
def test_a_version_7_projects_damaged_audio_is_refused(tmp_path, packed, spoil, match):
    _, _, manifest, arrays = packed
    manifest, arrays = dict(manifest), dict(arrays)
    spoil(manifest, arrays)
    refused(build(tmp_path / "a.spp", manifest, arrays), match)
