"""Layers in the main window: the Layer and Selection menus, the Layers panel's
requests, the source brush of paint to separate, and the view of the mix, a layer
or every layer tinted (docs/layers.md). Each operation is one undo step on the
window's stack (its Step, app.session.layer_ops); an unmix, a separation and an export of
stems run in a worker, the first two applied on the GUI thread when done."""

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLabel,
    QMenuBar,
    QSpinBox,
    QStatusBar,
    QWidget,
)

from app.gui.actions.menuaction import menu_action
from app.gui.services.opened import OpenDocument
from app.gui.services.prompts import file_dialog
from app.gui.services.window_jobs import Jobs
from app.gui.view.canvas import PRESS, RELEASE, SpectrogramCanvas
from app.gui.widgets.layerspanel import LayersPanel
from app.session import layer_ops as ops
from app.session.editor_layers import write_stems
from app.session.unmixing import apply, separated, unmixed, unmixed_parts
from engine.errors import SpectroPaintError

METHODS = (("Harmonic, percussive and residual (HPSS)", "hpss"),
           ("Harmonic and percussive (HPSS)", "hpss:1"), ("Tonal and noise", "tonal-noise"),
           ("Components (NMF)", "nmf"), ("Voice and background", "voice"))
HPSS_FOR = ("For music: drums and clicks apart from held notes. Not for speech: a voice's "
            "pitch moves, so much of it lands in percussive (use Voice and background).")
FOR = {"hpss": HPSS_FOR, "hpss:1": HPSS_FOR,
       "tonal-noise": "A steady tone, whistle or hum apart from the hiss around it (HPSS "
                      "would call a steady hiss harmonic).",
       "nmf": "A few sources of different timbre (two instruments), found blind; then mark "
              "which is which with the Source brush (U) to separate them better.",
       "voice": "Dialogue apart from its background (a neural model, DeepFilterNet3); "
                "where it finds no voice it changes nothing."}
SHOWN_MS = 10000


# a document without layers copies its mix when it gets some: up to this many bytes on
# the GUI thread (about 10 ms here), more in a worker (LayerStack.prepare_layers)
COPIED_HERE_BYTES = 32 << 20

