"""The Layers panel: the document's layers, top layer first, each with its tint and
a check box for whether it is heard (unchecked: muted); a row chosen is the layer
painted on; rows dragged to reorder, double-clicked to rename. Under the list, the
chosen layer's solo, phase inversion and gain, and what the canvas shows: the mix,
the chosen layer alone, or every layer tinted in its colour. The panel shows a
state and says what the user asked; app.gui.actions.layeractions does it."""

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.gui.view.tiles import TINT_COLOURS
from engine.model.layer_stack import StackState

GAIN_DB = (-60.0, 12.0)  # the gain box's range; app.session.layer_ops.GAIN_RANGE is linear
VIEWS = (("Mix", "mix"), ("Active layer", "layer"), ("All layers tinted", "tinted"))
ID = Qt.ItemDataRole.UserRole


def tint_icon(layer_id: int) -> QIcon:
    r, g, b = (int(255 * c) for c in TINT_COLOURS[layer_id % len(TINT_COLOURS)])
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor(r, g, b))
    return QIcon(pixmap)


class LayerList(QListWidget):
    """The rows; a row dropped elsewhere says where (as a position from the bottom)."""

    dropped = Signal(int, int)  # layer id, its new position (0: the bottom)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("layers-list")
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)

    def dropEvent(self, event) -> None:
        moving = self.currentItem()
        super().dropEvent(event)
        if moving is not None:
            self.dropped.emit(moving.data(ID), self.count() - 1 - self.row(moving))


class LayersPanel(QWidget):
    chosen = Signal(int)  # the layer to paint on
    heard = Signal(int, bool)  # a layer's check box: heard, or muted
    renamed = Signal(int, str)
    moved = Signal(int, int)  # layer id, position from the bottom
    soloed = Signal(bool)
    inverted = Signal(bool)
    gainChanged = Signal(float)  # dB
    viewChanged = Signal(object)  # None (the mix), "layer", or "tinted"

    def __init__(self, parent=None):
        super().__init__(parent)
        box = QVBoxLayout(self)
        self.list = LayerList()
        box.addWidget(self.list)
        form = QFormLayout()
        flags = QHBoxLayout()
        self.solo = QCheckBox("Solo")
        self.invert = QCheckBox("Invert phase")
        flags.addWidget(self.solo)
        flags.addWidget(self.invert)
        self.gain = QDoubleSpinBox()
        self.gain.setObjectName("layer-gain")
        self.gain.setRange(*GAIN_DB)
        self.gain.setSuffix(" dB")
        self.gain.setKeyboardTracking(False)
        self.view = QComboBox()
        self.view.setObjectName("layer-view")
        for text, data in VIEWS:
            self.view.addItem(text, data)
        form.addRow(flags)
        form.addRow("Gain", self.gain)
        form.addRow("Show", self.view)
        box.addLayout(form)
        self.list.currentItemChanged.connect(
            lambda item, _: item is not None and self.chosen.emit(item.data(ID)))
        self.list.itemChanged.connect(self._item_changed)
        self.list.dropped.connect(self.moved)
        self.solo.toggled.connect(self.soloed)
        self.invert.toggled.connect(self.inverted)
        self.gain.valueChanged.connect(self.gainChanged)
        self.view.currentIndexChanged.connect(
            lambda _: self.viewChanged.emit(None if self.view.currentData() == "mix"
                                            else self.view.currentData()))
        self._names: dict[int, str] = {}

    def show_layers(self, state: StackState | None) -> None:
        """The rows and the chosen layer's settings as ``state`` has them (nothing is
        said back while they are set)."""
        widgets = (self.list, self.solo, self.invert, self.gain)
        for w in widgets:
            w.blockSignals(True)
        try:
            self.list.clear()
            self._names = {}
            for layer in reversed(state.layers if state else ()):
                item = QListWidgetItem(tint_icon(layer.id), layer.name)
                item.setData(ID, layer.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable |
                              Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsDragEnabled)
                item.setCheckState(Qt.CheckState.Unchecked if layer.mute else
                                   Qt.CheckState.Checked)
                self.list.addItem(item)
                self._names[layer.id] = layer.name
            if state:
                active = state.layers[state.active]
                self.list.setCurrentRow(len(state.layers) - 1 - state.active)
                self.solo.setChecked(active.solo)
                self.invert.setChecked(active.invert)
                self.gain.setValue(max(GAIN_DB[0], 20 * math.log10(max(active.gain, 1e-9))))
        finally:
            for w in widgets:
                w.blockSignals(False)

    def _item_changed(self, item: QListWidgetItem) -> None:
        layer_id = item.data(ID)
        if item.text() != self._names.get(layer_id):
            self.renamed.emit(layer_id, item.text())
        else:
            self.heard.emit(layer_id, item.checkState() == Qt.CheckState.Checked)
