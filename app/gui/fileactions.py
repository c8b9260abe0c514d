"""File work of the main window: open, save, export, re-analysis, recent
files, presets. Each long job runs in a Worker, its progress and Cancel button in the
status bar (not modal: painting, playing and zooming go on; only what would
conflict waits); every dialog opens non-blocking."""

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from app.gui.autosave import describe
from app.gui.editing import AnalysisCommand, PaintSession
from app.gui.history_file import collect
from app.gui.overs import add_overs_row, ask_about_overs
from app.gui.viewfit import content_top
from app.gui.windowstate import SAME_AS_SOURCE
from app.gui.workers import Worker
from app.project.write import SAVED_TILE, EditTracker, load_project, save_project, snapshot
from brushes.presets import Preset, save_preset, user_dir
from engine.audio import READ_SUFFIXES
from engine.document import Document
from engine.errors import TruncatedAudio
from engine.export import FORMATS, depths_of, export, overs, same_depth
from engine.progress import scaled
from engine.region import Rect
from engine.resynth import Resynthesizer

AUDIO_FILTER = f"Audio ({' '.join('*' + s for s in READ_SUFFIXES)});;All files (*)"
EXPORT_FILTER = f"Audio ({' '.join('*' + s for s in FORMATS)})"
PROJECT_FILTER = "SpectroPaint project (*.spp)"
MAX_RECENT = 10


@dataclass
class _Overs:
    """An export that found samples over full scale and asks what to do first."""

    peak: float
    count: int


def describe_analysis(analysis: dict) -> str:
    """The settings of an analysis in a few words, for the history."""
    if analysis["transform"] == "cq":
        return (f"constant-Q, {analysis['bins_per_octave']} bins/octave from "
                f"{analysis['fmin']:g} Hz")
    return (f"STFT {analysis['n_fft']}, hop {analysis['hop']}, "
            f"{analysis['window']} window")


def with_waveform(doc: Document, progress, cancel) -> tuple[Document, Resynthesizer]:
    """In a worker: the document's overview and full resynthesis, so the GUI thread
    only swaps it in."""
    doc.prepare_overview()
    synth = Resynthesizer(doc)
    synth.full(progress=scaled(progress, 0.6, 1.0), cancel=cancel)
    return doc, synth


