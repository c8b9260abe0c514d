"""Layers in a project file (version 4): the document's layers and those its undo
history refers to, as a table of the sources their cells are made of
(engine.layer_sources), each written once however many layers and steps share it.

In the manifest, ``layers``: ``{"sources": [...], "states": [...], "current": i,
"next_id": n}``. A source is ``{"kind": "recording"}`` (the recording's analysis),
``"plain"`` (the document's own tensor: the recording with the project's edited
rects, what was painted before the document had layers), ``"silence"``,
``{"kind": "tiled", "base": i, "tiles": [[tb, tf], ...]}`` (the tiles' cells one
after another in the array ``layer_tiles``, float32 ``[cells, 2]``),
``{"kind": "masked", "parent": i, "masks": [j, ...], "index": k, "recipe": {...}}``
(masks in the arrays ``layer_mask_<j>``, uint16 ``[ch, frames, bins]``; the recipe:
the unmix method and marks, brushes.unmix) or ``{"kind": "summed",
"parts": [[i, gain], ...]}``; a source refers only to sources before it. A state is
``{"active": i, "layers": [{"id", "name", "gain", "invert", "mute", "solo",
"content": i, "origin": i}, ...]}`` (bottom first). The table is taken on the GUI
thread (tiles and masks are never written once made: it holds them, it copies
nothing) and packed into arrays in the saving worker.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from app.project.errors import ProjectError
from brushes.unmix import checked_marks
from engine import unmix
from engine.document import Document
from engine.errors import ParameterError
from engine.layer_sources import Dense, Masked, Silence, Source, Summed, Tiled
from engine.layers import Layer, StackState

LAYER_KEYS = {"id", "name", "gain", "invert", "mute", "solo", "content", "origin"}
MAX_SOURCES = 100_000
MAX_LAYERS = 1000
NAME_CHARS = 100
GAIN_LIMIT = 16.0


@dataclass
class Table:
    """The sources and states to save (see the module's docstring), with the tensors
    they hold."""

    sources: list[dict] = field(default_factory=list)
    tiles: list[torch.Tensor] = field(default_factory=list)
    masks: list[torch.Tensor] = field(default_factory=list)
    states: list[dict] = field(default_factory=list)
    plain: Dense | None = None  # the document's own tensor, if a layer is made of it
    _sources: dict = field(default_factory=dict)  # id(source) -> index
    _masks: dict = field(default_factory=dict)  # id(mask) -> index
    _states: dict = field(default_factory=dict)  # id(state) -> index

    def state(self, state: StackState) -> int:
        """The index of ``state`` in the table (added the first time)."""
        if id(state) not in self._states:
            layers = [{"id": x.id, "name": x.name, "gain": x.gain, "invert": x.invert,
                       "mute": x.mute, "solo": x.solo, "content": self._source(x.content),
                       "origin": self._source(x.origin)} for x in state.layers]
            self.states.append({"active": state.active, "layers": layers})
            self._states[id(state)] = len(self.states) - 1
        return self._states[id(state)]

    def _source(self, source: Source) -> int:
        if id(source) in self._sources:
            return self._sources[id(source)]
        if isinstance(source, Tiled):
            keys = sorted(source.tiles)
            entry = {"kind": "tiled", "base": self._source(source.base),
                     "tiles": [list(k) for k in keys]}
            self.tiles += [source.tiles[k] for k in keys]
        elif isinstance(source, Masked):
            for m in source.masks:
                if id(m) not in self._masks:
                    self._masks[id(m)] = len(self.masks)
                    self.masks.append(m)
            entry = {"kind": "masked", "parent": self._source(source.parent),
                     "masks": [self._masks[id(m)] for m in source.masks], "index": source.index,
                     "recipe": source.recipe}
        elif isinstance(source, Summed):
            entry = {"kind": "summed", "parts": [[self._source(s), g] for s, g in source.parts]}
        elif isinstance(source, Dense):
            self.plain, entry = source, {"kind": "plain"}
        else:
            entry = {"kind": "silence" if isinstance(source, Silence) else "recording"}
        self.sources.append(entry)
        self._sources[id(source)] = len(self.sources) - 1
        return len(self.sources) - 1


def table(doc: Document, states: list[StackState]) -> Table:
    """The document's layers (its current state first) and ``states`` (those of its
    undo history) as a :class:`Table`."""
    out = Table()
    for state in [doc.layers.state, *states]:
        out.state(state)
    return out


def pack(t: Table, next_id: int) -> tuple[dict, dict[str, np.ndarray]]:
    """The manifest's ``layers`` and its arrays (in the saving worker)."""
    parts = [torch.view_as_real(x.detach().cpu().reshape(-1)).numpy() for x in t.tiles]
    arrays = {"layer_tiles": np.concatenate(parts) if parts else np.zeros((0, 2), np.float32)}
    for j, m in enumerate(t.masks):
        arrays[f"layer_mask_{j}"] = m.cpu().numpy()
    section = {"sources": t.sources, "states": t.states, "current": 0, "next_id": next_id}
    return section, arrays


