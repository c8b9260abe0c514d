"""What a stroke painted and where it is heard, as the locality pipeline needs them
(brushes.locality), and what it needs of a stroke."""

from dataclasses import dataclass, field
from typing import Protocol

from brushes.dab import Dab
from brushes.locality.gate import BandGate
from brushes.stroke_canvas import StrokeCanvas
from engine.model.document import Document
from engine.region import Rect


@dataclass(frozen=True)
class Heard:
    """Where a stroke is heard when its maker knows better than its coverage:
    ``frames``, the frames ``[a, b)`` of a filled hard-edged rectangle (painted beyond
    its edges); ``gate``, a selection's bands each heard where the selection holds
    it. Neither: the frames the stroke covered."""
    frames: tuple[int, int] | None = None
    gate: BandGate | None = None


@dataclass
class Painted:
    """What a stroke painted, as its end needs it: ``calls``, each call's dabs in
    order (the ends are painted from the first and last); ``filled``, whether a
    selection's weights were applied at once (``Stroke.apply``); ``heard``."""
    heard: Heard = field(default_factory=Heard)
    calls: list[list[Dab]] = field(default_factory=list)
    filled: bool = False

    def dabs(self) -> list[Dab]:
        return [d for call in self.calls for d in call]


class LocalKernel(Protocol):
    """What the locality pipeline asks of a stroke's kernel
    (``brushes.kernels.kernel.Kernel``)."""
    wash: bool
    batchable: bool


class LocalStroke(Protocol):
    """What the locality pipeline needs of a stroke (``brushes.stroke.Stroke``): its
    document, what it touched, its kernel, the rect it changed, the record of what it
    painted, and a way to paint more cells as part of it."""
    doc: Document
    canvas: StrokeCanvas
    kernel: LocalKernel
    dirty: Rect | None
    record: Painted

    def apply(self, rect: Rect, mask, dabs: list) -> Rect: ...
