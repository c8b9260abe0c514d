"""What the canvas's next frame must redraw.

The canvas keeps its framebuffer between frames (QOpenGLWidget's PartialUpdate),
so a pen stroke or a moving cursor redraws only the cells it changed and the
overlays around them, under a scissor box. Under Mesa llvmpipe a full 1600x900
frame costs about 12 ms more of fragment work than a dab's box, and that work
competes with painting for the CPU. Anything else (zoom, pan, style, selection,
undo) redraws everything.
"""

import math

from engine.region import Rect

Box = tuple[float, float, float, float]  # x0, y0, x1, y1: widget pixels, y down
# pixels: a pixel row reads bins up to a row beyond its own (the bin pyramid), a texel
# zoomed out holds up to a pixel's worth of frames, and lines are a pixel wide
MARGIN = 2.0


def union(a: Box | None, b: Box | None) -> Box | None:
    if a is None or b is None:
        return a or b
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def around(points) -> Box | None:
    """The box of ``points`` (x, y), with the margin."""
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) - MARGIN, min(ys) - MARGIN, max(xs) + MARGIN, max(ys) + MARGIN


def cells_box(view, doc, rect: Rect, top_px: float) -> Box | None:
    """Where ``rect``'s cells are drawn in the lane whose top is ``top_px``, clipped to
    the view; None when they are out of sight. (Zoomed out, a texel is the maximum of
    up to a pixel's worth of frames: the margin covers it.)"""
    hop_s = doc.transform.hop / doc.sample_rate
    x0 = view.x_of((rect.frame0 - 0.5) * hop_s)
    x1 = view.x_of((rect.frame1 - 0.5) * hop_s)
    lo = max(view.f_lo, 20.0) if view.log_freq else view.f_lo
    top = min(doc.hz_of(rect.bin1 - 0.5), view.f_hi)
    bottom = max(doc.hz_of(rect.bin0 - 0.5), lo)
    if top < bottom or x1 < 0 or x0 > view.width:
        return None
    return (max(x0, 0.0) - MARGIN, top_px + view.y_of(top) - MARGIN,
            min(x1, view.width) + MARGIN, top_px + view.y_of(bottom) + MARGIN)


def scissor(box: Box, width: int, height: int, dpr: float) -> tuple[int, int, int, int]:
    """``box`` as glScissor's (x, y, w, h): framebuffer pixels from the bottom left,
    clipped to the framebuffer and rounded outwards."""
    right, bottom = width * dpr, height * dpr
    x0 = min(max(math.floor(box[0] * dpr), 0), right)
    x1 = min(max(math.ceil(box[2] * dpr), 0), right)
    y0 = min(max(math.floor(bottom - box[3] * dpr), 0), bottom)
    y1 = min(max(math.ceil(bottom - box[1] * dpr), 0), bottom)
    return int(x0), int(y0), int(max(x1 - x0, 0)), int(max(y1 - y0, 0))


class Damage:
    """The next frame's box to redraw; ``full`` when anything may have changed."""

    def __init__(self):
        self.full, self.box = True, None

    def everything(self) -> None:
        self.full, self.box = True, None

    def add(self, box: Box | None) -> None:
        if not self.full:
            self.box = union(self.box, box)

    def take(self) -> tuple[bool, Box | None]:
        """What to redraw now; afterwards nothing is damaged."""
        taken = self.full, self.box
        self.full, self.box = False, None
        return taken
