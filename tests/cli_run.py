"""Running ``specpaint`` as a user runs it: the checkout's own script, in a child
process (kills, Ctrl+C and start-up are only real there)."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout_first(env: dict) -> dict:
    """``env`` with this checkout first on PYTHONPATH: the ``specpaint`` script of an
    editable install imports the packages of the checkout it was installed from (a
    venv shared by several worktrees: another one's), not this one's."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                               env.get("PYTHONPATH")]))}


def interruptible() -> None:
    """In a child process: Ctrl+C's default action. A test run started in the
    background by a shell without job control inherits SIGINT ignored, and Python then
    keeps ignoring it (so would specpaint: it respects how it was started)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def specpaint(*args, cwd=None, env=None, timeout=120):
    exe = shutil.which("specpaint", path=os.path.dirname(sys.executable))
    cmd = [exe] if exe else [sys.executable, "-m", "app.main"]
    env = checkout_first({**os.environ, "SPECPAINT_DEVICE": "cpu", **(env or {})})
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=timeout)
