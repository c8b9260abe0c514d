"""Project files (.spp): a zip of ``manifest.json`` and ``arrays.npz``.

The audio is embedded (with its SHA-256), the analysis settings and the view
are in the manifest, and the edited state is stored as the tiles the edits
touched, as the real and imaginary parts of their coefficients (version 2;
version 1 stored magnitude and phase, and still opens): opening re-analyzes
the audio (deterministic, so untouched cells come back bit for bit) and writes
those tiles back. Version 3 adds the undo history (app.project.saved_history) and, in
an autosave, the project the edits were saved as; version 4 the layers
(app.project.saved_layers), the edited tiles being then those painted before the
document had layers, and the layers' own cells their tiles and masks; version 5 the
content, when a time edit made it (the edited audio the coefficients are the analysis
of, engine.model.splice), beside the recording; version 6, written for a document
without layers, stores the edited tiles and the undo history as what differs from what
can be re-derived (app.project.cell_walk), and each repair's step as its audio change
(a project with layers is written as version 5); version 7 stores the audio packed
as a repair's change is (engine.model.history.Change: byte planes, deflated; lossless,
and half the float32 size or less for a 16-bit source, whose samples use 16 bits of
the 32). Arrays are read with
``allow_pickle=False`` and the manifest is plain JSON: opening a project
cannot run code. The edits (edited rects, layers, history) have a SHA-256 too,
``cells_sha256`` (app.project.read.cells_digest; files written before issue 51 have
none). Written to a temporary file, flushed to disk, then renamed.
"""

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from app.project import cell_walk
from app.project import saved_layers as layers
from app.project.read import (
    FORMAT,
    PART_NAMES,
    VERSION,
    ProjectError,
    cells_digest,
    check_bounded,
    check_digest,
    parts_folder,
    read,
)
from app.project.saved_history import Kept, pack, patch_rect, planned, unpack
from engine.errors import Cancelled, ParameterError
from engine.io.atomic import clear_stale, commit, discard, temporary, write_bytes
from engine.io.audio import Audio
from engine.io.metadata import Metadata
from engine.model.document import Document
from engine.model.history import Change
from engine.model.layer_sources import LAYER_TILE
from engine.region import Rect
from engine.transforms.settings import checked

SAVED_TILE = 64  # bins and frames per side of a tile an edit touched, as a project stores it
RUN_TILES = 64  # tiles along frames one listed rect may join (4,096 frames at most)


class EditTracker:
    """Remembers which 64 x 64 tiles of a document have been written to: since it was
    analysed (a project opened writes its edits first), every bin of the frames written
    then (Document.written_frames), and the tiles of each write since."""

    def __init__(self, doc: Document):
        self.doc, self.tiles = doc, set()
        for frames in doc.written_frames():
            for f0, f1 in frames:
                self.tiles.update(Rect(0, doc.n_bins, f0, f1).tiles(SAVED_TILE))
        doc.add_listener(self._on_edit)

    def _on_edit(self, rect: Rect, channels) -> None:
        self.tiles.update(rect.tiles(SAVED_TILE))

    def rects(self) -> list[Rect]:
        return tile_rects(self.tiles, SAVED_TILE, self.doc)


def tile_rects(keys, size: int, doc: Document) -> list[Rect]:
    """Tiles ``keys`` ((bin tile, frame tile), ``size`` a side) as the rects a project
    lists: each run of consecutive tiles along a row of bins one rect, of up to RUN_TILES
    (one by one, the list of a long file edited whole outgrew the manifest's 1 MiB, and
    the project saved could not be opened)."""
    rects = []
    for tb, row in groupby(sorted(keys), key=lambda key: key[0]):
        frames = [tf for _, tf in row]
        start = frames[0]
        for prev, tf in zip(frames, frames[1:] + [None], strict=True):
            if tf == prev + 1 and tf - start < RUN_TILES:
                continue
            rects.append(Rect(tb * size, (tb + 1) * size, start * size, (prev + 1) * size)
                         .clip(doc.n_bins, doc.n_frames))
            start = tf
    return rects


