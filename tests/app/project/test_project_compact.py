"""A working session's undo history in a project (issue 50, item 4; version 6,
app.project.cell_walk): whole-file repairs are kept as their audio change, not their
coefficients, so all of them fit and the project stays a few times the source; undo and
redo after reopening are bit for bit."""

import io
import json
import zipfile

import numpy as np
import pytest
import soundfile as sf
import torch

from app.project.saved_history import keep_within
from app.project.write import EditTracker, load_project, save_project, snapshot
from app.session.editor import Editor

RATE = 16000
REPAIRS = (("dehum", {}), ("denoise", {}), ("declick", {"sensitivity": 2.0}),
           ("denoise", {"amount_db": 6.0}), ("declick", {"sensitivity": 8.0}))


class Everywhere:  # an edit tracker that reports every tile (the repairs touched them all)
    def __init__(self, doc):
        self.doc = doc

    def rects(self):
        return [self.doc.full_rect()]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """Five whole-file repairs on a 4-second 16-bit take with hiss, hum and clicks:
    (the editor, its edit tracker, the source file, the mix before each step)."""
    where = tmp_path_factory.mktemp("take")
    rng = np.random.default_rng(3)
    t = np.arange(4 * RATE) / RATE
    voice = sum(np.sin(2 * np.pi * 220 * k * t) / k for k in range(1, 6)) \
        * (np.sin(2 * np.pi * 1.5 * t) > 0)
    x = 0.2 * voice + 0.01 * rng.standard_normal(len(t)) \
        + sum(0.03 / k * np.sin(2 * np.pi * 50 * k * t) for k in (1, 2, 3))
    x[rng.integers(0, len(t), 30)] += 0.4
    x[rng.integers(0, len(t), 30)] += 0.05  # fainter clicks: the second de-click's
    source = where / "take.wav"
    sf.write(source, np.clip(x, -1, 1), RATE, subtype="PCM_16")
    ed = Editor.open(source, device="cpu")
    tracker = EditTracker(ed.doc)
    mixes = []
    for name, settings in REPAIRS:
        mixes.append(ed.doc.mix.clone())
        assert ed.repair(name, **settings).changed, name
    mixes.append(ed.doc.mix.clone())
    return ed, tracker, source, mixes


def test_five_whole_file_repairs_are_all_kept_and_the_project_stays_small(session, tmp_path):
    ed, tracker, source, mixes = session
    kept = keep_within(ed.history.steps, ed.history.position)
    assert len(kept.steps) == 5 and not kept.left_out
    path = save_project(tmp_path / "take.spp", snapshot(ed.doc, tracker, kept), {}).path
    # version 5 stored every step's coefficients (float32 pairs, 16 bytes a sample); version 6
    # the audio and each change as float32 (6.6 times the source); version 7 at most 3
    print(f"project {path.stat().st_size / source.stat().st_size:.2f} x the source")
    assert path.stat().st_size < 3 * source.stat().st_size
    with zipfile.ZipFile(path) as z:
        assert json.loads(z.read("manifest.json"))["version"] == 7
    opened = load_project(path, device="cpu")
    doc, steps = opened.doc, opened.history.steps
    assert torch.equal(doc.mix, mixes[-1]) and opened.history.index == 5
    for i in reversed(range(5)):
        steps[i].undo(doc)
        assert torch.equal(doc.mix, mixes[i]), f"undo of step {i}"
    for i in range(5):
        steps[i].redo(doc)
        assert torch.equal(doc.mix, mixes[i + 1]), f"redo of step {i}"


