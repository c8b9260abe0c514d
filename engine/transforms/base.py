"""The interface every time-frequency transform of a document implements.

Coefficients are complex64 ``[channels, bins, frames]``. Transforms are
local: frame ``f`` depends only on a window of samples around it, which is
what lets brushes recompute and resynthesize a small region alone."""

from abc import ABC, abstractmethod

import torch


class Transform(ABC):
    sample_rate: int

    @property
    @abstractmethod
    def n_bins(self) -> int: ...

    @abstractmethod
    def n_frames(self, n_samples: int) -> int:
        """Frames that cover a signal of ``n_samples``."""

    @abstractmethod
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """float32 ``[ch, n]`` -> complex64 ``[ch, bins, frames]``."""

    @abstractmethod
    def forward_frames(self, x: torch.Tensor, frame0: int, frame1: int) -> torch.Tensor:
        """Frames ``[frame0, frame1)`` of ``forward(x)``, computed from the samples they need."""

    @abstractmethod
    def inverse(self, coeffs: torch.Tensor, length: int) -> torch.Tensor:
        """complex ``[ch, bins, frames]`` -> float32 ``[ch, length]``."""

    @abstractmethod
    def inverse_span(self, frames: torch.Tensor, frame0: int, sample0: int, sample1: int,
                     length: int) -> torch.Tensor:
        """Samples ``[sample0, sample1)`` of ``inverse(coeffs, length)``, given
        ``frames = coeffs[..., frame0:frame0 + k]`` that include at least
        ``frames_needed(sample0, sample1)``. Equal, sample for sample, to the
        same span of the full inverse."""

    @abstractmethod
    def bin_frequencies(self) -> torch.Tensor:
        """Centre frequency of each bin, Hz (float64)."""

    @abstractmethod
    def frame_times(self, n_frames: int) -> torch.Tensor:
        """Centre time of each frame, seconds (float64)."""

    @abstractmethod
    def samples_affected(self, frame0: int, frame1: int, length: int) -> tuple[int, int]:
        """Sample span ``[s0, s1)`` that frames ``[frame0, frame1)`` contribute to."""

    @abstractmethod
    def frames_needed(self, sample0: int, sample1: int, length: int) -> tuple[int, int]:
        """Frame span ``[f0, f1)`` whose frames overlap samples ``[sample0, sample1)``."""
