"""What an audio export does with samples over full scale, chosen where the export
is: a row in the export dialog (remembered), and, when it says "ask" and the edited
audio does go over, a question naming the peak with the three answers."""

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFileDialog, QGridLayout, QLabel, QMessageBox

CHOICES = {"ask": "Ask me when it does",
           "normalize": "Normalize the file to -0.1 dBFS",
           "limit": "Soft-limit the overs below -0.1 dBFS",
           "report": "Keep them (integer formats clip them)"}
SETTING = "exportOvers"


def add_overs_row(dialog: QFileDialog, settings) -> QComboBox:
    """A "Over full scale" row under the file dialog's own (a non-native dialog's
    layout is a grid); the choice is remembered in ``settings``."""
    combo = QComboBox(dialog)
    combo.setObjectName("overs")
    for key, text in CHOICES.items():
        combo.addItem(text, key)
    combo.setCurrentIndex(max(0, combo.findData(settings.value(SETTING, "ask", str))))
    combo.currentIndexChanged.connect(lambda _: settings.setValue(SETTING, combo.currentData()))
    grid = dialog.layout()
    if isinstance(grid, QGridLayout):
        row = grid.rowCount()
        grid.addWidget(QLabel("Over full scale:", dialog), row, 0)
        grid.addWidget(combo, row, 1, 1, max(1, grid.columnCount() - 1))
    return combo


def ask_about_overs(parent, name: str, peak: float, count: int, then) -> None:
    """Non-blocking: ``then(choice)`` with "normalize", "limit" or "report" as answered
    (nothing on Cancel)."""
    box = QMessageBox(QMessageBox.Icon.Question, "SpectroPaint",
                      f"The edited audio for {name} peaks at {20 * math.log10(peak):+.1f} dBFS: "
                      f"{count:,} samples are over full scale.", QMessageBox.StandardButton.Cancel,
                      parent)
    box.setObjectName("overs-question")
    answers = {box.addButton(text, QMessageBox.ButtonRole.AcceptRole): key
               for key, text in (("normalize", "Normalize"), ("limit", "Limit"),
                                 ("report", "Keep as they are"))}
    box.setInformativeText("Normalize scales the whole file to a -0.1 dBFS peak; Limit "
                           "softens only the overs; kept, they clip in a 16- or 24-bit file.")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.finished.connect(lambda _: box.clickedButton() in answers and
                         then(answers[box.clickedButton()]))
    box.open()

