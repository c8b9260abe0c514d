"""Layers in the document (engine.model.layer_stack, app.session.layer_ops): the mix is the
sum of the audible layers after every operation, every operation is one undo step, undo and redo
are bit for bit, painting acts on the active layer only, and a document with one
layer is today's."""

import random

import numpy as np
import pytest
import torch

from app.session import layer_ops as ops
from app.session.selection import Selection
from brushes.path import StrokePoint
from brushes.stroke import paint
from engine.errors import ParameterError
from engine.model.history import History
from engine.model.resynth import Resynthesizer, layer_audio
from tests.layer_docs import cells, digest, noisy_doc, random_masks


def float64_mix(doc) -> torch.Tensor:
    out = torch.zeros(cells(doc, doc.layers.active.id).shape, dtype=torch.complex128)
    for layer in doc.layers.state.audible():
        out += cells(doc, layer.id).to(torch.complex128) * layer.factor
    return out


def random_selection(r: random.Random) -> Selection:
    t0 = r.uniform(0, 1.6)
    f0 = r.uniform(0, 3000)
    return Selection.rect(t0, t0 + r.uniform(0.05, 0.6), f_lo=f0, f_hi=f0 + r.uniform(50, 1500),
                          feather_ms=r.choice([0.0, 20.0]), inverted=r.random() < 0.15)


def random_operation(doc, r: random.Random, history: History) -> None:
    state = doc.layers.state
    some = r.choice(state.layers).id
    op = r.choice(["new", "duplicate", "delete", "move", "rename", "mixing", "merge",
                   "selection", "unmix", "stroke", "stroke", "activate"])
    if op == "new":
        ops.new_layer(doc, history=history)
    elif op == "duplicate":
        ops.duplicate_layer(doc, layer=some, history=history)
    elif op == "delete" and len(state.layers) > 1:
        ops.delete_layer(doc, layer=some, history=history)
    elif op == "move":
        ops.move_layer(doc, some, r.randrange(len(state.layers)), history=history)
    elif op == "rename":
        ops.rename_layer(doc, some, f"name {r.randrange(100)}", history=history)
    elif op == "mixing":
        key = r.choice(["gain", "invert", "mute", "solo"])
        value = r.uniform(0, 2) if key == "gain" else r.random() < 0.5
        ops.set_mixing(doc, some, **{key: value}, history=history)
    elif op == "merge" and state.active > 0:
        ops.merge_down(doc, history=history)
    elif op == "selection":
        ops.selection_to_layer(doc, random_selection(r), move=r.random() < 0.7,
                               channel=r.choice([None, 0, 1]), history=history)
    elif op == "unmix":
        k = r.randint(2, 3)
        ops.unmix_into(doc, random_masks(doc, r, k), [f"part {i}" for i in range(k)],
                       label="unmix", history=history)
    elif op == "stroke":
        t, f = r.uniform(0, 2), r.uniform(0, 4000)
        brush = r.choice(["gain", "restore", "blur", "noise"])
        paint(doc, brush, [StrokePoint(t, f), StrokePoint(t + r.uniform(0, 0.3), f)],
              params={"radius_ms": r.uniform(10, 80), "radius_hz": r.uniform(50, 500),
                      "channel": r.choice([-1, 0, 1])}, history=history, seed=r.randrange(99))
    elif op == "activate":
        ops.activate(doc, some)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_operations_keep_the_mix_and_undo_bit_for_bit(seed):
    doc = noisy_doc(seed)
    history = History(doc)
    r = random.Random(seed)
    states = [digest(doc)]
    for _ in range(30):
        before = len(history.steps)
        random_operation(doc, r, history)
        peak = float(float64_mix(doc).abs().max())
        assert float((doc.mix.to(torch.complex128).transpose(1, 2) - float64_mix(doc))
                     .abs().max()) <= 1e-5 * max(peak, 1e-9)
        assert torch.isfinite(torch.view_as_real(doc.mix)).all()
        if len(history.steps) > before:
            states.append(digest(doc))
    assert len(states) > 15
    for i in range(len(history.steps), 0, -1):
        history.undo()
        assert digest(doc) == states[i - 1], f"undo to step {i - 1}"
    assert doc.layers.plain and doc.layers.nbytes == 0
    for i in range(1, len(history.steps) + 1):
        history.redo()
        assert digest(doc) == states[i], f"redo of step {i}"


def test_a_document_with_one_layer_is_todays():
    doc = noisy_doc()
    assert doc.layers.plain and doc.layers.nbytes == 0
    assert doc.layers.active.content.tensor is doc.cells
    before = doc.nbytes
    paint(doc, "gain", [StrokePoint(0.5, 1000), StrokePoint(1.0, 1000)], params={"gain_db": -20})
    assert doc.layers.plain and doc.nbytes == before


