"""The document the window shows and paints on, shared by its controllers: the paint
session, its edit tracker, and the files it came from. MainWindow swaps it
(``set_document``, ``install``); the controllers read it."""

from pathlib import Path

from PySide6.QtGui import QUndoStack

from app.gui.services.editing import PaintSession
from app.project.write import EditTracker
from engine.model.document import Document


class OpenDocument:
    def __init__(self, undo_stack: QUndoStack):
        self.undo_stack = undo_stack
        self.session: PaintSession | None = None  # None: nothing open
        self.tracker: EditTracker | None = None
        self.audio_path: Path | None = None  # the recording (None: a new document)
        self.project_path: Path | None = None  # where it was saved as a project

    @property
    def doc(self) -> Document | None:
        return self.session.doc if self.session else None

    @property
    def modified(self) -> bool:
        """Edits since it was opened or saved."""
        return self.session is not None and not self.undo_stack.isClean()

    @property
    def source(self) -> Path | None:
        """What it is called: the project, else the recording."""
        return self.project_path or self.audio_path
