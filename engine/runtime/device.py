"""Which torch device the engine computes on: CUDA > MPS > CPU, overridable
by an explicit name or the SPECPAINT_DEVICE environment variable, with a
fall-back to the CPU when the GPU runs out of memory. A backend that cannot do
what the engine and the brushes need (:func:`missing_support`) is never chosen."""

import functools
import os
import warnings
from collections.abc import Callable
from typing import TypeVar

import torch

from engine.errors import DeviceError

ENV_VAR = "SPECPAINT_DEVICE"
PRIORITY = ("cuda", "mps", "cpu")
T = TypeVar("T")


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps and mps.is_available())


@functools.cache
def missing_support(device: torch.device) -> str | None:
    """Why ``device`` cannot run SpectroPaint, or None. The brushes compute their
    statistics in float64 on the document's device (the steady repairs' fits, the
    confinement of a constant-Q stroke) and the transforms need complex64 FFTs; MPS
    has no float64 (pytorch/pytorch#122602), so it would fail in the middle of a
    stroke. A few tiny operations, checked against the CPU's results."""
    try:
        ramp = torch.arange(8, dtype=torch.float64, device=device)
        spectrum = torch.fft.rfft(ramp.float() * 0.5)
        ok = torch.allclose(spectrum.cpu(), torch.fft.rfft(torch.arange(8.0) * 0.5),
                            atol=1e-5) and float((ramp * ramp).sum()) == 140.0
    except Exception as e:  # whatever the backend raises, it cannot be used
        first = str(e).strip().split(". ")[0].splitlines()[0] if str(e).strip() else ""
        return (first[:150] + "..." if len(first) > 150 else first) or type(e).__name__
    return None if ok else "its float64 and FFT results differ from the CPU's"


def _available(kind: str) -> bool:
    return torch.cuda.is_available() if kind == "cuda" else _mps_available()


def pick_device(name: "str | torch.device | None" = None) -> torch.device:
    """``name`` (or $SPECPAINT_DEVICE): "auto", "cpu", "cuda", "cuda:N" or "mps"; a
    torch.device is taken as it is. Computing on a CUDA device also keeps its
    float32 convolutions in float32 (:func:`ieee_convolutions`)."""
    device = name if isinstance(name, torch.device) else _pick(name)
    if device.type == "cuda":
        ieee_convolutions()
    return device


def ieee_convolutions() -> None:
    """cuDNN runs float32 convolutions in TF32 by default (a 10-bit mantissa) on an
    Ampere or later GPU: the blur brushes' results then differed from the CPU's by
    4e-5 of full scale on an H100, where every other kernel agreed to 1e-6. The
    engine's float32 means IEEE float32 (docs/engine.md's dtype policy)."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):  # torch >= 2.9
        conv.fp32_precision = "ieee"
    else:
        torch.backends.cudnn.allow_tf32 = False


def _pick(name: str | None) -> torch.device:
    name = (name or os.environ.get(ENV_VAR) or "auto").strip().lower()
    if name == "auto":
        for kind in PRIORITY[:-1]:
            if _available(kind) and missing_support(torch.device(kind)) is None:
                return torch.device(kind)
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except RuntimeError as e:
        raise DeviceError(f"unknown device '{name}'; use auto, cpu, cuda, cuda:N or mps "
                          f"(--device or ${ENV_VAR})") from e
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"device '{name}' asked for, but this machine has no usable "
                              "CUDA GPU; use --device cpu or auto")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(f"device '{name}' asked for, but only "
                              f"{torch.cuda.device_count()} CUDA GPU(s) exist")
    elif device.type == "mps" and not _mps_available():
        raise DeviceError(f"device '{name}' asked for, but MPS is not available here; "
                          "use --device cpu or auto")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise DeviceError(f"unsupported device '{name}'; use auto, cpu, cuda, cuda:N or mps")
    if device.type != "cpu" and (why := missing_support(device)) is not None:
        raise DeviceError(f"device '{name}' cannot run SpectroPaint here ({why}); "
                          "use --device cpu or auto")
    return device


def inventory(name: str | None = None) -> list[str]:
    """What ``specpaint devices`` prints: every backend torch can see, the order, the
    device chosen for ``name`` (or $SPECPAINT_DEVICE, or auto) and why."""
    lines = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            why = missing_support(torch.device("cuda", i))
            lines.append(f"cuda:{i}  {p.name}, {p.total_memory / 2**30:.1f} GiB, compute "
                         f"capability {p.major}.{p.minor}"
                         + ("" if why is None else f"; not usable: {why}"))
    else:
        build = f"with CUDA {torch.version.cuda}" if torch.version.cuda else "for the CPU"
        lines.append(f"cuda    not available (torch {torch.__version__}, built {build})")
    mps = "not available"
    if _mps_available():
        why = missing_support(torch.device("mps"))
        mps = "available" if why is None else f"available; not usable: {why}"
    lines.append("mps     " + mps)
    lines.append(f"cpu     {os.cpu_count()} core(s), torch uses {torch.get_num_threads()} "
                 f"thread(s); OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '-')}")
    lines.append("order   " + " > ".join(PRIORITY) + " (the first available and usable)")
    source = "--device" if name else f"${ENV_VAR}" if os.environ.get(ENV_VAR) else None
    try:
        chosen = pick_device(name)
        why = f"asked for by {source}" if source else "the first usable in that order"
        lines.append(f"chosen  {describe(chosen)}: {why}")
    except DeviceError as e:
        lines.append(f"chosen  none: {e}")
    lines.append(f"override with --device NAME or ${ENV_VAR}=NAME (auto, cpu, cuda, cuda:N, mps)")
    return lines


def describe(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return str(device)


def with_cpu_fallback(work: Callable[[torch.device], T],
                      device: torch.device) -> tuple[T, torch.device]:
    """Run ``work(device)``; if a GPU runs out of memory, warn and run it on the CPU.

    Returns the result and the device it was computed on."""
    try:
        return work(device), device
    except torch.OutOfMemoryError:
        if device.type == "cpu":
            raise
        if device.type == "cuda":
            torch.cuda.empty_cache()
        warnings.warn(f"out of memory on {device}; computing on the CPU instead",
                      RuntimeWarning, stacklevel=2)
        cpu = torch.device("cpu")
        return work(cpu), cpu
