"""Projects keep layers (version 4): a layered document and its undo history come back
bit for bit; a document without layers saves as before; a hostile layers section is
one ProjectError."""

import json
import zipfile

import numpy as np
import pytest

from app.project.saved_history import keep_within
from app.project.write import ProjectError, load_project, save_project, snapshot
from brushes.path import StrokePoint
from brushes.stroke import paint
from engine.model.history import History
from tests.layer_docs import digest, noisy_doc
from tests.projects import AllTiles, build, layered, refused


def test_a_layered_project_and_its_history_come_back_bit_for_bit(tmp_path):
    doc, history = layered()
    states = []
    while history.can_undo:
        states.append(digest(doc))
        history.undo()
    states.append(digest(doc))
    for _ in states[1:]:
        history.redo()
    assert digest(doc) == states[0]
    kept = keep_within(history.steps, history.position)
    path = save_project(tmp_path / "layers.spp", snapshot(doc, AllTiles(doc), kept), {}).path
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
    assert manifest["version"] == 5 and 1 <= len(manifest["edited_rects"]) <= 2  # the stroke
    opened = load_project(path, device="cpu")
    again = opened.doc
    assert digest(again) == states[0]
    assert [x.name for x in again.layers.state.layers] == \
        [x.name for x in doc.layers.state.layers]
    assert again.layers.next_id == doc.layers.next_id  # no new layer takes a kept one's id
    assert all(x.id < again.layers.next_id for s in states_of(opened.history.steps)
               for x in s.layers)
    reopened = History(again)
    reopened.steps, reopened.position = opened.history.steps, opened.history.index
    for expected in states[1:]:
        reopened.undo()
        assert digest(again) == expected
    assert again.layers.plain
    while reopened.can_redo:
        reopened.redo()
    history.redo()  # the step that was undone when it was saved
    assert digest(again) == digest(doc)


def states_of(steps) -> list:
    return [s for step in steps if step.stack is not None for s in step.stack]


def test_a_project_without_layers_keeps_no_layer_table(tmp_path):
    doc = noisy_doc()
    paint(doc, "gain", [StrokePoint(0.4, 800), StrokePoint(0.9, 900)], params={"gain_db": -20})
    path = save_project(tmp_path / "plain.spp", snapshot(doc, AllTiles(doc)), {}).path
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
    assert "layers" not in manifest
    again = load_project(path, device="cpu").doc
    assert again.layers.plain and digest(again) == digest(doc)


def _changed(manifest, change):
    out = json.loads(json.dumps(manifest))
    change(out)
    return out


@pytest.mark.parametrize("change,match", [
    (lambda m: m["layers"]["sources"].append({"kind": "tiled", "base": 10**6, "tiles": []}),
     "layer source"),
    (lambda m: m["layers"]["sources"].insert(0, {"kind": "masked", "parent": 0, "masks": [0],
                                                 "index": 0}), "layer source 0"),
    (lambda m: m["layers"]["states"][0]["layers"][0].update(gain=float("1e300")), "layer state"),
    (lambda m: m["layers"]["states"][0]["layers"][0].update(name=""), "layer state"),
    (lambda m: m["layers"]["states"][0].update(active=99), "layer state"),
    (lambda m: m["layers"].update(current=-1), "layers"),
    (lambda m: m["layers"].update(written=[[[5, 3]]]), "layers"),  # written frames: a span
    (lambda m: m["layers"].update(written=[[[0, "9"]]]), "layers"),  # backwards, not a number
    (lambda m: m["layers"].update(written=[[]] * 3), "written frames do not fit"),  # 3 channels
    (lambda m: m["layers"].update(written=[[[0, 10**9]], []]), "written frames do not fit"),
    (lambda m: m["history"]["steps"][1].update(stack=[0, 999]), "history step 1"),
    (lambda m: m.update(version=3), "layers in a version 3 project"),
])
def test_a_hostile_layers_section_is_refused(tmp_path, valid_layers, change, match):
    manifest, arrays = valid_layers
    refused(build(tmp_path / "bad.spp", _changed(manifest, change), arrays), match)


