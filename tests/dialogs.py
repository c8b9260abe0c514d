"""Driving the window as a user does: a menu action found by its menu and text, and
dialogs answered from a QTimer while the event loop runs (so whatever Qt does
between two dialogs, such as deleting one closed with WA_DeleteOnClose, happens
as it does in the app)."""

import time
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QFileDialog, QLineEdit, QMessageBox

READING_MS = 250  # a user answers a dialog no sooner than this after it opens


def menu_action(window, path: str):
    """The action at ``path`` ("File > Export audio…", "File > Export bit depth > 16-bit")
    in the window's menu bar, matched without the & of its mnemonic ("Edit > Undo"
    finds "Undo hard-eraser stroke")."""
    names = [part.strip() for part in path.split(">")]
    actions = window.menuBar().actions()
    for depth, name in enumerate(names):
        texts = [a.text().replace("&", "") for a in actions]
        found = next((a for a, t in zip(actions, texts, strict=True) if t == name), None) or \
            next((a for a, t in zip(actions, texts, strict=True)
                  if t.startswith(name + " ")), None)
        assert found is not None, f"no menu entry '{name}' in {path}: " + \
            ", ".join(a.text().replace("&", "") for a in actions)
        if depth == len(names) - 1:
            return found
        actions = found.menu().actions()
    raise AssertionError(path)


def choose(window, path: str) -> None:
    """Click the menu entry at ``path``."""
    action = menu_action(window, path)
    assert action.isEnabled(), f"{path} is disabled"
    action.trigger()


def when_shown(window, kind, name: str, answer, timeout: float = 30.0) -> None:
    """Once a ``kind`` named ``name`` is shown (looked for every 20 ms by a QTimer, while
    the test waits in the event loop), call ``answer(dialog)`` after READING_MS, as a
    user takes a moment to read it (the app meanwhile deletes what it has closed)."""
    deadline = time.monotonic() + timeout

    def look():
        if not shiboken6.isValid(window):
            return  # the test is over
        found = [d for d in window.findChildren(kind, name) if d.isVisible()]
        if found:
            QTimer.singleShot(READING_MS, lambda: shiboken6.isValid(found[-1])
                              and answer(found[-1]))
        elif time.monotonic() < deadline:
            QTimer.singleShot(20, look)

    QTimer.singleShot(0, look)


def type_path(dialog: QFileDialog, path) -> None:
    """Go to ``path``'s folder and type its name, as a user does, and accept."""
    dialog.setDirectory(str(Path(path).parent))
    dialog.findChild(QLineEdit, "fileNameEdit").setText(Path(path).name)
    dialog.accept()


def save_as(window, path) -> None:
    """Answer the next file dialog with ``path``."""
    when_shown(window, QFileDialog, "file-dialog", lambda dialog: type_path(dialog, path))


def press(window, name: str, button, kind=QMessageBox) -> None:
    """Answer the next message box named ``name`` with a standard ``button`` or, given
    a text, the button that says it."""
    def click(box) -> None:
        target = next(b for b in box.buttons() if b.text().replace("&", "") == button) \
            if isinstance(button, str) else box.button(button)
        target.click()

    when_shown(window, kind, name, click)


def run_until(condition, timeout: float = 30.0) -> None:
    """Run an event loop, as the app's own, until ``condition()`` holds. Unlike
    qtbot.waitUntil (which processes events from outside any loop), it deletes what
    deleteLater() and WA_DeleteOnClose mark, when the app would."""
    loop = QEventLoop()
    deadline = time.monotonic() + timeout
    failed = []

    def check():
        if condition():
            loop.quit()
        elif time.monotonic() > deadline:
            failed.append(True)
            loop.quit()
        else:
            QTimer.singleShot(10, check)

    QTimer.singleShot(0, check)
    loop.exec()
    assert not failed, f"timed out after {timeout} s waiting for {condition}"


def open_file(window, path) -> None:
    """File > Open audio…, the file chosen in the dialog; back when it is open and
    its audio made."""
    save_as(window, path)
    choose(window, "File > Open audio…")
    run_until(lambda: window.opened.audio_path == path and window.jobs.idle())