def unpack(section: dict, arrays: dict[str, np.ndarray], doc: Document,
           path) -> list[StackState]:
    """Every state of a checked ``layers`` section, on ``doc`` (which holds the
    recording with its edited rects); the current one is made the document's."""
    def bad(what: str) -> ProjectError:
        return ProjectError(f"{path}: the project is damaged: {what}")

    own = doc.layers.state.layers[0]
    stack = doc.layers
    shape = (doc.channels, doc.n_frames, doc.n_bins)
    masks = {}
    for name, array in arrays.items():
        if name.startswith("layer_mask_"):
            if array.shape != shape:
                raise bad(f"{name} is {array.shape}, not the document's {shape}")
            masks[int(name.removeprefix("layer_mask_"))] = torch.from_numpy(array).to(doc.device)
    flat, used = arrays["layer_tiles"], 0
    sources: list[Source] = []
    for i, entry in enumerate(section["sources"]):
        kind = entry["kind"]
        if kind == "recording":
            sources.append(own.origin)
        elif kind == "plain":
            sources.append(own.content)
        elif kind == "silence":
            sources.append(stack.silence())
        elif kind == "summed":
            sources.append(Summed(tuple((sources[s], float(g)) for s, g in entry["parts"])))
        elif kind == "masked":
            sources.append(Masked(sources[entry["parent"]],
                                  tuple(masks[j] for j in entry["masks"]), entry["index"],
                                  entry.get("recipe")))
        else:
            tiled = stack.tiled(sources[entry["base"]])
            for tb, tf in entry["tiles"]:
                rect = tiled.tile_rect((tb, tf))
                if rect.empty:
                    raise bad(f"layer source {i}'s tile {[tb, tf]} lies outside the document")
                count = doc.channels * rect.shape[0] * rect.shape[1]
                if used + count > len(flat):
                    raise bad("layer_tiles holds fewer cells than the layers' tiles")
                z = torch.view_as_complex(torch.from_numpy(np.ascontiguousarray(
                    flat[used:used + count], np.float32)))
                tiled.tiles[(tb, tf)] = z.reshape(doc.channels, rect.shape[1],
                                                  rect.shape[0]).to(doc.device)
                used += count
            sources.append(tiled)
    if used != len(flat):
        raise bad("layer_tiles holds more cells than the layers' tiles")
    states = [StackState(tuple(Layer(x["id"], x["name"], sources[x["content"]],
                                     sources[x["origin"]], float(x["gain"]), x["invert"],
                                     x["mute"], x["solo"]) for x in s["layers"]), s["active"])
              for s in section["states"]]
    for s in states:
        if any(not isinstance(x.content, Tiled | Dense) for x in s.layers) or (
                len(s.layers) > 1 and any(isinstance(x.content, Dense) for x in s.layers)):
            raise bad("a layer is made of a source a layer cannot be painted in")
    stack.next_id = section["next_id"]
    doc.set_layers(states[section["current"]])
    doc.take_dirty()
    return states


