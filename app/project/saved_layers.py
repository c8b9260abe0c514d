"""Layers in a project file (version 4): the document's layers and those its undo
history refers to, as a table of the sources their cells are made of
(engine.model.layer_sources), each written once however many layers and steps share it.

In the manifest, ``layers``: ``{"sources": [...], "states": [...], "current": i,
"next_id": n, "written": [[[f0, f1], ...] per channel]}`` (the document's written
frames, since 2026-11-29). A source is ``{"kind": "recording"}`` (the recording's analysis),
``"plain"`` (the document's own tensor: the recording with the project's edited
rects, what was painted before the document had layers), ``"silence"``,
``{"kind": "tiled", "base": i, "tiles": [[tb, tf], ...]}`` (the tiles' cells one
after another in the array ``layer_tiles``, float32 ``[cells, 2]``),
``{"kind": "masked", "parent": i, "masks": [j, ...], "index": k, "recipe": {...}}``
(masks in the arrays ``layer_mask_<j>``, uint16 ``[ch, frames, bins]``; the recipe:
the unmix method and marks, app.session.unmixing) or ``{"kind": "summed",
"parts": [[i, gain], ...]}``; a source refers only to sources before it. A state is
``{"active": i, "layers": [{"id", "name", "gain", "invert", "mute", "solo",
"content": i, "origin": i}, ...]}`` (bottom first). The table is taken on the GUI
thread (tiles and masks are never written once made: it holds them, it copies
nothing) and packed into arrays in the saving worker.
"""

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from app.project.layer_check import check, mask_index
from app.project.project_error import ProjectError
from engine.errors import Cancelled
from engine.model.document import Document
from engine.model.layer_sources import Dense, Masked, Silence, Source, Summed, Tiled
from engine.model.layer_stack import Layer, StackState
from engine.region import Rect
from engine.runtime.cost import WARN_SECONDS, describe_seconds

MIX_PROBE_FRAMES = 128  # frames of the mix timed to learn what all of it costs
MIX_PROBE_SECONDS = 0.5  # at most (and one layer's read of those frames)
MIX_PROBE_READS = 5  # at least

__all__ = ["Table", "check", "pack", "table", "unpack"]


@dataclass
class Table:
    """The sources and states to save (see the module's docstring), with the tensors
    they hold."""

    sources: list[dict] = field(default_factory=list)
    tiles: list[torch.Tensor] = field(default_factory=list)
    masks: list[torch.Tensor] = field(default_factory=list)
    states: list[dict] = field(default_factory=list)
    dense: Dense | None = None  # the document's own tensor, if a layer is made of it
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
            self.dense, entry = source, {"kind": "plain"}
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


def pack(t: Table, next_id: int, written: list) -> tuple[dict, dict[str, np.ndarray]]:
    """The manifest's ``layers`` and its arrays (in the saving worker); ``written``: the
    document's written frames (Document.written_frames: where its output is the mix's
    resynthesis, not its content's samples)."""
    parts = [torch.view_as_real(x.detach().cpu().reshape(-1)).numpy() for x in t.tiles]
    arrays = {"layer_tiles": np.concatenate(parts) if parts else np.zeros((0, 2), np.float32)}
    for j, m in enumerate(t.masks):
        arrays[f"layer_mask_{j}"] = m.cpu().numpy()
    section = {"sources": t.sources, "states": t.states, "current": 0, "next_id": next_id,
               "written": [[list(span) for span in spans] for spans in written]}
    return section, arrays


