"""The clicks a de-click repaired, as marks in the time ruler (the one stepped to
brighter) that Repair > Next/Previous repaired click steps through: the playhead
goes to each, the view follows and the status bar says which. Shown while the
repair is applied (undone: gone)."""

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QStatusBar

from app.gui.canvas_area import CanvasArea
from app.gui.opened import OpenDocument
from app.gui.viewstate import format_time
from engine.layout import channel_names

MARK, CURRENT = QColor(90, 200, 255), QColor(255, 255, 255)


class ClickMarks:
    """The marks in ``area``'s time ruler, for the ``opened`` document."""

    def __init__(self, area: CanvasArea, opened: OpenDocument, status: QStatusBar):
        self.area, self.opened, self.status = area, opened, status
        self.doc = self.command = None
        self.events: list[tuple[float, float, int]] = []  # (seconds, length s, channel)
        self.index = -1
        area.time_ruler.overlay = self.paint

    def set(self, doc, command, events) -> None:
        """``events`` of the repair ``command`` (on the undo stack) on ``doc``."""
        self.doc, self.command = doc, command
        self.events, self.index = sorted(events), -1
        self.area.time_ruler.update()

    def shown(self) -> list[tuple[float, float, int]]:
        """The events, while their repair is applied to the open document."""
        doc, stack = self.opened.doc, self.opened.undo_stack
        if doc is None or doc is not self.doc or not any(
                stack.command(i) is self.command for i in range(stack.index())):
            return []
        return self.events

    def paint(self, painter, ruler) -> None:
        view, scale = ruler.view, ruler.width() / max(ruler.view.width, 1)
        for i, (seconds, _, _) in enumerate(self.shown()):
            if view.t0 <= seconds <= view.t1:
                painter.setPen(CURRENT if i == self.index else MARK)
                x = int(view.x_of(seconds) * scale)
                painter.drawLine(x, 0, x, 7)

    def step(self, direction: int) -> None:
        """To the next (``direction`` 1) or previous click."""
        events = self.shown()
        if not events:
            self.status.showMessage("No repaired clicks to step through (run Repair > "
                                      "De-click first)", 5000)
            return
        self.index = (self.index + direction) % len(events)
        seconds, length, channel = events[self.index]
        view = self.area.canvas.view
        if not view.t0 <= seconds <= view.t1:
            width = view.t1 - view.t0
            view.t0 = max(seconds - width / 2, 0.0)
            view.t1 = view.t0 + width
        self.area.view_changed()
        self.area.canvas.set_playhead(seconds)
        doc = self.opened.doc
        names = list(doc.audio.layout) or list(channel_names(doc.channels))
        self.status.showMessage(
            f"click {self.index + 1} of {len(events)} at {format_time(seconds)}, "
            f"{length * 1000:.1f} ms, channel {names[channel]}", 30000)