class UnmixDialog(QDialog):
    """Layer > Unmix…: the method, and for NMF how many components."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("unmix-dialog")
        self.setWindowTitle("Unmix layer")
        form = QFormLayout(self)
        self.method = QComboBox()
        self.method.setObjectName("unmix-method")
        for text, data in METHODS:
            self.method.addItem(text, data)
        self.count = QSpinBox()
        self.count.setObjectName("unmix-components")
        self.count.setRange(2, 16)
        self.count.setValue(2)
        self.purpose = QLabel(wordWrap=True)
        self.purpose.setObjectName("unmix-purpose")
        form.addRow("Into", self.method)
        form.addRow("", self.purpose)
        form.addRow("Components", self.count)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.method.currentIndexChanged.connect(lambda _: self._chose())
        self._chose()

    def _chose(self) -> None:
        """What the method chosen is for, and its components box for NMF only."""
        method = self.method.currentData()
        self.count.setEnabled(method == "nmf")
        self.purpose.setText(FOR[method])

    def chosen(self) -> str:
        method = self.method.currentData()
        return f"nmf:{self.count.value()}" if method == "nmf" else method


class LayerActions:
    """Layers of the ``opened`` document, shown in ``panel`` and on ``canvas``; the
    source brush's size is the session's brush's."""

    def __init__(self, parent: QWidget, opened: OpenDocument, canvas: SpectrogramCanvas,
                 panel: LayersPanel, jobs: Jobs, state, status: QStatusBar):
        self.parent, self.opened, self.canvas, self.panel = parent, opened, canvas, panel
        self.jobs, self.state, self.status = jobs, state, status
        self.view: str | None = None  # the panel's choice: None (mix), "layer", "tinted"
        self.source_action = None  # Layer > Source brush (made by build_menus)
        self._mark: list | None = None  # the source brush's points so far
        panel.chosen.connect(self.activate)
        panel.heard.connect(lambda i, on: self._do(lambda d: ops.set_mixing(
            d, i, mute=not on)))
        panel.renamed.connect(lambda i, name: self._do(lambda d: ops.rename_layer(d, i, name)))
        panel.moved.connect(lambda i, at: self._do(lambda d: ops.move_layer(d, i, at)))
        panel.soloed.connect(lambda on: self._on_active(solo=on))
        panel.inverted.connect(lambda on: self._on_active(invert=on))
        panel.gainChanged.connect(lambda db: self._on_active(gain=10 ** (db / 20)))
        panel.viewChanged.connect(self.show_view)
        opened.undo_stack.indexChanged.connect(lambda _: self.refresh())

    def build_menus(self, bar: QMenuBar) -> list:
        """The Layer and Selection menus; the entries that need a document."""
        layer = bar.addMenu("&Layer")
        needing = [
            menu_action(layer, "&New layer", lambda: self._do(ops.new_layer), "Ctrl+Shift+N"),
            menu_action(layer, "&Duplicate layer", lambda: self._do(ops.duplicate_layer),
                        "Ctrl+J"),
            menu_action(layer, "De&lete layer", lambda: self._do(ops.delete_layer)),
            menu_action(layer, "&Merge down", lambda: self._do(ops.merge_down), "Ctrl+Shift+E"),
            menu_action(layer, "&Rename layer…", self.rename_dialog)]
        layer.addSeparator()
        needing += [menu_action(layer, "&Unmix…", self.unmix_dialog, "Ctrl+U")]
        self.source_action = menu_action(layer, "&Source brush (paint to separate)",
                                         self._source_toggled, "U", checkable=True)
        layer.addSeparator()
        needing += [self.source_action,
                    menu_action(layer, "&Export stems…", self.export_stems_dialog)]
        selection = self.selection_menu = bar.addMenu("&Selection")
        needing += [menu_action(selection, "&To new layer", lambda: self.from_selection(True),
                                "Ctrl+Shift+J"),
                    menu_action(selection, "&Copy to new layer",
                                lambda: self.from_selection(False))]
        return needing

    # -- the panel and the view ---------------------------------------------------------
    def refresh(self) -> None:
        """The panel and the view as the document's layers are now (after any step)."""
        doc = self.opened.doc
        self.panel.show_layers(None if doc is None else doc.layers.state)
        if self.view == "layer" and doc is not None:
            self.canvas.set_layer_view(doc.layers.active.id)
        elif self.view == "tinted":
            self.canvas.set_layer_view("tinted")

    def show_view(self, view: str | None) -> None:
        self.view = view
        doc = self.opened.doc
        self.canvas.set_layer_view(None if view is None or doc is None else
                                   doc.layers.active.id if view == "layer" else view)

    def activate(self, layer_id: int) -> None:
        """Paint on this layer from now on (a stroke being painted lands first); not
        while a job that edits the document runs (a repair, an unmix: they act on the
        layer that was active when they started)."""
        if self.opened.session is None or self.jobs.editing_blocked("Choosing a layer"):
            self.refresh()
            return
        self.opened.session.finish()
        ops.activate(self.opened.doc, layer_id)
        self.refresh()

    def _on_active(self, **mixing) -> None:
        self._do(lambda d: ops.set_mixing(d, d.layers.active.id, **mixing))

    def _do(self, operation, label: str = "Layers", *, from_worker: bool = False) -> None:
        """``operation(doc)`` (it returns its undo step), pushed on the stack; unless a job
        that edits the document runs (``from_worker``: that job's own result)."""
        session = self.opened.session
        if session is None or not from_worker and self.jobs.editing_blocked(label):
            self.refresh()
            return
        session.finish()
        doc = self.opened.doc
        if doc.layers.plain and not from_worker and \
                doc.cells.numel() * doc.cells.element_size() > COPIED_HERE_BYTES:
            # the mix gets a tensor of its own first: a copy of all of it (0.8 GiB, up to
            # a second, for 10 minutes of stereo), in a worker
            self._prepared_then(label, lambda: self._do(operation, label, from_worker=True))
            return
        try:
            step = operation(doc)
        except SpectroPaintError as e:
            doc.layers.forget_prepared()
            self.refresh()
            self.jobs.show_error(str(e))
            return
        session.push(step)
        session.catch_up_soon()
        self.refresh()

    # -- menu entries -------------------------------------------------------------------
    def rename_dialog(self) -> None:
        doc = self.opened.doc
        if doc is None:
            return
        dialog = QInputDialog(self.parent)
        dialog.setObjectName("rename-layer")
        dialog.setLabelText("Layer name")
        dialog.setTextValue(doc.layers.active.name)
        layer_id = doc.layers.active.id
        dialog.textValueSelected.connect(
            lambda name: self._do(lambda d: ops.rename_layer(d, layer_id, name)))
        dialog.open()

    def from_selection(self, move: bool) -> None:
        sel = self.opened.selection
        if self.opened.session is not None and sel is None:
            self.status.showMessage("To new layer: draw a selection first (S, A or H)", 5000)
            return
        self._do(lambda d: ops.selection_to_layer(d, sel, move=move,
                                                  channel=self.opened.channel))

    def unmix_dialog(self) -> None:
        if self.opened.session is None:
            return
        dialog = UnmixDialog(self.parent)
        dialog.accepted.connect(lambda: self.unmix(dialog.chosen()))
        dialog.open()

    def unmix(self, method: str):
        """Unmix the active layer in a worker; one undo step when it is done."""
        doc = self.opened.doc
        layer = doc.layers.active
        return self._in_worker(f"Unmix {layer.name}", lambda progress, cancel: unmixed(
            doc, method, layer=layer.id, progress=progress, cancel=cancel))

    def _prepared_then(self, label: str, then) -> None:
        """:meth:`LayerStack.prepare_layers` in a worker, then ``then()``."""
        session, layers = self.opened.session, self.opened.doc.layers

        def done(_) -> None:
            if self.opened.session is session:
                then()

        self.jobs.run(f"{label}: preparing layers", lambda progress, cancel:
                      layers.prepare_layers(), done, blocks_editing=True)

    def _in_worker(self, label: str, work):
        session = self.opened.session
        if session is None or self.jobs.editing_blocked(label):
            return None
        session.finish()
        layers = self.opened.doc.layers

        def work_and_prepare(progress, cancel):
            result = work(progress, cancel)
            layers.prepare_layers()  # the mix's own tensor, if it has none yet
            return result

        def done(result) -> None:
            if self.opened.session is session:
                self._do(lambda d: apply(d, result), label, from_worker=True)
                self.status.showMessage(f"{result.label}: {len(result.names)} layers", SHOWN_MS)

        return self.jobs.run(label, work_and_prepare, done, blocks_editing=True)

    # -- the source brush ------------------------------------------------------------------
    def _source_toggled(self) -> None:
        on = self.source_action.isChecked()
        doc = self.opened.doc
        if on and doc is not None:
            try:
                unmixed_parts(doc)
            except SpectroPaintError as e:
                self.source_action.setChecked(False)
                self.jobs.show_error(str(e))
                return
            self.status.showMessage("Source brush: paint over what belongs to the chosen "
                                    "layer; the unmix runs again after each stroke", SHOWN_MS)

    @property
    def painting_sources(self) -> bool:
        return self.source_action is not None and self.source_action.isChecked()

    def mark(self, seconds: float, hz: float, phase: int) -> None:
        """A pen event of the source brush: a stroke's points become one mark of the
        active layer; at its end the separation runs again (one undo step)."""
        if phase == PRESS:
            self._mark = []
        if self._mark is None:
            return
        self._mark.append([max(seconds, 0.0), max(hz, 0.0)])
        if phase != RELEASE:
            return
        points, self._mark = self._mark, None
        doc = self.opened.doc
        try:
            group, _ = unmixed_parts(doc)
        except SpectroPaintError as e:
            self.jobs.show_error(str(e))
            return
        params = self.opened.brush.params
        part = [x.id for x in group].index(doc.layers.active.id)
        marks = [{"part": part, "points": points,
                  "radius_ms": min(max(params.get("radius_ms", 50.0), 1.0), 5000.0),
                  "radius_hz": min(max(params.get("radius_hz", 200.0), 1.0), 20000.0)}]
        layer = doc.layers.active.id
        self._in_worker("Paint to separate", lambda progress, cancel: separated(
            doc, marks, layer=layer, progress=progress, cancel=cancel))

    # -- stems ----------------------------------------------------------------------------
    def export_stems_dialog(self) -> None:
        if self.opened.session is None:
            return
        source = self.opened.audio_path
        name = f"{source.stem if source else 'stems'}.wav"
        file_dialog(self.parent, self.state, "Export stems (one file per layer)",
                    "Audio (*.wav *.flac *.aiff)", self.export_stems, save=True, name=name)

    def export_stems(self, path: Path):
        """Each layer as heard, as ``<name>-<n>-<layer><suffix>`` beside ``path``
        (app.session.editor_layers.write_stems)."""
        session, doc = self.opened.session, self.opened.doc
        if session is None or self.jobs.busy("Export stems"):
            return None
        session.finish()

        def work(progress, cancel):
            return [report.path for _, report in write_stems(
                doc, path.parent, stem=path.stem, suffix=path.suffix or ".wav",
                progress=progress, cancel=cancel)]

        def done(written):
            self.status.showMessage(f"Exported {len(written)} stems: " +
                                    ", ".join(p.name for p in written), SHOWN_MS)

        return self.jobs.run("Export stems", work, done, blocks_editing=True)