def test_undone_repairs_come_back_bit_for_bit_and_save_again(session, tmp_path):
    """Two of the repairs undone before saving: their after-cells are re-derived from
    their change; the reopened project, saved again, is as compact and as exact."""
    ed, tracker, _, mixes = session
    ed.undo()
    ed.undo()
    try:
        kept = keep_within(ed.history.steps, ed.history.position)
        first = save_project(tmp_path / "a.spp", snapshot(ed.doc, tracker, kept), {}).path
    finally:
        ed.redo()
        ed.redo()
    opened = load_project(first, device="cpu")
    again = save_project(tmp_path / "b.spp", snapshot(opened.doc, Everywhere(opened.doc),
                                                      opened.history), {}).path
    assert again.stat().st_size < 1.05 * first.stat().st_size
    opened = load_project(again, device="cpu")
    doc, steps = opened.doc, opened.history.steps
    assert opened.history.index == 3 and torch.equal(doc.mix, mixes[3])
    for i in (3, 4):
        steps[i].redo(doc)
        assert torch.equal(doc.mix, mixes[i + 1]), f"redo of step {i}"
    for i in reversed(range(5)):
        steps[i].undo(doc)
    assert torch.equal(doc.mix, mixes[0])


def test_an_autosave_after_one_more_repair_writes_only_that_step(session, tmp_path):
    """An autosave keeps the audio and each repair's change beside it, written once: the
    next one, after a repair, writes its manifest, mask and that repair's change."""
    from app.project.read import parts_folder

    ed, tracker, _, mixes = session
    path = tmp_path / "autosave-1.spp"
    ed.undo()
    try:
        save_project(path, snapshot(ed.doc, tracker, keep_within(ed.history.steps[:4], 4)),
                     {}, apart=True)
    finally:
        ed.redo()
    written = {p: p.stat().st_mtime_ns for p in parts_folder(path).iterdir()}
    assert len(written) == 5  # the audio and four changes
    save_project(path, snapshot(ed.doc, tracker, keep_within(ed.history.steps, 5)), {},
                 apart=True)
    now = {p: p.stat().st_mtime_ns for p in parts_folder(path).iterdir()}
    new = set(now) - set(written)
    assert {p: now[p] for p in written} == written and len(new) == 1  # the fifth change
    change = ed.history.steps[4].change.packed.nbytes
    assert path.stat().st_size < max(change, 64 << 10)
    opened = load_project(path, device="cpu")
    assert torch.equal(opened.doc.mix, mixes[5])
    for step in reversed(opened.history.steps):
        step.undo(opened.doc)
    assert torch.equal(opened.doc.mix, mixes[0])


def test_an_autosave_whose_part_is_missing_or_altered_is_refused(session, tmp_path):
    from app.project.read import parts_folder
    from app.project.write import ProjectError

    ed, tracker, _, _ = session
    path = tmp_path / "autosave-2.spp"
    save_project(path, snapshot(ed.doc, tracker, keep_within(ed.history.steps, 5)), {},
                 apart=True)
    first = sorted(parts_folder(path).iterdir())[0]
    data = bytearray(first.read_bytes())
    data[-1] ^= 1
    first.write_bytes(bytes(data))
    with pytest.raises(ProjectError, match="does not match its checksum"):
        load_project(path, device="cpu")
    first.unlink()
    with pytest.raises(ProjectError, match="cannot be read"):
        load_project(path, device="cpu")


def test_opening_unpacks_each_repairs_change_once(session, tmp_path, monkeypatch):
    """Opening checks each change (app.project.read) and walks with it
    (app.project.cell_walk): the samples checked are the ones walked, unpacked once (a
    dense change of 3 minutes of mono takes a quarter of a second to unpack)."""
    from engine.model.history import Change

    ed, tracker, _, mixes = session
    path = save_project(tmp_path / "take.spp", snapshot(
        ed.doc, tracker, keep_within(ed.history.steps, ed.history.position)), {}).path
    unpacked = []
    samples = Change.samples

    def counted(change):
        unpacked.append(change.shape)
        return samples(change)

    monkeypatch.setattr(Change, "samples", counted)
    opened = load_project(path, device="cpu")
    assert len(unpacked) == 1 + 5  # the audio (version 7) and each change, once
    assert torch.equal(opened.doc.mix, mixes[-1])


