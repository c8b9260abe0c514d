"""The Transform tool (Edit > Transform tool, V) in the window: a drag of the
selection's box on the canvas (app.gui.view.transforming) becomes one Edit >
Transform of the selection's content (app.gui.actions.selectionedits), one undo
step; once it has landed, the selection follows the content. Edit > Heal the hole a move
leaves says whether the place the content left is healed from around it."""

from PySide6.QtWidgets import QStatusBar

from app.gui.view.canvas import SpectrogramCanvas
from app.gui.view.transforming import TransformDrag

SHOWN_MS = 8000


class TransformTool:
    """Drags of the Transform tool on ``canvas`` transformed by ``edits``
    (app.gui.actions.editactions.EditActions); the session's selection is then moved
    with it."""

    def __init__(self, canvas: SpectrogramCanvas, edits, status: QStatusBar):
        self.canvas, self.edits, self.status = canvas, edits, status
        canvas.transformDropped.connect(self.drop)
        canvas.transformRefused.connect(self.refuse)
        canvas.transformDragged.connect(lambda drag: status.showMessage(drag.describe(), SHOWN_MS))

    def chosen(self) -> None:
        """The tool chosen: with nothing to move, it says so at once."""
        selection = self.edits.opened.selection
        if selection is None or selection.inverted:
            self.refuse()

    def refuse(self) -> None:
        if self.edits.opened.session is None:
            return
        if self.edits.opened.selection is not None:  # inverted: everything but a shape
            self.status.showMessage("Transform: the selection is inverted; invert it back "
                                    "(Ctrl+I) to move what it holds", SHOWN_MS)
        else:
            self.status.showMessage("Transform: select something first (S, T, F, A or H), "
                                    "then drag inside its box or its edges (V)", SHOWN_MS)

    def drop(self, drag: TransformDrag) -> None:
        """The drag released: the content transformed in a worker, then the selection
        set where it landed (left as it was if the transform fails or is not run)."""
        doc = self.edits.opened.doc
        landed = drag.landed(duration=doc.length / doc.sample_rate, nyquist=doc.sample_rate / 2)
        self.edits.spectral.transform(drag.selection, **drag.values(),
                                      heal=self.edits.heal_action.isChecked(),
                                      landed=landed)
