"""The loudest magnitude of every block of ``BLOCK`` frames of a document, kept for
zoomed-out views: a whole-file overview of a complex store would otherwise turn
every coefficient into a magnitude (a 10-minute stereo file: 106 M cells, ~0.5 s)
each time it is drawn. Built on first use (1/16 of the store's memory, or ahead
of time in a worker: :meth:`BlockMaxima.get`), for the frames a view shows or all
of them, redone only for the bins and blocks edits wrote since; a time edit's
document takes the blocks of the cells it shares (:meth:`BlockMaxima.adopt`)."""

import threading

import torch

from engine.coeffs import magnitude_of

BLOCK = 8  # frames per block: the block reduction a 1920-pixel overview of 10 minutes uses
CHUNK_BLOCKS = 512  # blocks computed at a time


class BlockMaxima:
    def __init__(self):
        self._blocks: torch.Tensor | None = None
        self._stale: list[tuple[int, int, int, int]] = []  # frames and bins written since
        self._lock = threading.RLock()  # the view's reads and a worker's (or turns') building

    def invalidate(self, frame0: int, frame1: int, *, bin0: int, bin1: int) -> None:
        with self._lock:
            if self._blocks is not None:
                self._stale.append((frame0, frame1, bin0, bin1))

    def adopt(self, other: "BlockMaxima", shared, store) -> None:
        """Take ``other``'s blocks where ``store`` holds ``other``'s cells moved by whole
        blocks (a time edit's shared frames: ``shared`` holds each part's ``start``,
        ``stop`` and ``source_start``, engine.model.frame_store.Shared); the rest is
        computed when asked."""
        if other._blocks is None or other._stale:
            return
        count = -(-store.shape[1] // BLOCK)
        blocks = torch.empty(store.shape[0], count, store.shape[2], device=store.device)
        taken = []
        for part in shared:
            if (part.start - part.source_start) % BLOCK == 0:
                b0, b1 = -(-part.start // BLOCK), part.stop // BLOCK  # whole blocks
                moved = (part.source_start - part.start) // BLOCK
                if b1 > b0:
                    blocks[:, b0:b1] = other._blocks[:, b0 + moved:b1 + moved]
                    taken.append((b0, b1))
        if not taken:
            return
        self._blocks, self._stale, at = blocks, [], 0
        for b0, b1 in sorted(taken) + [(count, count)]:
            if b0 > at:
                self._stale.append((at * BLOCK, min(store.shape[1], b0 * BLOCK), 0,
                                    store.shape[2]))
            at = max(at, b1)

    def get(self, store: torch.Tensor, frames: tuple[int, int] | None = None
            ) -> torch.Tensor:
        """``[ch, ceil(frames / BLOCK), bins]`` float32 of the ``[ch, frames, bins]``
        complex ``store``, up to date over ``frames`` (a range; None: all of them),
        perhaps not yet elsewhere."""
        with self._lock:
            n = store.shape[1]
            if self._blocks is None:
                self._blocks = torch.empty(store.shape[0], -(-n // BLOCK), store.shape[2],
                                           device=store.device)
                self._stale = [(0, n, 0, store.shape[2])]
            lo, hi = (0, n) if frames is None else frames
            lo, hi = max(0, lo) // BLOCK * BLOCK, min(n, -(-hi // BLOCK) * BLOCK)
            left = []
            for f0, f1, k0, k1 in self._stale:
                a, b = max(f0, lo), min(f1, hi)
                if a >= b:
                    left.append((f0, f1, k0, k1))
                    continue
                self._compute(store, a, b, k0, k1)
                left += ([(f0, a, k0, k1)] if f0 < a else []) + \
                    ([(b, f1, k0, k1)] if b < f1 else [])
            self._stale = left
            return self._blocks

    def next_stale(self, frames: int) -> tuple[int, int] | None:
        """Up to ``frames`` frames whose blocks are not up to date (the first such), or
        None: all are (or none were built)."""
        with self._lock:
            if self._blocks is None or not self._stale:
                return None
            f0, f1 = self._stale[0][:2]
            return f0, min(f1, f0 + frames)

    def _compute(self, store, f0: int, f1: int, k0: int, k1: int) -> None:
        n, count = store.shape[1], self._blocks.shape[1]
        for b0 in range(f0 // BLOCK, -(-f1 // BLOCK), CHUNK_BLOCKS):
            b1 = min(count, b0 + CHUNK_BLOCKS, -(-f1 // BLOCK))
            cells = magnitude_of(store, (slice(None), slice(b0 * BLOCK, min(n, b1 * BLOCK)),
                                         slice(k0, k1)))
            self._blocks[:, b0:b1, k0:k1] = _block_max(cells)


def _block_max(x: torch.Tensor) -> torch.Tensor:
    """Max over blocks of BLOCK frames along dim 1 (the last may be short)."""
    whole = x.shape[1] // BLOCK * BLOCK
    out = x[:, :whole].unflatten(1, (-1, BLOCK)).amax(2)
    if whole < x.shape[1]:
        out = torch.cat([out, x[:, whole:].amax(1, keepdim=True)], 1)
    return out
