"""Images as sound (as Photosounder and MetaSynth do): each row of an image is
a sine oscillator at the row's frequency, its level following the row's
brightness across the image's time span. The sum is analyzed by the
document's transform and added to the document as one undo step.

Synthesizing real sinusoids (rather than writing magnitudes into bins and
guessing their phase) gives every painted partial a coherent phase: a
horizontal line is a clean tone at exactly its row's pitch, on any transform.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Patch, Step
from engine.progress import CancelFlag, ProgressFn, step
from engine.region import Rect

FADE_SECONDS = 0.005  # raised-cosine ramp at the image's start and end: no click
CELLS_PER_BLOCK = 1 << 22  # rows x samples synthesized at once (32 MB of float64)


@dataclass(frozen=True)
class Placement:
    """Where an image goes: seconds ``t0``-``t1``, Hz ``f_lo``-``f_hi`` (the top row is
    ``f_hi``), rows spaced linearly or in log frequency; white is a sinusoid of peak
    ``level_db`` dBFS, black is silence, grey in between over ``range_db`` dB."""

    t0: float
    t1: float
    f_lo: float
    f_hi: float
    log: bool = False
    level_db: float = -20.0
    range_db: float = 60.0

    def check(self, sample_rate: int, length: int) -> None:
        nyquist, seconds = sample_rate / 2, length / sample_rate
        if not (0 <= self.t0 < self.t1 <= seconds + 1e-9):
            raise ParameterError(f"the image's time span {self.t0:g}-{self.t1:g} s must lie "
                                 f"within the file (0-{seconds:g} s) and not be empty")
        if not (0 < self.f_lo < self.f_hi <= nyquist):
            raise ParameterError(f"the image's frequency range {self.f_lo:g}-{self.f_hi:g} Hz "
                                 f"must lie within 0-{nyquist:g} Hz (exclusive of 0) and "
                                 "not be empty")
        if not (-120 <= self.level_db <= 0 and 0 < self.range_db <= 120):
            raise ParameterError(f"image level {self.level_db:g} dBFS must be -120 to 0 and "
                                 f"its range {self.range_db:g} dB 0 to 120")

    def row_hz(self, rows: int) -> np.ndarray:
        """Each row's frequency, the top row highest (pixel centres)."""
        u = 1 - (np.arange(rows) + 0.5) / rows  # 0 at the bottom edge, 1 at the top
        if self.log:
            return self.f_lo * (self.f_hi / self.f_lo) ** u
        return self.f_lo + (self.f_hi - self.f_lo) * u


def amplitudes(pixels: np.ndarray, placement: Placement) -> np.ndarray:
    """Peak amplitude per pixel: brightness 1 -> ``level_db``, 0 -> silence."""
    v = np.clip(np.asarray(pixels, np.float64), 0.0, 1.0)
    amp = 10 ** ((placement.level_db - placement.range_db * (1 - v)) / 20)
    return np.where(v > 0, amp, 0.0)


