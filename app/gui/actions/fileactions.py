"""File work of the main window: open, save, export, re-analysis, recent
files, presets. Each long job runs in a Worker (app.gui.services.window_jobs); every dialog opens
non-blocking (app.gui.services.prompts)."""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QInputDialog, QMenu, QMessageBox, QStatusBar, QWidget

from app.gui.services.autosave import Autosaver, describe, forget
from app.gui.services.editing import PaintSession, SwapCommand
from app.gui.services.history_file import collect
from app.gui.services.opened import OpenDocument
from app.gui.services.overs import add_overs_row, ask_about_overs
from app.gui.services.prompts import ask, file_dialog
from app.gui.services.window_jobs import Jobs
from app.gui.services.windowstate import SAME_AS_SOURCE, WindowState
from app.gui.services.workers import Worker
from app.gui.view.viewfit import content_top
from app.gui.widgets.panels import AnalysisPanel, BrushPanel
from app.project.saved_history import Kept
from app.project.write import SAVED_TILE, EditTracker, load_project, save_project, snapshot
from brushes.presets import Preset, save_preset, user_dir
from engine.errors import TruncatedAudio
from engine.io.audio import READ_SUFFIXES
from engine.io.export import FORMATS, LOSSY, depths_of, export, overs, same_depth
from engine.model.document import Document
from engine.model.resynth import Resynthesizer
from engine.progress import scaled
from engine.region import Rect

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


def with_waveform(doc: Document, progress, cancel, *, frames: tuple[int, int] | None = None
                  ) -> tuple[Document, Resynthesizer]:
    """In a worker: the document's overview (of ``frames``, what the view shows, for a
    time edit's document: a thread behind the window builds the rest, Document.analyse_behind)
    and full resynthesis, so the GUI thread only swaps it in."""
    doc.prepare_overview(frames)
    synth = Resynthesizer(doc)
    synth.full(progress=scaled(progress, 0.6, 1.0), cancel=cancel)
    return doc, synth


class DocumentHost(Protocol):
    """What file work asks of the window it opens documents into (MainWindow)."""

    autosaver: Autosaver

    def set_document(self, made: tuple[Document, Resynthesizer], audio_path: Path | None,
                     project_path: Path | None = None, view: dict | None = None,
                     kept: Kept | None = None, content_hz: float | None = None) -> None: ...

    def install(self, session: PaintSession, tracker: EditTracker, fit: bool = False) -> None: ...

    def show_opening(self, name: str) -> None: ...

    def enable_document_actions(self) -> None: ...

    def update_title(self) -> None: ...

    def view_state(self) -> dict: ...


