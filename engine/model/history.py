"""Undo and redo: one stroke = one step, bit-exact.

Each step keeps, for every tile the stroke touched, the complex coefficients
before and after it (the after ones read when it is first undone) on the layer it
painted; undo writes the before-patches back, redo the after-patches. A layer
operation (app.session.layer_ops) also keeps the layer stack before and after it
(engine.model.layer_stack.StackState, which shares the layers' cells), put back around the
patches. Memory is capped (default 1 GiB, counting the patches and the tensors a
step's layers hold that the layers before it did not: an unmix's masks): past the
cap the oldest steps are dropped, with a warning.

A time edit (engine.model.splice) makes a new document: its step is a :class:`Swap`,
which keeps the document before it, and undo makes that one the history's document
again (the steps before it are that document's).
"""

import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from engine.model.document import Document
from engine.model.layer_stack import StackState, held_tensors
from engine.region import Rect

DEFAULT_LIMIT = 1 << 30
PACK_SAMPLES = 1 << 22  # samples of a Change packed between two looks at a Cancel


@dataclass(frozen=True)
class Change:
    """A repair's audio change: float32 ``shape`` (channels, samples) from ``sample0``,
    kept packed (each sample's first bytes, then its second ...: the exponents lie
    together; deflated), as a project stores it."""

    sample0: int
    shape: tuple[int, int]
    packed: np.ndarray  # uint8

    @classmethod
    def of(cls, sample0: int, samples: np.ndarray,
           between: Callable[[], None] | None = None) -> "Change":
        """``samples`` packed a piece at a time, ``between()`` called between pieces (a
        Cancel is looked at there: 10 minutes of stereo take seconds to pack)."""
        planes = np.ascontiguousarray(samples, np.float32).view(np.uint8).reshape(-1, 4)
        packer, out = zlib.compressobj(1), []
        for byte in range(4):
            for first in range(0, len(planes), PACK_SAMPLES):
                if between is not None:
                    between()
                out.append(packer.compress(planes[first:first + PACK_SAMPLES, byte].tobytes()))
        out.append(packer.flush())
        return cls(sample0, samples.shape, np.frombuffer(b"".join(out), np.uint8))

    def samples(self) -> np.ndarray | None:
        """The change, float32 ``shape``; None if ``packed`` does not hold that."""
        size = 4 * self.shape[0] * self.shape[1]
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(self.packed.tobytes(), size + 1)
        except zlib.error:
            return None
        if len(raw) != size or not inflater.eof or inflater.unconsumed_tail:
            return None
        return np.frombuffer(raw, np.uint8).reshape(4, -1).T.copy().view(np.float32) \
            .reshape(self.shape)


@dataclass
class Patch:
    """A tile's cells before and after a step. ``after`` may be None until the step is
    first undone: undo only ever starts from the state the step left (later steps are
    undone first), so the document holds those cells until then, and a stroke's end
    copies nothing."""

    rect: Rect
    before: torch.Tensor  # complex coefficients, [ch, bins, frames]
    after: torch.Tensor | None = None


@dataclass
class Step:
    label: str
    channel: int | None
    patches: list[Patch] = field(default_factory=list)
    notice: str | None = None  # what the user should know of the stroke (it did nothing)
    layer: int = 0  # the id of the layer the patches were painted on
    stack: tuple[StackState, StackState] | None = None  # the layers before and after it
    written: list | None = None  # Document.written_frames() before it (None: not known)
    # a repair's (app.session.repairs): the audio change whose analysis was added to the
    # before-patches; a project re-derives the after-patches from it (app.project.cell_walk)
    change: Change | None = None
    _written_after: list | None = field(default=None, repr=False, compare=False)

    @property
    def changed(self) -> bool:
        """Whether the step did anything (painted a cell, or changed the layers)."""
        return bool(self.patches) or self.stack is not None

    _stack_bytes: int | None = field(default=None, repr=False, compare=False)

    @property
    def nbytes(self) -> int:
        """Its patches' bytes, its change's and :attr:`stack_nbytes`."""
        change = 0 if self.change is None else self.change.packed.nbytes
        return self.stack_nbytes + change + sum(
            t.numel() * t.element_size() for p in self.patches
            for t in (p.before, p.after) if t is not None)

    @property
    def stack_nbytes(self) -> int:
        """Bytes of the tensors its layers after it are made of and those before it are
        not (an unmix's masks, a moved selection's tiles); taken the first time asked."""
        if self.stack is None:
            return 0
        if self._stack_bytes is None:
            before = held_tensors(self.stack[0])
            self._stack_bytes = sum(t.numel() * t.element_size() for key, t in
                                    held_tensors(self.stack[1]).items() if key not in before)
        return self._stack_bytes

    def dirty(self) -> Rect | None:
        rect = None
        for p in self.patches:
            rect = p.rect.union(rect)
        return rect

    def undo(self, doc: Document) -> Rect | None:
        """Write this step's before-patches back (and its layers); the rect changed."""
        if self.written is not None and self._written_after is None:
            self._written_after = doc.written_frames()  # the state the step left
        for p in reversed(self.patches):
            if p.after is None:
                p.after = doc.read_complex(p.rect, self.channel, layer=self.layer)
            doc.write_complex(p.rect, p.before, channel=self.channel, layer=self.layer)
        changed = self._layers(doc, 0)
        if self.written is not None:
            doc.set_written(self.written)
        return changed

    def redo(self, doc: Document) -> Rect | None:
        """Write this step's after-patches again (its layers first); the rect changed."""
        stacked = self._layers(doc, 1)
        for p in self.patches:
            doc.write_complex(p.rect, p.after, channel=self.channel, layer=self.layer)
        if self._written_after is not None:
            doc.set_written(self._written_after)
        return self.dirty() if stacked is None else stacked.union(self.dirty())

    def _layers(self, doc: Document, which: int) -> Rect | None:
        """Put the layers before (0) or after (1) the step back; the rect changed."""
        if self.stack is None:
            return self.dirty()
        changed = doc.set_layers(self.stack[which])
        return self.dirty() if changed is None else changed.union(self.dirty())


