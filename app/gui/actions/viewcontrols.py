"""The View panel and the pointer on the canvas: colours, range, gamma, frequency
axis, grid and the channel shown; the readout and the Spectrum panel following
the pointer; the view as a project saves it and puts it back."""

import math

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from app.gui.actions.selectionactions import SelectionActions
from app.gui.services.opened import OpenDocument
from app.gui.view.canvas_area import CanvasArea
from app.gui.view.viewstate import format_time
from app.gui.widgets.panels import ViewPanel
from app.gui.widgets.spectrumview import SpectrumView
from engine.region import Rect


class ViewControls:
    """``view_panel``'s settings on ``area``'s canvas and rulers; ``readout`` and
    ``spectrum`` follow the pointer over the ``opened`` document; ``selection``
    keeps its part of a saved view."""

    def __init__(self, area: CanvasArea, view_panel: ViewPanel, selection: SelectionActions,
                 opened: OpenDocument, readout: QLabel, spectrum: SpectrumView):
        self.area, self.canvas, self.view_panel = area, area.canvas, view_panel
        self.selection, self.opened = selection, opened
        self.readout, self.spectrum = readout, spectrum
        self._pointer = (0.0, 0.0)  # where the readout was asked for
        self.readout_timer = QTimer(readout, singleShot=True, interval=50,
                                    timeout=self._show_readout)
        self.canvas.cursorMoved.connect(self.cursor_moved)
        self.canvas.viewChanged.connect(self._view_moved)
        view_panel.styleChanged.connect(self.style_changed)
        view_panel.logChanged.connect(self.log_changed)
        view_panel.gridChanged.connect(self.grid_changed)
        view_panel.viewChannelChanged.connect(self.view_channel_changed)

    def style_changed(self) -> None:
        p = self.view_panel
        self.canvas.set_style(floor_db=p.floor.value(), ceiling_db=p.ceiling.value(),
                              gamma=p.gamma.value(), colormap=p.colormap.currentText())

    def view_channel_changed(self, choice) -> None:
        self.canvas.set_view_channel(choice)
        self.lanes_changed()

    def lanes_changed(self) -> None:
        self.area.freq_ruler.lanes = len(self.canvas.lanes)
        self.area.view_changed()

    def grid_changed(self) -> None:
        p = self.view_panel
        self.canvas.set_grid(p.grid(), p.show_grid.isChecked(), p.snap.isChecked())
        self.area.freq_ruler.grid = self.canvas.grid if p.show_grid.isChecked() else None
        self.area.freq_ruler.update()

    def log_changed(self, on: bool) -> None:
        self.canvas.view.set_log(on)
        self.area.view_changed()

    def cursor_moved(self, seconds: float, hz: float) -> None:
        """The readout follows the pointer at most 20 times a second: redrawing the
        status bar on every move costs a frame's worth of llvmpipe time."""
        self._pointer = (seconds, hz)
        if not self.readout_timer.isActive():
            self.readout_timer.start()

    def _view_moved(self) -> None:
        """The view moved or another document came: the readout says what is under the
        pointer now, or nothing (it kept the last file's values)."""
        at = self.canvas.pointer_at()
        if at is None:
            self.readout.clear()
        else:
            self.cursor_moved(*at)

    def _show_readout(self) -> None:
        seconds, hz = self._pointer
        doc = self.opened.doc
        if doc is None:
            return
        frame, b = round(doc.frame_of(seconds)), round(doc.bin_of(hz))
        level = "-"
        if 0 <= frame < doc.n_frames and 0 <= b < doc.n_bins:
            channel = self.canvas.pointer_channel()
            mags, _ = doc.read(Rect(b, b + 1, frame, frame + 1), channel)
            value = float(mags.max()) / doc.full_scale
            level = f"{20 * math.log10(value):.1f} dB" if value > 0 else "-inf dB"
        note = self.canvas.grid.name(hz)
        self.readout.setText(f"{format_time(seconds)}   {hz:,.1f} Hz   {note}   {level}")
        if 0 <= frame < doc.n_frames and self.spectrum.isVisible():
            self._show_spectrum(frame, seconds)

    def _show_spectrum(self, frame: int, seconds: float) -> None:
        """The frame under the pointer, every bin, in the Spectrum panel."""
        p = self.view_panel
        self.spectrum.show_frame(self.opened.doc, frame, self.canvas.pointer_channel(),
                                 (p.floor.value(), p.ceiling.value()), format_time(seconds))

    def view_state(self) -> dict:
        v, p = self.canvas.view, self.view_panel
        return {"t0": v.t0, "t1": v.t1, "f_lo": v.f_lo, "f_hi": v.f_hi, "log_freq": v.log_freq,
                "colormap": p.colormap.currentText(), "floor_db": p.floor.value(),
                "ceiling_db": p.ceiling.value(), "gamma": p.gamma.value(),
                "selection": self.selection.selection_state()}

    def apply_view(self, state: dict) -> None:
        p = self.view_panel
        p.colormap.setCurrentText(state.get("colormap", "viridis"))
        p.floor.setValue(float(state.get("floor_db", -100)))
        p.ceiling.setValue(float(state.get("ceiling_db", 0)))
        p.gamma.setValue(float(state.get("gamma", 1.0)))
        p.log.setChecked(bool(state.get("log_freq", False)))
        self.selection.restore_selection(state.get("selection"))
        v = self.canvas.view
        for key in ("t0", "t1", "f_lo", "f_hi"):
            if isinstance(state.get(key), (int, float)):
                setattr(v, key, float(state[key]))
        self.area.view_changed()