def test_a_declicks_change_is_analysed_over_its_clicks_frames_alone(tmp_path, monkeypatch):
    """Opening re-derives a repair's after-cells from its change (app.project.cell_walk):
    a de-click's, a few clicks in a 4-second take, is analysed over the frames around
    them (version 7), not over every frame between the first and the last (version 6:
    the whole take twice over, with the recording's own analysis)."""
    rng = np.random.default_rng(4)
    x = 0.01 * rng.standard_normal(4 * RATE)
    x[[RATE // 10, 2 * RATE, 4 * RATE - RATE // 10]] += 0.5
    source = tmp_path / "clicks.wav"
    sf.write(source, x, RATE, subtype="PCM_16")
    ed = Editor.open(source, device="cpu")
    assert ed.repair("declick").changed
    kept = keep_within(ed.history.steps, ed.history.position)
    path = save_project(tmp_path / "clicks.spp", snapshot(ed.doc, EditTracker(ed.doc), kept),
                        {}).path
    analysed = []
    transform = type(ed.doc.transform)
    forward_frames = transform.forward_frames

    def counted(self, x, frame0, frame1, **kw):
        analysed.append(frame1 - frame0)
        return forward_frames(self, x, frame0, frame1, **kw)

    monkeypatch.setattr(transform, "forward_frames", counted)
    opened = load_project(path, device="cpu")
    assert sum(analysed) < 1.5 * ed.doc.n_frames  # the recording's, and the clicks' frames
    assert torch.equal(opened.doc.mix, ed.doc.mix)
    opened.history.steps[0].undo(opened.doc)
    ed.undo()
    assert torch.equal(opened.doc.mix, ed.doc.mix)


def test_a_version_6_project_still_opens_bit_for_bit(session, tmp_path, monkeypatch):
    """Version 6 analysed each change over every frame of its patches, and kept the audio
    as float32: such a project (written here by the walk with every change's reach the
    whole patch) opens, and undoes, bit for bit."""
    from app.project import cell_walk
    from tests.projects import build

    ed, tracker, _, mixes = session
    kept = keep_within(ed.history.steps, ed.history.position)
    with monkeypatch.context() as m:
        m.setattr(cell_walk, "reach", lambda *args: None)
        path = save_project(tmp_path / "v7.spp", snapshot(ed.doc, tracker, kept), {}).path
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        arrays = {k: npz[k] for k in npz.files}
    arrays["audio"] = ed.doc.audio.samples
    del arrays["audio_packed"], manifest["audio_shape"]
    manifest["version"] = 6
    opened = load_project(build(tmp_path / "v6.spp", manifest, arrays), device="cpu")
    assert torch.equal(opened.doc.mix, mixes[-1])
    for i in reversed(range(5)):
        opened.history.steps[i].undo(opened.doc)
        assert torch.equal(opened.doc.mix, mixes[i]), f"undo of step {i}"


def test_a_file_edited_whole_lists_its_edits_in_runs_and_opens_again(tmp_path, monkeypatch):
    """A project lists the rects an edit touched in its manifest (at most 1 MiB, read.py
    MANIFEST_BYTES): one by one, the 64-frame tiles of a file edited whole came to
    ~22 bytes each, ~2 MB for an hour of stereo, and the project saved could not be
    opened. The limit is made small here, as such a file's list would be."""
    import app.project.read as read
    from engine.io.audio import Audio
    from engine.model.document import Document

    rng = np.random.default_rng(4)
    doc = Document(Audio(rng.uniform(-0.5, 0.5, (2, 30 * RATE)).astype(np.float32), RATE),
                   device="cpu", n_fft=256, hop=64)  # 7,501 frames: 118 x 3 tiles
    tracker = EditTracker(doc)
    mag, phase = doc.read(doc.full_rect())
    doc.write(doc.full_rect(), mag * 0.5, phase)  # a gain over the whole file
    monkeypatch.setattr(read, "MANIFEST_BYTES", 4096)  # 354 tiles listed one by one: 8 KB
    saved = save_project(tmp_path / "whole.spp", snapshot(doc, tracker), {}).path
    with zipfile.ZipFile(saved) as z:
        assert z.getinfo("manifest.json").file_size <= 4096
    opened = load_project(saved, device="cpu").doc
    assert torch.equal(opened.mix, doc.mix)
