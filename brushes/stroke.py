"""Painting: a stroke's points become dabs, dabs go through a kernel on
their region only, and the finished stroke becomes one undo step."""

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator

import torch

from brushes.dab import Dab, Footprint, footprint_rects, union_mask, union_rect
from brushes.kernels.kernel import DabContext, Kernel
from brushes.locality import Heard, Painted, keeping_local
from brushes.params import Curve
from brushes.path import Spacer, StrokePoint, path_length
from brushes.registry import KERNELS, Brush, get_brush
from brushes.stroke_canvas import StrokeCanvas
from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Patch, Step
from engine.progress import drain
from engine.region import Rect
from engine.runtime.stats import timed

GEOMETRY = ("radius_ms", "radius_hz", "radius_cents", "hardness", "opacity", "spacing")
PLANS_KEPT = 4  # script strokes whose dabs and footprints are kept (see paint)
Shape = tuple[Rect, "torch.Tensor | None"]  # a group of dabs' cells and mask


class Stroke:
    def __init__(self, doc: Document, brush: Brush, params: dict,
                 *, curves: dict[str, dict[str, Curve]], history: History | None,
                 total_length: float | None = None, seed: int = 0,
                 limit: Callable[[Rect], torch.Tensor] | None = None,
                 heard: Heard | None = None):
        """``limit``: a weight per cell of a rect (a selection's mask) that every dab's
        mask is multiplied by. ``heard``: where the stroke is heard, when its maker
        knows (a filled selection, app.session.selection); else where it went."""
        self.doc, self.brush, self.history, self.params = doc, brush, history, params
        self.limit = limit
        self.channel = None if params["channel"] < 0 else int(params["channel"])
        doc.channel_indices(self.channel)  # refuse a channel the document does not have, now
        self.kernel: Kernel = brush.kernel or KERNELS[params["inner"]]
        self.canvas = StrokeCanvas(doc, self.channel)
        self.written_before = doc.written_frames()  # for its undo step
        self.layer = doc.layers.active.id  # the layer it paints (the active one)
        lone = not (self.kernel.wash and self.kernel.batchable)  # see _groups
        self.spacer = Spacer(brush, params, curves, total_length=total_length, seed=seed,
                             copies=params["harmonics"] if brush.kernel is None else 1,
                             one_at_a_time=self.kernel.name if lone else "")
        self.dirty: Rect | None = None
        self.record = Painted(heard or Heard())  # what its end needs (brushes.locality)
        self.shapes: list[Shape] | None = None  # each group's shape is added here, if a list
        self.replay: Iterator[Shape] | None = None  # each group's shape is taken from here

    def add(self, points: list[StrokePoint]) -> Rect | None:
        """One input event: paint the dabs that fall along ``points``; return the rect
        changed (None when nothing was, as for a kernel that acts at the stroke's end).
        On any error the whole stroke is rolled back and the error raised."""
        return self.paint_dabs(self.dabs_to(points))

    def dabs_to(self, points: list[StrokePoint]) -> list[Dab]:
        """The dabs that fall along ``points``, not painted yet: a caller with a time
        budget paints them in slices with :meth:`paint_dabs` (in order; the result is
        the same as one :meth:`add`). Refuses a stroke of too many dabs, rolled back."""
        try:
            dabs = [d for p in points for d in self.spacer.to(p)]
        except BaseException:
            self.rollback()
            raise
        return _harmonics(dabs) if self.brush.kernel is None else dabs

    @timed("paint")
    def paint_dabs(self, dabs: list[Dab]) -> Rect | None:
        """Paint ``dabs`` (from :meth:`dabs_to`); the rect changed, or None. On any error
        the whole stroke is rolled back and the error raised."""
        changed = None
        self.record.calls.append(dabs)
        try:
            for group in self._groups(dabs):
                painted = self._paint(group)
                if not painted.empty:
                    changed = painted.union(changed)
            if changed is not None:
                self.dirty = changed.union(self.dirty)
        except BaseException:
            self.rollback()
            raise
        return changed

    def _groups(self, dabs: list[Dab]) -> list[list[Dab]]:
        if not (self.kernel.wash and self.kernel.batchable):
            return [[d] for d in dabs]
        groups: list[list[Dab]] = []
        for d in dabs:  # one batch per run of dabs whose effect settings agree
            if groups and (groups[-1][0].params is d.params or
                           _effect(groups[-1][0]) == _effect(d)):
                groups[-1].append(d)
            else:
                groups.append([d])
        return groups

    def _paint(self, dabs: list[Dab]) -> Rect:
        rect, mask = self._shape(dabs)
        if rect.empty:
            return rect
        if self.limit is not None:
            mask = mask * self.limit(rect)
        return self._write(rect, mask, dabs)

    def _shape(self, dabs: list[Dab]) -> Shape:
        """The cells a group of dabs changes and its mask (the footprints' union):
        computed, or the next of :attr:`replay` (the same, computed for a document of
        the same analysis and length); added to :attr:`shapes` when that is a list."""
        if self.replay is not None:
            rect, mask = next(self.replay)
            return rect, None if mask is None else mask.clone()  # a kernel may write in it
        doc = self.doc
        fields, rects = footprint_rects([Footprint.of(doc, d) for d in dabs])
        rect = self.kernel.region(doc, union_rect(rects), dabs[0].params) \
            .clip(doc.n_bins, doc.n_frames)
        mask = None if rect.empty else union_mask(
            fields, rects, opacity=[max(d.params["opacity"], 0.0) for d in dabs], rect=rect,
            device=doc.device)
        if self.shapes is not None:
            self.shapes.append((rect, None if mask is None else mask.clone()))
        return rect, mask

    def apply(self, rect: Rect, mask: torch.Tensor, dabs: list[Dab]) -> Rect:
        """The kernel over ``rect`` at once, with ``mask`` ([bins, frames], opacity
        included) as the coverage (a selection's weights): part of the stroke like
        its dabs, so its end confines it."""
        self.record.filled = True
        changed = self._write(rect, mask, dabs)
        if not changed.empty:
            self.dirty = changed.union(self.dirty)
        return changed

    def _write(self, rect: Rect, mask: torch.Tensor, dabs: list[Dab]) -> Rect:
        """The kernel over ``rect`` with ``mask`` as the dabs' coverage: the
        footprints' union, or a selection's weights; the rect written."""
        doc = self.doc
        self.canvas.touch(rect)
        wash = self.kernel.wash
        coverage = self.canvas.cover(rect, mask)  # where the stroke went (brushes.locality.confine)
        ctx = DabContext(doc, self.canvas, rect, coverage if wash else mask, dabs, wash)
        result = self.kernel.effect(ctx)
        if result is None:  # nothing to write yet (a kernel that acts at the stroke's end)
            return Rect(0, 0, 0, 0)
        doc.write_complex(rect, result, channel=self.channel)
        return rect

    def rollback(self) -> Rect | None:
        """Undo everything the stroke wrote (after an error: a stroke is all or nothing);
        the rect restored."""
        rect = None
        for key, before in self.canvas.before_tiles.items():
            tile = self.canvas.tile_rect(key)
            self.doc.write_complex(tile, before, channel=self.channel)
            rect = tile.union(rect)
        self.canvas.before_tiles.clear()
        self.doc.set_written(self.written_before)  # its samples are the content's again
        return rect

    @timed("paint")
    def end(self, label: str | None = None) -> Step:
        """Finish: the stroke becomes one undo step (pushed to the history, if any),
        named ``label`` (default "<brush> stroke").
        If the kernel's finishing work fails, the stroke is rolled back and the error
        raised."""
        return drain(self.ending(label))

    def ending(self, label: str | None = None) -> Generator[None, None, Step]:
        """:meth:`end` in steps, each a bounded piece of work (on a transform that
        confines edits, a part of the confinement), so a long stroke's end can be spread
        over turns of the GUI; returns the step."""
        doc = self.doc
        try:
            kept = yield from keeping_local(self)
            if kept is not None:
                self.dirty = kept.union(self.dirty)
            finished = yield from self.kernel.finishing(doc, self.canvas, self.params)
        except BaseException:
            self.rollback()
            raise
        if finished is not None:
            self.dirty = finished.union(self.dirty)
        step = Step(label or f"{self.brush.name} stroke", self.channel,
                    notice=self.canvas.state.notice, layer=self.layer,
                    written=self.written_before)
        for key, before in self.canvas.before_tiles.items():
            rect = self.canvas.tile_rect(key)
            step.patches.append(Patch(rect, before))  # after: read if it is undone
        if self.history is not None and step.patches:
            self.history.push(step)
        return step


