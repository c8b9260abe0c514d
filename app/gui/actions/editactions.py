"""Edit > Cut, Copy, Paste, Delete, Trim to selection, Insert silence and Duplicate:
the time-range verbs (app.session.time_edit) on a time range (a selection of every
frequency; Trim, Duplicate: any selection's time span), pasted at the playhead; a
selection of some band is cut, copied and deleted as a spectral clip
(app.gui.actions.selectionedits). Each runs in a worker (progress, Cancel) and is one undo step that
swaps in the document it made (SwapCommand: undo brings the one before back, exact).
The clipboard is the session's (app.gui.services.opened): it outlives the file it was
copied from."""

import weakref
from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QInputDialog, QMenu, QStatusBar, QWidget

from app.gui.actions.fileactions import with_waveform
from app.gui.actions.menuaction import menu_action
from app.gui.actions.selectionedits import SelectionEdits
from app.gui.services.editing import PaintSession, Reselect, SwapCommand
from app.gui.services.opened import OpenDocument
from app.gui.services.window_jobs import Jobs
from app.gui.view.canvas import SpectrogramCanvas
from app.project.write import EditTracker
from app.session import time_edit
from app.session.selection import Selection
from app.session.session import is_time_range, time_span
from app.session.spectral_clip import Clip
from engine.progress import scaled

SHOWN_MS = 8000
ANALYSE_AFTER_MS = 300  # after a time edit, the view is drawn before the rest is analysed


