"""What one stroke has touched: the document as it was before the stroke, kept
in tiles the first time a dab reaches them, and the stroke's coverage (the
largest dab mask seen at each cell so far).

Most brushes paint "wash" style: every dab recomputes its rect from the
before-stroke state and the coverage, so overlapping dabs do not pile up,
the result does not depend on dab spacing or order, and the dabs of one event
can be applied as one batch. The saved tiles are also the stroke's undo
patch (:mod:`engine.model.history`).
"""

from dataclasses import dataclass, field

import torch

from engine.coeffs import magnitude, polar_parts
from engine.model.document import Document
from engine.region import Rect

UNDO_TILE = 64  # bins and frames per side of a tile kept as it was before the stroke


@dataclass
class StrokeState:
    """What kernels carry from dab to dab within one stroke, and what it tells."""

    notice: str | None = None  # what the stroke tells the user (it did nothing, and why)
    painted: set = field(default_factory=set)  # heal (steady): (Hz, reach) of each dab
    track: list = field(default_factory=list)  # ... (seconds, Hz, reach) along the stroke
    comb: list = field(default_factory=list)  # ... a harmonic stroke's (seconds, Hz, radius)
    repairs: dict = field(default_factory=dict)  # heal (declick): each click's, by its span
    tone: tuple | None = None  # tone: (Hz, frame, phase) where the last dab ended


class StrokeCanvas:
    def __init__(self, doc: Document, channel: int | None):
        self.doc, self.channel = doc, channel
        self.before_tiles: dict[tuple[int, int], torch.Tensor] = {}  # complex coefficients
        self.coverage_tiles: dict[tuple[int, int], torch.Tensor] = {}
        self.state = StrokeState()

    def _tiles(self, rect: Rect):
        for key in rect.tiles(UNDO_TILE):
            yield key, self.tile_rect(key)

    def tile_rect(self, key: tuple[int, int]) -> Rect:
        tb, tf = key
        return Rect(tb * UNDO_TILE, (tb + 1) * UNDO_TILE, tf * UNDO_TILE, (tf + 1) * UNDO_TILE) \
            .clip(self.doc.n_bins, self.doc.n_frames)

    def touch(self, rect: Rect) -> None:
        """Save the before-stroke state of every tile of ``rect`` not saved yet."""
        for key, tile in self._tiles(rect):
            if key not in self.before_tiles:
                self.before_tiles[key] = self.doc.read_complex(tile, self.channel)

    def forget(self) -> None:
        """The saved cells are not needed: the stroke wrote nothing (no undo patches)."""
        self.before_tiles.clear()

    def before(self, rect: Rect) -> tuple[torch.Tensor, torch.Tensor]:
        """Magnitude and phase over ``rect`` as they were before the stroke."""
        return polar_parts(self.complex_before(rect))

    def magnitude_before(self, rect: Rect) -> torch.Tensor:
        """The magnitude alone (for kernels that keep the phase)."""
        return magnitude(self.complex_before(rect))

    def complex_before(self, rect: Rect) -> torch.Tensor:
        """The coefficients over ``rect`` as they were before the stroke."""
        rect = rect.clip(self.doc.n_bins, self.doc.n_frames)
        tiles = list(self._tiles(rect))
        if all(key in self.before_tiles for key, _ in tiles):  # the usual case, after touch()
            first = self.before_tiles[tiles[0][0]]
            out = first.new_empty((first.shape[0], *rect.shape))
        else:
            out = self.doc.read_complex(rect, self.channel)
        for key, tile in tiles:
            saved = self.before_tiles.get(key)
            if saved is not None:
                dst, src = rect.overlap(tile)
                out[(slice(None), *dst)] = saved[(slice(None), *src)]
        return out

    def coverage(self, rect: Rect) -> torch.Tensor:
        """The stroke's coverage so far over ``rect`` (0 where it has not been)."""
        rect = rect.clip(self.doc.n_bins, self.doc.n_frames)
        out = torch.zeros(rect.shape, device=self.doc.device)
        for key, tile in self._tiles(rect):
            saved = self.coverage_tiles.get(key)
            if saved is not None:
                dst, src = rect.overlap(tile)
                out[dst] = saved[src]
        return out

    def covered_rect(self) -> Rect | None:
        """The bounding rect of every tile the stroke has covered."""
        rect = None
        for key in self.coverage_tiles:
            rect = self.tile_rect(key).union(rect)
        return rect

    def cover(self, rect: Rect, mask: torch.Tensor) -> torch.Tensor:
        """Raise the coverage over ``rect`` to at least ``mask``; return the new coverage."""
        rect = rect.clip(self.doc.n_bins, self.doc.n_frames)
        coverage = torch.zeros(rect.shape, device=mask.device)
        for key, tile in self._tiles(rect):
            saved = self.coverage_tiles.get(key)
            if saved is None:
                saved = self.coverage_tiles[key] = torch.zeros(tile.shape, device=mask.device)
            dst, src = rect.overlap(tile)
            saved[src] = torch.maximum(saved[src], mask[dst])
            coverage[dst] = saved[src]
        return coverage