def _effect(dab: Dab) -> dict:
    return {k: v for k, v in dab.params.items() if k not in GEOMETRY}


def _harmonics(dabs: list[Dab]) -> list[Dab]:
    """Each dab at k * f for k = 1..harmonics, opacity times falloff^(k-1)."""
    out = []
    for d in dabs:
        p = d.params
        for k in range(1, p["harmonics"] + 1):
            opacity = p["opacity"] * p["falloff"] ** (k - 1)
            if opacity <= 0 or not math.isfinite(k * d.freq):
                continue
            out.append(Dab(d.time, k * d.freq, {**p, "opacity": opacity},
                           (d.step[0], k * d.step[1])))
    return out


def paint(doc: Document, brush_name: str, points: list[StrokePoint], *, params: dict | None = None,
          curves: dict[str, dict[str, Curve]] | None = None, history: History | None = None,
          seed: int = 0) -> Step:
    """Paint one whole stroke (a script's stroke: progress is known from the start).
    Its dabs and each group's cells and mask depend on the points, the settings and the
    document's analysis and length, not on what it holds: painted again on such a
    document (a batch's next stack of files), the stroke takes them from the first time
    (PLANS_KEPT strokes are kept) instead of spacing and measuring its dabs again (a 6 s
    stroke of 481 dabs: 25 ms). The coefficients it writes are computed as before."""
    brush = get_brush(brush_name)
    resolved, unknown = brush.resolve(params or {}, "params")
    if unknown:
        raise ParameterError(f"params: {brush.name} has no parameter(s) {', '.join(unknown)}")
    stroke = Stroke(doc, brush, resolved, curves=curves or {}, history=history,
                    total_length=path_length(points, resolved), seed=seed)
    key = (repr(doc.transform), doc.sample_rate, doc.length, str(doc.device), brush.name,
           repr(sorted(resolved.items())), repr(curves), tuple(points), seed)
    with _plans_lock:
        plan = _plans.get(key)
    if plan is None:
        dabs, stroke.shapes = stroke.dabs_to(points), []
        stroke.paint_dabs(dabs)
        with _plans_lock:
            _plans[key] = (dabs, stroke.shapes)
            while len(_plans) > PLANS_KEPT:
                _plans.popitem(last=False)
    else:
        stroke.replay = iter(plan[1])
        stroke.paint_dabs(plan[0])
    stroke.shapes = stroke.replay = None
    return stroke.end()


_plans: OrderedDict[tuple, tuple[list[Dab], list[Shape]]] = OrderedDict()  # see paint
_plans_lock = threading.Lock()
