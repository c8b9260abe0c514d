"""One menu entry: the helper every controller builds its menu entries with."""

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu


def menu_action(menu: QMenu, text: str, slot, shortcut=None, *,
                checkable: bool = False) -> QAction:
    """An entry ``text`` in ``menu`` running ``slot()``; ``shortcut``: one key
    sequence or a list of them."""
    action = QAction(text, menu, checkable=checkable)
    if shortcut:
        action.setShortcuts([QKeySequence(s) for s in
                             (shortcut if isinstance(shortcut, list) else [shortcut])])
    # never with the "checked" argument triggered() carries: Play > Play selection took
    # it for its own ``alone`` and ignored Selected band only
    action.triggered.connect(lambda _=False: slot())
    menu.addAction(action)
    return action
