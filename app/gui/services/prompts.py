"""The window's non-blocking questions and file dialogs, shared by every controller:
each opens, returns at once, and calls back with the answer."""

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QStatusBar, QWidget

from app.gui.services.windowstate import WindowState


def show_error(parent: QWidget, status: QStatusBar, error, message: str | None = None) -> None:
    """A warning the user must see: ``message``, or ``error`` itself when that is
    a string (a worker's failure passes its exception and message)."""
    message = message if message is not None else str(error)
    box = QMessageBox(QMessageBox.Icon.Warning, "SpectroPaint", message,
                      QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("error")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    status.showMessage(message.splitlines()[0], 10000)


def ask(parent: QWidget, question: str, then, buttons=None, *, names=None) -> None:
    """A question; ``then(button)`` runs with the button pressed; ``names``: {standard
    button: its text}, where Qt's own would mislead."""
    box = QMessageBox(QMessageBox.Icon.Question, "SpectroPaint", question,
                      buttons or (QMessageBox.StandardButton.Ok |
                                  QMessageBox.StandardButton.Cancel), parent)
    for button, name in (names or {}).items():
        box.button(button).setText(name)
    box.setObjectName("question")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.finished.connect(lambda _: then(box.standardButton(box.clickedButton())))
    box.open()


def file_dialog(parent: QWidget, state: WindowState, title: str, name_filter: str, on_path, *,
                save: bool, name: str = "") -> QFileDialog:
    """A file dialog in the folder ``state`` says (and remembers), ``name`` pre-filled."""
    dialog = QFileDialog(parent, title, state.start_folder(save), name_filter)
    dialog.setObjectName("file-dialog")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    dialog.setOption(QFileDialog.Option.DontConfirmOverwrite, True)  # we ask ourselves
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave if save else
                         QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile if save else
                       QFileDialog.FileMode.ExistingFile)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if name:
        dialog.selectFile(name)
    dialog.fileSelected.connect(lambda p: (state.remember_folder(Path(p), save),
                                           on_path(Path(p))))
    dialog.open()
    return dialog
