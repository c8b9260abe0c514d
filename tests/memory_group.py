"""A real memory control group with a limit, for a test or a benchmark to run a
command in: what a container's ``--memory``, a Kubernetes limit or a Slurm job
puts a process in. Made where this machine lets one be made (root, cgroup v1's
memory hierarchy or v2 with the memory controller)."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
V1, V2 = Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")


@contextmanager
def memory_group(limit: int) -> Iterator[Path | None]:
    """A new group limited to ``limit`` bytes (None where none can be made), removed
    afterwards. Its ``memory.peak`` (v2) or ``memory.max_usage_in_bytes`` (v1) is the
    most it used."""
    controllers = V2 / "cgroup.controllers"
    if V1.is_dir():
        folder, limit_file = V1 / f"specpaint-{os.getpid()}", "memory.limit_in_bytes"
    elif controllers.exists() and "memory" in controllers.read_text().split():
        folder, limit_file = V2 / f"specpaint-{os.getpid()}", "memory.max"
    else:
        yield None
        return
    try:
        folder.mkdir()
        (folder / limit_file).write_text(str(limit))
    except OSError:
        if folder.exists():
            folder.rmdir()
        yield None
        return
    try:
        yield folder
    finally:
        deadline = time.monotonic() + 30  # a batch's forkserver outlives it by a moment
        while (folder / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        folder.rmdir()


def most_used(folder: Path) -> int:
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        if (folder / name).exists():
            return int((folder / name).read_text())
    return 0


def run_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python args`` started inside the group ``folder``, on the CPU."""
    env = {**os.environ, "SPECPAINT_DEVICE": "cpu"}
    script = f'echo $$ > {folder / "cgroup.procs"} && exec "$@"'
    return subprocess.run(["sh", "-c", script, "sh", sys.executable, *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
