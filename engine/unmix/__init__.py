"""Unmix: a layer's cells split into shares that add up to one at every cell, with
no model fetched at run time. Methods (``parse``): ``hpss`` (harmonic, percussive,
residual; ``hpss:M`` sets the margin, 1 gives two parts), ``tonal-noise``,
``nmf:K`` (K components), and ``voice`` (voice and background: a voice model's
estimate of the voice, its magnitude's share of each cell). Each gives a
:class:`Model` whose ``shares(f0, f1)`` are computed a run of frames at a time and
kept as fixed-point masks (engine.model.layer_sources.quantized_masks): the layers they
make add up to their source exactly, whatever the method."""

from contextlib import contextmanager
from dataclasses import dataclass

import torch

from engine.errors import ParameterError
from engine.model.layer_sources import quantized_masks
from engine.progress import scaled, step
from engine.unmix import hpss, nmf, tonal
from engine.unmix.smooth import reach, stages_for

CHUNK_FRAMES = 1024  # frames whose shares are computed at a time
HARMONIC_S = 0.7  # how long a partial is smoothed along time (HPSS; librosa: 31 frames)
PERCUSSIVE_HZ = 350.0  # how wide a transient is smoothed across frequency (HPSS)
FLOOR_HZ = 1000.0  # how wide the noise floor is taken (tonal / noise)
TONAL_S = 0.1  # how long a partial must last (tonal / noise)
DEFAULT_MARGIN = 2.0
MAX_COMPONENTS = 16
METHODS = ("hpss", "tonal-noise", "nmf:K", "voice")


@dataclass(frozen=True)
class Method:
    name: str  # hpss, tonal-noise, nmf
    count: int = 0  # nmf's components
    margin: float = DEFAULT_MARGIN  # hpss's

    @property
    def parts(self) -> list[str]:
        if self.name == "hpss":
            return ["harmonic", "percussive"] + (["residual"] if self.margin > 1 else [])
        if self.name == "tonal-noise":
            return ["tonal", "noise"]
        if self.name == "voice":
            return ["voice", "background"]
        return [f"component {i + 1}" for i in range(self.count)]

    @property
    def estimates_voice(self) -> bool:
        """Whether its masks share the magnitude by an estimate of the voice alone
        (made by the caller: engine.repair.voice, a speech model)."""
        return self.name == "voice"

    def __str__(self) -> str:
        if self.name == "nmf":
            return f"nmf:{self.count}"
        return self.name if self.margin == DEFAULT_MARGIN or self.name != "hpss" else \
            f"hpss:{self.margin:g}"


def parse(text: str) -> Method:
    """``hpss``, ``hpss:MARGIN`` (1 to 10), ``tonal-noise``, ``nmf:K`` (2 to 16) or
    ``voice``."""
    name, _, arg = str(text).partition(":")
    try:
        if not arg.isascii() or "_" in arg:  # int() and float() take any script's digits
            raise ValueError(arg)
        if name == "hpss":
            margin = float(arg) if arg else DEFAULT_MARGIN
            if 1 <= margin <= 10:
                return Method("hpss", margin=margin)
        elif name in ("tonal-noise", "voice") and not arg:
            return Method(name)
        elif name == "nmf":
            count = int(arg)
            if 2 <= count <= MAX_COMPONENTS:
                return Method("nmf", count=count)
    except ValueError:
        pass
    raise ParameterError(f"unknown unmix method {text!r}: use hpss (or hpss:MARGIN, 1 to 10), "
                         f"tonal-noise, nmf:K with K from 2 to {MAX_COMPONENTS}, or voice")


class Share:
    """Two parts: the share of each cell's magnitude an estimate of the first part has
    (at most all of it), and the rest."""

    def __init__(self, mag: torch.Tensor, estimate: torch.Tensor):
        self.mag, self.estimate = mag, estimate

    def shares(self, f0: int, f1: int) -> list[torch.Tensor]:
        first = (self.estimate[:, f0:f1] / self.mag[:, f0:f1].clamp_min(1e-30)).clamp_(0, 1)
        return [first, 1 - first]


