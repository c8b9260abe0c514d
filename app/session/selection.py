"""Selections beyond rectangles: a rectangle, a free-form lasso, or a harmonic
selection (a fundamental's path plus its partials, each a band some cents
wide). Any of them can be feathered (soft edges) and inverted. In physical
units (seconds, Hz), so a selection fits any analysis; a selection becomes a
weight per cell (``mask``) for playing it alone or filling it with a brush."""

import math
from collections.abc import Generator
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from brushes.dab import Dab
from brushes.locality import Heard
from brushes.locality.gate import BandGate
from brushes.path import StrokePoint, path_length
from brushes.registry import get_brush
from brushes.stroke import Stroke
from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Step
from engine.progress import drain
from engine.region import Rect

KINDS = ("rect", "lasso", "harmonic")
MAX_POINTS = 20000  # a lasso or a fundamental's path
PARTIALS_RANGE = (1, 64)
WIDTH_RANGE = (1.0, 600.0)  # cents, each side of a partial
FEATHER_RANGE = (0.0, 5000.0)  # ms or Hz
FILL_CELLS = 1 << 19  # cells a step when filling with a kernel that acts per cell
FILL_DABS = 8  # dabs a step when filling with a stroke


@dataclass(frozen=True)
class Selection:
    kind: str
    points: tuple[tuple[float, float], ...]  # (seconds, Hz): corners, outline or path
    partials: int = 8  # harmonic: the fundamental and its partials up to this one
    width_cents: float = 50.0  # harmonic: each partial's half-width
    feather_ms: float = 0.0
    feather_hz: float = 0.0
    inverted: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError(f"unknown selection kind '{self.kind}'; use one of "
                                 f"{', '.join(KINDS)}")
        need = {"rect": 2, "lasso": 3, "harmonic": 2}[self.kind]
        if not (need <= len(self.points) <= MAX_POINTS):
            raise ParameterError(f"a {self.kind} selection needs {need} to {MAX_POINTS} "
                                 f"points; got {len(self.points)}")
        if not all(len(p) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v)
                                       and v >= 0 for v in p) for p in self.points):
            raise ParameterError("a selection's points must be (seconds, Hz) pairs of "
                                 "finite numbers >= 0")
        for name, value, (low, high) in (("partials", self.partials, PARTIALS_RANGE),
                                         ("width_cents", self.width_cents, WIDTH_RANGE),
                                         ("feather_ms", self.feather_ms, FEATHER_RANGE),
                                         ("feather_hz", self.feather_hz, FEATHER_RANGE)):
            if not (isinstance(value, (int, float)) and low <= value <= high):
                raise ParameterError(f"selection {name} = {value!r} is outside {low:g} to "
                                     f"{high:g}")

    @classmethod
    def rect(cls, t0: float, t1: float, *, f_lo: float, f_hi: float, **options) -> "Selection":
        return cls("rect", ((min(t0, t1), min(f_lo, f_hi)), (max(t0, t1), max(f_lo, f_hi))),
                   **options)

    def changed(self, **changes) -> "Selection":
        return replace(self, **changes)

    def to_json(self) -> dict:
        return {**asdict(self), "points": [list(p) for p in self.points]}

    @classmethod
    def from_json(cls, data) -> "Selection":
        """From :meth:`to_json`'s dict (a project file): checked, ParameterError if bad."""
        if not isinstance(data, dict) or not isinstance(data.get("points"), list):
            raise ParameterError("a saved selection must be an object with a list of points")
        known = {"kind", "points", "partials", "width_cents", "feather_ms", "feather_hz",
                 "inverted"}
        if set(data) - known:
            raise ParameterError(f"a saved selection has unknown fields: "
                                 f"{', '.join(sorted(set(data) - known))}")
        points = tuple(tuple(p) if isinstance(p, list) else (p,) for p in data["points"])
        return cls(**{**data, "points": points, "inverted": bool(data.get("inverted", False))})

    # -- geometry ------------------------------------------------------------------
    def path(self) -> tuple[np.ndarray, np.ndarray]:
        """A harmonic selection's fundamental: times (increasing) and Hz."""
        p = np.array(sorted(self.points), np.float64)
        return p[:, 0], p[:, 1]

    def span(self) -> tuple[float, float, float, float]:
        """(t0, t1, f_lo, f_hi) around the shape (before feathering or inverting)."""
        p = np.array(self.points, np.float64)
        t0, t1 = float(p[:, 0].min()), float(p[:, 0].max())
        if self.kind != "harmonic":
            return t0, t1, float(p[:, 1].min()), float(p[:, 1].max())
        ratio = 2 ** (self.width_cents / 1200)
        return t0, t1, float(p[:, 1].min()) / ratio, float(p[:, 1].max()) * self.partials * ratio

    def cells(self, doc: Document) -> Rect:
        """The cells the selection weighs above zero (all of them when inverted)."""
        if self.inverted:
            return doc.full_rect()
        t0, t1, f_lo, f_hi = self.span()
        f_lo -= self.feather_hz + _widest(doc, f_lo)
        f_hi += self.feather_hz + _widest(doc, f_hi)
        reach = self.feather_ms / 1000
        last = doc.n_frames if t1 >= _seconds(doc) else math.ceil(doc.frame_of(t1 + reach)) + 1
        return Rect(max(0, math.floor(doc.bin_of(max(f_lo, 0.0)))),
                    math.ceil(doc.bin_of(min(f_hi, doc.sample_rate / 2))) + 1,
                    max(0, math.floor(doc.frame_of(max(t0 - reach, 0.0)))),
                    last).clip(doc.n_bins, doc.n_frames)

    def mask(self, doc: Document, rect: Rect | None = None) -> torch.Tensor:
        """Weight in [0, 1] of every cell of ``rect`` (default :meth:`cells`):
        ``[bins, frames]`` float32 on the document's device."""
        rect = (rect or self.cells(doc)).clip(doc.n_bins, doc.n_frames)
        grow = _feather_cells(doc, self)
        inner = Rect(rect.bin0 - grow[0], rect.bin1 + grow[0], rect.frame0 - grow[1],
                     rect.frame1 + grow[1])  # feathering looks this far past the rect
        hz = _centre_hz(doc, inner)
        t = _frame_seconds(doc, inner)
        hard = {"rect": _inside_rect, "lasso": _inside_lasso,
                "harmonic": _inside_harmonic}[self.kind](self, doc, hz, t)
        soft = _feather(hard.astype(np.float32), *grow)
        soft = soft[grow[0]:grow[0] + rect.shape[0], grow[1]:grow[1] + rect.shape[1]]
        soft = np.ascontiguousarray(soft)
        if self.inverted:  # in place: a fresh array as large as the document is slow to fault in
            np.subtract(1, soft, out=soft)
        return torch.from_numpy(soft).to(doc.device)


