"""The Selection panel: the current selection's span as numbers to read and type
(start, end, low, high), the harmonic tool's partials and width, the selection's
feather and inversion, and what to do with it (fill it with the brush, play it
alone)."""

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

from app.session.selection import FEATHER_RANGE, PARTIALS_RANGE, WIDTH_RANGE


class SelectionPanel(QWidget):
    changed = Signal()  # a setting that applies to the selection changed
    spanTyped = Signal(float, float, float, float)  # start, end (s), low, high (Hz)
    fillRequested = Signal()
    playRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        form = QFormLayout(self)
        self.span = {name: _spin((0.0, 1.0), 0.0, unit, decimals)
                     for name, unit, decimals in (("start", " s", 3), ("end", " s", 3),
                                                  ("low", " Hz", 1), ("high", " Hz", 1))}
        for (name, spin), label in zip(self.span.items(), ("Start", "End", "Low", "High"),
                                       strict=True):
            spin.setObjectName(f"selection-{name}")
            spin.setKeyboardTracking(False)  # a value when typed (Enter, Tab), not per digit
            spin.valueChanged.connect(self._typed)
            form.addRow(label, spin)
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

    def show_span(self, span: tuple[float, float, float, float] | None, seconds: float,
                  nyquist: float) -> None:
        """Show a selection's (start, end, low, high), or none: no time, every
        frequency, so that typing a start and an end selects from nothing. The fields
        take values within the file (``seconds`` long, up to ``nyquist``)."""
        for (name, spin), value in zip(self.span.items(), span or (0.0, 0.0, 0.0, nyquist),
                                       strict=True):
            spin.blockSignals(True)
            spin.setRange(0.0, seconds if name in ("start", "end") else nyquist)
            spin.setValue(value)
            spin.blockSignals(False)

    def _typed(self) -> None:
        t0, t1, f_lo, f_hi = (spin.value() for spin in self.span.values())
        if t1 > t0 and f_hi > f_lo:
            self.spanTyped.emit(t0, t1, f_lo, f_hi)

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


def _spin(value_range, value, suffix, decimals: int = 1) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setDecimals(decimals)
    spin.setRange(*value_range)
    spin.setValue(value)
    spin.setSuffix(suffix)
    return spin
