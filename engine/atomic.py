"""Writing a file so that a crash leaves the old one or the new one, never half:
write ``.<name>.<pid>.part`` beside it, flush it to disk, rename it over.

A process killed meanwhile leaves its ``.part`` behind; a later write to the
same name removes those whose process is gone, so they never pile up."""

import math
import os
import threading
import time
from pathlib import Path

NAME_MAX = 255
SWEEP_SECONDS = 60.0
_SWEEPS: dict[Path, tuple[float, dict[str, list[tuple[int, Path]]]]] = {}  # folder: when, parts
_SWEEP_LOCK = threading.Lock()


def temporary(path: Path) -> Path:
    """Where to write ``path`` first (this process's temporary name for it)."""
    name = f".{path.name}.{os.getpid()}.part"
    if len(name.encode()) > NAME_MAX:
        raise OSError(36, f"the file name is too long ({len(path.name.encode())} bytes; at most "
                          f"{NAME_MAX - 20} here)", str(path))
    return path.parent / name


def clear_stale(path: Path) -> None:
    """Remove temporary files for ``path`` left by processes that are gone.

    A folder is listed at most once every SWEEP_SECONDS per process, and what the
    listing found is kept by name: a batch writing thousands of files into one folder
    would otherwise list it once per file (quadratic). A part left after a sweep is
    removed by a write after the next one."""
    with _SWEEP_LOCK:
        when, parts = _SWEEPS.get(path.parent, (-math.inf, {}))
        if time.monotonic() - when > SWEEP_SECONDS:
            parts = _temporaries(path.parent)
            _SWEEPS[path.parent] = (time.monotonic(), parts)
        found = parts.pop(path.name, [])
    for pid, part in found:
        if not running(pid):
            discard(part)


def _temporaries(folder: Path) -> dict[str, list[tuple[int, Path]]]:
    """The temporary files in ``folder`` (``.<name>.<pid>.part``) by the name they are for."""
    parts: dict[str, list[tuple[int, Path]]] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return parts
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(".part"):
            name, _, pid = entry.name[1:-len(".part")].rpartition(".")
            if name and pid.isdigit():
                parts.setdefault(name, []).append((int(pid), Path(entry.path)))
    return parts


def commit(tmp: Path, path: Path) -> None:
    """Flush ``tmp`` to disk and rename it to ``path`` (then make the rename durable)."""
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def discard(tmp: Path) -> None:
    """Remove a temporary file; never raises (it must not hide the error being handled)."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


def write_bytes(path: Path, data: bytes) -> None:
    """``path.write_bytes(data)``, atomically."""
    clear_stale(path)
    tmp = temporary(path)
    try:
        tmp.write_bytes(data)
        commit(tmp, path)
    finally:
        discard(tmp)


def running(pid: int) -> bool:
    """Whether process ``pid`` exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid != 0
