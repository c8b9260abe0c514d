"""A long fuzzing run of every hypothesis surface (tests/test_fuzz*.py), with
hypothesis' statistics (examples run, outcomes) at the end; the suite runs few.

    .venv/bin/python scripts/fuzz.py [--examples 2000] [--kills 50]

--examples: per cheap surface (projects, presets, scripts, CLI arguments); the
painting, features and compare surfaces run a sixth of it. --kills: kill -9 runs of
batch and of features each.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=2000)
    ap.add_argument("--kills", type=int, default=50)
    args = ap.parse_args()
    env = {**os.environ, "SPECPAINT_FUZZ": str(args.examples),
           "SPECPAINT_FUZZ_KILLS": str(args.kills), "SPECPAINT_DEVICE": "cpu"}
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_fuzz*.py"))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                           "no:cacheprovider", "--hypothesis-show-statistics", *tests],
                          cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
