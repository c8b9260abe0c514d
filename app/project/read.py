"""Reading a project file as if it were hostile: every size, type and value is
checked before anything is allocated or trusted, and anything wrong is one
ProjectError saying what, never another exception.

- the zip: both members present, not encrypted, stored or deflated, their
  unpacked sizes within the memory available (a zip bomb is refused unread);
- the manifest: at most 1 MB, plain JSON of limited depth, no NaN/Infinity, every
  field of the right type and range (``true`` is not a version or a rate);
- the arrays: a real .npz of .npy members, each header's shape and dtype agreeing
  with the bytes present before it is read, audio ``[channels >= 1, frames >= 1]``
  and every number finite, magnitudes not negative, patches the shape of their rect;
- version 7's audio (``audio_packed``, its float32 samples packed as a repair's change
  is, engine.model.history.Change; ``audio_shape`` in the manifest): its size within
  the memory available before it is unpacked, and the samples unpacked exactly;
- an autosave's parts (:func:`parts_folder`: arrays that do not change from one autosave
  to the next, written once, each named by the SHA-256 of its bytes): every one named
  is there, its bytes match its name, and it is a .npy checked as the members are.
"""

import hashlib
import io
import json
import math
import re
import stat
import zipfile
import zlib
from pathlib import Path
from tokenize import TokenError

import numpy as np

from app.project import saved_layers as layers
from app.project.cell_walk import cell_count, unpacked_mask
from app.project.project_error import ProjectError
from app.session.selection import Selection
from engine.errors import ParameterError
from engine.io.metadata import Metadata
from engine.model.history import Change
from engine.runtime.memory import available_memory
from engine.transforms.settings import checked
from engine.transforms.transform import HEADROOM_DB

FORMAT, VERSION = "spectropaint-project", 7
# what each version stores of an edited rect (3 adds the undo history, 4 the layers, 5 the
# content: the edited audio a time edit made, which the coefficients are the analysis of;
# 6 stores the cells as what differs from what is re-derived, app.project.cell_walk; 7 the
# audio packed, ``audio_packed``)
PARTS = {1: ("mag", "phase"), 2: ("re", "im"), 3: ("re", "im"), 4: ("re", "im"),
         5: ("re", "im"), 6: (), 7: ()}
STEP_KEYS = {3: {"label", "channel", "patches"},
             4: {"label", "channel", "patches", "layer", "stack"},
             6: {"label", "channel", "patches", "layer", "stack", "change"}}
MANIFEST_BYTES = 1 << 20
JSON_DEPTH = 64
RATE_RANGE = (1, 768_000)
MAX_CHANNELS = 256
MAX_RATIO = 50  # unpacked / packed: float audio deflates ~2:1, a zip bomb 1000:1
NAME_CHARS = 32  # a format's, a depth's or a speaker's name
ZIP_MAGICS, NPY_MAGIC = (b"PK\x03\x04", b"PK\x05\x06"), b"\x93NUMPY"
MAX_STEPS = 100_000  # undo steps in a project's history
LABEL_CHARS = 500  # a step's name
PATH_CHARS = 4096
CELL_KEYS = ("edited_rects", "layers", "history")  # what cells_digest covers of the manifest
VIEW_NUMBERS = ("t0", "t1", "f_lo", "f_hi", "floor_db", "ceiling_db", "gamma")
# what may be stored apart
PART_NAMES = re.compile(r"audio|audio_packed|content|history_change_\d{1,6}")
SHA256 = re.compile(r"[0-9a-f]{64}")


def parts_folder(path: Path) -> Path:
    """Where the parts of the project at ``path`` are kept (an autosave's, see the module's
    docstring)."""
    return path.with_name(path.name + ".parts")


