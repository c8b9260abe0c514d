"""The main window: canvas and rulers, panels, menus, files, playback.

Long work (open, re-analysis, export, save) runs in a Worker with a
progress dialog that can cancel it; dialogs are opened non-blocking, so the
GUI thread keeps painting.
"""

import math
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QGridLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QUndoView,
    QWidget,
)

from app.canvas import SpectrogramCanvas
from app.editing import PaintSession
from app.panels import AnalysisPanel, BrushPanel, ViewPanel
from app.playback import Player
from app.project import EditTracker, open_project, save_project, snapshot
from app.rulers import FrequencyRuler, TimeRuler
from app.view import format_time, note_name
from app.workers import Worker
from brushes.presets import Preset, save_preset, user_dir
from engine.document import Document
from engine.export import export
from engine.png import write_png
from engine.region import Rect
from engine.progress import scaled
from engine.resynth import Resynthesizer, band_audio

AUDIO_FILTER = "Audio (*.wav *.flac *.ogg *.aiff *.aif *.mp3 *.w64 *.caf);;All files (*)"
PROJECT_FILTER = "SpectroPaint project (*.spp)"
MAX_RECENT = 10


def with_waveform(doc: Document, progress, cancel) -> tuple[Document, Resynthesizer]:
    """In a worker: the document's full resynthesis, so the GUI thread only swaps it in."""
    synth = Resynthesizer(doc)
    synth.full(progress=scaled(progress, 0.6, 1.0), cancel=cancel)
    return doc, synth


