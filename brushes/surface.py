"""What a brush's kernels see of the document, as libmypaint's kernels see a surface:
its cells over a rect (now, and as the recording had them), written back over a rect,
and the analysis's sizes and axes. Not the document's layers, history, audio or
listeners: a kernel that needs more asks for it here first.

engine.model.document.Document is a Surface; tests/brushes/test_kernels.py checks that the
kernels touch nothing else of it, and an import contract that they do not import it.
"""

from typing import Protocol

import torch

from engine.region import Rect
from engine.transforms.transform import Transform


class Surface(Protocol):
    transform: Transform  # the axes (seconds_of, bin_frequencies, phase_advance) and
    # the frames' relation to samples (frames_needed, samples_affected, forward_segment)
    length: int  # samples
    sample_rate: int
    device: torch.device

    @property
    def n_bins(self) -> int: ...

    @property
    def n_frames(self) -> int: ...

    @property
    def full_scale(self) -> float: ...

    def frame_of(self, seconds: float) -> float: ...

    def bin_of(self, hz: float) -> float: ...

    def bin_span(self, freq: float, hz: float) -> float: ...

    def channel_indices(self, channel: int | None) -> tuple[int, ...]: ...

    def read_complex(self, rect: Rect, channel: int | None = None) -> torch.Tensor: ...

    def write_complex(self, rect: Rect, coeffs: torch.Tensor,
                      channel: int | None = None) -> Rect: ...

    def original(self, rect: Rect, channel: int | None = None) -> torch.Tensor: ...