class EditActions:
    """The verbs on the ``opened`` session: its document, selection and clipboard; the
    playhead on ``canvas``; dialogs over ``parent``; a time edit's new document made the
    one shown by ``install(session, tracker)``."""

    def __init__(self, parent: QWidget, opened: OpenDocument, canvas: SpectrogramCanvas,
                 jobs: Jobs, status: QStatusBar, *, install):
        self.parent, self.install, self.opened, self.canvas = parent, install, opened, canvas
        self.jobs, self.status = jobs, status
        self.spectral = SelectionEdits(self)

    def build_menu(self, menu: QMenu) -> list:
        """The entries, in the order and with the keys audio editors use; the canvas
        shows them on a right-click too, with Paste here (at the pointer)."""
        self.actions = [menu_action(menu, "Cu&t", self.cut, "Ctrl+X"),
                        menu_action(menu, "&Copy", self.copy, "Ctrl+C"),
                        menu_action(menu, "&Paste", self.paste, "Ctrl+V"),
                        menu_action(menu, "Paste &mixed in", lambda: self.paste(mode="add"),
                                    "Ctrl+Shift+V"),
                        menu_action(menu, "Paste &replacing", lambda: self.paste(
                            mode="replace"), "Ctrl+Alt+V"),
                        menu_action(menu, "Paste as new &layer", self.paste_as_layer),
                        menu_action(menu, "&Delete", self.delete, ["Delete", "Backspace"]),
                        menu_action(menu, "&Trim to selection", self.trim, "Ctrl+T"),
                        menu_action(menu, "D&uplicate", self.duplicate, "Ctrl+D"),
                        menu_action(menu, "Insert &silence…", self.ask_silence),
                        menu_action(menu, "Trans&form selection…", self.spectral.ask_transform,
                                    "Ctrl+Shift+T")]
        self.heal_action = menu_action(menu, "&Heal the hole a move leaves", lambda: None,
                                       checkable=True)
        self.actions.append(self.heal_action)
        self.canvas.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.canvas.customContextMenuRequested.connect(self._context_menu)
        return self.actions

    def _context_menu(self, at: QPoint) -> None:
        """The edit entries where the user right-clicked, and Paste here."""
        if self.opened.session is None:
            return
        menu = QMenu(self.canvas)
        menu.setObjectName("edit-context-menu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addActions(self.actions[:2])
        seconds = self.canvas.view.t_of(at.x())
        here = menu.addAction("Paste here", lambda: self._paste_at(seconds))
        here.setEnabled(self.opened.clipboard is not None)
        menu.addActions(self.actions[2:])
        menu.popup(self.canvas.mapToGlobal(at))

    def _paste_at(self, seconds: float) -> None:
        doc = self.opened.doc
        self.canvas.set_playhead(min(max(seconds, 0.0), doc.length / doc.sample_rate))
        self.paste()

    # -- the verbs ---------------------------------------------------------------
    def copy(self) -> None:
        spectral = self._spectral()
        if spectral is not None:
            self.spectral.copy(spectral)
            return
        span = self._span("Copy")
        if span is not None:
            doc = self.opened.doc
            s0, s1 = self._samples(span)
            clip = time_edit.copy_range(doc, self.opened.session.synth.waveform(), s0, s1)
            self.opened.keep(clip)
            self.status.showMessage(f"Copied {_seconds(span)} ({clip.nbytes / 2**20:.1f} MiB)",
                                    SHOWN_MS)

    def cut(self) -> None:
        spectral = self._spectral()
        if spectral is not None:
            self.spectral.cut(spectral)
            return
        span = self._span("Cut")
        if span is not None:
            s0, s1 = self._samples(span)
            self._run(f"cut {_seconds(span)}", time_edit.delete_range, s0, s1,
                      after=lambda: self._after(span[0]),
                      keep=lambda doc, wave: time_edit.copy_range(doc, wave, s0, s1))

    def delete(self) -> None:
        spectral = self._spectral()
        if spectral is not None:
            self.spectral.delete(spectral)
            return
        span = self._span("Delete")
        if span is not None:
            s0, s1 = self._samples(span)
            self._run(f"delete {_seconds(span)}", time_edit.delete_range, s0, s1,
                      after=lambda: self._after(span[0]))

    def trim(self) -> None:
        span = self._span("Trim")
        if span is not None:
            s0, s1 = self._samples(span)
            self._run(f"trim to {_seconds(span)}", time_edit.trim_to, s0, s1,
                      after=lambda: self._after(0.0))

    def duplicate(self) -> None:
        span = self._span("Duplicate")
        if span is not None:
            s0, s1 = self._samples(span)
            self._run(f"duplicate {_seconds(span)}", time_edit.duplicate_range, s0, s1,
                      after=lambda: self._after(span[1], span[1] + span[1] - span[0]))

    def paste(self, mode: str = "insert") -> None:
        if self.opened.session is None:
            return
        clip = self.opened.clipboard
        if clip is None:
            self.status.showMessage("Paste: the clipboard is empty; copy or cut a time range "
                                    "first", SHOWN_MS)
            return
        at = self._at()
        if isinstance(clip, Clip):
            self.spectral.paste(clip, at, mode="replace" if mode == "replace" else "add")
            return
        at_sample = min(self.opened.doc.length, round(at * self.opened.doc.sample_rate))
        how = {"insert": "", "add": " mixed in", "replace": " replacing"}[mode]
        self._run(f"paste {clip.seconds:.2f} s{how}", time_edit.paste_clip, clip, at_sample,
                  mode=mode, after=lambda: self._after(at, at + clip.seconds))

    def paste_as_layer(self) -> None:
        """A spectral clip into a new layer, at the playhead."""
        if self.opened.session is None:
            return
        if not isinstance(self.opened.clipboard, Clip):
            self.status.showMessage("Paste as new layer: copy a selection of some band "
                                    "first (a time range pastes into the file)", SHOWN_MS)
            return
        self.spectral.paste(self.opened.clipboard, self._at(), as_layer=True)

    def ask_silence(self) -> None:
        """Insert silence…: how long, asked (not blocking); inserted at the playhead."""
        if self.opened.session is None:
            return
        dialog = QInputDialog(self.parent)
        dialog.setObjectName("insert-silence")
        dialog.setWindowTitle("Insert silence")
        dialog.setLabelText(f"Seconds of silence to insert at {self._at():.3f} s:")
        dialog.setInputMode(QInputDialog.InputMode.DoubleInput)
        dialog.setDoubleRange(0.001, time_edit.MAX_SILENCE_S)
        dialog.setDoubleDecimals(3)
        dialog.setDoubleValue(1.0)
        dialog.doubleValueSelected.connect(self.insert_silence)
        dialog.open()

    def insert_silence(self, seconds: float) -> None:
        at = self._at()
        at_sample = min(self.opened.doc.length, round(at * self.opened.doc.sample_rate))
        self._run(f"insert {seconds:.3f} s of silence", time_edit.insert_silence, at_sample,
                  seconds, after=lambda: self._after(at, at + seconds))

    # -- how they run ----------------------------------------------------------------
    def _spectral(self) -> Selection | None:
        """The selection, when it is not a time range (a spectral edit's)."""
        selection = self.opened.selection
        if self.opened.session is None or is_time_range(selection, self.opened.doc):
            return None
        return selection

    def _span(self, verb: str) -> tuple[float, float] | None:
        if self.opened.session is None or self.jobs.editing_blocked(verb):
            return None
        span = time_span(self.opened.selection, self.opened.doc)
        if span is None:
            self.status.showMessage(f"{verb}: select a time range first (the Time select "
                                    "tool, T)", SHOWN_MS)
        return span

    def _samples(self, span: tuple[float, float]) -> tuple[int, int]:
        doc = self.opened.doc
        return tuple(min(doc.length, round(t * doc.sample_rate)) for t in span)

    def _at(self) -> float:
        """Where a paste goes: the playhead, else the selection's start, else the start."""
        if self.canvas.playhead is not None:
            return self.canvas.playhead
        span = time_span(self.opened.selection, self.opened.doc)
        return span[0] if span else 0.0

    def _run(self, label: str, verb: Callable, *args, after: Callable[[], None],
             keep: Callable | None = None, **options) -> None:
        """The document ``verb(doc, wave, *args, **options)`` makes (app.session.time_edit)
        in a worker (and ``keep(doc, wave)``'s clip for the clipboard), then swapped in as
        one undo step named ``label``, then ``after()``."""
        if self.jobs.editing_blocked(label):
            return
        session, tracker = self.opened.session, self.opened.tracker
        wave = session.start_reading()  # the splices wait while the worker reads it
        view = self.canvas.view  # what it shows, and a view's width either side (its tiles)
        shown = view.t0 - (view.t1 - view.t0), view.t1 + (view.t1 - view.t0)

        def work(progress, cancel):
            clip = None if keep is None else keep(session.doc, wave)
            doc = verb(session.doc, wave, *args, progress=scaled(progress, 0, 0.6),
                       cancel=cancel, **options)
            frames = tuple(min(doc.n_frames, max(0, round(doc.frame_of(t)))) for t in shown)
            return clip, *with_waveform(doc, progress, cancel, frames=frames)

        def done(result):
            clip, doc, synth = result
            if clip is not None:
                self.opened.keep(clip)
            stack, before = self.opened.undo_stack, self.opened.selection
            command = SwapCommand(self.install, (session, tracker),
                                  (PaintSession(doc, stack, session.history, synth),
                                   EditTracker(doc)), label)
            stack.push(command)
            # the rest of its analysis behind the window, once the edited view is drawn
            edited = weakref.ref(doc)
            QTimer.singleShot(ANALYSE_AFTER_MS, stack,
                              lambda: (alive := edited()) is not None and alive.analyse_behind())
            after()
            command.reselect = Reselect(before, self.opened.selection, self.opened.select)
            self.status.showMessage(f"{label[0].upper()}{label[1:]}: the file is now "
                                    f"{doc.length / doc.sample_rate:.2f} s", SHOWN_MS)

        worker = self.jobs.run(label[0].upper() + label[1:], work, done, blocks_editing=True)
        if worker is None:
            session.done_reading()
        else:
            worker.finished.connect(session.done_reading)

    def _after(self, at: float, end: float | None = None) -> None:
        """The playhead at ``at``; what an edit put there selected (a time range)."""
        doc = self.opened.doc
        self.canvas.set_playhead(at)
        self.opened.select(None if end is None else Selection.rect(
            at, min(end, doc.length / doc.sample_rate), f_lo=0.0, f_hi=doc.sample_rate / 2))


def _seconds(span: tuple[float, float]) -> str:
    return f"{span[0]:.2f}-{span[1]:.2f} s"

