"""The window's editing session, shared by its controllers: what edits act with (the
selection, the brush, the paint channel and the clipboard: app.session.session, as
the scripts' Editor has them), and the document the window shows and paints on, its
paint session, edit tracker and the files it came from. MainWindow swaps the
document (``set_document``, ``install``); the controllers read the session and
change it, and the canvas and panels show what its events say."""

from pathlib import Path

from PySide6.QtGui import QUndoStack

from app.gui.services.editing import PaintSession
from app.project.write import EditTracker
from app.session.session import Session
from engine.model.document import Document
from engine.model.history import History


class OpenDocument(Session):
    def __init__(self, undo_stack: QUndoStack):
        super().__init__()
        self.undo_stack = undo_stack
        self.session: PaintSession | None = None  # None: nothing open
        self.tracker: EditTracker | None = None
        self.audio_path: Path | None = None  # the recording (None: a new document)
        self.project_path: Path | None = None  # where it was saved as a project

    @property
    def doc(self) -> Document | None:
        return self.session.doc if self.session else None

    @property
    def history(self) -> History | None:
        """The document's undo history (engine.model.history), which the undo stack
        shows."""
        return self.session.history if self.session else None

    @property
    def modified(self) -> bool:
        """Edits since it was opened or saved."""
        return self.session is not None and not self.undo_stack.isClean()

    @property
    def source(self) -> Path | None:
        """What it is called: the project, else the recording."""
        return self.project_path or self.audio_path