def test_a_stroke_on_a_layer_changes_that_layer_and_the_mix_in_its_rect_only():
    doc = noisy_doc()
    history = History(doc)
    ops.unmix_into(doc, random_masks(doc, random.Random(5), 3), ["a", "b", "c"], label="unmix",
                   history=history)
    ops.new_layer(doc, history=history)
    ops.activate(doc, next(x.id for x in doc.layers.state.layers if x.name == "b"))
    others = {x.id: cells(doc, x.id) for x in doc.layers.state.layers}
    mix = doc.mix.clone()
    step = paint(doc, "gain", [StrokePoint(0.5, 1000), StrokePoint(0.8, 1200)],
                 params={"gain_db": -30, "radius_ms": 40, "radius_hz": 200}, history=history)
    rect = step.dirty()
    painted = doc.layers.active.id
    for layer_id, was in others.items():
        now = cells(doc, layer_id)
        if layer_id != painted:
            assert torch.equal(now, was)
        else:
            assert not torch.equal(now, was)
            outside = torch.ones(now.shape[1:], dtype=torch.bool)
            outside[rect.bins, rect.frames] = False
            assert torch.equal(now[:, outside], was[:, outside])
    inside = torch.zeros(mix.shape[1:], dtype=torch.bool)
    inside[rect.frames, rect.bins] = True
    assert torch.equal(doc.mix[:, ~inside], mix[:, ~inside])
    assert not torch.equal(doc.mix[:, inside], mix[:, inside])


def test_a_layer_holds_only_the_tiles_that_differ_from_its_base():
    """An undone stroke leaves its layer no tile: each written back to its base's cells
    is dropped (without that the layer kept every tile it was ever painted in)."""
    doc = noisy_doc()
    history = History(doc)
    ops.unmix_into(doc, random_masks(doc, random.Random(6), 2), ["a", "b"], label="unmix",
                   history=history)
    layer = doc.layers.active
    assert not layer.content.tiles
    paint(doc, "gain", [StrokePoint(0.2, 500), StrokePoint(1.5, 3000)],
          params={"gain_db": -20, "radius_ms": 60, "radius_hz": 300}, history=history)
    painted = len(doc.layers.layer(layer.id).content.tiles)
    assert painted >= 4
    history.undo()
    assert not doc.layers.layer(layer.id).content.tiles
    history.redo()
    assert len(doc.layers.layer(layer.id).content.tiles) == painted


@pytest.mark.slow
def test_merges_of_merges_and_copies_of_copies_stay_shallow():
    """Each merge wrapped its layers in one more sum and each duplicate in one more
    tiling: reads cost more at every merge and at ~990 merges painting raised
    RecursionError (the review's merge_chain). Past NEST_LIMIT a source becomes
    tiles of its cells: the same bits, undone bit for bit."""
    from engine.model.layer_sources import NEST_LIMIT, depth

    doc = noisy_doc(seconds=1.0)
    history = History(doc)
    states = [digest(doc)]
    for i in range(30):
        ops.new_layer(doc, history=history)
        paint(doc, "gain", [StrokePoint(0.1 + 0.02 * i, 500), StrokePoint(0.3, 900)],
              params={"gain_db": 6}, history=history)
        ops.set_mixing(doc, 0, gain=0.9, history=history)
        ops.merge_down(doc, history=history)
        ops.duplicate_layer(doc, history=history)
        ops.rename_layer(doc, doc.layers.active.id, f"copy {i}", history=history)
        ops.set_mixing(doc, doc.layers.active.id, invert=i % 2 == 0, history=history)
        states += [None] * 6 + [digest(doc)]
    for layer in doc.layers.state.layers:
        assert depth(layer.content) <= NEST_LIMIT + 3 and depth(layer.origin) <= NEST_LIMIT + 3
    peak = float(float64_mix(doc).abs().max())
    assert float((doc.mix.to(torch.complex128).transpose(1, 2) - float64_mix(doc))
                 .abs().max()) <= 1e-5 * peak
    for i in range(len(history.steps), 0, -1):
        history.undo()
        if states[i - 1] is not None:
            assert digest(doc) == states[i - 1]


