"""The dialog of a restoration module (Repair menu): a control for each of the
module's settings, generated from its Params, what it will act on, de-noise's
"learn the noise profile from the selection", Preview and Apply. It edits nothing
itself: the window (app.gui.actions.repairactions) answers its signals. Not modal: the user
selects, learns, plays and compares while it is open."""

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from app.gui.widgets.panels import ParamControl
from app.session.repairs import Module


class RepairDialog(QDialog):
    applyRequested = Signal()
    previewToggled = Signal(bool)
    learnRequested = Signal()
    activated = Signal()  # it became the active window

    def __init__(self, module: Module, parent=None):
        super().__init__(parent)
        self.module = module
        self.setObjectName(f"repair-{module.name}")
        self.setWindowTitle(module.title)
        layout = QVBoxLayout(self)
        about = QLabel(module.help)
        about.setWordWrap(True)
        layout.addWidget(about)
        form = QFormLayout()
        self.controls = {}
        for param in module.params:
            control = self.controls[param.name] = ParamControl(param)
            control.set_value(param.default)
            form.addRow(param.name.replace("_db", "").replace("_", " ").capitalize(), control)
        layout.addLayout(form)
        if module.learns:
            row = QHBoxLayout()
            self.learn = QPushButton("Learn noise profile from the selection")
            self.learn.setObjectName("learn-profile")
            self.learn.setToolTip("Select a stretch of noise alone, press this, then select "
                                  "what to clean (or nothing: the whole file) and apply")
            self.learn.clicked.connect(self.learnRequested)
            self.profile_label = QLabel()
            row.addWidget(self.learn)
            row.addWidget(self.profile_label, 1)
            layout.addLayout(row)
            self.show_profile(None)
        self.scope = QLabel()
        self.scope.setWordWrap(True)
        layout.addWidget(self.scope)
        buttons = QDialogButtonBox()
        self.preview = buttons.addButton("Preview", QDialogButtonBox.ButtonRole.ActionRole)
        self.preview.setCheckable(True)
        self.preview.setToolTip("Hear the selection processed, looped; press again to stop")
        self.preview.toggled.connect(self.previewToggled)
        self.apply = buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply.setObjectName("apply-repair")
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.apply.clicked.connect(self.applyRequested)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.activated.emit()

    def settings(self) -> dict:
        return {name: control.value() for name, control in self.controls.items()}

    def show_scope(self, text: str) -> None:
        self.scope.setText(f"Acts on: {text}")

    def show_profile(self, profile: tuple[float, float] | None) -> None:
        """De-noise's noise profile (seconds), None: the quietest parts."""
        self.profile_label.setText(
            "Noise profile: learnt from the quietest parts" if profile is None else
            f"Noise profile: {profile[0]:.2f}-{profile[1]:.2f} s")

    def preview_stopped(self) -> None:
        """The preview ended elsewhere (Stop, another play): the button says so."""
        self.preview.blockSignals(True)
        self.preview.setChecked(False)
        self.preview.blockSignals(False)
