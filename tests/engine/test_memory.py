"""The memory available to this process: the system's and its control group's.

The group files are laid out as the kernel shows them (cgroup v1 and v2) in a
folder; where these tests run as root on a machine with a writable memory
controller, a real group with a limit is made too, and a batch run in it."""

from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.runtime.memory import available_memory
from tests.memory_group import memory_group, run_in

GiB = 2**30


def system(tmp_path, groups: str, meminfo_kb: int = 20 * GiB // 1024) -> tuple[Path, Path]:
    proc, root = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text(groups)
    (proc / "meminfo").write_text(f"MemTotal: 33554432 kB\nMemAvailable: {meminfo_kb} kB\n")
    return proc, root


def group(folder: Path, **files) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)


def test_without_a_limiting_group_it_is_the_systems_available_memory(tmp_path):
    proc, root = system(tmp_path, "4:memory:/a\n1:cpu:/\n0::/\n", meminfo_kb=1234567)
    group(root / "memory" / "a", memory_limit_in_bytes="9223372036854771712\n",
          memory_usage_in_bytes=str(5 * GiB))
    assert available_memory(proc, root) == 1234567 * 1024


def test_a_v1_group_limit_leaves_its_limit_less_what_it_uses_but_could_not_drop(tmp_path):
    proc, root = system(tmp_path, "5:memory:/job/step\n0::/\n")
    group(root / "memory" / "job", memory_limit_in_bytes=str(3 * GiB),
          memory_usage_in_bytes=str(GiB))  # the parent: 2 GiB left
    group(root / "memory" / "job" / "step", memory_limit_in_bytes=str(2 * GiB),
          memory_usage_in_bytes=str(GiB + GiB // 2),
          memory_stat=f"cache 1\ntotal_inactive_file {GiB // 4}\n")
    assert available_memory(proc, root) == 2 * GiB - (GiB + GiB // 2 - GiB // 4)


def test_a_parent_groups_smaller_headroom_wins(tmp_path):
    proc, root = system(tmp_path, "5:memory:/job/step\n")
    group(root / "memory" / "job", memory_limit_in_bytes=str(4 * GiB),
          memory_usage_in_bytes=str(3 * GiB + GiB // 2))
    group(root / "memory" / "job" / "step", memory_limit_in_bytes=str(2 * GiB),
          memory_usage_in_bytes="0")
    assert available_memory(proc, root) == GiB // 2


def test_a_v2_group_with_max_above_a_limited_slice(tmp_path):
    proc, root = system(tmp_path, "0::/user.slice/run-1.scope\n")
    group(root / "user.slice", memory_max=str(GiB), memory_current=str(GiB // 2),
          memory_stat=f"anon 5\ninactive_file {GiB // 8}\n")
    group(root / "user.slice" / "run-1.scope", memory_max="max\n", memory_current="7")
    assert available_memory(proc, root) == GiB // 2 + GiB // 8


def test_a_group_over_its_limit_has_nothing_left_and_no_cgroup_file_means_the_system(tmp_path):
    proc, root = system(tmp_path, "0::/\n")
    group(root, memory_max=str(GiB), memory_current=str(2 * GiB))
    assert available_memory(proc, root) == 0
    (proc / "self" / "cgroup").unlink()
    assert available_memory(proc, root) == 20 * GiB


@contextmanager
def limited(limit: int):
    with memory_group(limit) as folder:
        if folder is None:
            pytest.skip("no memory control group can be made on this machine")
        yield folder


def test_inside_a_real_limited_group_the_limit_is_what_is_available():
    with limited(GiB) as folder:
        done = run_in(folder, "-c",
                      "from engine.runtime.memory import available_memory as a; print(a())")
    assert done.returncode == 0, done.stderr
    assert 0.5 * GiB < int(done.stdout) <= GiB  # the limit less what the interpreter holds


@pytest.mark.slow
def test_a_batch_in_a_limited_group_fails_the_file_in_words_instead_of_being_killed(tmp_path):
    """An analysis that fits the machine but not the group: before, check_fits read only
    /proc/meminfo, and the kernel killed the batch with nothing written to its journal."""
    rate = 44100
    x = np.random.default_rng(0).uniform(-0.3, 0.3, 60 * rate).astype(np.float32)
    sf.write(tmp_path / "take.wav", x, rate, subtype="PCM_16")  # hop 16: ~1.4 GiB of cells
    out = tmp_path / "out"
    with limited(GiB) as folder:
        done = run_in(folder, "-m", "app.main", "batch", str(tmp_path / "take.wav"), "-o",
                      str(out), "--preset", "hard-eraser", "--line", "0:1000,1:1000",
                      "--hop", "16", "--jobs", "1")
    assert done.returncode == 1, (done.returncode, done.stderr)
    records = (out / "batch-journal.jsonl").read_text().splitlines()
    assert len(records) == 1 and '"failed"' in records[0]
    assert "GiB available that one document may take: use a larger hop" in records[0]
    assert not (out / "take.wav").exists()


@pytest.mark.slow
def test_a_batch_whose_workers_would_not_fit_together_paints_every_file(tmp_path):
    """Two worker processes each painting a 30 s stereo file at hop 32 (about 0.9 GiB)
    in a 2 GiB group: before, both passed their documents' checks at once, the kernel
    killed one, the broken pool failed all five files (exit 1, nothing written). Now
    the batch runs them one at a time, as their estimated peaks fit."""
    rate = 44100
    x = np.random.default_rng(0).uniform(-0.3, 0.3, (30 * rate, 2)).astype(np.float32)
    takes = tmp_path / "takes"
    takes.mkdir()
    for i in range(5):  # two groups of files: both workers get one
        sf.write(takes / f"take{i}.wav", x, rate, subtype="PCM_16")
    out = tmp_path / "out"
    with limited(2 * GiB) as folder:
        done = run_in(folder, "-m", "app.main", "batch", str(takes), "-o", str(out),
                      "--preset", "hard-eraser", "--line", "0:1000,30:1000", "--hop", "32",
                      "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("5 of 5 file(s) done, 0 failed")
    assert sorted(p.name for p in out.glob("*.wav")) == [f"take{i}.wav" for i in range(5)]
