"""Where the clone brush copies from, chosen as in every image editor: Alt+click
sets the source point, and the next clone stroke copies from there, the offset
between them kept for the strokes after it (aligned), until the next Alt+click.
The offset lives in the brush's own offset_ms and offset_hz, so the panel shows
it and a preset saves it; the canvas marks the source with a cross."""

from PySide6.QtWidgets import QStatusBar

from app.gui.view.canvas import SpectrogramCanvas
from app.gui.view.viewstate import format_time
from app.gui.widgets.panels import BrushPanel

LIMITS = {"offset_ms": 600000.0, "offset_hz": 96000.0}  # the clone kernel's ranges


class CloneSource:
    def __init__(self, canvas: SpectrogramCanvas, panel: BrushPanel, status: QStatusBar):
        self.canvas, self.panel, self.status = canvas, panel, status
        self.picked: tuple[float, float] | None = None  # set, no stroke from it yet
        canvas.sourcePicked.connect(self.pick)
        panel.changed.connect(self.show)

    def cloning(self) -> bool:
        return self.panel.current()[0] == "clone"

    def pick(self, seconds: float, hz: float) -> None:
        if not self.cloning():
            self.status.showMessage("Alt+click sets the clone brush's source: choose the "
                                    "clone preset (or brush) first", 8000)
            return
        self.picked = (max(seconds, 0.0), max(hz, 0.0))
        self.status.showMessage(f"clone source: {format_time(self.picked[0])}, "
                                f"{self.picked[1]:,.0f} Hz; paint where it goes", 8000)
        self.show()

    def stroke_starts(self, seconds: float, hz: float) -> None:
        """A stroke begins at (``seconds``, ``hz``): a source just picked sets the
        offset it (and the strokes after it) copies with."""
        if self.picked is None or not self.cloning():
            return
        t, f = self.picked
        self.picked = None
        for name, value in (("offset_ms", (t - seconds) * 1000), ("offset_hz", f - hz)):
            self.panel.set_param(name, min(max(value, -LIMITS[name]), LIMITS[name]))

    def show(self) -> None:
        """The cross: at the source picked, else where the brush copies from (the
        pointer plus the offset), while the clone brush is chosen."""
        if not self.cloning():
            self.canvas.clone_marker = None
        elif self.picked is not None:
            self.canvas.clone_marker = (*self.picked, False)
        else:
            params = self.panel.current()[1]
            self.canvas.clone_marker = (params["offset_ms"] / 1000, params["offset_hz"], True)
        self.canvas.update()
