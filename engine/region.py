"""Rectangles of bins x frames: the unit of every edit, render and resynthesis."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Rect:
    """Half-open ``[bin0, bin1) x [frame0, frame1)``."""

    bin0: int
    bin1: int
    frame0: int
    frame1: int

    @property
    def empty(self) -> bool:
        return self.bin1 <= self.bin0 or self.frame1 <= self.frame0

    @property
    def shape(self) -> tuple[int, int]:
        return max(0, self.bin1 - self.bin0), max(0, self.frame1 - self.frame0)

    @property
    def bins(self) -> slice:
        return slice(self.bin0, self.bin1)

    @property
    def frames(self) -> slice:
        return slice(self.frame0, self.frame1)

    def union(self, other: "Rect | None") -> "Rect":
        if other is None or other.empty:
            return self
        if self.empty:
            return other
        return Rect(min(self.bin0, other.bin0), max(self.bin1, other.bin1),
                    min(self.frame0, other.frame0), max(self.frame1, other.frame1))

    def intersect(self, other: "Rect") -> "Rect":
        return Rect(max(self.bin0, other.bin0), min(self.bin1, other.bin1),
                    max(self.frame0, other.frame0), min(self.frame1, other.frame1))

    def clip(self, n_bins: int, n_frames: int) -> "Rect":
        return self.intersect(Rect(0, n_bins, 0, n_frames))

    def overlap(self, other: "Rect") -> tuple[tuple[slice, slice], tuple[slice, slice]]:
        """Index pairs (into a ``[bins, frames]`` array of this rect, into one of
        ``other``) of the cells both share."""
        both = self.intersect(other)
        return ((slice(both.bin0 - self.bin0, both.bin1 - self.bin0),
                 slice(both.frame0 - self.frame0, both.frame1 - self.frame0)),
                (slice(both.bin0 - other.bin0, both.bin1 - other.bin0),
                 slice(both.frame0 - other.frame0, both.frame1 - other.frame0)))

    def tiles(self, size: int):
        """Keys ``(bin // size, frame // size)`` of the size x size tiles this rect touches."""
        for tb in range(self.bin0 // size, (self.bin1 - 1) // size + 1):
            for tf in range(self.frame0 // size, (self.frame1 - 1) // size + 1):
                yield tb, tf

    def grow(self, bins: int, frames: int) -> "Rect":
        return Rect(self.bin0 - bins, self.bin1 + bins, self.frame0 - frames, self.frame1 + frames)


def merged_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Half-open spans ``[a, b)`` sorted and joined where they overlap or touch."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        elif b > a:
            merged.append((a, b))
    return merged
