"""What the window keeps between sessions (QSettings): its geometry and panels,
the last folder a file dialog used, and the export bit depth."""

from pathlib import Path

from PySide6.QtCore import QByteArray

SAME_AS_SOURCE = "source"  # the export bit depth that follows the opened file


class WindowState:
    """Mixed into MainWindow (which provides settings, docks and audio_path)."""

    def restore_state(self) -> None:
        geometry, state = self.settings.value("geometry"), self.settings.value("windowState")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state)

    def save_state(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState())

    def start_folder(self) -> str:
        """Where a file dialog opens: the last folder one was used in, else the
        opened file's folder."""
        last = self.settings.value("lastFolder", "", str)
        if last and Path(last).is_dir():
            return last
        return str(self.audio_path.parent) if self.audio_path else ""

    def remember_folder(self, path: Path) -> None:
        self.settings.setValue("lastFolder", str(Path(path).parent))

    def suggested_name(self, suffix: str, tag: str = "-edited") -> str:
        """A name for a file made from the opened one (``take-edited.wav``); ``suffix``
        None keeps the source's."""
        source = self.project_path or self.audio_path
        if source is None:
            return ""
        if suffix is None:
            suffix = self.audio_path.suffix if self.audio_path else ".wav"
        return f"{Path(source).stem}{tag}{suffix}"
