"""A set of stems written as a whole, so that a folder never holds the stems of two
unmixes mixed (issue 51: a killed ``unmix`` left one new stem beside two stale stems
of an earlier method, and stale stems of another method stayed even without a kill).

The stems are written into a staging folder beside them (``.<stem>-stems.<pid>.partial``);
only when all are written is the set's manifest, ``<stem>-stems.json``, written
marked incomplete and naming the set it replaces; then the earlier set's files go,
the new ones are renamed into place, and the manifest is written again, complete::

    {"format": "spectropaint-stems", "version": 1, "source": "take.wav",
     "method": "hpss", "stems": ["take-1-Recording-harmonic.wav", ...], "complete": true}

A process killed while staging leaves the earlier set whole (its staging folder goes
at the next write); killed after, the manifest says the set is incomplete and names
every file of both, which the next write replaces. Stems of the same name that no
manifest names (an unmix of an earlier version, or the user's files) are refused,
never mixed with a new set.
"""

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from brushes.presets import read_limited
from engine.errors import ParameterError
from engine.io import atomic
from engine.io.export import FORMATS

FORMAT, VERSION = "spectropaint-stems", 1
MANIFEST_BYTES = 1 << 20


def manifest_path(folder: Path, stem: str) -> Path:
    return folder / f"{stem}-stems.json"


def _stem_file(stem: str) -> re.Pattern:
    """A stem file's name (app.session.editor_layers.stem_paths), of any format written."""
    suffixes = "|".join(re.escape(s) for s in FORMATS)
    return re.compile(re.escape(stem) + r"-[0-9]+-[A-Za-z0-9._-]+(" + suffixes + ")",
                      re.IGNORECASE)


def earlier(folder: Path, stem: str) -> list[str]:
    """The files of the stem set of ``stem`` in ``folder`` (its manifest's stems, and
    those a killed write was replacing), which a new set replaces; a ParameterError
    when stems of that name lie there that no manifest names."""
    pattern = _stem_file(stem)
    named = _named(manifest_path(folder, stem), pattern)
    try:
        present = {entry.name for entry in os.scandir(folder)}
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ParameterError(f"{folder}: cannot list the folder for the stems ({e})") from e
    stray = sorted(n for n in present if pattern.fullmatch(n) and n not in named)
    if stray:
        raise ParameterError(
            f"{folder}: holds stems of {stem} that no {manifest_path(folder, stem).name} "
            f"names ({', '.join(stray[:3])}{', ...' if len(stray) > 3 else ''}); move them "
            "away or choose another folder, so that the new stems are not mixed with them")
    return sorted(named & present)


def _named(path: Path, pattern: re.Pattern) -> set[str]:
    """The stems a manifest names (none if there is none), read as hostile input: only
    plain names of stem files, so that no manifest can have another file removed."""
    if not os.path.lexists(path):
        return set()
    data = read_limited(path, limit=MANIFEST_BYTES, what="stem set's manifest")
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError):
        manifest = None
    names = [] if not isinstance(manifest, dict) else \
        manifest.get("stems", []) + manifest.get("replacing", [])
    if not (isinstance(manifest, dict) and manifest.get("format") == FORMAT
            and isinstance(manifest.get("stems"), list)
            and isinstance(manifest.get("replacing", []), list)
            and all(isinstance(n, str) and pattern.fullmatch(n) for n in names)):
        raise ParameterError(f"{path}: not the manifest of a stem set of SpectroPaint's; move "
                             "it away or choose another folder")
    return set(names)


def write_set(folder: Path, stem: str, names: list[str], write: Callable[[int, Path], object],
              *, method: str | None, source: str | None) -> list:
    """Write the stems ``names`` into ``folder`` as one set (see the module's docstring),
    replacing the earlier set of ``stem`` there: ``write(i, path)`` writes stem ``i`` to
    ``path`` (in the staging folder); returns what each call returned."""
    old = earlier(folder, stem)
    _clear_staging(folder, stem)
    staging = folder / f".{stem}-stems.{os.getpid()}.partial"
    try:
        staging.mkdir()
        results = [write(i, staging / name) for i, name in enumerate(names)]
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    manifest = manifest_path(folder, stem)
    entry = {"format": FORMAT, "version": VERSION, "source": source, "method": method,
             "stems": names}
    try:
        _write_manifest(manifest, {**entry, "complete": False, "replacing": old})
        for name in set(old) - set(names):
            (folder / name).unlink(missing_ok=True)
        for name in names:
            os.replace(staging / name, folder / name)
        _write_manifest(manifest, {**entry, "complete": True})
        staging.rmdir()
    except OSError as e:
        raise ParameterError(f"{folder}: putting the stems in place failed ({e}); "
                             f"{manifest.name} says the set is incomplete: write it again") \
            from e
    return results


def _write_manifest(path: Path, manifest: dict) -> None:
    atomic.write_bytes(path, (json.dumps(manifest, indent=2) + "\n").encode())


def _clear_staging(folder: Path, stem: str) -> None:
    """Remove the staging folders of ``stem`` left by processes that are gone (or by
    this one, after a failure)."""
    prefix = f".{stem}-stems."
    for entry in os.scandir(folder):
        pid = entry.name[len(prefix):-len(".partial")]
        if entry.name.startswith(prefix) and entry.name.endswith(".partial") and \
                pid.isdigit() and (int(pid) == os.getpid() or not atomic.running(int(pid))):
            shutil.rmtree(entry.path, ignore_errors=True)
