"""A project's ``layers`` section (app.project.saved_layers) checked as hostile input before
anything is built from it: every field's type and range, and what building and
reading its sources would cost. A source refers only to sources before it, so one
pass over the table gives each source's depth (how deep ``cells`` recurses), its
references counted with multiplicity (how many sources one read of it computes: a
sum of the same source twice, sixty times over, would be 2**60) and its
amplification (how far past its inputs its cells can reach: the sum of its gains'
sizes, times its parts'); each is bounded far beyond anything the app makes
(engine.model.layer_sources.NEST_LIMIT keeps its layers shallow), and with the tiles'
values bounded (the transform's ``coefficient_limit``: app.project.read.check_bounded)
every state of the table mixes to finite cells, and resynthesizes to finite samples.

The masks of one unmix are one group: every source of it names the same list of
distinct masks, at most ``MAX_COMPONENTS - 1``, which add up to at most one share at
every cell (so the last layer's share, what they leave, is never negative).
"""

import math
import re

import numpy as np

from app.session.layer_ops import GAIN_RANGE, NAME_CHARS
from app.session.marks import checked_marks
from engine import unmix
from engine.errors import ParameterError
from engine.model.layer_sources import MASK_ONE
from engine.unmix import MAX_COMPONENTS

LAYER_KEYS = {"id", "name", "gain", "invert", "mute", "solo", "content", "origin"}
MAX_SOURCES = 100_000
MAX_CHANNELS = 256  # written frames: the channels listed (app.project.read.MAX_CHANNELS)
MAX_SPANS = 1 << 20  # written frames: the spans of one channel
MAX_LAYERS = 1000
GAIN_LIMIT = GAIN_RANGE[1]  # a layer's gain, or a merged part's factor's size
MAX_DEPTH = 64  # sources one source is made of, one within the other
MAX_REFERENCES = 4096  # sources one read of a source computes, counted with multiplicity
MAX_AMPLIFICATION = 1 << 16  # how far past its inputs a source's cells can reach
MASK_NAME = re.compile(r"layer_mask_(0|[1-9]\d{0,4})")


def mask_index(name: str) -> int | None:
    """The number of a ``layer_mask_<j>`` array (None: not a mask's name)."""
    match = MASK_NAME.fullmatch(name)
    return None if match is None else int(match.group(1))


def check(section, arrays: dict[str, np.ndarray], bad) -> None:
    """The ``layers`` section's structure (its sizes against the document are checked
    when it is unpacked); ``bad(what)`` makes the error raised."""
    if not (isinstance(section, dict) and set(section) - {"written"} == {
                "sources", "states", "current", "next_id"}
            and _written_ok(section.get("written", []))
            and isinstance(section["sources"], list) and isinstance(section["states"], list)
            and 0 < len(section["sources"]) <= MAX_SOURCES and section["states"]
            and _int(section["current"], 0, len(section["states"]) - 1)
            and _int(section["next_id"], 1, 1 << 40)):
        raise bad(f"layers {str(section)[:80]!r}")
    masks = _masks(arrays, bad)
    tiles = arrays.get("layer_tiles")
    if tiles is None or tiles.dtype != np.float32 or tiles.ndim != 2 or tiles.shape[1] != 2:
        raise bad("layer_tiles is not float32 [cells, 2]")
    for i, entry in enumerate(section["sources"]):
        if not _source_ok(entry, i, masks):
            raise bad(f"layer source {i}: {str(entry)[:80]!r}")
    _groups_ok(section["sources"], arrays, bad)
    _costs_ok(section["sources"], bad)
    count = len(section["sources"])
    for i, state in enumerate(section["states"]):
        if not _state_ok(state, count, section["next_id"]):
            raise bad(f"layer state {i}: {str(state)[:80]!r}")


