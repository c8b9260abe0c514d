"""The Repair menu: de-noise, de-click, de-hum and de-clip (app.session.repairs) over the
selection (its time range and band, the selected lane's channel) or the whole file.

Apply runs the module in a Worker (progress and Cancel in the status bar) on a
view of the document that reads it and keeps its writes (:class:`_KeptWrites`);
the GUI thread then writes them and pushes the report's step, so the canvas, the
audio and the undo stack only ever see a whole repair, as one undo step, and a
cancelled one leaves the document as it was. Preview processes a copy of the
region's audio in a worker and loops it (Compare then plays it unprocessed).
The clicks de-click repaired are marked in the time ruler (app.gui.actions.repairmarks).
"""

import numpy as np
from PySide6.QtWidgets import QMainWindow, QMenu, QMenuBar, QStatusBar

from app.gui.actions.compare_ab import Switch, reader
from app.gui.actions.menuaction import menu_action
from app.gui.actions.repairmarks import ClickMarks
from app.gui.actions.transport import Transport
from app.gui.services.editing import StrokeCommand
from app.gui.services.opened import OpenDocument
from app.gui.services.window_jobs import Jobs
from app.gui.view.canvas import SpectrogramCanvas
from app.gui.widgets.repairdialog import RepairDialog
from app.session.repairs import FULL_SCALE, MODULES, _band, repair, settings_of
from engine.io.layout import channel_names
from engine.repair import guard

PREVIEW_SECONDS = 10.0  # with no selection: this much of the view, from its start
SHOWN_MS = 30000  # how long the status bar shows a report


class _KeptWrites:
    """The document as a repair in a worker sees it: everything is read from it, and
    what the repair writes is kept, for the GUI thread to write (:meth:`write_to`)."""

    def __init__(self, doc):
        self._doc, self.writes = doc, []

    def __getattr__(self, name):
        return getattr(self._doc, name)

    def write_complex(self, rect, coeffs, channel=None, *, layer=None):
        self.writes.append((rect, coeffs, channel, layer))
        return rect

    def write_to(self, doc) -> None:
        for rect, coeffs, channel, layer in self.writes:
            doc.write_complex(rect, coeffs, channel=channel, layer=layer)


