"""A document's coefficients as runs of frames (engine.model.document): ``[ch, frames,
bins]`` complex64, read and written like one tensor, held as consecutive runs.

A time edit's document holds the same cells as the one before it away from its
junctions: the frames before the first junction, and (on a transform whose frames are
each computed alone, the STFT) the frames after the last one when the samples moved by
whole hops. Runs let the new document share those cells with the old one (the history
keeps it for undo) instead of copying them (10 minutes of stereo: 850 MB, most of an
edit's time), and leave every other frame unanalysed until something reads it (the
view, a brush, the overview's worker): analysed then, on the analysis grid the
document was opened on, so it holds what a fresh analysis of its content holds.

A run's cells are written in place only while one store holds them; once shared,
a write copies the frames it reaches first (copy-on-write), so neither store sees
the other's edits: undo and redo across a time edit stay exact.

A store may hold a ``budget`` of analysed cells (a document too large to hold whole:
8 channels at 192 kHz): past it, the least recently used runs it analysed and nothing
wrote go back to unanalysed, analysed again when next read.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass

import torch

COPIED_FRAMES = 64  # a write into shared cells copies whole runs of this many frames

Analyse = Callable[[int, int], torch.Tensor]  # frames [f0, f1) -> [ch, f1 - f0, bins]


class _Block:
    """Cells one store holds, or (``shared``) several: written in place only if not."""

    __slots__ = ("shared",)

    def __init__(self, shared: bool = False):
        self.shared = shared


@dataclass
class _Run:
    start: int
    stop: int
    cells: torch.Tensor | None  # [ch, stop - start, bins]; None: not analysed yet
    block: _Block
    clean: bool = False  # analysed here and never written: may be let go (a budget)
    used: int = 0  # when last read or written (the least recently used go first)


@dataclass(frozen=True)
class Shared:
    """Frames ``[start, stop)`` of a new store are ``source``'s from ``source_start`` on."""

    start: int
    stop: int
    source: "FrameStore"
    source_start: int


