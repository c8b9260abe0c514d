"""kill -9 at random moments (hypothesis draws the moment, once the command has begun
its work) of ``specpaint batch`` and ``specpaint features``: every output under its
final name is whole and what a clean run writes, a feature set opens whole (the old or
the new) or is refused, and the next run (``--resume``, or the same command) ends with
the clean result and no temporary file. Each example starts a process: ``KILLS``
examples per surface ($SPECPAINT_FUZZ_KILLS, or $SPECPAINT_FUZZ / 20 and at least 2;
scripts/fuzz.py runs many)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.cli_run import ROOT, checkout_first
from tests.fuzzing import EXAMPLES

KILLS = settings(max_examples=int(os.environ.get("SPECPAINT_FUZZ_KILLS", max(2, EXAMPLES // 20))),
                 deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow])
STROKE = ["--preset", "hard-eraser", "--line", "0.1:1000,0.4:1000"]


def command(*args) -> list[str]:
    exe = Path(sys.executable).with_name("specpaint")
    return ([str(exe)] if exe.exists() else [sys.executable, "-m", "app.main"]) + \
        [str(a) for a in args]


def run(*args) -> float:
    """Run to the end in this process; its wall seconds."""
    from app.cli.commands import main

    t0 = time.perf_counter()
    assert main([str(a) for a in args]) == 0
    return time.perf_counter() - t0


def killed(ready, after: float, *args) -> None:
    """Start the command, and once ``ready()`` (its work has begun), kill -9 it and its
    workers ``after`` seconds later."""
    proc = subprocess.Popen(command(*args), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env=checkout_first({**os.environ, "SPECPAINT_DEVICE": "cpu"}))
    deadline = time.monotonic() + 120
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(after)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    while time.monotonic() < deadline:  # and its workers gone, as before any next run
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)


def parts(folder: Path) -> list[Path]:
    return list(folder.rglob(".*.part"))


@pytest.fixture(scope="module")
def takes(tmp_path_factory) -> Path:
    """Six files: mono and stereo, two rates, 0.3 to 1.5 s, in two folders."""
    root = tmp_path_factory.mktemp("kills") / "in"
    (root / "sub").mkdir(parents=True)
    rng = np.random.default_rng(37)
    for i in range(6):
        rate, channels = (22050, 1) if i % 2 else (16000, 2)
        x = rng.uniform(-0.4, 0.4, (int(rate * (0.3 + 0.24 * i)), channels)).astype(np.float32)
        sf.write(root / ("sub" if i > 2 else "") / f"t{i}.wav", x, rate, subtype="FLOAT")
    return root


@pytest.fixture(scope="module")
def clean_batch(takes, tmp_path_factory) -> tuple[Path, float]:
    out = tmp_path_factory.mktemp("clean") / "out"
    return out, run("batch", takes, "-o", out, "--jobs", "1", *STROKE)


@pytest.mark.slow
@KILLS
@given(moment=st.floats(0.0, 1.0), jobs=st.sampled_from(["1", "2"]))
def test_batch_killed_at_any_moment_resumes_to_the_clean_result(takes, clean_batch,
                                                                  tmp_path_factory, moment, jobs):
    clean, seconds = clean_batch
    out = tmp_path_factory.mktemp("killed") / "out"
    killed(lambda: (out / "batch-settings.json").exists(), moment * seconds, "batch", takes,
           "-o", out, "--jobs", jobs, *STROKE)
    for path in out.rglob("*.wav"):  # under its final name: whole, the clean run's
        np.testing.assert_array_equal(sf.read(path)[0],
                                      sf.read(clean / path.relative_to(out))[0])
    event(f"{len(list(out.rglob('*.wav')))} of 6 outputs written when killed")
    journal = out / "batch-journal.jsonl"
    lines = journal.read_text().splitlines() if journal.exists() else []
    for line in lines[:-1]:  # the last may be cut short
        record = json.loads(line)
        assert record["status"] == "done" and Path(record["output"]).exists()
    run("batch", takes, "-o", out, "--jobs", jobs, "--resume", *STROKE)
    written = sorted(p.relative_to(out) for p in out.rglob("*.wav"))
    assert written == sorted(p.relative_to(clean) for p in clean.rglob("*.wav"))
    for rel in written:
        np.testing.assert_array_equal(sf.read(out / rel)[0], sf.read(clean / rel)[0])
    assert not parts(out)


FEATURES = ["--sr", "4096", "--segment", "512:256"]


@pytest.fixture(scope="module")
def clean_features(takes, tmp_path_factory) -> tuple[Path, Path, float]:
    """The set of the first folder's files (what the killed run replaces) and the set of
    all, and how long the latter took."""
    base = tmp_path_factory.mktemp("features")
    old, new = base / "old", base / "new"
    run("features", *sorted(takes.glob("*.wav")), "-o", old, *FEATURES)
    return old, new, run("features", takes, "-o", new, *FEATURES)


@pytest.mark.slow
@KILLS
@given(moment=st.floats(0.0, 1.0))
def test_features_killed_at_any_moment_leave_a_whole_set_or_none(takes, clean_features,
                                                                  tmp_path_factory, moment):
    from app.batch.feature_jobs import open_set
    from engine.errors import ParameterError

    old, new, seconds = clean_features
    out = tmp_path_factory.mktemp("killed-features") / "out"
    out.mkdir()
    for name in ("features.npy", "mapping.npy", "manifest.json"):
        (out / name).write_bytes((old / name).read_bytes())
    killed(lambda: any(out.glob(".features.npy.*.part")), moment * seconds, "features", takes,
           "-o", out, *FEATURES)
    try:
        opened = open_set(out, verify=True)
    except ParameterError as e:
        assert "no manifest.json" in str(e), str(e)
        event("refused: no manifest")
    else:
        whole = old if len(opened.manifest["files"]) == 3 else new
        event("the old set, whole" if whole is old else "the new set, whole")
        same_set(out, whole)
    run("features", takes, "-o", out, *FEATURES)
    assert sorted(p.name for p in out.iterdir()) == ["features.npy", "manifest.json",
                                                      "mapping.npy"]
    same_set(out, new)


def same_set(a: Path, b: Path) -> None:
    """The same mapping, and features to float16's last bit (another process's float
    sums may round a value the other way: seen once in a run of the suite)."""
    np.testing.assert_array_equal(np.load(a / "mapping.npy"), np.load(b / "mapping.npy"))
    x, y = (np.load(folder / "features.npy").astype(np.float32) for folder in (a, b))
    np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-3)
