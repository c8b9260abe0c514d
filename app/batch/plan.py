"""What paints a batch: worker processes on the CPU's cores, one process painting on a
GPU, or a GPU painting what CPU processes decode and write.

``--device auto`` (the batch's default) chooses from what it can measure cheaply: the
cores, the memory and the GPUs torch sees (:func:`machine`) and, where there is a GPU,
one file of the batch decoded, painted on one core and on the GPU, and written
(:func:`app.batch.probe.probe`). :func:`choose` is a plain function of those numbers
and says in one line what it chose and why. ``--device cpu|cuda|cuda:N|mps`` forces a
device, as before.

The estimates, in files a second: CPU workers ``n / (host + cpu)`` (each process
decodes, paints and writes its files); one GPU process ``1 / (host + gpu)`` (one
process does all of the host's work); a GPU with CPU decoders
``min(1 / gpu, (cores - 1) / host)`` (the GPU's process paints while the other
cores decode and write).
"""

import os
from dataclasses import dataclass

from app.batch.budget import WORKER_BYTES

CPU_WORKERS, GPU, GPU_DECODERS = "cpu workers", "gpu", "gpu with cpu decoders"


@dataclass(frozen=True)
class Gpu:
    device: str  # "cuda:0"
    name: str
    memory: int  # bytes


@dataclass(frozen=True)
class Machine:
    cores: int
    memory: int  # bytes available to the batch
    gpus: tuple[Gpu, ...] = ()


@dataclass(frozen=True)
class Probe:
    """Seconds one file of the batch took: decoding, writing and measuring it on one
    core (``host``), painting it on one core (``cpu``) and on the GPU, its process's
    time (``gpu``)."""
    host: float
    cpu: float
    gpu: float


@dataclass(frozen=True)
class Plan:
    mode: str  # CPU_WORKERS, GPU or GPU_DECODERS
    device: str  # what paints: "cpu", "cuda:0", ...
    workers: int  # processes beside this one: painters, or decoders and writers (1: none)
    why: str

    def line(self) -> str:
        """What was chosen and why, for the user."""
        what = {CPU_WORKERS: f"{_processes(self.workers)} on the CPU",
                GPU: f"one process painting on {self.device}" if self.workers == 1 else
                f"{self.workers} processes painting on {self.device}",
                GPU_DECODERS: f"{self.device} painting, {_processes(self.workers)} decoding "
                              "and writing"}[self.mode]
        return f"specpaint: batch: {what} ({self.why})"


def choose(machine: Machine, *, files: int, group_peak: int, asked: str = "auto",
           jobs: int | None = None, probe: Probe | None = None) -> Plan:
    """The plan for ``files`` files whose groups each take ``group_peak`` bytes at most
    in a worker, on ``machine``; ``asked``: the device asked for ("auto" to choose);
    ``jobs``: processes asked for (--jobs); ``probe``: one file's measured seconds."""
    cpus = jobs or cpu_workers(machine, group_peak)
    cores = f"{machine.cores} core{'s' if machine.cores > 1 else ''}"
    if asked == "cpu":
        return Plan(CPU_WORKERS, "cpu", cpus, f"--device cpu; {cores}")
    if asked != "auto":
        return Plan(GPU, asked, jobs or 1, f"--device {asked}")
    if not machine.gpus:
        held = "" if jobs or cpus == machine.cores else \
            f", memory for {cpus} (a group of files {group_peak / 2**20:,.0f} MiB at most)"
        return Plan(CPU_WORKERS, "cpu", cpus, f"no GPU; {cores}{held}")
    gpu = machine.gpus[0]
    if files < 2 or probe is None:
        return Plan(GPU, gpu.device, 1, f"{'one file' if files < 2 else 'not measured'}; "
                                        f"{gpu.name}")
    helpers = max(1, min(machine.cores - 1, cpus))
    rates = {CPU_WORKERS: cpus / (probe.host + probe.cpu), GPU: 1 / (probe.host + probe.gpu),
             GPU_DECODERS: min(1 / probe.gpu, helpers / probe.host) if machine.cores > 1 else 0}
    mode = max(rates, key=rates.get)  # on a tie, the first: the simplest
    others = ", ".join(f"{name} {rate:.1f}" for name, rate in rates.items() if name != mode)
    why = (f"about {rates[mode]:.1f} files/s against {others}; a file of the batch took "
           f"{probe.host * 1e3:.0f} ms to decode and write, {probe.cpu * 1e3:.0f} ms to paint "
           f"on a core, {probe.gpu * 1e3:.0f} ms on {gpu.name}")
    if mode == CPU_WORKERS:
        return Plan(mode, "cpu", cpus, why)
    return Plan(mode, gpu.device, 1 if mode == GPU else helpers, why)


def cpu_workers(machine: Machine, group_peak: int) -> int:
    """Worker processes on the CPU: one a core, as many as the memory holds with a
    group each (at least one)."""
    return max(1, min(machine.cores, machine.memory // (WORKER_BYTES + max(0, group_peak))))


def _processes(count: int) -> str:
    return "one process" if count == 1 else f"{count} worker processes"


def machine() -> Machine:
    """This machine: its cores (those this process may run on), the memory available,
    and the GPUs torch can use (none without a driver: torch is not asked)."""
    from app.batch.processes import gpu_driver_present
    from engine.runtime.memory import available_memory

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1
    gpus = []
    if gpu_driver_present():
        import torch

        from engine.runtime.device import missing_support

        if torch.cuda.is_available():
            for i in range(torch.cuda.device_count()):
                device = torch.device("cuda", i)
                if missing_support(device) is None:
                    p = torch.cuda.get_device_properties(i)
                    gpus.append(Gpu(str(device), p.name, p.total_memory))
    return Machine(cores, available_memory(), tuple(gpus))
