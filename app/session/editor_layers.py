"""The layers of an :class:`app.session.editor.Editor`, for scripts:

    ed = Editor.open("take.wav")
    ed.unmix("hpss")                       # three layers: harmonic, percussive, residual
    ed.layers.mix("Recording percussive", gain=0.5)
    ed.layers.activate("Recording harmonic")
    ed.paint("hard-eraser", [(1.0, 1000), (2.0, 1000)])   # on the active layer
    ed.export_stems("stems/")              # one file per layer, beside the mix

A layer is named by its name or its id; operations are undo steps (app.session.layer_ops).
"""

import dataclasses
import re
from pathlib import Path

import numpy as np

from app.session import layer_ops as ops
from app.session import stem_set
from app.session.selection import Selection
from engine.errors import ParameterError
from engine.io.export import ExportReport, export
from engine.model.document import Document
from engine.model.layer_sources import Masked, Tiled
from engine.model.layer_stack import Layer
from engine.model.resynth import layer_audio

LayerRef = int | str | None


class EditorLayers:
    """A sequence of the editor's layers (engine.model.layer_stack.Layer, bottom first) and what
    can be done with them."""

    def __init__(self, editor):
        self._ed = editor

    @property
    def _doc(self):
        return self._ed.doc

    def __len__(self) -> int:
        return len(self._doc.layers.state.layers)

    def __getitem__(self, index: int) -> Layer:
        return self._doc.layers.state.layers[index]

    def __iter__(self):
        return iter(self._doc.layers.state.layers)

    @property
    def active(self) -> Layer:
        return self._doc.layers.active

    def id_of(self, layer: LayerRef) -> int | None:
        """The id of the layer named ``layer`` (a name or an id; None: the active one)."""
        if layer is None:
            return None
        for x in self:
            if x.id == layer if isinstance(layer, int) else x.name == layer:
                return x.id
        raise ParameterError(f"no layer {layer!r}; the layers are "
                             f"{', '.join(repr(x.name) for x in self)}")

    def activate(self, layer: LayerRef) -> None:
        """Paint on this layer from now on."""
        ops.activate(self._doc, self.id_of(layer))

    def new(self, name: str | None = None) -> Layer:
        ops.new_layer(self._doc, name=name, history=self._ed.history)
        return self.active

    def duplicate(self, layer: LayerRef = None) -> Layer:
        ops.duplicate_layer(self._doc, layer=self.id_of(layer), history=self._ed.history)
        return self.active

    def delete(self, layer: LayerRef = None) -> None:
        ops.delete_layer(self._doc, layer=self.id_of(layer), history=self._ed.history)

    def move(self, layer: LayerRef, index: int) -> None:
        ops.move_layer(self._doc, self.id_of(layer), index, history=self._ed.history)

    def rename(self, layer: LayerRef, name: str) -> None:
        ops.rename_layer(self._doc, self.id_of(layer), name, history=self._ed.history)

    def mix(self, layer: LayerRef, *, gain: float | None = None, invert: bool | None = None,
            mute: bool | None = None, solo: bool | None = None) -> None:
        """How the layer adds to the mix (see app.session.layer_ops.set_mixing)."""
        ops.set_mixing(self._doc, self.id_of(layer), gain=gain, invert=invert, mute=mute,
                       solo=solo, history=self._ed.history)

    def merge_down(self, layer: LayerRef = None) -> None:
        ops.merge_down(self._doc, layer=self.id_of(layer), history=self._ed.history)

    def from_selection(self, selection: Selection, *, move: bool = True,
                       channel: int | None = None, name: str | None = None) -> Layer:
        """A new layer of what ``selection`` weighs of the active layer (moved or copied)."""
        ops.selection_to_layer(self._doc, selection, move=move, channel=channel, name=name,
                               history=self._ed.history)
        return self.active

    def audio(self, layer: LayerRef = None) -> np.ndarray:
        """One layer's audio alone, float32 ``[channels, frames]``."""
        return layer_audio(self._doc, layer=self.id_of(layer))


def stem_paths(folder: Path, stem: str, names: list[str], *, suffix: str) -> list[Path]:
    """One file name per layer: ``<stem>-<n>-<name>`` (the name in plain characters),
    numbered bottom up so that names alike stay apart."""
    def plain(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "layer"

    return [folder / f"{stem}-{i + 1}-{plain(n)}{suffix}" for i, n in enumerate(names)]


def write_stems(doc: Document, folder: Path, *, stem: str, suffix: str,
                **options) -> list[tuple[Layer, ExportReport]]:
    """Each layer as the mix hears it (times its gain, negated when inverted), bottom
    up, as ``<stem>-<n>-<name><suffix>`` (n: its place in the stack), with the
    source's metadata (``options``: as :func:`engine.io.export.export`): the files add
    up to the mix. Layers not heard (muted, or not soloed while another is) are not
    written. The files are one set with a manifest naming its method
    (app.session.stem_set): an earlier set of ``stem`` in ``folder`` is replaced whole."""
    state = doc.layers.state
    heard = {x.id for x in state.audible()}
    if not heard:
        raise ParameterError("no layer is heard (all are muted): unmute one to export stems")
    options = {"source": doc.audio.path, "metadata": doc.audio.metadata,
               "layout": doc.audio.layout, **options}
    paths = stem_paths(folder, stem, [x.name for x in state.layers], suffix=suffix)
    chosen = [(x, p) for x, p in zip(state.layers, paths, strict=True) if x.id in heard]

    def write(i: int, path: Path) -> ExportReport:
        layer = chosen[i][0]
        audio = layer_audio(doc, layer=layer.id)
        audio = audio if layer.factor == 1 else audio * np.float32(layer.factor)
        return export(audio, doc.sample_rate, path, **options)

    reports = stem_set.write_set(folder, stem, [p.name for _, p in chosen], write,
                                 method=made_by(x for x, _ in chosen),
                                 source=str(doc.audio.path) if doc.audio.path else None)
    return [(x, dataclasses.replace(r, path=p))
            for (x, p), r in zip(chosen, reports, strict=True)]


def made_by(layers) -> str | None:
    """The unmix method the layers were made by (their recipe, under what was painted
    on them since), None for layers made otherwise."""
    found = set()
    for x in layers:
        source = x.content
        while isinstance(source, Tiled):
            source = source.base
        if isinstance(source, Masked) and source.recipe is not None:
            found.add(source.recipe["method"])
    return " + ".join(sorted(found)) or None
