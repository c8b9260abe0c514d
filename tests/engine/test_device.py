"""Device choice and the GPU out-of-memory fall-back."""

import pytest
import torch

from engine.errors import DeviceError
from engine.runtime.device import pick_device, with_cpu_fallback


def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv("SPECPAINT_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else (
        "mps" if torch.backends.mps.is_available() else "cpu")
    assert pick_device().type == expected


def test_environment_overrides(monkeypatch):
    monkeypatch.setenv("SPECPAINT_DEVICE", "cpu")
    assert pick_device().type == "cpu"
    monkeypatch.setenv("SPECPAINT_DEVICE", "tpu")
    assert pick_device("cpu").type == "cpu"  # an explicit --device beats the environment
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        pick_device()


@pytest.mark.parametrize("name,words", [("tpu", "unknown device 'tpu'"),
                                        ("banana:3", "unknown device 'banana:3'")])
def test_unknown_devices(name, words):
    with pytest.raises(DeviceError, match=words):
        pick_device(name)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_asked_for_without_a_gpu():
    with pytest.raises(DeviceError, match="no usable CUDA GPU; use --device cpu"):
        pick_device("cuda")


def test_out_of_memory_on_a_gpu_falls_back_to_cpu():
    tried = []

    def work(device):
        tried.append(device.type)
        if device.type != "cpu":
            raise torch.OutOfMemoryError("CUDA out of memory (as raised by torch)")
        return 42

    with pytest.warns(RuntimeWarning, match="out of memory on meta; computing on the CPU"):
        result, device = with_cpu_fallback(work, torch.device("meta"))
    assert (result, device.type, tried) == (42, "cpu", ["meta", "cpu"])


def test_out_of_memory_on_the_cpu_is_not_hidden():
    def work(device):
        raise torch.OutOfMemoryError("no memory")

    with pytest.raises(torch.OutOfMemoryError):
        with_cpu_fallback(work, torch.device("cpu"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_document_matches_cpu():
    import numpy as np

    from engine.io.audio import Audio
    from engine.model.document import Document
    from engine.model.resynth import Resynthesizer

    x = np.random.default_rng(0).uniform(-1, 1, (2, 48000)).astype(np.float32)
    cpu = Document(Audio(x, 48000), device="cpu")
    gpu = Document(Audio(x, 48000), device="cuda")
    torch.testing.assert_close(gpu.magnitude.cpu(), cpu.magnitude, rtol=1e-4, atol=1e-4)
    out = Resynthesizer(gpu).full().numpy()
    from engine.measure.metrics import snr_db
    assert snr_db(x, out) >= 100


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("way", ["named", "a document given a torch.device"])
def test_a_cuda_device_convolves_in_float32_not_tf32(way):
    """A blur's row convolution (31 taps over 64 x 4096 cells), on the GPU picked and on
    the CPU in float64: TF32's 10-bit mantissa missed by 3.0e-4 on an H100, float32
    by 2.6e-7. TF32 is turned back on first (torch's default) for each way in."""
    import numpy as np
    import torch.nn.functional as F

    from engine.io.audio import Audio
    from engine.model.document import Document

    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        conv.fp32_precision = "tf32"
    else:
        torch.backends.cudnn.allow_tf32 = True
    if way == "named":
        device = pick_device("cuda")
    else:
        x = np.zeros((1, 8000), np.float32)
        device = Document(Audio(x, 8000), device=torch.device("cuda")).device
    rows = torch.randn(1, 1, 64, 4096, generator=torch.Generator().manual_seed(0))
    taps = torch.hann_window(33)[1:-1].reshape(1, 1, 1, 31)
    got = F.conv2d(rows.to(device), taps.to(device)).cpu().double()
    want = F.conv2d(rows.double(), taps.double())
    assert float((got - want).abs().max() / want.abs().max()) <= 1e-6


def test_a_backend_that_cannot_compute_is_reported_and_never_chosen(monkeypatch):
    """MPS has no float64, which the brushes' statistics use on the document's device:
    a backend failing the probe is skipped by auto and refused by name, with why."""
    from engine.runtime.device import inventory, missing_support

    assert missing_support(torch.device("cpu")) is None
    assert "meta tensor" in missing_support(torch.device("meta"))  # computes no values
    monkeypatch.delenv("SPECPAINT_DEVICE", raising=False)
    # a machine that reports MPS (and CUDA) but cannot run this build's ops on them
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    usable = "cuda" if torch.cuda.is_available() else "cpu"  # a real GPU passes the probe
    if usable == "cpu":
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert pick_device().type == usable
    with pytest.raises(DeviceError, match=r"device 'mps' cannot run SpectroPaint here "
                                          r"\(.+\); use --device cpu or auto"):
        pick_device("mps")
    lines = inventory()
    assert any(line.startswith("mps     available; not usable: ") for line in lines)
    assert any(line.startswith(f"chosen  {usable}") and
               line.endswith(": the first usable in that order") for line in lines)
