"""Running ``specpaint`` as a user runs it: in this process (:func:`specpaint_here`, what
a test runs to check what a command says and writes), or the checkout's own script in
a child process (:func:`specpaint`: kills, Ctrl+C, worker death, start-up and a
timeout are only real there)."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.cli.commands import main

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


def specpaint_here(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """``specpaint *args`` run in this process, as :func:`specpaint` runs it in a child:
    for every run that needs no process of its own (a child costs 1.5-4 s of start-up).
    Its status, standard output and standard error."""
    import contextlib
    import io
    import warnings

    from app.main import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_warn = os.environ.copy(), os.getcwd(), warnings.showwarning
    try:
        os.environ.update({"SPECPAINT_DEVICE": "cpu", **(env or {})})
        os.chdir(cwd or ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in args])
            except SystemExit as e:  # argparse's usage errors
                status = e.code if isinstance(e.code, int) else 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        warnings.showwarning = saved_warn
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def run(capsys, *args):
    t0 = time.perf_counter()
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert time.perf_counter() - t0 < 60
    assert "Traceback" not in err
    return status, out, err


def refused(capsys, match, *args):
    status, _, err = run(capsys, *args)
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and match in err, err
    return err


def repairs_nothing(module: str, x, sample_rate: int, folder: Path, name: str = "take") -> str:
    """``specpaint repair MODULE`` on ``x`` (``[n]`` or ``[n, channels]``, written as
    32-bit float), as the docs show it: it must exit 0, say it found nothing and
    changed nothing, and write the source bit for bit; what it said (stderr)."""
    import numpy as np
    import soundfile as sf

    src, out = folder / f"{name}.wav", folder / f"{name} out.wav"
    sf.write(src, np.asarray(x, np.float32), sample_rate, subtype="FLOAT")
    r = specpaint_here("repair", module, src, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "found nothing to repair; nothing changed" in r.stderr, (name, r.stderr)
    assert np.array_equal(sf.read(out, dtype="float32")[0], sf.read(src, dtype="float32")[0])
    return r.stderr
