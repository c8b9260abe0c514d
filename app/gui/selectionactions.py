"""Selections in the main window: the tools (rectangle, time, frequency, lasso,
harmonic), Select all, the span typed in the panel, the panel's settings applied to
the selection, filling it with the current brush (one undo step) and playing it
alone."""

from brushes.selection import Selection, filling
from engine.errors import SpectroPaintError

TOOL_NAMES = {"paint": "Paint", "select": "Rectangle select", "time": "Time select",
              "band": "Frequency select", "lasso": "Lasso select", "harmonic": "Harmonic select"}


class SelectionActions:
    """Mixed into MainWindow (which provides canvas, selection_panel, session...)."""

    def set_tool(self, tool: str) -> None:
        self.canvas.tool = tool
        for name, action in self.tool_actions.items():
            action.setChecked(name == tool)
        self.canvas.update()

    def set_selection(self, selection: Selection | None) -> None:
        """The selection, shown on the canvas and as numbers in the panel."""
        self.canvas.selection = selection
        doc = self.doc
        if doc is not None:
            self.selection_panel.show_span(None if selection is None else selection.span(),
                                           doc.length / doc.sample_rate, doc.sample_rate / 2)
        self.canvas.update()

    def clear_selection(self) -> None:
        self.set_selection(None)

    def select_all(self) -> None:
        """Every cell: the whole file, 0 Hz to Nyquist."""
        doc = self.doc
        if doc is not None:
            self.set_selection(Selection.rect(0.0, doc.length / doc.sample_rate, f_lo=0.0,
                                              f_hi=doc.sample_rate / 2,
                                              **self.selection_panel.options()))

    def _span_typed(self, t0: float, t1: float, f_lo: float, f_hi: float) -> None:
        """Numbers typed in the panel: a rectangle of exactly that span."""
        self.set_selection(Selection.rect(t0, t1, f_lo=f_lo, f_hi=f_hi,
                                          **self.selection_panel.options()))

    def _harmonic_changed(self) -> None:
        self.canvas.harmonic = self.selection_panel.harmonic()
        self._selection_settings_changed()

    def _selection_drawn(self, selection: Selection | None) -> None:
        """A new selection takes the panel's feather and inversion."""
        if selection is not None:
            selection = selection.changed(**self.selection_panel.options())
        self.set_selection(selection)

    def _selection_settings_changed(self) -> None:
        sel = self.canvas.selection
        if sel is None:
            return
        changes = self.selection_panel.options()
        if sel.kind == "harmonic":
            changes["partials"], changes["width_cents"] = self.selection_panel.harmonic()
        self.set_selection(sel.changed(**changes))

    def fill_selection(self) -> None:
        """The current brush over the whole selection, weighted by its mask: one step
        in the history ("fill selection: hard-eraser")."""
        sel = self.canvas.selection
        if self.session is None or sel is None:
            self.statusBar().showMessage("Fill: draw a selection first (S, A or H)", 5000)
            return
        if self.editing_blocked("Fill"):
            return
        brush, params, _ = self.brush_panel.current()
        label = f"fill selection: {self.brush_panel.label()}"
        try:
            steps = filling(self.doc, sel, brush, params=params, channel=self.paint_channel(),
                            label=label)
        except SpectroPaintError as e:
            self.show_error(str(e))
            return
        # a step a turn, like a stroke: long on a constant-Q document (its end is
        # confined: seconds for a minute of a band), never a freeze
        self.session.run(steps, brush, label)

    def play_selection_alone(self) -> None:
        self.play_selection(alone=True)

    def selection_state(self) -> dict | None:
        sel = self.canvas.selection
        return None if sel is None else sel.to_json()

    def restore_selection(self, data) -> None:
        """A project's saved selection (checked when the project was read)."""
        self.set_selection(None if data is None else Selection.from_json(data))
        if self.canvas.selection is not None:
            self.selection_panel.show_selection(self.canvas.selection)
