"""Drawing selections on the canvas: the rectangle, time, frequency, lasso and
harmonic tools turn a drag into a app.session.selection.Selection (a time selection
spans every frequency, a frequency selection the whole file; a drag past or within
a few pixels of the file's ends takes them exactly), and a selection into outlines
(screen points) for the overlay."""

import math

import numpy as np

from app.gui.view.viewstate import LOG_FLOOR_HZ, ViewState
from app.session.selection import Selection

TOOLS = ("select", "time", "band", "lasso", "harmonic")
MIN_STEP_PX = 3  # a lasso or path point every few pixels of movement
SNAP_PX = 4  # a drag this close to the file's start, end, 0 Hz or Nyquist takes it
# opaque: the widget composes alpha. Dashed light on dark, unlike the grid's solid lines
LINE, INVERTED, DASH_DARK = (1.0, 1.0, 1.0, 1.0), (1.0, 0.6, 0.2, 1.0), (0.0, 0.0, 0.0, 1.0)
DASH_PX = 5


class SelectionDrag:
    """One drag of a selection tool on ``view``, in seconds and Hz."""

    def __init__(self, tool: str, t: float, hz: float, partials: int, width_cents: float,
                 view: ViewState):
        self.tool, self.view = tool, view
        self.points = [self._inside(t, hz)]
        self.partials, self.width_cents = partials, width_cents

    def _inside(self, t: float, hz: float) -> tuple[float, float]:
        """(t, hz) within the file, taking its edges when within SNAP_PX of them."""
        v = self.view
        t, hz = min(max(t, 0.0), v.duration), min(max(hz, 0.0), v.nyquist)
        for edge in (0.0, v.duration):
            if abs(v.x_of(t) - v.x_of(edge)) <= SNAP_PX:
                t = edge
        bottom = LOG_FLOOR_HZ if v.log_freq else 0.0  # where a log axis shows 0 Hz
        for edge, value in ((bottom, 0.0), (v.nyquist, v.nyquist)):
            if abs(v.y_of(max(hz, 1e-3)) - v.y_of(edge)) <= SNAP_PX:
                hz = value
        return t, hz

    def move(self, t: float, hz: float, view: ViewState) -> None:
        t, hz = self._inside(t, hz)
        if self.tool in ("select", "time", "band"):
            self.points[1:] = [(t, hz)]
            return
        last = self.points[-1]
        if abs(view.x_of(t) - view.x_of(last[0])) + abs(view.y_of(hz) - view.y_of(last[1])) \
                >= MIN_STEP_PX:
            self.points.append((t, hz))

    def selection(self) -> Selection | None:
        """The selection drawn so far (None while it is too small to be one)."""
        p, v = self.points, self.view
        if self.tool in ("select", "time", "band"):
            if len(p) < 2:
                return None
            (t0, f0), (t1, f1) = p[0], p[1]
            if self.tool == "time":
                f0, f1 = 0.0, v.nyquist
            elif self.tool == "band":
                t0, t1 = 0.0, v.duration
            if t0 == t1 or f0 == f1:
                return None
            return Selection.rect(t0, t1, f_lo=f0, f_hi=f1)
        if self.tool == "lasso":
            return Selection("lasso", tuple(p)) if len(p) >= 3 else None
        times = [t for t, _ in p]
        if len(p) < 2 or max(times) == min(times):
            return None
        return Selection("harmonic", tuple(p), partials=self.partials,
                         width_cents=self.width_cents)


def outlines(sel: Selection, view: ViewState) -> list[tuple[list, bool, tuple]]:
    """(screen points, closed?, colour) for each line that shows ``sel``."""
    colour = INVERTED if sel.inverted else LINE
    if sel.kind == "rect":
        (t0, f0), (t1, f1) = sel.points
        x0, x1, y0, y1 = view.x_of(t0), view.x_of(t1), view.y_of(f1), view.y_of(f0)
        return [([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], True, colour)]
    if sel.kind == "lasso":
        return [([(view.x_of(t), view.y_of(hz)) for t, hz in sel.points], True, colour)]
    times, f0s = sel.path()
    ratio = 2 ** (sel.width_cents / 1200)
    lines = []
    for k in range(1, sel.partials + 1):  # each partial's band: its lower and upper edge
        for scale in (k / ratio, k * ratio):
            lines.append(([(view.x_of(t), view.y_of(max(f * scale, 1e-3)))
                           for t, f in zip(times, f0s, strict=True)], False, colour))
    return lines


def dashes(points: list, closed: bool, dash: float = DASH_PX) -> tuple[list, list]:
    """The outline through ``points`` cut into dashes ``dash`` pixels long, alternately
    light and dark: (light segments' end points, dark segments' end points), for
    GL_LINES."""
    if closed and len(points) > 2:
        points = [*points, points[0]]
    light, dark, along = [], [], 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        length = math.hypot(x1 - x0, y1 - y0)
        done = 0.0
        while done < length:
            step = min(dash - along % dash, length - done)
            a, b = done / length, (done + step) / length
            target = light if int(along // dash) % 2 == 0 else dark
            target += [(x0 + a * (x1 - x0), y0 + a * (y1 - y0)),
                       (x0 + b * (x1 - x0), y0 + b * (y1 - y0))]
            done += step
            along += step
    return light, dark


def thin(points: list, most: int = 400) -> list:
    """At most ``most`` points of a long outline, for drawing."""
    if len(points) <= most:
        return points
    keep = np.linspace(0, len(points) - 1, most).round().astype(int)
    return [points[i] for i in keep]
