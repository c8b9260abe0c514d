"""Running medians along time or frequency for the unmix methods, as a remedian:
``stages`` rounds of a median of three, each three times as far apart (1, 3, 9,
...), approximate a running median of ``3**stages`` cells. Elementwise minima
and maxima over shifted views: on a 60 s stereo STFT (10.6 M cells) a 27-cell
median took 2.6 s where torch's sort-based median of unfolded windows took 24.7 s
and scipy.ndimage.median_filter 24.0 s (2-core CPU, load 7)."""

import math

import torch


def stages_for(cells: float) -> int:
    """The rounds whose remedian spans about ``cells`` cells (at least one)."""
    return max(1, round(math.log(max(cells, 1.0), 3)))


def remedian(x: torch.Tensor, stages: int, dim: int) -> torch.Tensor:
    """A running median of ``3**stages`` cells of ``x`` along ``dim`` (the edges
    repeated beyond the ends)."""
    gap = 1
    for _ in range(stages):
        before, after = shifted(x, -gap, dim), shifted(x, gap, dim)
        low = torch.minimum(before, x)
        high = torch.maximum(before, x)
        x = torch.maximum(low, torch.minimum(high, after))
        gap *= 3
    return x


def shifted(x: torch.Tensor, by: int, dim: int) -> torch.Tensor:
    """``y[i] = x[clamp(i + by)]`` along ``dim``."""
    n = x.shape[dim]
    by = max(-n + 1, min(n - 1, by))
    if by == 0:
        return x
    if by > 0:
        edge = x.narrow(dim, n - 1, 1).expand_as(x.narrow(dim, 0, by))
        return torch.cat([x.narrow(dim, by, n - by), edge], dim)
    edge = x.narrow(dim, 0, 1).expand_as(x.narrow(dim, 0, -by))
    return torch.cat([edge, x.narrow(dim, 0, n + by)], dim)


def reach(stages: int) -> int:
    """How far a remedian of ``stages`` rounds looks either side of a cell."""
    return (3 ** stages - 1) // 2