class RepairActions:
    """The Repair menu over the ``opened`` document: dialogs over ``window``, the
    region from ``canvas``'s selection and ``paint_channel()``, work through ``jobs``,
    previews through ``transport``."""

    def __init__(self, window: QMainWindow, opened: OpenDocument, canvas: SpectrogramCanvas,
                 jobs: Jobs, transport: Transport, paint_channel, click_marks: ClickMarks,
                 status: QStatusBar):
        self.window, self.opened, self.canvas, self.jobs = window, opened, canvas, jobs
        self.transport, self.paint_channel, self.status = transport, paint_channel, status
        self.click_marks = click_marks
        self.repair_dialog: RepairDialog | None = None
        self.preview_dialog: RepairDialog | None = None  # the dialog whose preview plays
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
        if self.opened.session is None:
            return None
        if self.repair_dialog is not None:
            self.repair_dialog.close()
        dialog = self.repair_dialog = RepairDialog(MODULES[name], self.window)
        dialog.show_scope(self.describe_region())
        dialog.applyRequested.connect(lambda: self.apply_repair(dialog))
        dialog.previewToggled.connect(lambda on: self.preview_repair(dialog, on))
        dialog.learnRequested.connect(lambda: self.learn_profile(dialog))
        refresh = lambda *_: dialog.show_scope(self.describe_region())  # noqa: E731
        self.canvas.selectionChanged.connect(refresh)
        dialog.finished.connect(lambda _: self._dialog_closed(dialog, refresh))
        dialog.open()
        return dialog

    def _dialog_closed(self, dialog: RepairDialog, refresh) -> None:
        self.canvas.selectionChanged.disconnect(refresh)
        if self.preview_dialog is dialog:
            self.transport.stop()
        if self.repair_dialog is dialog:
            self.repair_dialog = None

    def region(self) -> dict:
        """Where a repair acts: the selection's time range and band (an inverted
        selection: the whole file), the paint channel (the selected lane)."""
        doc, sel = self.opened.doc, self.canvas.selection
        region = {"channel": self.paint_channel()}
        if sel is not None and not sel.inverted:
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

    def learn_profile(self, dialog: RepairDialog) -> None:
        """De-noise learns the noise from the selection's time range (RX's Learn)."""
        sel = self.canvas.selection
        if sel is None or sel.inverted:
            self.status.showMessage("De-noise: select a stretch of noise alone first, "
                                         "then learn it", 8000)
            return
        t0, t1 = sel.span()[:2]
        doc = self.opened.doc
        dialog.show_profile((max(t0, 0.0), min(t1, doc.length / doc.sample_rate)))

    # -- apply -----------------------------------------------------------------------
    def apply_repair(self, dialog: RepairDialog):
        """Run the dialog's module over the region in a worker: one undo step."""
        if self.opened.session is None or self.jobs.editing_blocked(dialog.module.title):
            return None
        if self.preview_dialog is not None:
            self.transport.stop()
        name, title = dialog.module.name, dialog.module.title
        settings, profile, region = dialog.settings(), dialog.profile, self.region()
        session, doc = self.opened.session, self.opened.doc
        edited = session.start_reading()  # the splices wait while the worker reads it
        kept = _KeptWrites(doc)

        def work(progress, cancel):
            return repair(kept, edited, name, profile=profile, settings=settings,
                          progress=progress, cancel=cancel, **region)

        def done(report):
            if self.opened.session is not session:
                return  # another document meanwhile
            if report.changed:
                kept.write_to(doc)
                command = StrokeCommand(doc, report.step)
                self.opened.undo_stack.push(command)
                self.canvas.update()
                if name == "declick":
                    self.click_marks.set(doc, command, report)
            self.status.showMessage(report.line(), SHOWN_MS)

        worker = self.jobs.run(title, work, done, blocks_editing=True)
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
        """Loop the region processed by the dialog's module (a copy; the document is
        not touched); ``on`` False stops it and normal playback is back."""
        if not on:
            if self.preview_dialog is dialog:
                self.transport.stop()
            return None
        if self.opened.session is None or not self.opened.session.synth.ready:
            dialog.preview_stopped()
            return None
        session, doc, module = self.opened.session, self.opened.doc, dialog.module
        region = self.region()
        sr, n = doc.sample_rate, doc.length
        if "start" in region:
            s0, s1 = round(region["start"] * sr), round(region["end"] * sr)
        else:
            s0 = round(max(self.canvas.view.t0, 0.0) * sr)
            s1 = min(round(self.canvas.view.t1 * sr), s0 + round(PREVIEW_SECONDS * sr))
        s0, s1 = min(max(s0, 0), n - 1), min(max(s1, s0 + 1), n)
        ctx = round(module.context_s * sr)
        a0, a1 = max(0, s0 - ctx), min(n, s1 + ctx)
        session.finish_mix()
        edited = session.synth.cached(a0, a1)
        chans = list(doc.channel_indices(region["channel"]))
        extra = {}
        if dialog.profile is not None:
            p0, p1 = (round(t * sr) for t in dialog.profile)
            extra["profile"] = session.synth.cached(p0, p1)[chans].astype(np.float64)
        values = settings_of(module, dialog.settings(), module.name)
        reduce_gain = values.pop("gain", "keep") == "reduce"

        def work(progress, cancel):
            x = edited[chans].astype(np.float64)
            outcome = module.run(x, sr, values, progress=progress, cancel=cancel, **extra)
            out = edited.copy()
            if outcome.summary:
                d = _band(outcome.samples - x, sr, region.get("low"), region.get("high"))
                y, _ = guard.safe(x, x + d, sr, louder_db=module.louder_db +
                                  values.get("headroom_db", 0.0))
                peak = float(np.abs(y).max())
                if reduce_gain and peak > FULL_SCALE:
                    y *= FULL_SCALE / peak
                out[chans] = y
            return out[:, s0 - a0:s1 - a0], outcome.summary

        def done(made):
            processed, summary = made
            if self.opened.session is not session or self.repair_dialog is not dialog or \
                    not dialog.preview.isChecked():
                self._preview_off(dialog)
                return
            self.preview_dialog = dialog
            source = Switch(reader(processed, s1, s0), reader(edited, a1, a0),
                            self.transport.compare.bypass)
            self.transport.play(source, s0, s1, loop=True)
            self.status.showMessage(
                f"Preview of {module.title}, {s0 / sr:.2f}-{s1 / sr:.2f} s, looped: " +
                (summary or "found nothing to repair here") +
                " (Compare plays it unprocessed)", SHOWN_MS)

        worker = self.jobs.run(f"Preview {module.title}", work, done)
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
