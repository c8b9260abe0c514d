"""Long work off the GUI thread: a QThread running one function, with
progress and cancel, reporting back through queued signals."""

import threading
import traceback

from PySide6.QtCore import Qt, QThread, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStyle,
    QStyleOptionProgressBar,
    QStylePainter,
    QWidget,
)

from engine.errors import Cancelled, SpectroPaintError


class Worker(QThread):
    """Runs ``work(progress=..., cancel=...)``; emits ``done(result)``, or
    ``failed(message)`` with the engine's one-line message, or ``cancelled``."""

    progressed = Signal(float)
    partial = Signal(object)  # a first result, before the job is done (see ``run``)
    asked = Signal(str)  # a question for the user; the work waits for ``answer``
    done = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, label: str, work, parent=None, blocks_editing: bool = False):
        """``blocks_editing``: the job replaces or re-reads the document (open,
        re-analysis), so painting and undo wait for it."""
        super().__init__(parent)
        self.label, self.work, self.blocks_editing = label, work, blocks_editing
        self.partial_wanted = False  # True: ``work`` also takes ``partial(result)``
        self.asks = False  # True: ``work`` also takes ``confirm(question) -> bool``
        self.cancel_flag = threading.Event()
        self._answered, self._yes = threading.Event(), False
        self.error: Exception | None = None  # what failed, for a caller that offers a way out
        self.settled = False  # True once its outcome's slots have run on the GUI thread
        # (``finished`` is emitted after ``done``/``failed``/``cancelled`` and delivered
        # after them: a thread no longer running may still have its ``done`` queued)
        self.finished.connect(self._settle)

    def _settle(self) -> None:
        self.settled = True

    def cancel(self) -> None:
        self.cancel_flag.set()

    def confirm(self, question: str) -> bool:
        """In the worker: ask the user (``asked``) and wait for :meth:`answer` (no, if the
        job is cancelled meanwhile)."""
        self._answered.clear()
        self.asked.emit(question)
        while not self._answered.wait(0.1):
            if self.cancel_flag.is_set():
                return False
        return self._yes

    def answer(self, yes: bool) -> None:
        """On the GUI thread: the user's answer to the question asked."""
        self._yes = yes
        self._answered.set()

    def run(self) -> None:
        try:
            extra = {"partial": self.partial.emit} if self.partial_wanted else {}
            if self.asks:
                extra["confirm"] = self.confirm
            result = self.work(progress=self.progressed.emit, cancel=self.cancel_flag, **extra)
        except Cancelled:
            self.cancelled.emit()
        except SpectroPaintError as e:
            self.error = e
            self.failed.emit(str(e))
        except MemoryError:
            self.failed.emit(f"{self.label}: not enough memory; close other programs or open "
                             "a shorter file")
        except Exception as e:  # a bug: say so, never crash the app
            traceback.print_exc()
            self.failed.emit(f"{self.label} failed unexpectedly ({type(e).__name__}: {e}); "
                             "please report it")
        else:
            self.done.emit(result)


class ProgressBar(QWidget):
    """A progress bar of 0 to 1000 that repaints with the window's next frame.
    QProgressBar.setValue repaints at once, and in a window holding the GL canvas
    that is a composition of the whole window (about 25 ms under llvmpipe) on
    top of the canvas's own frames."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._value = 0
        self._style_of = QProgressBar()  # its size hint, as the style gives it

    def value(self) -> int:
        return self._value

    def setValue(self, value: int) -> None:
        if value != self._value:
            self._value = value
            self.update()

    def sizeHint(self):
        return self._style_of.sizeHint()

    def paintEvent(self, event) -> None:
        option = QStyleOptionProgressBar()
        option.initFrom(self)
        option.state |= QStyle.StateFlag.State_Horizontal
        option.minimum, option.maximum, option.progress = 0, 1000, self._value
        option.text, option.textVisible = f"{self._value // 10}%", True
        option.textAlignment = Qt.AlignmentFlag.AlignCenter
        QStylePainter(self).drawControl(QStyle.ControlElement.CE_ProgressBar, option)


class JobStatus(QWidget):
    """The running job in the status bar: its name, progress and a Cancel button.
    Not modal: the user paints, plays and zooms while it runs."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.bar = ProgressBar()
        self.bar.setFixedWidth(160)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("cancel-job")
        for w in (self.label, self.bar, self.cancel):
            layout.addWidget(w)
        self.worker: Worker | None = None
        self.cancel.clicked.connect(lambda: self.worker and self.worker.cancel())
        self.latest = 0.0  # the last fraction reported; shown at most every 100 ms
        self.timer = QTimer(self, interval=100, timeout=self._show_progress)
        self.hide()

    def follow(self, worker: Worker) -> None:
        self.worker = worker
        self.label.setText(worker.label + "…")
        self.bar.setValue(0)
        self.latest = 0.0
        self.cancel.setEnabled(True)
        worker.progressed.connect(self._progressed)
        self.timer.start()
        worker.finished.connect(self._finished)
        self.show()

    def _progressed(self, fraction: float) -> None:
        self.latest = fraction  # a repaint per report would cost the canvas frames

    def _show_progress(self) -> None:
        value = int(self.latest * 1000)
        if value != self.bar.value():
            self.bar.setValue(value)

    def _finished(self) -> None:
        self.timer.stop()
        self.worker = None
        self.hide()
