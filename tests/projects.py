"""Project files for the tests: a good project's members to spoil, one built from
members, one refused as it should be, and a layered document with its history."""

import io
import json
import random
import time
import zipfile

import numpy as np
import pytest

from app.project.write import ProjectError, open_project
from app.session import layer_ops as ops
from app.session.selection import Selection
from brushes.path import StrokePoint
from brushes.stroke import paint
from engine.model.history import History
from tests.layer_docs import noisy_doc, random_masks


class Tracker:  # a project with one edited tile: what app.project.write.EditTracker reports
    def __init__(self, doc):
        from engine.region import Rect

        self.doc = doc
        self.rect = Rect(0, 64, 0, 16).clip(doc.n_bins, doc.n_frames)

    def rects(self):
        return [self.rect]


def as_version_5(doc, manifest, arrays):
    """The project as version 5 stored it (which still opens): the edited tile's cells
    as they are (version 6 stores what differs from what is re-derived, app.project.cell_walk)
    and the audio as float32 (version 7 packs it), which the tests below spoil."""
    from app.project.read import cells_digest

    z = doc.read_complex(Tracker(doc).rect).numpy()
    arrays = {k: v for k, v in arrays.items() if not k.startswith(("cells_", "audio_packed"))}
    arrays["audio"] = doc.audio.samples
    arrays["re_0"], arrays["im_0"] = z.real.copy(), z.imag.copy()
    manifest = {k: v for k, v in manifest.items() if k != "audio_shape"}
    manifest["version"] = 5
    return {**manifest, "cells_sha256": cells_digest(manifest, arrays)}, arrays


def build(path, manifest=None, arrays=None, *, manifest_bytes=None, npz_bytes=None,
          compression=zipfile.ZIP_STORED):
    if npz_bytes is None:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        npz_bytes = buffer.getvalue()
    with zipfile.ZipFile(path, "w", compression) as z:
        z.writestr("manifest.json", manifest_bytes if manifest_bytes is not None
                   else json.dumps(manifest))
        z.writestr("arrays.npz", npz_bytes)
    return path


def refused(path, match):
    t0 = time.perf_counter()
    with pytest.raises(ProjectError, match=match) as e:
        open_project(path, device="cpu")
    assert time.perf_counter() - t0 < 10
    assert "\n" not in str(e.value) and str(path) in str(e.value)
    return str(e.value)


class AllTiles:  # what app.project.write.EditTracker reports after edits everywhere
    def __init__(self, doc):
        self.doc = doc

    def rects(self):
        return [self.doc.full_rect()]


def layered(seed: int = 0):
    """A document painted, unmixed, moved and mixed, with its history."""
    doc = noisy_doc(seed)
    history = History(doc)
    stroke = [StrokePoint(0.4, 800), StrokePoint(0.9, 900)]
    paint(doc, "gain", stroke, params={"gain_db": -20}, history=history)  # before layers
    ops.unmix_into(doc, random_masks(doc, random.Random(seed), 3), ["a", "b", "c"],
                   label="unmix", history=history)
    paint(doc, "blur", stroke, params={"radius_ms": 50}, history=history)
    ops.selection_to_layer(doc, Selection.rect(1.0, 1.5, f_lo=200, f_hi=2000), history=history)
    ops.set_mixing(doc, doc.layers.active.id, gain=0.5, invert=True, history=history)
    ops.new_layer(doc, name="empty", history=history)
    ops.merge_down(doc, history=history)
    ops.duplicate_layer(doc, layer=doc.layers.state.layers[0].id, history=history)
    ops.rename_layer(doc, doc.layers.active.id, "copy of a", history=history)
    paint(doc, "gain", stroke, params={"gain_db": -6}, history=history)
    history.undo()  # one undone step is kept too
    return doc, history