def snapshot(doc: Document, tracker: EditTracker, history: Kept | None = None,
             project: str | os.PathLike | None = None) -> dict:
    """What to save, copied on the GUI thread (cheap) so writing can run in a worker;
    ``history``: the undo steps to keep (their cells are packed in the worker);
    ``project``: the project file the edits were saved as (an autosave names it)."""
    arrays = {"audio": doc.audio.samples}
    if doc.content_samples is not doc.audio.samples:  # a time edit's (engine.model.splice)
        arrays["content"] = doc.content_samples
    states = [] if history is None else [x for s in history.steps if s.stack for x in s.stack]
    table = None if doc.layers.plain and not states else layers.table(doc, states)
    rects = tracker.rects() if table is None else _written(doc, table.dense)
    for i, rect in enumerate(rects):
        z = doc.read_complex(rect).cpu() if table is None else \
            table.dense.tensor[:, rect.frames, rect.bins].transpose(1, 2).contiguous()
        arrays[f"re_{i}"], arrays[f"im_{i}"] = z.real.numpy(), z.imag.numpy()
    return {"arrays": arrays, "rects": [[r.bin0, r.bin1, r.frame0, r.frame1] for r in rects],
            "sample_rate": doc.sample_rate, "analysis": doc.transform.settings(),
            "source": str(doc.audio.path) if doc.audio.path else None,
            "source_kind": {"format": doc.audio.format, "subtype": doc.audio.subtype,
                            "layout": list(doc.audio.layout)},
            "source_metadata": doc.audio.metadata.to_json(), "history": history,
            "project": str(project) if project else None, "layers": table,
            "written": doc.written_frames(),
            "next_id": doc.layers.next_id, "transform": doc.transform, "device": doc.device}


def _written(doc: Document, plain) -> list[Rect]:
    """The tiles of the document's own tensor painted before it had layers."""
    if plain is None:
        return []
    return tile_rects(plain.written, LAYER_TILE, doc)


class Saved(NamedTuple):
    path: Path
    cleared: str | None = None  # stale temporary files removed beside it (engine.io.atomic)


