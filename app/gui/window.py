"""The main window: the canvas area, the panels, the controllers that act on them
(docs/gui.md, "How the window is built"), the menus, the document swap and painting."""

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QLabel,
    QMainWindow,
    QScrollArea,
    QToolBar,
    QUndoView,
)

from app.assets import DEMO
from app.gui.actions.clonesource import CloneSource
from app.gui.actions.compare_ab import CompareActions
from app.gui.actions.editactions import EditActions
from app.gui.actions.fileactions import FileActions
from app.gui.actions.imageactions import ImageActions
from app.gui.actions.layeractions import LayerActions
from app.gui.actions.menuaction import menu_action
from app.gui.actions.repairactions import RepairActions
from app.gui.actions.repairmarks import ClickMarks
from app.gui.actions.selectionactions import SelectionActions
from app.gui.actions.transformtool import TransformTool
from app.gui.actions.transport import Transport
from app.gui.actions.viewcontrols import ViewControls
from app.gui.services.autosave import Autosaver
from app.gui.services.editing import PaintSession, window_history
from app.gui.services.history_file import restore
from app.gui.services.messages import MessageLog, messages_button, pointer_toolbar
from app.gui.services.opened import OpenDocument
from app.gui.services.playback import Player
from app.gui.services.window_jobs import Jobs
from app.gui.services.windowstate import WindowState
from app.gui.services.workers import Worker
from app.gui.view.canvas import PRESS
from app.gui.view.canvas_area import CanvasArea
from app.gui.view.viewstate import format_time
from app.gui.widgets.demohint import DemoHint
from app.gui.widgets.helpdialog import show_about, show_shortcuts
from app.gui.widgets.layerspanel import LayersPanel
from app.gui.widgets.levelmeter import LevelMeter
from app.gui.widgets.nnaudio_dock import AnalysisView
from app.gui.widgets.panels import AnalysisPanel, BrushPanel, ViewPanel
from app.gui.widgets.selectionpanel import SelectionPanel
from app.gui.widgets.spectrumview import SpectrumView
from app.project.saved_history import Kept
from app.project.write import EditTracker
from app.session.session import BrushSettings
from engine.io.layout import channel_names
from engine.model.document import Document
from engine.model.resynth import Resynthesizer

SHORT_LABELS = {"Paint tool": "Paint", "Rectangle select tool": "Rectangle",
                "Time select tool": "Time", "Frequency select tool": "Frequency",
                "Lasso select tool": "Lasso", "Harmonic select tool": "Harmonic",
                "Play / pause": "Play", "Fit to window": "Fit"}


