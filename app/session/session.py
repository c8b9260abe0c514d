"""The editing session: what a user edits the open document with (the selection,
the brush, the paint channel and the clipboard), one Qt-free object shared by the
scripts' face (app.session.editor.Editor) and the window's
(app.gui.services.opened.OpenDocument), each of which adds the document and its
history.

Whoever shows a part of it subscribes to its event and is told each change, whoever
changed it (napari's model shared by scripts and the viewer):

    session.events.subscribe("selection", canvas_shows)   # called with the new value
    session.select(Selection.rect(1.0, 2.0, f_lo=0, f_hi=4000))

The events: "selection" (a app.session.selection.Selection or None), "brush" (a
:class:`BrushSettings`), "channel" (the channel edits go to: an int, or None for every
channel) and "clipboard" (a app.session.time_edit.TimeClip, a
app.session.spectral_clip.Clip, or None). The clipboard is the session's, not the
document's: it outlives the file it was copied from.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.errors import ParameterError
from engine.model.document import Document

EVENTS = ("selection", "brush", "channel", "clipboard")


class Events:
    """Listeners per event name, each called with the new value, in the order they
    subscribed."""

    def __init__(self):
        self._listeners: dict[str, list[Callable[[Any], None]]] = {e: [] for e in EVENTS}

    def subscribe(self, name: str, listener: Callable[[Any], None]) -> Callable[[], None]:
        """Call ``listener(value)`` at each change of ``name``; returns what unsubscribes it."""
        if name not in self._listeners:
            raise ParameterError(f"no session event {name!r}; use one of {', '.join(EVENTS)}")
        self._listeners[name].append(listener)
        return lambda: self._listeners[name].remove(listener)

    def emit(self, name: str, value) -> None:
        for listener in list(self._listeners[name]):
            listener(value)


@dataclass(frozen=True)
class BrushSettings:
    """What a stroke is painted with: the brush type, its parameter values, the
    curves that make them follow the pen, and what a stroke is called in the history
    (its preset's name, else None: the brush's)."""

    brush: str
    params: dict = field(default_factory=dict)
    curves: dict = field(default_factory=dict)
    label: str | None = None


class Session:
    def __init__(self):
        self.events = Events()
        self.selection = None  # app.session.selection.Selection, or None: nothing selected
        self.brush: BrushSettings | None = None  # None: none chosen yet (a script's)
        self.channel: int | None = None  # where edits go: one channel, or None: all
        self.clipboard = None  # what cut and copy took: a TimeClip or a spectral Clip

    def select(self, selection) -> None:
        """Make ``selection`` (None: nothing) the one edits act on."""
        self.selection = selection
        self.events.emit("selection", selection)

    def use_brush(self, settings: BrushSettings) -> None:
        self.brush = settings
        self.events.emit("brush", settings)

    def paint_on(self, channel: int | None) -> None:
        """Edits go to ``channel`` (None: every channel)."""
        if channel != self.channel:
            self.channel = channel
            self.events.emit("channel", channel)

    def keep(self, clip) -> None:
        """Put ``clip`` (what a cut or copy took) on the clipboard."""
        self.clipboard = clip
        self.events.emit("clipboard", clip)


def is_time_range(selection, doc: Document) -> bool:
    """Whether ``selection`` is a time range: a rectangle of every frequency (the Time
    select tool's, Select all's), which a verb cuts out of the file rather than out of
    its spectrum."""
    if selection is None or selection.kind != "rect" or selection.inverted:
        return False
    _, _, low, high = selection.span()
    return low <= 0.0 and high >= doc.sample_rate / 2 * (1 - 1e-9)


def time_span(selection, doc: Document) -> tuple[float, float] | None:
    """The seconds of the file a selection spans (None: no selection, an inverted one,
    or one that selects no time of the file)."""
    if selection is None or selection.inverted:
        return None
    t0, t1, _, _ = selection.span()
    end = doc.length / doc.sample_rate
    return (max(0.0, t0), min(t1, end)) if min(t1, end) > max(0.0, t0) else None
