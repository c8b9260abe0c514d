"""One stroke = one undo step; undo and redo are bit-exact; memory is capped."""

import hashlib
import random

import numpy as np
import pytest
import torch

from brushes.path import StrokePoint
from brushes.registry import BRUSHES, get_brush
from brushes.stroke import Stroke, paint
from engine.model.history import History
from tests.conftest import document, fail_gain_at

INNER = ["gain", "tone", "blur", "noise", "restore"]


def random_stroke(r: random.Random, brush: str):
    t, f = r.uniform(0, 2), r.uniform(0, 4000)
    points = [StrokePoint(max(0, t + r.uniform(-0.05, 0.05)), max(0, f + r.uniform(-100, 100)),
                          r.random()) for _ in range(r.randint(1, 3))]
    params = {"radius_ms": r.uniform(5, 60), "radius_hz": r.uniform(20, 300),
              "hardness": r.random(), "opacity": r.random(), "channel": r.choice([-1, 0, 1]),
              "spacing": r.uniform(0.3, 1.0)}
    if brush == "harmonic":
        params.update(inner=r.choice(INNER), harmonics=r.randint(1, 4))
    if brush == "heal":
        params["mode"] = r.choice(["attenuate", "steady", "replace", "declick"])
    return points, params


def digest(doc) -> str:
    """The document's exact state (every bit of every coefficient), small to keep.
    numpy's ``tobytes`` writes the cells in C order as ``contiguous()`` would, but in one
    thread: torch's copy of this transposed view took 0.3-7 ms on two busy cores (some
    3,000 digests a brush), numpy's 0.05-0.1 ms."""
    return hashlib.sha1(doc.coefficients(0, doc.n_frames).numpy().tobytes()).hexdigest()


def paint_by_events(doc, brush: str, points, params, history, seed) -> None:
    """One stroke as the GUI paints it: one ``Stroke.add`` per pen event."""
    b = get_brush(brush)
    resolved, _ = b.resolve(params, "params")
    stroke = Stroke(doc, b, resolved, curves={}, history=history, seed=seed)
    for point in points:
        stroke.add([point])
    stroke.end()


def paint_undo_redo(doc, brush: str, strokes: int):
    """Paint random strokes event by event; every single undo brings back the state
    after the stroke before, every redo the state after the stroke, bit for bit."""
    if brush == "restore":  # something to restore: a wide eraser stroke over the whole take
        paint(doc, "gain", [StrokePoint(0.0, 2000.0), StrokePoint(2.0, 2000.0)],
              params={"gain_db": -40.0, "radius_ms": 100.0, "radius_hz": 2500.0})
    history = History(doc)
    states = [digest(doc)]
    r = random.Random(brush)
    for _ in range(strokes):
        steps = len(history.steps)
        paint_by_events(doc, brush, *random_stroke(r, brush), history, r.randrange(1000))
        if len(history.steps) > steps:
            states.append(digest(doc))
        else:  # no step: the stroke must have changed nothing
            assert digest(doc) == states[-1]
    assert states[-1] != states[0]
    for k in range(len(history.steps) - 1, -1, -1):
        history.undo()
        assert digest(doc) == states[k], f"undo to after stroke {k}"
    for k in range(1, len(history.steps) + 1):
        history.redo()
        assert digest(doc) == states[k], f"redo of stroke {k}"


def test_a_stroke_that_fails_midway_is_rolled_back_and_leaves_no_step(rng, monkeypatch):
    doc = document(rng.uniform(-0.5, 0.5, (2, 16000)), n_fft=256)
    history, before = History(doc), digest(doc)
    dabs = fail_gain_at(monkeypatch, 4)
    with pytest.raises(RuntimeError, match="device lost"):
        paint_by_events(doc, "gain", [StrokePoint(0.1 * i, 1000.0) for i in range(10)],
                        {"gain_db": -30.0}, history, 0)
    assert len(dabs) == 4 and digest(doc) == before and not history.steps


@pytest.mark.slow
@pytest.mark.parametrize("brush", list(BRUSHES))
def test_1000_random_strokes_undo_and_redo_bit_exactly(brush, rng):
    paint_undo_redo(document(rng.uniform(-0.5, 0.5, (2, 16000)), n_fft=256), brush, 1000)


@pytest.mark.slow
@pytest.mark.parametrize("brush", ["gain", "heal", "tone", "warp", "harmonic"])
def test_random_strokes_on_a_constant_q_document_undo_and_redo_bit_exactly(brush, rng):
    doc = document(rng.uniform(-0.5, 0.5, (2, 24000)), transform="cq")  # two slices
    paint_undo_redo(doc, brush, 60)