class MainWindow(QMainWindow):
    """Composition: the window makes the open document (:class:`OpenDocument`), the
    canvas and panels, and the controllers, each handed what it needs, then builds the
    menus from their entries and wires the signals. It keeps the document swap and
    the painting."""

    def __init__(self, device: str | None = None, autosave_folder: Path | None = None):
        super().__init__()
        self.device = device
        self.undo_stack = QUndoStack(self)
        self.opened = OpenDocument(self.undo_stack)
        self.player = Player()
        self.settings = QSettings("SpectroPaint", "SpectroPaint")
        self._closing = False  # the user agreed to close with unsaved edits
        self._build()
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.state.restore_state()
        self.state.restore_view_settings()
        self.update_title()
        self.enable_document_actions()
        self.autosaver = Autosaver(self, autosave_folder)

    # -- layout ----------------------------------------------------------------
    def _build(self) -> None:
        self.area = CanvasArea()
        self.canvas = self.area.canvas
        self.setCentralWidget(self.area)

        self.brush_panel = BrushPanel()
        self.view_panel = ViewPanel()
        self.analysis_panel = AnalysisPanel()
        self.selection_panel = SelectionPanel()
        self.layers_panel = LayersPanel()
        self.history_view = QUndoView(self.undo_stack)
        self.history_view.setEmptyLabel("(opened)")
        self.analysis_view = AnalysisView(self)
        self.messages = MessageLog(self.statusBar())
        self.spectrum = SpectrumView(self.canvas.view)
        self.docks = []
        for title, widget, area in (("Brushes", self.brush_panel, Qt.RightDockWidgetArea),
                                    ("View", self.view_panel, Qt.RightDockWidgetArea),
                                    ("Analysis", self.analysis_panel, Qt.RightDockWidgetArea),
                                    ("Selection", self.selection_panel, Qt.RightDockWidgetArea),
                                    ("Layers", self.layers_panel, Qt.RightDockWidgetArea),
                                    ("History", self.history_view, Qt.LeftDockWidgetArea),
                                    ("Messages", self.messages, Qt.LeftDockWidgetArea),
                                    ("Spectrum", self.spectrum, Qt.LeftDockWidgetArea),
                                    ("nnAudio view", self.analysis_view,
                                     Qt.BottomDockWidgetArea)):
            dock = QDockWidget(title, self)
            dock.setObjectName(title)
            if area != Qt.BottomDockWidgetArea:
                widget.setFixedWidth(330 if area == Qt.RightDockWidgetArea else 200)  # no jumps
            if area == Qt.RightDockWidgetArea:  # a panel scrolls; the window never grows
                widget = _scrolling(widget)
            dock.setWidget(widget)
            self.addDockWidget(area, dock)
            self.docks.append(dock)
        self._arrange_docks()
        self.readout = QLabel()
        self.readout.setObjectName("readout")
        status = self.statusBar()
        self.jobs = Jobs(self, status)
        status.addPermanentWidget(messages_button(self.messages.parentWidget()))
        self.level_meter = LevelMeter(self.player)

        # the controllers, each handed what it uses
        self.state = WindowState(self, self.settings, self.view_panel, self.opened)
        self.compare = CompareActions(self.opened, status)
        self.transport = Transport(self.player, self.canvas, self.opened, self.compare,
                                   self.level_meter, status)
        self.selection = SelectionActions(self.canvas, self.selection_panel, self.opened,
                                          self.jobs, status)
        self.files = FileActions(self, self, self.opened, self.jobs, self.state, self.settings,
                                 self.analysis_panel, self.brush_panel, status, self.device)
        self.images = ImageActions(self, self.opened, self.canvas, self.view_panel, self.state,
                                   self.jobs, status)
        self.view_controls = ViewControls(self.area, self.view_panel, self.selection,
                                          self.opened, self.readout, self.spectrum)
        marks = ClickMarks(self.area, self.opened, status)
        self.repairs = RepairActions(self, self.opened, self.canvas, self.jobs, self.transport,
                                     marks, status, view_panel=self.view_panel)
        self.edits = EditActions(self, self.opened, self.canvas, self.jobs, status,
                                 install=self.install)
        self.transform_tool = TransformTool(self.canvas, self.edits, status)
        self.layers = LayerActions(self, self.opened, self.canvas, self.layers_panel, self.jobs,
                                   self.state, status)

        self.opened.events.subscribe("brush", self._show_brush)
        for signal in (self.canvas.lanePressed, self.canvas.selectionChanged,
                       self.view_panel.paintChannelChanged, self.view_panel.viewChannelChanged):
            signal.connect(self._follow_channel)  # "the lane it began in" follows the press
        self.canvas.strokePoint.connect(self._pen)
        self.canvas.playToggled.connect(self.transport.toggle_play)
        self.area.time_ruler.scrubbed.connect(self.transport.scrub)
        self.area.time_ruler.scrubEnded.connect(self.transport.end_scrub)
        self.brush_panel.changed.connect(self._brush_changed)
        self.brush_panel.saveRequested.connect(self.files.save_preset_dialog)
        self.analysis_panel.applyRequested.connect(self.files.reanalyze)
        self.selection_panel.playRequested.connect(self.transport.play_selection_alone)
        self.canvas.viewChanged.connect(self.analysis_view.schedule)
        self.undo_stack.indexChanged.connect(self._after_undo_redo)
        self.undo_stack.cleanChanged.connect(lambda _: self.update_title())
        self._build_menus()
        self.clone_source = CloneSource(self.canvas, self.brush_panel, status)
        self.demo_hint = DemoHint(self.canvas, self.settings)
        self._brush_changed()

    def _arrange_docks(self) -> None:
        """The first-run layout (QSettings keeps the user's own after that): on the
        right, the full height, the brush panel and under it the view, analysis and
        selection panels as tabs; the nnAudio view a short strip under the canvas, which
        keeps most of the window."""
        brushes, view, analysis, selection, layers, history, messages, spectrum, nn_view = \
            self.docks
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(view, analysis)
        self.tabifyDockWidget(analysis, selection)
        self.tabifyDockWidget(selection, layers)
        self.splitDockWidget(history, spectrum, Qt.Orientation.Vertical)
        self.tabifyDockWidget(history, messages)
        view.raise_()
        history.raise_()
        self.resizeDocks([brushes, view], [420, 340], Qt.Orientation.Vertical)
        self.resizeDocks([nn_view], [118], Qt.Orientation.Vertical)
        self.resizeDocks([history, spectrum], [420, 200], Qt.Orientation.Vertical)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        files, images = self.files, self.images
        f = bar.addMenu("&File")
        menu_action(f, "&Open audio…", files.open_dialog, QKeySequence.StandardKey.Open)
        f.addMenu(files.recent_menu)
        menu_action(f, "Open &project…", files.open_project_dialog)
        f.addSeparator()
        self.document_actions = [  # nothing to save or export without a document
            menu_action(f, "&Save project", files.save_project, QKeySequence.StandardKey.Save),
            menu_action(f, "Save project &as…", files.save_project_dialog),
            menu_action(f, "&Export audio…", files.export_dialog, "Ctrl+E")]
        f.addMenu(files.depth_menu)
        f.addMenu(files.quality_menu)
        self.document_actions += [
            menu_action(f, "Export spectrogram &image…", images.export_png_dialog),
            menu_action(f, "&Import image as sound…", images.import_image_dialog)]
        f.addSeparator()
        menu_action(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        e = bar.addMenu("&Edit")
        self.undo_action = menu_action(e, "&Undo", self.undo, "Ctrl+Z")
        self.redo_action = menu_action(e, "&Redo", self.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
        for action, can, text, word in (
                (self.undo_action, self.undo_stack.canUndoChanged,
                 self.undo_stack.undoTextChanged, "&Undo"),
                (self.redo_action, self.undo_stack.canRedoChanged,
                 self.undo_stack.redoTextChanged, "&Redo")):
            action.setEnabled(False)
            can.connect(action.setEnabled)
            text.connect(lambda t, a=action, w=word: a.setText(f"{w} {t}".strip()))
        e.addSeparator()
        self.document_actions += self.edits.build_menu(e)
        e.addSeparator()
        self.selection.build_tools(e)
        self.selection.tool_actions["transform"].triggered.connect(self.transform_tool.chosen)
        e.addSeparator()
        self.selection.build_menu(e)
        v = bar.addMenu("&View")
        zoom = [menu_action(v, "Zoom &in", lambda: self.canvas.zoom(2.0), "Ctrl+="),
                menu_action(v, "Zoom &out", lambda: self.canvas.zoom(0.5), "Ctrl+-"),
                menu_action(v, "&Fit to window", self.canvas.fit, "Ctrl+0")]
        v.addSeparator()
        p = bar.addMenu("&Play")
        self.transport.build_menu(p)
        self.compare.build_action(p)
        self.repairs.build_menu(bar)
        self.document_actions += list(self.repairs.repair_actions.values())
        self.document_actions += self.layers.build_menus(bar)
        self.document_actions += self.edits.spectral.build_process_menu(
            self.layers.selection_menu)
        self.layers.source_action.triggered.connect(self._source_brush_chosen)
        play, stop = self.transport.play_action, self.transport.stop_action
        tools = [a for name, a in self.selection.tool_actions.items() if name != "transform"]
        # (the Transform tool is in the Edit menu, V: one more button pushed the level
        # meter off a 1280-pixel window)
        self.toolbar = self._toolbar(tools,
                                     [self.undo_action, self.redo_action], [play, stop], zoom)
        self.pointer_bar = pointer_toolbar(self, self.readout, self.level_meter)
        for panel in (*self.docks, self.toolbar, self.pointer_bar):  # shown or hidden
            v.addAction(panel.toggleViewAction())
        h = bar.addMenu("&Help")
        menu_action(h, "&Keyboard and mouse…", lambda: show_shortcuts(self),
                    QKeySequence.StandardKey.HelpContents)
        menu_action(h, "&About SpectroPaint", lambda: show_about(self, self.device))

    def _toolbar(self, *groups: list[QAction]) -> QToolBar:
        """The tools and the everyday actions as buttons (the menus' own actions, so
        both stay in step); a tooltip names each one's shortcut."""
        bar = QToolBar("Toolbar", self)
        bar.setObjectName("Toolbar")  # saved and restored with the panels
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for i, group in enumerate(groups):
            if i:
                bar.addSeparator()
            for action in group:
                bar.addAction(action)
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                name = action.text().replace("&", "")
                # a short fixed label (Undo's text grows with what it undoes)
                action.setIconText(SHORT_LABELS.get(name, name))
                action.setToolTip(f"{name} ({keys})" if keys else name)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        return bar

    # -- document --------------------------------------------------------------
    @property
    def session(self) -> PaintSession | None:
        """The open document's paint session (the views and tests read it here)."""
        return self.opened.session

    @property
    def doc(self) -> Document | None:
        return self.opened.doc

    def open_path(self, path: Path, allow_truncated: bool = False) -> Worker | None:
        """Start-up's entry point (app.gui.start): FileActions.open_path."""
        return self.files.open_path(path, allow_truncated)

    def offer_recovery(self, orphan: Path, otherwise) -> None:
        """Start-up's entry point (app.gui.start): FileActions.offer_recovery."""
        self.files.offer_recovery(orphan, otherwise)

    def set_document(self, made: tuple[Document, Resynthesizer], audio_path: Path | None,
                     project_path: Path | None = None, view: dict | None = None,
                     kept: Kept | None = None, content_hz: float | None = None) -> None:
        """Swap in a new document and its resynthesizer (made by a worker); a project
        brings its view and its undo history; ``content_hz``: the top of the
        frequency axis it opens on (app.gui.view.viewfit; None: Nyquist)."""
        doc, synth = made
        self.transport.stop()
        if self.opened.session:
            self.opened.session.close()
        self.undo_stack.clear()
        self.opened.audio_path, self.opened.project_path = audio_path, project_path
        self.canvas.view.content_hz = content_hz
        history = window_history(doc, self.undo_stack)
        self.install(PaintSession(doc, self.undo_stack, history, synth), EditTracker(doc),
                     fit=True)
        self.layers.show_view(None)  # the mix; the panel says so
        self.layers_panel.view.setCurrentIndex(0)
        self.selection.set_selection(None)  # drawn on the last file; a project brings its own
        if view:
            self.view_controls.apply_view(view)
        if kept is not None and kept.steps:
            self.autosaver.holding = True  # the steps were saved: nothing new to autosave
            try:
                restore(self.session, kept)
            finally:
                self.autosaver.holding = False
        self.area.view_changed()
        self.undo_stack.setClean()
        self.update_title()
        self.enable_document_actions()
        self.demo_hint.show_for(audio_path == DEMO and project_path is None)
        self.statusBar().showMessage(f"{doc.channels} ch, {doc.sample_rate} Hz, "
                                     f"{format_time(doc.length / doc.sample_rate)}; "
                                     f"audio: {self.player.output.name}", 8000)

    def install(self, session: PaintSession, tracker: EditTracker, fit: bool = False) -> None:
        """Make ``session`` the one painted on and shown: a new file (``fit``: the whole
        of it), or one analysis swapped for another, which keeps the view as it is."""
        self.transport.stop()
        self.opened.session, self.opened.tracker = session, tracker
        session.splice_each_event = lambda: self.player.playing
        session.failed = self._stroke_failed
        session.notice = lambda text: self.statusBar().showMessage(text, 15000)
        doc = session.doc
        names = list(doc.audio.layout) or list(channel_names(doc.channels))
        self.view_panel.set_channels(names, keep=not fit)
        self.analysis_panel.show_settings(doc.transform.settings())
        self.canvas.set_document(doc, self.view_panel.view_channel.currentData(), names, fit)
        self.area.overview.set_session(session)
        self.layers.refresh()
        self.view_controls.lanes_changed()
        self._follow_channel()
        self.area.view_changed()
        self.analysis_view.schedule()

    def enable_document_actions(self) -> None:
        for action in self.document_actions:
            action.setEnabled(self.session is not None)
        self.area.show_empty(self.session is None)
        self.history_view.setEmptyLabel("(opened)" if self.session is not None else "")

    def show_opening(self, name: str) -> None:
        """With no document yet, the canvas names the file being opened."""
        self.area.show_empty(True, opening=name)

    @property
    def modified(self) -> bool:
        return self.opened.modified

    def update_title(self) -> None:
        name = self.opened.source
        star = "*" if self.modified else ""
        self.setWindowTitle(f"SpectroPaint — {name.name}{star}" if name else "SpectroPaint")

    # -- painting and view ---------------------------------------------------------
    def _pen(self, seconds, hz, pressure, phase) -> None:
        if self.session is None or (phase == PRESS and self.jobs.editing_blocked("Painting")):
            return
        if self.layers.painting_sources:
            self.layers.mark(seconds, hz, phase)  # paint to separate: a mark, not paint
            return
        if phase == PRESS:
            self.clone_source.stroke_starts(seconds, hz)  # an Alt+clicked source: its offset
        brush = self.opened.brush
        self.session.pen(seconds, hz, pressure, phase, (brush.brush, brush.params, brush.curves),
                         self.opened.channel, brush.label)

    def _source_brush_chosen(self) -> None:
        """The source brush is painted with: it brings the paint tool (a selection tool
        would select, and mark nothing)."""
        if self.layers.painting_sources:
            self.selection.set_tool("paint")

    def _stroke_failed(self, brush: str, error: Exception) -> None:
        """A brush must never take the app down; the stroke was undone."""
        self.statusBar().showMessage(f"The stroke was undone: the {brush} brush failed "
                                     f"({error})", 15000)
        self.canvas.update()

    def undo(self) -> None:
        if self.jobs.editing_blocked("Undo"):
            return
        if self.session:
            self.session.finish()  # a stroke still being painted lands first
        self.undo_stack.undo()

    def redo(self) -> None:
        if self.jobs.editing_blocked("Redo"):
            return
        if self.session:
            self.session.finish()
        self.undo_stack.redo()

    def _after_undo_redo(self) -> None:
        if self.session:
            self.session.catch_up_soon()
        self.analysis_view.schedule()
        self.canvas.repaint_changes()  # the cells undone or redone (document listener)
        self.update_title()

    def _brush_changed(self) -> None:
        """The panel's settings are the session's brush."""
        brush, params, curves = self.brush_panel.current()
        self.opened.use_brush(BrushSettings(brush, params, curves, self.brush_panel.label()))

    def _show_brush(self, brush: BrushSettings) -> None:
        """The pointer shows the session's brush's size."""
        params = brush.params
        self.canvas.brush_harmonics = params.get("harmonics", 1)  # declared by the harmonic brush
        self.canvas.brush_radius = (params.get("radius_ms", 50.0) / 1000,
                                    params.get("radius_hz", 200.0))
        self.canvas.brush_cents = params.get("radius_cents", 0.0)
        self.canvas.update()

    def paint_channel(self) -> int | None:
        """Where a stroke goes: the lane it began in, all channels, or one chosen."""
        if self.view_panel.paint_channel.currentData() == "lane":
            return self.canvas.lanes[min(self.canvas.press_lane, len(self.canvas.lanes) - 1)]
        return self.view_panel.channel(self.view_panel.paint_channel)

    def _follow_channel(self, *_) -> None:
        """The session's paint channel, as the view panel's choice and the last press
        on the canvas make it."""
        self.opened.paint_on(self.paint_channel())

    def view_state(self) -> dict:
        """The view as a project and an autosave keep it."""
        return self.view_controls.view_state()

    # -- window events ---------------------------------------------------------------
    def closeEvent(self, event) -> None:
        if self.modified and not self._closing:
            event.ignore()

            def close_now():
                self._closing = True
                self.close()

            self.files.maybe_discard(close_now)
            return
        self.transport.stop()
        if self.session is not None:
            self.session.close()  # no painting turn or audio splice runs after this
        self.jobs.stop()
        # the stack says "clean changed" as it is destroyed, after this window's Python side
        # can still ask it anything: nothing it says matters from here
        self.undo_stack.blockSignals(True)
        self.autosaver.remove()  # a normal quit: the user was asked about the edits
        self.state.save_state()
        event.accept()

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.files.maybe_discard(lambda: self.files.open_path(Path(urls[0])))


def _scrolling(panel) -> QScrollArea:
    """``panel`` in a scroll area: however many controls a brush has, the dock's
    minimum height stays small, so choosing a preset cannot resize the window."""
    area = QScrollArea()
    area.setWidget(panel)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setFixedWidth(panel.width() + area.verticalScrollBar().sizeHint().width())
    return area
