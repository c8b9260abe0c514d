"""NMF of a magnitude spectrogram (Kullback-Leibler divergence, multiplicative
updates; Lee and Seung 2001) into components whose shares of each cell are their
part of the model there (the posterior of PLCA).

Paint to separate: each source (a layer) is one component, learnt blind first,
then given to the source whose marks it explains the largest share of (the
largest first), and learnt again with the other sources' parts of the model
weighed down where the user marked a cell as a source's (``Lambda_s`` per source,
near zero where another source was marked): the model is ``X = sum_s
Lambda_s (W_s H_s)`` and the updates ``W_s <- W_s ((Lambda_s V / X) H_s^T) /
(Lambda_s H_s^T)``, ``H_s <- H_s (W_s^T (Lambda_s V / X)) / (W_s^T Lambda_s)``
lower its divergence from the magnitude, as posterior regularisation does in ISSE
(Bryan, Mysore and Wang 2014). Without marks every ``Lambda`` is one: plain NMF.
On bench_unmix's six mixtures, two or four components a source learnt more of
speech and less of a chord under hits (made worse by up to 2.5 dB): one a source
made none worse.

Speed: the spectra ``W`` are learnt on frames averaged ``POOL`` at a time, then the
activations ``H`` refined on every frame (``REFINE`` updates of ``H`` alone)."""

import torch

from engine.progress import step

ITERATIONS = 80  # updates on the pooled frames (blind, then steered by the marks)
STEERED = 60  # updates under the marks' weights
REFINE = 10  # updates of the activations on every frame
POOL = 4  # frames averaged for learning the spectra
FLOOR = 1e-12
SEED = 0
MARKED_OTHER = 1e-3  # a source's weight where another source is marked