def fill(doc: Document, selection: Selection, brush_name: str, *, params: dict | None = None,
         channel: int | None = None, history: History | None = None,
         label: str | None = None) -> Step:
    """Apply a brush to the whole selection, weighted by its mask (feathered edges get
    part of the effect): one undo step, pushed to ``history`` if given. A brush that
    acts per cell (gain, blur, ...) is applied to every cell at once; one that acts
    along a stroke (heal, tone, warp, harmonic) paints a stroke through the selection
    (see :func:`_through`) whose every dab is limited to it."""
    return drain(filling(doc, selection, brush_name, params=params, channel=channel,
                         history=history, label=label))


def filling(doc: Document, selection: Selection, brush_name: str, *, params: dict | None = None,
            channel: int | None = None, history: History | None = None,
            label: str | None = None) -> Generator[None, None, Step]:
    """:func:`fill` in steps, each a bounded piece of work (a run of frames, a slice
    of dabs, a step of the stroke's end), so the GUI can spread it over turns; returns
    the step. Refuses a bad brush, parameter or selection before its first step."""
    brush = get_brush(brush_name)
    values, unknown = brush.resolve({**(params or {}),
                                     "channel": -1 if channel is None else channel}, "params")
    if unknown:
        raise ParameterError(f"params: {brush.name} has no parameter(s) {', '.join(unknown)}")
    rect = selection.cells(doc)
    if rect.empty:
        raise ParameterError("the selection holds no cell of this document")
    return _filling(doc, selection, brush, values, rect, history,
                    label or f"fill selection: {brush_name}")


