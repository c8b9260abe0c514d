"""What a layer's cells are made of (engine.model.layer_stack): sources that compute the complex
coefficients of any rect on demand, never written once a layer holds them, and the
copy-on-write tiles a layer is painted in.

A source answers ``cells(rect, chans)``: a fresh ``[ch, frames, bins]`` complex64
tensor (frames-major, as the document stores its coefficients) that the caller may
write. Sources are cheap where the layer is: silence costs nothing, a mask over a
parent two bytes a cell, a sum of two sources nothing until read.

Masks are fixed point: ``uint16`` shares of ``MASK_ONE``. An unmix into K layers
keeps K - 1 of them; the last layer's share is ``MASK_ONE`` minus theirs, an
integer, so the shares add up to exactly ``MASK_ONE`` at every cell and the layers
to their source within float32 rounding.
"""

import weakref

import torch

from engine.region import Rect

LAYER_TILE = 64  # bins and frames per side of a tile a layer is painted in
MASK_ONE = 65535  # a mask's full share
NEST_LIMIT = 8  # sources deep a layer's source may be made
# (engine.model.layer_stack.LayerStack.shallow)


class Source:
    """Cells computed on demand (see the module's docstring)."""

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        raise NotImplementedError

    def extent(self, full: Rect) -> Rect | None:
        """Where the cells may be other than zero, within ``full`` (None: nowhere)."""
        return full

    def held(self) -> tuple[torch.Tensor, ...]:
        """The tensors this source holds itself (not its parents')."""
        return ()

    def parents(self) -> tuple["Source", ...]:
        """The sources its cells are computed from."""
        return ()


class Silence(Source):
    """Zero everywhere: an empty layer."""

    def __init__(self, channels: int, device):
        self.channels, self.device = channels, device

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        count = len(range(self.channels)[chans])
        return torch.zeros((count, rect.shape[1], rect.shape[0]), dtype=torch.complex64,
                           device=self.device)

    def extent(self, full: Rect) -> Rect | None:
        return None


