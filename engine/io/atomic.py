"""Writing a file so that a crash leaves the old one or the new one, never half:
write ``.<name>.<pid>.part`` beside it, flush it to disk, rename it over.

A process killed meanwhile leaves its ``.part`` behind (a 212 MB export, a 214 MB
project). The next write into that folder, by any name, removes every such file
whose process is gone and says so (:func:`clear_stale` returns the note: export
reports, the saved-project message, ``specpaint`` warnings), so they never pile up."""

import math
import os
import threading
import time
from pathlib import Path

NAME_MAX = 255
SWEEP_SECONDS = 60.0
_SWEPT: dict[Path, float] = {}  # folder: when it was last listed
_SWEEP_LOCK = threading.Lock()


def temporary(path: Path) -> Path:
    """Where to write ``path`` first (this process's temporary name for it)."""
    name = f".{path.name}.{os.getpid()}.part"
    if len(name.encode()) > NAME_MAX:
        raise OSError(36, f"the file name is too long ({len(path.name.encode())} bytes; at most "
                          f"{NAME_MAX - 20} here)", str(path))
    return path.parent / name


def clear_stale(path: Path) -> str | None:
    """Remove the temporary files in ``path``'s folder left by processes that are gone
    (killed while writing), whatever name they were for; a one-line note of what went,
    or None.

    A folder is listed at most once every SWEEP_SECONDS per process: a batch writing
    thousands of files into one folder would otherwise list it once per file
    (quadratic). A part left after a sweep goes at the next one."""
    with _SWEEP_LOCK:
        if time.monotonic() - _SWEPT.get(path.parent, -math.inf) <= SWEEP_SECONDS:
            return None
        _SWEPT[path.parent] = time.monotonic()
    removed, size = [], 0
    for pid, part in _temporaries(path.parent):
        if running(pid):
            continue
        try:
            size += part.stat().st_size
        except OSError:
            continue
        discard(part)
        removed.append(part.name)
    if not removed:
        return None
    return (f"removed {len(removed)} temporary file(s) in {path.parent} left by a write that "
            f"was interrupted ({', '.join(removed[:3])}{', ...' if len(removed) > 3 else ''}; "
            f"{size / 2**20:.1f} MB)")


def _temporaries(folder: Path) -> list[tuple[int, Path]]:
    """The temporary files in ``folder`` (``.<name>.<pid>.part``) and their processes."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    parts = []
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(".part"):
            name, _, pid = entry.name[1:-len(".part")].rpartition(".")
            if name and pid.isdigit():
                parts.append((int(pid), Path(entry.path)))
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


def write_bytes(path: Path, data: bytes) -> str | None:
    """``path.write_bytes(data)``, atomically; the note of :func:`clear_stale`."""
    note = clear_stale(path)
    tmp = temporary(path)
    try:
        tmp.write_bytes(data)
        commit(tmp, path)
    finally:
        discard(tmp)
    return note


def running(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists and is not a zombie (killed, it writes
    nothing more, though its parent, or the init that adopted it, has not reaped it
    yet: a part of it is stale at once)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid != 0 and not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended and waits to be reaped (Linux's /proc; elsewhere False)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