def _filling(doc: Document, selection: Selection, brush, values: dict, rect: Rect,
             history: History | None, label: str) -> Generator[None, None, Step]:
    kernel = brush.kernel
    if kernel is None or not (kernel.wash and kernel.batchable):
        values, points = _through(doc, selection, rect, values)
        stroke = Stroke(doc, brush, values, curves={}, history=history,
                        total_length=path_length(points, values),
                        limit=lambda r: selection.mask(doc, r))
        dabs = stroke.dabs_to(points)
        for i in range(0, len(dabs), FILL_DABS):
            stroke.paint_dabs(dabs[i:i + FILL_DABS])
            yield
        return (yield from stroke.ending(label))
    pieces = _pieces_of_inverted(doc, selection)
    if pieces is not None:
        return (yield from _filling_pieces(doc, pieces, brush, values, history, label))
    heard, selection, rect = _beyond_edges(doc, selection, rect)

    def weights(part: Rect) -> torch.Tensor:
        return selection.mask(doc, part)

    gate = None
    if heard is None and doc.transform.confined_edits:
        gate = BandGate(doc, weights, rect, sharp=selection.feather_ms == 0)
        yield from gate.grouping()
        weights, rect = gate.painted, gate.rect
    stroke = Stroke(doc, brush, values, curves={}, history=history, heard=Heard(frames=heard,
                                                                                gate=gate))
    centre = Dab(doc.transform.seconds_of((rect.frame0 + rect.frame1) / 2),
                 doc.hz_of((rect.bin0 + rect.bin1) / 2), values)
    frames = max(1, FILL_CELLS // rect.shape[0]) if kernel.local else rect.shape[1]
    for f in range(rect.frame0, rect.frame1, frames):  # a wash kernel reads the cells
        part = Rect(rect.bin0, rect.bin1, f, min(f + frames, rect.frame1))  # as they were
        try:  # before: the runs add up to the rect at once (if local)
            stroke.apply(part, weights(part) * max(values["opacity"], 0.0), [centre])
        except BaseException:
            stroke.rollback()  # all or nothing, like a stroke
            raise
        yield
    return (yield from stroke.ending(label))


def _beyond_edges(doc: Document, selection: Selection, rect: Rect
                  ) -> tuple[tuple[int, int] | None, Selection, Rect]:
    """Where the transform confines edits to their time (constant-Q), the cells just
    outside a selection's time edges still sound inside it through their atoms, which
    reach up to the transform's ``reach`` (0.62 s at 44.1 kHz) from their frame. A
    hard-edged rectangle or harmonic selection (whose every band starts and ends at the
    same times) is painted over every frame that sounds in its time, and heard only in
    its own frames; a harmonic selection's fundamental is held at its first and last
    pitch. Returns (those frames, or None; the selection and the cells to paint).
    A lasso's bands, or a feathered or inverted selection's, start and end at their
    own times, which one span of time cannot confine: brushes.locality.gate does it band by
    band."""
    if not (doc.transform.confined_edits and selection.kind in ("rect", "harmonic")
            and not selection.inverted and selection.feather_ms == 0):
        return None, selection, rect
    t, sr, n = doc.transform, doc.sample_rate, doc.length
    s0, s1 = (round(t.seconds_of(f) * sr) for f in (rect.frame0, rect.frame1))
    f0, f1 = t.frames_heard_in(s0, s1, n)
    first, last = float(t.seconds_of(f0)), float(t.seconds_of(f1 - 1))
    if selection.kind == "rect":
        _, _, f_lo, f_hi = selection.span()
        points = ((first, f_lo), (last, f_hi))
    else:
        times, hz = selection.path()
        before = [(first, float(hz[0]))] if first < times[0] else []
        after = [(last, float(hz[-1]))] if last > times[-1] else []
        points = (*before, *zip(times.tolist(), hz.tolist(), strict=True), *after)
        if len(points) > MAX_POINTS:
            return None, selection, rect
    wider = selection.changed(points=points)
    return (rect.frame0, rect.frame1), wider, wider.cells(doc)


def _pieces_of_inverted(doc: Document, selection: Selection) -> list[Selection] | None:
    """An inverted hard-edged rectangle, on a transform that confines edits to their
    time, as the hard-edged rectangles that tile it: every band before and after its
    time, and below and above its band during it. Each is then filled beyond its time
    edges and heard only in them (:func:`_beyond_edges`); filled at once, a -60 dB
    erase around a tone kept over 1-4 s changed it by -11 to -36 dB for 0.9 s inside
    either edge, and left it at -8 dB for 0.1 s outside. None for any other selection."""
    if not (doc.transform.confined_edits and selection.kind == "rect" and selection.inverted
            and selection.feather_ms == 0 and selection.feather_hz == 0):
        return None
    (t0, f_lo), (t1, f_hi) = selection.points
    times = _frame_seconds(doc, doc.full_rect())
    hz = _centre_hz(doc, doc.full_rect())
    before, after = np.searchsorted(times, t0) - 1, np.searchsorted(times, t1, side="right")
    below, above = np.searchsorted(hz, f_lo) - 1, np.searchsorted(hz, f_hi, side="right")
    pieces = []
    if before >= 0:
        pieces.append(Selection.rect(times[0], times[before], f_lo=hz[0], f_hi=hz[-1]))
    if after < len(times):
        pieces.append(Selection.rect(times[after], times[-1], f_lo=hz[0], f_hi=hz[-1]))
    if before + 1 <= after - 1:
        during = times[before + 1], times[after - 1]
        if below >= 0:
            pieces.append(Selection.rect(*during, f_lo=hz[0], f_hi=hz[below]))
        if above < len(hz):
            pieces.append(Selection.rect(*during, f_lo=hz[above], f_hi=hz[-1]))
    return [p.changed(points=tuple((float(t), float(f)) for t, f in p.points)) for p in pieces]


def _filling_pieces(doc: Document, pieces: list[Selection], brush, values: dict,
                    history: History | None, label: str) -> Generator[None, None, Step]:
    """The pieces filled one after another as one step: each is confined to its own
    time and works on the audio the ones before it left."""
    step = Step(label, None if values["channel"] < 0 else int(values["channel"]),
                layer=doc.layers.active.id, written=doc.written_frames())
    try:
        for piece in pieces:
            done = yield from _filling(doc, piece, brush, values, piece.cells(doc), None, label)
            step.patches += done.patches
    except BaseException:
        step.undo(doc)  # all or nothing, like a stroke
        raise
    if history is not None and step.patches:
        history.push(step)
    return step


def _through(doc: Document, selection: Selection, rect: Rect,
             values: dict) -> tuple[dict, list[StrokePoint]]:
    """The stroke that fills a selection with a stroke brush: hard dabs along a
    harmonic selection's fundamental, each as wide as its partials, or along the
    middle of the cells' band from their first frame to their last, as wide as the
    band (5 % over: the edges of a row of dabs are scalloped)."""
    values = {**values, "hardness": 1.0}
    if selection.kind == "harmonic" and not selection.inverted:
        times, hz = selection.path()
        return ({**values, "radius_cents": selection.width_cents},
                [StrokePoint(float(t), float(f)) for t, f in zip(times, hz, strict=True)])
    t0, t1 = doc.transform.seconds_of(rect.frame0), doc.transform.seconds_of(rect.frame1 - 1)
    f_lo, f_hi = doc.hz_of(rect.bin0), doc.hz_of(rect.bin1 - 1)
    values = {**values, "radius_cents": 0.0, "radius_hz": max(1.05 * (f_hi - f_lo) / 2, 1.0)}
    middle = (f_lo + f_hi) / 2
    return values, [StrokePoint(t0, middle), StrokePoint(max(t1, t0), middle)]


def _widest(doc: Document, hz: float) -> float:
    return doc.transform.resolution_hz(max(hz, 0.0))


def _centre_hz(doc: Document, rect: Rect) -> np.ndarray:
    return np.array([doc.hz_of(b) for b in range(rect.bin0, rect.bin1)], np.float64)


def _frame_seconds(doc: Document, rect: Rect) -> np.ndarray:
    return doc.transform.seconds_of(np.arange(rect.frame0, rect.frame1, dtype=np.float64))


def _seconds(doc: Document) -> float:
    return doc.length / doc.sample_rate


def _inside_rect(sel: Selection, doc, hz: np.ndarray, t: np.ndarray) -> np.ndarray:
    """A rectangle whose end is the file's end reaches every frame after it too (a
    constant-Q document's last frames lie past the file's end)."""
    (t0, f_lo), (t1, f_hi) = sel.points[0], sel.points[1]
    t1 = math.inf if t1 >= _seconds(doc) else t1
    return ((hz >= f_lo) & (hz <= f_hi))[:, None] & ((t >= t0) & (t <= t1))[None, :]


def _inside_lasso(sel: Selection, doc, hz: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Even-odd rule: each edge of the outline crosses the frame columns its time range
    holds; a crossing flips every bin above it (``hz`` and ``t`` increase), so a bin is
    inside where an odd number of crossings lie below it."""
    p = np.array(sel.points, np.float64)
    a, b = p, np.roll(p, -1, axis=0)  # edges a -> b, closed
    lo, hi = np.minimum(a[:, 0], b[:, 0]), np.maximum(a[:, 0], b[:, 0])
    first, stop = np.searchsorted(t, lo), np.searchsorted(t, hi)  # columns lo <= x < hi
    count = stop - first
    edge = np.repeat(np.arange(len(a)), count)
    column = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count - first, count)
    ea, eb, x = a[edge], b[edge], t[column]
    ys = ea[:, 1] + (x - ea[:, 0]) / (eb[:, 0] - ea[:, 0]) * (eb[:, 1] - ea[:, 1])
    flips = np.zeros((len(hz) + 1, len(t)), np.uint8)
    np.add.at(flips, (np.searchsorted(hz, ys, side="right"), column), 1)
    return np.cumsum(flips[:-1], axis=0, dtype=np.uint32) % 2 == 1


def _inside_harmonic(sel: Selection, doc, hz: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Within ``width_cents`` (never less than the transform resolves) of k times the
    fundamental, k = 1..partials, while the path lasts."""
    times, f0s = sel.path()
    during = (t >= times[0]) & (t <= times[-1])
    fundamental = np.interp(t, times, f0s)
    ratio = 2 ** (sel.width_cents / 1200) - 1
    resolves = _resolution_of(doc)
    edges = np.zeros((len(hz) + 1, len(t)), np.int16)  # +1 where a band starts, -1 past it
    column = np.arange(len(t))
    for k in range(1, sel.partials + 1):
        centre = k * fundamental
        half = np.maximum(centre * ratio, resolves(centre))
        edges[np.searchsorted(hz, centre - half), column] += 1  # one cell per column: no
        edges[np.searchsorted(hz, centre + half, side="right"), column] -= 1  # repeats
    return (np.cumsum(edges[:-1], axis=0, dtype=np.int16) > 0) & during[None, :]


def _resolution_of(doc: Document):
    """``transform.resolution_hz`` for an array of Hz: it depends only on the bin
    nearest the frequency, so one call per bin and a lookup by the bins' midpoints."""
    t = doc.transform
    per_bin = np.array([t.resolution_hz(t.hz_of(b)) for b in range(t.n_bins)])
    midpoints = np.array([t.hz_of(b + 0.5) for b in range(t.n_bins - 1)])
    return lambda hz: per_bin[np.searchsorted(midpoints, hz)]


def _feather_cells(doc: Document, sel: Selection) -> tuple[int, int]:
    """The feather's half-widths in bins and frames (0: a hard edge)."""
    mid = sum(sel.span()[2:]) / 2
    bins = doc.bin_of(mid + sel.feather_hz) - doc.bin_of(mid) if sel.feather_hz else 0
    return math.ceil(bins), math.ceil(doc.frame_of(sel.feather_ms / 1000))


def _feather(mask: np.ndarray, bins: int, frames: int) -> np.ndarray:
    """Soften edges: a normalized triangle filter of half-width ``bins`` down the
    columns and ``frames`` along the rows (a hard edge becomes a ramp through 0.5)."""
    x = torch.from_numpy(mask)
    for dim, half in ((0, bins), (1, frames)):
        if half > 0:
            kernel = 1 - torch.arange(-half, half + 1).abs() / (half + 1)
            kernel = (kernel / kernel.sum()).float()[None, None]
            rows = x.movedim(dim, -1)
            x = torch.nn.functional.conv1d(rows.reshape(-1, 1, rows.shape[-1]), kernel,
                                           padding=half).reshape(rows.shape).movedim(-1, dim)
    return x.numpy()
