"""A document's coefficients held in runs (engine.model.frame_store, issue 48's speed): a
time edit shares the cells it keeps with the document before it, analyses the rest
when first read, and each document stays its own (copy-on-write) through painting,
undo and redo; what it holds is what a fresh analysis of its content holds, bit for
bit, and so is its overview."""

import random
import time

import numpy as np
import pytest
import torch

from app.session.editor import Editor
from engine.io.audio import Audio
from engine.model.document import Document
from engine.model.frame_store import FrameStore
from engine.region import Rect

SR = 16000


def take(seconds: float, channels: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(round(seconds * SR)) / SR
    return np.array([0.3 * np.sin(2 * np.pi * rng.uniform(200, 3000) * t)
                     + 0.05 * rng.standard_normal(t.size) for _ in range(channels)], np.float32)


def fresh(doc: Document) -> Document:
    return Document(doc.audio, transform=doc.transform, device="cpu",
                    content=doc.content_samples)


def bits(t: torch.Tensor) -> torch.Tensor:
    return torch.view_as_real(t).view(torch.int32)


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(bits(a), bits(b))


def test_a_delete_of_whole_frames_shares_every_cell_but_the_junctions_and_holds_a_fresh_analysis():
    ed = Editor(Document(Audio(take(8.0), SR), transform="stft", device="cpu"))
    hop = ed.doc.transform.hop
    before = ed.doc
    ed.delete(start=3.0, end=3.0 + 40 * hop / SR)
    store = ed.doc.cells
    assert isinstance(store, FrameStore)
    shared = set(store.held()) & set(before.cells.held())
    assert shared, "the frames either side of the junction are the old document's memory"
    assert 0 < store.unanalysed < 16, "only the frames reading the junction wait to be analysed"
    assert same(ed.doc.mix, fresh(ed.doc).mix)


@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_random_time_edits_hold_what_a_fresh_analysis_of_their_content_holds(transform):
    rng = random.Random(7)
    ed = Editor(Document(Audio(take(6.0, seed=3), SR), transform=transform, device="cpu"))
    shift = ed.doc.transform.shift_samples
    for _ in range(5):
        n = ed.doc.length / SR
        a = rng.uniform(0, n * 0.6)
        b = a + (rng.choice([1, 2]) * shift / SR if rng.random() < 0.5 else rng.uniform(0.05, 0.6))
        verb = rng.choice(["delete", "cut", "duplicate", "trim_keep"])
        if verb == "trim_keep":
            ed.trim(start=a * 0.2, end=n)
        else:
            getattr(ed, verb)(start=a, end=min(b, n))
        if ed.clipboard is not None and rng.random() < 0.5:
            ed.paste(at=rng.uniform(0, ed.doc.length / SR))
        assert same(ed.doc.mix, fresh(ed.doc).mix), verb


def cells(doc: Document) -> torch.Tensor:
    """All of a document's cells, read without joining its runs (which ``mix`` does)."""
    return doc.cells[:, 0:doc.n_frames].clone()


def test_painting_after_a_time_edit_leaves_the_document_before_it_as_it_was():
    """Copy-on-write: the history keeps the document before an edit, for undo, while
    the one after shares its cells and is painted on."""
    ed = Editor(Document(Audio(take(6.0), SR), transform="stft", device="cpu"))
    hop = ed.doc.transform.hop
    before, old = ed.doc, cells(ed.doc)
    ed.delete(start=1.0, end=1.0 + 64 * hop / SR)
    after = cells(ed.doc)
    ed.paint("soft-eraser", [(0.3, 1000), (5.0, 1000)])  # before and after the junction
    painted = cells(ed.doc)
    assert not same(painted, after)
    assert same(cells(before), old), "the strokes reached the document the history keeps"
    ed.undo()
    assert same(cells(ed.doc), after)
    ed.undo()
    assert same(cells(ed.doc), old)
    ed.redo()
    ed.redo()
    assert same(cells(ed.doc), painted)


def test_a_painted_document_shares_no_frame_its_strokes_reach():
    ed = Editor(Document(Audio(take(6.0), SR), transform="stft", device="cpu"))
    hop = ed.doc.transform.hop
    ed.paint("soft-eraser", [(4.0, 1000), (4.5, 1500)])
    ed.delete(start=1.0, end=1.0 + 64 * hop / SR)
    assert same(ed.doc.mix, fresh(ed.doc).mix)


def test_the_overview_of_an_edit_by_whole_blocks_takes_the_old_blocks_and_draws_as_fresh():
    ed = Editor(Document(Audio(take(20.0, channels=1), SR), transform="stft", device="cpu"))
    ed.doc.prepare_overview()
    block = 8 * ed.doc.transform.hop  # engine.view.overview.BLOCK frames
    ed.delete(start=5.0, end=5.0 + 3 * block / SR)
    stale = ed.doc._overview._stale
    assert sum(f1 - f0 for f0, f1, _, _ in stale) < 32, "the junction's and the last blocks"
    new = fresh(ed.doc)
    new.prepare_overview()
    assert torch.equal(ed.doc._overview.get(ed.doc.cells), new._overview.get(new.cells))


def test_a_view_analyses_what_it_shows_and_the_turns_build_the_rest_a_piece_at_a_time():
    """The window draws a time edit's document at once: the frames it shows are analysed
    when drawn, the rest a chunk at a time (Document.analyse_some), ending as a fresh
    document's overview."""
    ed = Editor(Document(Audio(take(20.0), SR), transform="stft", device="cpu"))
    ed.doc.prepare_overview()
    ed.delete(start=5.0, end=5.37)  # not whole frames: everything after it waits
    doc = ed.doc
    waiting = doc.cells.unanalysed
    assert doc.analysing and waiting > 200
    shown = (400, 500)
    doc.render(Rect(0, doc.n_bins, *shown), width=12, height=64)  # 100 frames on 12 pixels
    assert 0 < waiting - doc.cells.unanalysed <= 100 + 2 * doc.cells.grain
    turns = 0
    while doc.analyse_some(time.perf_counter()):
        turns += 1
    assert turns >= 2 and not doc.analysing and doc.cells.unanalysed == 0
    new = fresh(doc)
    new.prepare_overview()
    assert torch.equal(doc._overview.get(doc.cells), new._overview.get(new.cells))


def test_a_document_too_large_to_hold_whole_holds_its_budget_and_reads_and_paints_as_one_held_whole(
        monkeypatch):
    """Past HELD_ABOVE a document holds HELD_BYTES of analysed cells (issue 50, item 7:
    8 channels at 192 kHz), letting the least recently read go and analysing them
    again when read; what it reads, paints and undoes is what a document held whole
    does, bit for bit, and what was painted is never let go."""
    import engine.model.document as document

    x = take(6.0)
    whole = Editor(Document(Audio(x, SR), transform="stft", device="cpu"))
    cells_bytes = whole.doc.cells.numel() * 8
    monkeypatch.setattr(document, "HELD_ABOVE", cells_bytes // 2)
    monkeypatch.setattr(document, "HELD_BYTES", cells_bytes // 8)
    held = Editor(Document(Audio(x, SR), transform="stft", device="cpu"))
    store = held.doc.cells
    assert sum(store.held().values()) <= cells_bytes // 8 and store.unanalysed > 0
    assert torch.equal(held.doc._overview.get(store), whole.doc._overview.get(whole.doc.cells))
    for ed in (whole, held):
        ed.paint("soft-eraser", [(1.0, 1000), (1.5, 2000)])
    for frame0 in range(0, whole.doc.n_frames, 37):  # reads all over: runs go and come back
        rect = Rect(0, whole.doc.n_bins, frame0, frame0 + 40)
        assert same(held.doc.read_complex(rect), whole.doc.read_complex(rect))
    assert np.array_equal(held.audio(), whole.audio())
    for ed in (whole, held):
        ed.undo()
    assert same(cells(held.doc), cells(whole.doc))


def test_the_analysis_left_behind_a_time_edit_runs_in_a_thread_and_ends_with_its_document():
    """The window analyses what a time edit left in a thread of its own
    (Document.analyse_behind): the overview ends as a fresh document's, and a document
    let go meanwhile (an edit dropped from the history) is not kept alive by it."""
    import gc
    import weakref

    ed = Editor(Document(Audio(take(20.0), SR), transform="stft", device="cpu"))
    ed.doc.prepare_overview()
    ed.delete(start=5.0, end=5.37)
    doc = ed.doc
    doc.analyse_behind().join(timeout=60)
    assert not doc.analysing and doc.cells.unanalysed == 0
    new = fresh(doc)
    new.prepare_overview()
    assert torch.equal(doc._overview.get(doc.cells), new._overview.get(new.cells))
    ed.undo()
    ed.redo()  # nothing left: no thread
    assert ed.doc.analyse_behind() is None
    ed.delete(start=1.0, end=1.37)
    thread, gone = ed.doc.analyse_behind(), weakref.ref(ed.doc)
    ed.undo()
    ed.delete(start=2.0, end=2.5)  # drops the edit whose analysis runs
    gc.collect()
    thread.join(timeout=60)
    gc.collect()
    assert not thread.is_alive() and gone() is None
