"""Presets: versioned JSON data, never code.

    {"version": 1, "name": "soft-eraser", "brush": "gain",
     "params": {"gain_db": -24, "hardness": 0.2},
     "inputs": {"opacity": {"pressure": [[0, 0.3], [1, 1]]}},
     "comment": "..."}

Loading applies the brush's defaults, warns about unknown keys, and refuses
an unknown version or brush, a wrong type or an out-of-range value with a
message naming the file, the key path and the allowed range. Built-ins live
in ``assets/presets/``; user presets in ``$XDG_CONFIG_HOME/spectropaint/presets``
(default ``~/.config/...``) override them by name.
"""

import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from brushes.params import INPUTS, Curve, validate_curve
from brushes.registry import get_brush
from engine.errors import ParameterError
from engine.io import atomic
from engine.io.audio import not_a_file

VERSION = 1
KEYS = ("version", "name", "brush", "params", "inputs", "comment")
BUILTIN_DIR = Path(__file__).resolve().parent.parent / "assets" / "presets"
MAX_FILE_BYTES = 1 << 20
PER_STROKE = ("channel",)  # parameters a stroke reads once, not per dab


class PresetWarning(UserWarning):
    pass


@dataclass
class Preset:
    name: str
    brush: str
    params: dict  # the values the preset sets (validated); defaults fill the rest
    inputs: dict[str, dict[str, Curve]] = field(default_factory=dict)
    comment: str = ""
    path: Path | None = None

    def to_json(self) -> str:
        params = {k: (("-inf" if v < 0 else "inf") if isinstance(v, float) and math.isinf(v)
                      else v) for k, v in self.params.items()}  # standard JSON has no infinity
        data = {"version": VERSION, "name": self.name, "brush": self.brush,
                "params": params, "comment": self.comment,
                "inputs": {p: {i: [list(pt) for pt in c] for i, c in curves.items()}
                           for p, curves in self.inputs.items()}}
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def user_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "spectropaint" / "presets"


def parse_preset(data, where: str) -> Preset:
    """Validate a decoded preset; ``where`` (the file) starts every message."""
    if not isinstance(data, dict):
        raise ParameterError(f"{where}: a preset is a JSON object, got {type(data).__name__}")
    version = data.get("version")
    if version != VERSION or isinstance(version, bool):
        raise ParameterError(f"{where}: version: {version!r} is not supported; this SpectroPaint "
                             f"reads version {VERSION} (a newer release may read it)")
    for key in data:
        if key not in KEYS:
            warnings.warn(f"{where}: unknown key '{key}' ignored", PresetWarning, stacklevel=2)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        raise ParameterError(f"{where}: name: expected a non-empty text of at most 100 "
                             f"characters, got {name!r:.40}")
    brush = get_brush(data.get("brush"), f"{where}: brush")
    params = expect_object(data.get("params", {}), f"{where}: params")
    values, unknown = brush.resolve(params, f"{where}: params")
    for key in unknown:
        warnings.warn(f"{where}: params.{key}: {brush.name} has no such parameter; ignored",
                      PresetWarning, stacklevel=2)
    inputs = {}
    for pname, curves in expect_object(data.get("inputs", {}), f"{where}: inputs").items():
        at = f"{where}: inputs.{pname}"
        if pname not in values:
            raise ParameterError(f"{at}: {brush.name} has no parameter '{pname}'")
        if brush.param(pname).choices:
            raise ParameterError(f"{at}: a choice parameter cannot follow inputs")
        if pname in PER_STROKE:
            raise ParameterError(f"{at}: {pname} is set once per stroke and cannot follow "
                                 "inputs")
        inputs[pname] = {}
        for iname, points in expect_object(curves, at).items():
            if iname not in INPUTS:
                raise ParameterError(f"{at}.{iname}: unknown input; use one of "
                                     f"{', '.join(INPUTS)}")
            inputs[pname][iname] = validate_curve(points, f"{at}.{iname}")
    comment = data.get("comment", "")
    if not isinstance(comment, str):
        raise ParameterError(f"{where}: comment: expected text, got {type(comment).__name__}")
    return Preset(name, brush.name, {k: values[k] for k in params if k not in unknown},
                  inputs, comment)


def expect_object(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ParameterError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def read_limited(path: Path, *, limit: int, what: str) -> bytes:
    """The bytes of the file ``path`` (a ``what``), refused in one ParameterError naming
    it when it is past ``limit`` bytes or not a regular file: a named pipe would keep
    the read waiting for a writer for ever, a device such as /dev/zero never ends."""
    if (kind := not_a_file(path)) is not None:
        raise ParameterError(f"{path}: is {kind}, not a {what}; give a file")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise ParameterError(f"{path}: cannot read the {what} ({e})") from e
    if len(data) > limit:
        raise ParameterError(f"{path}: a {what} is at most {limit // 2**20} MiB; this one is "
                             "larger")
    return data


def load_preset(path: str | os.PathLike) -> Preset:
    path = Path(path)
    try:
        text = read_limited(path, limit=MAX_FILE_BYTES, what="preset").decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParameterError(f"{path}: cannot read the preset ({e})") from e
    if not text.strip():
        raise ParameterError(f"{path}: the preset file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParameterError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column "
                             f"{e.colno} (truncated or mistyped?)") from e
    except RecursionError as e:
        raise ParameterError(f"{path}: the JSON is nested too deeply to be a preset") from e
    except ValueError as e:  # an integer of thousands of digits, say
        raise ParameterError(f"{path}: not a preset ({e})") from e
    preset = parse_preset(data, str(path))
    preset.path = path
    return preset


def save_preset(preset: Preset, path: str | os.PathLike) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(path, preset.to_json().encode("utf-8"))


def all_presets() -> dict[str, Preset]:
    """Built-in presets, then user presets overriding them by name."""
    found = {p.name: p for p in map(load_preset, sorted(BUILTIN_DIR.glob("*.json")))}
    folder = user_dir()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            preset = load_preset(path)
        except ParameterError as e:  # one broken user file must not hide the others
            warnings.warn(f"{e}; skipped", PresetWarning, stacklevel=2)
            continue
        found[preset.name] = preset
    return found


def find_preset(name: str) -> Preset:
    presets = all_presets()
    if name not in presets:
        raise ParameterError(f"unknown preset '{name}'; `specpaint presets` lists them "
                             f"({', '.join(sorted(presets))})")
    return presets[name]
