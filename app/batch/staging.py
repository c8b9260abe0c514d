"""Batches to a CUDA device and back without the host waiting on it.

Uploads go through two pinned host buffers used in turn, each reused once the
device has read it (an event says when), copied on a stream of their own that
the computing stream waits for, so the copy of one batch overlaps the compute of
the one before. Results come back by a non-blocking copy into pinned memory with
an event the writer waits for, so the thread feeding the device never does. On
the CPU both are plain hand-overs. (Written for CUDA; tested on the CPU only:
no GPU was lent while it was written.)
"""

import numpy as np
import torch


class Staging:
    def __init__(self, device: torch.device):
        self.device = device
        self.cuda = device.type == "cuda"
        self.pinned: list[torch.Tensor] = []
        self.read: list[torch.cuda.Event | None] = [None, None]
        self.turn = 0
        self.stream = torch.cuda.Stream(device) if self.cuda else None

    def upload(self, batch: np.ndarray) -> torch.Tensor:
        """``batch`` (float32) on the device."""
        x = torch.from_numpy(batch)
        if not self.cuda:
            return x
        self.turn = 1 - self.turn
        if self.read[self.turn] is not None:
            self.read[self.turn].synchronize()  # the device has copied this buffer out
        if not self.pinned or self.pinned[0].shape[0] < len(x) or \
                self.pinned[0].shape[1:] != x.shape[1:]:
            self.pinned = [torch.empty(x.shape, pin_memory=True) for _ in range(2)]
        host = self.pinned[self.turn][:len(x)]
        host.copy_(x)
        with torch.cuda.stream(self.stream):
            out = host.to(self.device, non_blocking=True)
            self.read[self.turn] = torch.cuda.Event()
            self.read[self.turn].record(self.stream)
        compute = torch.cuda.current_stream(self.device)
        compute.wait_stream(self.stream)
        out.record_stream(compute)
        return out

    def download(self, result: torch.Tensor) -> tuple[torch.Tensor, torch.cuda.Event | None]:
        """``result`` on the host and the event to wait for before reading it (None on
        the CPU)."""
        if not self.cuda:
            return result, None
        host = torch.empty(result.shape, dtype=result.dtype, pin_memory=True)
        host.copy_(result, non_blocking=True)
        done = torch.cuda.Event()
        done.record(torch.cuda.current_stream(self.device))
        return host, done