class Local:
    """A method whose shares at a cell depend on the cells near it only."""

    def __init__(self, mag: torch.Tensor, shares, context: int):
        self.mag, self._shares, self.context = mag, shares, context

    def shares(self, f0: int, f1: int) -> list[torch.Tensor]:
        a, b = max(0, f0 - self.context), min(self.mag.shape[1], f1 + self.context)
        return [s[:, f0 - a:f1 - a] for s in self._shares(self.mag[:, a:b])]


def model(method: Method, mag: torch.Tensor, transform, *, hints: torch.Tensor | None = None,
          estimate: torch.Tensor | None = None, start=None, progress=None, cancel=None):
    """The fitted method on ``mag`` (``[ch, frames, bins]`` float32): an object whose
    ``shares(f0, f1)`` are the parts' shares of those frames. ``hints``: the marks of
    paint to separate, ``[parts, ch, frames, bins]`` in [0, 1] (NMF only), and
    ``start``: the NMF fitted on ``mag`` before, to go on from; ``estimate``: the
    magnitude of the voice alone, as ``mag`` (voice only)."""
    frames_per_s = 1 / transform.seconds_of(1)
    if method.name == "nmf":
        with one_thread(mag.device):
            fitted = nmf.Model(mag, method.count, marks=hints, start=start,
                               progress=progress, cancel=cancel)
        if hints is None and start is None:
            fitted.order_by_centroid()
        return fitted
    if hints is not None:
        raise ParameterError(f"{method}: only nmf unmixes by painted marks")
    if method.name == "voice":
        return Share(mag, estimate)
    if method.name == "hpss":
        t, b = stages_for(HARMONIC_S * frames_per_s), stages_for(_bins(transform, PERCUSSIVE_HZ))
        return Local(mag, lambda m: hpss.shares(m, time_stages=t, bin_stages=b,
                                                margin=method.margin), reach(t))
    f, t = stages_for(_bins(transform, FLOOR_HZ)), stages_for(TONAL_S * frames_per_s)
    return Local(mag, lambda m: tonal.shares(m, floor_stages=f, time_stages=t), reach(t))


def masks(method: Method, mag: torch.Tensor, transform, *, hints: torch.Tensor | None = None,
          estimate: torch.Tensor | None = None, start=None, progress=None,
          cancel=None) -> tuple[tuple[torch.Tensor, ...], object]:
    """The fixed-point masks of ``method``'s parts of ``mag`` (one fewer than the parts:
    the last part's share is what the others leave), and the fitted model (:func:`model`:
    an NMF's is a later fit's ``start``)."""
    fitted = model(method, mag, transform, hints=hints, estimate=estimate, start=start,
                   progress=scaled(progress, 0, 0.7), cancel=cancel)
    frames = mag.shape[1]
    out = [torch.empty(mag.shape, dtype=torch.uint16, device=mag.device)
           for _ in method.parts[:-1]]
    for f0 in range(0, frames, CHUNK_FRAMES):
        step(0.7 + 0.3 * f0 / frames, progress, cancel)
        f1 = min(frames, f0 + CHUNK_FRAMES)
        for mask, q in zip(out, quantized_masks(fitted.shares(f0, f1)), strict=True):
            mask[:, f0:f1] = q
    return tuple(out), fitted


@contextmanager
def one_thread(device: torch.device):
    """NMF on the CPU with one torch thread: its products are [bins, K] by [K, frames]
    with K of 2 to 16, where a second thread costs more than it gives. A 60 s stereo
    nmf:2 took 4.8-5.1 s on one thread and 11.7-14.9 s on two, alternating in one run
    (2 cores, load 5.5). Torch's thread count is the process's: it is put back after."""
    if device.type != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _bins(transform, hz: float) -> float:
    """How many bins ``hz`` spans around 1 kHz."""
    return transform.bin_of(1000 + hz / 2) - transform.bin_of(1000 - hz / 2)
