"""The editing verbs of an `app.session.editor.Editor`, each one undo step:

    ed.cut(start=1.0, end=2.5)                   # a time range (app.session.time_edit)
    ed.paste(at=10.0)                            # inserted: the file grows
    ed.copy(start=3.0, end=4.0, low=2000, high=4000)    # a band of it (spectral_clip)
    ed.paste(at=6.0, semitones=-12)              # mixed in an octave lower
    ed.move(start=3.0, end=4.0, low=2000, high=4000, by_s=0.5, heal=True)
    ed.gain(start=0.0, end=2.0, db=-6)           # app.session.selection_process
    ed.fade_in(start=0.0, end=0.5)

A time range is ``start``/``end`` seconds; with ``low``/``high`` Hz (or a
``selection`` of any shape) the verb acts on that spectral selection instead, and
what it copies is a spectral clip. Given none of them, a verb acts on the session's
selection, as the window's do (a rectangle of every frequency is a time range):

    ed.select(Selection.rect(1.0, 2.5, f_lo=0, f_hi=ed.doc.sample_rate / 2))
    ed.cut()

The clipboard holds either kind: a time clip pastes by insertion unless told
otherwise, a spectral clip mixes in. A verb not told its ``channel`` acts on the
session's paint channel (every channel unless set).
"""

import math

from app.session import time_edit
from app.session.selection import Selection
from app.session.selection_process import process_selection
from app.session.session import is_time_range, time_span
from app.session.spectral_clip import (
    Clip,
    copy_clip,
    cut_clip,
    move_selection,
    paste_as_layer,
    paste_clip,
)
from engine.errors import ParameterError
from engine.model.history import Swap

Seconds = float | None  # None for both start and end: the session's selection


