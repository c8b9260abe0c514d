"""``--device auto``: what paints a batch (app.batch.plan.choose) on machines described
by their numbers, as a plain function of them; the line the command prints and what
it runs on this machine; the GPU's pipeline fed by CPU processes, run on the CPU."""

import os

import numpy as np
import pytest
import soundfile as sf

from app.batch import jobs as batch
from app.batch.cluster import worker_pool
from app.batch.pipeline import run_local
from app.batch.plan import CPU_WORKERS, GPU, GPU_DECODERS, Gpu, Machine, Probe, choose
from app.batch.probe import probe
from app.batch.stacks import check_settings
from tests.cli_run import specpaint_here

GIB = 1 << 30
H100 = (Gpu("cuda:0", "NVIDIA H100 80GB HBM3", 80 * GIB),)
LINE = ["--preset", "hard-eraser", "--line", "0.1:1000,0.6:1000"]


@pytest.mark.parametrize("machine, probe_s, mode, workers", [
    # no GPU: the cores, as many as the memory holds with a group each
    (Machine(2, 16 * GIB), None, CPU_WORKERS, 2),
    (Machine(16, 2 * GIB), None, CPU_WORKERS, 2),  # 2 GiB / (512 MiB + 400 MiB)
    (Machine(1, 16 * GIB), None, CPU_WORKERS, 1),
    # short files, host-bound (docs/benchmarks.md, "Batch (cuda)": 20 ms of host work,
    # 1-2 ms on the GPU): 16 cores beat one GPU process, and tie with the GPU fed by 15
    ((Machine(16, 64 * GIB, H100)), (0.020, 0.012, 0.002), CPU_WORKERS, 16),
    # painting dear on a core (long files, constant-Q), cheap on the GPU: fed by the CPU
    ((Machine(16, 64 * GIB, H100)), (0.100, 5.0, 0.20), GPU_DECODERS, 15),
    # two cores and a fast GPU: one core decodes and writes, the GPU paints
    ((Machine(2, 64 * GIB, H100)), (0.005, 0.020, 0.002), GPU_DECODERS, 1),
    # one core: no process to spare beside the GPU's
    ((Machine(1, 64 * GIB, H100)), (0.005, 0.020, 0.002), GPU, 1),
])
def test_the_fastest_estimate_is_chosen(machine, probe_s, mode, workers):
    plan = choose(machine, files=500, group_peak=400 << 20,
                  probe=None if probe_s is None else Probe(*probe_s))
    assert (plan.mode, plan.workers) == (mode, workers)
    assert plan.device == ("cpu" if mode == CPU_WORKERS else "cuda:0")
    line = plan.line()
    assert "\n" not in line and line.startswith("specpaint: batch: ")
    if probe_s is not None:  # the numbers it chose from
        assert "files/s against" in line and f"{probe_s[0] * 1e3:.0f} ms to decode" in line
    else:
        assert "no GPU" in line


def test_a_device_asked_for_is_what_paints():
    assert choose(Machine(8, 64 * GIB, H100), files=500, group_peak=0, asked="cpu") == \
        choose(Machine(8, 64 * GIB), files=500, group_peak=0, asked="cpu")
    forced = choose(Machine(8, 64 * GIB, H100), files=500, group_peak=0, asked="cuda:0",
                    probe=Probe(0.02, 0.001, 5.0))  # even where the cores would be faster
    assert (forced.mode, forced.device, forced.workers) == (GPU, "cuda:0", 1)
    assert "--device cuda:0" in forced.line()
    jobs = choose(Machine(8, 64 * GIB), files=500, group_peak=0, jobs=3)
    assert (jobs.mode, jobs.workers) == (CPU_WORKERS, 3)
    one = choose(Machine(8, 64 * GIB, H100), files=1, group_peak=0,
                 probe=Probe(0.02, 0.001, 5.0))
    assert (one.mode, one.workers) == (GPU, 1) and "one file" in one.line()


@pytest.mark.slow
def test_the_command_chooses_cpu_workers_here_and_says_why(tmp_path, rng):
    """This machine has no GPU: CPU workers, one a core, and the line says so; the
    outputs are those of one process on the CPU."""
    root = tmp_path / "in"
    root.mkdir()
    for i in range(5):
        x = 0.3 * np.sin(2 * np.pi * rng.uniform(300, 3000) * np.arange(22050) / 22050)
        sf.write(root / f"{i}.wav", (x + rng.normal(0, 0.05, x.size)).astype(np.float32),
                 22050, subtype="PCM_16")
    auto = specpaint_here("batch", root, "-o", tmp_path / "auto", *LINE,
                          env={"SPECPAINT_DEVICE": ""})
    assert auto.returncode == 0, auto.stderr
    cores = len(os.sched_getaffinity(0))
    workers = "one process" if cores == 1 else f"{cores} worker processes"
    assert f"specpaint: batch: {workers} on the CPU (no GPU; {cores} core" in auto.stderr
    alone = specpaint_here("--device", "cpu", "batch", root, "-o", tmp_path / "one", "--jobs", "1",
                           *LINE)
    assert alone.returncode == 0 and "one process on the CPU (--device cpu" in alone.stderr
    for i in range(5):
        assert (tmp_path / "auto" / f"{i}.wav").read_bytes() == \
            (tmp_path / "one" / f"{i}.wav").read_bytes()


def test_the_gpu_pipeline_fed_by_cpu_processes_writes_what_one_process_writes(tmp_path, rng):
    """The GPU's pipeline with helper processes decoding and writing (run here with the
    CPU painting in its place): the same outputs and journal as the plain pipeline."""
    root = tmp_path / "in"
    root.mkdir()
    for i in range(7):
        n = int(rng.integers(15000, 30000))
        sf.write(root / f"{i}.wav", rng.normal(0, 0.1, (n, 1 + i % 2)).astype(np.float32),
                 22050, subtype="PCM_24")
    settings = batch.Settings([{"preset": "hard-eraser", "points": [[0.1, 1000], [0.9, 3000]]}],
                              {"device": "cpu"})
    check_settings(settings)
    outputs = {}
    for name in ("threads", "helpers"):
        out = tmp_path / name
        out.mkdir()
        log = batch.Journal(out, resume=False)
        if name == "helpers":
            with worker_pool(2) as pool:
                run_local(batch.find_jobs([str(root)], out), settings, log, helpers=pool)
        else:
            run_local(batch.find_jobs([str(root)], out), settings, log)
        log.close()
        assert all(r.status == "done" for r in log.records.values()) and len(log.records) == 7
        outputs[name] = [p.read_bytes() for p in sorted(out.glob("*.wav"))]
    assert outputs["threads"] == outputs["helpers"]


def test_the_probe_measures_a_file_of_the_batch(tmp_path, rng):
    """Decoding and writing, painting on a core and on the device (the CPU standing in
    for a GPU here): each a time, scaled to the file's length."""
    path = tmp_path / "a.wav"
    sf.write(path, rng.normal(0, 0.1, 3 * 22050).astype(np.float32), 22050, subtype="PCM_16")
    settings = batch.Settings([{"preset": "hard-eraser", "points": [[0.1, 1000], [2.5, 1000]]}],
                              {"device": None})
    measured = probe(batch.Job(path, tmp_path / "out" / "a.wav"), settings, "cpu")
    assert measured is not None and 0 < measured.host < 5 and 0 < measured.cpu < 5
    assert 0 < measured.gpu < 5 and not (tmp_path / "out").exists()
    assert probe(batch.Job(tmp_path / "missing.wav", tmp_path / "o.wav"), settings, "cpu") is None
