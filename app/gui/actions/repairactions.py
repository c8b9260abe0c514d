"""The Repair menu: de-noise, de-click, de-hum and de-clip (app.session.repairs) over the
selection (its time range and band, the selected lane's channel) or the whole file
(every channel, unless the View panel's Paint channel names one).

Apply and Preview run the one pipeline of app.session.repairs in a Worker (progress
and Cancel in the status bar): Apply prepares the repair there (the repaired
audio and the coefficients that make it, reading the document) and the GUI thread
writes it and pushes its step, so the canvas, the audio and the undo stack only
ever see a whole repair, as one undo step, and a cancelled one leaves the
document as it was. Preview plays the repaired audio of the same plan, looped
(Compare then plays it unprocessed): what Apply then writes, bit for bit. The
dialogs are not modal; de-noise's learnt profile stays with the document until
another is learnt. The clicks de-click repaired are marked in the time ruler
(app.gui.actions.repairmarks).
"""

from PySide6.QtWidgets import QMenu, QMenuBar, QStatusBar, QWidget

from app.gui.actions.compare_ab import Switch, reader
from app.gui.actions.menuaction import menu_action
from app.gui.actions.repairmarks import ClickMarks
from app.gui.actions.transport import Transport
from app.gui.services.opened import OpenDocument
from app.gui.services.window_jobs import Jobs
from app.gui.view.canvas import SpectrogramCanvas
from app.gui.widgets.panels import ViewPanel
from app.gui.widgets.repairdialog import RepairDialog
from app.session.repairs import MODULES, plan, prepare, write
from engine.io.layout import channel_names

PREVIEW_SECONDS = 10.0  # with no selection: this much of the view, from its start
SHOWN_MS = 30000  # how long the status bar shows a report


