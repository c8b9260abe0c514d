"""The window's long work: one Worker at a time, its progress and Cancel button in
the status bar (not modal: painting, playing and zooming go on; only what would
conflict waits)."""

from PySide6.QtWidgets import QMessageBox, QStatusBar, QWidget

from app.gui.services.prompts import ask, show_error
from app.gui.services.workers import JobStatus, Worker


class Jobs:
    def __init__(self, parent: QWidget, status: QStatusBar):
        self.parent, self.status = parent, status
        self.worker: Worker | None = None  # the last one started (running or not)
        self.job_status = JobStatus()
        status.addPermanentWidget(self.job_status)

    def running(self) -> bool:
        return self.worker is not None and self.worker.isRunning()

    def idle(self) -> bool:
        """No job running, and the last one's outcome handled (its ``done`` has run)."""
        return self.worker is None or self.worker.settled

    def show_error(self, error, message: str | None = None) -> None:
        show_error(self.parent, self.status, error, message)

    def busy(self, label: str) -> bool:
        """True (and the user is told) while another worker runs."""
        if self.running():
            self.show_error(f"{label}: please wait, '{self.worker.label}' is still running")
            return True
        return False

    def editing_blocked(self, what: str) -> bool:
        """True (and the status bar says that ``what`` was not done, and why) while a job
        replaces or re-reads the document, so that ``what`` (painting, undo) would be
        lost. Nothing is held for later: it said "waits", and the stroke was dropped."""
        if self.running() and self.worker.blocks_editing:
            self.status.showMessage(f"{what}: not done, '{self.worker.label}' is running; "
                                    "do it again when it ends (or Cancel it in the status "
                                    "bar)", 8000)
            return True
        return False

    def run(self, label: str, work, on_done, on_failed=None, *, blocks_editing: bool = False,
            on_partial=None, asks: bool = False) -> Worker | None:
        """Run ``work`` in a thread, its progress and a Cancel button in the status bar
        (None if another job runs). ``blocks_editing``: see :class:`Worker`;
        ``on_partial``: ``work`` also takes ``partial(result)`` and this receives it;
        ``asks``: ``work`` also takes ``confirm(question)``, asked in a dialog."""
        if self.busy(label):
            return None
        worker = Worker(label, work, self.parent, blocks_editing)
        if on_partial is not None:
            worker.partial_wanted = True
            worker.partial.connect(on_partial)
        if asks:
            worker.asks = True
            worker.asked.connect(lambda question: ask(
                self.parent, f"{question}.\n\nGo on?", lambda b: worker.answer(
                    b == QMessageBox.StandardButton.Ok)))
        self.job_status.follow(worker)
        worker.done.connect(on_done)
        worker.failed.connect(lambda message: (on_failed or self.show_error)(worker.error,
                                                                           message))
        worker.cancelled.connect(lambda: self.status.showMessage(f"{label}: cancelled", 5000))
        self.worker = worker
        worker.start()
        return worker

    def stop(self) -> None:
        """Closing: a running job is cancelled and waited for."""
        if self.running():
            self.worker.cancel()
            self.worker.wait(5000)
