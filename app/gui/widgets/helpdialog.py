"""The Help menu: Keyboard and mouse (every shortcut the menus hold, read from their
actions so the list cannot drift from them, and the canvas's gestures), and About."""

from importlib import metadata

import torch
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
    QMainWindow,
    QMenuBar,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from engine.runtime.device import describe, pick_device

GESTURES = (
    ("Paint", "drag with the left button (tablet pressure where a tablet is present)"),
    ("Place the playhead", "click, with any tool (it paints nothing)"),
    ("Pan", "middle-drag, Space+drag, the scroll bars, or the overview lane"),
    ("Zoom time / frequency", "wheel / Ctrl+wheel, around the pointer"),
    ("Zoom in / out, the canvas focused", "+ / -"),
    ("Scrub", "drag in the time ruler"),
    ("Set the clone brush's source", "Alt+click"),
    ("Type a selection", "Start, End, Low, High in the Selection panel, then Enter"),
    ("Snap to the pitch grid, or not", "hold Ctrl while painting (the opposite of the "
                                       "View panel's snap)"),
)


def shortcut_rows(bar: QMenuBar) -> list[tuple[str, str]]:
    """("Menu > Action", "its keys") for every menu action that has a shortcut."""
    rows = []
    for top in bar.actions():
        if top.menu() is None:
            continue
        for action in top.menu().actions():
            keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                             for k in action.shortcuts())
            if keys:
                name = f"{top.text()} > {action.text()}".replace("&", "")
                rows.append((name, keys))
    return rows


class ShortcutsDialog(QDialog):
    """Not modal: it can stay open beside the canvas while one learns the keys."""

    def __init__(self, bar: QMenuBar, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard and mouse")
        rows = [*shortcut_rows(bar), *GESTURES]
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["do", "how"])
        for r, (what, how) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(how))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        self.resize(620, 560)


def show_shortcuts(window: QMainWindow) -> None:
    dialog = ShortcutsDialog(window.menuBar(), window)
    dialog.setObjectName("shortcuts")
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()


def show_about(window: QMainWindow, device: str | None) -> None:
    try:
        version = metadata.version("spectropaint")
    except metadata.PackageNotFoundError:
        version = "(not installed)"
    box = QMessageBox(QMessageBox.Icon.Information, "About SpectroPaint",
                      f"SpectroPaint {version}: painting on spectrograms.\n\n"
                      f"Engine device: {describe(pick_device(device))}; torch "
                      f"{torch.__version__}; Qt {qVersion()}.\nGuides: docs/ in the source tree.",
                      QMessageBox.StandardButton.Ok, window)
    box.setObjectName("about")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
