"""Layers: a document is a stack of layers over one analysis, and the mix is the sum
of the audible ones, each times its gain (negated when inverted). The transforms
are linear, so the mix's synthesis is the sum of the layers' syntheses.

The mix is read as one ``[ch, frames, bins]`` tensor (the document's coefficients, held
in runs, engine.model.frame_store, while it has one layer), so
rendering and resynthesis read it as before. A document with one layer is today's:
that layer's tensor *is* the mix, written in place, and nothing else is held. Once
it has two, every layer is a :class:`engine.model.layer_sources.Tiled` (tiles painted
over a source: the recording's tensor, silence, a mask over a parent, a merge), the
mix its own tensor, and a write to a layer recomputes the mix over the written
rect only: the audible layers' cells added to zeros in the order of their ids, one
element at a time, so the mix is a function of the layers alone, whatever rect it
is recomputed over and whatever silent layers lie outside what they hold (an
incremental "mix - old + new" would drift in float32 and break bit-exact undo).

A :class:`StackState` (the layers and which is active) is immutable: operations
(app.session.layer_ops) make a new one, and undo puts the old one back
(:meth:`LayerStack.set_state`), recomputing the mix where what is heard changed: at
once, or (``deferred``, the GUI) a piece at a time within each turn's budget, so
that muting a 10-minute layer never freezes the window.
"""

import time
from dataclasses import dataclass, replace

import torch

from engine.errors import ParameterError
from engine.model.layer_sources import LAYER_TILE, NEST_LIMIT, Dense, Silence, Source, Tiled, depth
from engine.region import Rect

REMIX_FRAMES = 2048  # frames recomputed at a time (the memory a remix holds stays bounded)
PIECE_FRAMES = 64  # frames a deferred remix recomputes at a time (a few ms)


@dataclass(frozen=True)
class Layer:
    id: int  # stable across renames and moves: what an undo step names
    name: str
    content: Source  # Dense (the one layer of a document without layers) or Tiled
    origin: Source  # what restore paints back: the recording, or what the layer was made of
    gain: float = 1.0
    invert: bool = False
    mute: bool = False
    solo: bool = False

    @property
    def factor(self) -> float:
        return -self.gain if self.invert else self.gain

    def changed(self, **changes) -> "Layer":
        return replace(self, **changes)


@dataclass(frozen=True)
class StackState:
    layers: tuple[Layer, ...]  # bottom first
    active: int  # index of the layer brushes paint on

    @property
    def plain(self) -> bool:
        """One layer held as the mix itself: a document without layers."""
        return len(self.layers) == 1 and isinstance(self.layers[0].content, Dense)

    def audible(self) -> list[Layer]:
        """The layers the mix adds up, in the order of their ids: those not muted, and
        of them only the soloed ones if any layer is soloed (a muted layer is never
        heard, soloed or not: its "heard" box says so)."""
        soloed = any(x.solo for x in self.layers)
        return sorted((x for x in self.layers if not x.mute and (x.solo or not soloed)),
                      key=lambda x: x.id)

    def index(self, layer_id: int) -> int:
        for i, layer in enumerate(self.layers):
            if layer.id == layer_id:
                return i
        raise ParameterError(f"no layer {layer_id}; the document has layers "
                             f"{', '.join(str(x.id) for x in self.layers)}")