class EditingVerbs:
    """Mixed into the Editor (its ``doc``, ``_doc``, ``history``, ``warnings``,
    ``audio()`` and ``_told``; the session's ``selection``, ``channel``, ``clipboard``
    and ``keep``)."""

    def delete(self, *, start: Seconds = None, end: Seconds = None, low: float | None = None,
               high: float | None = None, selection: Selection | None = None,
               channel: int | None = None, progress=None, cancel=None) -> None:
        """Take ``[start, end)`` seconds out (the file is that much shorter), or what a
        spectral selection holds (the file keeps its length)."""
        spectral = self._spectral(start, end, low, high, selection, "delete")
        if spectral is not None:
            _, step = cut_clip(self.doc, selection=spectral, channel=self._on(channel),
                               history=self.history)
            step.label = "delete selection"
            return
        s0, s1 = self._range(start, end, "delete")
        self._swap("delete", time_edit.delete_range, s0, s1, progress=progress, cancel=cancel)

    def copy(self, *, start: Seconds = None, end: Seconds = None, low: float | None = None,
             high: float | None = None, selection: Selection | None = None,
             channel: int | None = None) -> "time_edit.TimeClip | Clip":
        """Put ``[start, end)`` seconds of the edited audio (or a spectral selection's
        cells) on the clipboard."""
        spectral = self._spectral(start, end, low, high, selection, "copy")
        if spectral is not None:
            self.keep(copy_clip(self.doc, selection=spectral, channel=self._on(channel)))
        else:
            s0, s1 = self._range(start, end, "copy")
            self.keep(time_edit.copy_range(self.doc, self.audio(), s0, s1))
        return self.clipboard

    def cut(self, *, start: Seconds = None, end: Seconds = None, low: float | None = None,
            high: float | None = None, selection: Selection | None = None,
            channel: int | None = None, progress=None,
            cancel=None) -> "time_edit.TimeClip | Clip":
        """Copy, then delete (one undo step)."""
        spectral = self._spectral(start, end, low, high, selection, "cut")
        if spectral is not None:
            clip, _ = cut_clip(self.doc, selection=spectral, channel=self._on(channel),
                               history=self.history)
        else:
            s0, s1 = self._range(start, end, "cut")
            clip = time_edit.copy_range(self.doc, self.audio(), s0, s1)
            self._swap("cut", time_edit.delete_range, s0, s1, progress=progress,
                       cancel=cancel)
        self.keep(clip)  # once the cut is done: one that fails changes nothing
        return clip

    def paste(self, *, at: float, mode: str | None = None, semitones: float = 0.0,
              shift_hz: float = 0.0, as_layer: bool = False, channel: int | None = None,
              progress=None, cancel=None) -> None:
        """Paste the clipboard at ``at`` seconds. A time clip is inserted (``mode``
        "insert"), mixed into what is there ("add") or put over it ("replace"); a
        spectral clip is mixed in ("add") or replaces ("replace"), transposed by
        ``semitones`` and moved by ``shift_hz``, into a new layer with ``as_layer``."""
        clip = self.clipboard
        if clip is None:
            raise ParameterError("paste: the clipboard is empty; copy or cut a range first")
        if isinstance(clip, Clip):
            if as_layer:
                paste_as_layer(self.doc, clip, at_s=at, semitones=semitones,
                               shift_hz=shift_hz, channel=self._on(channel), history=self.history)
            else:
                self._told(paste_clip(self.doc, clip, at_s=at, mode=mode or "add",
                                      semitones=semitones, shift_hz=shift_hz,
                                      channel=self._on(channel), history=self.history), "paste")
            return
        if semitones or shift_hz or as_layer:
            raise ParameterError("paste: the clipboard holds a time range, which pastes as "
                                 "it is; to transpose or paste as a layer, copy a band "
                                 "(low and high)")
        at_sample = time_edit.sample_at(self.doc, at=at, warnings=self.warnings, what="paste")
        mode = mode or "insert"
        self._swap(f"paste ({mode})", time_edit.paste_clip, clip, at_sample, mode=mode,
                   progress=progress, cancel=cancel)

    def trim(self, *, start: Seconds = None, end: Seconds = None,
             progress=None, cancel=None) -> None:
        """Keep ``[start, end)`` seconds alone."""
        s0, s1 = self._range(start, end, "trim")
        self._swap("trim", time_edit.trim_to, s0, s1, progress=progress, cancel=cancel)

    def insert_silence(self, *, at: float, seconds: float, progress=None,
                       cancel=None) -> None:
        at_sample = time_edit.sample_at(self.doc, at=at, warnings=self.warnings,
                                        what="insert silence")
        self._swap("insert silence", time_edit.insert_silence, at_sample, seconds,
                   progress=progress, cancel=cancel)

    def duplicate(self, *, start: Seconds = None, end: Seconds = None,
                  progress=None, cancel=None) -> None:
        """``[start, end)`` seconds twice in a row."""
        s0, s1 = self._range(start, end, "duplicate")
        self._swap("duplicate", time_edit.duplicate_range, s0, s1, progress=progress,
                   cancel=cancel)

    def move(self, *, start: Seconds = None, end: Seconds = None, low: float | None = None,
             high: float | None = None, selection: Selection | None = None,
             by_s: float = 0.0, semitones: float = 0.0, shift_hz: float = 0.0,
             stretch: float = 1.0, heal: bool = False, channel: int | None = None) -> None:
        """Move what a selection holds (``[start, end)`` seconds between ``low`` and
        ``high`` Hz, every frequency by default) ``by_s`` seconds, transposed by
        ``semitones``, shifted by ``shift_hz``, ``stretch`` times as long; the hole it
        leaves empty or, with ``heal``, healed from around it."""
        spectral = self._spectral(start, end, low, high, selection, "move", band=True)
        self._told(move_selection(self.doc, selection=spectral, by_s=by_s,
                                  semitones=semitones, shift_hz=shift_hz, stretch=stretch,
                                  heal=heal, channel=self._on(channel),
                                  history=self.history), "move")

    def gain(self, *, start: Seconds = None, end: Seconds = None, db: float, **where) -> None:
        self._process("gain", start, end, where, db=db)

    def normalize(self, *, start: Seconds = None, end: Seconds = None,
                  peak_db: float = -1.0, **where) -> None:
        """The selected content's peak (resynthesized) to ``peak_db`` dBFS."""
        self._process("normalize", start, end, where, peak_db=peak_db)

    def fade_in(self, *, start: Seconds = None, end: Seconds = None,
                curve: str = "linear", **where) -> None:
        self._process("fade_in", start, end, where, curve=curve)

    def fade_out(self, *, start: Seconds = None, end: Seconds = None,
                 curve: str = "linear", **where) -> None:
        self._process("fade_out", start, end, where, curve=curve)

    def fade(self, *, start: Seconds = None, end: Seconds = None, direction: str = "in",
             curve: str = "linear", **where) -> None:
        """:meth:`fade_in` or :meth:`fade_out` (``direction`` "in" or "out")."""
        if direction not in ("in", "out"):
            raise ParameterError(f"fade: direction {direction!r}; use 'in' or 'out'")
        self._process(f"fade_{direction}", start, end, where, curve=curve)

    def invert(self, *, start: Seconds = None, end: Seconds = None, **where) -> None:
        """Polarity: the selected content times -1."""
        self._process("invert", start, end, where)

    # -- the parts ---------------------------------------------------------------------
    def _process(self, op: str, start: Seconds, end: Seconds, where: dict, **params) -> None:
        """``where``: ``low``, ``high``, ``selection``, ``channel``."""
        unknown = set(where) - {"low", "high", "selection", "channel"}
        if unknown:
            raise ParameterError(f"{op}: unknown argument(s) {', '.join(sorted(unknown))}")
        spectral = self._spectral(start, end, where.get("low"), where.get("high"),
                                  where.get("selection"), op)
        if spectral is None:
            s0, s1 = self._range(start, end, op)
            span = dict(start=s0 / self.doc.sample_rate, end=s1 / self.doc.sample_rate)
        else:
            span = {}
        self._told(process_selection(self.doc, op=op, selection=spectral,
                                     channel=self._on(where.get("channel")), history=self.history,
                                     **span, **params), op)

    def _on(self, channel: int | None) -> int | None:
        """The channel a verb acts on: ``channel``, else the session's paint channel."""
        return self.channel if channel is None else channel

    def _spectral(self, start: Seconds, end: Seconds, low, high, selection: Selection | None,
                  what: str, band: bool = False) -> Selection | None:
        """The spectral selection a verb acts on: ``selection``, or the rectangle of
        ``[start, end)`` s (clipped to the file) and ``low`` to ``high`` Hz; None for a
        time range (no band given, unless ``band``: a rectangle of every frequency).
        Given none of them: the session's selection, unless it is a time range."""
        if selection is not None:
            return selection
        if start is None and end is None and low is None and high is None:
            chosen = self._selected(what)
            return chosen if band or not is_time_range(chosen, self.doc) else None
        if low is None and high is None and not band:
            return None
        nyquist = self.doc.sample_rate / 2
        for name, hz in (("low", low), ("high", high)):
            if hz is not None and not (isinstance(hz, int | float) and math.isfinite(hz)
                                       and hz >= 0):
                raise ParameterError(f"{what}: {name} {hz!r} is not a frequency in Hz")
        s0, s1 = self._range(start, end, what)
        return Selection.rect(s0 / self.doc.sample_rate, s1 / self.doc.sample_rate,
                              f_lo=low or 0.0, f_hi=nyquist if high is None else high)

    def _range(self, start: Seconds, end: Seconds, what: str) -> tuple[int, int]:
        """The samples of ``[start, end)`` s; given neither, of the time the session's
        selection spans."""
        if start is None and end is None:
            span = time_span(self._selected(what), self.doc)
            if span is None:
                raise ParameterError(f"{what}: the selection spans no time of the file")
            start, end = span
        elif start is None or end is None:
            raise ParameterError(f"{what}: give start and end, or neither (the selection)")
        return time_edit.sample_range(self.doc, start=start, end=end, warnings=self.warnings,
                                      what=what)

    def _selected(self, what: str) -> Selection:
        if self.selection is None:
            raise ParameterError(f"{what}: nothing is selected; give start and end (seconds) "
                                 "or select first (Editor.select)")
        return self.selection

    def _swap(self, label: str, verb, *args, **options) -> None:
        """Make the document ``verb(doc, wave, *args, **options)`` makes (a time edit's)
        the editor's, as one undo step. The documents the steps undone would redo are
        let go once the edit is known to be possible: an edit after an undo holds two
        documents, not three. The selection, drawn on the file before it, is let go
        too (as the window's Cut and Delete do)."""
        forget = None if self.history is None else self.history.forget_redo
        doc = verb(self.doc, self.audio(), *args, ready=forget, **options)
        if self.history is None:
            self._doc = doc
        else:
            self.history.push(Swap(label, self.doc, doc))
        if self.selection is not None:
            self.select(None)
