"""A read-only nnAudio view (Mel, CQT or VQT) of what the canvas shows, under it,
in its time axis (app.gui.widgets.nnaudio_strip).

Painting stays on the document's own transform in the canvas; this view is
recomputed from the edited audio of the visible span (at most ``MAX_SECONDS``)
a moment after the view moves or an edit lands, in a thread, so the GUI never
waits for it.
"""

import threading

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget

from app.gui.widgets.nnaudio_strip import ViewStrip
from engine.view import nnaudio_views as views

MAX_SECONDS = 60.0
DELAY_MS = 250  # after the last view change or edit


class AnalysisView(QWidget):
    rendered = Signal(object, object, int)  # RGBA image, (t0, t1) it shows, generation

    def __init__(self, window, parent=None):
        super().__init__(parent)
        self.window = window
        self.choice = QComboBox()
        self.choice.addItem("(off)", None)
        for kind in views.VIEWS:
            self.choice.addItem(kind.upper() if kind != "mel" else "Mel", kind)
        self.choice.setToolTip("See the visible span through nnAudio, under the canvas")
        self.strip = ViewStrip(window.canvas)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 0)  # the picture gets the height
        layout.setSpacing(2)
        layout.addWidget(self.choice)
        layout.addWidget(self.strip, 1)
        self.timer = QTimer(self, singleShot=True, interval=DELAY_MS, timeout=self._start)
        self.generation = 0  # a newer request makes older results stale
        self.last_image: np.ndarray | None = None
        self.choice.currentIndexChanged.connect(self.schedule)
        self.rendered.connect(self._show)

    @property
    def kind(self) -> str | None:
        return self.choice.currentData()

    def schedule(self, *_) -> None:
        if self.kind is None:
            self.strip.picture = None  # off: the strip says how to turn it on
            self.strip.update()
        elif self.window.session is not None:
            self.strip.update()  # its time axis now; the picture of the new span follows
            self.timer.start()

    def _start(self) -> None:
        session, view = self.window.session, self.window.canvas.view
        doc = session.doc
        t0 = max(0.0, view.t0)
        t1 = min(doc.length / doc.sample_rate, view.t1, t0 + MAX_SECONDS)
        s0, s1 = int(t0 * doc.sample_rate), int(t1 * doc.sample_rate)
        if s1 - s0 < 2048:
            return
        session.refresh_audio()
        audio = session.synth.cached(s0, s1).copy()  # what is heard, edits included
        self.generation += 1
        # its frames are centred on s0, s0 + hop, ...: each column a hop wide around one
        frames, hop, sr = 1 + (s1 - s0) // views.HOP, views.HOP, doc.sample_rate
        span = ((s0 - hop / 2) / sr, (s0 + (frames - 0.5) * hop) / sr)
        self.rows_hz = views.frequencies(self.kind, doc.sample_rate)
        args = (audio, doc.sample_rate, self.kind, self.strip.picture_size(span), span,
                self.generation)
        threading.Thread(target=self._compute, args=args, daemon=True).start()

    def _compute(self, audio, sr, kind, size, span, generation) -> None:
        mag = views.magnitude(audio, sr, kind)
        self.rendered.emit(views.render_view(mag, *size, colormap="viridis"), span, generation)

    def _show(self, image: np.ndarray, span: tuple[float, float], generation: int) -> None:
        if generation != self.generation:
            return  # a newer one is on its way
        self.last_image = image
        self.strip.show_picture(image, span, self.rows_hz)