class FrameStore:
    """See the module's docstring. ``analyse(f0, f1)``: the document's analysis of
    frames ``[f0, f1)`` (called under the store's lock, for frames not yet held);
    ``grain``: frames analysed at a time, aligned to multiples of it (the analysis
    grid: on the constant-Q transform a frame's bits depend on its chunk)."""

    def __init__(self, shape: tuple[int, int, int], device, *, analyse: Analyse | None,
                 grain: int, shared: tuple[Shared, ...] = (), budget: int | None = None):
        self.budget = budget  # bytes of analysed cells held at most (None: all of them)
        self._tick = 0
        self.shape = torch.Size(shape)
        self.device = torch.device(device)
        self.dtype = torch.complex64
        self.grain = max(1, grain)
        self._analyse = analyse
        self._lock = threading.RLock()
        frames = shape[1]
        runs, at = [], 0
        for part in sorted(shared, key=lambda p: p.start):
            if part.start > at:
                runs.append(_Run(at, part.start, None, _Block()))
            runs.extend(part.source._shared_runs(part.source_start, part.stop - part.start,
                                                 part.start))
            at = part.stop
        if at < frames:
            runs.append(_Run(at, frames, None, _Block()))
        self._runs = runs

    @classmethod
    def whole(cls, cells: torch.Tensor, *, analyse: Analyse | None = None,
              grain: int = 1) -> "FrameStore":
        """A store holding ``cells`` (``[ch, frames, bins]``) as they are, in place."""
        store = cls(tuple(cells.shape), cells.device, analyse=analyse, grain=grain)
        store._runs = [_Run(0, cells.shape[1], cells, _Block())]
        return store

    # -- what a tensor answers ----------------------------------------------------
    def numel(self) -> int:
        return self.shape.numel()

    def element_size(self) -> int:
        return 8

    def is_complex(self) -> bool:
        return True

    @property
    def unanalysed(self) -> int:
        """Frames not analysed yet."""
        return sum(r.stop - r.start for r in self._runs if r.cells is None)

    def held(self) -> dict[int, int]:
        """The memory the cells lie in, by storage: ``{data_ptr: bytes}``."""
        with self._lock:
            out = {}
            for r in self._runs:
                if r.cells is not None:
                    storage = r.cells.untyped_storage()
                    out[storage.data_ptr()] = storage.nbytes()
            return out

    def __getitem__(self, key) -> "torch.Tensor | _Selected":
        """``store[chans]``: those channels, read as a store is; ``store[chans, frames,
        bins]`` (slices, step 1): the cells, a view where one run holds them all."""
        if not isinstance(key, tuple):
            return _Selected(self, key)
        chans, _, bins = (*key, slice(None), slice(None))[:3]
        parts = self.parts(key)
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return torch.empty((len(range(self.shape[0])[chans]), 0,
                                len(range(self.shape[2])[bins])), dtype=self.dtype,
                               device=self.device)
        return torch.cat(parts, 1)

    def parts(self, key: tuple) -> list[torch.Tensor]:
        """``store[key]`` as the runs hold it: a view of each, in order (none joined)."""
        chans, frames, bins = (*key, slice(None), slice(None))[:3]
        f0, f1, _ = frames.indices(self.shape[1])
        with self._lock:
            parts = [r.cells[chans, a:b, bins] for r, a, b in self._reach(f0, f1)]
            self._let_go()
        return parts

    def __setitem__(self, key, value: torch.Tensor) -> None:
        chans, frames, bins = (*key, slice(None), slice(None))[:3]
        f0, f1, _ = frames.indices(self.shape[1])
        with self._lock:
            for r, a, b in self._reach(f0, f1, writing=True):
                r.cells[chans, a:b, bins] = value[:, r.start + a - f0:r.start + b - f0]
                r.clean = False
            self._let_go()

    def dense(self) -> torch.Tensor:
        """The cells as one tensor, held from now on as one run (a copy, unless they are
        one run already); with a budget, a copy of them (held as before)."""
        with self._lock:
            if self.budget is not None:
                return self[:, 0:self.shape[1]]
            self._reach(0, self.shape[1])
            if len(self._runs) == 1 and not self._runs[0].block.shared:
                return self._runs[0].cells
            cells = torch.cat([r.cells for r in self._runs], 1)
            self._runs = [_Run(0, self.shape[1], cells, _Block())]
            return cells

    # -- runs ----------------------------------------------------------------------
    def _reach(self, f0: int, f1: int, *, writing: bool = False
               ) -> list[tuple[_Run, int, int]]:
        """The runs over frames ``[f0, f1)``, each with the span of its cells in it
        (relative to the run), analysed first, and (``writing``) each its own."""
        out = []
        self._tick += 1
        i = self._index(f0)
        while i < len(self._runs) and self._runs[i].start < f1:
            r = self._runs[i]
            a, b = max(f0, r.start), min(f1, r.stop)
            if r.cells is None:
                i = self._fill(i, a, b)
                continue
            if writing and r.block.shared:
                i = self._own(i, a, b)
                continue
            r.used = self._tick
            out.append((r, a - r.start, b - r.start))
            i += 1
        return out

    def _let_go(self) -> None:
        """Over the budget, let the least recently used clean runs go back to unanalysed
        (their cells are the content's analysis: analysed again when read)."""
        if self.budget is None:
            return
        held = sum(r.cells.numel() * 8 for r in self._runs if r.cells is not None)
        for r in sorted((r for r in self._runs if r.clean), key=lambda r: r.used):
            if held <= self.budget:
                return
            held -= r.cells.numel() * 8
            r.cells, r.clean = None, False

    def _index(self, frame: int) -> int:
        lo, hi = 0, len(self._runs)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._runs[mid].start <= frame:
                lo = mid
            else:
                hi = mid
        return lo

    def _fill(self, i: int, a: int, b: int) -> int:
        """Analyse the unanalysed run ``i`` over ``[a, b)`` widened to the grain (within
        the run); the index of the run holding ``a`` after."""
        r, g = self._runs[i], self.grain
        lo, hi = max(r.start, a // g * g), min(r.stop, -(-b // g) * g)
        cells = self._analyse(lo, hi).to(self.device, self.dtype)
        at = self._split(i, lo, hi, cells, _Block())
        self._runs[at].clean = True
        return at

    def _own(self, i: int, a: int, b: int) -> int:
        """Give the shared run ``i`` a copy of its cells over ``[a, b)`` widened to
        COPIED_FRAMES (within the run); the index of the run holding ``a`` after."""
        r, g = self._runs[i], COPIED_FRAMES
        lo, hi = max(r.start, a // g * g), min(r.stop, -(-b // g) * g)
        return self._split(i, lo, hi, r.cells[:, lo - r.start:hi - r.start].clone(), _Block())

    def _split(self, i: int, lo: int, hi: int, cells: torch.Tensor, block: _Block) -> int:
        """Replace run ``i``'s frames ``[lo, hi)`` by ``cells``; the new run's index."""
        r = self._runs[i]

        def part(start: int, stop: int) -> _Run:
            held = None if r.cells is None else r.cells[:, start - r.start:stop - r.start]
            return _Run(start, stop, held, r.block, r.clean, r.used)

        new = ([part(r.start, lo)] if lo > r.start else []) + [_Run(lo, hi, cells, block)] + \
            ([part(hi, r.stop)] if hi < r.stop else [])
        self._runs[i:i + 1] = new
        return i + (1 if lo > r.start else 0)

    def _shared_runs(self, start: int, count: int, at: int) -> list[_Run]:
        """Frames ``[start, start + count)`` as runs placed at ``at`` of another store,
        holding these cells (marked shared) where they are analysed."""
        with self._lock:
            out = []
            i = self._index(start)
            while i < len(self._runs) and self._runs[i].start < start + count:
                r = self._runs[i]
                a, b = max(start, r.start), min(start + count, r.stop)
                if r.cells is None:
                    out.append(_Run(at + a - start, at + b - start, None, _Block()))
                else:
                    r.block.shared = True
                    out.append(_Run(at + a - start, at + b - start,
                                    r.cells[:, a - r.start:b - r.start], r.block))
                i += 1
            return out


class _Selected:
    """Some channels of a store, read as a store is (``[chans, frames, bins]``)."""

    def __init__(self, store: FrameStore, chans: slice):
        self.store, self.chans = store, chans
        count = len(range(store.shape[0])[chans])
        self.shape = torch.Size((count, *store.shape[1:]))
        self.device = store.device

    def is_complex(self) -> bool:
        return True

    def _key(self, key) -> tuple:
        chans, frames, bins = (*key, slice(None), slice(None))[:3]
        picked = range(self.store.shape[0])[self.chans][chans]
        return slice(picked.start, picked.stop, picked.step or None), frames, bins

    def __getitem__(self, key) -> torch.Tensor:
        return self.store[self._key(key)]

    def parts(self, key) -> list[torch.Tensor]:
        return self.store.parts(self._key(key))
