"""What a batch's plan is made from (app.batch.plan): this machine, and where
``--device auto`` finds a GPU, one file of the batch decoded, painted on one core and
on the GPU, written to a temporary folder and measured, each stage timed. Written for
CUDA; run on the CPU in the tests (the device stands in for the GPU)."""

import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from app.batch.budget import PeakEstimates
from app.batch.cluster import PROCESS_GROUP
from app.batch.jobs import STACK_SECONDS, Job, Settings, decode_job, write_output
from app.batch.plan import Plan, Probe, choose, machine
from app.batch.stacks import paint_audio
from engine.io.audio import Audio

PROBE_SECONDS = 10.0  # of the file painted at most; the times are scaled to its length


def measured_plan(jobs: list[Job], settings: Settings, *, asked: str,
                  processes: int | None) -> Plan:
    """The plan for ``jobs`` (app.batch.plan.choose): ``asked`` the device ("auto" to
    choose), ``processes`` those asked for (--jobs), on this machine; where it has a
    GPU and the device is to be chosen, the first file is measured."""
    here = machine()
    peak = PeakEstimates(settings.analysis, settings.strokes).group(
        [j.input for j in jobs[:PROCESS_GROUP]], True, STACK_SECONDS)
    measured = probe(jobs[0], settings, here.gpus[0].device) \
        if asked == "auto" and here.gpus and len(jobs) > 1 else None
    return choose(here, files=len(jobs), group_peak=peak, asked=asked, jobs=processes,
                  probe=measured)


def probe(job: Job, settings: Settings, device: str) -> Probe | None:
    """``job``'s file measured (at most its first PROBE_SECONDS, the times scaled to
    its length), or None when it cannot be decoded or painted (the batch then says
    why for that file). The GPU is timed on its second painting: the first starts it."""
    import torch

    started = time.perf_counter()
    _, audio, _ = decode_job(job)
    if isinstance(audio, BaseException):
        return None
    decode = time.perf_counter() - started
    frames = min(audio.frames, int(PROBE_SECONDS * audio.sample_rate))
    scale = audio.frames / max(frames, 1)
    part = audio.samples[:, :frames]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cpu, _ = _timed(part, audio.sample_rate, _on(settings, "cpu"))
        _timed(part, audio.sample_rate, _on(settings, device))
        gpu, wave = _timed(part, audio.sample_rate, _on(settings, device))
    except Exception:  # noqa: BLE001 - the file's own error is said when the batch paints it
        return None
    finally:
        torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory(prefix="specpaint-probe-") as tmp:
        started = time.perf_counter()
        write_output(Job(job.input, Path(tmp) / job.output.name), Audio(part, audio.sample_rate,
                     metadata=audio.metadata), wave, settings)
        write = time.perf_counter() - started
    return Probe(host=decode + write * scale, cpu=cpu * scale, gpu=gpu * scale)


def _on(settings: Settings, device: str) -> Settings:
    return replace(settings, analysis={**settings.analysis, "device": device})


def _timed(samples: np.ndarray, rate: int, settings: Settings) -> tuple[float, np.ndarray]:
    """Seconds painting ``samples`` took (the wave comes back to the host, so the
    device has finished), and the wave."""
    started = time.perf_counter()
    wave = paint_audio(Audio(samples.copy(), rate), settings)
    return time.perf_counter() - started, wave
