"""Long work off the GUI thread: a QThread running one function, with
progress and cancel, reporting back through queued signals."""

import threading
import traceback

from PySide6.QtCore import QThread, Signal

from engine.errors import Cancelled, SpectroPaintError


class Worker(QThread):
    """Runs ``work(progress=..., cancel=...)``; emits ``done(result)``, or
    ``failed(message)`` with the engine's one-line message, or ``cancelled``."""

    progressed = Signal(float)
    done = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, label: str, work, parent=None):
        super().__init__(parent)
        self.label, self.work = label, work
        self.cancel_flag = threading.Event()
        self.error: Exception | None = None  # what failed, for a caller that offers a way out

    def cancel(self) -> None:
        self.cancel_flag.set()

    def run(self) -> None:
        try:
            result = self.work(progress=self.progressed.emit, cancel=self.cancel_flag)
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
