"""A/B in the window (RX's Compare): one toggle switches what playback reads between
the edited audio and the original recording (``Document.audio.samples``), at the same
playhead and without a gap: the player keeps its position and asks the source for
the next block, and the block after a switch crosses from one to the other."""

import numpy as np
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStatusBar

from app.gui.actions.menuaction import menu_action
from app.gui.services.opened import OpenDocument


class Bypass:
    """The toggle's state, read by the audio callback: True plays the alternate."""

    def __init__(self):
        self.on = False


class Switch:
    """A playback source ``(start, stop) -> float32 [ch, n]`` reading ``primary`` or,
    while ``bypass.on``, ``alternate``; the first block read after the toggle
    changed fades from the one to the other over its length (no click)."""

    def __init__(self, primary, alternate, bypass: Bypass):
        self.primary, self.alternate, self.bypass = primary, alternate, bypass
        self.heard = bypass.on  # which one the last block came from

    def __call__(self, start: int, stop: int) -> np.ndarray:
        wanted = self.bypass.on
        if wanted == self.heard:
            return (self.alternate if wanted else self.primary)(start, stop)
        old = (self.alternate if self.heard else self.primary)(start, stop)
        new = (self.alternate if wanted else self.primary)(start, stop)
        self.heard = wanted
        ramp = np.linspace(0.0, 1.0, stop - start, endpoint=False, dtype=np.float32)
        return (old + (new - old) * ramp).astype(np.float32)


def reader(samples: np.ndarray, length: int, offset: int = 0):
    """``samples`` ``[ch, n]``, frames ``offset`` to ``length`` of a recording, as a
    source (zeros past its end)."""

    def read(start: int, stop: int) -> np.ndarray:
        block = samples[:, start - offset:min(stop, length) - offset]
        if block.shape[1] < stop - start:
            block = np.pad(block, ((0, 0), (0, stop - start - block.shape[1])))
        return block.astype(np.float32, copy=False)

    return read


class CompareActions:
    """Play > Compare: original, and what play and scrub read from the ``opened``
    document."""

    def __init__(self, opened: OpenDocument, status: QStatusBar):
        self.opened, self.status = opened, status
        self.bypass = Bypass()
        self.compare_action: QAction | None = None  # made by build_action

    def build_action(self, menu: QMenu) -> None:
        self.compare_action = menu_action(  # menu actions pass no "checked": read it
            menu, "&Compare: original", lambda: self.set_compare(self.compare_action.isChecked()),
            "Ctrl+B", checkable=True)
        self.compare_action.setToolTip("Play the original recording instead of the edited "
                                       "audio, at the same playhead (Ctrl+B)")

    def playback_source(self):
        """What play and scrub read: the edited audio, or the original while Compare
        is on (switchable while playing)."""
        doc = self.opened.doc
        return Switch(self.opened.session.synth.cached, reader(doc.audio.samples, doc.length),
                      self.bypass)

    def set_compare(self, on: bool) -> None:
        """Play the original recording (``on``) or the edited audio, from now on."""
        self.bypass.on = bool(on)
        self.compare_action.setChecked(bool(on))
        self.status.showMessage("Compare: hearing the original recording" if on else
                                "Compare off: hearing the edited audio", 4000)
