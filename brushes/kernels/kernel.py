"""What a kernel is given and what it returns."""

from collections.abc import Generator
from dataclasses import dataclass
from functools import cached_property

import torch

from brushes.dab import Dab
from brushes.params import Param
from brushes.stroke_canvas import StrokeCanvas
from brushes.surface import Surface
from engine.coeffs import magnitude
from engine.region import Rect


@dataclass
class DabContext:
    surface: Surface
    canvas: StrokeCanvas
    rect: Rect  # the cells the kernel returns new values for
    coverage: torch.Tensor  # [bins, frames]: the stroke's mask so far (wash kernels)
    dabs: list[Dab]  # the dab(s) this call paints; params are the first's
    wash: bool = True  # whether "before" means before the stroke (else: before this call)

    @property
    def params(self) -> dict:
        return self.dabs[0].params

    @cached_property
    def before_z(self) -> torch.Tensor:
        """The coefficients ``[ch, bins, frames]`` over rect before the stroke (a wash
        kernel) or before this call; read when a kernel asks (one that reads a wider
        region may set it to its part of that)."""
        if self.wash:
            return self.canvas.complex_before(self.rect)
        return self.surface.read_complex(self.rect, self.canvas.channel)

    @cached_property
    def before_mag(self) -> torch.Tensor:
        """Magnitude of :attr:`before_z` (computed once, when a kernel asks)."""
        return magnitude(self.before_z)

    @cached_property
    def before(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Magnitude and phase of :attr:`before_z`."""
        return self.before_mag, self.before_z.angle()


class Kernel:
    """A brush's effect. ``wash`` kernels compute their rect from the
    before-stroke state and the coverage (see brushes.stroke_canvas); ``batchable``
    ones do not depend on where a dab is, so one event's dabs are one call;
    ``local`` ones make each cell from the cells near it, so a rect done in parts
    is the rect done at once, to rounding (a selection is filled a run of frames at
    a time; blur's convolutions differ by 1e-7 of full scale)."""

    name: str = ""
    help: str = ""
    params: tuple[Param, ...] = ()
    wash = True
    batchable = True
    local = True

    def reach_s(self, params: dict) -> float:
        """How far (seconds) from its dabs the kernel reads the document."""
        return 0.0

    def region(self, surface: Surface, rect: Rect, params: dict) -> Rect:
        """The cells a dab over ``rect`` changes (most kernels: just its footprint)."""
        return rect

    def effect(self, ctx: DabContext) -> torch.Tensor | None:
        """New complex coefficients over ``ctx.rect`` (cells left as they were keep
        ``ctx.before_z``'s values bit for bit), or None when there is nothing to write
        (yet)."""
        raise NotImplementedError

    def finishing(self, surface: Surface, canvas: StrokeCanvas, params: dict
                  ) -> Generator[None, None, Rect | None]:
        """Run once when the stroke ends, with all it covered, in steps (as
        :meth:`brushes.stroke.Stroke.ending`); returns the rect rewritten (most
        kernels: nothing to do)."""
        yield from ()
        return None


def blend_magnitude(before_mag: torch.Tensor, target: torch.Tensor,
                    coverage: torch.Tensor) -> torch.Tensor:
    return before_mag + coverage * (target - before_mag)


def with_magnitude(ctx: DabContext, mag: torch.Tensor) -> torch.Tensor:
    """The before-stroke coefficients brought to magnitude ``mag``, their phase kept
    (a rescale, no trigonometry); cells whose magnitude is unchanged stay bit for bit."""
    before_mag = ctx.before_mag
    scaled = ctx.before_z * (mag / before_mag)
    if bool((before_mag == 0).any()):  # no phase to keep: the cell's own angle (0)
        scaled = torch.where(before_mag > 0, scaled, torch.polar(mag, ctx.before[1]))
    return torch.where(mag == before_mag, ctx.before_z, scaled)


def blend_complex(ctx: DabContext, target: torch.Tensor) -> torch.Tensor:
    """Mix the before-stroke coefficients toward ``target`` by the coverage."""
    z = ctx.before_z
    return settle(ctx, z + ctx.coverage * (target - z), ctx.coverage)


def add_complex(ctx: DabContext, addition: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Add ``weight * addition`` to the before-stroke coefficients."""
    return settle(ctx, ctx.before_z + weight * addition, weight)


def settle(ctx: DabContext, z: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``z`` where ``weight`` > 0; the before coefficients, bit for bit, elsewhere."""
    return torch.where((weight == 0).expand_as(z), ctx.before_z, z)
