"""What a kernel is given and what it returns."""

from dataclasses import dataclass

import torch

from brushes.canvas import StrokeCanvas
from brushes.dab import Dab
from brushes.params import Param
from engine.document import Document
from engine.region import Rect


@dataclass
class DabContext:
    doc: Document
    canvas: StrokeCanvas
    rect: Rect  # the cells the kernel returns new values for
    coverage: torch.Tensor  # [bins, frames]: the stroke's mask so far (wash kernels)
    dabs: list[Dab]  # the dab(s) this call paints; params are the first's
    before: tuple[torch.Tensor, torch.Tensor]  # magnitude, phase [ch, bins, frames] over rect

    @property
    def params(self) -> dict:
        return self.dabs[0].params


class Kernel:
    """A brush's effect. ``wash`` kernels compute their rect from the
    before-stroke state and the coverage (see brushes.canvas); ``batchable``
    ones do not depend on where a dab is, so one event's dabs are one call."""

    name: str = ""
    help: str = ""
    params: tuple[Param, ...] = ()
    wash = True
    batchable = True

    def region(self, doc: Document, rect: Rect, params: dict) -> Rect:
        """The cells a dab over ``rect`` changes (most kernels: just its footprint)."""
        return rect

    def effect(self, ctx: DabContext) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def finish(self, doc: Document, canvas: StrokeCanvas, params: dict) -> Rect | None:
        """Called once when the stroke ends, with all it covered; returns the rect
        rewritten (most kernels: nothing to do)."""
        return None


def blend_magnitude(before_mag: torch.Tensor, target: torch.Tensor,
                    coverage: torch.Tensor) -> torch.Tensor:
    return before_mag + coverage * (target - before_mag)


def blend_complex(ctx: DabContext, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mix the before-stroke coefficients toward ``target`` by the coverage."""
    z = torch.polar(*ctx.before)
    return settle(ctx, z + ctx.coverage * (target - z), ctx.coverage)


def add_complex(ctx: DabContext, addition: torch.Tensor,
                weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Add ``weight * addition`` to the before-stroke coefficients."""
    return settle(ctx, torch.polar(*ctx.before) + weight * addition, weight)


def settle(ctx: DabContext, z: torch.Tensor, weight: torch.Tensor):
    """Magnitude and phase of ``z`` where ``weight`` > 0; the before values elsewhere."""
    mag, phase = ctx.before
    untouched = (weight == 0).expand_as(mag)  # keep those cells bit for bit
    return torch.where(untouched, mag, z.abs()), torch.where(untouched, phase, z.angle())
