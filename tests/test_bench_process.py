"""The benches' ``--before REV``: the commit's own code runs, not the checkout's."""

import os
import subprocess
from pathlib import Path

from bench.bench_process import ROOT, checkout


def test_before_runs_the_commit_s_tree_not_the_checkout(tmp_path):
    """Run as the benches run it (from the checkout, this checkout first on PYTHONPATH),
    the command of ``checkout`` imports the extracted tree: ``python -m`` and ``-c``
    put the current folder first on the path, and without ``-P`` the checkout's own
    code ran as the commit before."""
    folder = tmp_path / "before"
    command = checkout("HEAD", folder)
    python = command[:-2]  # as bench_batch takes the naive loop's Python from it
    assert command[-2:] == ["-m", "app.main"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*python, "-c", "import app.main, engine; print(app.main.__file__); "
                           "print(engine.__file__)"], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    for line in done.stdout.split():
        assert Path(line).is_relative_to(folder), line