class Dense(Source):
    """A whole ``[ch, frames, bins]`` tensor. The one layer of a document without
    layers is written in place (it is the mix); once the document has layers its
    tensor is only read. ``written``: the keys of the LAYER_TILE tiles written in
    place (what a project stores of it besides the recording)."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor
        self.written: set[tuple[int, int]] = set()

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        return self.tensor[chans, rect.frames, rect.bins].clone()

    def held(self) -> tuple[torch.Tensor, ...]:
        return (self.tensor,)


class Computed(Source):
    """Cells a method of another object computes (the recording's analysis: the
    document's), held by a weak reference: the document's layers do not keep the
    document alive (a cycle would hold a batch's decoded files until the collector
    ran)."""

    def __init__(self, method):
        self.method = weakref.WeakMethod(method)

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        return self.method()(rect, chans)


class Masked(Source):
    """Share ``index`` of ``parent``: ``masks[index] / MASK_ONE`` of it, or for the last
    index what the other masks leave. ``recipe``: how the masks were made (plain
    data: the unmix method and the marks painted, app.session.unmixing), to make them
    again; ``fit``: the model they came from, which making them again may start from
    (an NMF's spectra and activations; not kept by projects)."""

    def __init__(self, parent: Source, masks: tuple[torch.Tensor, ...], index: int, *,
                 recipe: dict | None = None, fit=None):
        self.parent, self.masks, self.index, self.recipe = parent, masks, index, recipe
        self.fit = fit

    def share(self, rect: Rect, chans: slice) -> torch.Tensor:
        """The share over ``rect``, float32 ``[ch, frames, bins]`` in [0, 1]."""
        def part(mask: torch.Tensor) -> torch.Tensor:
            return mask[chans, rect.frames, rect.bins].to(torch.int32)

        if self.index < len(self.masks):
            q = part(self.masks[self.index])
        else:
            q = MASK_ONE - sum(part(m) for m in self.masks)
        return q.float() / MASK_ONE

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        parent = torch.view_as_real(self.parent.cells(rect, chans))
        return torch.view_as_complex(parent * self.share(rect, chans).unsqueeze(-1))

    def extent(self, full: Rect) -> Rect | None:
        return self.parent.extent(full)

    def held(self) -> tuple[torch.Tensor, ...]:
        return self.masks  # shared by the layers of one unmix

    def parents(self) -> tuple[Source, ...]:
        return (self.parent,)


class Summed(Source):
    """``sum(gain * source)``, in order: a merged layer until it is painted."""

    def __init__(self, parts: tuple[tuple[Source, float], ...]):
        self.parts = parts

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        out = None
        for source, gain in self.parts:
            cells = source.cells(rect, chans)
            cells = cells if gain == 1 else cells * gain
            out = cells if out is None else out.add_(cells)
        return out

    def extent(self, full: Rect) -> Rect | None:
        out = None
        for source, _ in self.parts:
            rect = source.extent(full)
            out = rect if out is None else out.union(rect)
        return out

    def parents(self) -> tuple[Source, ...]:
        return tuple(source for source, _ in self.parts)


class Tiled(Source):
    """A layer's cells: the tiles it was painted in over a ``base`` source. Writing
    replaces a tile (never writes one in place), so a copy of the tile dict
    (:meth:`frozen`) is a snapshot that later painting leaves alone; a tile written
    back to its base's cells (an undo) is dropped, so a layer holds only the tiles
    that differ from its base."""

    def __init__(self, base: Source, size: tuple[int, int], tiles: dict | None = None):
        self.base, self.size = base, size  # size: (bins, frames) of the document
        self.tiles: dict[tuple[int, int], torch.Tensor] = dict(tiles or {})

    def tile_rect(self, key: tuple[int, int]) -> Rect:
        tb, tf = key
        return Rect(tb * LAYER_TILE, (tb + 1) * LAYER_TILE, tf * LAYER_TILE,
                    (tf + 1) * LAYER_TILE).clip(*self.size)

    def cells(self, rect: Rect, chans: slice) -> torch.Tensor:
        out = self.base.cells(rect, chans)
        if self.tiles:
            for key in rect.tiles(LAYER_TILE):
                tile = self.tiles.get(key)
                if tile is not None:
                    into_rect, into_tile = overlap(rect, self.tile_rect(key))
                    out[(slice(None), *into_rect)] = tile[(chans, *into_tile)]
        return out

    def write(self, rect: Rect, cells: torch.Tensor, chans: slice) -> None:
        """Store ``[ch, frames, bins]`` ``cells`` over ``rect`` on channels ``chans``."""
        every = slice(None)
        for key in rect.tiles(LAYER_TILE):
            tile_rect = self.tile_rect(key)
            base = self.base.cells(tile_rect, every)
            old = self.tiles.get(key)
            tile = base.clone() if old is None else old.clone()
            into_rect, into_tile = overlap(rect, tile_rect)
            tile[(chans, *into_tile)] = cells[(slice(None), *into_rect)]
            if same_bits(tile, base):
                self.tiles.pop(key, None)
            else:
                self.tiles[key] = tile

    def frozen(self) -> Source:
        """These cells as they are now, whatever is painted later."""
        return self.base if not self.tiles else Tiled(self.base, self.size, self.tiles)

    def extent(self, full: Rect) -> Rect | None:
        out = self.base.extent(full)
        for key in self.tiles:
            out = self.tile_rect(key).union(out)
        return out

    def held(self) -> tuple[torch.Tensor, ...]:
        return tuple(self.tiles.values())

    def parents(self) -> tuple[Source, ...]:
        return (self.base,)


def depth(source: Source) -> int:
    """How many sources deep ``source`` is made (1: of none), each counted once."""
    known: dict[int, int] = {}

    def of(s: Source) -> int:
        if id(s) not in known:
            known[id(s)] = 1 + max((of(p) for p in s.parents()), default=0)
        return known[id(s)]
    return of(source)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two complex tensors hold the same bits (-0.0 is not 0.0 here)."""
    def bits(t: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(t).view(torch.int32)
    return a.shape == b.shape and torch.equal(bits(a), bits(b))


def overlap(rect: Rect, tile: Rect) -> tuple[tuple[slice, slice], tuple[slice, slice]]:
    """:meth:`engine.region.Rect.overlap`, frames-major (as a layer's cells are)."""
    (rb, rf), (tb, tf) = rect.overlap(tile)
    return (rf, rb), (tf, tb)


def quantized_masks(shares: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """Float shares ``[ch, frames, bins]`` (each in [0, 1], adding up to at most 1) as
    the fixed-point masks :class:`Masked` keeps: all but the last (whose share is what
    the others leave). Rounded down, so theirs never add up past ``MASK_ONE``."""
    return tuple(torch.floor(s.clamp(0, 1) * MASK_ONE).to(torch.int32).clamp_(0, MASK_ONE)
                 .to(torch.uint16) for s in shares[:-1])
