"""The Transform tool's drag on the canvas: the selection's box with a handle on its
left and right edges; a drag inside the box moves the content in time and frequency,
a drag of an edge handle stretches it in time from the opposite edge. The drag only
measures (seconds, semitones or Hz, a stretch) and shows where the content will land
as a ghost; the move is done once, on release, by the window (Edit > Transform).

Up and down is a transposition in semitones on a log axis (every partial keeps its
ratio) and a shift in Hz on a linear one (the content keeps its height as drawn);
with the pitch grid's snap on (Ctrl held: the opposite) it is a transposition by
whole semitones on either axis. Shift held keeps the content at its time or at its
frequency, whichever the pointer has moved less in."""

import math

from app.gui.view.selecting import outlines, thin
from app.gui.view.viewstate import ViewState
from app.session.selection import Selection
from app.session.spectral_clip import SEMITONES, STRETCH

HANDLE_PX = 6  # an edge handle: this many pixels either side of the box's left or right edge
GHOST = (0.3, 0.9, 1.0, 1.0)  # where the content will land: cyan, unlike any other line
HANDLE = (1.0, 1.0, 1.0, 1.0)


def grab(selection: Selection, view: ViewState, x: float, y: float) -> str | None:
    """What a press at pixel (``x``, ``y``) of a lane takes hold of: the box's
    "left" or "right" edge, "move" inside it, None outside it."""
    t0, t1, f_lo, f_hi = selection.span()
    x0, x1 = view.x_of(t0), view.x_of(t1)
    top, bottom = view.y_of(f_hi), view.y_of(max(f_lo, 1e-3))
    if not (top - HANDLE_PX <= y <= bottom + HANDLE_PX):
        return None
    reach = min(HANDLE_PX, (x1 - x0) / 4)  # a narrow box keeps its inside for moving
    if abs(x - x0) <= reach:
        return "left"
    if abs(x - x1) <= reach:
        return "right"
    return "move" if x0 <= x <= x1 and top <= y <= bottom else None


class TransformDrag:
    """One drag of ``part`` ("move", "left", "right"; :func:`grab`) of ``selection``'s
    box, pressed at (``t``, ``hz``) on ``view``."""

    def __init__(self, selection: Selection, part: str, t: float, hz: float, view: ViewState):
        self.selection, self.part, self.view = selection, part, view
        self.t0, self.t1, self.f_lo, self.f_hi = selection.span()
        self.pressed = (t, max(hz, 1e-3))
        self.by_s, self.semitones, self.shift_hz, self.stretch = 0.0, 0.0, 0.0, 1.0

    def move(self, t: float, hz: float, *, snap: bool = False, keep_axis: bool = False) -> None:
        """The pointer at (``t``, ``hz``); ``snap``: whole semitones; ``keep_axis``: only
        along the axis the pointer has moved more in (Shift held)."""
        t_p, hz_p = self.pressed
        hz = min(max(hz, 1e-3), self.view.nyquist)  # a pointer past the canvas's top
        if self.part != "move":
            self._stretch(t - t_p)
            return
        dt = t - t_p
        if keep_axis:
            v = self.view
            across = abs(v.x_of(t) - v.x_of(t_p))
            if across >= abs(v.y_of(hz) - v.y_of(hz_p)):
                hz = hz_p
            else:
                dt = 0.0
        self.by_s = dt
        self.semitones, self.shift_hz = 0.0, 0.0
        if snap or self.view.log_freq:
            steps = 12 * math.log2(hz / hz_p)
            self.semitones = min(max(round(steps) if snap else steps, -SEMITONES), SEMITONES)
        else:
            self.shift_hz = hz - hz_p

    def _stretch(self, dt: float) -> None:
        """The edge dragged by ``dt`` seconds; the opposite edge stays."""
        width = self.t1 - self.t0
        if width <= 0:  # a typed selection of no time has nothing to stretch
            return
        grown = width + (dt if self.part == "right" else -dt)
        self.stretch = min(max(grown / width, STRETCH[0]), STRETCH[1])
        # the content is stretched from its start and then moved: a left edge moves it
        self.by_s = width - width * self.stretch if self.part == "left" else 0.0

    @property
    def changed(self) -> bool:
        return (self.by_s, self.semitones, self.shift_hz, self.stretch) != (0.0, 0.0, 0.0, 1.0)

    def describe(self) -> str:
        """What the drag does so far, for the status bar."""
        if self.part != "move":
            return f"Stretch x{self.stretch:.2f} ({(self.t1 - self.t0) * self.stretch:.3f} s)"
        pitch = f"{self.semitones:+.2f} st" if self.semitones or not self.shift_hz else \
            f"{self.shift_hz:+.0f} Hz"
        return f"Move {self.by_s:+.3f} s, {pitch}"

    def values(self) -> dict:
        """The keywords of Edit > Transform (app.session.spectral_clip.move_selection)."""
        return {"by_s": self.by_s, "semitones": self.semitones, "shift_hz": self.shift_hz,
                "stretch": self.stretch}

    def landed(self, *, duration: float, nyquist: float) -> Selection | None:
        """The selection moved where its content lands (within the file; None when
        nothing of it is left there): a rectangle's corners, a lasso's outline or a
        harmonic selection's path, each point moved and stretched."""
        ratio = 2 ** (self.semitones / 12)
        start = self.t0 + self.by_s
        points = tuple((min(max(start + (t - self.t0) * self.stretch, 0.0), duration),
                        min(max(hz * ratio + self.shift_hz, 0.0), nyquist))
                       for t, hz in self.selection.points)
        times, freqs = {t for t, _ in points}, {hz for _, hz in points}
        if len(times) < 2 or (self.selection.kind != "harmonic" and len(freqs) < 2):
            return None
        return self.selection.changed(points=points)

    def lines(self) -> list[tuple[list, bool, tuple, bool]]:
        """The ghost of where the content will land: (pixels, closed?, colour, dashed?)."""
        ghost = self.landed(duration=math.inf, nyquist=self.view.nyquist)
        if ghost is None:
            return []
        return [(thin(points), closed, GHOST, True)
                for points, closed, _ in outlines(ghost, self.view)]


def handles(selection: Selection, view: ViewState) -> list[tuple[list, bool, tuple, bool]]:
    """The box around ``selection`` and a square handle at the middle of its left and
    right edges: (pixels, closed?, colour, dashed?)."""
    t0, t1, f_lo, f_hi = selection.span()
    x0, x1 = view.x_of(t0), view.x_of(t1)
    top, bottom = view.y_of(f_hi), view.y_of(max(f_lo, 1e-3))
    middle, h = (top + bottom) / 2, HANDLE_PX
    lines = [([(x0, top), (x1, top), (x1, bottom), (x0, bottom)], True, HANDLE, True)]
    for x in (x0, x1):
        lines.append(([(x - h, middle - h), (x + h, middle - h), (x + h, middle + h),
                       (x - h, middle + h)], True, HANDLE, False))
    return lines

