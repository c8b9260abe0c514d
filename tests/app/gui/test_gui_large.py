"""A file too large to hold whole in the window (issue 50, item 7): its document keeps
only the cells it read last (engine.model.frame_store's budget, made small here so the
demo is such a file); strokes, zooming all over and undo through the window behave as
with every cell held, and what was painted is never let go."""

import torch

from tests.gui_input import choose_brush, drag, point


def test_a_file_held_as_it_fits_is_painted_viewed_all_over_and_undone_in_the_window(
        qtbot, window, monkeypatch):
    import engine.model.document as document
    from app.assets import DEMO
    from engine.model.document import Document

    whole = window.doc.cells.numel() * 8
    monkeypatch.setattr(document, "HELD_ABOVE", whole // 2)
    monkeypatch.setattr(document, "HELD_BYTES", whole // 10)
    window.open_path(DEMO)
    qtbot.waitUntil(lambda: window.session is not None and window.jobs.idle() and
                    window.doc.cells.budget is not None, timeout=20000)
    doc = window.doc
    assert doc.cells.unanalysed > 0  # opening let most of it go
    opened = doc.mix.clone()  # every cell, read (and let go again)
    assert torch.equal(opened, Document(doc.audio, device="cpu").mix)

    choose_brush(window, "hard-eraser")
    drag(qtbot, window.canvas, point(window, 2.0, 3000), point(window, 3.0, 3000), steps=8)
    qtbot.waitUntil(lambda: window.undo_stack.count() == 1)
    painted = doc.mix.clone()
    assert not torch.equal(painted, opened)
    view = window.canvas.view
    for t0 in (0.0, view.duration / 3, view.duration * 2 / 3):  # views all over the file
        view.t0, view.t1 = t0, t0 + 1.0
        window.canvas.update()
        qtbot.wait(30)
    assert torch.equal(doc.mix, painted), "the stroke's cells were let go"
    assert sum(doc.cells.held().values()) <= whole // 10 + doc.cells.grain * 8 * \
        doc.channels * doc.n_bins * 4  # the budget, and what the stroke wrote
    window.undo_action.trigger()
    assert torch.equal(doc.mix, opened)
