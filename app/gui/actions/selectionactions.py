"""Selections in the main window: the tools (rectangle, time, frequency, lasso,
harmonic; and Transform, which moves what is selected), Select all, the span typed
in the panel, the panel's settings applied to the selection, and filling it with the
current brush (one undo step)."""

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QStatusBar

from app.gui.actions.menuaction import menu_action
from app.gui.services.opened import OpenDocument
from app.gui.services.window_jobs import Jobs
from app.gui.view.canvas import SpectrogramCanvas
from app.gui.widgets.selectionpanel import SelectionPanel
from app.session.selection import Selection, filling
from engine.errors import SpectroPaintError

TOOL_NAMES = {"paint": "Paint", "select": "Rectangle select", "time": "Time select",
              "band": "Frequency select", "lasso": "Lasso select", "harmonic": "Harmonic select",
              "transform": "Transform"}  # the selection's content (app.gui.actions.transformtool)
TOOL_KEYS = ("B", "S", "T", "F", "A", "H", "V")


class SelectionActions:
    """The tool on ``canvas``; the session's (``opened``'s) selection, drawn on the
    canvas and typed in ``panel``, shown on both; filling it paints the document with
    the session's brush on its paint channel."""

    def __init__(self, canvas: SpectrogramCanvas, panel: SelectionPanel,
                 opened: OpenDocument, jobs: Jobs, status: QStatusBar):
        self.canvas, self.panel = canvas, panel
        self.opened, self.jobs, self.status = opened, jobs, status
        self.tool_actions: dict[str, QAction] = {}  # made by build_tools
        opened.events.subscribe("selection", self._show)
        canvas.selectionChanged.connect(self._selection_drawn)
        panel.changed.connect(self._harmonic_changed)
        panel.spanTyped.connect(self._span_typed)
        panel.fillRequested.connect(self.fill_selection)

    def build_tools(self, menu: QMenu) -> None:
        """Edit > the tools, one checked."""
        for (tool, name), key in zip(TOOL_NAMES.items(), TOOL_KEYS, strict=True):
            self.tool_actions[tool] = menu_action(menu, f"{name} tool",
                                                  lambda t=tool: self.set_tool(t), key,
                                                  checkable=True)
        self.tool_actions["paint"].setChecked(True)

    def build_menu(self, menu: QMenu) -> None:
        """Edit > Select all ... Clear selection."""
        menu_action(menu, "Select &all", self.select_all, "Ctrl+A")
        menu_action(menu, "Fill selection with the brush", self.fill_selection, "Shift+F")
        menu_action(menu, "Invert selection", self.panel.inverted.toggle, "Ctrl+I")
        menu_action(menu, "Clear selection", self.clear_selection, "Escape")

    def set_tool(self, tool: str) -> None:
        self.canvas.tool = tool
        for name, action in self.tool_actions.items():
            action.setChecked(name == tool)
        self.canvas.update()

    def set_selection(self, selection: Selection | None) -> None:
        self.opened.select(selection)

    def _show(self, selection: Selection | None) -> None:
        """The session's selection, on the canvas and as numbers in the panel."""
        self.canvas.selection = selection
        doc = self.opened.doc
        if doc is not None:
            self.panel.show_span(None if selection is None else selection.span(),
                                 doc.length / doc.sample_rate, doc.sample_rate / 2)
        self.canvas.update()

    def clear_selection(self) -> None:
        """No selection; the focus leaves the panel's fields for the canvas, so that
        Space plays rather than typing into a field (Esc leaves a field)."""
        self.set_selection(None)
        if self.panel.isAncestorOf(QApplication.focusWidget()):
            self.canvas.setFocus()

    def select_all(self) -> None:
        """Every cell: the whole file, 0 Hz to Nyquist."""
        doc = self.opened.doc
        if doc is not None:
            self.set_selection(Selection.rect(0.0, doc.length / doc.sample_rate, f_lo=0.0,
                                              f_hi=doc.sample_rate / 2,
                                              **self.panel.options()))

    def _span_typed(self, t0: float, t1: float, f_lo: float, f_hi: float) -> None:
        """Numbers typed in the panel: a rectangle of exactly that span."""
        self.set_selection(Selection.rect(t0, t1, f_lo=f_lo, f_hi=f_hi, **self.panel.options()))

    def _harmonic_changed(self) -> None:
        self.canvas.harmonic = self.panel.harmonic()
        self._selection_settings_changed()

    def _selection_drawn(self, selection: Selection | None) -> None:
        """A new selection takes the panel's feather and inversion."""
        if selection is not None:
            selection = selection.changed(**self.panel.options())
        self.set_selection(selection)

    def _selection_settings_changed(self) -> None:
        sel = self.opened.selection
        if sel is None:
            return
        changes = self.panel.options()
        if sel.kind == "harmonic":
            changes["partials"], changes["width_cents"] = self.panel.harmonic()
        self.set_selection(sel.changed(**changes))

    def fill_selection(self) -> None:
        """The current brush over the whole selection, weighted by its mask: one step
        in the history ("fill selection: hard-eraser")."""
        sel = self.opened.selection
        if self.opened.session is None or sel is None:
            self.status.showMessage("Fill: draw a selection first (S, A or H)", 5000)
            return
        if self.jobs.editing_blocked("Fill"):
            return
        brush = self.opened.brush
        label = f"fill selection: {brush.label or brush.brush}"
        try:
            steps = filling(self.opened.doc, sel, brush.brush, params=brush.params,
                            channel=self.opened.channel, label=label)
        except SpectroPaintError as e:
            self.jobs.show_error(str(e))
            return
        # a step a turn, like a stroke: long on a constant-Q document (its end is
        # confined: seconds for a minute of a band), never a freeze
        self.opened.session.run(steps, brush.brush, label)

    def selection_state(self) -> dict | None:
        sel = self.opened.selection
        return None if sel is None else sel.to_json()

    def restore_selection(self, data) -> None:
        """A project's saved selection (checked when the project was read)."""
        self.set_selection(None if data is None else Selection.from_json(data))
        if self.opened.selection is not None:
            self.panel.show_selection(self.opened.selection)
