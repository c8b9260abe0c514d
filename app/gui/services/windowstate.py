"""What the window keeps between sessions (QSettings): its geometry and panels,
the view's colormap, range, gamma and frequency axis, the last folder a file
dialog used, the folder each document was last saved or exported to, and the
export bit depth."""

import json
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow

from app.gui.services.opened import OpenDocument
from app.gui.widgets.panels import ViewPanel

SAME_AS_SOURCE = "source"  # the export bit depth that follows the opened file
KEEP_FOLDERS = 100  # documents whose output folder is remembered


class WindowState:
    """Keeps ``window``'s geometry and panels, ``view_panel``'s settings, and the
    folders the ``opened`` document's files went to, in ``settings``."""

    def __init__(self, window: QMainWindow, settings: QSettings, view_panel: ViewPanel,
                 opened: OpenDocument):
        self.window, self.settings = window, settings
        self.view_panel, self.opened = view_panel, opened

    def restore_state(self) -> None:
        geometry, state = self.settings.value("geometry"), self.settings.value("windowState")
        if isinstance(geometry, QByteArray):
            self.window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.window.restoreState(state)

    def save_state(self) -> None:
        self.settings.setValue("geometry", self.window.saveGeometry())
        self.settings.setValue("windowState", self.window.saveState())

    def restore_view_settings(self) -> None:
        """The View panel as it was left (a project's own view still wins), and kept
        as it changes."""
        p, value = self.view_panel, self.settings.value
        p.colormap.setCurrentText(value("view/colormap", p.colormap.currentText(), str))
        for key, spin in (("floor", p.floor), ("ceiling", p.ceiling), ("gamma", p.gamma)):
            spin.setValue(value(f"view/{key}", spin.value(), float))
        p.log.setChecked(value("view/log", False, bool))
        p.styleChanged.connect(self._remember_view_settings)
        p.logChanged.connect(self._remember_view_settings)

    def _remember_view_settings(self) -> None:
        p = self.view_panel
        for key, value in (("colormap", p.colormap.currentText()), ("floor", p.floor.value()),
                           ("ceiling", p.ceiling.value()), ("gamma", p.gamma.value()),
                           ("log", p.log.isChecked())):
            self.settings.setValue(f"view/{key}", value)

    def start_folder(self, save: bool = False) -> str:
        """Where a file dialog opens. To open a file: the last folder one was used in,
        else the opened file's. To save or export (``save``) the document: where it was
        saved or exported to last, else its own folder (not the last folder browsed,
        which may hold unrelated files)."""
        last = self.settings.value("lastFolder", "", str)
        source = self.opened.source
        if save and source is not None:
            went = self._output_folders().get(str(source))
            return went if went and Path(went).is_dir() else str(source.parent)
        if last and Path(last).is_dir():
            return last
        return str(self.opened.audio_path.parent) if self.opened.audio_path else ""

    def remember_folder(self, path: Path, save: bool = False) -> None:
        """``path`` was chosen in a dialog; ``save``: the document was written there."""
        self.settings.setValue("lastFolder", str(Path(path).parent))
        source = self.opened.source
        if save and source is not None:
            folders = self._output_folders()
            folders.pop(str(source), None)
            folders[str(source)] = str(Path(path).parent)  # the newest last
            self.settings.setValue("outputFolders",
                                   json.dumps(dict(list(folders.items())[-KEEP_FOLDERS:])))

    def _output_folders(self) -> dict[str, str]:
        try:
            folders = json.loads(self.settings.value("outputFolders", "{}", str))
        except ValueError:
            return {}
        return folders if isinstance(folders, dict) else {}

    def suggested_name(self, suffix: str, tag: str = "-edited") -> str:
        """A name for a file made from the opened one (``take-edited.wav``); ``suffix``
        None keeps the source's."""
        source = self.opened.source
        if source is None:
            return ""
        if suffix is None:
            suffix = self.opened.audio_path.suffix if self.opened.audio_path else ".wav"
        return f"{Path(source).stem}{tag}{suffix}"