class RepairActions:
    """The Repair menu over the ``opened`` session's document: dialogs over
    ``window``, the region from the session's selection and paint channel (and
    ``view_panel``'s Paint channel), work through ``jobs``, previews through
    ``transport``."""

    def __init__(self, parent: QWidget, opened: OpenDocument, canvas: SpectrogramCanvas,
                 jobs: Jobs, transport: Transport, click_marks: ClickMarks,
                 status: QStatusBar, *, view_panel: ViewPanel):
        self.parent, self.opened, self.canvas, self.jobs = parent, opened, canvas, jobs
        self.transport, self.status = transport, status
        self.click_marks, self.view_panel = click_marks, view_panel
        self.repair_dialog: RepairDialog | None = None
        self.preview_dialog: RepairDialog | None = None  # the dialog whose preview plays
        self.learnt = None  # (session, seconds): de-noise's profile, kept with its document
        self.repair_actions: dict = {}  # made by build_menu, with event_actions
        self.event_actions: list = []
        transport.stopped.connect(self._stopped)

    def build_menu(self, bar: QMenuBar) -> QMenu:
        menu = bar.addMenu("&Repair")
        self.repair_actions = {
            name: menu_action(menu, f"{m.title}…", lambda n=name: self.open_repair(n))
            for name, m in MODULES.items()}
        menu.addSeparator()
        self.event_actions = [
            menu_action(menu, "&Next repaired click", lambda: self.click_marks.step(1),
                        "Ctrl+]"),
            menu_action(menu, "&Previous repaired click", lambda: self.click_marks.step(-1),
                        "Ctrl+["),
            menu_action(menu, "Put &back this click", self._put_back)]
        return menu

    # -- the dialog ------------------------------------------------------------------
    def open_repair(self, name: str) -> RepairDialog | None:
        """The module's dialog, not modal: the canvas, the menus, Compare (Ctrl+B, from
        the dialog too) and the status bar's Cancel work while it is open."""
        if self.opened.session is None:
            return None
        if self.repair_dialog is not None:
            self.repair_dialog.close()
        dialog = self.repair_dialog = RepairDialog(MODULES[name], self.parent)
        dialog.addAction(self.transport.compare.compare_action)
        self.refresh(dialog)
        dialog.applyRequested.connect(lambda: self.apply_repair(dialog))
        dialog.previewToggled.connect(lambda on: self.preview_repair(dialog, on))
        dialog.learnRequested.connect(lambda: self.learn_profile(dialog))
        refresh = lambda *_: self.refresh(dialog)  # noqa: E731
        dialog.activated.connect(refresh)
        unsubscribe = [self.opened.events.subscribe(event, refresh)
                       for event in ("selection", "channel")]
        self.view_panel.paintChannelChanged.connect(refresh)
        dialog.finished.connect(lambda _: self._dialog_closed(dialog, refresh, unsubscribe))
        dialog.show()
        return dialog

    def refresh(self, dialog: RepairDialog) -> None:
        """What ``dialog`` says it acts on and, for de-noise, the profile it uses."""
        dialog.show_scope(self.describe_region())
        if dialog.module.learns:
            dialog.show_profile(self.profile())

    def _dialog_closed(self, dialog: RepairDialog, refresh, unsubscribe: list) -> None:
        for stop in unsubscribe:
            stop()
        self.view_panel.paintChannelChanged.disconnect(refresh)
        if self.preview_dialog is dialog:
            self.transport.stop()
        if self.repair_dialog is dialog:
            self.repair_dialog = None

    def region(self) -> dict:
        """Where a repair acts: the selection's time range, band and the paint channel
        (the lane it was drawn in); with none (or an inverted one) the whole file, on
        every channel unless the Paint channel names one."""
        doc, sel = self.opened.doc, self.opened.selection
        if sel is None or sel.inverted:
            return {"channel": self.view_panel.channel(self.view_panel.paint_channel)}
        region = {"channel": self.opened.channel}
        t0, t1, f_lo, f_hi = sel.span()
        region["start"], region["end"] = max(t0, 0.0), min(t1, doc.length / doc.sample_rate)
        if f_lo > 1.0:
            region["low"] = f_lo
        if f_hi < 0.99 * doc.sample_rate / 2:
            region["high"] = f_hi
        return region

    def describe_region(self) -> str:
        r, doc = self.region(), self.opened.doc
        names = list(doc.audio.layout) or list(channel_names(doc.channels))
        where = "all channels" if r["channel"] is None else f"channel {names[r['channel']]}"
        if "start" not in r:
            return f"the whole file, {where}"
        band = (f", {r.get('low', 0):,.0f}-{r.get('high', doc.sample_rate / 2):,.0f} Hz"
                if "low" in r or "high" in r else "")
        return f"the selection {r['start']:.2f}-{r['end']:.2f} s{band}, {where}"

    def profile(self) -> tuple[float, float] | None:
        """De-noise's learnt profile (seconds) of the open document; None: learnt from
        the quietest parts."""
        if self.learnt is None or self.learnt[0] is not self.opened.session:
            return None
        return self.learnt[1]

    def learn_profile(self, dialog: RepairDialog) -> None:
        """De-noise learns the noise from the selection's time range (RX's Learn); the
        document keeps it (a dialog opened later shows it) until another is learnt."""
        sel = self.opened.selection
        if sel is None or sel.inverted:
            self.status.showMessage(f"{dialog.module.title}: select a stretch of noise alone "
                                    "first, then learn it", 8000)
            return
        t0, t1 = sel.span()[:2]
        doc = self.opened.doc
        self.learnt = (self.opened.session, (max(t0, 0.0), min(t1, doc.length / doc.sample_rate)))
        dialog.show_profile(self.learnt[1])

    def options(self, dialog: RepairDialog) -> dict:
        """What the pipeline is given: the region, the dialog's settings, the profile."""
        options = {**self.region(), "settings": dialog.settings()}
        if dialog.module.learns:
            options["profile"] = self.profile()
        return options

    # -- apply -----------------------------------------------------------------------
    def apply_repair(self, dialog: RepairDialog):
        """Run the dialog's module over the region in a worker: one undo step."""
        if self.opened.session is None or self.jobs.editing_blocked(dialog.module.title):
            return None
        if self.preview_dialog is not None:
            self.transport.stop()
        self.refresh(dialog)
        name, title, options = dialog.module.name, dialog.module.title, self.options(dialog)
        session, doc = self.opened.session, self.opened.doc
        edited = session.start_reading()  # the splices wait while the worker reads it

        def work(progress, cancel):
            return prepare(doc, edited, name, progress=progress, cancel=cancel, **options)

        def done(prepared):
            if self.opened.session is not session:
                return  # another document meanwhile
            report = write(doc, *prepared)
            if report.changed:
                command = session.push(report.step)
                self.canvas.update()
                if MODULES[name].marks:
                    self.click_marks.set(doc, command, report)
            self.status.showMessage(report.line(), SHOWN_MS)

        return self._run(title, work, done, session)

    def _run(self, label: str, work, done, session):
        """``work`` in a worker that reads the document and ``session``'s audio (the
        splices and editing wait for it)."""
        worker = self.jobs.run(label, work, done, blocks_editing=True)
        if worker is None:
            session.done_reading()
        else:
            worker.finished.connect(session.done_reading)
        return worker

    def _put_back(self) -> None:
        if self.opened.session is not None and not self.jobs.editing_blocked("Put back"):
            self.click_marks.put_back_current()

    # -- preview ---------------------------------------------------------------------
    def preview_repair(self, dialog: RepairDialog, on: bool):
        """Loop the region as Apply would leave it (the same plan; the document is not
        touched); ``on`` False stops it and normal playback is back."""
        if not on:
            if self.preview_dialog is dialog:
                self.transport.stop()
            return None
        if self.opened.session is None or not self.opened.session.synth.ready or \
                self.jobs.editing_blocked(f"Preview {dialog.module.title}"):
            dialog.preview_stopped()
            return None
        self.refresh(dialog)
        session, doc, module = self.opened.session, self.opened.doc, dialog.module
        options, sr, n = self.options(dialog), doc.sample_rate, doc.length
        if "start" not in options:  # the whole file: hear a stretch of the view as a region
            s0 = min(max(round(max(self.canvas.view.t0, 0.0) * sr), 0), n - 1)
            s1 = min(max(round(self.canvas.view.t1 * sr), s0 + 1), n,
                     s0 + round(PREVIEW_SECONDS * sr))
            options["start"], options["end"] = s0 / sr, s1 / sr
        edited = session.start_reading()

        def work(progress, cancel):
            planned = plan(doc, edited, module.name, progress=progress, cancel=cancel,
                           **options)
            mix = edited[:, planned.s0:planned.s1].copy()
            return planned, mix, planned.heard(mix)

        def done(made):
            planned, mix, heard = made
            if self.opened.session is not session or self.repair_dialog is not dialog or \
                    not dialog.preview.isChecked():
                self._preview_off(dialog)
                return
            self.preview_dialog = dialog
            s0, s1 = planned.s0, planned.s1
            source = Switch(reader(heard, s1, s0), reader(mix, s1, s0),
                            self.transport.compare.bypass)
            self.transport.play(source, s0, s1, loop=True)
            self.status.showMessage(
                f"Preview of {module.title}, {s0 / sr:.2f}-{s1 / sr:.2f} s, looped: " +
                ("; ".join([planned.report.summary, *planned.report.notes])
                 if planned.change is not None else f"{module.nothing} here") +
                " (Compare plays it unprocessed)", SHOWN_MS)

        worker = self._run(f"Preview {module.title}", work, done, session)
        if worker is None:
            dialog.preview_stopped()
        else:
            worker.cancelled.connect(lambda: self._preview_off(dialog))
            worker.failed.connect(lambda _: self._preview_off(dialog))
        return worker

    def _preview_off(self, dialog: RepairDialog) -> None:
        if self.repair_dialog is dialog:  # else closed (and deleted)
            dialog.preview_stopped()

    def _stopped(self) -> None:
        """Playback stopped: a preview playing ends with it (its button says so)."""
        if self.preview_dialog is not None:
            dialog, self.preview_dialog = self.preview_dialog, None
            dialog.preview_stopped()
