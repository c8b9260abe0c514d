"""The Selection panel: the harmonic tool's partials and width, the current
selection's feather and inversion, and what to do with it (fill it with the
brush, play it alone)."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QWidget,
)

from brushes.selection import FEATHER_RANGE, PARTIALS_RANGE, WIDTH_RANGE


class SelectionPanel(QWidget):
    changed = Signal()  # a setting that applies to the selection changed
    fillRequested = Signal()
    playRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        form = QFormLayout(self)
        self.partials = QSpinBox()
        self.partials.setRange(*PARTIALS_RANGE)
        self.partials.setValue(8)
        self.width_cents = _spin(WIDTH_RANGE, 50.0, " cents")
        self.feather_ms = _spin(FEATHER_RANGE, 0.0, " ms")
        self.feather_hz = _spin(FEATHER_RANGE, 0.0, " Hz")
        self.inverted = QCheckBox("inverted (everything else)")
        buttons = QHBoxLayout()
        self.fill = QPushButton("Fill with brush")
        self.play = QPushButton("Play alone")
        buttons.addWidget(self.fill)
        buttons.addWidget(self.play)
        for label, widget in (("Partials", self.partials), ("Width ±", self.width_cents),
                              ("Feather time", self.feather_ms),
                              ("Feather freq.", self.feather_hz), ("", self.inverted)):
            form.addRow(label, widget)
        form.addRow(buttons)
        for spin in (self.partials, self.width_cents, self.feather_ms, self.feather_hz):
            spin.valueChanged.connect(self.changed)
        self.inverted.toggled.connect(self.changed)
        self.fill.clicked.connect(self.fillRequested)
        self.play.clicked.connect(self.playRequested)

    def options(self) -> dict:
        """The settings a selection takes from the panel."""
        return {"feather_ms": self.feather_ms.value(), "feather_hz": self.feather_hz.value(),
                "inverted": self.inverted.isChecked()}

    def harmonic(self) -> tuple[int, float]:
        return self.partials.value(), self.width_cents.value()

    def show_selection(self, selection) -> None:
        """Show a selection's own settings (one opened from a project)."""
        for widget, value in ((self.feather_ms, selection.feather_ms),
                              (self.feather_hz, selection.feather_hz),
                              (self.inverted, selection.inverted)):
            widget.blockSignals(True)
            widget.setChecked(value) if widget is self.inverted else widget.setValue(value)
            widget.blockSignals(False)
        if selection.kind == "harmonic":
            for widget, value in ((self.partials, selection.partials),
                                  (self.width_cents, selection.width_cents)):
                widget.blockSignals(True)
                widget.setValue(value)
                widget.blockSignals(False)


def _spin(value_range, value, suffix) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(*value_range)
    spin.setValue(value)
    spin.setSuffix(suffix)
    spin.setDecimals(1)
    return spin
