"""The cells of a project (version 6 on), stored as what differs from what can be re-derived.

A project holds the recording, whose analysis the document opens with. From there a
walk goes through the undo history as the edits were made: the done steps in order,
then the edited tiles (the document as saved), then the undone steps. Each block of
cells on the way (a step's before- or after-patch, an edited tile) is predicted from
the cells the walk holds at that moment: a before-patch is what the walk holds there,
a repair's after-patch is its before-patch plus the analysis of the audio change the
repair made (engine.model.history.Step.change, stored beside), added as the repair added
it; a painted step's after-patch is guessed unchanged. The walk then holds the block's
true cells. Only the cells whose bits differ from the prediction are stored: a mask of
one bit a cell (packed, deflated) in ``cells_mask`` and those cells in ``cells_values``
(float32 ``[cells, 2]``). Writing and opening take the same walk, so a whole-file repair
costs its change (float32 audio) and a few bytes of mask, not its coefficients, and every
cell comes back bit for bit whatever was predicted.

Version 7 analyses a change only over the frames it reaches (:func:`reach`: those whose
window holds a sample it changed; the others analyse to zero, and their after-cells are
predicted as their before-cells), so a de-click's change of a few hundred clicks costs
their frames, not the whole file's, to re-derive; version 6 was written with the
analysis over every frame of the patch, and is walked so.
"""

import zlib
from dataclasses import dataclass

import numpy as np
import torch

from engine.model.history import Change
from engine.region import Rect

STATE_CHUNKS = 16  # analysis chunks in one chunk of the walk's state
REACH_BLOCK = 1 << 11  # samples in a block of a change, as reach looks at it


@dataclass
class Planned:
    """A step as the walk sees it: its channel (None: all), its change (a repair's, or
    None), its patches' rects; ``before``/``after``: their cells
    when writing (None when opening); ``samples``: the change unpacked, when it was
    (the walk lets it go once used)."""

    channel: int | None
    change: Change | None
    rects: list[Rect]
    before: list[torch.Tensor] | None = None
    after: list[torch.Tensor | None] | None = None
    samples: np.ndarray | None = None


