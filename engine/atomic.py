"""Writing a file so that a crash leaves the old one or the new one, never half:
write ``.<name>.<pid>.part`` beside it, flush it to disk, rename it over.

A process killed meanwhile leaves its ``.part`` behind; the next write to the
same name removes those whose process is gone, so they never pile up."""

import os
from pathlib import Path

NAME_MAX = 255


def temporary(path: Path) -> Path:
    """Where to write ``path`` first (this process's temporary name for it)."""
    name = f".{path.name}.{os.getpid()}.part"
    if len(name.encode()) > NAME_MAX:
        raise OSError(36, f"the file name is too long ({len(path.name.encode())} bytes; at most "
                          f"{NAME_MAX - 20} here)", str(path))
    return path.parent / name


def clear_stale(path: Path) -> None:
    """Remove temporary files for ``path`` left by processes that are gone."""
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix):-len(".part")]
        if entry.name.startswith(prefix) and entry.name.endswith(".part") and pid.isdigit() \
                and not running(int(pid)):
            discard(Path(entry.path))


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
