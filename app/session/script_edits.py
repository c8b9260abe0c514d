"""Edit steps of a stroke script: ``{"edit": VERB, ...}``, checked before anything is
done (app.session.editor's checked_script) and run by the Editor's method of that
verb (app.session.editor_edits) with the step's other keys as its arguments.

    {"edit": "delete" | "cut" | "copy", "start": S, "end": S}    (+ "low", "high": a band)
    {"edit": "trim" | "duplicate", "start": S, "end": S}
    {"edit": "paste", "at": S, "mode": "insert" | "add" | "replace", "semitones": N,
     "shift_hz": HZ}
    {"edit": "insert_silence", "at": S, "seconds": S}
    {"edit": "move", "start": S, "end": S, "low": HZ, "high": HZ, "by_s": S,
     "semitones": N, "stretch": X, "heal": true}
    {"edit": "gain" | "normalize" | "fade_in" | "fade_out" | "invert", "start": S,
     "end": S, ...}   (gain: "db"; normalize: "peak_db"; fades: "curve")
"""

import math
from dataclasses import dataclass

from app.session.selection_process import CURVES
from app.session.time_edit import PASTE_MODES
from engine.errors import ParameterError

RANGE = ("start", "end")
BAND = ("low", "high", "channel")
VERBS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # required, optional keys
    "delete": (RANGE, BAND), "cut": (RANGE, BAND), "copy": (RANGE, BAND),
    "trim": (RANGE, ()), "duplicate": (RANGE, ()),
    "paste": (("at",), ("mode", "semitones", "shift_hz", "as_layer", "channel")),
    "insert_silence": (("at", "seconds"), ()),
    "move": (RANGE, BAND + ("by_s", "semitones", "shift_hz", "stretch", "heal")),
    "gain": (RANGE + ("db",), BAND), "normalize": (RANGE, BAND + ("peak_db",)),
    "fade_in": (RANGE, BAND + ("curve",)), "fade_out": (RANGE, BAND + ("curve",)),
    "invert": (RANGE, BAND),
}
SECONDS = {"start", "end", "at", "seconds", "low", "high"}  # numbers >= 0
TEXT = {"mode": PASTE_MODES, "curve": CURVES}
FLAGS = {"heal", "as_layer"}


@dataclass(frozen=True)
class ScriptEdit:
    """An edit step, checked: the Editor method ``verb`` called with ``args``."""
    where: str
    verb: str
    args: dict


def checked_edit(spec: dict, where: str) -> ScriptEdit:
    verb = spec["edit"]
    if not isinstance(verb, str) or verb not in VERBS:
        raise ParameterError(f"{where}.edit: {verb!r:.40} is not an edit; use one of "
                             f"{', '.join(VERBS)}")
    required, optional = VERBS[verb]
    missing = [k for k in required if k not in spec]
    if missing:
        raise ParameterError(f"{where}: the {verb} step needs {', '.join(missing)}")
    unknown = set(spec) - {"edit", *required, *optional}
    if unknown:
        raise ParameterError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} of a "
                             f"{verb} step (it takes {', '.join(required + optional)})")
    return ScriptEdit(where, verb, {key: _value(key, spec[key], f"{where}.{key}")
                                    for key in required + optional if key in spec})


def _value(key: str, value, where: str):
    """A step's value, checked for its key."""
    if key in TEXT:
        if value not in TEXT[key]:
            raise ParameterError(f"{where}: {value!r:.40}; use one of {', '.join(TEXT[key])}")
        return value
    if key in FLAGS:
        if not isinstance(value, bool):
            raise ParameterError(f"{where}: expected true or false, got {value!r:.40}")
        return value
    if key == "channel":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"{where}: expected a channel number, got {value!r:.40}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or (key in SECONDS and value < 0):
        what = "a number >= 0" if key in SECONDS else "a finite number"
        raise ParameterError(f"{where}: expected {what}, got {value!r:.40}")
    return value
