"""Playback controls of the main window: play/pause (Space from anywhere), from
the cursor, the selection (looped, or only its frequency band), scrubbing in
the time ruler, and the moving playhead."""

from engine.resynth import masked_audio


class Transport:
    """Mixed into MainWindow (which provides player, canvas, session, actions)."""

    def toggle_play(self) -> None:
        if self.player.playing:
            self.stop()
        elif self.canvas.selection is not None:
            self.play_selection()
        else:
            self.play_from(self.canvas.playhead or self.canvas.view.t0)

    def play_from_cursor(self) -> None:
        at = self.canvas.pointer_seconds()
        self.play_from(self.canvas.view.t0 if at is None else at)

    def play_from(self, seconds: float) -> None:
        if self.session is None:
            return
        doc = self.doc
        start = min(max(0, int(seconds * doc.sample_rate)), doc.length - 1)
        self._play(self.playback_source(), start, doc.length, loop=False)

    def play_selection(self, alone: bool | None = None) -> None:
        """The selection's time span (an inverted one: the whole file), looped if Play >
        Loop selection is on; ``alone`` (default: Play > Selected band only): only what
        the selection holds, through its mask."""
        sel = self.canvas.selection
        if self.session is None or sel is None:
            return
        doc = self.doc
        t0, t1 = (0.0, doc.length / doc.sample_rate) if sel.inverted else sel.span()[:2]
        start = max(0, int(t0 * doc.sample_rate))
        stop = min(doc.length, max(start + 1, int(t1 * doc.sample_rate)))
        source = self.playback_source()
        if self.band_action.isChecked() if alone is None else alone:
            self.session.finish()
            rect = sel.cells(doc)
            held = masked_audio(doc, rect, sel.mask(doc, rect), sample0=start, sample1=stop)
            source = lambda a, b: held[:, a - start:b - start]  # noqa: E731
        self._play(source, start, stop, loop=self.loop_action.isChecked())

    def scrub(self, seconds: float) -> None:
        """The pointer dragged in the time ruler: the sound follows it, at its speed."""
        if self.session is None:
            return
        doc = self.doc
        if not self.session.synth.ready:
            self.statusBar().showMessage("the audio is still being made; scrub in a moment",
                                         3000)
            return
        at = min(max(0, int(seconds * doc.sample_rate)), doc.length - 1)
        self.player.scrub(self.playback_source(), doc.sample_rate, doc.channels,
                          doc.length, at)
        self.playhead_timer.start()
        self.level_meter.start()
        self.canvas.set_playhead(at / doc.sample_rate)

    def end_scrub(self) -> None:
        if self.player.tape is not None:
            self.stop()

    def _play(self, source, start: int, stop: int, loop: bool) -> None:
        doc = self.doc
        if not self.session.synth.ready:
            self.statusBar().showMessage("the audio is still being made; play in a moment",
                                         3000)
            return
        self.player.play(source, doc.sample_rate, doc.channels, start, stop, loop)
        self.playhead_timer.start()
        self.level_meter.start()
        self.play_action.setIconText("Pause")
        if self.player.output.is_null:
            self.statusBar().showMessage("no audio output: playing silently "
                                         f"({self.player.output.reason})", 5000)

    def stop(self) -> None:
        self.player.stop()
        self.playhead_timer.stop()
        self.play_action.setIconText("Play")

    def _tick_playhead(self) -> None:
        frame = self.player.position()
        if frame is None:  # played to its end
            self.stop()
            return
        self.canvas.set_playhead(frame / self.doc.sample_rate)