def save_project(path: str | os.PathLike, snap: dict, view: dict, progress=None,
                 cancel=None, *, apart: bool = False) -> Saved:
    """Write the project ``snap`` (:func:`snapshot`) with ``view`` to ``path``; ``apart``
    (an autosave): the arrays that do not change from one save to the next (the audio,
    each repair's change) are kept beside it (app.project.read.parts_folder), each written
    once, so a save writes only what changed."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ProjectError(f"{path}: the folder {path.parent} does not exist")
    arrays = dict(snap["arrays"])
    audio = arrays["audio"]
    manifest = {"format": FORMAT, "version": VERSION, "sample_rate": snap["sample_rate"],
                "analysis": snap["analysis"],
                "audio_sha256": hashlib.sha256(audio.tobytes()).hexdigest(),
                "source": snap["source"], "source_kind": snap["source_kind"],
                "source_metadata": snap["source_metadata"],
                "edited_rects": snap["rects"], "view": view}
    if snap.get("project"):
        manifest["project"] = snap["project"]
    table = snap.get("layers")
    if table is not None:
        manifest["layers"], cells = layers.pack(table, snap["next_id"], snap["written"])
        arrays.update(cells)
    history = snap.get("history")
    if history is not None and history.steps:
        manifest["history"], cells = pack(history, table.state if table else None,
                                          compact=table is None)
        arrays.update(cells)
    if table is None:
        manifest["version"] = VERSION
        arrays.update(_walked(snap, arrays, history or Kept([], 0)))
    else:
        manifest["version"] = 5  # layers: the cells as they are
    manifest["cells_sha256"] = cells_digest(manifest, arrays)
    if table is None:
        manifest["audio_shape"] = list(audio.shape)
        arrays["audio_packed"] = packed_audio(arrays.pop("audio"),
                                              digest=manifest["audio_sha256"])
    try:
        if apart:
            manifest["parts"], arrays = _stored_apart(path, arrays)
        cleared = clear_stale(path)
        tmp = temporary(path)
    except OSError as e:
        raise ProjectError(f"{path}: cannot save here ({e}); the previous file is unchanged") \
            from e
    try:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        if cancel is not None and cancel.is_set():
            raise Cancelled("saving cancelled; the project file was not changed")
        with open(tmp, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
                z.writestr("manifest.json", json.dumps(manifest, indent=2, sort_keys=True))
                z.writestr("arrays.npz", buffer.getvalue())
        commit(tmp, path)  # on disk before it takes the name: a crash leaves old or new
    except OSError as e:
        raise ProjectError(f"{path}: saving failed ({e}); the previous file is unchanged") from e
    finally:
        discard(tmp)
    if apart:  # what the previous one held alone
        for old in set(parts_folder(path).glob("*.npy")) - {
                parts_folder(path) / f"{d}.npy" for d in manifest["parts"].values()}:
            discard(old)
    if progress:
        progress(1.0)
    return Saved(path, cleared)


_last_packed: dict[str, np.ndarray] = {}  # the last audio packed, by its SHA-256


def packed_audio(samples: np.ndarray, *, digest: str) -> np.ndarray:
    """``samples`` (their SHA-256 ``digest``) as version 7 stores them (packed as
    engine.model.history.Change packs a change); the last audio packed is kept, so the
    autosaves of a document pack it once."""
    packed = _last_packed.get(digest)
    if packed is None:
        packed = Change.of(0, samples).packed
        _last_packed.clear()
        _last_packed[digest] = packed
    return packed


def _stored_apart(path: Path, arrays: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """Write the arrays that may be stored apart (app.project.read.PART_NAMES) to the
    parts folder, those not there already; their names and digests, and the rest."""
    folder, parts, rest = parts_folder(path), {}, {}
    folder.mkdir(exist_ok=True)
    for name, array in arrays.items():
        if not PART_NAMES.fullmatch(name):
            rest[name] = array
            continue
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
        data = buffer.getvalue()
        parts[name] = hashlib.sha256(data).hexdigest()
        part = folder / f"{parts[name]}.npy"
        if not part.exists():
            write_bytes(part, data)
    return parts, rest


def _walked(snap: dict, arrays: dict[str, np.ndarray], history: Kept) -> dict[str, np.ndarray]:
    """The edited tiles' and the history's cells as version 6 stores them
    (app.project.cell_walk); takes the edited tiles' ``re_``/``im_`` arrays out."""
    edited = [Rect(*r) for r in snap["rects"]]
    cells = [torch.complex(torch.from_numpy(arrays.pop(f"re_{i}")),
                           torch.from_numpy(arrays.pop(f"im_{i}"))) for i in range(len(edited))]
    steps = [cell_walk.Planned(s.channel, s.change, [patch_rect(p) for p in s.patches],
                               [p.before for p in s.patches], [p.after for p in s.patches])
             for s in history.steps]
    return cell_walk.encode(steps, history.index, edited, cells,
                            samples=arrays.get("content", arrays["audio"]),
                            transform=snap["transform"], device=snap["device"])


def _coefficients(arrays: dict[str, np.ndarray], i: int, version: int) -> torch.Tensor:
    """Edited rect ``i``'s coefficients as the project stores them."""
    def part(name: str) -> torch.Tensor:
        return torch.from_numpy(arrays[f"{name}_{i}"].astype(np.float32))

    if version == 1:
        return torch.polar(part("mag"), part("phase"))
    return torch.complex(part("re"), part("im"))


@dataclass
class Opened:
    """A project as opened: the edited document, the saved view settings, the undo
    history it kept and, for an autosave, the project its edits were saved as."""

    doc: Document
    view: dict
    history: Kept = field(default_factory=lambda: Kept([], 0))
    project: Path | None = None


def open_project(path: str | os.PathLike, device=None, progress=None,
                 cancel=None, confirm=None) -> tuple[Document, dict]:
    """The edited document and the saved view settings (every part of the file
    checked first: app.project.read); ``confirm``: see :class:`Document`."""
    opened = load_project(path, device=device, progress=progress, cancel=cancel,
                          confirm=confirm)
    return opened.doc, opened.view