def check(section, arrays: dict[str, np.ndarray], bad) -> None:
    """The ``layers`` section's structure (its sizes against the document are checked
    when it is unpacked)."""
    if not (isinstance(section, dict) and set(section) == {"sources", "states", "current",
                                                             "next_id"}
            and isinstance(section["sources"], list) and isinstance(section["states"], list)
            and 0 < len(section["sources"]) <= MAX_SOURCES and section["states"]
            and _int(section["current"], 0, len(section["states"]) - 1)
            and _int(section["next_id"], 1, 1 << 40)):
        raise bad(f"layers {str(section)[:80]!r}")
    masks = {int(k.removeprefix("layer_mask_")) for k in arrays if k.startswith("layer_mask_")
             and k.removeprefix("layer_mask_").isdigit()}
    if any(arrays[f"layer_mask_{j}"].dtype != np.uint16 or arrays[f"layer_mask_{j}"].ndim != 3
           for j in masks):
        raise bad("a layer mask is not uint16 [channels, frames, bins]")
    tiles = arrays.get("layer_tiles")
    if tiles is None or tiles.dtype != np.float32 or tiles.ndim != 2 or tiles.shape[1] != 2:
        raise bad("layer_tiles is not float32 [cells, 2]")
    for i, entry in enumerate(section["sources"]):
        if not _source_ok(entry, i, masks):
            raise bad(f"layer source {i}: {str(entry)[:80]!r}")
    count = len(section["sources"])
    for i, state in enumerate(section["states"]):
        if not _state_ok(state, count, section["next_id"]):
            raise bad(f"layer state {i}: {str(state)[:80]!r}")


def _int(value, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _source_ok(entry, i: int, masks: set[int]) -> bool:
    if not isinstance(entry, dict):
        return False
    kind = entry.get("kind")
    if kind in ("recording", "plain", "silence"):
        return set(entry) == {"kind"}
    if kind == "tiled":
        return set(entry) == {"kind", "base", "tiles"} and _int(entry["base"], 0, i - 1) \
            and isinstance(entry["tiles"], list) and all(
                isinstance(k, list) and len(k) == 2 and all(_int(v, 0, 1 << 30) for v in k)
                for k in entry["tiles"]) and len({tuple(k) for k in entry["tiles"]}) == len(
                entry["tiles"])
    if kind == "masked":
        group = entry.get("masks")
        return set(entry) - {"recipe"} == {"kind", "parent", "masks", "index"} \
            and _int(entry["parent"], 0, i - 1) and isinstance(group, list) and group \
            and all(type(j) is int and j in masks for j in group) \
            and _int(entry["index"], 0, len(group)) \
            and _recipe_ok(entry.get("recipe"), len(group) + 1)
    if kind == "summed":
        parts = entry.get("parts")
        return set(entry) == {"kind", "parts"} and isinstance(parts, list) and parts and all(
            isinstance(p, list) and len(p) == 2 and _int(p[0], 0, i - 1)
            and _gain(p[1]) for p in parts)
    return False


def _recipe_ok(recipe, parts: int) -> bool:
    """How an unmix's masks were made: its method and the marks that steered it."""
    if recipe is None:
        return True
    if not (isinstance(recipe, dict) and set(recipe) == {"method", "marks"}):
        return False
    try:
        unmix.parse(recipe["method"])
        checked_marks(recipe["marks"], parts, "marks")
    except ParameterError:
        return False
    return True


def _gain(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(
        value) and abs(value) <= GAIN_LIMIT


def _state_ok(state, sources: int, next_id: int) -> bool:
    if not (isinstance(state, dict) and set(state) == {"active", "layers"}
            and isinstance(state["layers"], list) and 0 < len(state["layers"]) <= MAX_LAYERS
            and _int(state["active"], 0, len(state["layers"]) - 1)):
        return False
    ids = set()
    for x in state["layers"]:
        if not (isinstance(x, dict) and set(x) == LAYER_KEYS and _int(x["id"], 0, next_id - 1)
                and isinstance(x["name"], str) and 0 < len(x["name"]) <= NAME_CHARS
                and _gain(x["gain"]) and x["gain"] >= 0
                and all(type(x[k]) is bool for k in ("invert", "mute", "solo"))
                and _int(x["content"], 0, sources - 1) and _int(x["origin"], 0, sources - 1)):
            return False
        ids.add(x["id"])
    return len(ids) == len(state["layers"])
