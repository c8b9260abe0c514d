"""The edits of a spectral selection in the window: Cut, Copy and Delete of a
selection that is not a time range (app.session.spectral_clip), a spectral clip
pasted at the playhead (mixed in, or as a new layer), Edit > Transform selection…
(move, transpose, shift, stretch; the hole empty or healed), and Selection > Gain…,
Normalize…, Fade in, Fade out and Invert polarity (app.session.selection_process)
on the selection, or the whole file when nothing is selected.

Each runs in a worker while painting and undo wait; the document keeps its writes'
marks (Document.hold_marks) until the step lands on the GUI thread, where the view
and the sound hear of them; then it is one undo step."""

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QInputDialog,
    QMenu,
)

from app.gui.actions.menuaction import menu_action
from app.gui.services.editing import Reselect
from app.session.selection import Selection
from app.session.selection_process import process_selection
from app.session.spectral_clip import (
    SEMITONES,
    STRETCH,
    Clip,
    copy_clip,
    cut_clip,
    move_selection,
    paste_as_layer,
    paste_clip,
)

SHOWN_MS = 8000


class TransformDialog(QDialog):
    """Edit > Transform selection…: exact values for moving its content."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("transform-dialog")
        self.setWindowTitle("Transform selection")
        form = QFormLayout(self)
        self.fields = {}
        for key, label, low, high, value, suffix in (
                ("by_s", "Move by", -3600.0, 3600.0, 0.0, " s"),
                ("semitones", "Transpose", -SEMITONES, SEMITONES, 0.0, " st"),
                ("shift_hz", "Shift", -20000.0, 20000.0, 0.0, " Hz"),
                ("stretch", "Stretch", *STRETCH, 1.0, " x")):
            box = QDoubleSpinBox(decimals=3, minimum=low, maximum=high, value=value,
                                 suffix=suffix)
            box.setObjectName(f"transform-{key}")
            form.addRow(label, box)
            self.fields[key] = box
        self.heal = QCheckBox("Heal the hole it leaves")
        self.heal.setObjectName("transform-heal")
        form.addRow(self.heal)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> dict:
        return {key: box.value() for key, box in self.fields.items()} | \
            {"heal": self.heal.isChecked()}


class SelectionEdits:
    """Spectral edits for ``edits`` (app.gui.actions.editactions.EditActions: the window,
    its document, canvas, jobs, status bar and the clipboard)."""

    def __init__(self, edits):
        self.edits = edits

    def build_process_menu(self, menu: QMenu) -> list:
        """Selection > Gain… … Invert polarity."""
        menu.addSeparator()
        return [menu_action(menu, "&Gain…", self.ask_gain),
                menu_action(menu, "&Normalize…", self.ask_normalize),
                menu_action(menu, "Fade &in", lambda: self.process("fade_in")),
                menu_action(menu, "Fade &out", lambda: self.process("fade_out")),
                menu_action(menu, "In&vert polarity", lambda: self.process("invert"))]

    # -- the clipboard -------------------------------------------------------------
    def copy(self, selection: Selection) -> None:
        self._run("copy selection", lambda doc: (copy_clip(doc, selection=selection), None))

    def cut(self, selection: Selection) -> None:
        self._run("cut selection", lambda doc: cut_clip(doc, selection=selection))

    def delete(self, selection: Selection) -> None:
        def op(doc):
            step = cut_clip(doc, selection=selection)[1]
            step.label = "delete selection"
            return None, step

        self._run("delete selection", op)

    def paste(self, clip: Clip, at: float, *, mode: str = "add",
              as_layer: bool = False) -> None:
        """``clip`` at ``at`` seconds; what was pasted then selected (a rectangle around
        it), so the Transform tool can move or transpose it next."""
        def select() -> Selection | None:
            doc = self.edits.opened.doc
            end = min(at + clip.duration_s, doc.length / doc.sample_rate)
            return None if end <= at else Selection.rect(
                at, end, f_lo=min(clip.hz), f_hi=min(max(clip.hz), doc.sample_rate / 2))

        if as_layer:
            self._run("paste as layer", lambda doc: (None, paste_as_layer(doc, clip, at_s=at)),
                      select)
        else:
            self._run("paste", lambda doc: (None, paste_clip(doc, clip, at_s=at, mode=mode)),
                      select)

    # -- transform and process -------------------------------------------------------
    def ask_transform(self) -> None:
        selection = self._selection("Transform selection")
        if selection is None:
            return
        dialog = TransformDialog(self.edits.parent)
        dialog.heal.setChecked(self.edits.heal_action.isChecked())
        dialog.accepted.connect(lambda: self.transform(selection, **dialog.values()))
        dialog.open()

    def transform(self, selection: Selection, *, landed: Selection | None = None,
                  **values) -> None:
        """Move what ``selection`` holds (``values``: move_selection's); ``landed``: the
        selection where it went, selected once it has (the Transform tool's)."""
        def op(doc):
            step = move_selection(doc, selection=selection, **values)
            step.label = "transform selection"
            return None, step

        self._run("transform selection", op, None if landed is None else lambda: landed)

    def ask_gain(self) -> None:
        self._ask("gain", "Gain (dB) for the selection, or the whole file:", -120.0, 48.0,
                  -6.0, lambda db: self.process("gain", db=db))

    def ask_normalize(self) -> None:
        self._ask("normalize", "Peak of the selection, or the whole file (dBFS):", -120.0,
                  0.0, -1.0, lambda peak: self.process("normalize", peak_db=peak))

    def process(self, op: str, **params) -> None:
        """``op`` over the selection (every channel), or the whole file."""
        selection = self.edits.opened.selection
        self._run(op.replace("_", " "), lambda doc: (None, process_selection(
            doc, op=op, selection=selection, **params)))

    def _ask(self, name: str, text: str, low: float, high: float, value: float,
             then: Callable[[float], None]) -> None:
        if self.edits.opened.session is None:
            return
        dialog = QInputDialog(self.edits.parent)
        dialog.setObjectName(f"{name}-dialog")
        dialog.setWindowTitle(name.capitalize())
        dialog.setLabelText(text)
        dialog.setInputMode(QInputDialog.InputMode.DoubleInput)
        dialog.setDoubleRange(low, high)
        dialog.setDoubleDecimals(2)
        dialog.setDoubleValue(value)
        dialog.doubleValueSelected.connect(then)
        dialog.open()

    # -- how they run ------------------------------------------------------------------
    def _selection(self, verb: str) -> Selection | None:
        selection = self.edits.opened.selection
        if selection is None and self.edits.opened.session is not None:
            self.edits.status.showMessage(f"{verb}: select something first", SHOWN_MS)
        return selection

    def _run(self, label: str, op: Callable,
             selects: Callable[[], Selection | None] | None = None) -> None:
        """``op(doc) -> (clip or None, step or None)`` in a worker; the clip onto the
        clipboard, the step onto the undo stack; then what ``selects()`` gives selected,
        the selection before it put back when the step is undone (and that redone)."""
        edits = self.edits
        session = edits.opened.session
        if session is None or edits.jobs.editing_blocked(label.capitalize()):
            return
        session.finish()  # every stroke landed first
        doc = session.doc
        doc.hold_marks()

        def work(progress, cancel):
            return op(doc)

        def landed(result=None):
            doc.release_marks()
            session.catch_up()
            if result is None:
                return
            clip, step = result
            if clip is not None:
                edits.opened.keep(clip)
                edits.status.showMessage(f"Copied the selection ({clip.nbytes / 2**20:.1f} MiB)",
                                         SHOWN_MS)
            opened = edits.opened
            reselect = None if selects is None or step is None else \
                Reselect(opened.selection, selects(), opened.select)
            if step is not None:
                session.push(step, step.label, reselect)
            if reselect is not None:
                opened.select(reselect.after)

        worker = edits.jobs.run(label.capitalize(), work, landed, blocks_editing=True)
        if worker is None:
            doc.release_marks()
        else:
            worker.failed.connect(lambda _: landed())
            worker.cancelled.connect(landed)