def load_project(path: str | os.PathLike, *, device=None, progress=None,
                 cancel=None, confirm=None) -> Opened:
    """The whole of a project, its undo history included (see :class:`Opened`);
    ``confirm(question) -> bool`` is asked whether to go on when what the file declares
    would take long (its analysis settings, the mix of its layers); without one, such a
    project is refused in one line before the work (a small file can declare a great
    deal of it: 1,000 layers over 60 s, 46 minutes)."""
    path = Path(path)
    confirm = confirm or _refused(path)
    changes = {}  # each step's change, unpacked once (app.project.read.read)
    manifest, arrays = read(path, changes=changes)
    audio = arrays["audio"]
    if hashlib.sha256(audio.tobytes()).hexdigest() != manifest.get("audio_sha256"):
        raise ProjectError(f"{path}: the embedded audio does not match its checksum; "
                           "the file is damaged")
    analysis = checked(manifest["analysis"])  # {"transform": ..., its settings}; stft if none
    source = Path(manifest["source"]) if manifest.get("source") else None
    kind = manifest.get("source_kind", {})  # the source's format, depth and speakers
    try:
        content = arrays.get("content")
        doc = Document(Audio(audio.astype(np.float32), manifest["sample_rate"], source,
                             kind.get("format", ""), kind.get("subtype", ""),
                             layout=tuple(kind.get("layout", ())),
                             metadata=Metadata.from_json(manifest.get("source_metadata", {}))),
                       device=device, progress=progress, cancel=cancel, confirm=confirm,
                       content=None if content is None else content.astype(np.float32),
                       **analysis)
    except ParameterError as e:
        raise ProjectError(f"{path}: {e}") from e
    check_bounded(path, arrays, doc.transform.coefficient_limit)
    _inside(path, doc, manifest["edited_rects"], "edited rect")
    walked, steps = None, []
    if manifest["version"] >= 6:
        steps = planned(manifest["history"], arrays, doc.channels, changes=changes) \
            if "history" in manifest else []
        changes.clear()  # the walk lets each go once used
        _inside(path, doc, arrays.get("history_rects", np.zeros((0, 4))).tolist(),
                "history patch")
        walked, edited = cell_walk.decode(
            steps, manifest["history"]["index"] if steps else 0,
            [Rect(*r) for r in manifest["edited_rects"]], arrays, doc,
            version=manifest["version"])
    for i, rect in enumerate(manifest["edited_rects"]):
        doc.write_complex(Rect(*rect), edited[i] if walked is not None else
                          _coefficients(arrays, i, manifest["version"]))
    doc.take_dirty()
    states = layers.unpack(manifest["layers"], arrays, doc, path=path, confirm=confirm) \
        if "layers" in manifest else []
    history = unpack(manifest["history"], arrays, doc, path=path, states=states,
                     walked=walked, planned_steps=steps if walked is not None else None) \
        if "history" in manifest else Kept([], 0)
    check_digest(path, manifest, arrays)  # last: every message above names what is wrong
    project = Path(manifest["project"]) if manifest.get("project") else None
    return Opened(doc, manifest.get("view", {}), history, project)


def _inside(path: Path, doc: Document, rects: list, what: str) -> None:
    """Every rect of ``rects`` ([bin0, bin1, frame0, frame1]) within the document."""
    for i, (_, b1, _, f1) in enumerate(rects):
        if b1 > doc.n_bins or f1 > doc.n_frames:
            raise ProjectError(f"{path}: the project is damaged: {what} {i} lies outside "
                               f"the document ({doc.n_bins} bins x {doc.n_frames} frames)")


def _refused(path: Path):
    """A ``confirm`` that says no in words: a script opening a project that declares a
    great deal of work is told what, and how to go on."""
    def refuse(question: str) -> bool:
        raise ProjectError(f"{path}: {question}; not opened (to open it anyway, give "
                           "load_project confirm=lambda question: True)")
    return refuse