def read(path: Path, *, changes: dict | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """The checked manifest and arrays of the project at ``path``; ``changes``: given
    each history step's change as checked (float32, by step), so opening unpacks it once."""
    try:
        z = zipfile.ZipFile(path)
    except FileNotFoundError as e:
        raise ProjectError(f"{path}: no such file") from e
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise ProjectError(f"{path}: not a SpectroPaint project or damaged ({e})") from e
    with z:
        infos = {i.filename: i for i in z.infolist()}
        for name in ("manifest.json", "arrays.npz"):
            _check_member(path, infos.get(name), name)
        _check_size(path, infos["manifest.json"].file_size, MANIFEST_BYTES, "its manifest")
        _check_size(path, infos["arrays.npz"].file_size, 0.8 * available_memory(), "its arrays")
        try:
            manifest = _manifest(path, z.read("manifest.json"))
            arrays = _arrays(path, z.read("arrays.npz"))
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError,
                NotImplementedError) as e:
            raise ProjectError(f"{path}: the file is damaged ({e})") from e
    if "parts" in manifest:
        arrays.update(_parts(path, manifest["parts"], set(arrays)))
    if manifest["version"] >= 7:
        arrays["audio"] = _unpacked_audio(path, manifest.get("audio_shape"),
                                          arrays.pop("audio_packed", None))
    _check_contents(path, manifest, arrays, changes)
    return manifest, arrays


def _unpacked_audio(path: Path, shape, packed) -> np.ndarray:
    """Version 7's audio: ``packed`` (uint8), float32 ``shape`` (channels, frames) packed."""
    def bad(what: str) -> ProjectError:
        return ProjectError(f"{path}: the project is damaged: {what}")

    if not (isinstance(shape, list) and len(shape) == 2 and all(type(v) is int and v >= 1
                                                                 for v in shape)):
        raise bad(f"audio_shape {str(shape)[:40]} (a project holds [channels, frames], "
                  "at least one of each)")
    if shape[0] > MAX_CHANNELS:
        raise ProjectError(f"{path}: the audio has {shape[0]:,} channels; SpectroPaint opens up "
                           f"to {MAX_CHANNELS}")
    _check_size(path, 4 * shape[0] * shape[1], 0.8 * available_memory(), "its audio")
    if packed is None or packed.dtype != np.uint8 or packed.ndim != 1:
        raise bad("audio_packed is missing or not uint8")
    samples = Change(0, tuple(shape), packed).samples()
    if samples is None:
        raise bad(f"audio_packed is not {shape[0]} x {shape[1]:,} packed samples")
    return samples


def _parts(path: Path, parts, held: set) -> dict[str, np.ndarray]:
    """The arrays stored apart from the project at ``path`` (``parts``: name -> SHA-256)."""
    if not isinstance(parts, dict) or not all(
            isinstance(k, str) and PART_NAMES.fullmatch(k) and k not in held
            and isinstance(v, str) and SHA256.fullmatch(v) for k, v in parts.items()):
        raise ProjectError(f"{path}: the project is damaged: parts {str(parts)[:80]!r}")
    out = {}
    for name, digest in parts.items():
        part = parts_folder(path) / f"{digest}.npy"
        try:
            _check_size(path, part.stat().st_size, 0.8 * available_memory(), f"its part {name}")
            data = part.read_bytes()
        except OSError as e:
            raise ProjectError(f"{path}: its part {name} cannot be read ({e}); the autosave "
                               "is incomplete") from e
        if hashlib.sha256(data).hexdigest() != digest:
            raise ProjectError(f"{path}: its part {name} ({part.name}) does not match its "
                               "checksum; the autosave is damaged")
        out[name] = _npy(path, data, name)
    return out


def _npy(path: Path, data: bytes, name: str) -> np.ndarray:
    """A .npy's array, its header checked against the bytes present first."""
    f = io.BytesIO(data)
    try:
        if not data.startswith(NPY_MAGIC):
            raise ValueError("not a .npy")
        version = np.lib.format.read_magic(f)
        shape, order, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                               else np.lib.format.read_array_header_2_0(f))
        if dtype.kind not in "fiu" or order or math.prod(shape) * dtype.itemsize != \
                len(data) - f.tell():
            raise ValueError(f"declares {shape} {dtype}, holds {len(data) - f.tell():,} bytes")
        return np.frombuffer(data, dtype, offset=f.tell()).reshape(shape)
    except (ValueError, SyntaxError, TokenError) as e:
        raise ProjectError(f"{path}: its part {name} is damaged ({e})") from e