class LayerStack:
    """The layers of one document and its mix (see the module's docstring)."""

    def __init__(self, tensor: torch.Tensor, recording: Source, name: str = "Recording"):
        self.mix = tensor
        self.channels, frames, bins = tensor.shape
        self.full = Rect(0, bins, 0, frames)
        self.state = StackState((Layer(0, name, Dense(tensor), recording),), 0)
        self.next_id = 1  # the id the next new layer gets
        # the GUI's: a change of what is heard over much of the file queues the mix's
        # recomputation (pending), done a piece per turn of its event loop (remix_some)
        self.deferred = False
        self.pending: list[Rect] = []
        self._writes = 0  # writes into the mix while it is its one layer's content
        self._prepared: tuple[int, torch.Tensor] | None = None  # see prepare_layers

    @property
    def plain(self) -> bool:
        return self.state.plain

    @property
    def active(self) -> Layer:
        return self.state.layers[self.state.active]

    def layer(self, layer_id: int | None = None) -> Layer:
        if layer_id is None:
            return self.active
        return self.state.layers[self.state.index(layer_id)]

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def silence(self) -> Source:
        return Silence(self.channels, self.mix.device)

    def tiled(self, base: Source) -> Tiled:
        return Tiled(base, (self.full.bin1, self.full.frame1))

    def shallow(self, source: Source) -> Source:
        """``source``, or, made more than NEST_LIMIT sources deep (merges of merges,
        duplicates of duplicates), its cells as tiles over silence where it has any:
        the same bits, and reading a layer never recurses far."""
        if depth(source) <= NEST_LIMIT:
            return source
        out = self.tiled(self.silence())
        extent = source.extent(self.full)
        for key in () if extent is None else extent.tiles(LAYER_TILE):
            rect = out.tile_rect(key)
            out.write(rect, source.cells(rect, slice(None)), slice(None))
        return out

    # -- cells -------------------------------------------------------------------
    def read(self, rect: Rect, chans: slice, layer_id: int | None = None) -> torch.Tensor:
        """A layer's cells over ``rect``: ``[ch, frames, bins]`` (a view of the mix for a
        document without layers: copy it before the next write)."""
        if self.plain:
            return self.mix[chans, rect.frames, rect.bins]
        return self.layer(layer_id).content.cells(rect, chans)

    def write(self, rect: Rect, cells: torch.Tensor, chans: slice, *,
              layer_id: int | None = None) -> None:
        """Store ``[ch, frames, bins]`` cells in a layer and recompute the mix there."""
        if self.plain:
            self.mix[chans, rect.frames, rect.bins] = cells
            self.state.layers[0].content.written.update(rect.tiles(LAYER_TILE))
            self._writes += 1
            return
        self.layer(layer_id).content.write(rect, cells, chans)
        self._remix(rect, chans)

    def origin(self, rect: Rect, chans: slice, layer_id: int | None = None) -> torch.Tensor:
        """What restore gives a layer back over ``rect``: ``[ch, frames, bins]``."""
        return self.layer(layer_id).origin.cells(rect, chans)

    # -- states ------------------------------------------------------------------
    def layered(self) -> StackState:
        """The state as layers: a document without layers has its one layer as tiles
        over its tensor (painted no longer in place), ready for a second."""
        if not self.plain:
            return self.state
        only = self.state.layers[0]
        return StackState((only.changed(content=self.tiled(only.content)),), 0)

    def prepare_layers(self) -> None:
        """Make, now (a worker's part: it copies the whole mix), the tensor the mix moves
        to when a document without layers gets them; :meth:`set_state` takes it if the
        mix has not been written since, and drops it either way."""
        if self.plain:
            self._prepared = (self._writes, _plus_zero(self.mix))  # -0.0 as _remix adds it: +0.0

    def forget_prepared(self) -> None:
        self._prepared = None

    def set_state(self, state: StackState) -> Rect | None:
        """Make ``state`` the stack's; the rect where the mix changed (None: nowhere,
        or, :attr:`deferred`, not yet: :meth:`remix_some` recomputes it)."""
        old, self.state = self.state, state
        prepared, self._prepared = self._prepared, None
        if state.plain:
            self.mix, self.pending = state.layers[0].content.tensor, []
            return None if old.plain and old.layers[0].content is state.layers[0].content \
                else self.full
        before = {x.id: x for x in old.audible()}
        after = {x.id: x for x in state.audible()}
        changed = None
        for layer_id in before.keys() | after.keys():
            a, b = before.get(layer_id), after.get(layer_id)
            if a is None or b is None or not _same_cells(a.content, b.content) \
                    or a.factor != b.factor:
                for x in (a, b):
                    extent = None if x is None else x.content.extent(self.full)
                    changed = changed if extent is None else extent.union(changed)
        if old.plain:  # the mix becomes its own tensor: its one layer's cells, added to
            # zeros as _remix adds them (-0.0 becomes +0.0), copied by a worker if it could;
            # not copied where all of it is recomputed now (an unmix, a separation)
            if prepared and prepared[0] == self._writes:
                self.mix = prepared[1]
            elif changed == self.full and not self.deferred:
                self.mix = torch.empty(self.mix.shape, dtype=torch.complex64,
                                       device=self.mix.device)
            else:
                self.mix = _plus_zero(self.mix)
        return None if changed is None else self._changed(changed)

    def _changed(self, rect: Rect) -> Rect | None:
        """Recompute the mix over ``rect`` now, or queue it (:attr:`deferred`: once, if
        queued rects hold it; those it holds are dropped)."""
        if self.deferred:
            if not any(rect.union(x) == x for x in self.pending):
                self.pending = [x for x in self.pending if rect.union(x) != rect] + [rect]
            return None
        self._remix(rect, slice(None))
        return rect

    def remix_some(self, deadline: float | None = None) -> list[Rect]:
        """Recompute queued parts of the mix, PIECE_FRAMES frames at a time, until
        ``deadline`` (a ``time.perf_counter()`` value; None: all of them); the rects
        done (the rest stays queued)."""
        done = []
        while self.pending and (deadline is None or time.perf_counter() < deadline):
            rect = self.pending[0]
            piece = Rect(rect.bin0, rect.bin1, rect.frame0,
                         min(rect.frame1, rect.frame0 + PIECE_FRAMES))
            self._remix(piece, slice(None))
            done.append(piece)
            if piece.frame1 >= rect.frame1:
                self.pending.pop(0)
            else:
                self.pending[0] = Rect(rect.bin0, rect.bin1, piece.frame1, rect.frame1)
        return done

    def _remix(self, rect: Rect, chans: slice) -> None:
        layers = self.state.audible()
        for f0 in range(rect.frame0, rect.frame1, REMIX_FRAMES):
            part = Rect(rect.bin0, rect.bin1, f0, min(rect.frame1, f0 + REMIX_FRAMES))
            out = self.mix[chans, part.frames, part.bins]  # from +0: a silent layer adds
            out.zero_()  # nothing, not even the sign of a zero, outside what it holds
            for layer in layers:
                cells = layer.content.cells(part, chans)
                out.add_(cells if layer.factor == 1 else cells * layer.factor)

    @property
    def nbytes(self) -> int:
        """Memory the layers hold besides the mix: every tensor of every source they are
        made of, once (undo steps may hold more)."""
        if self.plain:
            return 0
        return sum(t.numel() * t.element_size() for t in held_tensors(self.state).values())


def _plus_zero(cells) -> torch.Tensor:
    """A copy of a document's cells as one tensor, plus +0.0 (a time edit's are held in
    runs, engine.model.frame_store: read whole, a copy, and left as they are)."""
    return (cells if isinstance(cells, torch.Tensor) else cells[:, 0:cells.shape[1]]) + 0


def held_tensors(state: StackState) -> dict[int, torch.Tensor]:
    """Every tensor the layers of ``state`` are made of (their sources' own, each
    once), by ``id``."""
    sources, tensors = set(), {}
    todo = [s for x in state.layers for s in (x.content, x.origin)]
    while todo:
        source = todo.pop()
        if id(source) not in sources:
            sources.add(id(source))
            tensors.update((id(t), t) for t in source.held())
            todo.extend(source.parents())
    return tensors


def _same_cells(a: Source, b: Source) -> bool:
    """Whether two layer contents are the same cells: one source, or (a document
    getting layers) tiles over the other with none painted yet."""
    return a is b or isinstance(b, Tiled) and not b.tiles and b.base is a