def image_audio(pixels: np.ndarray, placement: Placement, *, sample_rate: int, start: int,
                stop: int, seed: int = 0, progress: ProgressFn | None = None,
                cancel: CancelFlag | None = None) -> np.ndarray:
    """Samples ``[start, stop)`` (float32) of the image as sound: a sine per row at
    ``row_hz``, its level interpolated linearly between column centres."""
    pixels = _grey(pixels)
    rows, cols = pixels.shape
    amp = amplitudes(pixels, placement)
    live = np.flatnonzero(amp.any(axis=1))  # silent rows cost nothing
    freqs = placement.row_hz(rows)[live]
    amp = torch.from_numpy(amp[live])
    phases = torch.from_numpy(np.random.default_rng(seed).uniform(0, 2 * math.pi, rows)[live])
    out = np.zeros(max(0, stop - start), np.float32)
    t0, t1 = placement.t0, placement.t1
    first = max(start, math.floor(t0 * sample_rate))
    last = min(stop, math.ceil(t1 * sample_rate))
    block = max(1024, CELLS_PER_BLOCK // max(len(live), 1))
    omega = torch.from_numpy(2 * math.pi * freqs)[:, None]
    for s0 in range(first, last, block):
        step((s0 - first) / max(last - first, 1), progress, cancel)
        t = torch.arange(s0, min(last, s0 + block), dtype=torch.float64) / sample_rate
        u = ((t - t0) / (t1 - t0) * cols - 0.5).clamp(0, cols - 1)
        i0 = u.floor().long().clamp(max=cols - 1)
        i1 = (i0 + 1).clamp(max=cols - 1)
        frac = u - i0
        envelope = amp[:, i0] * (1 - frac) + amp[:, i1] * frac
        fade = _fade(t, t0, t1)
        wave = (envelope * torch.cos(omega * t + phases[:, None])).sum(0) * fade
        out[s0 - start:s0 - start + len(t)] = wave.float().numpy()
    step(1.0, progress, None)
    return out


def paint_image(doc: Document, pixels: np.ndarray, *, placement: Placement,
                channel: int | None = None, history: History | None = None,
                label: str = "image", seed: int = 0, progress: ProgressFn | None = None,
                cancel: CancelFlag | None = None) -> Step:
    """Add the image, as sound, to the document (every channel, or ``channel``):
    one undo step (pushed to ``history`` if given). Cells outside the frames the
    image's samples reach are not touched."""
    doc.channel_indices(channel)  # refuse a channel the document lacks, before the work
    rect, added = image_coefficients(doc, pixels, placement=placement, seed=seed, progress=progress,
                                     cancel=cancel)
    return add_coefficients(doc, rect, added, channel=channel, history=history, label=label)


def image_coefficients(doc: Document, pixels: np.ndarray, *, placement: Placement,
                       seed: int = 0, progress: ProgressFn | None = None,
                       cancel: CancelFlag | None = None) -> tuple[Rect, torch.Tensor]:
    """The image as sound, analyzed by the document's transform: the rect it reaches
    and its ``[bins, frames]`` coefficients there (the slow part; the document is
    only read, so a worker can do it while the view draws)."""
    placement.check(doc.sample_rate, doc.length)
    t = doc.transform
    s0 = max(0, math.floor(placement.t0 * doc.sample_rate))
    s1 = min(doc.length, math.ceil(placement.t1 * doc.sample_rate))
    f0, f1 = t.frames_needed(s0, s1, doc.length)
    start, stop = t.frame_span(f0, f1)
    wave = image_audio(pixels, placement, sample_rate=doc.sample_rate, start=start, stop=stop,
                       seed=seed, progress=progress, cancel=cancel)
    wave[:max(0, -start)] = 0  # nothing outside the file
    wave[max(0, doc.length - start):] = 0
    added = t.forward_segment(torch.from_numpy(wave).to(doc.device)[None], f0, f1)[0]
    return Rect(0, doc.n_bins, f0, f1), added


def add_coefficients(doc: Document, rect: Rect, added: torch.Tensor, *, channel: int | None,
                     history: History | None = None, label: str = "image") -> Step:
    """Add ``added`` (``[bins, frames]``) to ``channel`` (None: every channel) over
    ``rect``: one undo step, pushed to ``history`` if given."""
    chans = doc.channel_indices(channel)
    before, written = doc.read_complex(rect, channel), doc.written_frames()
    after = before + added
    doc.write_complex(rect, after, channel=channel)
    result = Step(label, None if channel is None else chans[0], [Patch(rect, before, after)],
                  layer=doc.layers.active.id, written=written)
    if history is not None:
        history.push(result)
    return result


def _grey(pixels: np.ndarray) -> np.ndarray:
    """``[rows, cols]`` brightness in [0, 1] from grey or RGB(A) pixels, uint8 or float."""
    a = np.asarray(pixels)
    if a.ndim == 3:
        alpha = a[..., 3:4] if a.shape[-1] == 4 else None
        a = a[..., :3].mean(-1, keepdims=True) if a.shape[-1] >= 3 else a[..., :1]
        if alpha is not None:  # transparent is silent
            a = a * (alpha / (255.0 if alpha.dtype == np.uint8 else 1.0))
        a = a[..., 0]
    if a.ndim != 2 or a.size == 0:
        raise ParameterError(f"an image must be rows x columns of pixels; got shape {a.shape}")
    return a / 255.0 if a.dtype == np.uint8 or a.max(initial=0) > 1 else a.astype(np.float64)


def _fade(t: torch.Tensor, t0: float, t1: float) -> torch.Tensor:
    ramp = min(FADE_SECONDS, (t1 - t0) / 2)
    edge = torch.minimum(t - t0, t1 - t).clamp(min=0) / ramp
    return torch.where(edge >= 1, 1.0, 0.5 - 0.5 * torch.cos(math.pi * edge.clamp(max=1)))