def _masks(arrays: dict[str, np.ndarray], bad) -> set[int]:
    """The numbers of the mask arrays, each checked uint16 ``[ch, frames, bins]``."""
    masks = set()
    for name, array in arrays.items():
        if not name.startswith("layer_mask_"):
            continue
        j = mask_index(name)
        if j is None:
            raise bad(f"an array named {name[:40]!r} (a layer mask is layer_mask_<0 to "
                      "99999>)")
        if array.dtype != np.uint16 or array.ndim != 3:
            raise bad(f"{name}: a layer mask is not uint16 [channels, frames, bins]")
        masks.add(j)
    return masks


def _groups_ok(sources: list[dict], arrays: dict[str, np.ndarray], bad) -> None:
    """Each mask belongs to one unmix: the sources naming it name the same list, and
    that list's masks add up to at most one share at every cell."""
    groups: dict[int, tuple[int, ...]] = {}
    for i, entry in enumerate(sources):
        if entry["kind"] != "masked":
            continue
        group = tuple(entry["masks"])
        if any(groups.setdefault(j, group) != group for j in group):
            raise bad(f"layer source {i} shares a mask with another unmix's masks")
    for group in set(groups.values()):
        shapes = {arrays[f"layer_mask_{j}"].shape for j in group}
        if len(shapes) > 1:
            continue  # refused against the document's shape when unpacked
        total = np.zeros(shapes.pop(), np.int32)
        for j in group:
            total += arrays[f"layer_mask_{j}"]
        if total.size and int(total.max()) > MASK_ONE:
            raise bad(f"the masks {list(group)} of one unmix add up to more than one")


def _costs_ok(sources: list[dict], bad) -> None:
    """Each source's depth, references and amplification within bounds (see the
    module's docstring)."""
    depth, references, amplification = [], [], []
    for i, entry in enumerate(sources):
        kind = entry["kind"]
        if kind == "summed":
            parts = [(p[0], abs(p[1])) for p in entry["parts"]]
        elif kind in ("tiled", "masked"):
            parts = [(entry["base" if kind == "tiled" else "parent"], 1.0)]
        else:
            parts = []
        depth.append(1 + max((depth[p] for p, _ in parts), default=0))
        references.append(1 + sum(references[p] for p, _ in parts))
        reach = sum(g * amplification[p] for p, g in parts) if kind == "summed" else \
            max([1.0] + [amplification[p] for p, _ in parts])
        amplification.append(reach)
        if depth[i] > MAX_DEPTH or references[i] > MAX_REFERENCES:
            raise bad(f"layer source {i} is made of sources {depth[i]} deep, "
                      f"{references[i]} in all (at most {MAX_DEPTH} deep, "
                      f"{MAX_REFERENCES} in all)")
        if reach > MAX_AMPLIFICATION:
            raise bad(f"layer source {i} amplifies its sources {reach:.3g} times (at most "
                      f"{MAX_AMPLIFICATION})")


def _written_ok(written) -> bool:
    """Per channel, sorted disjoint ``[f0, f1]`` frame spans (their fit to the document
    is checked when unpacked)."""
    if not (isinstance(written, list) and len(written) <= MAX_CHANNELS):
        return False
    for spans in written:
        if not (isinstance(spans, list) and len(spans) <= MAX_SPANS):
            return False
        end = 0
        for span in spans:
            if not (isinstance(span, list) and len(span) == 2 and _int(span[0], end, 1 << 40)
                    and _int(span[1], span[0] + 1, 1 << 40)):
                return False
            end = span[1]
    return True


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
            and _int(entry["parent"], 0, i - 1) and isinstance(group, list) \
            and 0 < len(group) < MAX_COMPONENTS \
            and all(type(j) is int and j in masks for j in group) \
            and len(set(group)) == len(group) \
            and _int(entry["index"], 0, len(group)) \
            and _recipe_ok(entry.get("recipe"), len(group) + 1)
    if kind == "summed":
        parts = entry.get("parts")
        return set(entry) == {"kind", "parts"} and isinstance(parts, list) and parts \
            and len(parts) <= MAX_LAYERS and all(
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