@dataclass
class Swap:
    """A step that replaced the document by another (a time edit): undo puts the one
    before back, redo the one after; each holds its own state, so both are exact."""

    label: str
    before: Document
    after: Document
    notice: str | None = None
    changed = True

    @property
    def nbytes(self) -> int:
        """The document it keeps besides the current one (less the cells they share)."""
        return self.before.nbytes_beside(self.after)


class History:
    def __init__(self, doc: Document, limit_bytes: int = DEFAULT_LIMIT,
                 on_drop: Callable[["Step | Swap"], None] | None = None):
        """``on_drop(step)``: told each step dropped past the cap (None: a warning)."""
        self.doc, self.limit, self.on_drop = doc, limit_bytes, on_drop
        self.steps: list[Step | Swap] = []
        self.position = 0  # steps[:position] are done, the rest can be redone
        self.dropped = 0

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.steps)

    def push(self, step: "Step | Swap") -> None:
        """Add a done step (a :class:`Swap` makes its document the history's)."""
        if isinstance(step, Swap):
            self.doc = step.after
        self.forget_redo()
        self.steps.append(step)
        self.position = len(self.steps)
        while len(self.steps) > 1 and self.nbytes > self.limit:
            oldest = self.steps.pop(0)
            self.position -= 1
            self.dropped += 1
            if isinstance(oldest, Step):  # its cells, layers and change go (a Swap's: on_drop's)
                oldest.patches.clear()
                oldest.stack = oldest.change = None
            if self.on_drop is not None:
                self.on_drop(oldest)
            else:
                warnings.warn(f"undo history is over {self.limit / 2**20:.0f} MiB; the oldest "
                              f"step ('{oldest.label}') can no longer be undone",
                              RuntimeWarning, stacklevel=2)

    def merge_last(self) -> None:
        """Fold the newest step, a layer change, into the one before it, another that
        ends where it starts (the window's Gain box: one undo step for a turn of it)."""
        first, last = self.steps[-2], self.steps[-1]
        if not (self.position == len(self.steps) and first.stack is not None
                and last.stack is not None and first.stack[1] is last.stack[0]
                and not first.patches and not last.patches):
            raise ValueError("only two layer changes in a row, both done, merge")
        first.stack = (first.stack[0], last.stack[1])
        first.label = last.label
        first._stack_bytes = None
        del self.steps[-1]
        self.position -= 1

    def forget_redo(self) -> None:
        """Drop the undone steps (the next push would)."""
        del self.steps[self.position:]

    @property
    def can_undo(self) -> bool:
        return self.position > 0

    @property
    def can_redo(self) -> bool:
        return self.position < len(self.steps)

    def undo(self) -> Rect | None:
        if not self.can_undo:
            return None
        self.position -= 1
        step = self.steps[self.position]
        if isinstance(step, Swap):
            self.doc = step.before
            return self.doc.full_rect()
        return step.undo(self.doc)

    def redo(self) -> Rect | None:
        if not self.can_redo:
            return None
        self.position += 1
        step = self.steps[self.position - 1]
        if isinstance(step, Swap):
            self.doc = step.after
            return self.doc.full_rect()
        return step.redo(self.doc)