def confirm_mix(doc: Document, state: StackState, *, confirm, undone: bool = False) -> None:
    """Ask ``confirm(text) -> bool`` whether to go on when mixing ``state`` would take
    more than engine.runtime.cost.WARN_SECONDS (its first MIX_PROBE_FRAMES frames read
    from the layers in turn on one thread for MIX_PROBE_SECONDS at most, the quickest read
    counted: the work, not a busy machine's pauses, which made one read 0.4 to 90 ms): the
    mix costs the layers times the length, which a small file can declare large (1,000
    layers of one unmixed part over 4 s of mono, 117 KB of JSON: 40 s). ``undone``:
    ``state`` is one the undo history goes back (or on) to, mixed by an undo or a redo.
    Refused: Cancelled, nothing done."""
    layers, frames = state.audible(), min(MIX_PROBE_FRAMES, doc.n_frames)
    rect, chans = Rect(0, doc.n_bins, 0, frames), slice(0, doc.channels)
    if len(layers) < 2:
        return  # one layer: the work of any document
    layers[0].content.cells(rect, chans)  # untimed: a first read pays for warming up
    reads, end, threads = [], time.perf_counter() + MIX_PROBE_SECONDS, torch.get_num_threads()
    torch.set_num_threads(1)  # on a busy machine, two threads' reads each waited for the
    try:  # other's turn: 60-90 ms for a 0.5 ms read, again and again
        while (len(reads) < max(MIX_PROBE_READS, len(layers) - 1)
               and time.perf_counter() < end):  # the layers in turn, a few reads at least
            t0 = time.perf_counter()
            layers[(len(reads) + 1) % len(layers)].content.cells(rect, chans)
            reads.append(time.perf_counter() - t0)
    finally:
        torch.set_num_threads(threads)
    seconds = min(reads) * doc.n_frames / frames * len(layers)
    declared = f"{len(layers):,} layers over {doc.audio.duration:.1f} s of audio"
    if seconds > WARN_SECONDS and not confirm(
            f"this project's undo history goes to a mix of {declared}: an undo or redo to "
            f"it will take about {describe_seconds(seconds)}" if undone else
            f"this project mixes {declared}: opening it will take about "
            f"{describe_seconds(seconds)}"):
        raise Cancelled("not opened: mixing its layers costs too much; nothing was changed")


def unpack(section: dict, arrays: dict[str, np.ndarray], doc: Document, *,
           path, confirm=None) -> list[StackState]:
    """Every state of a checked ``layers`` section, on ``doc`` (which holds the
    recording with its edited rects); the current one is made the document's, once
    ``confirm`` (engine.model.document.Document's) says yes to a mix that takes long."""
    def bad(what: str) -> ProjectError:
        return ProjectError(f"{path}: the project is damaged: {what}")

    own = doc.layers.state.layers[0]
    stack = doc.layers
    shape = (doc.channels, doc.n_frames, doc.n_bins)
    masks = {}
    for name, array in arrays.items():
        j = mask_index(name)
        if j is not None:
            if array.shape != shape:
                raise bad(f"{name} is {array.shape}, not the document's {shape}")
            masks[j] = torch.from_numpy(array).to(doc.device)
    flat, used = arrays["layer_tiles"], 0
    sources: list[Source] = []
    groups: dict[tuple[int, ...], tuple[torch.Tensor, ...]] = {}
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
            group = groups.setdefault(tuple(entry["masks"]),  # one tuple: one unmix
                                      tuple(masks[j] for j in entry["masks"]))
            sources.append(Masked(sources[entry["parent"]], group, entry["index"],
                                  recipe=entry.get("recipe")))
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
        only = s.layers[0]
        if s.plain and (only.gain, only.invert, only.mute, only.solo) != (1, False, False, False):
            raise bad("the only layer of a document without layers has mixing set")
    stack.next_id = section["next_id"]
    if confirm is not None:
        current = states[section["current"]]
        confirm_mix(doc, current, confirm=confirm)
        heaviest = max(states, key=lambda s: len(s.audible()))  # an undo or redo mixes it
        if len(heaviest.audible()) > len(current.audible()):
            confirm_mix(doc, heaviest, confirm=confirm, undone=True)
    doc.set_layers(states[section["current"]])
    doc.take_dirty()
    if "written" in section:  # else (saved before 2026-11-29) every frame counts as written
        written = section["written"]
        if len(written) != doc.channels or any(f1 > doc.n_frames for spans in written
                                               for _, f1 in spans):
            raise bad("its written frames do not fit the document")
        doc.set_written([[tuple(span) for span in spans] for spans in written])
    if not bool(torch.isfinite(torch.view_as_real(doc.mix)).all()):
        raise bad("its layers mix to NaN or infinite values")
    return states