def test_the_mix_sounds_as_the_sum_of_its_layers():
    doc = noisy_doc()
    history = History(doc)
    ops.unmix_into(doc, random_masks(doc, random.Random(2), 2), ["a", "b"], label="unmix",
                   history=history)
    ops.selection_to_layer(doc, Selection.rect(0.3, 0.9, f_lo=300, f_hi=900), history=history)
    a, b, moved = (x.id for x in doc.layers.state.layers)
    ops.set_mixing(doc, a, gain=0.5, history=history)
    ops.set_mixing(doc, moved, invert=True, history=history)
    ops.set_mixing(doc, b, mute=True, history=history)
    mix = Resynthesizer(doc).full().numpy()
    summed = 0.5 * layer_audio(doc, layer=a) - layer_audio(doc, layer=moved)
    assert np.abs(mix - summed).max() <= 1e-5 * np.abs(summed).max()
    ops.set_mixing(doc, moved, solo=True, history=history)
    solo = Resynthesizer(doc).full().numpy()
    assert np.abs(solo + layer_audio(doc, layer=moved)).max() <= 1e-6


def test_an_unmix_sums_to_its_source_and_keeps_the_mix():
    doc = noisy_doc()
    source = cells(doc, 0)
    audio = Resynthesizer(doc).full().numpy().copy()
    ops.unmix_into(doc, random_masks(doc, random.Random(3), 4), list("abcd"), label="unmix")
    total = sum(cells(doc, x.id) for x in doc.layers.state.layers)
    scale = float(source.abs().max())
    assert float((total - source).abs().max()) <= 4 * 2 ** -23 * scale
    after = Resynthesizer(doc).full().numpy()
    assert np.abs(after - audio).max() <= 1e-6 * np.abs(audio).max()