def _check_member(path: Path, info: zipfile.ZipInfo | None, name: str) -> None:
    if info is None:
        raise ProjectError(f"{path}: not a SpectroPaint project ({name} is missing)")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise ProjectError(f"{path}: {name} is a symbolic link; a project holds the file "
                           "itself (the file is damaged or not a SpectroPaint project)")
    if info.flag_bits & 0x1:
        raise ProjectError(f"{path}: {name} is encrypted; SpectroPaint projects never are")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ProjectError(f"{path}: {name} uses zip compression method {info.compress_type}; "
                           "SpectroPaint writes only stored or deflated members")
    if info.file_size > MAX_RATIO * max(info.compress_size, 1 << 16):
        raise ProjectError(f"{path}: {name} unpacks {info.file_size:,} bytes from "
                           f"{info.compress_size:,} (a zip bomb, or not a SpectroPaint project)")


def _check_size(path: Path, size: int, limit: float, what: str) -> None:
    if size > limit:
        raise ProjectError(f"{path}: {what} unpack to {size / 2**20:,.0f} MiB, more than the "
                           f"{limit / 2**20:,.0f} MiB this can take; the file is damaged or "
                           "not a SpectroPaint project")


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number a project holds")


def _manifest(path: Path, data: bytes) -> dict:
    raw = np.frombuffer(data, np.uint8)
    opens = np.isin(raw, np.frombuffer(b"[{", np.uint8)).astype(np.int64)
    closes = np.isin(raw, np.frombuffer(b"]}", np.uint8)).astype(np.int64)
    depth = int(np.max(np.cumsum(opens - closes), initial=0))
    if depth > JSON_DEPTH:  # brackets inside strings count too: a bound, not a parser
        raise ProjectError(f"{path}: the manifest nests {depth} levels deep; a project's "
                           f"has 4")
    try:
        manifest = json.loads(data, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise ProjectError(f"{path}: the manifest is not valid JSON ({e})") from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ProjectError(f"{path}: not a SpectroPaint project (no '{FORMAT}' manifest)")
    version = manifest.get("version")
    if type(version) is not int or version not in PARTS:
        raise ProjectError(f"{path}: project version {version!r} is not supported; this "
                           f"SpectroPaint reads versions {min(PARTS)} to {VERSION}")
    return manifest


def _arrays(path: Path, data: bytes) -> dict[str, np.ndarray]:
    if not data.startswith((*ZIP_MAGICS, NPY_MAGIC)):  # else numpy takes it for a pickle
        raise ProjectError(f"{path}: arrays.npz is not a NumPy archive (it begins "
                           f"{data[:12]!r}); the file is damaged or not a SpectroPaint project")
    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise ProjectError(f"{path}: arrays.npz is not a NumPy archive ({e})") from e
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise ProjectError(f"{path}: arrays.npz is a single array, not the archive of arrays "
                           "a project holds")
    with loaded:
        out = {}
        for info in loaded.zip.infolist():
            name = info.filename.removesuffix(".npy")
            if not info.filename.endswith(".npy"):
                raise ProjectError(f"{path}: arrays.npz holds {info.filename!r}, which is not "
                                   "an array")
            _check_member(path, info, f"arrays.npz's {info.filename}")
            _check_header(path, loaded.zip, info)
            out[name] = loaded[name]
    return out


def _check_header(path: Path, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """The .npy header's shape and dtype must account for exactly the bytes present."""
    with z.open(info) as f:
        try:
            version = np.lib.format.read_magic(f)
            shape, _, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                               else np.lib.format.read_array_header_2_0(f))
        except (ValueError, SyntaxError, TokenError) as e:  # numpy parses it as Python
            raise ProjectError(f"{path}: {info.filename} in arrays.npz is damaged ({e})") from e
        present = info.file_size - f.tell()
    if dtype.kind not in "fiu" or math.prod(shape) * dtype.itemsize != present:
        raise ProjectError(f"{path}: {info.filename} in arrays.npz declares {shape} {dtype} "
                           f"but holds {present:,} bytes")
    if info.filename == "audio.npy" and len(shape) == 2 and shape[0] > MAX_CHANNELS:
        raise ProjectError(f"{path}: the audio has {shape[0]:,} channels; SpectroPaint opens up "
                           f"to {MAX_CHANNELS}")


def _check_contents(path: Path, manifest: dict, arrays: dict[str, np.ndarray],
                    changes: dict | None = None) -> None:
    def bad(what: str) -> ProjectError:
        return ProjectError(f"{path}: the project is damaged: {what}")

    rate = manifest.get("sample_rate")
    if type(rate) is not int or not RATE_RANGE[0] <= rate <= RATE_RANGE[1]:
        raise bad(f"sample rate {rate!r} (use {RATE_RANGE[0]} to {RATE_RANGE[1]} Hz)")
    analysis = manifest.get("analysis")
    if not isinstance(analysis, dict):
        raise bad(f"analysis settings {analysis!r:.80}")
    try:
        checked(analysis)
    except ParameterError as e:
        raise bad(f"analysis settings ({e})") from None
    for key in ("source", "project"):
        value = manifest.get(key)
        if not (value is None or isinstance(value, str) and len(value) <= PATH_CHARS):
            raise bad(f"{key} {value!r:.80}")
    kind = manifest.get("source_kind", {})
    if not _source_kind_ok(kind):
        raise bad(f"source format {kind!r}")
    try:
        Metadata.from_json(manifest.get("source_metadata", {}))
    except ValueError as e:
        raise bad(f"source metadata ({e})") from None
    view = manifest.get("view", {})
    if not isinstance(view, dict) or not isinstance(view.get("colormap", ""), str) or any(
            isinstance(view.get(k), bool) or not isinstance(view.get(k, 0.0), int | float)
            for k in VIEW_NUMBERS):
        raise bad(f"view settings {view!r}")
    if view.get("selection") is not None:
        try:
            Selection.from_json(view["selection"])
        except ParameterError as e:
            raise bad(f"selection ({e})") from None
    audio = arrays.get("audio")
    if audio is None or audio.ndim != 2 or audio.shape[0] < 1 or audio.shape[1] < 1:
        raise bad(f"audio of shape {None if audio is None else audio.shape} (a project holds "
                  "[channels, frames], at least one of each)")
    content = arrays.get("content")
    if content is not None and (manifest["version"] < 5 or content.shape != audio.shape):
        raise bad(f"content of shape {content.shape} in a version {manifest['version']} "
                  f"project of audio {audio.shape}")
    if kind.get("layout") and len(kind["layout"]) != audio.shape[0]:
        raise bad(f"a speaker layout of {len(kind['layout'])} names for {audio.shape[0]} "
                  "channels")
    rects = manifest.get("edited_rects")
    if not isinstance(rects, list):
        raise bad(f"edited rects {rects!r}")
    for i, rect in enumerate(rects):
        if not (isinstance(rect, list) and len(rect) == 4 and all(type(v) is int for v in rect)
                and 0 <= rect[0] < rect[1] and 0 <= rect[2] < rect[3]):
            raise bad(f"edited rect {i}: {rect!r}")
        shape = (audio.shape[0], rect[1] - rect[0], rect[3] - rect[2])
        parts = [arrays.get(f"{name}_{i}") for name in PARTS[manifest["version"]]]
        if any(p is None or p.shape != shape for p in parts):
            raise bad(f"the cells of edited rect {i} are missing or not {shape}")
        if manifest["version"] == 1 and (parts[0] < 0).any():
            raise bad(f"negative magnitudes in edited rect {i}")
    states = 0
    if "layers" in manifest:
        if manifest["version"] not in (4, 5):
            raise bad(f"layers in a version {manifest['version']} project")
        layers.check(manifest["layers"], arrays, bad)
        states = len(manifest["layers"]["states"])
    if "history" in manifest:
        check_history(manifest["history"], arrays, audio.shape[0], bad,
                      version=manifest["version"], states=states, length=audio.shape[1],
                      changes=changes)
    if manifest["version"] >= 6:
        _check_walked(manifest, arrays, audio.shape[0], bad)
    for name, array in arrays.items():
        if not np.isfinite(array).all():
            raise bad(f"{name} holds NaN or infinite values")
    for name, samples in (("audio", audio), ("content", content)):
        peak = 0.0 if samples is None else max(float(samples.max()), -float(samples.min()))
        if peak > 10 ** (HEADROOM_DB / 20):  # its coefficients would pass coefficient_limit
            raise bad(f"{name} samples up to {peak:.3g}, more than {HEADROOM_DB} dB past full "
                      "scale (no sound is; its analysis would not be finite)")


def cells_digest(manifest: dict, arrays: dict[str, np.ndarray]) -> str:
    """The SHA-256 of a project's edits: the manifest's edited rects, layers and history,
    and every array but the audio (which has its own), name, type and shape included;
    so a tile list permuted, or cells of one tile swapped with another's, is seen."""
    h = hashlib.sha256(json.dumps([manifest.get(k) for k in CELL_KEYS],
                                  sort_keys=True).encode())
    for name in sorted(set(arrays) - {"audio"}):
        array = np.ascontiguousarray(arrays[name])
        h.update(f"{name} {array.dtype.str} {array.shape}".encode())
        h.update(array.data)
    return h.hexdigest()


def check_digest(path: Path, manifest: dict, arrays: dict[str, np.ndarray]) -> None:
    """The edits against their checksum, where the project has one (written since
    issue 51; earlier files have none and open as before)."""
    if "cells_sha256" in manifest and manifest["cells_sha256"] != cells_digest(manifest, arrays):
        raise ProjectError(f"{path}: the edits (edited rects, layers or history) do not match "
                           "their checksum; the file is damaged. Open an earlier copy of it")


def check_bounded(path: Path, arrays: dict[str, np.ndarray], limit: float) -> None:
    """Every coefficient the project holds (each float array but the audio: edited
    rects, layer tiles, history patches) within ``limit``, the transform's
    ``coefficient_limit``. Past it no sound and no edit made them, and a mix of them
    would not resynthesize to finite samples (3e38 is a finite float32 whose ``|z|``
    is not), so the project is refused rather than opened clamped, unlike what was saved."""
    for name, array in arrays.items():
        if name != "audio" and array.dtype.kind == "f" and array.size:
            peak = max(float(array.max()), -float(array.min()))
            if peak > limit:
                raise ProjectError(
                    f"{path}: the project is damaged: {name} holds values past {limit:.3g} "
                    f"(up to {peak:.3g}), {HEADROOM_DB} dB above the loudest a full-scale "
                    "sound analyses to; no edit makes them. Open an earlier copy of it")


def _check_walked(manifest: dict, arrays: dict[str, np.ndarray], channels: int, bad) -> None:
    """A version 6 project's mask of the cells it stores, one bit for each cell of its
    edited rects and history patches, and as many cells as bits set."""
    history = manifest.get("history", {"steps": [], "index": 0})
    rects, row, steps = arrays.get("history_rects", np.zeros((0, 4), np.int64)).tolist(), 0, []
    for step in history["steps"]:
        steps.append((step["channel"], rects[row:row + step["patches"]]))
        row += step["patches"]
    cells = cell_count(channels, manifest["edited_rects"], steps, history["index"])
    if 8 * cells > 0.8 * available_memory():
        raise bad(f"its edited rects and history patches declare {cells:,} cells, more than "
                  "memory holds")
    mask, values = arrays.get("cells_mask"), arrays.get("cells_values")
    if mask is None or mask.dtype != np.uint8 or mask.ndim != 1:
        raise bad("cells_mask is not a uint8 array")
    bits = unpacked_mask(mask, cells)
    if bits is None:
        raise bad(f"cells_mask is not the deflated mask of {cells:,} cells")
    pad = 8 * len(bits) - cells  # the last byte's low bits lie past the cells
    count = int(np.bitwise_count(bits).sum()) - int(np.bitwise_count(bits[-1] & ((1 << pad) - 1))) \
        if len(bits) else 0
    if values is None or values.dtype != np.float32 or values.shape != (count, 2):
        raise bad(f"cells_values is not float32 [{count:,}, 2]")


def check_history(history, arrays: dict[str, np.ndarray], channels: int, bad, *,
                  version: int = VERSION, states: int = 0, length: int = 0,
                  changes: dict | None = None) -> None:
    """The undo history (app.project.saved_history): its steps, and arrays holding exactly
    the cells its patches need (their bounds in the document are checked on opening);
    ``states``: how many layer states the project holds (a step's "stack" names two);
    ``length``: the audio's samples (a version 6 repair's change lies within them);
    ``changes``: given each step's change unpacked (float32, by step)."""
    steps = history.get("steps") if isinstance(history, dict) else None
    index = history.get("index") if isinstance(history, dict) else None
    if not isinstance(steps, list) or len(steps) > MAX_STEPS or type(index) is not int \
            or not 0 <= index <= len(steps):
        raise bad(f"history {str(history)[:80]!r}")
    for i, step in enumerate(steps):
        if not (isinstance(step, dict) and set(step) == STEP_KEYS[max(k for k in STEP_KEYS
                                                                      if k <= version)]
                and _layer_fields_ok(step, states)
                and isinstance(step["label"], str) and len(step["label"]) <= LABEL_CHARS
                and (step["channel"] is None or type(step["channel"]) is int
                     and 0 <= step["channel"] < channels)
                and type(step["patches"]) is int and step["patches"] >= 0):
            raise bad(f"history step {i}: {str(step)[:80]!r}")
        if version >= 6:
            x = _check_change(step, arrays.get(f"history_change_{i}"), channels, length,
                              lambda what, i=i: bad(f"history step {i}'s change: {what}"))
            if changes is not None and x is not None:
                changes[i] = x
    rects = arrays.get("history_rects")
    count = sum(step["patches"] for step in steps)
    if rects is None or rects.dtype != np.int64 or rects.shape != (count, 4):
        raise bad(f"history_rects is not int64 [{count}, 4]")
    if count and ((rects[:, 0] < 0) | (rects[:, 0] >= rects[:, 1]) | (rects[:, 2] < 0)
                  | (rects[:, 2] >= rects[:, 3])).any():
        raise bad("a history patch's bins or frames are empty or negative")
    if version >= 6:
        return  # the cells are in cells_mask and cells_values (_check_walked)
    cells = {"before": 0, "after": 0}
    row = 0
    for i, step in enumerate(steps):
        depth = channels if step["channel"] is None else 1
        for b0, b1, f0, f1 in rects[row:row + step["patches"]].tolist():
            size = depth * (b1 - b0) * (f1 - f0)
            cells["before"] += size
            cells["after"] += size if i >= index else 0
        row += step["patches"]
    for name, size in cells.items():
        array = arrays.get(f"history_{name}")
        if array is None or array.dtype != np.float32 or array.shape != (size, 2):
            raise bad(f"history_{name} is not float32 [{size:,}, 2]")


def _check_change(step: dict, samples, channels: int, length: int, bad) -> np.ndarray | None:
    """A version 6 step's change: none, or its first sample and its float32 array
    ``[channels, n]`` within the audio's ``length``; that array unpacked (None: none)."""
    span = step["change"]
    if span is None:
        if samples is not None:
            raise bad("an array for a step without one")
        return None
    depth = channels if step["channel"] is None else 1
    if not (isinstance(span, list) and len(span) == 2 and all(type(v) is int for v in span)
            and 0 <= span[0] <= span[0] + span[1] <= length and span[1] > 0):
        raise bad(f"samples {str(span)[:40]} (first and how many, within {length:,})")
    if samples is None or samples.dtype != np.uint8 or samples.ndim != 1:
        raise bad("its array is missing or not uint8")
    if 4 * depth * span[1] > 0.8 * available_memory():
        raise bad(f"{depth} x {span[1]:,} samples, more than memory holds")
    x = Change(span[0], (depth, span[1]), samples).samples()
    if x is None:
        raise bad(f"its array is not {depth} x {span[1]:,} packed samples")
    if not np.isfinite(x).all() or np.abs(x).max() > 2 * 10 ** (HEADROOM_DB / 20):
        raise bad(f"samples not finite or past {2 * 10 ** (HEADROOM_DB / 20):.3g}")
    return x


def _layer_fields_ok(step: dict, states: int) -> bool:
    """A version 4 step's layer id and layer states (none in earlier versions)."""
    layer, stack = step.get("layer", 0), step.get("stack")
    return type(layer) is int and 0 <= layer < 1 << 40 and (stack is None or (
        isinstance(stack, list) and len(stack) == 2
        and all(type(i) is int and 0 <= i < states for i in stack)))


def _source_kind_ok(kind) -> bool:
    """The source's format and depth (names) and its speakers (a list of names)."""
    def name(value, empty_ok=True) -> bool:
        return isinstance(value, str) and (empty_ok or bool(value)) and len(value) <= NAME_CHARS

    return (isinstance(kind, dict) and set(kind) <= {"format", "subtype", "layout"}
            and name(kind.get("format", "")) and name(kind.get("subtype", ""))
            and isinstance(kind.get("layout", []), list)
            and all(name(n, empty_ok=False) for n in kind.get("layout", [])))
