"""Screenshots for docs/editing.md (issue 48): a time range selected on the demo, the
file after Edit > Cut (the playhead at the junction), after Edit > Paste further on
(what was pasted selected), and a band of the whistle moved an octave down.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python scripts/screenshots_editing.py
"""

from shots import Shots


def main() -> None:
    shots = Shots()
    from app.assets import DEMO
    from app.session.selection import Selection

    wait, save = shots.wait, shots.save
    w = shots.opened(DEMO)
    nyquist = w.doc.sample_rate / 2

    w.selection.set_selection(Selection.rect(2.0, 3.5, f_lo=0.0, f_hi=nyquist))
    save(w, "screenshot-edit-selected.png")
    w.edits.cut()
    wait(lambda: w.undo_stack.count() == 1 and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    save(w, "screenshot-edit-cut.png")
    w.transport.place_playhead(6.0)
    w.edits.paste()
    wait(lambda: w.undo_stack.count() == 2 and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    save(w, "screenshot-edit-pasted.png")

    # a band of the whistle moved an octave down and 1 s later (Edit > Transform selection…)
    w.undo_stack.setIndex(0)
    wait(lambda: w.jobs.idle())
    w.selection.clear_selection()
    band = Selection.rect(3.5, 5.5, f_lo=5850.0, f_hi=6150.0)
    w.edits.spectral.transform(band, by_s=1.0, semitones=-12.0)
    wait(lambda: w.undo_stack.count() == 1 and w.jobs.idle())
    wait(lambda: w.area.overview.peaks is not None)
    save(w, "screenshot-edit-transposed.png")
    w.undo_stack.setClean()
    w.close()


if __name__ == "__main__":
    main()