@pytest.mark.parametrize("array,value,match", [
    ("layer_mask_0", lambda a: np.zeros((2, 3, 4), np.uint16), "layer_mask_0 is"),
    ("layer_mask_0", lambda a: np.zeros((2, 3, 4), np.float32), "not uint16"),
    ("layer_tiles", lambda a: np.zeros((5, 2), np.float32), "layer_tiles holds"),
    # masks of one unmix adding up past one share; tiles past any sound
    ("layer_mask_0", lambda a: np.full_like(a, 65535), "add up to more than one"),
    ("layer_tiles", lambda a: np.full_like(a, 1e30), "layer_tiles holds values past"),
])
def test_layer_arrays_that_do_not_fit_are_refused(tmp_path, valid_layers, array, value, match):
    manifest, arrays = valid_layers
    refused(build(tmp_path / "bad.spp", manifest, {**arrays, array: value(arrays[array])}),
            match)


def test_a_project_cannot_hide_a_tile_outside_the_document(tmp_path, valid_layers):
    manifest, arrays = valid_layers

    def far(m):
        tiled = next(s for s in m["layers"]["sources"] if s["kind"] == "tiled" and s["tiles"])
        tiled["tiles"][0] = [10**6, 0]
    with pytest.raises(ProjectError, match="outside the document"):
        load_project(build(tmp_path / "far.spp", _changed(manifest, far), arrays), device="cpu")


def _on_top(m, made):
    """``made(first)``'s sources appended to the table, the last one (a tiled) made the
    bottom layer's content in the current state."""
    sources = m["layers"]["sources"]
    sources.extend(made(len(sources)))
    m["layers"]["states"][0]["layers"][0]["content"] = len(sources) - 1


def _silence(m) -> int:
    return next(i for i, s in enumerate(m["layers"]["sources"]) if s["kind"] == "silence")


def _tiled_chain(m):  # each tiled over the one before: a recursion 5000 deep
    first = _silence(m)
    _on_top(m, lambda b: [{"kind": "tiled", "base": b + i - 1 if i else first, "tiles": []}
                          for i in range(5000)])


def _summed(count, gain, twice):
    def change(m):  # each summing the one before (twice: 2**count sources in one read)
        def made(b):
            out = []
            for i in range(count):
                below = b + i - 1 if i else 0
                out.append({"kind": "summed", "parts": [[below, gain]] * (2 if twice else 1)})
            return out + [{"kind": "tiled", "base": b + count - 1, "tiles": []}]
        _on_top(m, made)
    return change


def _many_masks(m):
    _on_top(m, lambda b: [{"kind": "masked", "parent": 0, "masks": [0] * 100_000,
                           "index": 100_000}, {"kind": "tiled", "base": b, "tiles": []}])


def _step_on_a_missing_layer(m):
    for step in m["history"]["steps"]:
        if step["stack"] is None and step["patches"]:
            step["layer"] = 12345


def _marks_far_past_the_file(m):  # a separation after opening split the path in 1e303 pieces
    masked = next(s for s in m["layers"]["sources"] if s["kind"] == "masked")
    masked["recipe"] = {"method": f"nmf:{len(masked['masks']) + 1}", "marks": [
        {"part": 0, "points": [[0, 440], [1e300, 440]], "radius_ms": 1, "radius_hz": 1}]}


@pytest.mark.parametrize("change,match", [
    (_tiled_chain, "65 deep"),
    (_marks_far_past_the_file, "layer source"),
    (_summed(60, 1.0, True), "in all"),
    (_summed(40, 4.0, False), "amplifies"),
    (_many_masks, "layer source"),
    (_step_on_a_missing_layer, "layer 12345, which its layers do not hold"),
])
def test_a_hostile_layer_table_is_refused_at_once(tmp_path, valid_layers, change, match):
    """Each case crashed (RecursionError), hung (2**60 reads), opened with a NaN mix or
    a level 16000 times too high, or opened with a step whose undo raised."""
    manifest, arrays = valid_layers
    refused(build(tmp_path / "bad.spp", _changed(manifest, change), arrays), match)


@pytest.mark.parametrize("name", ["layer_mask_x", "layer_mask_\u00b2", "layer_mask_01"])
def test_an_array_named_like_a_mask_but_not_one_is_refused(tmp_path, valid_layers, name):
    manifest, arrays = valid_layers
    refused(build(tmp_path / "bad.spp", manifest, {**arrays, name: arrays["layer_mask_0"]}),
            "an array named")


def test_masks_shared_by_two_unmixes_are_refused(tmp_path, valid_layers):
    manifest, arrays = valid_layers

    def other_group(m):
        masked = next(s for s in m["layers"]["sources"] if s["kind"] == "masked")
        _on_top(m, lambda b: [{**masked, "masks": masked["masks"][:1], "index": 0},
                              {"kind": "tiled", "base": b, "tiles": []}])
    refused(build(tmp_path / "bad.spp", _changed(manifest, other_group), arrays),
            "shares a mask")
