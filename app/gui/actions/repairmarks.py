"""The clicks a de-click repaired, as marks in the time ruler (the one stepped to
brighter) that Repair > Next/Previous repaired click steps through: the playhead
goes to each, the view follows and the status bar says which. Repair > Put back
this click takes the repair of the click stepped to off again, as its own undo
step (its mark turns grey). Shown while the repair is applied (undone: gone)."""

from PySide6.QtGui import QColor, QUndoCommand
from PySide6.QtWidgets import QStatusBar

from app.gui.services.opened import OpenDocument
from app.gui.view.canvas_area import CanvasArea
from app.gui.view.viewstate import format_time
from app.session.repairs import Report, put_back
from engine.errors import ParameterError
from engine.io.layout import channel_names

MARK, CURRENT, PUT_BACK = QColor(90, 200, 255), QColor(255, 255, 255), QColor(110, 110, 110)


class ClickMarks:
    """The marks in ``area``'s time ruler, for the ``opened`` document."""

    def __init__(self, area: CanvasArea, opened: OpenDocument, status: QStatusBar):
        self.area, self.opened, self.status = area, opened, status
        self.doc = self.command = self.report = None
        self.events: list[tuple[float, float, int]] = []  # (seconds, length s, channel)
        self.order: list[int] = []  # the report's index of each event, in time order
        self.put: dict[int, QUndoCommand] = {}  # event -> the command that put it back
        self.index = -1
        area.time_ruler.overlay = self.paint

    def set(self, doc, command, report: Report) -> None:
        """The events of the repair ``report``, whose ``command`` is on the undo stack,
        on ``doc``."""
        self.doc, self.command, self.report = doc, command, report
        self.order = sorted(range(len(report.events)), key=lambda i: report.events[i])
        self.events = [report.events[i] for i in self.order]
        self.put, self.index = {}, -1
        self.area.time_ruler.update()

    def _applied(self, command) -> bool:
        stack = self.opened.undo_stack
        return any(stack.command(i) is command for i in range(stack.index()))

    def shown(self) -> list[tuple[float, float, int]]:
        """The events, while their repair is applied to the open document."""
        doc = self.opened.doc
        if doc is None or doc is not self.doc or not self._applied(self.command):
            return []
        return self.events

    def is_put_back(self, i: int) -> bool:
        return i in self.put and self._applied(self.put[i])

    def paint(self, painter, ruler) -> None:
        view, scale = ruler.view, ruler.width() / max(ruler.view.width, 1)
        for i, (seconds, _, _) in enumerate(self.shown()):
            if view.t0 <= seconds <= view.t1:
                painter.setPen(CURRENT if i == self.index else
                               PUT_BACK if self.is_put_back(i) else MARK)
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
            f"{length * 1000:.1f} ms, channel {names[channel]}" +
            (" (put back)" if self.is_put_back(self.index) else ""), 30000)

    def put_back_current(self) -> None:
        """Put back the click stepped to: its repair taken off, one undo step."""
        events = self.shown()
        if not events or not 0 <= self.index < len(events):
            self.status.showMessage("Step to a repaired click first (Repair > Next repaired "
                                    "click)", 5000)
            return
        which = f"click {self.index + 1} of {len(events)}"
        if self.is_put_back(self.index):
            self.status.showMessage(f"{which} is already put back (Edit > Undo repairs it "
                                    "again)", 5000)
            return
        try:
            done = put_back(self.doc, self.report, self.order[self.index])
        except ParameterError as e:
            self.status.showMessage(f"{which}: {e}", 10000)
            return
        if done is None:
            self.status.showMessage(f"{which}: the repair changed nothing there", 5000)
            return
        self.put[self.index] = self.opened.session.push(done)
        self.area.canvas.update()
        self.area.time_ruler.update()
        self.status.showMessage(f"{which} put back as it was before De-click "
                                "(Edit > Undo repairs it again)", 30000)
