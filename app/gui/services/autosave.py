"""Autosave and crash recovery.

While a document has unsaved edits, its edited tiles (the project format of
app.project.write) are written in the background to ``autosave-<pid>.spp`` in the
user's data folder: after every ``EVERY_STROKES`` undo-stack changes, and after
``IDLE_S`` seconds without one. The file is replaced atomically (written aside,
flushed to disk, renamed), so a crash at any moment leaves the previous autosave
or the new one, never half of one. What does not change from one autosave to the next
(the audio, each repair's change) is kept beside it in ``autosave-<pid>.spp.parts``,
written once (app.project.write.save_project's ``apart``): an autosave writes what
changed. A clean state (saved, or the edits discarded)
and a normal quit remove it. An autosave whose process is gone is what a crash or
a kill left behind: the next start offers to recover it (app.gui.start).
"""

import json
import os
import shutil
import threading
import time
import zipfile
from pathlib import Path

from PySide6.QtCore import QStandardPaths, QTimer

from app.gui.services.history_file import collect
from app.project.read import parts_folder
from app.project.write import save_project, snapshot
from engine.io.atomic import discard, running

EVERY_STROKES = 5
IDLE_S = 10.0
PREFIX = "autosave-"


def folder() -> Path:
    """The user's data folder for autosaves (XDG_DATA_HOME on Linux)."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(base) / "SpectroPaint" / "autosave"


def orphans(where: Path | None = None) -> list[Path]:
    """Autosaves left by processes that are gone, newest first."""
    where = where or folder()
    found = []
    for path in where.glob(f"{PREFIX}*.spp"):
        pid = path.stem[len(PREFIX):]
        if pid.isdigit() and int(pid) != os.getpid() and not running(int(pid)):
            found.append(path)
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def describe(orphan: Path) -> str:
    """What an autosave holds, for the recovery question: the project its edits were
    saved as, else their source; and its time."""
    try:
        with zipfile.ZipFile(orphan) as z:
            manifest = json.loads(z.read("manifest.json"))
        source = manifest.get("project") or manifest.get("source")
        name = Path(source).name if isinstance(source, str) else "a recording"
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        name = "a recording"
    when = time.strftime("%H:%M on %d %b", time.localtime(orphan.stat().st_mtime))
    return f"the edits to {name}, autosaved at {when}"


def forget(autosave: Path) -> None:
    """Remove an autosave and its parts; never raises."""
    discard(autosave)
    shutil.rmtree(parts_folder(autosave), ignore_errors=True)


class Autosaver:
    """Autosaves ``window``'s document (a MainWindow: its ``opened`` document,
    ``undo_stack`` and ``view_state()``) to ``where``."""

    def __init__(self, window, where: Path | None = None):
        self.window = window
        self.path = (where or folder()) / f"{PREFIX}{os.getpid()}.spp"
        self.changes = 0  # undo-stack changes since the last autosave
        self.idle = threading.Event()  # set while no autosave is being written
        self.idle.set()
        self.error: str | None = None
        self.timer = QTimer(window, singleShot=True, interval=int(IDLE_S * 1000),
                            timeout=self.save)
        self.holding = False  # while a project's history is put back on the stack
        window.undo_stack.indexChanged.connect(self._changed)
        window.undo_stack.cleanChanged.connect(lambda clean: clean and self.remove())

    def _changed(self, _index=None) -> None:
        if self.holding:
            return
        self.changes += 1
        if self.changes >= EVERY_STROKES:
            self.save()
        else:
            self.timer.start()

    def save(self) -> None:
        """Write the edits now, in a thread (the snapshot is copied here, cheaply)."""
        w = self.window
        opened = w.opened
        if self.error:  # the last one failed (a full disk, say): tell the user, once
            w.statusBar().showMessage(f"autosave failed: {self.error}", 15000)
            self.error = None
        if opened.session is None or not opened.modified:
            return
        jobs = w.jobs
        if not self.idle.is_set() or opened.session.stroke is not None or (
                jobs.running() and jobs.worker.blocks_editing):
            # one at a time, never half a stroke, nor half an edit a worker is writing
            # (app.gui.actions.selectionedits): try again later
            self.timer.start()
            return
        doc = opened.doc
        snap = snapshot(doc, opened.tracker, collect(opened.history), opened.project_path)
        view, self.changes = w.view_state(), 0
        self.idle.clear()
        threading.Thread(target=self._write, args=(snap, view), daemon=True).start()

    def _write(self, snap: dict, view: dict) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            save_project(self.path, snap, view, apart=True)
        except Exception as e:  # a full disk must not stop the user working; save() says it
            self.error = str(e)
        finally:
            self.idle.set()

    def adopt(self, orphan: Path) -> None:
        """A recovered autosave becomes this process's (until the next one replaces it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(parts_folder(self.path), ignore_errors=True)
        if parts_folder(orphan).exists():
            os.replace(parts_folder(orphan), parts_folder(self.path))
        os.replace(orphan, self.path)

    def remove(self) -> None:
        """No unsaved edits any more (saved, discarded, or quitting normally)."""
        self.timer.stop()
        self.idle.wait(30)
        self.changes = 0
        forget(self.path)  # never raises: it runs in Qt's signal handlers