def test_one_stroke_is_one_step_and_a_new_stroke_drops_the_redo_tail(rng):
    doc = document(rng.uniform(-0.5, 0.5, (1, 16000)))
    history = History(doc)
    long_stroke = [StrokePoint(0.1 * i, 500 + 100 * i) for i in range(15)]
    paint(doc, "gain", long_stroke, params={"gain_db": -20.0}, history=history)
    paint(doc, "blur", long_stroke, params={}, history=history)
    assert len(history.steps) == 2
    history.undo()
    paint(doc, "noise", long_stroke[:3], params={}, history=history)
    assert [s.label for s in history.steps] == ["gain stroke", "noise stroke"]
    assert not history.can_redo


def test_memory_cap_drops_the_oldest_with_a_warning(rng):
    doc = document(rng.uniform(-0.5, 0.5, (1, 16000)))
    history = History(doc, limit_bytes=1_000_000)
    with pytest.warns(RuntimeWarning, match="oldest step .*can no longer be undone"):
        for i in range(20):
            paint(doc, "gain", [StrokePoint(0.1 * i, 300.0), StrokePoint(0.1 * i, 3000.0)],
                  params={"gain_db": -6.0}, history=history)
    assert history.nbytes <= 1_000_000 and history.dropped > 0
    assert len(history.steps) == 20 - history.dropped


def test_undo_is_heard_through_incremental_resynthesis(rng):
    from engine.model.resynth import Resynthesizer

    x = rng.uniform(-0.5, 0.5, (2, 16000)).astype(np.float32)
    doc = document(x)
    synth = Resynthesizer(doc)
    clean = synth.full().numpy().copy()
    history = History(doc)
    paint(doc, "gain", [StrokePoint(0.5, 1000), StrokePoint(1.0, 1000)],
          params={"gain_db": float("-inf")}, history=history)
    assert not np.array_equal(synth.waveform(), clean)
    history.undo()
    np.testing.assert_array_equal(synth.waveform(), clean)


def test_a_strokes_end_copies_no_cells_until_it_is_undone(rng):
    """The after-cells of a step are in the document until it is first undone: ending
    a long stroke copies nothing (it read every tile again on the GUI thread)."""
    doc = document(rng.uniform(-0.5, 0.5, (1, 16000)))
    history = History(doc)
    step = paint(doc, "gain", [StrokePoint(0.1, 500.0), StrokePoint(1.5, 2500.0)],
                 params={"gain_db": -20.0}, history=history)
    painted = doc.coefficients(0, doc.n_frames).clone()
    assert step.patches and all(p.after is None for p in step.patches)
    assert step.nbytes == sum(p.before.numel() * p.before.element_size() for p in step.patches)
    history.undo()
    assert all(p.after is not None for p in step.patches)
    history.redo()
    assert torch.equal(doc.coefficients(0, doc.n_frames), painted)


@pytest.mark.parametrize("mode", ["attenuate", "steady"])
def test_a_heal_stroke_that_covers_nothing_changes_nothing(rng, mode):
    """At opacity 0 the stroke covers no cell: its end repairs nothing (it raised when
    the repair was confined to the covered frames, of which there were none)."""
    doc = document(rng.uniform(-0.5, 0.5, (1, 16000)))
    history, before = History(doc), digest(doc)
    paint(doc, "heal", [StrokePoint(0.5, 1000.0), StrokePoint(1.0, 1000.0)],
          params={"opacity": 0.0, "mode": mode}, history=history)
    assert digest(doc) == before


def test_a_stroke_on_the_last_frame_of_a_mono_file_undoes_and_redoes_exactly():
    """A one-frame read of a one-channel document was the live cells themselves
    (contiguous() returns a contiguous view as it is): undo kept that view as the
    patch's after, and redo wrote the cells before the stroke back."""
    from engine.io.audio import Audio
    from engine.model.document import Document

    rng = np.random.default_rng(3)
    doc = Document(Audio((0.1 * rng.standard_normal((1, 512 * 64))).astype(np.float32), 8000),
                   device="cpu")
    history = History(doc)
    before = doc.mix.clone()
    end = doc.length / 8000
    paint(doc, "gain", [StrokePoint(end, 1000.0, 1.0)], history=history,
          params={"gain_db": -40.0, "radius_ms": 1.0, "radius_hz": 4000.0, "hardness": 1.0})
    after = doc.mix.clone()
    assert not torch.equal(after, before)
    history.undo()
    assert torch.equal(doc.mix, before)
    history.redo()
    assert torch.equal(doc.mix, after)
