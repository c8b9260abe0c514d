"""Room for messages: the Messages panel holds every message the status bar showed,
newest first, with the time it came, whole and selectable, so a long one (heal's
explanation, a damaged file's) can be read after it has gone; the pointer readout
sits in a toolbar, leaving the status bar to the messages."""

import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStatusBar,
    QToolBar,
    QToolButton,
    QWidget,
)

KEEP = 200  # messages kept
WIDEST_READOUT = "00:00.000   24,000.0 Hz   C#10 +50c   -120.0 dB "


class MessageLog(QListWidget):
    def __init__(self, status: QStatusBar, parent=None):
        super().__init__(parent)
        self.setObjectName("messages")
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.last = ""
        status.messageChanged.connect(self.add)

    def add(self, text: str) -> None:
        """A message shown (an empty one, its end, is not one; nor is the same one again)."""
        if not text or text == self.last:
            return
        self.last = text
        item = QListWidgetItem(f"{time.strftime('%H:%M:%S')}  {text}")
        item.setToolTip(text)
        self.insertItem(0, item)
        while self.count() > KEEP:
            self.takeItem(self.count() - 1)

    def texts(self) -> list[str]:
        """The messages, newest first, without their times."""
        return [self.item(i).toolTip() for i in range(self.count())]


def messages_button(dock: QDockWidget) -> QToolButton:
    """A status-bar button that shows the Messages panel."""
    button = QToolButton()
    button.setObjectName("show-messages")
    button.setText("Messages")
    button.setAutoRaise(True)
    button.setToolTip("Every message the status bar showed, whole (View > Messages)")
    button.clicked.connect(lambda: (dock.show(), dock.raise_()))
    return button


def pointer_toolbar(window: QMainWindow, readout: QLabel, meter: QWidget) -> QToolBar:
    """The pointer readout and the level meter in a toolbar of their own beside the
    tools, so the status bar is the messages' (the readout took 440 of a 1280-pixel
    status bar from them)."""
    bar = QToolBar("Pointer readout and level", window)
    bar.setObjectName("Pointer readout")  # saved and restored with the panels
    readout.setMinimumWidth(QFontMetrics(readout.font()).horizontalAdvance(WIDEST_READOUT))
    bar.addWidget(readout)
    bar.addWidget(meter)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
    return bar