class State:
    """The document's cells as the walk holds them: chunks of ``chunk`` frames (``[ch,
    bins, frames]``, as the walk reads and writes them: no transposing), taken from
    ``base(frame0, frame1)`` (``[ch, bins, frames]``) the first time touched."""

    def __init__(self, base, chunk: int, n_frames: int):
        self.base, self.chunk, self.n_frames, self.chunks = base, chunk, n_frames, {}

    def _parts(self, rect: Rect):
        for k in range(rect.frame0 // self.chunk, -(-rect.frame1 // self.chunk)):
            if k not in self.chunks:
                self.chunks[k] = self.base(k * self.chunk,
                                           min(self.n_frames, (k + 1) * self.chunk))
            lo = max(rect.frame0, k * self.chunk)
            hi = min(rect.frame1, (k + 1) * self.chunk)
            yield self.chunks[k], slice(lo - k * self.chunk, hi - k * self.chunk), \
                slice(lo - rect.frame0, hi - rect.frame0)

    def read(self, rect: Rect, chans: slice) -> torch.Tensor:
        """A copy of the cells over ``rect`` on ``chans``, ``[ch, bins, frames]``."""
        return torch.cat([c[chans, rect.bins, here] for c, here, _ in self._parts(rect)], 2)

    def write(self, rect: Rect, chans: slice, cells: torch.Tensor) -> None:
        for c, here, there in self._parts(rect):
            c[chans, rect.bins, here] = cells[:, :, there]


def predicted(before: torch.Tensor, whole: torch.Tensor, transform, rect: Rect,
              runs: list[tuple[int, int]] | None) -> torch.Tensor:
    """A repair's after-cells over ``rect`` from its ``before`` cells: the analysis of its
    change (``whole``, over the whole document) added as the repair added it
    (app.session.repairs), on the ``runs`` of frames it reaches (None: every frame)."""
    if runs is None:
        return before + transform.forward_frames(whole, rect.frame0, rect.frame1)[:, rect.bins]
    guess = before
    for fa, fb in runs:
        lo, hi = max(fa, rect.frame0), min(fb, rect.frame1)
        if (lo, hi) == (rect.frame0, rect.frame1):  # a dense change: the whole patch
            return predicted(before, whole, transform, rect, None)
        if lo < hi:
            guess = before.clone() if guess is before else guess
            part = slice(lo - rect.frame0, hi - rect.frame0)
            guess[:, :, part] = before[:, :, part] + \
                transform.forward_frames(whole, lo, hi)[:, rect.bins]
    return guess


def reach(samples: np.ndarray, sample0: int, transform, length: int) -> list[tuple[int, int]]:
    """The runs ``[f0, f1)`` of the frames whose window holds a nonzero sample of a change
    (``samples`` from ``sample0``), found a block of REACH_BLOCK samples at a time (a run
    spans the blocks from its first changed sample to its last)."""
    changed = samples.any(0)
    blocks = np.zeros(-(-len(changed) // REACH_BLOCK) * REACH_BLOCK, bool)
    blocks[:len(changed)] = changed
    blocks = blocks.reshape(-1, REACH_BLOCK)
    hit = np.r_[False, blocks.any(1), False]
    starts, ends = np.flatnonzero(hit[1:] & ~hit[:-1]), np.flatnonzero(hit[:-1] & ~hit[1:])
    runs = []
    for b0, b1 in zip(starts.tolist(), ends.tolist(), strict=True):
        first = b0 * REACH_BLOCK + int(blocks[b0].argmax())
        last = (b1 - 1) * REACH_BLOCK + REACH_BLOCK - 1 - int(blocks[b1 - 1][::-1].argmax())
        f0, f1 = transform.frames_needed(sample0 + first, sample0 + last + 1, length)
        if runs and f0 <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(f1, runs[-1][1]))
        else:
            runs.append((f0, f1))
    return runs


def _whole(step: Planned, length: int, device, transform, sparse: bool):
    """``step``'s change over the whole document (zeros elsewhere), as the repair
    analysed it, and the runs of frames it reaches (None: all, as version 6 walks)."""
    change = step.change
    samples = change.samples() if step.samples is None else step.samples
    step.samples = None
    whole = torch.zeros((samples.shape[0], length), dtype=torch.float32)
    whole[:, change.sample0:change.sample0 + samples.shape[1]] = torch.from_numpy(samples)
    runs = reach(samples, change.sample0, transform, length) if sparse else None
    return whole.to(device), runs


def walk(steps: list[Planned], index: int, edited: list[Rect], true: list | None, code, *,
         state: State, transform, length: int, device,
         sparse: bool = True) -> tuple[list[list], list]:
    """Take the walk (see the module's docstring) over ``steps`` (``index`` of them done)
    and the ``edited`` rects (``true``: their cells when writing, None when opening);
    ``code(predicted, true) -> true`` at each block (``true`` None when opening);
    ``sparse``: a change analysed over the frames it reaches alone (version 7).
    Returns each step's [(before, after)] and each edited rect's cells."""
    patches: list[list] = [[] for _ in steps]

    def go(i: int) -> None:
        step, done = steps[i], i < index
        chans = slice(None) if step.channel is None else slice(step.channel, step.channel + 1)
        whole, runs = (None, None) if step.change is None else \
            _whole(step, length, device, transform, sparse)
        for j, rect in enumerate(step.rects):
            before = code(state.read(rect, chans), step.before and step.before[j])
            guess = before if whole is None else predicted(before, whole, transform, rect, runs)
            after = None if done else code(guess, step.after and step.after[j])
            state.write(rect, chans, guess if done else after)
            patches[i].append((before, after))

    for i in range(index):
        go(i)
    cells = []
    for k, rect in enumerate(edited):
        cells.append(code(state.read(rect, slice(None)), true and true[k]))
        state.write(rect, slice(None), cells[-1])
    for i in range(index, len(steps)):
        go(i)
    return patches, cells


class Encoder:
    """``code`` when writing: keeps the mask and the cells that differ."""

    def __init__(self):
        self.packer = zlib.compressobj(1)
        self.mask, self.carry, self.values = [], np.zeros(0, bool), []

    def __call__(self, predicted: torch.Tensor, true: torch.Tensor) -> torch.Tensor:
        true = true.to(predicted.device)
        differ = (predicted.contiguous().view(torch.int64) !=
                  true.contiguous().view(torch.int64)).reshape(-1)
        self.values.append(torch.view_as_real(true.reshape(-1)[differ]).cpu().numpy())
        bits = np.concatenate([self.carry, differ.cpu().numpy()])
        whole = len(bits) // 8 * 8
        self.mask.append(self.packer.compress(np.packbits(bits[:whole]).tobytes()))
        self.carry = bits[whole:]
        return true

    def arrays(self) -> dict[str, np.ndarray]:
        tail = self.packer.compress(np.packbits(self.carry).tobytes()) + self.packer.flush()
        return {"cells_mask": np.frombuffer(b"".join(self.mask) + tail, np.uint8),
                "cells_values": np.concatenate(self.values) if self.values
                else np.zeros((0, 2), np.float32)}


def cell_count(channels: int, edited: list, steps: list[tuple], index: int) -> int:
    """The cells a project's mask covers: those of the ``edited`` rects and of each step's
    patches (``steps``: (channel, rects)), twice for the undone ones (rects: Rect or
    [bin0, bin1, frame0, frame1])."""
    def area(r) -> int:
        b0, b1, f0, f1 = (r.bin0, r.bin1, r.frame0, r.frame1) if isinstance(r, Rect) else r
        return (b1 - b0) * (f1 - f0)

    return channels * sum(area(r) for r in edited) + sum(
        area(r) * (channels if channel is None else 1) * (1 + (i >= index))
        for i, (channel, rects) in enumerate(steps) for r in rects)


def unpacked_mask(data: np.ndarray, cells: int) -> np.ndarray | None:
    """The packed mask of ``cells`` bits deflated in ``data``; None if it is not that."""
    size = -(-cells // 8)
    inflater = zlib.decompressobj()
    try:
        packed = inflater.decompress(data.tobytes(), size + 1)
    except zlib.error:
        return None
    if len(packed) != size or not inflater.eof or inflater.unconsumed_tail:
        return None
    return np.frombuffer(packed, np.uint8)


class Decoder:
    """``code`` when opening: puts the stored cells over the predicted ones."""

    def __init__(self, packed: np.ndarray, values: np.ndarray):
        self.packed, self.values, self.bit, self.row = packed, values, 0, 0

    def __call__(self, predicted: torch.Tensor, _true=None) -> torch.Tensor:
        n, first = predicted.numel(), self.bit // 8
        bits = np.unpackbits(self.packed[first:(self.bit + n + 7) // 8])
        differ = bits[self.bit - 8 * first:self.bit - 8 * first + n].astype(bool)
        self.bit += n
        count = int(differ.sum())
        if not count:
            return predicted
        cells = torch.view_as_complex(torch.from_numpy(
            np.ascontiguousarray(self.values[self.row:self.row + count], np.float32)))
        self.row += count
        flat = predicted.reshape(-1).clone()
        flat[torch.from_numpy(differ).to(flat.device)] = cells.to(flat.device)
        return flat.reshape(predicted.shape)


def encode(steps: list[Planned], index: int, edited: list[Rect], cells: list[torch.Tensor], *,
           samples: np.ndarray, transform, device) -> dict[str, np.ndarray]:
    """The arrays ``cells_mask`` and ``cells_values`` of a project whose document is the
    analysis of ``samples`` (its content, ``[ch, n]``) with ``transform`` on ``device``."""
    x = torch.from_numpy(samples).to(device)
    size = transform.analysis_chunk(samples.shape[0])  # as a document analyses its content

    def base(f0: int, f1: int) -> torch.Tensor:
        return torch.cat([transform.forward_frames(x, a, min(f1, a + size))
                          for a in range(f0, f1, size)], -1)

    state = State(base, STATE_CHUNKS * size, transform.n_frames(samples.shape[1]))
    coder = Encoder()
    walk(steps, index, edited, cells, coder, state=state, transform=transform,
         length=samples.shape[1], device=device)
    return coder.arrays()


def decode(steps: list[Planned], index: int, edited: list[Rect],
           arrays: dict[str, np.ndarray], doc, *,
           version: int) -> tuple[list[list], list[torch.Tensor]]:
    """Each step's [(before, after)] and each edited rect's cells of a checked project
    (of ``version``) whose document ``doc`` is as analysed (nothing written to it yet)."""
    cells = cell_count(doc.channels, edited, [(s.channel, s.rects) for s in steps], index)
    state = State(lambda f0, f1: doc.read_complex(Rect(0, doc.n_bins, f0, f1)),
                  STATE_CHUNKS * doc.transform.analysis_chunk(doc.channels), doc.n_frames)
    coder = Decoder(unpacked_mask(arrays["cells_mask"], cells), arrays["cells_values"])
    return walk(steps, index, edited, None, coder, state=state, transform=doc.transform,
                length=doc.length, device=doc.device, sparse=version >= 7)
