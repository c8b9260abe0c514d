"""Side panels: brushes (controls generated from the parameter declarations),
view settings, and analysis settings. Each emits signals; none edits the
document."""

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from brushes.params import Param
from brushes.presets import Preset, all_presets
from brushes.registry import BRUSHES
from engine.transforms.settings import DEFAULT_OVERLAP, SETTINGS, Setting
from engine.view.colormaps import COLORMAPS
from engine.view.pitch import A4_RANGE, NOTE_NAMES, SCALES, PitchGrid

SLIDER_STEPS = 1000
NEG_INF_FLOOR = -120.0  # a -inf minimum shows as "-inf" at this end of the spin box


class ParamControl(QWidget):
    """A slider and a spin box for a number, or a combo box for a choice."""

    changed = Signal()

    def __init__(self, param: Param, parent=None):
        super().__init__(parent)
        self.param = param
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.setToolTip(param.help)
        if param.choices:
            self.combo = QComboBox()
            self.combo.addItems(param.choices)
            self.combo.currentTextChanged.connect(self.changed)
            layout.addWidget(self.combo)
            return
        self.low = NEG_INF_FLOOR if math.isinf(param.min) else param.min
        self.high = 1e6 if math.isinf(param.max) else param.max
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.spin = QDoubleSpinBox()
        self.spin.setRange(self.low, self.high)
        self.spin.setDecimals(0 if param.integer else 2)
        self.spin.setSuffix(f" {param.unit}" if param.unit else "")
        if math.isinf(param.min):
            self.spin.setSpecialValueText("-inf")
        self.slider.valueChanged.connect(self._from_slider)
        self.spin.valueChanged.connect(self._from_spin)
        layout.addWidget(self.slider, 2)
        layout.addWidget(self.spin, 1)

    def _log_scale(self) -> bool:
        return self.low > 0 and self.high / self.low >= 100

    def _to_slider(self, value: float) -> int:
        if self._log_scale():
            u = math.log(value / self.low) / math.log(self.high / self.low)
        else:
            u = (value - self.low) / (self.high - self.low)
        return round(min(max(u, 0.0), 1.0) * SLIDER_STEPS)

    def _from_slider(self, step: int) -> None:
        u = step / SLIDER_STEPS
        value = self.low * (self.high / self.low) ** u if self._log_scale() else \
            self.low + u * (self.high - self.low)
        self.spin.blockSignals(True)
        self.spin.setValue(value)
        self.spin.blockSignals(False)
        self.changed.emit()

    def _from_spin(self, value: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(self._to_slider(value))
        self.slider.blockSignals(False)
        self.changed.emit()

    def value(self):
        if self.param.choices:
            return self.combo.currentText()
        v = self.spin.value()
        if math.isinf(self.param.min) and v <= self.low:
            return -math.inf
        return int(round(v)) if self.param.integer else v

    def set_value(self, value) -> None:
        self.blockSignals(True)
        if self.param.choices:
            self.combo.setCurrentText(str(value))
        else:
            v = self.low if math.isinf(value) else float(value)
            self.spin.setValue(v)
            self.slider.setValue(self._to_slider(v))
        self.blockSignals(False)


class BrushPanel(QWidget):
    """Presets and brush types, each explained (under the boxes, and as the tooltip
    of every entry); the controls of the chosen type's parameters."""

    changed = Signal()
    saveRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.presets: dict[str, Preset] = {}
        self.preset_name: str | None = None  # while the settings come from a preset
        self.curves: dict = {}
        layout = QVBoxLayout(self)
        top = QFormLayout()
        self.preset_box = QComboBox()
        self.type_box = QComboBox()
        self.type_box.addItems(list(BRUSHES))
        top.addRow("Preset", self.preset_box)
        top.addRow("Brush", self.type_box)
        layout.addLayout(top)
        self.description = QLabel()
        self.description.setObjectName("preset-description")
        self.description.setWordWrap(True)
        self.description.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(self.description)
        for i, brush in enumerate(BRUSHES.values()):
            self.type_box.setItemData(i, brush.help, Qt.ItemDataRole.ToolTipRole)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        layout.addWidget(self.form_host)
        self.save_button = QPushButton("Save as preset…")
        self.save_button.clicked.connect(self.saveRequested)
        layout.addWidget(self.save_button)
        layout.addStretch(1)
        self.controls: dict[str, ParamControl] = {}
        self.preset_box.currentTextChanged.connect(self._on_preset)
        self.type_box.currentTextChanged.connect(self._on_type)
        self.reload_presets()

    def reload_presets(self, select: str | None = None) -> None:
        self.presets = all_presets()
        self.preset_box.blockSignals(True)
        self.preset_box.clear()
        self.preset_box.addItems(list(self.presets))
        for i, preset in enumerate(self.presets.values()):
            self.preset_box.setItemData(i, _explained(preset), Qt.ItemDataRole.ToolTipRole)
        self.preset_box.blockSignals(False)
        self.preset_box.setCurrentText(select or "soft-eraser")
        self._on_preset(self.preset_box.currentText())

    def _build(self, brush_name: str) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.controls = {}
        for param in BRUSHES[brush_name].params:
            if param.name == "channel":
                continue  # the view panel's "paint channel" sets it
            control = ParamControl(param)
            control.set_value(param.default)
            control.changed.connect(self.changed)
            label = QLabel(param.name.replace("_", " "))
            label.setToolTip(param.help)
            self.form.addRow(label, control)
            self.controls[param.name] = control

    def _on_type(self, brush_name: str) -> None:
        self.preset_name = None
        self._build(brush_name)
        self.curves = {}
        self._explain(BRUSHES[brush_name].help)
        self.changed.emit()

    def _explain(self, text: str) -> None:
        self.description.setText(text)
        self.preset_box.setToolTip(text if self.preset_name else "")
        self.type_box.setToolTip(BRUSHES[self.type_box.currentText()].help)

    def _on_preset(self, name: str) -> None:
        preset = self.presets.get(name)
        if preset is None:
            return
        self.preset_name = name
        self.type_box.blockSignals(True)
        self.type_box.setCurrentText(preset.brush)
        self.type_box.blockSignals(False)
        self._explain(_explained(preset))
        self._build(preset.brush)
        for key, value in preset.params.items():
            if key in self.controls:
                self.controls[key].set_value(value)
        self.curves = dict(preset.inputs)
        for name, curves in self.curves.items():  # say which settings follow the pen
            label = self.form.labelForField(self.controls.get(name))
            if label is not None:
                label.setText(f"{label.text()} + {', '.join(curves)}")
        self.changed.emit()

    def current(self) -> tuple[str, dict, dict]:
        """(brush type, parameter values, input curves) as set in the panel."""
        return (self.type_box.currentText(),
                {name: c.value() for name, c in self.controls.items()}, self.curves)

    def label(self) -> str:
        """What a stroke with these settings is called: its preset, else its brush type."""
        return self.preset_name or self.type_box.currentText()

    def set_param(self, name: str, value) -> None:
        self.controls[name].set_value(value)
        self.changed.emit()


class ViewPanel(QWidget):
    styleChanged = Signal()
    gridChanged = Signal()
    logChanged = Signal(bool)
    viewChannelChanged = Signal(object)  # None = all
    paintChannelChanged = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        form = QFormLayout(self)
        self.colormap = QComboBox()
        self.colormap.addItems(COLORMAPS)
        self.floor = _spin(-200, 0, -100, " dB")
        self.ceiling = _spin(-100, 40, 0, " dB")
        self.gamma = _spin(0.2, 5, 1.0, "", 2, 0.1)
        self.log = QCheckBox("logarithmic frequency")
        self.view_channel = QComboBox()
        self.paint_channel = QComboBox()
        self.show_grid = QCheckBox("pitch grid")
        self.snap = QCheckBox("snap to the grid (Ctrl toggles)")
        self.a4 = _spin(A4_RANGE[0], A4_RANGE[1], 440.0, " Hz")
        self.scale = QComboBox()
        self.scale.addItems(list(SCALES))
        self.key = QComboBox()
        self.key.addItems(list(NOTE_NAMES))
        for label, widget in (("Colormap", self.colormap), ("Floor", self.floor),
                              ("Ceiling", self.ceiling), ("Gamma", self.gamma),
                              ("", self.log), ("View channel", self.view_channel),
                              ("Paint channel", self.paint_channel), ("", self.show_grid),
                              ("", self.snap), ("A4", self.a4), ("Scale", self.scale),
                              ("Key", self.key)):
            form.addRow(label, widget)
        for w in (self.show_grid, self.snap):
            w.toggled.connect(self.gridChanged)
        self.a4.valueChanged.connect(self.gridChanged)
        for w in (self.scale, self.key):
            w.currentTextChanged.connect(self.gridChanged)
        for w in (self.floor, self.ceiling, self.gamma):
            w.valueChanged.connect(self.styleChanged)
        self.colormap.currentTextChanged.connect(self.styleChanged)
        self.log.toggled.connect(self.logChanged)
        self.view_channel.currentIndexChanged.connect(
            lambda _: self.viewChannelChanged.emit(self.view_channel.currentData()))
        self.paint_channel.currentIndexChanged.connect(
            lambda _: self.paintChannelChanged.emit(self.paint_channel.currentData()))

    def set_channels(self, names: list[str], keep: bool = False) -> None:
        """One entry per channel. A multichannel file shows stacked lanes, painted on
        the lane under the pointer; ``keep``: the same channels, keep the choices."""
        for box, extra in ((self.view_channel, [("Stacked lanes", "lanes")]),
                           (self.paint_channel, [("Lane under the pointer", "lane")])):
            chosen = box.currentData() if keep else None
            box.blockSignals(True)
            box.clear()
            if len(names) > 1:
                for label, data in extra:
                    box.addItem(label, data)
            box.addItem("All (loudest)" if box is self.view_channel else "All", None)
            if len(names) > 1:
                for i, name in enumerate(names):
                    box.addItem(name, i)
            box.setCurrentIndex(max(0, box.findData(chosen)) if keep else 0)
            box.blockSignals(False)

    def grid(self) -> PitchGrid:
        return PitchGrid(self.a4.value(), self.scale.currentText(), self.key.currentText())

    def channel(self, box: QComboBox) -> int | None:
        """The one channel chosen in ``box``, or None (all, the loudest, or lanes)."""
        data = box.currentData()
        return data if isinstance(data, int) else None


class AnalysisPanel(QWidget):
    """What the document is painted on: an STFT (FFT size, overlap, window) or the
    constant-Q transform (bins per octave, lowest frequency). One control per setting of
    engine.transforms.settings, its range, default and tooltip from the declaration;
    the hop shows as the overlap, FFT size / hop."""

    applyRequested = Signal(dict)  # {"transform": ..., its settings}

    def __init__(self, parent=None):
        super().__init__(parent)
        form = QFormLayout(self)
        self.controls = {s.name: _setting_control(s) for s in SETTINGS}
        c = self.controls
        self.transform, self.n_fft, self.overlap = c["transform"], c["n_fft"], c["hop"]
        self.window, self.bins_per_octave, self.fmin = c["window"], c["bins_per_octave"], c["fmin"]
        for s in SETTINGS:
            form.addRow("Overlap ×" if s.name == "hop" else s.label[:1].upper() + s.label[1:],
                        c[s.name])
        self.apply = QPushButton("Re-analyze")
        form.addRow(self.apply)
        self.apply.clicked.connect(lambda: self.applyRequested.emit(self.settings()))
        self.transform.currentIndexChanged.connect(self._enable)
        self._enable()

    def _enable(self) -> None:
        kind = self.transform.currentData()
        for s in SETTINGS:
            if s.transform:
                self.controls[s.name].setEnabled(s.transform == kind)

    def settings(self) -> dict:
        kind = self.transform.currentData()
        chosen = {s.name: _value(self.controls[s.name]) for s in SETTINGS
                  if s.transform in ("", kind)}
        if kind == "stft":
            chosen["hop"] = chosen["n_fft"] // chosen["hop"]  # the control shows the overlap
        return chosen

    def show_settings(self, settings: dict) -> None:
        """Show a transform's ``settings()``."""
        shown = dict(settings)
        if shown["transform"] == "stft":
            shown["hop"] = max(2, shown["n_fft"] // shown["hop"])
        for name, value in shown.items():
            _show(self.controls[name], value)


OVERLAPS = (2, 4, 8)  # FFT size / hop offered for the STFT


def _setting_control(setting: Setting) -> QWidget:
    """A control for an analysis setting: a menu of its choices (the FFT size: powers of
    two; the hop: overlaps), else a spin box over its range; at its default."""
    if setting.name == "hop":
        control = _menu([(f"{k}", k) for k in OVERLAPS], DEFAULT_OVERLAP)
    elif setting.choices:
        control = _menu(list(zip(setting.labels or setting.choices, setting.choices,
                                 strict=True)),
                        setting.default)
    elif setting.name == "n_fft":
        sizes = [1 << k for k in range(int(setting.low).bit_length() - 1,
                                       int(setting.high).bit_length())]
        control = _menu([(str(n), n) for n in sizes], setting.default)
    elif setting.kind is int:
        control = QSpinBox()
        control.setRange(int(setting.low), int(setting.high))
        control.setValue(setting.default)
    else:
        control = _spin(setting.low, setting.high, setting.default, f" {setting.unit}")
    shown = "FFT size / hop, the hop: " if setting.name == "hop" else ""
    control.setToolTip(f"{shown}{setting.help} ({setting.allowed()})")
    return control


def _menu(items, default) -> QComboBox:
    box = QComboBox()
    for label, data in items:
        box.addItem(label, data)
    box.setCurrentIndex(box.findData(default))
    return box


def _value(control: QWidget):
    return control.currentData() if isinstance(control, QComboBox) else control.value()


def _show(control: QWidget, value) -> None:
    if isinstance(control, QComboBox):
        control.setCurrentIndex(control.findData(value))
    else:
        control.setValue(value)


def _explained(preset: Preset) -> str:
    """What a preset is for: its own comment, else its brush type's help."""
    return preset.comment or BRUSHES[preset.brush].help


def _spin(low, high, value, suffix, decimals=1, step=1.0) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setDecimals(decimals)
    spin.setSingleStep(step)
    spin.setValue(value)
    spin.setSuffix(suffix)
    return spin
