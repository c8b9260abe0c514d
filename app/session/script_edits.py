"""Edit steps of a stroke script: ``{"edit": VERB, ...}``, checked before anything is
done (app.session.editor's checked_script) and run by the Editor's method of that
verb with the step's other keys as its arguments.

    {"edit": "delete" | "cut" | "copy" | "trim" | "duplicate", "start": S, "end": S}
    {"edit": "paste", "at": S, "mode": "insert" | "add" | "replace"}
    {"edit": "insert_silence", "at": S, "seconds": S}
"""

import math
from dataclasses import dataclass

from app.session.time_edit import PASTE_MODES
from engine.errors import ParameterError

RANGE = (("start", "end"), ())
VERBS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # required, optional keys
    "delete": RANGE, "cut": RANGE, "copy": RANGE, "trim": RANGE, "duplicate": RANGE,
    "paste": (("at",), ("mode",)),
    "insert_silence": (("at", "seconds"), ()),
}
TEXT_KEYS = {"mode": PASTE_MODES}


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
    args = {}
    for key in required + optional:
        if key not in spec:
            continue
        value = spec[key]
        if key in TEXT_KEYS:
            if value not in TEXT_KEYS[key]:
                raise ParameterError(f"{where}.{key}: {value!r:.40}; use one of "
                                     f"{', '.join(TEXT_KEYS[key])}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value < 0:
            raise ParameterError(f"{where}.{key}: expected seconds (a number >= 0), got "
                                 f"{value!r:.40}")
        args[key] = value
    return ScriptEdit(where, verb, args)