class Model:
    """A fitted NMF: ``w`` ``[bins, K]``, ``h`` ``[K, ch * frames]`` (the channels'
    frames one after another), component k being source k, and each source's weights
    (``lam``, None without marks)."""

    def __init__(self, mag: torch.Tensor, sources: int, *,
                 marks: torch.Tensor | None = None, progress=None, cancel=None):
        """``mag`` ``[ch, frames, bins]``, one component for each of ``sources``;
        ``marks`` ``[sources, ch, frames, bins]`` in [0, 1] or None."""
        self.channels, self.frames, bins = mag.shape
        g = torch.Generator().manual_seed(SEED)
        pooled = columns(pooled_frames(mag))
        scale = float(pooled.mean()) ** 0.5 + FLOOR
        self.w = (torch.rand((bins, sources), generator=g) + 0.1) * scale
        self.h = (torch.rand((sources, pooled.shape[1]), generator=g) + 0.1) * scale
        total = ITERATIONS + REFINE + (STEERED if marks is not None else 0)
        done = 0
        for _ in range(ITERATIONS):
            step(done / total, progress, cancel)
            done += 1
            self._update(pooled, None, learn_w=True)
        lam = None
        if marks is not None:
            own = torch.stack([columns(pooled_frames(m)) for m in marks])
            order = self._owners(pooled, own).argsort()  # component of source 0, 1, ...
            self.w, self.h = self.w[:, order], self.h[order]
            lam = _weights(own)
            for _ in range(STEERED):
                step(done / total, progress, cancel)
                done += 1
                self._update(pooled, lam, learn_w=True)
        del pooled, lam
        self.h = unpooled(self.h, self.channels, self.frames)
        self.lam = None if marks is None else _weights(torch.stack([columns(m) for m in marks]))
        v = columns(mag)
        for _ in range(REFINE):
            step(done / total, progress, cancel)
            done += 1
            self._update(v, self.lam, learn_w=False)

    def _owners(self, v: torch.Tensor, marks: torch.Tensor) -> torch.Tensor:
        """The source each blind component is given: pairs of a component and the
        source whose marks it explains the largest share of, the largest first."""
        model = (self.w @ self.h).clamp_(min=FLOOR)
        ratio = v / model
        share = torch.stack([((self.w[:, [c]] @ self.h[[c]]) * ratio * m).sum() /
                             (m * v).sum().clamp(min=FLOOR)
                             for m in marks for c in range(self.w.shape[1])])
        share = share.reshape(len(marks), self.w.shape[1])
        owner = torch.zeros(len(marks), dtype=torch.long)
        for _ in range(len(marks)):
            s, c = divmod(int(share.argmax()), share.shape[1])
            owner[c] = s
            share[s, :], share[:, c] = -1, -1
        return owner

    def _update(self, v: torch.Tensor, lam: torch.Tensor | None, *, learn_w: bool) -> None:
        if lam is None:  # plain NMF: one model, the usual updates
            if learn_w:
                ratio = torch.div(v, (self.w @ self.h).clamp_(min=FLOOR))
                self.w *= (ratio @ self.h.T) / self.h.sum(1)[None].clamp(min=FLOOR)
            ratio = torch.div(v, (self.w @ self.h).clamp_(min=FLOOR))
            self.h *= (self.w.T @ ratio) / self.w.sum(0)[:, None].clamp(min=FLOOR)
            return
        total = None
        for s in range(len(lam)):
            part = torch.outer(self.w[:, s], self.h[s]).mul_(lam[s])
            total = part if total is None else total.add_(part)
        ratio = torch.div(v, total.clamp_(min=FLOOR))
        for s in range(len(lam)):
            r = lam[s] * ratio
            if learn_w:
                self.w[:, s] *= (r @ self.h[s]) / (lam[s] @ self.h[s]).clamp_(min=FLOOR)
            self.h[s] *= (self.w[:, s] @ r) / (self.w[:, s] @ lam[s]).clamp_(min=FLOOR)

    def shares(self, f0: int, f1: int) -> list[torch.Tensor]:
        """Each source's share of frames ``[f0, f1)``: ``[ch, f1 - f0, bins]`` each."""
        out = []
        for s in range(self.w.shape[1]):
            per_channel = []
            for c in range(self.channels):
                cols = slice(c * self.frames + f0, c * self.frames + f1)
                part = torch.outer(self.w[:, s], self.h[s, cols])
                per_channel.append((part if self.lam is None else
                                    part.mul_(self.lam[s][:, cols])).T)
            out.append(torch.stack(per_channel))
        total = out[0].clone()
        for p in out[1:]:
            total.add_(p)
        total.clamp_(min=FLOOR)
        return [p.div_(total) for p in out]

    def order_by_centroid(self) -> None:
        """Number the sources from the lowest spectral centroid up."""
        bins = torch.arange(self.w.shape[0], dtype=self.w.dtype)[:, None]
        centroid = (self.w * bins).sum(0) / self.w.sum(0).clamp(min=FLOOR)
        order = torch.argsort(centroid)
        self.w, self.h = self.w[:, order], self.h[order]


def _weights(marks: torch.Tensor) -> torch.Tensor:
    """Each source's weight at each cell from the marks ``[sources, ...]``: near zero
    where another source is marked."""
    out = []
    for s in range(marks.shape[0]):
        others = torch.cat([marks[:s], marks[s + 1:]]).amax(0)
        out.append(1 - (1 - MARKED_OTHER) * others)
    return torch.stack(out)


def columns(x: torch.Tensor) -> torch.Tensor:
    """``[ch, frames, bins]`` as ``[bins, ch * frames]``."""
    return x.permute(2, 0, 1).reshape(x.shape[2], -1)


def pooled_frames(x: torch.Tensor) -> torch.Tensor:
    """``[ch, frames, bins]`` averaged ``POOL`` frames at a time (the last group may be
    shorter): ``[ch, ceil(frames / POOL), bins]``."""
    ch, frames, bins = x.shape
    groups = -(-frames // POOL)
    padded = torch.nn.functional.pad(x, (0, 0, 0, groups * POOL - frames))
    counts = torch.full((groups,), float(POOL))
    counts[-1] = frames - (groups - 1) * POOL
    return padded.reshape(ch, groups, POOL, bins).sum(2) / counts[None, :, None]


def unpooled(h: torch.Tensor, channels: int, frames: int) -> torch.Tensor:
    """Activations of pooled frames ``[K, ch * groups]`` repeated onto every frame."""
    k = h.shape[0]
    per = h.reshape(k, channels, -1).repeat_interleave(POOL, dim=2)[:, :, :frames]
    return per.reshape(k, channels * frames).contiguous()
