"""The demo's guide: while the bundled demo is open, a note over the canvas says what
is in it and what to try, until it is dismissed (remembered)."""

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

SETTING = "demoHintDismissed"
TEXT = ("<b>This is the demo.</b> A plucked melody (0.3-6.8 s), a sung vowel (6.4-11 s), "
        "hi-hat bursts every 0.7 s, a steady 6 kHz whistle (3-8 s) and two clicks "
        "(2.2 s and 8.7 s).<br>Try: Space to play; the <i>tone-remover</i> preset painted "
        "along the whistle removes it alone; <i>spot-repair</i> over a click heals it; "
        "<i>hard-eraser</i> erases what you paint; Ctrl+Z undoes. F1 lists every key.")


class DemoHint(QFrame):
    def __init__(self, canvas: QWidget, settings):
        super().__init__(canvas)
        self.setObjectName("demo-hint")
        self.settings = settings
        self.setStyleSheet("#demo-hint { background: rgba(20, 20, 28, 215); border-radius: 4px; }"
                           " QLabel, QToolButton { color: #e8e8ee; }")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 4, 6)
        self.label = QLabel(TEXT)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        close = QToolButton()
        close.setObjectName("dismiss-demo-hint")
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss: not shown again")
        close.clicked.connect(self.dismiss)
        layout.addWidget(self.label, 1)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()
        canvas.installEventFilter(self)  # resized: fit the canvas again

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False

    def show_for(self, is_demo: bool) -> None:
        """Shown over the canvas's top while the demo is open, unless dismissed once."""
        wanted = is_demo and not self.settings.value(SETTING, False, bool)
        if wanted:
            self._place()
        self.setVisible(wanted)

    def _place(self) -> None:
        """At the canvas's top left, as wide as it allows, as tall as the text."""
        canvas = self.parentWidget()
        width = max(200, min(canvas.width() - 16, 620))
        margins = self.layout().contentsMargins()
        text = width - margins.left() - margins.right() - 30  # the close button's
        self.setFixedSize(width, self.label.heightForWidth(text) + margins.top()
                          + margins.bottom())
        self.move(8, 8)
        self.raise_()

    def dismiss(self) -> None:
        self.settings.setValue(SETTING, True)
        self.hide()
