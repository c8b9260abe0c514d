"""The loudest magnitude of every block of ``BLOCK`` frames of a document, kept for
zoomed-out views: a whole-file overview of a complex store would otherwise turn
every coefficient into a magnitude (a 10-minute stereo file: 106 M cells, ~0.5 s)
each time it is drawn. Built on first use (1/16 of the store's memory, or ahead
of time in a worker: :meth:`BlockMaxima.get`), redone only for the bins and
blocks edits wrote since."""

import torch

from engine.coeffs import magnitude

BLOCK = 8  # frames per block: the block reduction a 1920-pixel overview of 10 minutes uses
CHUNK_BLOCKS = 512  # blocks computed at a time


class BlockMaxima:
    def __init__(self):
        self._blocks: torch.Tensor | None = None
        self._stale: list[tuple[int, int, int, int]] = []  # frames and bins written since

    def invalidate(self, frame0: int, frame1: int, *, bin0: int, bin1: int) -> None:
        if self._blocks is not None:
            self._stale.append((frame0, frame1, bin0, bin1))

    def adopt(self, other: "BlockMaxima", frames: int, store: torch.Tensor) -> None:
        """Take ``other``'s blocks of the first ``frames`` frames, whose cells ``store``
        holds too (a time edit's copied frames); the rest is computed when asked."""
        whole = frames // BLOCK
        if other._blocks is None or other._stale or whole == 0:
            return
        count = -(-store.shape[1] // BLOCK)
        self._blocks = torch.empty(store.shape[0], count, store.shape[2], device=store.device)
        self._blocks[:, :whole] = other._blocks[:, :whole]
        self._stale = [(whole * BLOCK, store.shape[1], 0, store.shape[2])]

    def get(self, store: torch.Tensor) -> torch.Tensor:
        """``[ch, ceil(frames / BLOCK), bins]`` float32 of the ``[ch, frames, bins]``
        complex ``store``, up to date."""
        frames = store.shape[1]
        count = -(-frames // BLOCK)
        if self._blocks is None:
            self._blocks = torch.empty(store.shape[0], count, store.shape[2], device=store.device)
            self._stale = [(0, frames, 0, store.shape[2])]
        for f0, f1, k0, k1 in self._stale:
            for b0 in range(f0 // BLOCK, -(-f1 // BLOCK), CHUNK_BLOCKS):
                b1 = min(count, b0 + CHUNK_BLOCKS, -(-f1 // BLOCK))
                cells = magnitude(store[:, b0 * BLOCK:min(frames, b1 * BLOCK), k0:k1])
                self._blocks[:, b0:b1, k0:k1] = _block_max(cells)
        self._stale = []
        return self._blocks


def _block_max(x: torch.Tensor) -> torch.Tensor:
    """Max over blocks of BLOCK frames along dim 1 (the last may be short)."""
    whole = x.shape[1] // BLOCK * BLOCK
    out = x[:, :whole].unflatten(1, (-1, BLOCK)).amax(2)
    if whole < x.shape[1]:
        out = torch.cat([out, x[:, whole:].amax(1, keepdim=True)], 1)
    return out
