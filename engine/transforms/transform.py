"""The interface every time-frequency transform of a document implements.

Coefficients are complex64 ``[channels, bins, frames]``. Every bin is
sampled on one uniform frame grid (``hop`` samples apart), so tiles, brushes
and the view work the same on any transform. Transforms are local: frame
``f`` depends only on a span of samples around it (:meth:`frame_span`), which
is what lets brushes recompute and resynthesize a small region alone.

Coefficients keep absolute phase: a steady sinusoid at ``f`` Hz advances by
``2 pi f hop / sr`` per frame in every bin it reaches (:meth:`phase_advance`).
Brushes speak seconds and Hz and ask the transform for everything else; no
kernel does arithmetic on an FFT size.
"""

import math
from abc import ABC, abstractmethod

import torch
import torch.nn.functional as F

HEADROOM_DB = 120  # five strokes of the gain brush at its most (+24 dB) on a full-scale cell


class Transform(ABC):
    sample_rate: int
    hop: int  # samples between frames
    kind: str  # "stft" or "cq"
    chunk_frames: int = 256  # frames per analysis chunk (a unit the transform computes well)
    # whether an edit written as coefficients is heard well outside its frames (atoms
    # far longer than a stroke's dabs): strokes are then confined to their time when
    # they end (brushes.locality.confine)
    confined_edits: bool = False
    reach: int  # samples a frame's atom reaches either side of its centre
    # samples a shift of the signal must be a multiple of for each frame's coefficients
    # to move with it bit for bit (engine.model.document's time edits share them)
    shift_samples: int
    # the largest |coefficient| any full-scale signal makes, over full_scale: an atom's
    # sum of |samples| (a signal of +-1 matching its signs), against a cosine's half
    atom_sum: float = 2.0

    # -- description -----------------------------------------------------------
    @abstractmethod
    def settings(self) -> dict:
        """JSON-able settings, ``{"transform": kind, ...}`` (see engine.transforms.make)."""

    @abstractmethod
    def to(self, device: torch.device | str) -> "Transform": ...

    # -- shape -----------------------------------------------------------------
    @property
    @abstractmethod
    def n_bins(self) -> int: ...

    @abstractmethod
    def n_frames(self, n_samples: int) -> int:
        """Frames that cover a signal of ``n_samples``."""

    # -- analysis and synthesis -----------------------------------------------
    @abstractmethod
    def frame_span(self, frame0: int, frame1: int) -> tuple[int, int]:
        """Samples ``[start, stop)`` that frames ``[frame0, frame1)`` are computed from
        (may reach outside the signal, where it counts as zero)."""

    @abstractmethod
    def forward_segment(self, seg: torch.Tensor, frame0: int, frame1: int,
                        *, bins: slice | None = None) -> torch.Tensor:
        """Frames ``[frame0, frame1)`` from ``seg``, the samples of :meth:`frame_span`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """float32 ``[ch, n]`` -> complex64 ``[ch, bins, frames]``."""
        return self.forward_frames(x, 0, self.n_frames(x.shape[-1]))

    def analysis_chunk(self, channels: int) -> int:
        """Frames a document of ``channels`` channels is analysed at once."""
        return self.chunk_frames

    def forward_frames(self, x: torch.Tensor, frame0: int, frame1: int,
                       *, bins: slice | None = None) -> torch.Tensor:
        """Frames ``[frame0, frame1)`` (and ``bins``) of ``forward(x)``, computed
        from the samples they need."""
        start, stop = self.frame_span(frame0, frame1)
        lo, hi = max(start, 0), min(stop, x.shape[-1])
        if hi > lo:
            seg = F.pad(x[..., lo:hi], (lo - start, stop - hi))
        else:
            seg = x.new_zeros(x.shape[:-1] + (stop - start,))
        return self.forward_segment(seg, frame0, frame1, bins=bins)

    @abstractmethod
    def inverse_span(self, frames: torch.Tensor, frame0: int, *, sample0: int, sample1: int,
                     length: int) -> torch.Tensor:
        """Samples ``[sample0, sample1)`` of ``inverse(coeffs, length)``, given
        ``frames = coeffs[..., frame0:frame0 + k]`` that include at least
        ``frames_needed(sample0, sample1)``. Equal, sample for sample, to the
        same span of the full inverse."""

    def given_frames(self, frames: torch.Tensor, frame0: int, *, sample0: int, sample1: int,
                     length: int) -> tuple[int, int]:
        """:meth:`frames_needed` for the span, checked against the frames given."""
        fa, fb = self.frames_needed(sample0, sample1, length)
        if fa < frame0 or fb > frame0 + frames.shape[-1]:
            raise ValueError(f"samples [{sample0}, {sample1}) need frames [{fa}, {fb}), "
                             f"given [{frame0}, {frame0 + frames.shape[-1]})")
        return fa, fb

    def inverse(self, coeffs: torch.Tensor, length: int) -> torch.Tensor:
        """complex ``[ch, bins, frames]`` -> float32 ``[ch, length]``."""
        return self.inverse_span(coeffs, 0, sample0=0, sample1=length, length=length)

    @abstractmethod
    def samples_affected(self, frame0: int, frame1: int, length: int) -> tuple[int, int]:
        """Sample span ``[s0, s1)`` that frames ``[frame0, frame1)`` contribute to."""

    @abstractmethod
    def frames_needed(self, sample0: int, sample1: int, length: int) -> tuple[int, int]:
        """Frame span ``[f0, f1)`` whose frames overlap samples ``[sample0, sample1)``."""

    def frames_heard_in(self, sample0: int, sample1: int, length: int) -> tuple[int, int]:
        """Frame span ``[f0, f1)`` whose atoms (``reach`` either side of their centre)
        sound within samples ``[sample0, sample1)``."""
        return (max(0, -(-(sample0 - self.reach) // self.hop)),
                min(self.n_frames(length), (sample1 + self.reach) // self.hop + 1))

    # -- physical units ----------------------------------------------------------
    @abstractmethod
    def bin_frequencies(self) -> torch.Tensor:
        """Centre frequency of each bin, Hz (float64)."""

    @abstractmethod
    def bin_of(self, hz: float) -> float:
        """Fractional bin coordinate of ``hz`` (bin ``k`` is centred on ``k``)."""

    @abstractmethod
    def hz_of(self, bin_: float) -> float:
        """Frequency at a fractional bin coordinate (inverse of :meth:`bin_of`)."""

    @abstractmethod
    def resolution_hz(self, hz: float) -> float:
        """Half-width, in Hz, of what a sinusoid at ``hz`` occupies (the main lobe
        of the window, or the support of the bin there): a brush narrower than
        this cannot act on the sinusoid alone."""

    @property
    @abstractmethod
    def full_scale(self) -> float:
        """Magnitude of a full-scale sine at its peak bin: the 0 dB reference."""

    @property
    def coefficient_limit(self) -> float:
        """The largest |coefficient| a document may be given from a file: HEADROOM_DB
        past the most any full-scale signal analyses to (``atom_sum`` times
        ``full_scale``), so that a loud edit is never refused, while the synthesis of
        every mix of such cells stays finite (:mod:`app.project.layer_check`)."""
        return self.atom_sum * self.full_scale * 10 ** (HEADROOM_DB / 20)

    def frame_times(self, n_frames: int) -> torch.Tensor:
        """Centre time of each frame, seconds (float64)."""
        return torch.arange(n_frames, dtype=torch.float64) * self.hop / self.sample_rate

    def frame_of(self, seconds: float) -> float:
        return seconds * self.sample_rate / self.hop

    def seconds_of(self, frame: float) -> float:
        return frame * self.hop / self.sample_rate

    def phase_advance(self, hz):
        """Radians per frame that a steady sinusoid at ``hz`` advances by."""
        return 2 * math.pi * hz * self.hop / self.sample_rate

    def sinusoid(self, freq: float, amplitude: float, phase: float, *, bins: range,
                 frame0: int, frame1: int, length: int) -> torch.Tensor:
        """Coefficients ``[bins, frames]`` of ``amplitude * cos(2 pi freq t + phase)``
        (t from sample 0, zero outside ``[0, length)``): what painting a tone adds."""
        start, stop = self.frame_span(frame0, frame1)
        device = self.device
        n = torch.arange(start, stop, dtype=torch.float64, device=device)
        wave = amplitude * torch.cos(2 * math.pi * freq / self.sample_rate * n + phase)
        wave = torch.where((n >= 0) & (n < length), wave, 0.0).float()
        coeffs = self.forward_segment(wave[None], frame0, frame1, bins=slice(bins.start, bins.stop))
        return coeffs[0]