class FileActions:
    """Opens files into ``host`` (the window, as a DocumentHost), saves and exports the
    ``opened`` document; long work through ``jobs``; dialogs over ``parent``."""

    def __init__(self, host: DocumentHost, parent: QWidget, opened: OpenDocument, jobs: Jobs,
                 state: WindowState, settings: QSettings, analysis_panel: AnalysisPanel,
                 brush_panel: BrushPanel, status: QStatusBar, device: str | None):
        self.host, self.parent, self.opened, self.jobs = host, parent, opened, jobs
        self.state, self.settings, self.status, self.device = state, settings, status, device
        self.analysis_panel, self.brush_panel = analysis_panel, brush_panel
        self.recent_menu = QMenu("Open &recent", parent)
        self.export_depth: str | None = SAME_AS_SOURCE
        self.depth_menu, self.depth_actions = self._choices(
            "Export &bit depth", self.set_depth,
            (("Same as source", SAME_AS_SOURCE),
             ("Format default (WAV float, FLAC/AIFF 24)", None),
             ("16-bit", "16"), ("24-bit", "24"), ("32-bit float", "float")))
        saved = settings.value("exportDepth", SAME_AS_SOURCE, str)
        self.set_depth(None if saved == "default" else
                       saved if saved in self.depth_actions else SAME_AS_SOURCE)
        self.export_quality: float | None = None
        self.quality_menu, self.quality_actions = self._choices(
            "Export &quality (Ogg, MP3)", self.set_quality,
            (("Format default", None), ("10 (best)", 10.0), ("8", 8.0), ("6", 6.0),
             ("4", 4.0), ("2 (smallest)", 2.0)))
        saved = settings.value("exportQuality", "default", str)
        self.set_quality(next((q for q in self.quality_actions if str(q) == saved), None))
        self._refresh_recent()

    def _choices(self, title: str, choose, choices) -> tuple[QMenu, dict]:
        """A submenu of checkable ``(label, value)`` entries, each calling ``choose(value)``;
        the menu and its actions by value."""
        menu, actions = QMenu(title, self.parent), {}
        for label, value in choices:
            action = menu.addAction(label)
            action.setCheckable(True)
            action.triggered.connect(lambda _=False, v=value: choose(v))
            actions[value] = action
        return menu, actions

    def _ask(self, question: str, then, buttons=None, *, names=None) -> None:
        ask(self.parent, question, then, buttons, names=names)

    def _file_dialog(self, title: str, name_filter: str, on_path, save: bool, name: str = ""):
        return file_dialog(self.parent, self.state, title, name_filter, on_path, save=save,
                           name=name)

    def maybe_discard(self, then) -> None:
        """Run ``then`` now, or after the user agrees to lose unsaved edits."""
        if not self.opened.modified:
            then()
            return
        buttons = QMessageBox.StandardButton
        # Save writes a project, not the audio, which RX's and Audacity's users expect
        self._ask("There are unsaved edits. Save them as a project (.spp) first?\n\n"
                  "The audio file itself changes only by File > Export audio.",
                  lambda b: self.save_project(then) if b == buttons.Save else
                  then() if b == buttons.Discard else None,
                  buttons.Save | buttons.Discard | buttons.Cancel,
                  names={buttons.Save: "Save project"})

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
            self.host.set_document(made[:2], path, content_hz=made[2])
            self._remember(path)  # opened: a file that failed is not offered again
            self.jobs.worker.blocks_editing = False
            self.jobs.job_status.cancel.setEnabled(False)
            notes = made[0].audio.notes  # what the CLI prints as warnings
            if notes:
                self.jobs.show_error(f"{path.name}: " + "\n".join(notes))

        def done(synth):
            if self.opened.session is not None and self.opened.session.synth is synth:
                self.opened.session.catch_up()  # edits painted while the audio was made

        return self._opening(path, self.jobs.run(
            f"Opening {path.name}", work, done,
            lambda error, message: self._open_failed(path, error, message),
            blocks_editing=True, on_partial=shown, asks=True))

    def _opening(self, path: Path, worker: Worker | None) -> Worker | None:
        """With no document yet, the canvas names the file being opened (not "No
        document open") until it is shown, or says again what to do if it fails."""
        if worker is not None and self.opened.session is None:
            self.host.show_opening(path.name)
            worker.finished.connect(lambda: self.opened.session is None and
                                    self.host.enable_document_actions())
        return worker

    def _open_failed(self, path: Path, error, message: str) -> None:
        if not isinstance(error, TruncatedAudio):
            self.jobs.show_error(message)
            return
        buttons = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Warning, "SpectroPaint",
                          f"{error.problem}.\n\nOpen the part that can be read?",
                          buttons.Cancel, self.parent)
        box.setObjectName("truncated")
        readable = box.addButton("Open the readable part", QMessageBox.ButtonRole.AcceptRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _: box.clickedButton() is readable and
                             self.open_path(path, allow_truncated=True))
        box.open()
        self.status.showMessage(error.problem, 10000)

    def open_project_dialog(self) -> None:
        self.maybe_discard(lambda: self._file_dialog("Open project", PROJECT_FILTER,
                                                     self.open_project, save=False))

    def offer_recovery(self, orphan: Path, otherwise) -> None:
        """Ask whether to recover an autosave a crash left (app.gui.services.autosave);
        ``otherwise`` runs if the user discards it."""
        buttons = QMessageBox.StandardButton

        def answered(button):
            if button == buttons.Yes:
                self.open_project(orphan, recovered=True)
            else:
                forget(orphan)
                otherwise()

        self._ask(f"SpectroPaint closed without saving. Recover {describe(orphan)}?",
                  answered, buttons.Yes | buttons.Discard)

    def open_project(self, path: Path, recovered: bool = False) -> Worker | None:
        """Open a project; ``recovered``: an autosave, opened as unsaved edits."""

        def work(progress, cancel, confirm):
            opened = load_project(path, device=self.device, progress=scaled(progress, 0, 0.6),
                                  cancel=cancel, confirm=confirm)
            return with_waveform(opened.doc, progress, cancel), opened

        def done(result):
            made, opened = result
            # an autosave names the project its edits were saved as (none: never saved)
            project = opened.project if recovered else path
            self.host.set_document(made, made[0].audio.path, project, opened.view, opened.history)
            if recovered:
                self.host.autosaver.adopt(path)  # now this session's autosave
                self.opened.undo_stack.resetClean()  # unsaved edits: asked about on quit
                self.host.update_title()
                self.status.showMessage("recovered the autosaved edits; save them as a "
                                             "project or export them", 15000)
            else:
                self._remember(path)  # opened: one that failed is not offered again

        return self._opening(path, self.jobs.run(f"Opening {path.name}", work, done,
                                                   blocks_editing=True, asks=True))

    def save_project_dialog(self, then=None) -> None:
        if self.opened.session:
            self._file_dialog("Save project", PROJECT_FILTER,
                              lambda p: self.save_project(then, p.with_suffix(".spp")), save=True,
                              name=self.state.suggested_name(".spp", ""))

    def save_project(self, then=None, path: Path | None = None) -> Worker | None:
        if self.opened.session is None:
            return None
        path = path or self.opened.project_path
        if path is None:
            self.save_project_dialog(then)
            return None
        self.opened.session.finish()  # a stroke still being painted is part of what is saved
        doc = self.opened.doc
        kept = collect(self.opened.history)
        snap = snapshot(doc, self.opened.tracker, kept)  # copied here; written in the worker
        view = self.host.view_state()
        index = self.opened.undo_stack.index()

        def done(saved):
            self.opened.project_path = saved.path
            if self.opened.undo_stack.index() == index:  # strokes painted meanwhile stay unsaved
                self.opened.undo_stack.setClean()
            self.host.update_title()
            notes = [n for n in (kept.left_out, saved.cleared) if n]
            self.status.showMessage(f"saved {saved.path}" + "".join(
                f"; {n}" for n in notes), 10000 if notes else 5000)
            if kept.left_out:  # said for 1.5 s in the status bar and overwritten, before
                self.jobs.show_error(
                    f"Saved {saved.path.name}, but not all of its undo history: "
                    f"{kept.left_out}. Undo still reaches every step until you close the "
                    "file; reopened, the project undoes only as far as the steps kept.")
            if callable(then):
                then()

        return self.jobs.run(f"Saving {path.name}",
                               lambda **kw: save_project(path, snap, view, **kw), done)

    def export_dialog(self) -> None:
        if self.opened.session:
            name = self.state.suggested_name(None)
            if name and not depths_of(Path(name)):  # read, not written (Opus): WAV instead
                name = str(Path(name).with_suffix(".wav"))
            overs = None  # the dialog's row, read as a file is chosen (still there then)
            dialog = self._file_dialog("Export audio", EXPORT_FILTER,
                                       lambda p: self.export_audio(p, clip=overs.currentData()),
                                       save=True, name=name)
            overs = add_overs_row(dialog, self.settings)

    def export_audio(self, path: Path, force: bool = False, clip: str = "ask") -> Worker | None:
        """Export the edited audio to ``path``; ``clip``: what to do with samples over full
        scale, an engine.io.export clip mode or "ask" (asked only if the audio goes over)."""
        source = self.opened.audio_path
        if source and path.exists() and path.resolve() == source.resolve() and not force:
            buttons = QMessageBox.StandardButton
            self._ask(f"{path.name} is the file you opened. Overwrite the original recording?",
                      lambda b: self.export_audio(path, True, clip) if b == buttons.Ok else None)
            return None
        if self.jobs.busy(f"Exporting {path.name}"):
            return None
        session = self.opened.session
        samples = session.start_reading()  # read in place; edits meanwhile wait to be spliced
        audio = self.opened.doc.audio  # what goes into the file besides the samples
        rate, metadata, layout = self.opened.doc.sample_rate, audio.metadata, audio.layout

        depth = self.export_depth
        if depth == SAME_AS_SOURCE:
            depth = same_depth(audio.subtype, path) if audio.subtype else None
        elif depth not in depths_of(path):
            depth = None  # a depth the format has not (float FLAC, 16-bit Ogg): its default
        lossy = FORMATS.get(path.suffix.lower(), ("",))[0] in LOSSY
        quality = self.export_quality if lossy else None  # a lossless file has none

        def work(**kw):
            if clip == "ask":
                peak, count = overs(samples)
                if count:
                    return _Overs(peak, count)  # nothing written: the user chooses first
            return export(samples, rate, path, bit_depth=depth, source=source, force=force,
                          clip="report" if clip == "ask" else clip, metadata=metadata,
                          layout=layout, quality=quality, **kw)

        def done(result):
            if isinstance(result, _Overs):
                ask_about_overs(self.parent, path.name, result.peak, result.count,
                                lambda choice: self.export_audio(path, force, choice))
            else:  # overs were handled as the user chose: the summary says how
                self.status.showMessage(result.summary(), 10000)

        worker = self.jobs.run(f"Exporting {path.name}", work, done)
        if worker is None:
            session.done_reading()
            return None
        worker.finished.connect(session.done_reading)
        return worker

    def set_depth(self, depth: str | None) -> None:
        self.export_depth = depth
        self.settings.setValue("exportDepth", depth or "default")
        for d, action in self.depth_actions.items():
            action.setChecked(d == depth)

    def set_quality(self, quality: float | None) -> None:
        """Ogg Vorbis and MP3 exports' quality (0-10; None: libsndfile's default)."""
        self.export_quality = quality
        self.settings.setValue("exportQuality", str(quality) if quality else "default")
        for q, action in self.quality_actions.items():
            action.setChecked(q == quality)

    def reanalyze(self, analysis: dict, *, flatten: bool = False) -> None:
        """Analyze the edited audio again with ``analysis`` (transform and settings):
        the edits stay, and the change is one undo step. A document with layers is
        asked about first: they become one (``flatten``: the user said yes)."""
        if self.opened.session is None:
            return
        session = self.opened.session
        layers = session.doc.layers.state.layers
        if len(layers) > 1 and not flatten:
            ask(self.parent, f"Changing the analysis mixes the {len(layers)} layers into "
                "one (Edit > Undo brings them back). Change it?",
                lambda button: button == QMessageBox.StandardButton.Ok and self.reanalyze(
                    analysis, flatten=True))
            return
        edited = session.start_reading()  # the splices wait while the worker reads it

        def work(progress, cancel, confirm):
            doc = session.doc.reanalyzed(edited, progress=scaled(progress, 0, 0.6),
                                         cancel=cancel, confirm=confirm, **analysis)
            return with_waveform(doc, progress, cancel)

        def done(made):
            doc, synth = made
            tracker, stack = self.opened.tracker, self.opened.undo_stack
            new = (PaintSession(doc, stack, session.history, synth), EditTracker(doc))
            new[1].tiles.update(Rect(0, doc.n_bins, 0, doc.n_frames).tiles(SAVED_TILE)
                                if tracker.tiles else ())  # edits live in every tile now
            stack.push(SwapCommand(self.host.install, (session, tracker), new,
                                       f"analysis: {describe_analysis(analysis)}"))

        worker = self.jobs.run("Re-analyzing", work, done, blocks_editing=True, asks=True)
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
        dialog = QInputDialog(self.parent)
        dialog.setObjectName("preset-name")
        dialog.setWindowTitle("Save preset")
        dialog.setLabelText("Preset name:")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.textValueSelected.connect(self.save_preset_as)
        dialog.open()

    def save_preset_as(self, name: str) -> None:
        """The session's brush (the brush panel's settings) as a user preset (replacing
        one of that name)."""
        name = name.strip()
        if not name or "/" in name or name.startswith("."):
            self.jobs.show_error(f"'{name}' cannot be a preset name; use letters, digits and "
                                 "dashes")
            return
        brush = self.opened.brush
        preset = Preset(name, brush.brush, brush.params, brush.curves,
                        "saved from the brush panel")
        save_preset(preset, user_dir() / f"{name}.json")
        self.brush_panel.reload_presets(select=name)

