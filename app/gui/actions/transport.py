"""Playback controls of the main window: play/pause (Space from anywhere), from
the cursor, the selection (looped, or only its frequency band), scrubbing in
the time ruler, and the moving playhead."""

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStatusBar

from app.gui.actions.compare_ab import CompareActions
from app.gui.actions.menuaction import menu_action
from app.gui.services.opened import OpenDocument
from app.gui.services.playback import Player
from app.gui.view.canvas import SpectrogramCanvas
from app.gui.widgets.levelmeter import LevelMeter
from engine.model.resynth import masked_audio


class Transport(QObject):
    """Plays the ``opened`` document through ``player`` (what ``compare`` says it
    reads), the playhead on ``canvas``; ``stopped`` says playback was stopped."""

    stopped = Signal()

    def __init__(self, player: Player, canvas: SpectrogramCanvas, opened: OpenDocument,
                 compare: CompareActions, level_meter: LevelMeter, status: QStatusBar):
        super().__init__(canvas)
        self.player, self.canvas, self.opened = player, canvas, opened
        self.compare, self.level_meter, self.status = compare, level_meter, status
        self.playhead_timer = QTimer(self, interval=30, timeout=self._tick_playhead)
        # the Play menu's entries, made by build_menu
        self.play_action: QAction | None = None
        self.stop_action: QAction | None = None
        self.loop_action: QAction | None = None
        self.band_action: QAction | None = None
        canvas.playheadPlaced.connect(self.place_playhead)

    def build_menu(self, menu: QMenu) -> None:
        # Space is a window shortcut: a focused check box or button cannot take it; a text
        # field (which types it) and the canvas (tap vs Space+drag) override it
        self.play_action = menu_action(menu, "Play / pause", self.toggle_play, "Space")
        self.play_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        menu_action(menu, "Play from &cursor", self.play_from_cursor, "Shift+Space")
        menu_action(menu, "Play &selection", self.play_selection, "Ctrl+Space")
        menu_action(menu, "Play selection &alone", self.play_selection_alone,
                    "Ctrl+Shift+Space")
        self.loop_action = menu_action(menu, "&Loop selection", lambda: None, "L",
                                       checkable=True)
        self.band_action = menu_action(menu, "Selected &band only", lambda: None,
                                       checkable=True)
        self.stop_action = menu_action(menu, "S&top", self.stop, "Ctrl+.")

    def toggle_play(self) -> None:
        if self.player.playing:
            self.stop()
        elif self.opened.selection is not None:
            self.play_selection()
        else:
            at = self.canvas.playhead
            self.play_from(self.canvas.view.t0 if at is None else at)

    def place_playhead(self, seconds: float) -> None:
        """A click on the canvas: the playhead goes there, and playback with it."""
        doc = self.opened.doc
        if doc is None:
            return
        seconds = min(max(seconds, 0.0), doc.length / doc.sample_rate)
        if self.player.playing:
            self.play_from(seconds)
        self.canvas.set_playhead(seconds)

    def play_from_cursor(self) -> None:
        at = self.canvas.pointer_seconds()
        self.play_from(self.canvas.view.t0 if at is None else at)

    def play_from(self, seconds: float) -> None:
        if self.opened.session is None:
            return
        doc = self.opened.doc
        start = min(max(0, int(seconds * doc.sample_rate)), doc.length - 1)
        self.play(self.compare.playback_source(), start, doc.length, loop=False)

    def play_selection(self, alone: bool | None = None) -> None:
        """The selection's time span (an inverted one: the whole file), looped if Play >
        Loop selection is on; ``alone`` (default: Play > Selected band only): only what
        the selection holds, through its mask."""
        sel, session = self.opened.selection, self.opened.session
        if session is None or sel is None:
            return
        doc = session.doc
        t0, t1 = (0.0, doc.length / doc.sample_rate) if sel.inverted else sel.span()[:2]
        start = max(0, int(t0 * doc.sample_rate))
        stop = min(doc.length, max(start + 1, int(t1 * doc.sample_rate)))
        source = self.compare.playback_source()
        if self.band_action.isChecked() if alone is None else alone:
            session.finish_mix()
            rect = sel.cells(doc)
            held = masked_audio(doc, rect, sel.mask(doc, rect), sample0=start, sample1=stop)
            source = lambda a, b: held[:, a - start:b - start]  # noqa: E731
        self.play(source, start, stop, loop=self.loop_action.isChecked())

    def play_selection_alone(self) -> None:
        self.play_selection(alone=True)

    def scrub(self, seconds: float) -> None:
        """The pointer dragged in the time ruler: the sound follows it, at its speed."""
        session = self.opened.session
        if session is None:
            return
        doc = session.doc
        if not session.synth.ready:
            self.status.showMessage("the audio is still being made; scrub in a moment", 3000)
            return
        at = min(max(0, int(seconds * doc.sample_rate)), doc.length - 1)
        self.player.scrub(self.compare.playback_source(), doc.sample_rate, doc.channels,
                          doc.length, at)
        self.playhead_timer.start()
        self.level_meter.start()
        self.canvas.set_playhead(at / doc.sample_rate)

    def end_scrub(self) -> None:
        if self.player.tape is not None:
            self.stop()

    def play(self, source, start: int, stop: int, *, loop: bool) -> None:
        """Play ``source`` (``(start, stop) -> [ch, n]``) from ``start`` to ``stop``."""
        session = self.opened.session
        doc = session.doc
        if not session.synth.ready:
            self.status.showMessage("the audio is still being made; play in a moment", 3000)
            return
        self.player.play(source, doc.sample_rate, doc.channels, start, stop, loop)
        self.playhead_timer.start()
        self.level_meter.start()
        self.play_action.setIconText("Pause")
        if self.player.output.is_null:
            self.status.showMessage("no audio output: playing silently "
                                    f"({self.player.output.reason})", 5000)

    def stop(self) -> None:
        self.player.stop()
        self.playhead_timer.stop()
        self.play_action.setIconText("Play")
        self.stopped.emit()

    def _tick_playhead(self) -> None:
        frame = self.player.position()
        if frame is None:  # played to its end
            self.stop()
            return
        self.canvas.set_playhead(frame / self.opened.doc.sample_rate)