def test_selection_to_layer_moves_or_copies():
    doc = noisy_doc()
    before = cells(doc, 0)
    sel = Selection.rect(0.5, 1.0, f_lo=400, f_hi=600)
    ops.selection_to_layer(doc, sel, move=False)
    copy = doc.layers.active
    assert torch.equal(cells(doc, 0), before)  # a copy leaves the source
    weight = sel.mask(doc, doc.full_rect())
    assert torch.allclose(cells(doc, copy.id)[0], before[0] * weight, atol=1e-6)
    ops.activate(doc, 0)
    ops.selection_to_layer(doc, sel, move=True)
    moved = doc.layers.active
    left = cells(doc, 0) + cells(doc, moved.id)
    assert float((left - before).abs().max()) <= 2 ** -22 * float(before.abs().max())
    assert sorted(moved.content.tiles) and len(moved.content.tiles) < 0.3 * (
        -(-doc.n_bins // 64)) * (-(-doc.n_frames // 64)) * 2  # tiles it has content in


def _randomly_mixed(seed: int):
    """Three layers (the recording, a part moved out of it, a new one painted) with
    random gains, inversions, mutes and solos; the generator for what follows."""
    r = random.Random(seed)
    doc = noisy_doc(seed)
    ops.selection_to_layer(doc, random_selection(r), move=True)
    ops.new_layer(doc)
    paint(doc, "gain", [StrokePoint(0.3, 500), StrokePoint(1.2, 900)], params={"gain_db": 6})
    for layer in doc.layers.state.layers:
        ops.set_mixing(doc, layer.id, gain=r.choice([0.0, 0.25, 1.0, 3.0]),
                       invert=r.random() < 0.5, mute=r.random() < 0.3, solo=r.random() < 0.25)
    return doc, r


def _change(doc, before: torch.Tensor) -> float:
    return float((doc.mix - before).abs().max() / before.abs().max().clamp(min=1e-12))


@pytest.mark.parametrize("seed", range(12))
def test_moves_and_merges_keep_the_mix_whatever_the_layers_mixing(seed):
    """A selection moved out of an inverted, quieter, muted or soloed layer, and a merge
    down of any two layers so mixed, keep the mix (the review's mixing_ops: 2.0 of the
    peak for a move out of an inverted layer; 1.0 for a merge with the lower muted)."""
    doc, r = _randomly_mixed(seed)
    for _ in range(3):
        ops.activate(doc, r.choice(doc.layers.state.layers).id)
        before, silent = doc.mix.clone(), not bool(doc.mix.abs().max())
        ops.selection_to_layer(doc, random_selection(r), move=True)
        assert _change(doc, before) <= 2 ** -20 or silent and not doc.mix.abs().max()
    while len(doc.layers.state.layers) > 1:
        ops.activate(doc, r.choice(doc.layers.state.layers[1:]).id)
        before, silent = doc.mix.clone(), not bool(doc.mix.abs().max())
        ops.merge_down(doc)
        assert _change(doc, before) <= 2 ** -20 or silent and not doc.mix.abs().max()


@pytest.mark.parametrize("mixing", [{"invert": True}, {"gain": 0.25}, {"mute": True},
                                    {"gain": 3.0, "invert": True}])
def test_restore_on_a_merged_layer_never_painted_keeps_the_mix(mixing):
    """Restore paints back what the merge made (the review's restore_merged: the mix
    was flipped for an inverted lower layer, x4 for one at gain 0.25)."""
    doc = noisy_doc()
    ops.selection_to_layer(doc, Selection.rect(0.5, 1.0, f_lo=300, f_hi=900), move=False)
    ops.set_mixing(doc, 0, **mixing)
    ops.merge_down(doc)
    before = doc.mix.clone()
    everywhere = {"radius_ms": 300, "radius_hz": 5000, "hardness": 1.0}
    paint(doc, "restore", [StrokePoint(0.0, 2000), StrokePoint(2.0, 2000)], params=everywhere)
    assert _change(doc, before) <= 2 ** -20


def test_restore_paints_back_the_layers_own_origin():
    doc = noisy_doc()
    ops.unmix_into(doc, random_masks(doc, random.Random(4), 2), ["a", "b"], label="unmix")
    a = doc.layers.active.id
    made = cells(doc, a)
    everywhere = [StrokePoint(0.0, 2000), StrokePoint(2.0, 2000)]
    wide = {"radius_ms": 200, "radius_hz": 4000, "hardness": 1.0}
    paint(doc, "gain", everywhere, params={**wide, "gain_db": -60})
    assert float(cells(doc, a).abs().max()) < 0.01 * float(made.abs().max())
    paint(doc, "restore", everywhere, params=wide)
    assert torch.allclose(cells(doc, a), made, atol=1e-6 * float(made.abs().max()))


def test_operations_refuse_what_cannot_be_done():
    doc = noisy_doc()
    with pytest.raises(ParameterError, match="only layer"):
        ops.delete_layer(doc)
    with pytest.raises(ParameterError, match="nothing below"):
        ops.merge_down(doc)
    with pytest.raises(ParameterError, match="gain"):
        ops.set_mixing(doc, 0, gain=float("nan"))
    with pytest.raises(ParameterError, match="name"):
        ops.rename_layer(doc, 0, "  ")
    with pytest.raises(ParameterError, match="no layer 7"):
        ops.activate(doc, 7)
    assert doc.layers.plain


def test_a_repair_acts_on_the_active_layers_audio_alone():
    from app.session.repairs import repair

    doc = noisy_doc()
    mix = Resynthesizer(doc).full().numpy()
    ops.new_layer(doc)
    report = repair(doc, mix, "denoise", settings={"amount_db": 20})
    assert not report.changed  # the new layer is silent: nothing to repair
    ops.activate(doc, 0)
    a = cells(doc, doc.layers.state.layers[1].id)
    report = repair(doc, mix, "denoise", settings={"amount_db": 20})
    assert report.changed and report.step.layer == 0
    assert torch.equal(cells(doc, doc.layers.state.layers[1].id), a)
    assert np.abs(layer_audio(doc, layer=0)).max() <= np.abs(mix).max() * 1.01


def test_a_deferred_remix_a_piece_at_a_time_gives_the_same_bits():
    """The GUI recomputes the mix a piece a turn (LayerStack.deferred): once done, every
    state is the one the immediate remix gives, bit for bit, undo included."""
    import time

    def run(deferred: bool) -> list[str]:
        doc = noisy_doc(4)
        doc.layers.deferred = deferred
        history, r, states = History(doc), random.Random(4), []
        for _ in range(15):
            random_operation(doc, r, history)
            while doc.remix_some(time.perf_counter() + 1e-4):
                pass
            states.append(digest(doc))
        while history.can_undo:
            history.undo()
            doc.remix_some()
            states.append(digest(doc))
        return states

    assert run(True) == run(False)


def test_a_mix_prepared_for_layers_is_the_mix_it_becomes():
    """LayerStack.prepare_layers (a worker's copy of the mix, made before a first layer)
    gives the same bits as the copy made when the layer comes, and is not taken where
    the mix was written after it."""
    for write_between in (False, True):
        plain, prepared = noisy_doc(3), noisy_doc(3)
        prepared.layers.prepare_layers()
        for doc in (plain, prepared) if write_between else ():
            doc.layers.write(doc.full_rect(), torch.zeros_like(doc.mix), slice(None))
        copy = prepared.layers._prepared[1]
        ops.new_layer(plain)
        ops.new_layer(prepared)
        assert digest(prepared) == digest(plain)
        assert (prepared.mix.data_ptr() == copy.data_ptr()) is not write_between
        assert prepared.layers._prepared is None