class MainWindow(QMainWindow):
    def __init__(self, device: str | None = None):
        super().__init__()
        self.device = device
        self.session: PaintSession | None = None
        self.tracker: EditTracker | None = None
        self.audio_path: Path | None = None
        self.project_path: Path | None = None
        self.worker: Worker | None = None
        self.undo_stack = QUndoStack(self)
        self.player = Player()
        self.settings = QSettings("SpectroPaint", "SpectroPaint")
        self._build()
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self._update_title()
        self.playhead_timer = QTimer(self, interval=30, timeout=self._tick_playhead)

    # -- layout ----------------------------------------------------------------
    def _build(self) -> None:
        self.canvas = SpectrogramCanvas()
        self.time_ruler = TimeRuler(self.canvas.view)
        self.freq_ruler = FrequencyRuler(self.canvas.view)
        central = QWidget()
        grid = QGridLayout(central)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(0)
        grid.addWidget(self.time_ruler, 0, 1)
        grid.addWidget(self.freq_ruler, 1, 0)
        grid.addWidget(self.canvas, 1, 1)
        self.setCentralWidget(central)

        self.brush_panel = BrushPanel()
        self.view_panel = ViewPanel()
        self.analysis_panel = AnalysisPanel()
        self.history_view = QUndoView(self.undo_stack)
        self.history_view.setEmptyLabel("(opened)")
        for title, widget, area in (("Brushes", self.brush_panel, Qt.RightDockWidgetArea),
                                    ("View", self.view_panel, Qt.RightDockWidgetArea),
                                    ("Analysis", self.analysis_panel, Qt.RightDockWidgetArea),
                                    ("History", self.history_view, Qt.LeftDockWidgetArea)):
            dock = QDockWidget(title, self)
            dock.setObjectName(title)
            widget.setFixedWidth(330 if area == Qt.RightDockWidgetArea else 200)  # no jumps
            dock.setWidget(widget)
            self.addDockWidget(area, dock)
        self.readout = QLabel()
        self.readout.setMinimumWidth(440)
        self.statusBar().addPermanentWidget(self.readout)

        self.canvas.strokePoint.connect(self._pen)
        self.canvas.cursorMoved.connect(self._show_readout)
        self.canvas.viewChanged.connect(self._view_changed)
        self.canvas.playToggled.connect(self.toggle_play)
        self.brush_panel.changed.connect(self._brush_changed)
        self.brush_panel.saveRequested.connect(self.save_preset_dialog)
        self.view_panel.styleChanged.connect(self._style_changed)
        self.view_panel.logChanged.connect(self._log_changed)
        self.view_panel.viewChannelChanged.connect(self.canvas.set_view_channel)
        self.analysis_panel.applyRequested.connect(self.reanalyze)
        self.undo_stack.indexChanged.connect(self._after_undo_redo)
        self.undo_stack.cleanChanged.connect(lambda _: self._update_title())
        self._build_menus()
        self._brush_changed()

    def _action(self, menu, text, slot, shortcut=None, checkable=False) -> QAction:
        action = QAction(text, self, checkable=checkable)
        if shortcut:
            action.setShortcuts([QKeySequence(s) for s in
                                 (shortcut if isinstance(shortcut, list) else [shortcut])])
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        f = bar.addMenu("&File")
        self._action(f, "&Open audio…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = f.addMenu("Open &recent")
        self._action(f, "Open &project…", self.open_project_dialog)
        f.addSeparator()
        self._action(f, "&Save project", self.save_project, QKeySequence.StandardKey.Save)
        self._action(f, "Save project &as…", self.save_project_dialog)
        self._action(f, "&Export audio…", self.export_dialog, "Ctrl+E")
        self._action(f, "Export spectrogram &PNG…", self.export_png_dialog)
        f.addSeparator()
        self._action(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        e = bar.addMenu("&Edit")
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcuts([QKeySequence("Ctrl+Z")])
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        e.addActions([self.undo_action, self.redo_action])
        e.addSeparator()
        self.paint_tool = self._action(e, "&Paint tool", lambda: self.set_tool("paint"), "B",
                                       checkable=True)
        self.select_tool = self._action(e, "&Select tool", lambda: self.set_tool("select"), "S",
                                        checkable=True)
        self._action(e, "Clear selection", self.clear_selection, "Escape")
        self.paint_tool.setChecked(True)
        v = bar.addMenu("&View")
        self._action(v, "Zoom &in", lambda: self.canvas.zoom(2.0), "Ctrl+=")
        self._action(v, "Zoom &out", lambda: self.canvas.zoom(0.5), "Ctrl+-")
        self._action(v, "&Fit to window", self.canvas.fit, "Ctrl+0")
        p = bar.addMenu("&Play")
        self._action(p, "Play / pause (Space)", self.toggle_play)
        self._action(p, "Play from &cursor", self.play_from_cursor, "Shift+Space")
        self._action(p, "Play &selection", self.play_selection, "Ctrl+Space")
        self.loop_action = self._action(p, "&Loop selection", lambda: None, "L", checkable=True)
        self.band_action = self._action(p, "Selected &band only", lambda: None, checkable=True)
        self._action(p, "S&top", self.stop, "Ctrl+.")
        self._refresh_recent()

    # -- document --------------------------------------------------------------
    @property
    def doc(self) -> Document | None:
        return self.session.doc if self.session else None

    def set_document(self, made: tuple[Document, Resynthesizer], audio_path: Path | None,
                     project_path: Path | None = None, view: dict | None = None) -> None:
        """Swap in a new document and its resynthesizer (made by a worker)."""
        doc, synth = made
        self.stop()
        if self.session:
            self.session.close()
        self.undo_stack.clear()
        self.session = PaintSession(doc, self.undo_stack, synth)
        self.tracker = EditTracker(doc)
        self.audio_path, self.project_path = audio_path, project_path
        self.view_panel.set_channels(doc.channels)
        t = doc.transform
        self.analysis_panel.show_settings(t.n_fft, t.hop, t.window_name)
        self.canvas.set_document(doc, self.view_panel.channel(self.view_panel.view_channel))
        if view:
            self._apply_view(view)
        self.undo_stack.setClean()
        self._update_title()
        self.statusBar().showMessage(f"{doc.channels} ch, {doc.sample_rate} Hz, "
                                     f"{format_time(doc.length / doc.sample_rate)}; "
                                     f"audio: {self.player.output.name}", 8000)

    @property
    def modified(self) -> bool:
        return self.session is not None and not self.undo_stack.isClean()

    def _update_title(self) -> None:
        name = (self.project_path or self.audio_path)
        star = "*" if self.modified else ""
        self.setWindowTitle(f"SpectroPaint — {name.name}{star}" if name else "SpectroPaint")

    # -- long work ---------------------------------------------------------------
    def busy(self, label: str) -> bool:
        """True (and the user is told) while another worker runs."""
        if self.worker is not None and self.worker.isRunning():
            self.show_error(f"{label}: please wait, '{self.worker.label}' is still running")
            return True
        return False

    def run_worker(self, label: str, work, on_done) -> Worker | None:
        """Run ``work`` in a thread with a cancellable progress dialog (None if busy)."""
        if self.busy(label):
            return None
        dialog = QProgressDialog(label, "Cancel", 0, 1000, self)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(300)
        worker = Worker(label, work, self)
        worker.progressed.connect(lambda f: dialog.setValue(int(f * 1000)))
        dialog.canceled.connect(worker.cancel)

        def finish():
            dialog.reset()
            dialog.deleteLater()

        worker.done.connect(on_done)
        worker.failed.connect(self.show_error)
        worker.cancelled.connect(lambda: self.statusBar().showMessage(f"{label}: cancelled", 5000))
        worker.finished.connect(finish)
        self.worker = worker
        worker.start()
        return worker

    def show_error(self, message: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "SpectroPaint", message,
                          QMessageBox.StandardButton.Ok, self)
        box.setObjectName("error")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.statusBar().showMessage(message.splitlines()[0], 10000)

    def _ask(self, question: str, then, buttons=None) -> None:
        """A non-blocking question; ``then(button)`` runs with the button pressed."""
        box = QMessageBox(QMessageBox.Icon.Question, "SpectroPaint", question,
                          buttons or (QMessageBox.StandardButton.Ok |
                                      QMessageBox.StandardButton.Cancel), self)
        box.setObjectName("question")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _: then(box.standardButton(box.clickedButton())))
        box.open()

    def _file_dialog(self, title: str, name_filter: str, on_path, save: bool) -> QFileDialog:
        dialog = QFileDialog(self, title, str(self.audio_path.parent) if self.audio_path else "",
                             name_filter)
        dialog.setObjectName("file-dialog")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite, True)  # we ask ourselves
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave if save else
                             QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile if save else
                           QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda p: on_path(Path(p)))
        dialog.open()
        return dialog

    def maybe_discard(self, then) -> None:
        """Run ``then`` now, or after the user agrees to lose unsaved edits."""
        if not self.modified:
            then()
            return
        buttons = QMessageBox.StandardButton
        self._ask("There are unsaved edits. Save the project first?",
                  lambda b: self.save_project(then) if b == buttons.Save else
                  then() if b == buttons.Discard else None,
                  buttons.Save | buttons.Discard | buttons.Cancel)

    # -- files -------------------------------------------------------------------
    def open_dialog(self) -> None:
        self.maybe_discard(lambda: self._file_dialog("Open audio", AUDIO_FILTER,
                                                     self.open_path, save=False))

    def open_path(self, path: Path) -> Worker | None:
        path = Path(path)
        if path.suffix.lower() == ".spp":
            return self.open_project(path)
        self._remember(path)
        analysis = {"n_fft": int(self.analysis_panel.n_fft.currentText()),
                    "device": self.device}
        return self.run_worker(f"Opening {path.name}",
                               lambda progress, cancel: with_waveform(Document.open(
                                   path, **analysis, progress=scaled(progress, 0, 0.6),
                                   cancel=cancel), progress, cancel),
                               lambda made: self.set_document(made, path))

    def open_project_dialog(self) -> None:
        self.maybe_discard(lambda: self._file_dialog("Open project", PROJECT_FILTER,
                                                     self.open_project, save=False))

    def open_project(self, path: Path) -> Worker | None:
        self._remember(path)

        def work(progress, cancel):
            doc, view = open_project(path, device=self.device, progress=scaled(progress, 0, 0.6),
                                     cancel=cancel)
            return with_waveform(doc, progress, cancel), view

        def done(result):
            made, view = result
            self.set_document(made, made[0].audio.path, path, view)

        return self.run_worker(f"Opening {path.name}", work, done)

    def save_project_dialog(self, then=None) -> None:
        if self.session:
            self._file_dialog("Save project", PROJECT_FILTER,
                              lambda p: self.save_project(then, p.with_suffix(".spp")), save=True)

    def save_project(self, then=None, path: Path | None = None) -> Worker | None:
        if self.session is None:
            return None
        path = path or self.project_path
        if path is None:
            self.save_project_dialog(then)
            return None
        snap = snapshot(self.doc, self.tracker)  # copied here; written in the worker
        view = self._view_state()

        def done(saved):
            self.project_path = saved
            self.undo_stack.setClean()
            self._update_title()
            self.statusBar().showMessage(f"saved {saved}", 5000)
            if callable(then):
                then()

        return self.run_worker(f"Saving {path.name}",
                               lambda **kw: save_project(path, snap, view, **kw), done)

    def export_dialog(self) -> None:
        if self.session:
            self._file_dialog("Export audio", AUDIO_FILTER, self.export_audio, save=True)

    def export_audio(self, path: Path, force: bool = False) -> Worker | None:
        source = self.audio_path
        if source and path.exists() and path.resolve() == source.resolve() and not force:
            buttons = QMessageBox.StandardButton
            self._ask(f"{path.name} is the file you opened. Overwrite the original recording?",
                      lambda b: self.export_audio(path, True) if b == buttons.Ok else None)
            return None
        if self.busy(f"Exporting {path.name}"):
            return None
        session = self.session
        samples = session.start_reading()  # read in place; edits meanwhile wait to be spliced
        rate = self.doc.sample_rate

        def work(**kw):
            return export(samples, rate, path, source=source, force=force, **kw)

        worker = self.run_worker(f"Exporting {path.name}", work,
                                 lambda report: self.statusBar().showMessage(report.summary(),
                                                                             10000))
        worker.finished.connect(session.done_reading)
        return worker

    def export_png_dialog(self) -> None:
        if self.session:
            self._file_dialog("Export spectrogram", "PNG image (*.png)",
                              lambda p: self.export_png(p.with_suffix(".png")), save=True)

    def export_png(self, path: Path) -> Worker | None:
        doc, view, panel = self.doc, self.canvas.view, self.view_panel
        frames = (max(0, int(doc.frame_of(view.t0))), min(doc.n_frames,
                                                            int(doc.frame_of(view.t1)) + 1))
        bins = (max(0, int(doc.bin_of(view.f_lo))), min(doc.n_bins, int(doc.bin_of(view.f_hi)) + 1))
        image = doc.render(Rect(bins[0], bins[1], frames[0], frames[1]), view.width, view.height,
                           channel=panel.channel(panel.view_channel),
                           colormap=panel.colormap.currentText(),
                           top_db=panel.ceiling.value(),
                           range_db=panel.ceiling.value() - panel.floor.value(),
                           log_freq=view.log_freq)

        def work(**kw):
            write_png(image, path)
            return path

        return self.run_worker(f"Exporting {path.name}", work,
                               lambda p: self.statusBar().showMessage(f"wrote {p}", 5000))

    def reanalyze(self, n_fft: int, hop: int, window: str) -> None:
        if self.session is None:
            return
        audio, path = self.doc.audio, self.audio_path

        def work(progress, cancel):
            doc = Document(audio, n_fft=n_fft, hop=hop, window=window, device=self.device,
                           progress=scaled(progress, 0, 0.6), cancel=cancel)
            return with_waveform(doc, progress, cancel)

        def go():
            self.run_worker("Re-analyzing", work, lambda made: self.set_document(made, path))

        edits = len(self.tracker.tiles) if self.tracker else 0
        if edits == 0:
            go()
            return
        self._ask("Re-analysis starts again from the recording: the edits and the undo history "
                  "are lost. Export or save first if you need them. Re-analyze?",
                  lambda b: go() if b == QMessageBox.StandardButton.Ok else None)

    def _remember(self, path: Path) -> None:
        recent = [str(path)] + [p for p in self.settings.value("recent", [], list) or []
                                if p != str(path)]
        self.settings.setValue("recent", recent[:MAX_RECENT])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for p in self.settings.value("recent", [], list) or []:
            action = self.recent_menu.addAction(p)
            action.triggered.connect(lambda _=False, p=p: self.maybe_discard(
                lambda: self.open_path(Path(p))))

    def save_preset_dialog(self) -> None:
        name, ok = QInputDialog.getText(self, "Save preset", "Preset name:")
        if ok and name.strip():
            brush, params, curves = self.brush_panel.current()
            preset = Preset(name.strip(), brush, params, curves, "saved from the brush panel")
            save_preset(preset, user_dir() / f"{name.strip()}.json")
            self.brush_panel.reload_presets(select=name.strip())

    # -- painting and view ---------------------------------------------------------
    def _pen(self, seconds, hz, pressure, phase) -> None:
        if self.session is None:
            return
        channel = self.view_panel.channel(self.view_panel.paint_channel)
        try:
            self.session.pen(seconds, hz, pressure, phase, self.brush_panel.current(), channel)
        except Exception as e:  # a brush must never take the app down
            self.session.stroke = None
            self.statusBar().showMessage(f"brush failed: {e}", 10000)
        self.canvas.update()

    def _after_undo_redo(self) -> None:
        if self.session:
            self.session.refresh_audio()
        self.canvas.update()
        self._update_title()

    def _brush_changed(self) -> None:
        _, params, _ = self.brush_panel.current()
        self.canvas.brush_radius = (params.get("radius_ms", 50.0) / 1000,
                                    params.get("radius_hz", 200.0))
        self.canvas.brush_cents = params.get("radius_cents", 0.0)
        self.canvas.update()

    def _style_changed(self) -> None:
        p = self.view_panel
        self.canvas.set_style(floor_db=p.floor.value(), ceiling_db=p.ceiling.value(),
                              gamma=p.gamma.value(), colormap=p.colormap.currentText())

    def _log_changed(self, on: bool) -> None:
        self.canvas.view.set_log(on)
        self._view_changed()

    def _view_changed(self) -> None:
        self.time_ruler.update()
        self.freq_ruler.update()
        self.canvas.update()

    def _show_readout(self, seconds: float, hz: float) -> None:
        doc = self.doc
        if doc is None:
            return
        frame, b = round(doc.frame_of(seconds)), round(doc.bin_of(hz))
        level = "-"
        if 0 <= frame < doc.n_frames and 0 <= b < doc.n_bins:
            channel = self.view_panel.channel(self.view_panel.view_channel)
            mags = doc.magnitude[:, b, frame] if channel is None else \
                doc.magnitude[channel:channel + 1, b, frame]
            value = float(mags.max()) / doc.full_scale
            level = f"{20 * math.log10(value):.1f} dB" if value > 0 else "-inf dB"
        self.readout.setText(f"{format_time(seconds)}   {hz:,.1f} Hz   {note_name(hz)}   {level}")

    def set_tool(self, tool: str) -> None:
        self.canvas.tool = tool
        self.paint_tool.setChecked(tool == "paint")
        self.select_tool.setChecked(tool == "select")
        self.canvas.update()

    def clear_selection(self) -> None:
        self.canvas.selection = None
        self.canvas.update()

    def _view_state(self) -> dict:
        v, p = self.canvas.view, self.view_panel
        return {"t0": v.t0, "t1": v.t1, "f_lo": v.f_lo, "f_hi": v.f_hi, "log_freq": v.log_freq,
                "colormap": p.colormap.currentText(), "floor_db": p.floor.value(),
                "ceiling_db": p.ceiling.value(), "gamma": p.gamma.value()}

    def _apply_view(self, state: dict) -> None:
        p = self.view_panel
        p.colormap.setCurrentText(state.get("colormap", "viridis"))
        p.floor.setValue(float(state.get("floor_db", -100)))
        p.ceiling.setValue(float(state.get("ceiling_db", 0)))
        p.gamma.setValue(float(state.get("gamma", 1.0)))
        p.log.setChecked(bool(state.get("log_freq", False)))
        v = self.canvas.view
        for key in ("t0", "t1", "f_lo", "f_hi"):
            if isinstance(state.get(key), (int, float)):
                setattr(v, key, float(state[key]))
        self._view_changed()

    # -- playback ------------------------------------------------------------------
    def toggle_play(self) -> None:
        if self.player.playing:
            self.stop()
        elif self.canvas.selection is not None:
            self.play_selection()
        else:
            self.play_from(self.canvas.playhead or self.canvas.view.t0)

    def play_from_cursor(self) -> None:
        cursor = self.canvas._cursor
        self.play_from(self.canvas.view.t_of(cursor.x()) if cursor else self.canvas.view.t0)

    def play_from(self, seconds: float) -> None:
        if self.session is None:
            return
        doc = self.doc
        start = min(max(0, int(seconds * doc.sample_rate)), doc.length - 1)
        self._play(self.session.synth.cached, start, doc.length, loop=False)

    def play_selection(self) -> None:
        if self.session is None or self.canvas.selection is None:
            return
        doc = self.doc
        t0, t1, f0, f1 = self.canvas.selection
        start = max(0, int(t0 * doc.sample_rate))
        stop = min(doc.length, max(start + 1, int(t1 * doc.sample_rate)))
        source = self.session.synth.cached
        if self.band_action.isChecked():
            band = band_audio(doc, int(doc.bin_of(f0)), int(doc.bin_of(f1)) + 1, start, stop)
            source = lambda a, b: band[:, a - start:b - start]  # noqa: E731
        self._play(source, start, stop, loop=self.loop_action.isChecked())

    def _play(self, source, start: int, stop: int, loop: bool) -> None:
        doc = self.doc
        self.player.play(source, doc.sample_rate, doc.channels, start, stop, loop)
        self.playhead_timer.start()
        if self.player.output.is_null:
            self.statusBar().showMessage("no audio output: playing silently "
                                         f"({self.player.output.reason})", 5000)

    def stop(self) -> None:
        self.player.stop()
        self.playhead_timer.stop()

    def _tick_playhead(self) -> None:
        frame = self.player.position()
        if frame is None:
            self.playhead_timer.stop()
            return
        self.canvas.playhead = frame / self.doc.sample_rate
        self.canvas.update()

    # -- window events ---------------------------------------------------------------
    def closeEvent(self, event) -> None:
        if self.modified and not getattr(self, "_closing", False):
            event.ignore()

            def close_now():
                self._closing = True
                self.close()

            self.maybe_discard(close_now)
            return
        self.stop()
        if self.worker is not None and self.worker.isRunning():
            self.worker.cancel()
            self.worker.wait(5000)
        event.accept()

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.maybe_discard(lambda: self.open_path(Path(urls[0])))
