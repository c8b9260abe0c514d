"""Selections in the main window: the tools (rectangle, lasso, harmonic), the
panel's settings applied to the selection, filling it with the current brush
(one undo step) and playing it alone."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.editing import StrokeCommand
from brushes.selection import Selection, fill
from engine.errors import SpectroPaintError

TOOL_NAMES = {"paint": "Paint", "select": "Rectangle select", "lasso": "Lasso select",
              "harmonic": "Harmonic select"}


class SelectionActions:
    """Mixed into MainWindow (which provides canvas, selection_panel, session...)."""

    def set_tool(self, tool: str) -> None:
        self.canvas.tool = tool
        for name, action in self.tool_actions.items():
            action.setChecked(name == tool)
        self.canvas.update()

    def clear_selection(self) -> None:
        self.canvas.selection = None
        self.canvas.update()

    def _harmonic_changed(self) -> None:
        self.canvas.harmonic = self.selection_panel.harmonic()
        self._selection_settings_changed()

    def _selection_drawn(self, selection: Selection | None) -> None:
        """A new selection takes the panel's feather and inversion."""
        if selection is not None:
            self.canvas.selection = selection.changed(**self.selection_panel.options())
        self.canvas.update()

    def _selection_settings_changed(self) -> None:
        sel = self.canvas.selection
        if sel is None:
            return
        changes = self.selection_panel.options()
        if sel.kind == "harmonic":
            changes["partials"], changes["width_cents"] = self.selection_panel.harmonic()
        self.canvas.selection = sel.changed(**changes)
        self.canvas.update()

    def fill_selection(self) -> None:
        """The current brush over the whole selection, weighted by its mask: one step
        in the history ("fill selection: hard-eraser")."""
        sel = self.canvas.selection
        if self.session is None or sel is None:
            self.statusBar().showMessage("Fill: draw a selection first (S, A or H)", 5000)
            return
        if self.editing_blocked("Fill"):
            return
        self.session.finish()
        brush, params, _ = self.brush_panel.current()
        channel = self.paint_channel()
        # on the GUI thread, and long on a constant-Q document (its end is confined and
        # rendered away from seams like a stroke's: 0.7 s for 10 s of a 20-200 Hz band)
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            step = fill(self.doc, sel, brush, params, channel,
                        label=f"fill selection: {self.brush_panel.label()}")
        except SpectroPaintError as e:
            self.show_error(str(e))
            return
        finally:
            QGuiApplication.restoreOverrideCursor()
        if step.patches:
            self.undo_stack.push(StrokeCommand(self.doc, step))
        self.session.catch_up()
        self.canvas.update()

    def play_selection_alone(self) -> None:
        self.play_selection(alone=True)

    def selection_state(self) -> dict | None:
        sel = self.canvas.selection
        return None if sel is None else sel.to_json()

    def restore_selection(self, data) -> None:
        """A project's saved selection (checked when the project was read)."""
        self.canvas.selection = None if data is None else Selection.from_json(data)
        if self.canvas.selection is not None:
            self.selection_panel.show_selection(self.canvas.selection)
