"""Marks painted on the parts of an NMF unmix (paint to separate, app.session.unmixing):
checked as hostile input, and rasterized onto the document's grid.

A mark is ``{"part": i, "points": [[seconds, Hz], ...], "radius_ms": R,
"radius_hz": R}``: the cells within the radii of its path belong to part ``i``. Each
segment of a path covers a capsule (the cells within an ellipse of the radii of a
point of the segment), computed at once over the cells of its bounding box within
the document: a segment reaching far past the document costs only the cells it
covers in it.
"""

import math

import torch

from engine.errors import ParameterError
from engine.model.document import Document

MAX_MARKS = 1000
MAX_MARK_POINTS = 10_000
MAX_SECONDS = 1e6  # a point's time at most (11 days): far past any document
MAX_HZ = 1e6  # a point's frequency at most: far past any Nyquist frequency
RADIUS_MS = (1.0, 5000.0)
RADIUS_HZ = (1.0, 20000.0)


def rasterized(doc: Document, marks: list[dict], parts: int) -> torch.Tensor | None:
    """The marks as each part's weight at each cell, ``[parts, ch, frames, bins]``
    (None without marks)."""
    if not marks:
        return None
    t = doc.transform
    out = torch.zeros((parts, doc.n_frames, doc.n_bins), device=doc.device)
    seconds = t.seconds_of(torch.arange(doc.n_frames, dtype=torch.float64))
    hz = t.bin_frequencies().double().cpu()
    for mark in marks:
        rt, rf = mark["radius_ms"] / 1000, mark["radius_hz"]
        for start, end in _segments(mark["points"]):
            (f0, f1), (b0, b1) = (_span(axis, start[k], end[k], r) for axis, k, r in
                                  ((seconds, 0, rt), (hz, 1, rf)))
            if f0 >= f1 or b0 >= b1:
                continue
            inside = _capsule(seconds[f0:f1], hz[b0:b1], start, end, (rt, rf))
            into = out[mark["part"], f0:f1, b0:b1]
            torch.maximum(into, inside.float().to(out.device), out=into)
    return out[:, None].expand(parts, doc.channels, doc.n_frames, doc.n_bins)


def _segments(points: list) -> list:
    return list(zip(points, points[1:], strict=False)) if len(points) > 1 else \
        [(points[0], points[0])]


def _span(axis: torch.Tensor, a: float, b: float, radius: float) -> tuple[int, int]:
    """The indices of the ascending ``axis`` within ``radius`` of ``a`` to ``b``."""
    low, high = min(a, b) - radius, max(a, b) + radius
    return (int(torch.searchsorted(axis, low)),
            int(torch.searchsorted(axis, high, right=True)))


def _capsule(seconds: torch.Tensor, hz: torch.Tensor, start, end, radii) -> torch.Tensor:
    """``[frames, bins]``: whether each cell lies within the radii of a point of the
    segment from ``start`` to ``end`` (each [seconds, Hz])."""
    rt, rf = radii
    x = ((seconds - start[0]) / rt)[:, None]
    y = ((hz - start[1]) / rf)[None]
    dx, dy = (end[0] - start[0]) / rt, (end[1] - start[1]) / rf
    length = dx * dx + dy * dy
    u = ((x * dx + y * dy) / length).clamp(0, 1) if length > 0 else torch.zeros_like(x * y)
    return (x - u * dx) ** 2 + (y - u * dy) ** 2 <= 1


def checked_marks(marks, parts: int, where: str) -> list[dict]:
    """Marks (decoded JSON, or as :func:`unmix` takes them) checked: a list of objects
    with a part (0 to ``parts`` - 1), points (finite seconds and Hz, not negative) and
    radii; plain data, to keep with the masks."""
    if not isinstance(marks, list) or len(marks) > MAX_MARKS:
        raise ParameterError(f"{where}: expected a list of up to {MAX_MARKS} marks")
    out = []
    for i, mark in enumerate(marks):
        at = f"{where}[{i}]"
        if not isinstance(mark, dict) or set(mark) - {"part", "points", "radius_ms",
                                                       "radius_hz"}:
            raise ParameterError(f"{at}: a mark is an object with part, points, radius_ms and "
                                 "radius_hz")
        part = mark.get("part")
        if type(part) is not int or not 0 <= part < parts:
            raise ParameterError(f"{at}.part: {part!r} is not a part of this unmix (0 to "
                                 f"{parts - 1})")
        points = mark.get("points")
        if not isinstance(points, list) or not 0 < len(points) <= MAX_MARK_POINTS or not all(
                isinstance(p, list | tuple) and len(p) == 2 and all(
                    isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                    and 0 <= v <= high for v, high in zip(p, (MAX_SECONDS, MAX_HZ), strict=True))
                for p in points):
            raise ParameterError(f"{at}.points: expected 1 to {MAX_MARK_POINTS} [seconds, Hz] "
                                 f"pairs, seconds 0 to {MAX_SECONDS:.0e} and Hz 0 to "
                                 f"{MAX_HZ:.0e}")
        radii = {}
        for key, (low, high), default in (("radius_ms", RADIUS_MS, 50.0),
                                          ("radius_hz", RADIUS_HZ, 100.0)):
            value = mark.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                    low <= value <= high):
                raise ParameterError(f"{at}.{key}: {value!r} is outside {low:g} to {high:g}")
            radii[key] = float(value)
        out.append({"part": part, "points": [[float(t), float(f)] for t, f in points],
                    **radii})
    return out
