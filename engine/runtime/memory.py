"""How much memory this process can still take: the system's, and its control
group's where one limits it.

A container (Docker's ``--memory``, a Kubernetes limit), a Slurm job or a
systemd slice caps a process's memory with a control group, while
``/proc/meminfo`` still shows the whole machine: an analysis that "fits"
there is killed by the kernel at the group's limit, with no message and,
in a batch, with the files its worker held. So the memory available is the
least of the system's and, for this process's group and each group above it,
the limit less what the group uses (page cache it could drop not counted).
"""

import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as a huge number, v2 as "max"


def available_memory(proc: Path = Path("/proc"), cgroup_root: Path = CGROUP_ROOT) -> int:
    """Bytes this process can take without swapping or being killed by its group's
    limit. ``proc`` and ``cgroup_root``: where the kernel shows them (other roots
    read another system's files, as the tests do)."""
    return min([_system_available(proc)] + _group_headrooms(proc, cgroup_root))


def _system_available(proc: Path) -> int:
    """MemAvailable on Linux; elsewhere the free pages."""
    try:
        for line in (proc / "meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def _group_headrooms(proc: Path, root: Path) -> list[int]:
    """Limit less use, for the process's memory group and every group above it
    (v1: the ``memory`` hierarchy; v2: the unified one)."""
    try:
        lines = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return []  # not Linux, or no cgroups
    out = []
    for line in lines:
        _, controllers, group = line.split(":", 2)
        if "memory" in controllers.split(","):
            out += _headrooms(root / "memory", group, "memory.limit_in_bytes",
                              "memory.usage_in_bytes", "total_inactive_file")
        elif controllers == "":
            out += _headrooms(root, group, "memory.max", "memory.current", "inactive_file")
    return out


def _headrooms(mount: Path, group: str, limit_file: str, usage_file: str,
               dropped: str) -> list[int]:
    out = []
    folder = mount / group.strip("/")
    while True:
        limit = _read_int(folder / limit_file)
        if limit is not None and limit < _NO_LIMIT:
            usage = _read_int(folder / usage_file) or 0
            out.append(max(0, limit - usage + _stat(folder / "memory.stat", dropped)))
        if folder == mount or mount not in folder.parents:
            return out
        folder = folder.parent


def _read_int(path: Path) -> int | None:
    """A cgroup file's number; None where it is missing or says "max"."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stat(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0