class FileActions:
    """Mixed into MainWindow (which provides session, doc, canvas, panels, settings)."""

    # -- long work ---------------------------------------------------------------
    def busy(self, label: str) -> bool:
        """True (and the user is told) while another worker runs."""
        if self.worker is not None and self.worker.isRunning():
            self.show_error(f"{label}: please wait, '{self.worker.label}' is still running")
            return True
        return False

    def editing_blocked(self, what: str) -> bool:
        """True (and the status bar says why) while a job replaces or re-reads the
        document, so that ``what`` (painting, undo) would be lost."""
        worker = self.worker
        if worker is not None and worker.isRunning() and worker.blocks_editing:
            self.statusBar().showMessage(f"{what} waits: '{worker.label}' is running "
                                         "(Cancel it in the status bar)", 5000)
            return True
        return False

    def run_worker(self, label: str, work, on_done, on_failed=None,
                   blocks_editing: bool = False, on_partial=None,
                   asks: bool = False) -> Worker | None:
        """Run ``work`` in a thread, its progress and a Cancel button in the status bar
        (None if another job runs). ``blocks_editing``: see :class:`Worker`;
        ``on_partial``: ``work`` also takes ``partial(result)`` and this receives it;
        ``asks``: ``work`` also takes ``confirm(question)``, asked in a dialog."""
        if self.busy(label):
            return None
        worker = Worker(label, work, self, blocks_editing)
        if on_partial is not None:
            worker.partial_wanted = True
            worker.partial.connect(on_partial)
        if asks:
            worker.asks = True
            worker.asked.connect(lambda question: self._ask(
                f"{question}.\n\nGo on?", lambda b: worker.answer(
                    b == QMessageBox.StandardButton.Ok)))
        self.job_status.follow(worker)
        worker.done.connect(on_done)
        worker.failed.connect(lambda message: (on_failed or self.show_error)(worker.error,
                                                                           message))
        worker.cancelled.connect(lambda: self.statusBar().showMessage(f"{label}: cancelled", 5000))
        self.worker = worker
        worker.start()
        return worker

    def show_error(self, error, message: str | None = None) -> None:
        """A warning the user must see: ``message``, or ``error`` itself when that is
        a string (a worker's failure passes its exception and message)."""
        message = message if message is not None else str(error)
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

    def _file_dialog(self, title: str, name_filter: str, on_path, save: bool,
                     name: str = "") -> QFileDialog:
        """A non-blocking file dialog in the last folder used, ``name`` pre-filled."""
        dialog = QFileDialog(self, title, self.start_folder(save), name_filter)
        dialog.setObjectName("file-dialog")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite, True)  # we ask ourselves
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave if save else
                             QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile if save else
                           QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if name:
            dialog.selectFile(name)
        dialog.fileSelected.connect(lambda p: (self.remember_folder(Path(p), save),
                                               on_path(Path(p))))
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

    def open_path(self, path: Path, allow_truncated: bool = False) -> Worker | None:
        """Open an audio file (or a project) in a worker. If it fails, the open document
        stays; a file cut short is offered to be opened up to the damage."""
        path = Path(path)
        if path.suffix.lower() == ".spp":
            return self.open_project(path)
        self._remember(path)
        analysis = {**self.analysis_panel.settings(), "device": self.device,
                    "allow_truncated": allow_truncated}  # as chosen

        def work(progress, cancel, partial, confirm):
            doc = Document.open(path, **analysis, progress=scaled(progress, 0, 0.6),
                                cancel=cancel, confirm=confirm)
            doc.prepare_overview()  # the first zoomed-out view would wait for it
            synth = Resynthesizer(doc)
            partial((doc, synth, content_top(doc)))  # shown and painted on now; audio follows
            synth.full(progress=scaled(progress, 0.6, 1.0))  # not cancellable: in use
            return synth

        def shown(made):
            self.set_document(made[:2], path, content_hz=made[2])
            self.worker.blocks_editing = False
            self.job_status.cancel.setEnabled(False)
            notes = made[0].audio.notes  # what the CLI prints as warnings
            if notes:
                self.show_error(f"{path.name}: " + "\n".join(notes))

        def done(synth):
            if self.session is not None and self.session.synth is synth:
                self.session.catch_up()  # edits painted while the audio was made

        return self._opening(path, self.run_worker(
            f"Opening {path.name}", work, done,
            lambda error, message: self._open_failed(path, error, message),
            blocks_editing=True, on_partial=shown, asks=True))

    def _opening(self, path: Path, worker: Worker | None) -> Worker | None:
        """With no document yet, the canvas names the file being opened (not "No
        document open") until it is shown, or says again what to do if it fails."""
        if worker is not None and self.session is None:
            self.area.show_empty(True, opening=path.name)
            worker.finished.connect(lambda: self.session is None and
                                    self._enable_document_actions())
        return worker

    def _open_failed(self, path: Path, error, message: str) -> None:
        if not isinstance(error, TruncatedAudio):
            self.show_error(message)
            return
        buttons = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Warning, "SpectroPaint",
                          f"{error.problem}.\n\nOpen the part that can be read?",
                          buttons.Cancel, self)
        box.setObjectName("truncated")
        readable = box.addButton("Open the readable part", QMessageBox.ButtonRole.AcceptRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _: box.clickedButton() is readable and
                             self.open_path(path, allow_truncated=True))
        box.open()
        self.statusBar().showMessage(error.problem, 10000)

    def open_project_dialog(self) -> None:
        self.maybe_discard(lambda: self._file_dialog("Open project", PROJECT_FILTER,
                                                     self.open_project, save=False))

    def offer_recovery(self, orphan: Path, otherwise) -> None:
        """Ask whether to recover an autosave a crash left (app.gui.autosave); ``otherwise``
        runs if the user discards it."""
        buttons = QMessageBox.StandardButton

        def answered(button):
            if button == buttons.Yes:
                self.open_project(orphan, recovered=True)
            else:
                orphan.unlink(missing_ok=True)
                otherwise()

        self._ask(f"SpectroPaint closed without saving. Recover {describe(orphan)}?",
                  answered, buttons.Yes | buttons.Discard)

    def open_project(self, path: Path, recovered: bool = False) -> Worker | None:
        """Open a project; ``recovered``: an autosave, opened as unsaved edits."""
        if not recovered:
            self._remember(path)

        def work(progress, cancel, confirm):
            opened = load_project(path, device=self.device, progress=scaled(progress, 0, 0.6),
                                  cancel=cancel, confirm=confirm)
            return with_waveform(opened.doc, progress, cancel), opened

        def done(result):
            made, opened = result
            # an autosave names the project its edits were saved as (none: never saved)
            project = opened.project if recovered else path
            self.set_document(made, made[0].audio.path, project, opened.view, opened.history)
            if recovered:
                self.autosaver.adopt(path)  # now this session's autosave
                self.undo_stack.resetClean()  # unsaved edits: asked about on quit
                self._update_title()
                self.statusBar().showMessage("recovered the autosaved edits; save them as a "
                                             "project or export them", 15000)

        return self._opening(path, self.run_worker(f"Opening {path.name}", work, done,
                                                   blocks_editing=True, asks=True))

    def save_project_dialog(self, then=None) -> None:
        if self.session:
            self._file_dialog("Save project", PROJECT_FILTER,
                              lambda p: self.save_project(then, p.with_suffix(".spp")), save=True,
                              name=self.suggested_name(".spp", ""))

    def save_project(self, then=None, path: Path | None = None) -> Worker | None:
        if self.session is None:
            return None
        path = path or self.project_path
        if path is None:
            self.save_project_dialog(then)
            return None
        self.session.finish()  # a stroke still being painted is part of what is saved
        kept = collect(self.undo_stack, self.doc)
        snap = snapshot(self.doc, self.tracker, kept)  # copied here; written in the worker
        view = self._view_state()
        index = self.undo_stack.index()

        def done(saved):
            self.project_path = saved.path
            if self.undo_stack.index() == index:  # strokes painted meanwhile stay unsaved
                self.undo_stack.setClean()
            self._update_title()
            notes = [n for n in (kept.left_out, saved.cleared) if n]
            self.statusBar().showMessage(f"saved {saved.path}" + "".join(
                f"; {n}" for n in notes), 10000 if notes else 5000)
            if callable(then):
                then()

        return self.run_worker(f"Saving {path.name}",
                               lambda **kw: save_project(path, snap, view, **kw), done)

    def export_dialog(self) -> None:
        if self.session:
            name = self.suggested_name(None)
            if name and not depths_of(Path(name)):  # read, not written (MP3): WAV instead
                name = str(Path(name).with_suffix(".wav"))
            overs = None  # the dialog's row, read as a file is chosen (still there then)
            dialog = self._file_dialog("Export audio", EXPORT_FILTER,
                                       lambda p: self.export_audio(p, clip=overs.currentData()),
                                       save=True, name=name)
            overs = add_overs_row(dialog, self.settings)

    def export_audio(self, path: Path, force: bool = False, clip: str = "ask") -> Worker | None:
        """Export the edited audio to ``path``; ``clip``: what to do with samples over full
        scale, an engine.export clip mode or "ask" (asked only if the audio goes over)."""
        source = self.audio_path
        if source and path.exists() and path.resolve() == source.resolve() and not force:
            buttons = QMessageBox.StandardButton
            self._ask(f"{path.name} is the file you opened. Overwrite the original recording?",
                      lambda b: self.export_audio(path, True, clip) if b == buttons.Ok else None)
            return None
        if self.busy(f"Exporting {path.name}"):
            return None
        session = self.session
        samples = session.start_reading()  # read in place; edits meanwhile wait to be spliced
        audio = self.doc.audio  # what goes into the file besides the samples
        rate, metadata, layout = self.doc.sample_rate, audio.metadata, audio.layout

        depth = self.export_depth
        if depth == SAME_AS_SOURCE:
            depth = same_depth(self.doc.audio.subtype, path) if self.doc.audio.subtype else None
        elif depth not in depths_of(path):
            depth = None  # a depth the format has not (float FLAC, 16-bit Ogg): its default

        def work(**kw):
            if clip == "ask":
                peak, count = overs(samples)
                if count:
                    return _Overs(peak, count)  # nothing written: the user chooses first
            return export(samples, rate, path, bit_depth=depth, source=source, force=force,
                          clip="report" if clip == "ask" else clip, metadata=metadata,
                          layout=layout, **kw)

        def done(result):
            if isinstance(result, _Overs):
                ask_about_overs(self, path.name, result.peak, result.count,
                                lambda choice: self.export_audio(path, force, choice))
            else:  # overs were handled as the user chose: the summary says how
                self.statusBar().showMessage(result.summary(), 10000)

        worker = self.run_worker(f"Exporting {path.name}", work, done)
        if worker is None:
            session.done_reading()
            return None
        worker.finished.connect(session.done_reading)
        return worker

    def _set_depth(self, depth: str | None) -> None:
        self.export_depth = depth
        self.settings.setValue("exportDepth", depth or "default")
        for d, action in self.depth_actions.items():
            action.setChecked(d == depth)

    def reanalyze(self, analysis: dict) -> None:
        """Analyze the edited audio again with ``analysis`` (transform and settings):
        the edits stay, and the change is one undo step."""
        if self.session is None:
            return
        session = self.session
        edited = session.start_reading()  # the splices wait while the worker reads it

        def work(progress, cancel, confirm):
            doc = session.doc.reanalyzed(edited, progress=scaled(progress, 0, 0.6),
                                         cancel=cancel, confirm=confirm, **analysis)
            return with_waveform(doc, progress, cancel)

        def done(made):
            doc, synth = made
            new = (PaintSession(doc, self.undo_stack, synth), EditTracker(doc))
            new[1].tiles.update(Rect(0, doc.n_bins, 0, doc.n_frames).tiles(SAVED_TILE)
                                if self.tracker.tiles else ())  # edits live in every tile now
            self.undo_stack.push(AnalysisCommand(self, (session, self.tracker), new,
                                                 f"analysis: {describe_analysis(analysis)}"))

        worker = self.run_worker("Re-analyzing", work, done, blocks_editing=True, asks=True)
        if worker is None:
            session.done_reading()
        else:
            worker.finished.connect(session.done_reading)

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
        dialog = QInputDialog(self)
        dialog.setObjectName("preset-name")
        dialog.setWindowTitle("Save preset")
        dialog.setLabelText("Preset name:")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.textValueSelected.connect(self.save_preset_as)
        dialog.open()

    def save_preset_as(self, name: str) -> None:
        """The brush panel's settings as a user preset (replacing one of that name)."""
        name = name.strip()
        if not name or "/" in name or name.startswith("."):
            self.show_error(f"'{name}' cannot be a preset name; use letters, digits and dashes")
            return
        brush, params, curves = self.brush_panel.current()
        preset = Preset(name, brush, params, curves, "saved from the brush panel")
        save_preset(preset, user_dir() / f"{name}.json")
        self.brush_panel.reload_presets(select=name)

